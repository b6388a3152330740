#!/usr/bin/env python3
"""Unit tests of bench/gpu_topology.py's report math on tiny hand-made cases:
the link class of a set, the best class a node could offer, stranded GPUs,
rack feasibility (first-fit decreasing), the first-fit simulation, the
replay of a side's binds and the figures (stdlib only)."""

import json
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_topology as gt  # noqa: E402

# The benchmark's node: two interleaved NVLink islands.
INTERLEAVED = gt.Topology.islands(8, [[0, 2, 4, 6], [1, 3, 5, 7]])


def nodes_of(spec):
    """{"rack": [node, ...]} -> the report's node map (8 GPUs, one topology)."""
    return {n: {"rack": rack, "gpus": 8, "topo": "t0"} for rack, names in spec.items() for n in names}


class LinkClass(unittest.TestCase):
    def test_tokens(self):
        self.assertEqual(gt.token_class("NV4"), gt.NVLINK)
        self.assertEqual(gt.token_class("NV12"), gt.NVLINK)
        self.assertEqual(gt.token_class("PIX"), gt.PCIE_SWITCH)
        self.assertEqual(gt.token_class("PHB"), gt.PCIE_HOST)
        self.assertEqual(gt.token_class("NODE"), gt.NUMA)
        self.assertEqual(gt.token_class("SOC"), gt.SYS)
        self.assertIsNone(gt.token_class("NVX"))

    def test_set_class(self):
        t = INTERLEAVED
        self.assertEqual(t.set_class([0, 2]), gt.NVLINK)
        self.assertEqual(t.set_class([0, 1]), gt.SYS)  # lowest indices: across the islands
        self.assertEqual(t.set_class([1, 3, 5, 7]), gt.NVLINK)
        self.assertEqual(t.set_class([0, 2, 4, 5]), gt.SYS)
        self.assertIsNone(t.set_class([3]))

    def test_best_class(self):
        t = INTERLEAVED
        self.assertEqual(t.best_class(frozenset({0, 1, 2, 3}), 2), gt.NVLINK)
        self.assertEqual(t.best_class(frozenset({0, 1}), 2), gt.SYS)  # one GPU an island: SYS is the best
        self.assertEqual(t.best_class(frozenset({0, 1, 2, 3}), 4), gt.SYS)
        self.assertEqual(t.best_class(frozenset({1, 3, 5, 7, 0}), 4), gt.NVLINK)
        self.assertIsNone(t.best_class(frozenset({0}), 2))  # fewer free than asked

    def test_best_classes_of_disjoint_sets(self):
        t = INTERLEAVED
        nv, sys_ = gt.NVLINK, gt.SYS
        # 3 pairs from {0,2,4} + {1,3,5}: one pair must cross the islands.
        self.assertEqual(t.best_classes(frozenset(range(6)), 2, 3), (nv, nv, sys_))
        self.assertEqual(t.best_classes(frozenset({0, 1, 2, 3}), 2, 2), (nv, nv))  # {0,2} {1,3}, not {0,1} {2,3}
        self.assertEqual(t.best_classes(frozenset({0, 3, 4, 6}), 2, 2), (nv, sys_))
        self.assertEqual(t.best_classes(frozenset(range(8)), 4, 2), (nv, nv))
        self.assertEqual(t.best_classes(frozenset({0, 1, 2}), 2, 2), (nv,))  # only one set fits
        self.assertEqual(t.best_classes(frozenset({0, 1}), 2, 1), (sys_,))

    def test_parse_rejects_bad_annotations(self):
        self.assertIsNone(gt.Topology.parse("not json"))
        self.assertIsNone(gt.Topology.parse(json.dumps({"v": 2, "gpus": [{}, {}], "link": [["X", "NV1"],
                                                                                           ["NV1", "X"]]})))
        self.assertIsNone(gt.Topology.parse(json.dumps({"v": 1, "gpus": [{}, {}], "link": [["X", "NV1"],
                                                                                           ["SYS", "X"]]})))

    def test_the_cluster_files_annotation(self):
        # The annotation of e2e/clusters/gpu-topo-100.yaml reads as the two interleaved islands.
        sys.path.insert(0, os.path.join(gt.HERE, "..", "e2e", "cluster"))
        import cluster_helper

        path = os.path.join(gt.HERE, "..", "e2e", "clusters", "gpu-topo-100.yaml")
        with open(path) as f:
            nodes = cluster_helper.build_nodes(cluster_helper.parse_subset(f.read(), path), path)
        self.assertEqual(len(nodes), 100)
        text = nodes[0]["metadata"]["annotations"][gt.TOPOLOGY]
        t = gt.Topology.parse(text)
        self.assertEqual(t.cls, INTERLEAVED.cls)
        self.assertEqual([g["numa"] for g in json.loads(text)["gpus"]], [0, 1] * 4)
        self.assertEqual(len({n["metadata"]["labels"][gt.RACK] for n in nodes}), 10)


class Stranded(unittest.TestCase):
    def test_only_free_gpu_of_its_island(self):
        t = INTERLEAVED
        self.assertEqual(t.stranded(frozenset()), 0)
        self.assertEqual(t.stranded(frozenset({0})), 1)
        self.assertEqual(t.stranded(frozenset({0, 1})), 2)  # a SYS pair: no NVLink request fits
        self.assertEqual(t.stranded(frozenset({0, 2})), 0)
        self.assertEqual(t.stranded(frozenset({0, 2, 5})), 1)
        self.assertEqual(t.stranded(frozenset(range(8))), 0)

    def test_nvlink_quads(self):
        t = INTERLEAVED
        self.assertEqual(t.nvlink_quads(frozenset(range(8))), 2)
        self.assertEqual(t.nvlink_quads(frozenset({0, 1, 2, 3, 4, 6})), 1)
        self.assertEqual(t.nvlink_quads(frozenset({0, 1, 2, 3})), 0)


class Feasibility(unittest.TestCase):
    def test_ffd(self):
        self.assertTrue(gt.ffd_fits([4, 4], [8]))
        self.assertTrue(gt.ffd_fits([4, 2, 2], [4, 4]))
        self.assertFalse(gt.ffd_fits([4, 4], [3, 3, 3]))  # 9 free but no 4 anywhere
        self.assertFalse(gt.ffd_fits([8], [7, 7]))
        self.assertTrue(gt.ffd_fits([], []))

    def test_rack_feasible(self):
        free = {"a0": {0, 1, 2, 3}, "a1": {0, 1}, "b0": {0, 1, 2, 3, 4, 5}, "b1": set()}
        racks = {"a": ["a0", "a1"], "b": ["b0", "b1"]}
        self.assertTrue(gt.rack_feasible([2, 2, 2], free, racks))  # rack a: 2+2 in a0, 2 in a1
        self.assertTrue(gt.rack_feasible([4, 2], free, racks))  # rack b: both in b0
        self.assertFalse(gt.rack_feasible([4, 4], free, racks))  # 4+4 fits neither rack whole
        self.assertFalse(gt.rack_feasible([8], free, racks))


class FirstFit(unittest.TestCase):
    def test_first_node_in_order_lowest_indices_all_or_nothing(self):
        free = {"n0": {0, 1, 2}, "n1": set(range(8)), "n2": {4, 5}}
        gangs = [{"name": "a", "size": 2, "gpus": 2},   # n0 {0,1}, then n1 {0,1}
                 {"name": "b", "size": 2, "gpus": 8},   # n1 has 6 left: no - all or nothing
                 {"name": "c", "size": 3, "gpus": 2}]   # n1 {2,3}, n1 {4,5}, n1 {6,7}
        events = gt.first_fit(["n0", "n1", "n2"], free, gangs)
        self.assertEqual(events, [
            ("gang", 0), ("pod", 0, "n0", [0, 1]), ("pod", 0, "n1", [0, 1]),
            ("gang", 1),
            ("gang", 2), ("pod", 2, "n1", [2, 3]), ("pod", 2, "n1", [4, 5]), ("pod", 2, "n1", [6, 7]),
        ])
        self.assertEqual(free["n1"], set(range(8)))  # the input is not changed

    def test_a_gang_that_does_not_fit_leaves_nothing(self):
        free = {"n0": {0, 1, 2, 3}}
        events = gt.first_fit(["n0"], free, [{"name": "a", "size": 3, "gpus": 2}, {"name": "b", "size": 1, "gpus": 4}])
        self.assertEqual(events, [("gang", 0), ("gang", 1), ("pod", 1, "n0", [0, 1, 2, 3])])

    def test_natural_name_order(self):
        self.assertEqual(sorted(["n10", "n2", "n1"], key=gt.natural_key), ["n1", "n2", "n10"])


class Replay(unittest.TestCase):
    def setUp(self):
        self.nodes = nodes_of({"r0": ["a0", "a1"], "r1": ["b0", "b1"]})
        self.topos = {"t0": INTERLEAVED}
        # a0: 0,1,2,3 free; a1: all free but 1 and 3 (island B has 5,7); b0, b1: all busy but 0,1.
        self.prefill = {"a0": [4, 5, 6, 7], "a1": [1, 3], "b0": [2, 3, 4, 5, 6, 7], "b1": [2, 3, 4, 5, 6, 7]}

    def test_best_link_lowest_indices_vs_annotation(self):
        gangs = [{"name": "g", "size": 1, "gpus": 2}]
        lowest = gt.evaluate(self.nodes, self.topos, self.prefill, gangs, [("gang", 0), ("pod", 0, "a0", None)])
        self.assertEqual((lowest["bestLink"], lowest["multiGpuPods"], lowest["idsMissing"]), (0, 1, 1))
        self.assertEqual(lowest["byClass"], {"sys": 1})
        chosen = gt.evaluate(self.nodes, self.topos, self.prefill, gangs, [("gang", 0), ("pod", 0, "a0", [0, 2])])
        self.assertEqual((chosen["bestLink"], chosen["bestLinkRate"], chosen["idsMissing"]), (1, 1.0, 0))
        self.assertEqual(chosen["byClass"], {"nvlink": 1})

    def test_gang_members_on_one_node_judged_together(self):
        # a0 has 0,1,2,3 free; a1 has 0,2,4,5,6,7 (A: 0,2,4,6; B: 5,7).
        gangs = [{"name": "g", "size": 2, "gpus": 2}, {"name": "h", "size": 3, "gpus": 2}]
        # Lowest indices: {0,1} then {2,3}, both SYS where {0,2} {1,3} are NVLink.
        # Per pod the second is a hit (only {2,3} was left); together both miss.
        f = gt.evaluate(self.nodes, self.topos, self.prefill, gangs,
                        [("gang", 0), ("pod", 0, "a0", None), ("pod", 0, "a0", None), ("gang", 1)])
        self.assertEqual((f["bestLink"], f["bestLinkGang"], f["multiGpuPods"]), (1, 0, 2))
        # 3 pairs from 0..5 free (A: 0,2,4; B: 1,3,5): one must cross. Muster-like, the
        # member bound first takes the crossing pair its co-members' sets leave: a
        # miss in bind order, none together.
        prefill = dict(self.prefill, b1=[6, 7])
        events = [("gang", 0), ("gang", 1), ("pod", 1, "b1", [4, 5]), ("pod", 1, "b1", [0, 2]),
                  ("pod", 1, "b1", [1, 3])]
        f = gt.evaluate(self.nodes, self.topos, prefill, gangs, events)
        self.assertEqual((f["bestLink"], f["bestLinkGang"], f["bestLinkGangRate"]), (2, 3, 1.0))
        # Two crossing pairs where one would do: one member misses, together too.
        events[2:] = [("pod", 1, "b1", [0, 1]), ("pod", 1, "b1", [2, 3]), ("pod", 1, "b1", [4, 5])]
        f = gt.evaluate(self.nodes, self.topos, prefill, gangs, events)
        self.assertEqual((f["bestLinkGang"], f["byClass"]), (1, {"sys": 3}))

    def test_sys_is_a_hit_when_nothing_better_is_free(self):
        gangs = [{"name": "g", "size": 1, "gpus": 2}]
        f = gt.evaluate(self.nodes, self.topos, self.prefill, gangs, [("gang", 0), ("pod", 0, "b0", [0, 1])])
        self.assertEqual((f["bestLink"], f["byClass"]), (1, {"sys": 1}))

    def test_invalid_ids_fall_back_and_are_counted(self):
        gangs = [{"name": "g", "size": 2, "gpus": 2}]
        f = gt.evaluate(self.nodes, self.topos, self.prefill, gangs,
                        [("gang", 0), ("pod", 0, "a0", [4, 6]), ("pod", 0, "a0", [0])])
        self.assertEqual(f["idsInvalid"], 2)
        self.assertEqual(f["gpus"], 4)

    def test_stranded_start_end_created(self):
        # Start: a0 {0,1,2,3} none; a1 {0,2,4,5,6,7} none; b0, b1 {0,1}: 2 each.
        gangs = [{"name": "g", "size": 1, "gpus": 2}]
        f = gt.evaluate(self.nodes, self.topos, self.prefill, gangs, [("gang", 0), ("pod", 0, "a0", [0, 1])])
        self.assertEqual((f["strandedStart"], f["strandedEnd"], f["strandedCreated"]), (4, 6, 2))
        g = gt.evaluate(self.nodes, self.topos, self.prefill, gangs, [("gang", 0), ("pod", 0, "a0", [0, 2])])
        self.assertEqual(g["strandedCreated"], 0)

    def test_one_rack_when_feasible(self):
        gangs = [{"name": "in", "size": 2, "gpus": 2}, {"name": "split", "size": 2, "gpus": 2},
                 {"name": "wide", "size": 2, "gpus": 4}, {"name": "never", "size": 2, "gpus": 8}]
        events = [("gang", 0), ("pod", 0, "a0", [0, 2]), ("pod", 0, "a0", [1, 3]),  # rack r0
                  ("gang", 1), ("pod", 1, "a1", [0, 2]), ("pod", 1, "b0", [0, 1]),  # r0 could: split
                  ("gang", 2), ("pod", 2, "a1", [4, 5, 6, 7]),                      # one member only
                  ("gang", 3)]
        f = gt.evaluate(self.nodes, self.topos, self.prefill, gangs, events)
        self.assertEqual((f["gangsPlaced"], f["gangsPartial"]), (2, 1))
        # feasible: "in" (r0), "split" (a1 holds both); "wide": no rack has 4+4 left; "never": no.
        self.assertEqual((f["rackFeasible"], f["oneRackWhenFeasible"], f["oneRack"]), (2, 1, 1))
        self.assertEqual(f["oneRackRate"], 0.5)

    def test_live_events_order_and_passed_over_gangs(self):
        gangs = [{"name": "a", "size": 1, "gpus": 2}, {"name": "b", "size": 1, "gpus": 8},
                 {"name": "c", "size": 1, "gpus": 2}, {"name": "d", "size": 1, "gpus": 8}]
        binds = [{"gang": "a", "node": "a0", "ids": [0, 2], "gpus": 2},
                 {"gang": "c", "node": "a0", "ids": None, "gpus": 2}]
        self.assertEqual(gt.live_events(gangs, binds), [
            ("gang", 0), ("pod", 0, "a0", [0, 2], 2), ("gang", 1), ("gang", 2), ("pod", 2, "a0", None, 2),
            ("gang", 3)])

    def test_parse_ids(self):
        self.assertEqual(gt.parse_ids("3,1"), [1, 3])
        self.assertEqual(gt.parse_ids("0,2;4"), [0, 2, 4])
        self.assertIsNone(gt.parse_ids(None))
        self.assertIsNone(gt.parse_ids("a,b"))


class Uuids(unittest.TestCase):
    def test_mismatch_count(self):
        text = json.dumps({"v": 1, "gpus": [{"i": i, "uuid": f"GPU-{i}"} for i in range(2)],
                           "link": [["X", "NV1"], ["NV1", "X"]]})
        side = {"topologies": {"t0": text}, "nodes": {"n": {"topo": "t0"}}, "binds": [
            {"node": "n", "ids": [0, 1], "uuids": "GPU-0,GPU-1"},
            {"node": "n", "ids": [1], "uuids": "GPU-0"},
            {"node": "n", "ids": [0], "uuids": None},
            {"node": "n", "ids": [5], "uuids": "GPU-5"}]}
        self.assertEqual(gt.uuid_mismatches(side), 2)


class Plan(unittest.TestCase):
    def test_prefill_is_exactly_half_and_seeded(self):
        nodes = [{"name": f"n{i}", "rack": "r", "gpus": 8} for i in range(20)]
        p = gt.make_plan(nodes, 3)
        self.assertEqual(sum(len(v) for v in p["prefill"].values()), 80)
        self.assertEqual(p, gt.make_plan(nodes, 3))
        self.assertNotEqual(p["prefill"], gt.make_plan(nodes, 4)["prefill"])
        self.assertTrue(all(ids == sorted(set(ids)) and all(0 <= i < 8 for i in ids) for ids in p["prefill"].values()))
        self.assertGreaterEqual(p["demand"], round(0.8 * 80))
        self.assertLess(p["demand"] - 32, round(0.8 * 80))  # stops at the first gang past the target
        self.assertTrue(all(2 <= g["size"] <= 4 and g["gpus"] in (2, 4, 8) for g in p["gangs"]))

    def test_prefill_pod(self):
        pod = gt.prefill_pod("n3", [1, 4, 6])
        self.assertEqual(pod["spec"]["nodeName"], "n3")
        self.assertEqual(pod["spec"]["schedulerName"], "default-scheduler")
        self.assertEqual(pod["metadata"]["annotations"][gt.GPU_IDS], "1,4,6")
        self.assertEqual(gt.gpu_request(pod), 3)


class Targets(unittest.TestCase):
    def fig(self, muster, ff):
        base = {"bestLinkRate": 1.0, "bestLinkGangRate": 1.0, "oneRackRate": 1.0}
        return {"policies": {"muster": {**base, **muster}, "first-fit": {**base, **ff}}}

    def test_stranded_ratios(self):
        ff = {"strandedEnd": 100, "strandedCreated": 50}
        t = gt.targets(self.fig({"strandedEnd": 60, "strandedCreated": 10}, ff))
        self.assertEqual((t["muster"]["strandedEndRatio"], t["muster"]["strandedCreatedRatio"]), (0.6, 0.2))
        self.assertFalse(t["muster"]["strandedEndHalf"])
        self.assertTrue(t["muster"]["strandedCreatedHalf"])
        # muster removed stranded GPUs while first-fit made some: a pass with no ratio.
        t = gt.targets(self.fig({"strandedEnd": 40, "strandedCreated": -5}, ff))
        self.assertTrue(t["muster"]["strandedCreatedHalf"])
        t = gt.targets(self.fig({"strandedEnd": 40, "strandedCreated": 3, "bestLinkRate": 0.99},
                                {"strandedEnd": 100, "strandedCreated": 0}))
        self.assertFalse(t["muster"]["strandedCreatedHalf"])
        self.assertFalse(t["muster"]["bestLink100"])
        t = gt.targets(self.fig({"strandedEnd": 0, "strandedCreated": -2}, {"strandedEnd": 0, "strandedCreated": -2}))
        self.assertTrue(t["muster"]["strandedCreatedHalf"] and t["muster"]["strandedEndHalf"])


if __name__ == "__main__":
    unittest.main()
