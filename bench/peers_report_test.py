#!/usr/bin/env python3
"""bench/peers_report.py: which figures it compares per side, medians over
runs, and the side it calls best."""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_report as pr  # noqa: E402


def gang_side(completed, count, ratio, never=0.0, partial=0.0, left=(), broken=(), victims=(), evicted=0,
              wait=1.0):
    return {"completed": completed, "gangCount": count, "makespanRatio": ratio,
            "neverAssembledGpuSeconds": never, "partialGpuSeconds": partial, "leftPartial": list(left),
            "broken": list(broken), "victims": list(victims), "evictedPods": evicted,
            "waitP50Seconds": wait, "waitMaxSeconds": wait}


def wait_side(assembled, gangs, p50, p99, pods_per_s, left=()):
    return {"gangs": gangs, "assembled": assembled, "podsPerSecond": pods_per_s,
            "wait": {"p50": p50, "p99": p99}, "partialGpuSeconds": 0.0, "leftPartial": list(left)}


class PeersReportTest(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.out)

    def write(self, rel, doc):
        path = os.path.join(self.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            if rel.endswith(".jsonl"):
                f.write("\n".join(json.dumps(d) for d in doc) + "\n")
            else:
                json.dump(doc, f)

    def test_burst_runs_give_medians_and_the_best_side(self):
        for run, ratios in enumerate([(None, 1.4, 1.3), (None, 1.2, 1.1), (None, 1.5, 1.2)], start=1):
            stock, upstream, muster = ratios
            self.write(f"burst-{run}/figures.json", {"figures": {
                "stock": gang_side(20, 51, stock, never=900.0, left=["w0-j01"]),
                "upstream": gang_side(51, 51, upstream),
                "muster": gang_side(51, 51, muster),
                "muster-gated": gang_side(0, 51, None),  # not a compared side
            }, "failed": []})
        stats = pr.combine(pr.runs_of(self.out, "burst"))
        self.assertEqual(stats["muster"]["makespanRatio"], (1.2, 1.1, 1.3, 3))
        self.assertEqual(stats["upstream"]["makespanRatio"][0], 1.4)
        self.assertNotIn("makespanRatio", stats["stock"], "never finished: no figure")
        self.assertEqual(pr.best(stats, "makespanRatio", lower=True), "muster")
        self.assertEqual(pr.best(stats, "completedFraction", lower=False), "upstream=muster")
        self.assertEqual(stats["stock"]["partialGangs"][0], 1)
        text, _ = pr.table("burst", pr.runs_of(self.out, "burst"), pr.GANG_ROWS)
        self.assertIn("(3 runs)", text)
        self.assertIn("1.2 [1.1-1.3]", text)

    def test_victims_broken_in_part_are_counted(self):
        self.write("preemption/figures.json", {"figures": {
            "stock": gang_side(5, 5, None, victims=["low-a", "low-b"], broken=["low-a"], evicted=9),
            "muster": gang_side(5, 5, None, victims=["low-b"], evicted=9),
        }})
        run = pr.runs_of(self.out, "preemption")[0]
        self.assertEqual((run["stock"]["victimGangs"], run["stock"]["brokenVictims"]), (2, 1))
        self.assertEqual((run["muster"]["victimGangs"], run["muster"]["brokenVictims"]), (1, 0))

    def test_racks_one_rack_rate_and_the_unplaceable_gang(self):
        def racks_side(rate, wide_pods, wide_gpu_s):
            return {**gang_side(4, 5, 1.1), "rackGangs": 4, "oneRackRate": rate, "unplaceableBoundPods": wide_pods,
                    "unplaceableGpuSeconds": wide_gpu_s}
        self.write("racks-1/figures.json", {"figures": {
            "stock": racks_side(0.25, 6, 720.0), "kueue": racks_side(1.0, 0, 0.0),
            "muster": racks_side(1.0, 0, 0.0)}})
        stats = pr.combine(pr.runs_of(self.out, "racks"))
        self.assertEqual(pr.best(stats, "oneRackRate", lower=False), "kueue=muster")
        self.assertEqual(pr.best(stats, "unplaceableBoundPods", lower=True), "kueue=muster")
        self.assertEqual(stats["stock"]["unplaceableGpuSeconds"][0], 720.0)
        # The gang no rack holds never completes: the pack gangs' count is the one compared.
        self.assertEqual(stats["muster"]["packCompletedFraction"][0], 1.0)
        # Other gang workloads have no rack figures: no row values, no "best".
        self.write("deadlock/figures.json", {"figures": {"muster": gang_side(2, 2, 1.2)}})
        self.assertNotIn("oneRackRate", pr.combine(pr.runs_of(self.out, "deadlock"))["muster"])

    def test_gang_wait_and_plain_throughput(self):
        self.write("gang-wait/figures.json", {"sides": {
            "stock": wait_side(58, 60, 0.5, 3.0, 120.0, left=["g1", "g2"]),
            "upstream": wait_side(60, 60, 0.4, 0.9, 150.0),
            "muster": wait_side(60, 60, 0.3, 0.7, 140.0)}})
        stats = pr.combine(pr.runs_of(self.out, "gang-wait"))
        self.assertEqual(pr.best(stats, "waitP99", lower=True), "muster")
        self.assertEqual(pr.best(stats, "podsPerSecond", lower=False), "upstream")
        self.assertEqual(stats["stock"]["assembledFraction"][0], round(58 / 60, 3))
        self.write("plain-throughput.jsonl", [
            {"side": "stock", "release_pods_per_s": 100.0, "writes_per_pod": 2.0, "side_cpu_ms_per_pod": 3.0},
            {"side": "volcano", "release_pods_per_s": 90.0, "writes_per_pod": 2.5, "side_cpu_ms_per_pod": 5.0}])
        self.assertEqual(len(pr.plain_runs(self.out)), 1, "a stock and a muster record make one run")
        plain = pr.combine(pr.plain_runs(self.out))
        self.assertEqual(plain["upstream"]["podsPerSecond"][0], 100.0, "plain pods: upstream is stock")
        self.assertEqual(plain["muster"]["podsPerSecond"][0], 90.0)

    def test_fair_share_worst_queue_and_phase(self):
        def fair_side(dev, jain, converge, victims=0, not_whole=(), flips=(), coverage=1.0):
            queue = {"target": 33.3, "shareMedian": 33.0, "deviationMedian": dev, "deviationP90": 2 * dev}
            windows = {"phase 1": {"queues": {"q1": queue, "q4": dict(queue, deviationMedian=None,
                                                                     deviationP90=None)}, "jainMedian": 0.999},
                       "phase 2": {"queues": {"q1": dict(queue, deviationMedian=dev + 1, deviationP90=dev + 3)},
                                   "jainMedian": jain}}
            return {"windows": windows, "convergeSeconds": converge, "evictedGangs": victims, "evictedPods": 3 * victims,
                    "eventCoverage": coverage, "notWhole": list(not_whole), "belowTarget": [],
                    "flipFlops": list(flips), "gpuUtil": 90.0, "partialGpuSeconds": 4.0}
        self.write("fairshare-1/figures.json", {"figures": {
            "kueue": fair_side(3.0, 0.95, 41.0, victims=30, flips=["a then b"], coverage=0.96),
            "stock": fair_side(9.0, 0.7, None, flips=["x"], coverage=0.2),
            "muster": fair_side(1.0, 0.998, 24.0, victims=12)}})
        stats = pr.combine(pr.runs_of(self.out, "fairshare"))
        self.assertEqual(stats["kueue"]["deviationMedianMax"][0], 4.0, "phase 2's q1 is the worst")
        self.assertEqual(stats["kueue"]["deviationP90Max"][0], 6.0)
        self.assertEqual(stats["kueue"]["jainMin"][0], 0.95)
        self.assertEqual(stats["kueue"]["flipFlops"][0], 1)
        self.assertEqual(pr.best(stats, "convergeSeconds", lower=True), "muster")
        self.assertEqual(pr.best(stats, "jainMin", lower=False), "muster")
        self.assertEqual(stats["kueue"]["evictedPods"][0], 90)
        # Events naming a fifth of the evictions judge nothing: left out.
        self.assertNotIn("flipFlops", stats["stock"])
        self.assertEqual(stats["stock"]["evictedGangs"][0], 0)

    def test_a_workload_without_figures_prints_dashes(self):
        text, stats = pr.table("deadlock", pr.runs_of(self.out, "deadlock"), pr.GANG_ROWS)
        self.assertIn("(0 runs)", text)
        self.assertEqual(pr.best(stats, "makespanRatio", lower=True), "-")


if __name__ == "__main__":
    unittest.main()
