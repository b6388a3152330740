#!/usr/bin/env python3
"""Tests of failover.py's figures and checks: each figure must be right and
each check must be able to fail."""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import failover as fo  # noqa: E402


def pod(name, gang, t, node=None, phase="Pending", ev="MODIFIED"):
    return {"kind": "pod", "ev": ev, "name": name, "gang": gang, "t": t, "node": node, "phase": phase}


def workload(gangs):
    """{gang: pods} -> List items as chunk_items makes them."""
    items = []
    for g, n in gangs.items():
        items.append({"kind": "PodGroup", "metadata": {"name": g}, "spec": {"minMember": n}, "_phase": "p"})
        items += [{"kind": "Pod", "metadata": {"name": f"{g}-{i}", "labels": {"e2e.muster.io/gang": g}},
                   "_phase": "p"} for i in range(n)]
    return items


def poll(t, sched, rec=None, sched_id=None, leading=(), over=None):
    p = {"kind": "poll", "t": t, "sched": sched, "rec": rec, "sched_id": sched_id or (sched and sched + "_u1"),
         "rec_id": rec, "leading": list(leading)}
    if over:
        p["overbooked"] = over
    return p


class Figures(unittest.TestCase):
    def test_chunks_fit_their_cap(self):
        rng = random.Random(7)
        for _ in range(50):
            gangs = fo.chunk_gangs(rng, 8, 112, (10, 20))
            self.assertEqual(len(gangs), 8)
            self.assertLessEqual(sum(p * g for p, g, _ in gangs), 112)
            self.assertTrue(all(1 <= p <= 8 and g in (1, 2, 4, 8) and 10 <= w <= 20 for p, g, w in gangs))

    def test_overbooked_counts_bound_unfinished_pods(self):
        def p(node, gpus, phase="Running"):
            return {"spec": {"nodeName": node, "containers": [{"resources": {"limits": {fo.GPU: str(gpus)}}}]},
                    "status": {"phase": phase}}
        alloc = {"n1": 8, "n2": 8}
        self.assertEqual(fo.overbooked([p("n1", 4), p("n1", 4), p("n1", 8, "Succeeded")], alloc), {})
        self.assertEqual(fo.overbooked([p("n1", 4), p("n1", 8), p(None, 8)], alloc), {"n1": [12, 8]})

    def test_failover_is_kill_to_first_bind_after_the_grace(self):
        recs = [pod("a-0", "a", 1.0), {"kind": "mark", "name": "kill-1-muster-replica-0", "t": 10.0},
                pod("b-0", "b", 10.5, node="n1"),  # in flight: the dead leader's
                pod("a-0", "a", 19.0, node="n1"), pod("a-0", "a", 20.0, node="n1", phase="Running")]
        polls = [poll(9.0, "muster-replica-0", "muster-replica-0"), poll(17.0, "muster-replica-0", None),
                 poll(18.5, "muster-replica-1", "muster-replica-1")]
        [row] = fo.failovers(recs, polls)
        self.assertEqual(row["failover"], 9.0)
        self.assertEqual(row["inflight"], 1)
        self.assertEqual(row["sched_takeover"], 8.5)
        self.assertEqual(row["rec_takeover"], 8.5)

    def test_no_takeover_when_the_lease_was_elsewhere(self):
        recs = [{"kind": "mark", "name": "kill-1-muster-replica-0", "t": 10.0}]
        polls = [poll(9.0, "muster-replica-0", "muster-replica-1"), poll(19.0, "muster-replica-1", "muster-replica-1")]
        [row] = fo.failovers(recs, polls)
        self.assertIsNone(row["failover"])
        self.assertIsNone(row["rec_takeover"])
        self.assertEqual(row["sched_takeover"], 9.0)

    def test_outcome_counts_per_gang(self):
        items = workload({"a": 2, "b": 2})
        ok = [pod("a-0", "a", 1, "n1", "Succeeded"), pod("a-1", "a", 1, "n1", "Succeeded"),
              pod("b-0", "b", 1, "n1", "Succeeded"), pod("b-1", "b", 1, "n1", "Succeeded")]
        out = fo.gang_outcome(ok, items)
        self.assertEqual((out["gangs"], out["completed"], out["lost"], out["duplicated"]), (2, 2, [], []))
        bad = ok[:3] + [pod("b-1", "b", 2, None, ev="DELETED"), pod("b-9", "b", 2, "n1", "Running")]
        out = fo.gang_outcome(bad, items)
        self.assertEqual(out["completed"], 1)
        self.assertEqual(out["lost"], ["b-1"])
        self.assertEqual(out["duplicated"], ["b-9"])
        self.assertEqual(out["deleted"], ["b-1"])
        self.assertEqual(out["below_min"], ["b"])


class Checks(unittest.TestCase):
    def run_eval(self, polls, fail_at=None):
        items = workload({"a": 1})
        t_bind = fail_at or 12.0
        recs = [pod("a-0", "a", 0.0), {"kind": "mark", "name": "kill-1-muster-replica-0", "t": 1.0},
                pod("a-0", "a", t_bind, "n1", "Succeeded")]
        return fo.evaluate({"p": recs}, items, polls)

    def polls(self, **kw):
        return [poll(0.5 * i, "muster-replica-0" if i < 10 else "muster-replica-1", **kw) for i in range(40)]

    def test_clean_run_passes(self):
        fig, failed = self.run_eval(self.polls())
        self.assertEqual(failed, [])
        self.assertEqual(fig["failover"]["times"], [11.0])
        self.assertTrue(fig["failover"]["target_met"])

    def test_each_check_can_fail(self):
        _, failed = self.run_eval(self.polls(over={"n1": [9, 8]}))
        self.assertTrue(any("double booked" in f for f in failed))
        _, failed = self.run_eval(self.polls(leading=("extender", "extender-1")))
        self.assertTrue(any("two leaders" in f for f in failed))
        fig, failed = self.run_eval(self.polls(), fail_at=40.0)
        self.assertFalse(fig["failover"]["target_met"])
        self.assertTrue(any("p99" in f for f in failed))
        _, failed = self.run_eval(self.polls()[::6])
        self.assertTrue(any("sparse" in f for f in failed))

    def test_p99_of_five_is_the_max(self):
        xs = [10.4, 10.3, 9.4, 10.5, 11.5]
        self.assertEqual(fo.figures.nearest_rank(xs, 0.99), 11.5)
        self.assertEqual(fo.figures.nearest_rank(xs, 0.5), 10.4)


if __name__ == "__main__":
    unittest.main()
