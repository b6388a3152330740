#!/usr/bin/env python3
"""Unit tests for kueue_workloads.py (ctest e2e_kueue_workloads, label unit)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kueue_workloads as kw  # noqa: E402


def node(cpu, memory, gpus=None):
    alloc = {"cpu": cpu, "memory": memory}
    if gpus is not None:
        alloc["nvidia.com/gpu"] = gpus
    return {"status": {"allocatable": alloc}}


def workload(admitted=True, finished=False, requeues=0, evicted=False):
    conditions = [{"type": "Finished", "status": "True" if finished else "False"},
                  {"type": "Evicted", "status": "True" if evicted else "False"}]
    status = {"conditions": conditions}
    if admitted:
        status["admission"] = {"clusterQueue": "gangs"}
    if requeues:
        status["requeueState"] = {"count": requeues}
    return {"status": status}


class CapacityTest(unittest.TestCase):
    def test_quantities(self):
        for text, milli, want in (("32", True, 32000), ("500m", True, 500), ("1500m", False, 2),
                                  ("64Gi", False, 64 * 2**30), ("1000Mi", False, 1000 * 2**20),
                                  ("2k", False, 2000), ("8", False, 8)):
            with self.subTest(text=text, milli=milli):
                self.assertEqual(kw.quantity(text, milli), want)

    def test_unsupported_quantity_is_an_error_not_a_zero(self):
        with self.assertRaises(ValueError):
            kw.quantity("1e3")

    def test_quota_is_the_sum_of_allocatable_nodes_without_gpus_included(self):
        nodes = {"items": [node("32", "256Gi", "8"), node("500m", "1Gi", "4"), node("4", "8Gi")]}
        self.assertEqual(kw.capacity(nodes), ("36500m", str(265 * 2**30), "12"))


class SplitTest(unittest.TestCase):
    def test_weighted_parts_add_up_to_the_whole(self):
        weights = {"q1": 1, "q2": 2, "q4": 4}
        for total, want in ((128, {"q1": 18, "q2": 37, "q4": 73}), (7, {"q1": 1, "q2": 2, "q4": 4}),
                            (512000, {"q1": 73143, "q2": 146286, "q4": 292571}), (0, {"q1": 0, "q2": 0, "q4": 0})):
            with self.subTest(total=total):
                self.assertEqual(kw.split(total, weights), want)
                self.assertEqual(sum(kw.split(total, weights).values()), total)

    def test_split_capacity_per_queue(self):
        nodes = {"items": [node("32", "7", "8")] * 2}
        self.assertEqual(kw.split_capacity(nodes, {"a": 1, "b": 1}),
                         [("a", "32000m", "7", "8"), ("b", "32000m", "7", "8")])


class ReleaseTest(unittest.TestCase):
    def test_only_pods_kueue_still_holds(self):
        def pod(name, finalizers):
            return {"metadata": {"name": name, "finalizers": finalizers}}
        pods = {"items": [pod("a", ["kueue.x-k8s.io/managed"]), pod("b", None), pod("c", ["other"]),
                          pod("d", ["other", "kueue.x-k8s.io/managed"])]}
        self.assertEqual(kw.held(pods), ["a", "d"])


class SummaryTest(unittest.TestCase):
    def test_counts_admissions_finishes_and_evictions(self):
        items = [workload(finished=True), workload(requeues=2), workload(admitted=False, evicted=True, requeues=1)]
        self.assertEqual(kw.summary({"items": items}),
                         "3 Workloads, 2 admitted now, 1 finished, 3 requeues after eviction, 1 evicted now")

    def test_no_workloads(self):
        self.assertEqual(kw.summary({"items": []}),
                         "0 Workloads, 0 admitted now, 0 finished, 0 requeues after eviction, 0 evicted now")


if __name__ == "__main__":
    unittest.main()
