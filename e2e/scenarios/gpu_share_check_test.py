#!/usr/bin/env python3
"""Tests of gpu_share_check.py: each check fails on the violation it exists for."""
import unittest

import gpu_share_check as check


def half(name, node, ids, share="0.5", phase="Running"):
    return {"metadata": {"name": name, "namespace": "ns",
                         "annotations": {check.FRACTION: share, "muster.io/gpu-ids": ids,
                                         "muster.io/gpu-shares": f"{ids}:500:0"}},
            "spec": {"nodeName": node, "containers": [{}]}, "status": {"phase": phase}}


def vnode(name):
    return {"metadata": {"name": name, "annotations": {
        check.REGISTER: f"GPU-{name}-0,2,1000,NVIDIA-T4,true,hami-core:"}}}


def vpod(name, node, ids, memory=400, cores=30, **ann):
    a = {"volcano.sh/vgpu-ids-new": ids, "volcano.sh/devices-to-allocate": ids,
         "volcano.sh/vgpu-node": node, "volcano.sh/bind-phase": "allocating",
         "volcano.sh/vgpu-time": "1700000000", "volcano.sh/bind-time": "1700000000", **ann}
    limits = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": str(memory),
              "volcano.sh/vgpu-cores": str(cores)}
    return {"metadata": {"name": name, "namespace": "ns", "annotations": a},
            "spec": {"nodeName": node, "containers": [{"resources": {"limits": limits}}]},
            "status": {"phase": "Running"}}


class QuantityTest(unittest.TestCase):
    def test_the_api_servers_forms(self):
        self.assertEqual([check.quantity(q) for q in ("3000", "2k", "1Ki", 5)], [3000, 2000, 1024, 5])


class FractionsTest(unittest.TestCase):
    def test_cases(self):
        for name, pods, ok in [
            ("two halves on one GPU", [half("a", "n", "0"), half("b", "n", "0")], True),
            ("three halves on one GPU", [half("a", "n", "0"), half("b", "n", "0"), half("c", "n", "0")], False),
            ("a finished sharer frees its share",
             [half("a", "n", "0"), half("b", "n", "0"), half("c", "n", "0", phase="Succeeded")], True),
            ("a sharer without its GPU annotations", [half("a", "n", "")], False),
        ]:
            with self.subTest(name):
                out, got = check.fractions({"pods": {"items": pods}})
                self.assertEqual(got, ok, out)


class VgpuTest(unittest.TestCase):
    def test_cases(self):
        dev = "GPU-n-0,NVIDIA,400,30:"
        for name, pods, ok in [
            ("two within memory, cores and split", [vpod("a", "n", dev), vpod("b", "n", dev)], True),
            ("memory oversubscribed", [vpod("a", "n", "GPU-n-0,NVIDIA,600,30:", memory=600),
                                       vpod("b", "n", "GPU-n-0,NVIDIA,600,30:", memory=600)], False),
            ("cores oversubscribed", [vpod("a", "n", "GPU-n-0,NVIDIA,400,60:", cores=60),
                                      vpod("b", "n", "GPU-n-0,NVIDIA,400,60:", cores=60)], False),
            ("split count passed", [vpod(x, "n", dev) for x in "abc"], False),
            ("devices-to-allocate differs", [vpod("a", "n", dev, **{"volcano.sh/devices-to-allocate": ""})], False),
            ("the device is not what the pod asked", [vpod("a", "n", "GPU-n-0,NVIDIA,399,30:")], False),
            ("a GPU of another node", [vpod("a", "n", "GPU-m-0,NVIDIA,400,30:")], False),
            ("bind-phase not allocating", [vpod("a", "n", dev, **{"volcano.sh/bind-phase": "success"})], False),
        ]:
            with self.subTest(name):
                out, got = check.vgpu({"pods": {"items": pods}, "nodes": {"items": [vnode("n")]}})
                self.assertEqual(got, ok, out)


if __name__ == "__main__":
    unittest.main()
