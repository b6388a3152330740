#!/usr/bin/env python3
"""bench/gang_wait.py: each side's form of a gang, and the figures a user
compares (wait, pods and gangs per second, partial gangs)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gang_wait as gw  # noqa: E402

GANG = {"name": "g000-4x2", "size": 4, "gpus": 2, "at": 0.0, "run": 30}
SINGLE = {"name": "g001-1x1", "size": 1, "gpus": 1, "at": 0.0, "run": 30}


class PodFormTest(unittest.TestCase):
    def test_muster_pods_name_their_podgroup_and_are_gated(self):
        p = gw.pod(GANG, 0, "volcano", gated=True)
        self.assertEqual(p["metadata"]["annotations"][gw.GROUP], GANG["name"])
        self.assertEqual(p["spec"]["schedulingGates"], [{"name": gw.GATE}])
        self.assertNotIn("labels", p["metadata"])

    def test_kueue_pods_form_a_pod_group_and_a_single_pod_is_a_plain_workload(self):
        p = gw.pod(GANG, 1, "default-scheduler", gated=False, kueue="gangs")
        self.assertEqual(p["metadata"]["labels"], {gw.KUEUE_QUEUE: "gangs", gw.KUEUE_GROUP: GANG["name"]})
        self.assertEqual(p["metadata"]["annotations"][gw.KUEUE_TOTAL], "4")
        self.assertNotIn("schedulingGates", p["spec"], "Kueue's webhook gates it")
        self.assertEqual(gw.group_of(p["metadata"], p["spec"]), GANG["name"], "the recorder still finds the gang")
        single = gw.pod(SINGLE, 0, "default-scheduler", gated=False, kueue="gangs")
        self.assertEqual(single["metadata"]["labels"], {gw.KUEUE_QUEUE: "gangs"})
        self.assertNotIn(gw.KUEUE_TOTAL, single["metadata"]["annotations"])

    def test_upstream_pods_join_through_scheduling_group(self):
        p = gw.pod(GANG, 0, "default-scheduler", gated=False, upstream=True)
        self.assertEqual(p["spec"]["schedulingGroup"], {"podGroupName": GANG["name"]})
        self.assertNotIn(gw.GROUP, p["metadata"]["annotations"])


def result(gangs, gated=False, end=10.0):
    return {"gated": gated, "end": end, "errors": [], "gangs": gangs}


def gang(name, created, binds, size=2, gpus=1, arrival=0.0):
    return {"name": name, "size": size, "min": size, "gpus": gpus, "arrival": arrival, "pgPosted": arrival,
            "created": created, "ungated": created, "binds": binds}


class AnalyzeTest(unittest.TestCase):
    def test_wait_is_from_the_last_creation_and_rates_span_the_run(self):
        a = gw.analyze(result([gang("a", [0.0, 1.0], [1.5, 2.0]), gang("b", [0.0, 0.5], [3.0, 4.0])]))
        self.assertEqual((a["wait"]["n"], a["wait"]["max"]), (2, 3.5))
        self.assertEqual(a["podsPerSecond"], 1.0)  # 4 binds over 0 -> 4 s
        self.assertEqual(a["gangsPerSecond"], 0.5)
        self.assertEqual((a["leftPartial"], a["unbound"]), ([], []))

    def test_a_gang_bound_in_part_is_partial_and_not_counted_as_admitted(self):
        a = gw.analyze(result([gang("a", [0.0, 0.0], [1.0]), gang("b", [0.0, 0.0], [])], end=5.0))
        self.assertEqual((a["assembled"], a["leftPartial"], a["unbound"]), (0, ["a"], ["b"]))
        self.assertEqual(a["partialGpuSeconds"], 4.0)  # one GPU held from 1 s to the end
        self.assertEqual(a["gangsPerSecond"], 0.0)


if __name__ == "__main__":
    unittest.main()
