#!/usr/bin/env python3
"""Unit tests of bench/extender_ab.py on hand-made Google Benchmark JSON:
units, skipped and aggregate rows left out, medians and spread, paired
ratios, the shared-GPU rows against their unshared counterpart (stdlib
only)."""

import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extender_ab as ab  # noqa: E402


def bench(name, real_time, unit="us", p50=None, **extra):
    b = {"name": name, "run_type": "iteration", "real_time": real_time, "cpu_time": real_time * 0.9,
         "time_unit": unit}
    if p50 is not None:
        b["p50_us"] = p50
    b.update(extra)
    return b


def write(directory, side, rnd, benchmarks):
    with open(os.path.join(directory, f"{side}-{rnd}.json"), "w", encoding="utf-8") as f:
        json.dump({"context": {}, "benchmarks": benchmarks}, f)


class LoadRun(unittest.TestCase):
    def test_units_skips_and_aggregates(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, "base", 1, [
                bench("BM_Filter/nodes:1000/gpu_topology:0", 150.0, p50=140.0),
                bench("BM_Prioritize/nodes:5000/gpu_topology:1", 3.0, unit="ms"),
                bench("BM_Bind/nodes:1000/gpu_topology:0/manual_time", 5000.0, unit="ns"),
                bench("BM_FilterSharedGpus/nodes:1000/fraction_probe:0", 0.0, error_occurred=True),
                bench("BM_FilterSharedGpus/nodes:1000/fraction_probe:1", 0.0, skipped=True),
                dict(bench("BM_Filter/nodes:1000/gpu_topology:0_median", 1.0), run_type="aggregate"),
            ])
            run = ab.load_run(os.path.join(d, "base-1.json"))
        self.assertEqual(sorted(run), ["BM_Bind/nodes:1000/gpu_topology:0/manual_time",
                                       "BM_Filter/nodes:1000/gpu_topology:0",
                                       "BM_Prioritize/nodes:5000/gpu_topology:1"])
        self.assertAlmostEqual(run["BM_Prioritize/nodes:5000/gpu_topology:1"]["time"], 3000.0)
        self.assertAlmostEqual(run["BM_Bind/nodes:1000/gpu_topology:0/manual_time"]["time"], 5.0)
        self.assertAlmostEqual(run["BM_Bind/nodes:1000/gpu_topology:0/manual_time"]["cpu"], 4.5)
        self.assertEqual(run["BM_Filter/nodes:1000/gpu_topology:0"]["p50"], 140.0)


class Report(unittest.TestCase):
    def sides(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        d = tmp.name
        # base 100, 110, 90; current 105, 99, 120 (paired: 1.05, 0.9, 1.333)
        for r, (b, c) in enumerate([(100, 105), (110, 99), (90, 120)], start=1):
            write(d, "base", r, [bench("BM_Filter/nodes:1000/gpu_topology:0", b, p50=b)])
            write(d, "current", r, [
                bench("BM_Filter/nodes:1000/gpu_topology:0", c, p50=c),
                bench("BM_FilterSharedGpus/nodes:1000/fraction_probe:1", 4 * c),
                bench("BM_BindSharedGpus/nodes:1000/fraction_probe:0/manual_time", 6.0),
            ])
        # a stray file is ignored
        with open(os.path.join(d, "notes.txt"), "w", encoding="utf-8") as f:
            f.write("x")
        return ab.load_dir(d)

    def test_ab_rows(self):
        rows = ab.ab_rows(self.sides())
        self.assertEqual([r["name"] for r in rows], ["BM_Filter/nodes:1000/gpu_topology:0"])
        row = rows[0]
        self.assertEqual(ab.spread(row["base"]), (100, 90, 110))
        self.assertEqual(ab.spread(row["current"]), (105, 99, 120))
        self.assertAlmostEqual(row["ratio_of_medians"], 1.05)
        med, lo, hi = ab.spread(row["ratios"])
        self.assertAlmostEqual(med, 1.05)
        self.assertAlmostEqual(lo, 0.9)
        self.assertAlmostEqual(hi, 120 / 90)
        self.assertAlmostEqual(row["p50_ratio"], 1.05)
        self.assertAlmostEqual(ab.spread(row["cpu_ratios"])[0], 1.05)

    def test_shared_rows(self):
        rows = ab.shared_rows(self.sides())
        # the Bind row has no unshared counterpart in these runs: left out
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["against"], "BM_Filter/nodes:1000/gpu_topology:0")
        self.assertEqual([round(x, 6) for x in rows[0]["ratios"]], [4.0, 4.0, 4.0])

    def test_unshared_of(self):
        self.assertEqual(ab.unshared_of("BM_PrioritizeSharedGpus/nodes:1000/fraction_probe:1"),
                         "BM_Prioritize/nodes:1000/gpu_topology:0")
        self.assertEqual(ab.unshared_of("BM_BindSharedGpus/nodes:1000/fraction_probe:0/manual_time"),
                         "BM_Bind/nodes:1000/gpu_topology:0/manual_time")
        self.assertIsNone(ab.unshared_of("BM_Filter/nodes:1000/gpu_topology:0"))

    def test_report_table(self):
        text = ab.report(self.sides())
        self.assertIn("| Filter/nodes:1000/gpu_topology:0 | 100.0 [90.0-110.0] | 105.0 [99.0-120.0] | 1.050 |",
                      text)
        self.assertIn("| FilterSharedGpus/nodes:1000/fraction_probe:1 | 420.0 [396.0-480.0] |", text)


CALLGRIND = """events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
fl=bench/extender_bench.cc
fn=RunBind
cfn=muster::extender::Pipeline::ReserveBind(std::basic_string_view<char>) const
calls=4 0
0 4000 0 0 0 30 10 0 1 1
cfn=muster::extender::Pipeline::FinishBind(muster::extender::BindPlan const&) const
calls=4 0
0 400 0 0 0 2
fn=muster::extender::Pipeline::ReserveBind(std::basic_string_view<char>) const
cfn=muster::extender::Pipeline::ReserveBind(std::basic_string_view<char>) const::{lambda(ClusterState&)#1}
calls=4 0
0 3000 0 0 0 20
fn=RunFilter
cfn=muster::extender::Pipeline::Filter(std::basic_string_view<char>) const
calls=2 0
0 900
"""


class Callgrind(unittest.TestCase):
    def test_costs_per_call(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.callgrind")
            with open(path, "w", encoding="utf-8") as f:
                f.write(CALLGRIND)
            # bind: ReserveBind + FinishBind, the lambda inside not counted twice
            calls, costs = ab.callgrind_costs(path, ab.verb_of("BM_Bind/nodes:1000/gpu_topology:0/manual_time"))
            self.assertEqual(calls, 4)
            self.assertEqual(costs["Ir"], 4400)
            self.assertEqual(ab.per_call(calls, costs), {"ir": 1100, "d1": 10.5, "ll": 0.5, "calls": 4})
            self.assertEqual(ab.per_call(*ab.callgrind_costs(path, ab.VERBS["Filter"]))["ir"], 450)
            self.assertIsNone(ab.per_call(*ab.callgrind_costs(path, ab.VERBS["Prioritize"])))


if __name__ == "__main__":
    unittest.main()
