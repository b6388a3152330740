#!/usr/bin/env python3
"""Unit tests of bench/reconciler.py's pure figure code on tiny hand-made
cases: the Prometheus text parser, kube-apiserver's write series and which
write set each belongs to, the reconciler's counter, the window figures,
per-job latency and makespan, and the report table (stdlib only)."""

import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reconciler as rb  # noqa: E402


def req(group, resource, verb, n, sub="", code="201"):
    """One apiserver_request_total line."""
    return (f'apiserver_request_total{{code="{code}",component="apiserver",dry_run="",group="{group}",'
            f'resource="{resource}",scope="resource",subresource="{sub}",verb="{verb}",version="v1"}} {n}')


def writes(verb, resource, n):
    return f'muster_reconciler_api_writes_total{{resource="{resource}",verb="{verb}"}} {n}'


class Parse(unittest.TestCase):
    def test_parse_prom(self):
        text = "\n".join([
            "# HELP x y", "# TYPE x counter",
            'a_total{k="v",q="with \\"quote\\""} 3',
            "plain 1.5e3",
            'h_bucket{le="+Inf"} 7',
            "bad{ x",
        ])
        got = rb.parse_prom(text)
        self.assertEqual(got[0], ("a_total", {"k": "v", "q": 'with "quote"'}, 3.0))
        self.assertEqual(got[1], ("plain", {}, 1500.0))
        self.assertEqual(got[2], ("h_bucket", {"le": "+Inf"}, 7.0))
        self.assertEqual(len(got), 3)

    def test_apiserver_writes_keeps_writes_and_sums_other_labels(self):
        text = "\n".join([
            req("", "pods", "POST", 5),
            req("", "pods", "POST", 2).replace('scope="resource"', 'scope="namespace"'),
            req("", "pods", "GET", 100, code="200"),
            req("", "pods", "WATCH", 3, code="200"),
            req("batch", "jobs", "PUT", 4, sub="status", code="200"),
            req("batch", "jobs", "PUT", 1, sub="status", code="409"),
        ])
        self.assertEqual(rb.apiserver_writes(text), {
            "|pods||POST|201": 7, "batch|jobs|status|PUT|200": 4, "batch|jobs|status|PUT|409": 1})
        self.assertEqual(rb.apiserver_writes(text, reads=True), {
            "|pods||GET|200": 100, "|pods||WATCH|200": 3})

    def test_reconciler_series_skips_buckets(self):
        text = "\n".join([
            writes("create", "pods", 10),
            'muster_reconciler_job_to_pods_seconds_bucket{le="1"} 3',
            "muster_reconciler_job_to_pods_seconds_count 3",
            'muster_gang_wait_seconds_count 9',
        ])
        self.assertEqual(rb.reconciler_series(text), {
            "muster_reconciler_api_writes_total{resource=pods,verb=create}": 10,
            "muster_reconciler_job_to_pods_seconds_count{}": 3})

    def test_cpu_seconds_of_recorded_processes(self):
        with open(f"/proc/{os.getpid()}/stat") as f:
            start = f.read().rsplit(")", 1)[1].split()[19]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "state"), "w") as f:
                f.write(f"# state\nport apiserver 1\nproc me {os.getpid()} {start}\n"
                        f"proc reused {os.getpid()} 1{start}\nproc gone 999999999 1\n")
            got = rb.cpu_seconds(d)
        self.assertEqual(list(got), ["me"])
        self.assertGreaterEqual(got["me"], 0)

    def test_diff(self):
        self.assertEqual(rb.diff({"a": 1, "b": 2}, {"a": 1, "b": 5, "c": 1}), {"b": 3, "c": 1})


class WriteSets(unittest.TestCase):
    CASES = [
        # key,                                   controller, all,  events
        ("|pods||POST|201",                          True,  True,  False),
        ("|pods|binding|POST|201",                   False, True,  False),
        ("|pods||PATCH|200",                         False, True,  False),  # the extender's gate lift
        ("|pods|status|PATCH|200",                   False, True,  False),  # kwok
        ("batch|jobs||POST|201",                     False, False, False),  # ours
        ("batch|jobs|status|PUT|200",                True,  True,  False),
        ("batch.volcano.sh|jobs||POST|201",          False, False, False),
        ("batch.volcano.sh|jobs|status|PATCH|200",   True,  True,  False),
        ("scheduling.volcano.sh|podgroups||POST|201",   True,  True, False),
        ("scheduling.volcano.sh|podgroups||DELETE|200", True,  True, False),
        ("scheduling.volcano.sh|podgroups||PATCH|200",  False, True, False),  # extender status
        ("|events||POST|201",                        False, True,  True),
        ("events.k8s.io|events||POST|201",           False, True,  True),
        ("|services||POST|201",                      False, False, False),
        ("coordination.k8s.io|leases||PUT|200",      False, False, False),
        ("other.group|jobs||PUT|200",                False, False, False),
    ]

    def test_table(self):
        for key, controller, all_, events in self.CASES:
            with self.subTest(key=key):
                self.assertEqual(rb.in_set("controller", key), controller)
                self.assertEqual(rb.in_set("all", key), all_)
                self.assertEqual(rb.in_set("events", key), events)

    def test_unknown_set(self):
        with self.assertRaises(ValueError):
            rb.in_set("nope", "|pods||POST|201")

    def test_by_request_labels_and_failures(self):
        got = rb.by_request({"|pods||POST|201": 4, "|pods||POST|409": 1,
                             "batch|jobs|status|PUT|200": 2})
        self.assertEqual(got, {"POST pods": [5, 1], "PUT batch/jobs/status": [2, 0]})

    def test_reconciler_writes(self):
        got = rb.reconciler_writes({
            "muster_reconciler_api_writes_total{resource=pods,verb=create}": 4,
            "muster_reconciler_syncs_total{result=ok}": 9})
        self.assertEqual(got, {"create pods": 4})


def snap(api, rec=None):
    s = {"apiserver": api}
    if rec is not None:
        s["reconciler"] = rec
    return s


class Windows(unittest.TestCase):
    def test_stock_window(self):
        before = snap({"|pods||POST|201": 10, "batch|jobs|status|PUT|200": 1})
        after = snap({"|pods||POST|201": 14, "batch|jobs|status|PUT|200": 5, "batch|jobs||POST|201": 2,
                      "|events||POST|201": 4, "|pods|binding|POST|201": 4})
        w = rb.window_writes(before, after, 4)
        self.assertEqual(w["sets"], {"controller": 8, "all": 16, "events": 4})
        self.assertEqual(w["perPod"]["controller"], 2.0)
        self.assertNotIn("reconciler", w)

    def test_muster_window_splits_shared_objects(self):
        k = "muster_reconciler_api_writes_total{resource=%s,verb=%s}"
        before = snap({}, {k % ("pods", "create"): 0, "muster_reconciler_syncs_total{result=ok}": 3})
        after = snap({}, {k % ("pods", "create"): 10, k % ("jobs", "patch"): 5,
                          k % ("podgroups", "create"): 2, k % ("services", "create"): 2,
                          k % ("events", "create"): 1, "muster_reconciler_syncs_total{result=ok}": 8})
        w = rb.window_writes(before, after, 10)
        self.assertEqual(w["reconciler"], {"create pods": 10, "patch jobs": 5, "create podgroups": 2,
                                           "create services": 2, "create events": 1})
        self.assertEqual(w["reconcilerTotal"], 20)
        self.assertEqual(w["reconcilerPerPod"], 2.0)
        self.assertEqual(w["reconcilerPodsAndStatusPerPod"], 1.5)
        self.assertEqual(w["reconcilerOther"], {"muster_reconciler_syncs_total{result=ok}": 5})

    def test_no_pods(self):
        self.assertIsNone(rb.window_writes(snap({}), snap({}), 0)["perPod"]["all"])


class Latency(unittest.TestCase):
    def test_quantile_and_summary(self):
        self.assertIsNone(rb.quantile([], 0.5))
        self.assertEqual(rb.quantile([3, 1, 2], 0.5), 2)
        self.assertAlmostEqual(rb.quantile([0, 10], 0.99), 9.9)
        self.assertEqual(rb.summary([1, 2, 3])["max"], 3)
        self.assertEqual(rb.summary([])["n"], 0)

    def run_of(self, side="muster"):
        jobs = [
            {"name": "j0000", "sent": 0.0, "acked": 0.05, "created": [0.2, 0.3], "running": [0.5, 0.6],
             "pgAdded": 0.05, "pgInqueue": 0.1, "jobEvents": 3,
             "statuses": [[0.0, "-"], [0.2, "Pending"], [0.6, "Running"]]},
            {"name": "j0001", "sent": 0.1, "acked": 0.2, "created": [0.5, 0.9], "running": [1.0, 1.2],
             "pgAdded": 0.2, "pgInqueue": 0.4, "jobEvents": 4,
             "statuses": [[0.1, "-"], [0.5, "Pending"], [1.2, "Running"]]},
            # Incomplete: one of two pods; not in the per-job figures.
            {"name": "j0002", "sent": 0.2, "acked": 0.3, "created": [1.5], "running": [],
             "jobEvents": 2, "statuses": [[0.2, "-"], [1.5, "Pending"]]},
        ]
        snaps = {"before": snap({"|pods||POST|201": 0}), "created": snap({"|pods||POST|201": 5}),
                 "settled": snap({"|pods||POST|201": 5, "batch.volcano.sh|jobs|status|PATCH|200": 6})}
        return {"shape": "A", "side": side, "jobs": 3, "pods": 2, "jobList": jobs, "metrics": snaps}

    def test_analyze(self):
        a = rb.analyze(self.run_of())
        self.assertEqual(a["pods"], 6)
        self.assertEqual(a["complete"], 2)
        self.assertEqual(a["podsCreated"], 5)
        self.assertEqual(a["podsRunning"], 4)
        self.assertAlmostEqual(a["jobToPods"]["p50"], (0.3 + 0.8) / 2)
        self.assertAlmostEqual(a["jobToPods"]["max"], 0.8)
        self.assertAlmostEqual(a["jobToRunning"]["max"], 1.1)
        self.assertAlmostEqual(a["makespan"], 1.5)  # the incomplete job's pod counts: the last pod seen
        self.assertIsNone(a["makespanRunning"])  # not every pod ran
        self.assertAlmostEqual(a["submitSpan"], 0.3)
        self.assertAlmostEqual(a["stages"]["toInqueue"]["max"], 0.3)
        self.assertAlmostEqual(a["stages"]["inqueueToFirstPod"]["p50"], 0.1)
        self.assertAlmostEqual(a["stages"]["firstToLastPod"]["max"], 0.4)
        self.assertEqual(a["statusSequences"][0], [2, "- -> Pending -> Running"])
        self.assertEqual(a["jobEvents"]["max"], 4)
        self.assertEqual(a["created"]["sets"]["controller"], 5)
        self.assertEqual(a["settled"]["perPod"]["controller"], 11 / 6)

    def test_analyze_stock_has_no_stages_of_podgroups(self):
        run = self.run_of("stock")
        for j in run["jobList"]:
            j.pop("pgAdded", None)
            j.pop("pgInqueue", None)
        a = rb.analyze(run)
        self.assertNotIn("toInqueue", a["stages"])
        self.assertIn("toFirstPod", a["stages"])


class Report(unittest.TestCase):
    def test_table_has_both_sides_and_ratio(self):
        lat = Latency()
        st, mu = rb.analyze(lat.run_of("stock")), rb.analyze(lat.run_of("muster"))
        text = rb.shape_table("A", {"stock": st, "muster": mu})
        self.assertIn("shape A: 3 Jobs x 2 pods (6 pods)", text)
        row = next(line for line in text.splitlines() if "all pods created p50" in line)
        self.assertTrue(row.rstrip().endswith("1.00"), row)  # same data: ratio 1
        self.assertIn("only 2/3 Jobs got all their pods", text)
        self.assertIn("PATCH batch.volcano.sh/jobs/status", text)

    def test_ratio(self):
        self.assertIsNone(rb.ratio(1, 0))
        self.assertIsNone(rb.ratio(None, 1))
        self.assertEqual(rb.ratio(3, 2), 1.5)


if __name__ == "__main__":
    unittest.main()
