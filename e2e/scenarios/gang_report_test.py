#!/usr/bin/env python3
"""Tests of gang_report.py: the gang scenarios' figures and checks must be
right, and every check must be able to fail."""

import collections
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gang_report as gr  # noqa: E402


class Log:
    """Builds a recorder log: pod lines in the order they are added."""

    def __init__(self, nodes=None):
        self.records = [{"kind": "meta", "t": 0.0, "nodes": nodes or {"n1": 8, "n2": 8}}]
        self.pods = {}

    def pod(self, name, gang, min_member, gpus=4, work=5.0, t=0.0, sched="volcano", annotated=True):
        self.pods[name] = {"name": name, "gang": gang, "min": min_member, "gpus": gpus, "work": work,
                           "node": None, "phase": "Pending", "terminating": False, "gated": False,
                           "mnode": None, "plan": False, "sched": sched, "prio": 0,
                           "annotated": annotated}
        self._emit(name, "ADDED", t)
        return self

    def _emit(self, name, ev, t):
        view = {k: v for k, v in self.pods[name].items() if k != "annotated"}
        self.records.append({"kind": "pod", "ev": ev, "t": t, **view})

    def bind(self, name, node, t):
        p = self.pods[name]
        p["node"] = node
        if p["annotated"] and p["sched"] == "volcano":
            p["mnode"], p["plan"] = node, True
        self._emit(name, "MODIFIED", t)
        return self

    def finish(self, name, t, phase="Succeeded"):
        self.pods[name]["phase"] = phase
        self._emit(name, "MODIFIED", t)
        return self

    def delete(self, name, t):
        self._emit(name, "DELETED", t)
        return self

    def pg(self, name, t, phase, succeeded=0, unschedulable=False):
        conds = [["Unschedulable", "True", "NotEnoughResources", "1/2 pods unschedulable"]] if unschedulable else []
        self.records.append({"kind": "pg", "t": t, "name": name, "phase": phase, "running": 0,
                             "succeeded": succeeded, "failed": 0, "conditions": conds})
        return self

    def end(self, t):
        self.records.append({"kind": "end", "t": t})
        return self

    def figures(self, **kw):
        return gr.analyze(self.records, **kw)


def serial_run():
    """Gang a (2 x 4 GPUs) runs 1-6 s, then gang b 6.5-11.5 s, on n1."""
    log = Log()
    log.pod("a-0", "a", 2).pod("a-1", "a", 2).pod("b-0", "b", 2).pod("b-1", "b", 2)
    log.pg("b", 0.5, "Pending", unschedulable=True)
    log.bind("a-0", "n1", 1.0).bind("a-1", "n1", 1.5)
    log.finish("a-0", 6.0).finish("a-1", 6.0)
    log.pg("a", 6.1, "Completed", succeeded=2)
    log.bind("b-0", "n1", 6.5).bind("b-1", "n1", 6.5)
    log.finish("b-0", 11.5).finish("b-1", 11.5)
    log.pg("b", 11.6, "Completed", succeeded=2)
    return log.end(12.0)


def quietly(main, argv):
    """main(argv) with its stdout discarded; its exit status."""
    with open(os.devnull, "w") as null:
        stdout, sys.stdout = sys.stdout, null
        try:
            return main(argv)
        finally:
            sys.stdout = stdout


ALL = {"overcommit", "complete", "no-partial", "annotations", "serial", "podgroup", "podgroup-wait"}


class AnalyzeTest(unittest.TestCase):
    def test_serial_run_passes_every_check(self):
        fig = serial_run().figures()
        self.assertEqual(gr.checks(fig, ALL, max_ratio=6.0, max_assembly=1.0), [])
        a = fig["gangs"]["a"]
        self.assertEqual(a["assemblySeconds"], 0.5)
        # a-0 held 4 GPUs for 0.5 s before a-1 was bound: the binding ramp.
        self.assertAlmostEqual(a["partialGpuSeconds"], 2.0)
        self.assertEqual(fig["neverAssembledGpuSeconds"], 0)
        self.assertEqual(fig["makespanSeconds"], 11.5)
        # 4 pods x 4 GPUs x 5 s over 16 GPUs.
        self.assertEqual(fig["idealSeconds"], 5.0)
        self.assertEqual(fig["makespanRatio"], 2.3)
        self.assertEqual(fig["completed"], 2)

    def test_limits_fail(self):
        fig = serial_run().figures()
        msgs = gr.checks(fig, set(), max_ratio=2.0, max_assembly=0.4)
        self.assertEqual(len(msgs), 2, msgs)
        self.assertTrue(msgs[0].startswith("makespan:"))
        self.assertTrue(msgs[1].startswith("assembly:"))

    def test_overcommit_follows_the_log_order(self):
        # The release of x is logged before y's bind: fine. The other way
        # round (same timestamps) is an over-commit.
        for release_first, want in ((True, 0), (False, 1)):
            with self.subTest(release_first=release_first):
                log = Log({"n1": 8}).pod("x", "x", 1, gpus=8).pod("y", "y", 1, gpus=8)
                log.bind("x", "n1", 1.0)
                if release_first:
                    log.finish("x", 2.0).bind("y", "n1", 2.0)
                else:
                    log.bind("y", "n1", 2.0).finish("x", 2.0)
                log.finish("y", 3.0).end(4.0)
                fig = log.figures()
                self.assertEqual(fig["overcommitCount"], want)
                self.assertEqual(len(gr.checks(fig, {"overcommit"})), want)

    def test_terminating_pod_holds_until_deleted(self):
        log = Log({"n1": 8}).pod("x", "x", 1, gpus=8, work=None).pod("y", "y", 1, gpus=8)
        log.bind("x", "n1", 1.0)
        log.pods["x"]["terminating"] = True
        log._emit("x", "MODIFIED", 2.0)
        log.bind("y", "n1", 2.1).delete("x", 2.2).end(3.0)
        self.assertEqual(log.figures()["overcommitCount"], 1)

    def test_stuck_gangs(self):
        # Two gangs of 4 x 4 GPUs on 16 GPUs, two members each bound: stuck.
        log = Log()
        for g in "ab":
            for i in range(4):
                log.pod(f"{g}-{i}", g, 4)
        for i, (g, n) in enumerate([("a", "n1"), ("b", "n1"), ("a", "n2"), ("b", "n2")]):
            log.bind(f"{g}-{i // 2}", n, 1.0 + i)
        fig = log.end(11.0).figures(snapshot_at=3.5)
        # a: 4 GPUs from 1 s, 8 from 3 s to 11 s; b: 4 from 2 s, 8 from 4 s.
        self.assertAlmostEqual(fig["gangs"]["a"]["partialGpuSeconds"], 4 * 2 + 8 * 8)
        self.assertAlmostEqual(fig["gangs"]["b"]["partialGpuSeconds"], 4 * 2 + 8 * 7)
        self.assertEqual(fig["neverAssembledGpuSeconds"], fig["partialGpuSeconds"])
        self.assertEqual(fig["leftPartial"], ["a", "b"])
        self.assertIsNone(fig["makespanSeconds"])
        self.assertEqual(fig["boundAt"]["gangs"], {"a": 2, "b": 1})
        self.assertIn("> 11", gr.table({"stock": fig}), "an unfinished run shows a lower bound")
        msgs = gr.checks(fig, ALL - {"podgroup", "podgroup-wait"})
        for prefix in ("complete:", "no-partial: 13", "no-partial: gangs left", "serial:"):
            self.assertTrue(any(m.startswith(prefix) for m in msgs), (prefix, msgs))

    def test_finishing_members_are_not_partial(self):
        # Members finish one after the other: the gang already ran; the
        # survivor's last second is not "partial".
        log = Log().pod("g-0", "g", 2).pod("g-1", "g", 2)
        log.bind("g-0", "n1", 1.0).bind("g-1", "n1", 1.0).finish("g-0", 6.0).finish("g-1", 7.0).end(8.0)
        fig = log.figures()
        self.assertEqual(fig["partialGpuSeconds"], 0)
        self.assertEqual(gr.checks(fig, ALL - {"podgroup", "podgroup-wait"}), [])

    def preempted(self, whole):
        log = Log({"n1": 8, "n2": 8, "n3": 8})
        for i in range(3):
            log.pod(f"low-{i}", "low", 3, gpus=8, work=None)
        log.pod("keep-0", "keep", 1, gpus=0, work=None)
        for i in range(3):
            log.bind(f"low-{i}", f"n{i + 1}", 1.0)
        log.bind("keep-0", "n1", 1.0)
        log.delete("low-0", 5.0)
        if whole:
            log.delete("low-1", 5.01).delete("low-2", 5.02)
        return log.end(10.0).figures()

    def test_whole_gang_eviction(self):
        fig = self.preempted(whole=True)
        self.assertEqual(fig["victims"], ["low"])
        self.assertEqual(fig["broken"], [])
        self.assertEqual(fig["evictedPods"], 3)
        self.assertEqual(gr.checks(fig, ALL - {"podgroup", "podgroup-wait", "serial"}, victims=["low"]), [])
        self.assertEqual(len(gr.checks(fig, set(), victims=["keep"])), 1)

    def test_partial_eviction_breaks_the_gang(self):
        fig = self.preempted(whole=False)
        self.assertEqual(fig["broken"], ["low"])
        self.assertEqual(fig["leftPartial"], ["low"])
        # Two survivors x 8 GPUs from the eviction at 5 s to the end at 10 s.
        self.assertAlmostEqual(fig["partialGpuSeconds"], 80.0)
        msgs = gr.checks(fig, {"no-partial"}, victims=["low"])
        self.assertTrue(any("partly evicted" in m for m in msgs), msgs)
        self.assertTrue(any("broken" in m for m in msgs), msgs)

    def test_annotations(self):
        log = Log().pod("m", "m", 1, annotated=False).pod("s", "s", 1, sched="default-scheduler")
        log.bind("m", "n1", 1.0).bind("s", "n2", 1.0).finish("m", 2.0).finish("s", 2.0)
        fig = log.end(3.0).figures()
        self.assertEqual(len(fig["badAnnotations"]), 1)
        self.assertTrue(fig["badAnnotations"][0].startswith("m:"))
        self.assertEqual(len(gr.checks(fig, {"annotations"})), 1)

    def test_a_gang_of_one_needs_no_plan(self):
        log = Log().pod("one", "one", 1, gpus=2).pod("pair-0", "pair", 2, gpus=2).pod("pair-1", "pair", 2, gpus=2)
        for name in ("one", "pair-0", "pair-1"):
            log.bind(name, "n1", 1.0)
        for name in ("one", "pair-0"):  # bound with muster.io/node, without a gang plan
            log.pods[name]["plan"] = False
            log._emit(name, "MODIFIED", 1.5)
        fig = log.end(3.0).figures()
        self.assertEqual([b.split(":")[0] for b in fig["badAnnotations"]], ["pair-0"])

    def test_podgroup_status(self):
        cases = [
            ("completed and told", True, "Completed", []),
            ("PodGroup left Running", True, "Running", ["podgroup: a finished"]),
            ("b waited without telling", False, "Completed", ["podgroup: b waited"]),
        ]
        for name, unsched, phase, want in cases:
            with self.subTest(name):
                log = Log().pod("a-0", "a", 1).pod("b-0", "b", 1, t=0.0)
                log.pg("b", 0.5, "Pending", unschedulable=unsched)
                log.bind("a-0", "n1", 1.0).finish("a-0", 6.0).bind("b-0", "n1", 6.5).finish("b-0", 8.0)
                log.pg("a", 8.1, phase, succeeded=1).pg("b", 8.1, "Completed", succeeded=1)
                msgs = gr.checks(log.end(9.0).figures(), {"podgroup", "podgroup-wait"})
                self.assertEqual([m[:len(w)] for m, w in zip(msgs, want)], want)
                self.assertEqual(len(msgs), len(want), msgs)

    def test_report_exit_status_follows_muster_sides_only(self):
        stuck = Log().pod("a-0", "a", 2).bind("a-0", "n1", 1.0).end(5.0)
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, log in (("good", serial_run()), ("stuck", stuck)):
                paths[name] = os.path.join(d, name + ".jsonl")
                with open(paths[name], "w") as f:
                    f.writelines(json.dumps(r) + "\n" for r in log.records)
            for sides, want in (([("stock", "stuck"), ("muster", "good")], 0),
                                ([("stock", "good"), ("muster-gated", "stuck")], 1)):
                with self.subTest(sides=sides):
                    argv = ["gang_report.py", "report", "--check", "complete", "--json", os.path.join(d, "f.json")]
                    for side, log in sides:
                        argv += ["--side", f"{side}={paths[log]}"]
                    self.assertEqual(quietly(gr.main, argv), want)


class WorkloadTest(unittest.TestCase):
    def test_burst_waves_fill_the_cluster_exactly(self):
        for seed in (1, 3, 4):
            with self.subTest(seed=seed):
                items = gr.workload("burst", "volcano", True, seed, [20, 12, 16])["items"]
                self.assertEqual(items, gr.workload("burst", "volcano", True, seed, [20, 12, 16])["items"])
                per_wave = collections.Counter()
                groups = {i["metadata"]["name"]: i for i in items if i["kind"] == "PodGroup"}
                seen = set()
                for i in items:
                    if i["kind"] == "PodGroup":
                        seen.add(i["metadata"]["name"])
                        continue
                    gang = i["metadata"]["annotations"][gr.GROUP]
                    self.assertIn(gang, seen, "a PodGroup is created before its pods")
                    gpus = gr.gpu_request(i)
                    self.assertIn(gpus, (1, 2, 4, 8))
                    self.assertEqual(i["spec"]["schedulingGates"], [{"name": gr.GATE}])
                    per_wave[gang.split("-")[0]] += gpus
                for pg in groups.values():
                    self.assertLessEqual(pg["spec"]["minMember"], 8)
                    if "minTaskMember" in pg["spec"]:
                        self.assertEqual(sum(pg["spec"]["minTaskMember"].values()), pg["spec"]["minMember"])
                self.assertEqual(dict(per_wave), {"w0": 256, "w1": 256, "w2": 256})

    def test_deadlock_interleaves_and_stock_pods_have_no_gate(self):
        items = gr.workload("deadlock", "default-scheduler", False, 0, [])["items"]
        pods = [i for i in items if i["kind"] == "Pod"]
        self.assertEqual([p["metadata"]["name"] for p in pods[:4]], ["a-0", "b-0", "a-1", "b-1"])
        self.assertEqual(len(pods), 200)
        self.assertTrue(all("schedulingGates" not in p["spec"] for p in pods))
        self.assertTrue(all(p["spec"]["schedulerName"] == "default-scheduler" for p in pods))

    def test_upstream_gangs_are_kubernetes_workloads_and_pod_groups(self):
        items = gr.workload("preemption-high", "default-scheduler", False, 0, [], upstream=True)["items"]
        kinds = [(i["apiVersion"], i["kind"]) for i in items]
        self.assertEqual(kinds[:2], [("scheduling.k8s.io/v1beta1", "Workload"),
                                     ("scheduling.k8s.io/v1beta1", "PodGroup")])
        self.assertNotIn(("scheduling.volcano.sh/v1beta1", "PodGroup"), kinds)
        workload, group = items[0], items[1]
        template = workload["spec"]["podGroupTemplates"][0]
        self.assertEqual(group["spec"]["workloadRef"], {"workloadName": "high", "templateName": template["name"]})
        for spec in (template, group["spec"]):
            self.assertEqual(spec["schedulingPolicy"], {"gang": {"minCount": 8}})
            self.assertEqual(spec["disruptionMode"], {"all": {}})
            self.assertEqual(spec["priorityClassName"], "e2e-gang-high")
        pods = [i for i in items if i["kind"] == "Pod"]
        self.assertEqual(len(pods), 8)
        for p in pods:
            self.assertEqual(p["spec"]["schedulingGroup"], {"podGroupName": "high"})
            self.assertNotIn(gr.GROUP, p["metadata"]["annotations"], "names no Volcano PodGroup")
        # The recorder reads the gang from spec.schedulingGroup.
        self.assertEqual(gr.pod_view(pods[0])["gang"], "high")

    def test_kueue_gangs_are_pod_groups_of_one_local_queue(self):
        for kind, gangs in (("deadlock", {"a": 100, "b": 100}), ("preemption-high", {"high": 8})):
            with self.subTest(kind=kind):
                items = gr.workload(kind, "default-scheduler", False, 0, [], kueue="gangs")["items"]
                self.assertTrue(all(i["kind"] == "Pod" for i in items), "no PodGroup objects")
                for p in items:
                    gang = p["metadata"]["labels"]["e2e.muster.io/gang"]
                    self.assertEqual(p["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "gangs")
                    self.assertEqual(p["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"], gang)
                    # Kueue builds the Workload once this many members exist.
                    self.assertEqual(p["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"],
                                     str(gangs[gang]))
                    self.assertEqual(p["spec"]["schedulerName"], "default-scheduler")
                    self.assertNotIn("schedulingGates", p["spec"], "Kueue's webhook gates them")
                # The recorder still reads the gang and its minimum from the pod.
                self.assertEqual(gr.pod_view(items[0])["gang"], items[0]["metadata"]["labels"]["e2e.muster.io/gang"])

    def test_rack_workloads_fill_the_free_nodes_and_mark_each_side(self):
        busy = gr.workload("racks-busy", "default-scheduler", False, 0, [])["items"]
        held = collections.Counter(p["spec"]["nodeName"].rsplit("-", 1)[0] for p in busy)
        self.assertEqual(held, {"gpu-a": 3, "gpu-b": 4, "gpu-c": 4, "gpu-d": 4})
        self.assertTrue(all(gr.GROUP not in (p["metadata"].get("annotations") or {}) for p in busy), "no gang")
        free = {r: 8 - n for r, n in held.items()}
        pack = gr.workload("racks-pack", "volcano", True, 0, [])["items"]
        sizes = sorted(g["spec"]["minMember"] for g in pack if g["kind"] == "PodGroup")
        self.assertEqual(sum(sizes), sum(free.values()), "the pack gangs fill the free nodes exactly")
        self.assertEqual(sizes, sorted(free.values()), "each fits one rack, one way only")
        for kueue in (None, "racks"):
            for kind in ("racks-pack", "racks-wide"):
                with self.subTest(kind=kind, kueue=kueue):
                    items = gr.workload(kind, "volcano", False, 0, [], kueue=kueue)["items"]
                    for i in items:
                        ann = i["metadata"].get("annotations") or {}
                        if kueue:
                            self.assertEqual(ann.get("kueue.x-k8s.io/podset-required-topology"),
                                             "network.muster.io/rack")
                        elif i["kind"] == "PodGroup":
                            self.assertEqual(ann, {"muster.io/network-tier-required": "rack"})
        wide = gr.workload("racks-wide", "volcano", False, 0, [])["items"]
        self.assertGreater(len(wide) - 1, max(free.values()), "no rack holds the wide gang")
        self.assertLessEqual(len(wide) - 1, sum(free.values()), "the cluster does, by count")


class RackFiguresTest(unittest.TestCase):
    RACKS = {"a0": "a", "a1": "a", "b0": "b", "b1": "b"}

    def log(self, nodes_of_g, wide_node=None):
        log = Log({n: 8 for n in self.RACKS})
        for i, node in enumerate(nodes_of_g):
            log.pod(f"g-{i}", "g", len(nodes_of_g), gpus=8)
        log.pod("wide-0", "wide", 3, gpus=8, work=None)
        for i, node in enumerate(nodes_of_g):
            log.bind(f"g-{i}", node, 1.0)
        if wide_node:
            log.bind("wide-0", wide_node, 2.0)
        return log.end(12.0)

    def figures(self, log):
        fig = log.figures()
        fig.update(gr.rack_figures(log.records, self.RACKS, ["wide"]))
        return fig

    def test_one_rack_and_an_unplaced_wide_gang_pass(self):
        fig = self.figures(self.log(["a0", "a1"]))
        self.assertEqual((fig["oneRackGangs"], fig["oneRackRate"], fig["unplaceableBoundPods"]), (1, 1.0, 0))
        self.assertEqual(gr.checks(fig, {"one-rack"}), [])

    def test_a_gang_across_racks_or_a_bound_wide_pod_fails(self):
        spread = self.figures(self.log(["a0", "b0"]))
        self.assertEqual((spread["oneRackRate"], spread["racksOfGangs"]["g"]), (0.0, ["a", "b"]))
        self.assertEqual(len(gr.checks(spread, {"one-rack"})), 1)
        wide = self.figures(self.log(["a0", "a1"], wide_node="b0"))
        self.assertEqual((wide["unplaceableBoundPods"], wide["unplaceableGpuSeconds"]), (1, 80.0))
        self.assertEqual(len(gr.checks(wide, {"one-rack"})), 1)

    def test_a_gang_bound_in_part_is_not_one_rack(self):
        log = Log({n: 8 for n in self.RACKS})
        log.pod("g-0", "g", 2, gpus=8).pod("g-1", "g", 2, gpus=8).bind("g-0", "a0", 1.0).end(5.0)
        fig = gr.rack_figures(log.records, self.RACKS)
        self.assertEqual((fig["oneRackGangs"], fig["notOneRack"]), (0, ["g"]))


def pod_obj(name, gang, min_member, node=None, work=5, terminating=False, phase="Running"):
    ann = {gr.GROUP: gang, gr.MIN: str(min_member), gr.WORK: str(work)}
    md = {"name": name, "annotations": ann}
    if terminating:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": md, "spec": {"nodeName": node, "containers": []}, "status": {"phase": phase}}


class RendezvousTest(unittest.TestCase):
    def recorder(self, rendezvous):
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        rec = gr.Recorder(None, "ns", os.path.join(d, "log"), rendezvous=rendezvous)
        self.addCleanup(rec.out.close)
        return rec

    def test_work_starts_only_when_min_member_are_bound(self):
        rec = self.recorder(True)
        working = lambda: sorted(rec.working)  # noqa: E731
        rec.on_pod("ADDED", pod_obj("g-0", "g", 2, node="n1"))
        rec.on_pod("ADDED", pod_obj("g-1", "g", 2))
        rec.on_pod("ADDED", pod_obj("g-2", "g", 2, work=7))
        self.assertEqual(working(), [])
        rec.on_pod("MODIFIED", pod_obj("g-1", "g", 2, node="n1", terminating=True))
        self.assertEqual(working(), [], "a terminating member does not count")
        rec.on_pod("MODIFIED", pod_obj("g-1", "g", 2, node="n1"))
        self.assertEqual(working(), ["g-0", "g-1"])
        due = dict(rec.working)
        rec.on_pod("MODIFIED", pod_obj("g-0", "g", 2, node="n1", phase="Pending"))
        self.assertEqual(rec.working, due, "each member starts once")
        rec.on_pod("MODIFIED", pod_obj("g-2", "g", 2, node="n2", work=7))
        self.assertEqual(working(), ["g-0", "g-1", "g-2"], "a member bound later works at once")
        self.assertAlmostEqual(rec.working["g-2"] - rec.working["g-0"], 2.0, delta=0.5)
        self.assertEqual(sorted(n for _, n in rec.due), ["g-0", "g-1", "g-2"])
        status = rec.status()
        self.assertEqual((status["bound"], status["pending"], status["workPods"], status["active"]), (3, 0, 3, 3))

    def test_without_rendezvous_nothing_works(self):
        rec = self.recorder(False)
        rec.on_pod("ADDED", pod_obj("g-0", "g", 1, node="n1"))
        self.assertEqual((rec.working, rec.due), ({}, []))

    def test_succeeded_status_is_terminal(self):
        st = gr.succeeded_status(0)["status"]
        self.assertEqual(st["phase"], "Succeeded")
        self.assertEqual(st["containerStatuses"][0]["state"]["terminated"]["exitCode"], 0)


if __name__ == "__main__":
    unittest.main()
