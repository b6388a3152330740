#!/usr/bin/env python3
"""Tests of chaos.py's figures and checks: each figure must be right and each
check must be able to fail (python3 e2e/scenarios/chaos_test.py)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos  # noqa: E402
from gang_workload import GPU  # noqa: E402

UID = "0123abcd-0000-4000-8000-00000000000{}"


def pod(name, t, node=None, phase="Pending", ev="MODIFIED", gang=None):
    return {"kind": "pod", "ev": ev, "name": name, "gang": gang, "t": t, "node": node, "phase": phase}


def snap_job(name, uid, phase="Completed", version=0):
    return {"metadata": {"name": name, "uid": uid}, "status": {"state": {"phase": phase}, "version": version}}


def snap_pod(job, i, phase="Succeeded"):
    return {"metadata": {"name": f"{job}-worker-{i}", "labels": {chaos.JOB_LABEL: job}}, "status": {"phase": phase}}


def wanted(name, replicas):
    return chaos.volcano_job(name, [("worker", replicas, 1)], 5)


class Figures(unittest.TestCase):
    def test_job_list_is_seeded_and_capped(self):
        a = chaos.job_list(3, 4, "j", max_gpus=40)
        self.assertEqual(a, chaos.job_list(3, 4, "j", max_gpus=40))
        # GPUs are asked as limits (placement.fake_gpu_pod_spec), as device plugins require.
        gpus = sum(int(t["template"]["spec"]["containers"][0]["resources"]["limits"].get(GPU, 0))
                   * t["replicas"] for j in a["items"] for t in j["spec"]["tasks"])
        self.assertLessEqual(gpus, 40)
        for j in a["items"]:
            self.assertEqual(j["spec"]["minAvailable"], chaos.expected_pods(j))
        big = chaos.job_list(3, 0, "j", big=40)["items"]
        self.assertEqual([(j["metadata"]["name"], chaos.expected_pods(j)) for j in big], [("j-big", 40)])

    def test_metrics_parse_and_delta(self):
        before = chaos.parse_metrics('# HELP x\nm{a="1"} 2\nm{a="2"} 1\nother 5\n')
        after = chaos.parse_metrics('m{a="1"} 3\nm{a="2"} 4\nother 5\n')
        self.assertEqual(chaos.metric_delta(before, after, "m{"), 4.0)
        self.assertEqual(chaos.metric_delta(before, after, "other"), 0.0)
        self.assertEqual(chaos.nonzero_deltas(before, after, ("m",)), {'m{a="1"}': 1.0, 'm{a="2"}': 3.0})

    def test_gaps_inside_the_fault_do_not_count(self):
        polls = [{"t": t} for t in (0.0, 0.5, 1.0, 9.0, 9.5)]
        self.assertEqual(chaos.gaps_outside(polls, 2.0, 8.0), 0.5)
        self.assertEqual(chaos.gaps_outside(polls, None, None), 8.0)


class JobChecks(unittest.TestCase):
    def outcome(self, snap, records=(), want=(("a", 2),)):
        return chaos.job_outcome([wanted(n, r) for n, r in want], snap, list(records))

    def good(self):
        return {"jobs": [snap_job("a", UID.format(1))], "podgroups": [],
                "pods": [snap_pod("a", 0), snap_pod("a", 1)]}

    def pg_seen(self):
        return [{"kind": "pg", "name": "a-" + UID.format(1)}]

    def test_a_completed_job_passes(self):
        o = self.outcome(self.good(), self.pg_seen())
        self.assertEqual((o["completed"], o["lost"], o["duplicated"], o["wrong_pods"], o["podgroups"]),
                         (1, [], [], [], []))

    def test_lost_duplicated_and_extra_pods_fail(self):
        snap = self.good()
        snap["jobs"] = [snap_job("b", UID.format(2))]
        o = self.outcome(snap, self.pg_seen())
        self.assertEqual((o["lost"], o["duplicated"]), (["a"], ["b"]))
        snap = self.good()
        snap["pods"].append(snap_pod("a", 2))
        self.assertEqual(self.outcome(snap, self.pg_seen())["wrong_pods"], ["a: 3 pods, want 2"])

    def test_two_podgroups_none_and_a_restart_fail(self):
        two = self.pg_seen() + [{"kind": "pg", "name": "a-" + UID.format(9)}]
        self.assertEqual(len(self.outcome(self.good(), two)["podgroups"]), 1)
        self.assertTrue(self.outcome(self.good(), [])["podgroups"])
        snap = self.good()
        snap["jobs"] = [snap_job("a", UID.format(1), version=1)]
        self.assertEqual(len(self.outcome(snap, self.pg_seen())["restarted"]), 1)

    def test_incomplete_and_deleted_pods_fail(self):
        snap = self.good()
        snap["pods"][1] = snap_pod("a", 1, "Running")
        self.assertEqual(self.outcome(snap, self.pg_seen())["completed"], 0)
        recs = self.pg_seen() + [pod("a-worker-0", 1.0, ev="DELETED")]
        self.assertEqual(self.outcome(self.good(), recs)["deleted_pods"], ["a-worker-0"])


class Evaluate(unittest.TestCase):
    def run_eval(self, records, **kw):
        items = [{"kind": "PodGroup", "metadata": {"name": "g"}, "spec": {"minMember": 1}},
                 {"kind": "Pod", "metadata": {"name": "g-0", "labels": {"e2e.muster.io/gang": "g"}}}]
        snap = {"jobs": [], "podgroups": [], "pods": []}
        polls = [{"kind": "poll", "t": t / 2} for t in range(0, 60)]
        return chaos.evaluate(records, items, [], snap, polls, 0, **kw)

    def base(self, bind_t):
        return [{"kind": "mark", "name": "fault-start", "t": 10.0}, pod("g-0", 5.0, gang="g"),
                pod("g-0", bind_t, node="n1", gang="g"), pod("g-0", 25.0, node="n1", phase="Succeeded", gang="g"),
                {"kind": "mark", "name": "fault-end", "t": 20.0}]

    def test_binds_during_the_fault(self):
        fig, failed = self.run_eval(self.base(15.0), no_binds_during=True)
        self.assertEqual(fig["fault"]["binds_after_grace"], 1)
        self.assertTrue(any("bound between" in f for f in failed))
        fig, failed = self.run_eval(self.base(10.5), no_binds_during=True)  # in flight
        self.assertEqual(fig["fault"]["binds_in_grace"], 1)
        self.assertFalse(any("bound between" in f for f in failed))
        fig, failed = self.run_eval(self.base(21.0), no_binds_during=True)
        self.assertEqual((fig["fault"]["end_to_first_bind"], fig["fault"]["seconds"]), (1.0, 10.0))
        self.assertEqual(failed, [])

    def test_zero_metric_and_double_booking_fail(self):
        kw = {"before": {'x{outcome="expired"}': 0.0}, "after": {'x{outcome="expired"}': 2.0},
              "zero": ['x{outcome="expired"}']}
        _, failed = self.run_eval(self.base(21.0), **kw)
        self.assertTrue(any("rose by 2" in f for f in failed))
        items = [{"kind": "PodGroup", "metadata": {"name": "g"}, "spec": {"minMember": 1}},
                 {"kind": "Pod", "metadata": {"name": "g-0", "labels": {"e2e.muster.io/gang": "g"}}}]
        polls = [{"kind": "poll", "t": 0.0, "overbooked": {"n1": [9, 8]}}, {"kind": "poll", "t": 0.5}]
        _, failed = chaos.evaluate(self.base(21.0), items, [], {"jobs": [], "podgroups": [], "pods": []},
                                   polls, 0)
        self.assertTrue(any("double booked" in f for f in failed))

    def test_an_unfinished_gang_fails(self):
        recs = self.base(21.0)[:-2] + [recs_end for recs_end in self.base(21.0)[-1:]]
        _, failed = self.run_eval(recs)
        self.assertTrue(any("gangs did not complete" in f for f in failed))


if __name__ == "__main__":
    unittest.main()
