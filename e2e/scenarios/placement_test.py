#!/usr/bin/env python3
"""Tests of placement.py: the e2e checks must be able to fail."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import placement  # noqa: E402


def node(name, gpus):
    return {"metadata": {"name": name}, "status": {"allocatable": {"nvidia.com/gpu": str(gpus)}}}


def pod(name, gpus, node_name=None, ns="t", phase="Running", annotations=None, via="volcano"):
    p = placement.make_pods(name, 1, str(gpus), via)["items"][0]
    p["metadata"].update(name=name, namespace=ns, annotations=annotations or {})
    if node_name:
        p["spec"]["nodeName"] = node_name
    p["status"] = {"phase": phase}
    return p


def ann(node_name, gpus):
    return {"muster.io/node": node_name, "muster.io/resources": f"nvidia.com/gpu={gpus}"}


def doc(pods, nodes):
    return {"pods": {"items": pods}, "nodes": {"items": nodes}}


class CheckTest(unittest.TestCase):
    def test_cases(self):
        nodes = [node("a", 8), node("b", 8)]
        cases = [
            ("fits", [pod("p", 8, "a", annotations=ann("a", 8)), pod("q", 4, "b", annotations=ann("b", 4))],
             True, 12),
            ("overcommitted across namespaces",
             [pod("p", 6, "a", annotations=ann("a", 6)), pod("q", 4, "a", ns="other")], False, 10),
            ("finished pods release", [pod("p", 8, "a", annotations=ann("a", 8)),
                                       pod("q", 8, "a", phase="Succeeded", annotations=ann("a", 8))], True, 8),
            ("annotation names another node", [pod("p", 1, "a", annotations=ann("b", 1))], False, 1),
            ("annotation missing", [pod("p", 1, "a")], False, 1),
            ("stock scheduler needs none", [pod("p", 1, "a", via="default-scheduler")], True, 1),
            ("pending pods hold nothing", [pod("p", 8), pod("q", 8)], True, 0),
        ]
        for name, pods, ok, used in cases:
            with self.subTest(name):
                summary, got_ok = placement.check("t", doc(pods, nodes))
                self.assertEqual(got_ok, ok, summary)
                self.assertEqual(summary["gpusUsed"], used)

    def test_gpus_elsewhere_name_other_namespaces_live_holders(self):
        pods = [pod("p", 2, "a", annotations=ann("a", 2)), pod("q", 4, "b", ns="other"),
                pod("r", 8, "a", ns="other", phase="Succeeded"), pod("s", 1, ns="other")]
        summary, ok = placement.check("t", doc(pods, [node("a", 8), node("b", 8)]))
        self.assertTrue(ok, summary)
        self.assertEqual(summary["gpusElsewhere"], 4)
        self.assertEqual(summary["elsewhere"], ["other/q on b: 4"])

    def test_init_containers_count_their_peak(self):
        p = pod("p", 1, "a")
        p["spec"]["initContainers"] = [{"resources": {"limits": {"nvidia.com/gpu": "3"}}}]
        self.assertEqual(placement.gpu_request(p), 3)


class CacheCheckTest(unittest.TestCase):
    def test_cases(self):
        pods = {"items": [pod("p", 4, "a"), pod("q", 2, "a"), pod("r", 8, "b", phase="Failed")]}
        state = lambda a, b, reservations=0: {  # noqa: E731
            "reservations": reservations,
            "nodes": [{"name": "a", "allocated": {"nvidia.com/gpu": a * 1000}},
                      {"name": "b", "allocated": {"nvidia.com/gpu": b * 1000} if b else {}}]}
        for name, st, ok in [("agrees", state(6, 0), True), ("cache counts a finished pod", state(6, 8), False),
                             ("cache misses a pod", state(4, 0), False),
                             ("reservation left over", state(6, 0, reservations=1), False)]:
            with self.subTest(name):
                _, got = placement.cache_check(st, pods)
                self.assertEqual(got, ok)


if __name__ == "__main__":
    unittest.main()
