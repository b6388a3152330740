#!/usr/bin/env python3
"""Unit tests for cluster_helper.py (ctest e2e_cluster_helper, label unit)."""
import io
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_helper as h  # noqa: E402

GOOD = """\
# comment
name: t   # trailing comment
defaults:
  capacity:
    cpu: "8"
    memory: 64Gi
    pods: '110'
    nvidia.com/gpu: "4"
  labels:
    zone: "z#1"
  annotations:
    kwok.x-k8s.io/node: fake
groups:
  a:
    count: 2
    namePrefix: n-a-
    labels:
      network.muster.io/rack: rack-a
  b:
    count: 1
    capacity:
      nvidia.com/gpu: "8"
    allocatable:
      nvidia.com/gpu: "7"
"""


class ParseTest(unittest.TestCase):
    def test_nested_maps_quotes_comments(self):
        d = h.parse_subset(GOOD)
        self.assertEqual(d["name"], "t")
        self.assertEqual(d["defaults"]["capacity"]["pods"], "110")
        self.assertEqual(d["defaults"]["labels"]["zone"], "z#1")
        self.assertEqual(d["groups"]["b"]["allocatable"], {"nvidia.com/gpu": "7"})

    def test_rejects_what_it_does_not_support(self):
        for text, why in [("a:\n  - x\n", "lists"), ("a: [1]\n", "plain or quoted"),
                          ("a:\n  b: 1\n   c: 2\n", "indentation"), ("a: 1\na: 2\n", "duplicate"),
                          ("a: 'x\n", "unterminated"), ("a: 1\n---\nb: 2\n", "one document"),
                          ("a:\n\tb: 1\n", "tabs"), ("just text\n", "key: value")]:
            with self.assertRaises(h.ParseError, msg=text) as cm:
                h.parse_subset(text)
            self.assertIn(why, str(cm.exception))


class BuildNodesTest(unittest.TestCase):
    def test_groups_defaults_and_labels(self):
        nodes = h.build_nodes(h.parse_subset(GOOD))
        self.assertEqual([n["metadata"]["name"] for n in nodes], ["n-a-0", "n-a-1", "b-0"])
        a0 = nodes[0]
        self.assertEqual(a0["metadata"]["labels"]["kubernetes.io/hostname"], "n-a-0")
        self.assertEqual(a0["metadata"]["labels"]["network.muster.io/rack"], "rack-a")
        self.assertEqual(a0["metadata"]["annotations"], {"kwok.x-k8s.io/node": "fake"})
        self.assertEqual(a0["status"]["allocatable"], a0["status"]["capacity"])
        b0 = nodes[2]
        self.assertEqual(b0["status"]["capacity"]["nvidia.com/gpu"], "8")
        self.assertEqual(b0["status"]["allocatable"]["nvidia.com/gpu"], "7")
        self.assertEqual(b0["status"]["allocatable"]["cpu"], "8")

    def test_requires_kwok_annotation_and_basic_resources(self):
        spec = h.parse_subset(GOOD.replace("kwok.x-k8s.io/node: fake", "other: x"))
        with self.assertRaisesRegex(h.ParseError, "kwok.x-k8s.io/node"):
            h.build_nodes(spec)
        spec = h.parse_subset(GOOD.replace("    memory: 64Gi\n", ""))
        with self.assertRaisesRegex(h.ParseError, "memory"):
            h.build_nodes(spec)
        spec = h.parse_subset(GOOD.replace("namePrefix: n-a-", "namePrefix: N_A"))
        with self.assertRaisesRegex(h.ParseError, "DNS-1123"):
            h.build_nodes(spec)

    def test_repository_cluster_files(self):
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clusters")
        want = {"gpu-4.yaml": (4, 32), "gpu-16.yaml": (16, 128), "kwok-5000.yaml": (5000, 40000)}
        for name, (count, gpus) in want.items():
            with open(os.path.join(root, name)) as f:
                nodes = h.build_nodes(h.parse_subset(f.read(), name), name)
            self.assertEqual(len(nodes), count, name)
            self.assertEqual(sum(int(n["status"]["allocatable"]["nvidia.com/gpu"]) for n in nodes), gpus)
            racks = {n["metadata"]["labels"]["network.muster.io/rack"] for n in nodes}
            if count < 100:
                self.assertEqual(racks, {"rack-a", "rack-b"}, name)
            else:
                self.assertEqual(len(racks), count // 125, name)


class SplitTest(unittest.TestCase):
    def test_every_node_lands_in_exactly_one_shard(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "nodes.json")
            with open(src, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List",
                           "items": [{"metadata": {"name": f"n{i}"}} for i in range(10)]}, f)
            shards = h.split_list(src, 4, os.path.join(d, "part"))
            self.assertEqual(len(shards), 4)
            names = []
            for path in shards:
                with open(path) as f:
                    doc = json.load(f)
                self.assertEqual(doc["kind"], "List")
                names += [i["metadata"]["name"] for i in doc["items"]]
            self.assertEqual(sorted(names), sorted(f"n{i}" for i in range(10)))
            # More shards than items: no empty files.
            self.assertEqual(len(h.split_list(src, 20, os.path.join(d, "tiny"))), 10)


class ReadyTest(unittest.TestCase):
    def node(self, name, ready="True", taints=(), unschedulable=False):
        return {"metadata": {"name": name},
                "spec": {"taints": [{"key": t, "effect": "NoSchedule"} for t in taints],
                         "unschedulable": unschedulable},
                "status": {"conditions": [{"type": "Ready", "status": ready}]}}

    def test_ready_and_schedulable(self):
        doc = {"items": [self.node("a"), self.node("b", taints=["node.kubernetes.io/not-ready"]),
                         self.node("c", ready="False"), self.node("d", unschedulable=True)]}
        ok, msg = h.nodes_ready(1, doc)
        self.assertTrue(ok, msg)
        ok, msg = h.nodes_ready(2, doc)
        self.assertFalse(ok)
        self.assertIn("1/2", msg)
        self.assertIn("tainted node.kubernetes.io/not-ready", msg)

    def test_free_ports_distinct_and_below_ephemeral(self):
        ports = h.free_ports(8)
        self.assertEqual(len(set(ports)), 8)
        self.assertTrue(all(1024 < p < 65536 for p in ports))

    def test_cli_nodes_ready(self):
        sys.stdin = io.StringIO(json.dumps({"items": [self.node("a")]}))
        try:
            self.assertEqual(h.main(["x", "nodes-ready", "1"]), 0)
        finally:
            sys.stdin = sys.__stdin__


if __name__ == "__main__":
    unittest.main()
