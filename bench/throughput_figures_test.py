#!/usr/bin/env python3
"""Unit tests for throughput_figures.py (ctest bench_throughput_figures_test, label unit)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import throughput_figures as tf  # noqa: E402


def writes(**counts):
    """{"group|resource|sub|VERB|code": n} from keyword shorthands."""
    keys = {"bind": "|pods|binding|POST|201", "patch": "|pods||PATCH|200",
            "status": "|pods|status|PATCH|200", "event": "events.k8s.io|events||POST|201",
            "lease": "coordination.k8s.io|leases||PUT|200", "node": "|nodes|status|PATCH|200"}
    return {keys[k]: n for k, n in counts.items()}


class RunRecordTest(unittest.TestCase):
    def test_charges_each_side_its_own_processes(self):
        before = {"cpu": {"kube-scheduler": 10, "volcano-scheduler": 5, "extender": 2, "reconciler": 1,
                          "kube-apiserver": 100}, "writes": {}}
        after = {"cpu": {"kube-scheduler": 11, "volcano-scheduler": 7, "extender": 4, "reconciler": 1.5,
                         "kube-apiserver": 110}, "writes": {}}
        watch = {"bound": 100, "first_s": 1.0, "last_s": 3.0, "released_s": 0.5, "pods_per_s": 49.5}
        table = [("stock", 10.0), ("volcano", 45.0)]  # 1 s vs 2 + 2 + 0.5 s, over 100 pods
        for side, ms_per_pod in table:
            r = tf.run_record(side, 100, before, after, watch)
            self.assertAlmostEqual(r["side_cpu_ms_per_pod"], ms_per_pod, msg=side)
            self.assertAlmostEqual(r["plane_cpu_ms_per_pod"], 100.0, msg=side)

    def test_release_rate_charges_the_time_before_the_first_bind(self):
        empty = {"cpu": {}, "writes": {}}
        watch = {"bound": 100, "first_s": 2.0, "last_s": 3.0, "released_s": 1.0, "pods_per_s": 99.0}
        r = tf.run_record("volcano", 100, empty, empty, watch)
        self.assertEqual(r["release_pods_per_s"], 50.0)
        self.assertEqual(r["pods_per_s"], 99.0)
        # Without a release time the first bind stands in for it.
        del watch["released_s"]
        self.assertEqual(tf.run_record("stock", 100, empty, empty, watch)["release_pods_per_s"], 100.0)

    def test_writes_per_pod_leave_node_heartbeats_out(self):
        before = {"cpu": {}, "writes": writes(bind=5, lease=50)}
        after = {"cpu": {}, "writes": writes(bind=105, patch=100, event=100, lease=350, node=70)}
        r = tf.run_record("volcano", 100, before, after, {"bound": 100})
        self.assertEqual(r["writes_per_pod"], 3.0)  # binding + gate lift + event
        self.assertEqual(r["writes"]["PUT coordination.k8s.io/leases"], 300)
        self.assertEqual(r["writes"]["PATCH nodes/status"], 70)


class ParsingTest(unittest.TestCase):
    def test_state_procs_takes_the_last_line_of_a_name(self):
        state = "# muster e2e cluster state\nport apiserver 1\nproc extender 10 5\nproc extender 12 9\nproc etcd 3 1\n"
        self.assertEqual(tf.state_procs(state), {"extender": 12, "etcd": 3})

    def test_cpu_seconds_reads_utime_and_stime_past_a_name_with_spaces(self):
        fields = ["S"] + ["0"] * 10 + ["250", "150"] + ["0"] * 30
        stat = "1234 (kube sched) " + " ".join(fields)
        self.assertEqual(tf.cpu_seconds(stat, 100), 4.0)


class ReportTest(unittest.TestCase):
    def test_ratio_of_medians(self):
        records = [{"side": s, "pods": 10, "release_pods_per_s": v, "pods_per_s": v, "writes_per_pod": 2,
                    "side_cpu_ms_per_pod": 1, "plane_cpu_ms_per_pod": 1}
                   for s, v in [("stock", 100), ("stock", 120), ("stock", 80), ("volcano", 90),
                                ("volcano", 95), ("volcano", 300)]]
        text = "\n".join(tf.report(records))
        self.assertIn("ratio volcano+muster / stock, release_pods_per_s: 0.95", text)
        self.assertIn("release_pods_per_s 100.00 [80.00-120.00]", text)


if __name__ == "__main__":
    unittest.main()
