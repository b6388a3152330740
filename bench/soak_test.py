#!/usr/bin/env python3
"""Unit tests of bench/soak_figures.py on tiny hand-made objects: the
invariant checks (GPU over-commit and double-held GPUs, partly bound gangs
over time, Job duplicates), /proc and state-file parsing, the metrics
gauges, the flat verdict and the seeded churn's objects (stdlib only)."""

import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "scenarios"))
import soak_figures as sf  # noqa: E402
from placement import fake_gpu_pod_spec  # noqa: E402


def node(name, gpus):
    return {"metadata": {"name": name}, "status": {"allocatable": {sf.GPU: str(gpus)}}}


def pod(name, node_name=None, gpus=0, phase="Running", ids=None, group=None, job=None, task=None, index=None,
        deleting=False, ns="soak"):
    ann, labels = {}, {}
    if ids:
        ann[sf.GPU_IDS] = ids
    if group:
        ann[sf.GROUP] = group
    if job:
        labels[sf.JOB_NAME] = job
        ann[sf.TASK_SPEC] = task
        ann[sf.TASK_INDEX] = str(index)
    meta = {"name": name, "namespace": ns, "annotations": ann, "labels": labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"containers": [{"resources": {"limits": {sf.GPU: str(gpus)}} if gpus else {}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def pg(name, minimum, ns="soak"):
    return {"metadata": {"name": name, "namespace": ns}, "spec": {"minMember": minimum}}


class Gpus(unittest.TestCase):
    def test_within_allocatable(self):
        self.assertEqual(sf.gpu_overcommit([node("n", 8)], [pod("a", "n", 4, ids="0,1,2,3"),
                                                            pod("b", "n", 4, ids="4,5,6,7")]), [])

    def test_over_allocatable(self):
        got = sf.gpu_overcommit([node("n", 8)], [pod("a", "n", 8), pod("b", "n", 1)])
        self.assertEqual(got, ["node n: 9 GPUs bound > allocatable 8"])

    def test_finished_deleting_and_unbound_pods_hold_nothing(self):
        pods = [pod("a", "n", 8), pod("b", "n", 8, phase="Succeeded"), pod("c", "n", 8, phase="Failed"),
                pod("d", "n", 8, deleting=True), pod("e", None, 8)]
        self.assertEqual(sf.gpu_overcommit([node("n", 8)], pods), [])

    def test_gpu_held_twice(self):
        got = sf.gpu_overcommit([node("n", 8)], [pod("a", "n", 2, ids="0,2"), pod("b", "n", 2, ids="2,4")])
        self.assertEqual(got, ["node n: GPU 2 held by soak/a and soak/b"])

    def test_limits_else_requests(self):
        p = {"spec": {"containers": [{"resources": {"requests": {sf.GPU: "2"}}},
                                     {"resources": {"limits": {sf.GPU: "1"}}}]}}
        self.assertEqual(sf.gpus_of(p), 3)


class Gangs(unittest.TestCase):
    def test_counts_bound_pods_of_any_phase(self):
        pods = [pod("g-0", "n", group="g"), pod("g-1", "n", group="g", phase="Succeeded"), pod("g-2", group="g"),
                pod("g-3", "n", group="g", deleting=True)]
        self.assertEqual(sf.gang_counts([pg("g", 3)], pods), {"soak/g": (3, 2)})

    def test_partial_within_grace_then_violation_once(self):
        w = sf.GangWatch(60)
        self.assertEqual(w.observe(0, {"soak/g": (4, 2)}), [])
        self.assertEqual(w.observe(50, {"soak/g": (4, 3)}), [])
        got = w.observe(61, {"soak/g": (4, 3)})
        self.assertEqual(len(got), 1)
        self.assertIn("soak/g: 3 of minMember 4 bound for 61 s", got[0])
        self.assertEqual(w.observe(70, {"soak/g": (4, 3)}), [])  # reported once
        self.assertEqual(w.longest, 70)

    def test_whole_or_none_resets(self):
        w = sf.GangWatch(60)
        w.observe(0, {"soak/g": (4, 2)})
        w.observe(30, {"soak/g": (4, 4)})
        self.assertEqual(w.observe(80, {"soak/g": (4, 2)}), [])  # a new episode from 80
        self.assertEqual(w.observe(100, {"soak/g": (4, 0)}), [])
        self.assertEqual(w.since, {})

    def test_exempt_and_gone(self):
        w = sf.GangWatch(10)
        w.observe(0, {"soak/g": (4, 2)})
        self.assertEqual(w.observe(100, {"soak/g": (4, 2)}, exempt={"soak/g"}), [])
        w.observe(200, {"soak/h": (4, 1)})
        self.assertEqual(w.observe(300, {}), [])
        self.assertEqual(w.since, {})


class Jobs(unittest.TestCase):
    JOB = {"metadata": {"name": "j", "namespace": "soak"},
           "spec": {"tasks": [{"name": "master", "replicas": 1}, {"name": "worker", "replicas": 2}]}}

    def test_replicas_ok(self):
        pods = [pod("j-master-0", job="j", task="master", index=0), pod("j-worker-0", job="j", task="worker", index=0),
                pod("j-worker-1", job="j", task="worker", index=1),
                pod("old", job="j", task="worker", index=1, deleting=True)]
        self.assertEqual(sf.job_duplicates([self.JOB], pods), [])

    def test_too_many(self):
        pods = [pod(f"p{i}", job="j", task="worker", index=i % 2) for i in range(4)]
        self.assertEqual(sf.job_duplicates([self.JOB], pods), ["Job soak/j: 4 pods > 3 replicas"])

    def test_index_out_of_range(self):
        got = sf.job_duplicates([self.JOB], [pod("x", job="j", task="master", index=1)])
        self.assertEqual(len(got), 1)
        self.assertIn("task-index 1 >= replicas 1 of task master", got[0])


class Parsing(unittest.TestCase):
    def test_status(self):
        text = "Name:\tmuster\nVmPeak:\t  9000 kB\nVmRSS:\t   17100 kB\nThreads:\t73\n"
        self.assertEqual(sf.parse_status(text), (17100, 73))

    def test_state(self):
        text = "dir /x\nport extender 21064\nport reconciler 25193\nproc extender 16020 1278130\nproc kwok 1 2\n"
        ports, procs = sf.parse_state(text)
        self.assertEqual(ports, {"extender": 21064, "reconciler": 25193})
        self.assertEqual(procs["extender"], (16020, "1278130"))

    def test_stat_starttime_with_spaces_in_comm(self):
        fields = ["S"] + [str(i) for i in range(4, 22)] + ["999", "0"]
        self.assertEqual(sf.stat_starttime("12 (a b) c) " + " ".join(fields)), "999")

    def test_gauges(self):
        series = [("muster_extender_cache_objects", {"kind": "pods"}, 3.0),
                  ("muster_reconciler_jobs", {"phase": "Running"}, 2.0),
                  ("muster_reconciler_jobs", {"phase": "Failed"}, 0.0), ("other", {}, 1.0)]
        self.assertEqual(sf.cache_sizes(series), {"pods": 3})
        self.assertEqual(sf.job_phases(series), {"Running": 2})


def sample(t, rss, fds, rss2=None, fds2=None):
    return {"t": t, "procs": {"extender": {"rss_kb": rss, "fds": fds, "threads": 70},
                              "reconciler": {"rss_kb": rss2 or rss, "fds": fds2 or fds, "threads": 30}}}


class Flat(unittest.TestCase):
    def test_flat(self):
        ok, lines = sf.flat_verdict([sample(0, 1000, 10), sample(600, 20000, 30), sample(1800, 22000, 40)], 600)
        self.assertTrue(ok, lines)
        self.assertIn("+10.0 %", lines[0])

    def test_rss_growing(self):
        ok, lines = sf.flat_verdict([sample(600, 20000, 30), sample(1800, 23100, 30)], 600)
        self.assertFalse(ok)
        self.assertIn("GROWING", lines[0])

    def test_fds_growing(self):
        ok, _ = sf.flat_verdict([sample(600, 20000, 30, 20000, 20), sample(1800, 20000, 30, 20000, 31)], 600)
        self.assertFalse(ok)

    def test_missing_process(self):
        last = sample(1800, 1, 1)
        del last["procs"]["reconciler"]
        self.assertFalse(sf.flat_verdict([sample(600, 1, 1), last], 600)[0])

    def test_slope(self):
        s = [sample(t, 1024 * (10 + t / 3600), 1) for t in (0, 600, 1200, 1800)]
        self.assertAlmostEqual(sf.slope_mib_per_hour(s, "extender", 0), 1.0)
        self.assertIsNone(sf.slope_mib_per_hour(s, "extender", 1500))

    def test_report_line(self):
        s = sample(300, 2048, 12)
        s["cache"], s["jobs"] = {"pods": 5, "other": 0}, {"Running": 1}
        line = sf.report_line(s, {"gangs": 2}, 0)
        self.assertTrue(line.startswith("[soak   5:00] extender rss 2.0MiB fds 12 thr 70"), line)
        self.assertIn("cache pods=5 |", line)
        self.assertIn("jobs Running=1", line)


class Churn(unittest.TestCase):
    def test_seeded(self):
        a, b = sf.new_rng(3), sf.new_rng(3)
        self.assertEqual([sf.pick_action(a) for _ in range(50)], [sf.pick_action(b) for _ in range(50)])

    def test_gang_shape_bounds(self):
        rng = sf.new_rng(1)
        for _ in range(500):
            pods, gpus, run = sf.gang_shape(rng)
            self.assertTrue(2 <= pods <= 8 and pods * gpus <= 32 and 10 <= run <= 60)

    def test_flaky_job(self):
        job = sf.volcano_job("j", "q", [("master", 1), ("worker", 2)], 1, 20, True, fake_gpu_pod_spec)
        self.assertEqual(job["spec"]["minAvailable"], 3)
        self.assertEqual(job["spec"]["policies"], [{"event": "PodFailed", "action": "RestartJob"}])
        self.assertEqual(job["spec"]["maxRetry"], 2)
        ann = job["spec"]["tasks"][0]["template"]["metadata"]["annotations"]
        self.assertEqual(ann, {sf.RUN: "20", sf.EXIT: "1"})
        self.assertEqual(job["spec"]["tasks"][1]["template"]["spec"]["schedulerName"], "volcano")

    def test_extra_node(self):
        tmpl = {"metadata": {"name": "t", "labels": {"kubernetes.io/hostname": "t", "network.muster.io/rack": "r0"},
                             "annotations": {"kwok.x-k8s.io/node": "fake"}},
                "status": {"allocatable": {sf.GPU: "8"}}}
        n = sf.extra_node(tmpl, "x1")
        self.assertEqual(n["metadata"]["labels"]["kubernetes.io/hostname"], "x1")
        self.assertEqual(n["metadata"]["labels"]["network.muster.io/rack"], "rack-soak")
        self.assertEqual(tmpl["metadata"]["labels"]["kubernetes.io/hostname"], "t")  # a copy


if __name__ == "__main__":
    unittest.main()
