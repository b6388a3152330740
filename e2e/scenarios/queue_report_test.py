#!/usr/bin/env python3
"""Tests of queue_report.py: the queue fair-share scenario's targets, shares,
indices and reclaim checks must be right, and every check must be able to
fail. Logs are built with gang_report_test's Log plus the driver's lines."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import queue_report as qr  # noqa: E402
from gang_report_test import Log, quietly  # noqa: E402

CPU, GPU = qr.CPU, qr.GPU
WEIGHTS = {"q1": 1, "q2": 2, "q4": 4}


class QueueLog(Log):
    """A side's pod log with the driver's lines: 12 GPUs and 12 cpu (so one
    pod of 1 GPU and 1 cpu is 1/12 of the cluster in both)."""

    def __init__(self):
        super().__init__({"n1": 6, "n2": 6})
        self.records.append({"kind": "capacity", "t": 0.0, CPU: 12000, GPU: 12, "weights": WEIGHTS})
        self.mark("drive-start", 0.0)

    def mark(self, name, t):
        self.records.append({"kind": "mark", "name": name, "t": t})
        return self

    def gang(self, name, queue, pods, t, gpus=1, cpu=1000):
        self.records.append({"kind": "gang", "name": name, "queue": queue, "pods": pods, "gpus": gpus, "cpu": cpu,
                             "work": 20, "t": t})
        for i in range(pods):
            self.pod(f"{name}-{i}", name, pods, gpus=gpus, work=20, t=t, sched="default-scheduler")
        return self

    def bind_gang(self, name, t, pods=None, node="n1"):
        for i in range(pods if pods is not None else self.size(name)):
            self.bind(f"{name}-{i}", node, t)
        return self

    def evict_gang(self, name, t, pods=None, seen_terminating=None):
        """Deletes the gang's pods at t; with `seen_terminating`, the watch
        showed them terminating (the eviction) at that time first."""
        for i in range(pods if pods is not None else self.size(name)):
            if seen_terminating is not None:
                self.pods[f"{name}-{i}"]["terminating"] = True
                self._emit(f"{name}-{i}", "MODIFIED", seen_terminating)
            self.delete(f"{name}-{i}", t)
        return self

    def size(self, name):
        return next(r["pods"] for r in self.records if r.get("kind") == "gang" and r["name"] == name)

    def reclaim(self, victim, by, for_gang, t, message=None, kind="PodGroup"):
        msg = message if message is not None else f"reclaimed by queue {by} for gang ns/{for_gang}"
        self.records.append({"kind": "reclaim", "uid": f"{victim}-{t}", "count": 1, "objectKind": kind,
                             "victim": victim, "message": msg, "at": t, "t": t + 1.5})
        return self


def fair_run(reclaim=True, extra=None):
    """Phase 1 (0-20 s): q1 holds 4 GPUs (1/3), q2 8 (2/3); both have a
    pending gang bigger than the cluster. At 20 s q4 arrives; at 24 s muster
    reclaims q1-c (2 pods) and q2-b (5 pods) for q4-a, bound at 25 s: then
    q1 2, q2 3, q4 7 of 12 (targets 1/7, 2/7, 4/7). `extra(log)` adds
    more before the drive ends at 40 s."""
    log = QueueLog()
    log.gang("q1-a", "q1", 2, 0.0).gang("q1-c", "q1", 2, 0.0).gang("q2-a", "q2", 3, 0.0).gang("q2-b", "q2", 5, 0.0)
    log.gang("q1-big", "q1", 13, 0.0).gang("q2-big", "q2", 13, 0.0)
    for g in ("q1-a", "q1-c", "q2-a", "q2-b"):
        log.bind_gang(g, 0.5)
    log.mark("change", 20.0).gang("q4-big", "q4", 13, 20.0).gang("q4-a", "q4", 7, 20.0)
    if reclaim:
        log.evict_gang("q1-c", 24.0).evict_gang("q2-b", 24.0)
        log.reclaim("q1-c", "q4", "q4-a", 24.0).reclaim("q2-b", "q4", "q4-a", 24.0)
        log.bind_gang("q4-a", 25.0, node="n2")
    if extra:
        extra(log)
    return log.mark("drive-end", 40.0).end(41.0)


class WaterFillTest(unittest.TestCase):
    def test_tables(self):
        cases = [
            # capacity, demand, want
            (70, {"a": 100, "b": 100, "c": 100}, {"a": 10, "b": 20, "c": 40}),  # all above: by weight
            (70, {"a": 5, "b": 100, "c": 100}, {"a": 5, "b": 65 / 3, "c": 130 / 3}),  # a capped, rest refilled
            (70, {"a": 5, "b": 10, "c": 100}, {"a": 5, "b": 10, "c": 55}),  # two capped in turn
            (70, {"a": 5, "b": 10, "c": 20}, {"a": 5, "b": 10, "c": 20}),  # all capped: demand, idle left over
            (70, {"a": 0, "b": 100, "c": 100}, {"a": 0, "b": 70 / 3, "c": 140 / 3}),  # no demand: not counted
            (30, {"a": 100, "b": 100, "c": 0}, {"a": 10, "b": 20, "c": 0}),  # phase 1 of the scenario: 1/3, 2/3
        ]
        weights = {"a": 1, "b": 2, "c": 4}
        for capacity, demand, want in cases:
            with self.subTest(demand=demand):
                got = qr.water_fill(capacity, demand, weights)
                for q in want:
                    self.assertAlmostEqual(got[q], want[q], places=6)
                self.assertLessEqual(sum(got.values()), capacity + 1e-6)

    def test_dominant_target_is_the_largest_per_resource_target(self):
        capacity = {CPU: 100, GPU: 10}
        # q1 wants little GPU, so q2 and q4 split its GPU share; q1's cpu
        # target (1/7) is then its dominant one.
        demand = {"q1": {CPU: 1000, GPU: 0}, "q2": {CPU: 1000, GPU: 100}, "q4": {CPU: 1000, GPU: 100}}
        got = qr.targets(capacity, demand, WEIGHTS)
        self.assertAlmostEqual(got["q1"], 1 / 7)  # cpu 1/7, GPU 0
        self.assertAlmostEqual(got["q2"], 1 / 3)  # cpu 2/7 < GPU 2/6
        self.assertAlmostEqual(got["q4"], 2 / 3)  # cpu 4/7 < GPU 4/6
        # All above the cluster in every resource: weight / sum of weights.
        big = {q: {CPU: 1000, GPU: 100} for q in WEIGHTS}
        for q, w in WEIGHTS.items():
            self.assertAlmostEqual(qr.targets(capacity, big, WEIGHTS)[q], w / 7)


class IndexTest(unittest.TestCase):
    def test_jain(self):
        self.assertAlmostEqual(qr.jain([1, 1, 1]), 1.0)
        self.assertAlmostEqual(qr.jain([1, 0, 0]), 1 / 3)  # one queue takes everything
        self.assertAlmostEqual(qr.jain([2, 1]), 9 / 10)
        self.assertIsNone(qr.jain([]))
        self.assertIsNone(qr.jain([0, 0]))

    def test_held_targets(self):
        # A cpu-bound q1 and a GPU-bound q2 (weights 1:2) hold 37 % and 73 %
        # of the cluster in their dominant resources: weighted DRF's equal
        # share / weight, both above their targets by the same factor.
        held = qr.held_targets({"target": {"q1": 1 / 3, "q2": 2 / 3, "q4": 0.0},
                                "share": {"q1": 0.37, "q2": 0.73, "q4": 0.0}})
        self.assertEqual(set(held), {"q1", "q2"})  # q4: no demand, no target
        self.assertAlmostEqual(held["q1"], 0.3667, places=4)
        self.assertAlmostEqual(held["q2"], 0.7333, places=4)
        # Shares that add up to 100 % keep their targets: 45/55 stays 12 %
        # away from 1:2, as before.
        held = qr.held_targets({"target": {"q1": 1 / 3, "q2": 2 / 3}, "share": {"q1": 0.45, "q2": 0.55}})
        self.assertAlmostEqual(held["q1"], 1 / 3)
        # A queue that holds nothing is a whole target away, whatever the other holds.
        held = qr.held_targets({"target": {"q1": 1 / 3, "q2": 2 / 3}, "share": {"q1": 0.0, "q2": 0.9}})
        self.assertAlmostEqual(0.0 - held["q1"], -0.3)

    def test_converge_time(self):
        def samples(bad_until, blips=(), end=40):
            out = []
            for t in range(0, end + 1):
                off = 0.2 if t < bad_until or t in blips else 0.01
                out.append({"t": float(t), "target": {"a": 0.5, "b": 0.5, "c": 0.0},
                            "share": {"a": 0.5 + off, "b": 0.5 - off, "c": 0.3}})  # c: no target, ignored
            return out

        self.assertEqual(qr.converge_time(samples(26), 20.0, 0.05, 10.0), 6.0)
        self.assertEqual(qr.converge_time(samples(0), 20.0, 0.05, 10.0), 0.0)
        # One sample out at 30 s (a gang's turnover) does not restart the
        # 10 s hold; two in a row do: converged from 32 s.
        self.assertEqual(qr.converge_time(samples(26, blips={30}), 20.0, 0.05, 10.0), 6.0)
        self.assertEqual(qr.converge_time(samples(26, blips={30, 31}), 20.0, 0.05, 10.0), 12.0)
        self.assertEqual(qr.converge_time(samples(26, blips={27}), 20.0, 0.05, 10.0), 6.0)
        # The approach to the band is no blip, however short its last step.
        self.assertEqual(qr.converge_time(samples(22), 20.0, 0.05, 10.0), 2.0)
        self.assertIsNone(qr.converge_time(samples(99), 20.0, 0.05, 10.0))
        # Within the band at the very end, but not for 10 s: counts (the run ended).
        self.assertEqual(qr.converge_time(samples(36), 20.0, 0.05, 10.0), 16.0)

    def test_flip_flops(self):
        def r(t, victim_q, by):
            return {"t": t, "victim": f"{victim_q}-x{t}", "victimQueue": victim_q, "by": by}

        self.assertEqual(len(qr.flip_flops([r(0, "q1", "q4"), r(30, "q4", "q1")], 60)), 1)
        self.assertEqual(qr.flip_flops([r(0, "q1", "q4"), r(61, "q4", "q1")], 60), [])  # outside the window
        # A reverse reclaim right when the cooldown ends is not a flip-flop...
        self.assertEqual(qr.flip_flops([r(0, "q1", "q4"), r(60, "q4", "q1")], 60), [])
        # ... one stamped a second earlier is.
        self.assertEqual(len(qr.flip_flops([r(0, "q1", "q4"), r(59, "q4", "q1")], 60)), 1)
        self.assertEqual(qr.flip_flops([r(0, "q1", "q4"), r(10, "q1", "q4"), r(20, "q2", "q4")], 60), [])
        self.assertEqual(qr.flip_flops([r(0, "q1", "q4"), r(10, "q4", "q2")], 60), [])  # not back to q1

    def test_event_time(self):
        self.assertEqual(qr.event_time({"at": 98.5, "t": 100.0}), 98.5)
        self.assertEqual(qr.event_time({"at": None, "t": 100.0}), 100.0)
        self.assertEqual(qr.event_time({"at": 1.0, "t": 100.0}), 100.0)  # a clock far off: the receipt

    def test_epoch(self):
        self.assertEqual(qr.epoch("1970-01-01T00:01:40Z"), 100.0)
        self.assertAlmostEqual(qr.epoch("1970-01-01T00:01:40.250000Z"), 100.25)
        self.assertIsNone(qr.epoch(None))


class AnalyzeTest(unittest.TestCase):
    def test_fair_run_passes(self):
        fig = qr.analyze(fair_run().records)
        self.assertEqual(qr.checks(fig, 5.0, 0.98, 30.0), [])
        p1, p2 = fig["windows"]["phase 1"], fig["windows"]["phase 2"]
        self.assertEqual((p1["from"], p1["to"], p2["from"], p2["to"]), (10.0, 20.0, 20.0, 40.0))
        self.assertEqual(p1["queues"]["q1"]["target"], 33.33)
        self.assertEqual(p1["queues"]["q1"]["deviationMedian"], 0.0)
        self.assertIsNone(p1["queues"]["q4"]["deviationMedian"])  # no demand: no target
        self.assertAlmostEqual(p1["jainMedian"], 1.0)
        self.assertEqual(p1["gpuUtil"], 100.0)
        # Phase 2 median: q2 25 % of the cluster against 2/7.
        self.assertEqual(p2["queues"]["q2"]["shareMedian"], 25.0)
        self.assertEqual(p2["queues"]["q2"]["deviationMedian"], round(100 * (2 / 7 - 0.25), 2))
        self.assertGreaterEqual(p2["jainMedian"], 0.98)
        self.assertEqual(fig["convergeSeconds"], 5.0)  # q4-a bound at 25 s
        self.assertEqual(fig["reclaimCount"], 2)
        self.assertEqual(fig["victimPods"], 7)
        self.assertEqual((fig["evictedGangs"], fig["evictedPods"], fig["eventCoverage"]), (2, 7, 1.0))
        self.assertEqual(fig["partialGangsMax"], 0)

    def test_unfair_run_fails_deviation_jain_and_converge(self):
        # Without the reclaim q4 never gets anything.
        fig = qr.analyze(fair_run(reclaim=False).records)
        msgs = qr.checks(fig, 5.0, 0.98, 30.0)
        kinds = sorted({m.split(":")[0] for m in msgs})
        self.assertEqual(kinds, ["converge", "deviation", "jain"], msgs)
        self.assertTrue(any("phase 2 q4" in m for m in msgs), msgs)

    def test_victim_not_evicted_whole(self):
        def partly(log):
            log.evict_gang("q2-b", 24.0, pods=3).reclaim("q2-b", "q4", "q4-a", 24.0)

        fig = qr.analyze(fair_run(reclaim=False, extra=partly).records)
        self.assertEqual(fig["notWhole"], ["q2-b"])
        self.assertTrue(any(m.startswith("victims: gangs not evicted whole") for m in qr.checks(fig, 100, 0, 1e9)))

    def test_malformed_message_and_unannounced_eviction(self):
        def odd(log):
            log.evict_gang("q2-b", 24.0).reclaim("q2-b", "q4", "q4-a", 24.0, message="reclaimed for q4")
            log.evict_gang("q1-c", 24.0)  # no Event

        fig = qr.analyze(fair_run(reclaim=False, extra=odd).records)
        self.assertEqual(fig["malformed"], ["reclaimed for q4"])
        self.assertEqual(fig["unannouncedEvictions"], ["q1-c"])
        # Seen in the pod log whatever the Events say: one of two evictions named.
        self.assertEqual((fig["evictedGangs"], fig["evictedPods"], fig["eventCoverage"]), (2, 7, 0.5))
        msgs = [m for m in qr.checks(fig, 100, 0, 1e9) if m.startswith("victims:")]
        self.assertEqual(len(msgs), 2, msgs)

    def test_kueue_preemptions_are_judged_like_muster_reclaims(self):
        # The driver turns Kueue's PreemptedWorkload Events (on the
        # preemptor's Workload) into reclaim records with explicit fields.
        def kueue_reclaims(log):
            for victim, t in (("q1-c", 24.0), ("q2-b", 24.0)):
                log.evict_gang(victim, t)
                log.records.append({"kind": "reclaim", "uid": f"{victim}-{t}", "count": 1, "objectKind": "Workload",
                                    "victim": victim, "by": "q4", "forGang": "q4-a", "at": t, "t": t + 1.5,
                                    "message": f"Preempted workload ns/{victim} (UID: u) in ClusterQueue q; ..."})

        fig = qr.analyze(fair_run(reclaim=False, extra=kueue_reclaims).records)
        self.assertEqual(fig["malformed"], [])
        self.assertEqual(fig["unannouncedEvictions"], [])
        self.assertEqual([(r["victim"], r["by"], r["forGang"], r["victimQueue"]) for r in fig["reclaims"]],
                         [("q1-c", "q4", "q4-a", "q1"), ("q2-b", "q4", "q4-a", "q2")])
        # A Kueue record the driver could not attribute stays malformed.
        fig = qr.analyze(fair_run(reclaim=False, extra=lambda log: log.records.append(
            {"kind": "reclaim", "uid": "x", "count": 1, "objectKind": "Workload", "victim": None,
             "message": "Preempted ...", "at": 24.0, "t": 25.0})).records)
        self.assertEqual(fig["malformed"], ["Preempted ..."])

    def test_eviction_after_the_drive_is_not_judged(self):
        # The driver reads the Events last at drive-end (40 s); the recorder
        # runs on, so a reclaim's Event after it is never read.
        fig = qr.analyze(fair_run(reclaim=False, extra=lambda log: log.evict_gang("q1-c", 40.5)).records)
        self.assertEqual(fig["unannouncedEvictions"], [])

    def test_victim_queue_pushed_below_target(self):
        # In phase 1 q1 is at its target (1/3); reclaiming its gang q1-c for
        # q2 takes it to 1/6, more than one gang (2/12) below... by exactly
        # one gang: allowed. Taking q1-a too (the second victim counts with
        # the first) is not.
        for victims, want in ((["q1-c"], 0), (["q1-c", "q1-a"], 1)):
            with self.subTest(victims=victims):
                log = QueueLog()
                log.gang("q1-a", "q1", 2, 0.0).gang("q1-c", "q1", 2, 0.0).gang("q2-a", "q2", 8, 0.0)
                log.gang("q1-big", "q1", 13, 0.0).gang("q2-big", "q2", 13, 0.0)
                for g in ("q1-a", "q1-c", "q2-a"):
                    log.bind_gang(g, 0.5)
                for v in victims:
                    log.evict_gang(v, 10.0).reclaim(v, "q2", "q2-big", 10.0)
                fig = qr.analyze(log.mark("drive-end", 20.0).end(21.0).records)
                self.assertEqual(len(fig["belowTarget"]), want, fig["reclaims"])
                self.assertEqual(fig["floorMarginMin"], round(100 * (1 / 3 - 1 / 3 - 2 / 12 * (len(victims) - 1)
                                                                      - 2 / 12), 2))
                self.assertEqual(any(m.startswith("floor:") for m in qr.checks(fig, 100, 0, 1e9)), bool(want))

    def test_victim_queue_is_judged_when_the_victim_went(self):
        # q1 (target 1/3) holds q1-a, q1-c, q1-d (2 of 12 each). The Event
        # for reclaiming q1-c says 10 s (whole seconds); the eviction shows
        # at 10.6 s. The queue is judged then, at its largest in the second
        # before: work that ended within it (muster's snapshot may predate
        # it) does not count against the choice, work that ended earlier does.
        cases = [
            # what else happened to q1, floor margin % (share after - target)
            ("q1-e bound at 10.3 s, after the Event's second began", lambda log: log.bind_gang("q1-e", 10.3), 0.0),
            ("q1-d ended 0.4 s before the eviction", lambda log: log.evict_gang("q1-d", 10.2), 0.0),
            ("q1-d ended 2.6 s before the eviction", lambda log: log.evict_gang("q1-d", 8.0), -16.67),
        ]
        for name, happen, want in cases:
            with self.subTest(name):
                log = QueueLog()
                for g in ("q1-a", "q1-c", "q1-e"):
                    log.gang(g, "q1", 2, 0.0)
                log.gang("q1-d", "q1", 2, 0.0).gang("q1-big", "q1", 13, 0.0).gang("q2-big", "q2", 13, 0.0)
                for g in ("q1-a", "q1-c") + (("q1-d",) if "q1-d" in name else ()):
                    log.bind_gang(g, 0.5)
                log.records.sort(key=lambda r: r["t"])
                happen(log)
                log.records.sort(key=lambda r: r["t"])
                log.evict_gang("q1-c", 10.62, seen_terminating=10.6).reclaim("q1-c", "q2", "q2-big", 10.0)
                fig = qr.analyze(log.mark("drive-end", 20.0).end(21.0).records)
                self.assertEqual(fig["floorMarginMin"], want, fig["reclaims"])
                self.assertEqual(fig["belowTarget"], [])

    def test_victims_are_judged_in_the_order_they_went(self):
        # Two Events of the same second, listed in the other order: q1-a
        # went first (q1 at 1/3 of 12 after it: 4 GPUs of q1-c, q1-d), then q1-c.
        log = QueueLog()
        for g in ("q1-a", "q1-c", "q1-d"):
            log.gang(g, "q1", 2, 0.0)
        log.gang("q1-big", "q1", 13, 0.0).gang("q2-big", "q2", 13, 0.0)
        for g in ("q1-a", "q1-c", "q1-d"):
            log.bind_gang(g, 0.5)
        log.evict_gang("q1-a", 10.2, seen_terminating=10.1).evict_gang("q1-c", 10.6, seen_terminating=10.5)
        log.reclaim("q1-c", "q2", "q2-big", 10.0).reclaim("q1-a", "q2", "q2-big", 10.0)
        fig = qr.analyze(log.mark("drive-end", 20.0).end(21.0).records)
        margins = {r["victim"]: r["margin"] for r in fig["reclaims"]}
        self.assertEqual(margins, {"q1-a": 0.0, "q1-c": round(1 / 6 - 1 / 3, 4)})

    def test_flip_flop_fails_the_check(self):
        def back(log):  # q2 takes capacity back from q4 6 s after giving it
            log.evict_gang("q4-a", 30.0).reclaim("q4-a", "q2", "q2-big", 30.0)

        fig = qr.analyze(fair_run(extra=back).records)
        self.assertEqual(len(fig["flipFlops"]), 1, fig["reclaims"])
        self.assertTrue(any(m.startswith("flip-flops: 1") for m in qr.checks(fig, 100, 0, 1e9)))

    def test_partial_gangs_are_counted(self):
        log = QueueLog()
        log.gang("q1-a", "q1", 4, 0.0).gang("q2-a", "q2", 4, 0.0).bind_gang("q1-a", 1.0, pods=2)
        fig = qr.analyze(log.mark("drive-end", 10.0).end(11.0).records)
        self.assertEqual(fig["partialGangsMax"], 1)
        self.assertEqual(fig["partialGpuMean"], round(2 * 10 / 11, 1))  # 2 GPUs in the samples 1..10 of 0..10
        self.assertEqual(fig["gpuUtil"], round(100 * 2 * 10 / 11 / 12, 1))
        self.assertEqual(fig["gpuUtilWhole"], 0.0)  # held, but nothing runs

    def test_report_exit_status_follows_muster_sides_only(self):
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, log in (("fair", fair_run()), ("unfair", fair_run(reclaim=False))):
                paths[name] = os.path.join(d, name + ".jsonl")
                with open(paths[name], "w") as f:
                    f.writelines(json.dumps(r) + "\n" for r in log.records)
            for sides, want in (([("stock", "unfair"), ("muster", "fair")], 0),
                                ([("stock", "fair"), ("muster", "unfair")], 1)):
                with self.subTest(sides=sides):
                    argv = ["queue_report.py", "report", "--json", os.path.join(d, "f.json")]
                    for side, log in sides:
                        argv += ["--side", f"{side}={paths[log]}"]
                    self.assertEqual(quietly(qr.main, argv), want)
                    with open(os.path.join(d, "f.json")) as f:
                        self.assertEqual(bool(json.load(f)["failed"]), bool(want))


class WorkloadTest(unittest.TestCase):
    CAPACITY = {CPU: 512000, GPU: 128}

    def test_gang_sequences_are_seeded_small_and_mixed(self):
        seq = qr.gang_sequence(6, "q1", self.CAPACITY)
        gangs = [next(seq) for _ in range(400)]
        again = qr.gang_sequence(6, "q1", self.CAPACITY)
        self.assertEqual(gangs, [next(again) for _ in range(400)])
        self.assertNotEqual(gangs[:20], [next(qr.gang_sequence(6, "q2", self.CAPACITY)) for _ in range(20)])
        for g in gangs:
            self.assertLessEqual(qr.dominant(qr.request(g), self.CAPACITY), qr.MAX_GANG)
            self.assertTrue(2 <= g["pods"] <= 4 and 15 <= g["work"] <= 40, g)
        gpu = [g for g in gangs if g["gpus"]]
        self.assertTrue(all(g["cpu"] == 2000 and g["gpus"] in (1, 2) for g in gpu))
        self.assertTrue(all(4000 <= g["cpu"] <= 8000 for g in gangs if not g["gpus"]))
        self.assertTrue(0.65 < len(gpu) / len(gangs) < 0.85, len(gpu))

    def test_gang_objects(self):
        items = qr.gang_objects("q2-0001", "q2", {"pods": 3, "gpus": 0, "cpu": 6000, "work": 20}, "volcano", True)
        pg, pods = items[0], items[1:]
        self.assertEqual((pg["kind"], pg["spec"]["queue"], pg["spec"]["minMember"]), ("PodGroup", "q2", 3))
        self.assertEqual(len(pods), 3)
        res = pods[0]["spec"]["containers"][0]["resources"]
        self.assertEqual(res["requests"]["cpu"], "6000m")
        self.assertNotIn(GPU, res["limits"])  # a CPU-only pod asks for no GPU at all
        self.assertEqual(pods[0]["spec"]["schedulingGates"], [{"name": "muster.io/gang"}])
        self.assertEqual(pods[0]["metadata"]["annotations"]["e2e.muster.io/work-seconds"], "20")
        stock = qr.gang_objects("q1-0000", "q1", {"pods": 2, "gpus": 2, "cpu": 2000, "work": 15},
                                "default-scheduler", False)
        self.assertNotIn("schedulingGates", stock[1]["spec"])
        self.assertEqual(stock[1]["spec"]["containers"][0]["resources"]["limits"][GPU], "2")

    def test_kueue_gang_objects_are_a_pod_group_of_the_queue(self):
        pods = qr.gang_objects("q4-0002", "q4", {"pods": 2, "gpus": 1, "cpu": 2000, "work": 20},
                               "default-scheduler", False, kueue=True)
        self.assertEqual([p["kind"] for p in pods], ["Pod", "Pod"], "no PodGroup")
        for p in pods:
            self.assertEqual(p["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "q4")
            self.assertEqual(p["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"], "q4-0002")
            self.assertEqual(p["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"], "2")

    def test_kueue_reclaim_from_a_preempted_workload_event(self):
        gangs = {"q4-0001": {"queue": "q4"}}
        event = {"involvedObject": {"kind": "Workload", "name": "q4-0001"},
                 "message": "Preempted workload ns/q1-0007 (UID: 1-2) in ClusterQueue q1; preemptor effective "
                            "priority: 0 (base: 0, boost: 0); preemptee effective priority: 0 (base: 0, boost: 0)"}
        self.assertEqual(qr.kueue_reclaim(event, gangs),
                         {"victim": "q1-0007", "by": "q4", "forGang": "q4-0001", "victimClusterQueue": "q1"})
        for odd in (dict(event, message="Preempted to accommodate a workload"),
                    dict(event, involvedObject={"kind": "Workload", "name": "unknown"})):
            with self.subTest(event=odd):
                self.assertIsNone(qr.kueue_reclaim(odd, gangs))

    def test_backlog_tracks_pending_pods(self):
        b = qr.Backlog()
        b.add({"name": "q1-0000", "queue": "q1", "pods": 2, "gpus": 1, "cpu": 2000})
        b.add({"name": "q4-0000", "queue": "q4", "pods": 3, "gpus": 0, "cpu": 8000})
        self.assertEqual(b.demand(["q1", "q4"]), {"q1": {CPU: 4000, GPU: 2}, "q4": {CPU: 24000, GPU: 0}})
        view = {"ev": "MODIFIED", "node": "n1", "phase": "Running", "terminating": False}
        b.on_pod(dict(view, name="q1-0000-0"))
        b.on_pod(dict(view, name="q4-0000-0", node=None, ev="DELETED"))
        b.on_pod(dict(view, name="q4-0000-1", node=None))  # still pending
        self.assertEqual(b.demand(["q1", "q4"]), {"q1": {CPU: 2000, GPU: 1}, "q4": {CPU: 16000, GPU: 0}})
        self.assertTrue(qr.needs_more({CPU: 600000, GPU: 100}, self.CAPACITY))
        self.assertFalse(qr.needs_more({CPU: 600000, GPU: 130}, self.CAPACITY))

    def test_queues(self):
        items = qr.queues_list(qr.parse_weights("q1=1,q2=2,q4=4"))["items"]
        self.assertEqual([(q["metadata"]["name"], q["spec"]["weight"], q["spec"]["reclaimable"]) for q in items],
                         [("q1", 1, True), ("q2", 2, True), ("q4", 4, True)])


if __name__ == "__main__":
    unittest.main()
