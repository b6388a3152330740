#!/usr/bin/env python3
"""Unit tests for kueue/webhooks.py (ctest e2e_kueue_webhooks, label unit)."""
import base64
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webhooks  # noqa: E402


def hook(name, group, resource, path):
    return {"name": name, "clientConfig": {"service": {"name": "webhook-service", "namespace": "system",
                                                       "path": path}},
            "rules": [{"apiGroups": [group], "apiVersions": ["v1"], "operations": ["CREATE"],
                       "resources": [resource]}]}


MUTATING = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "mutating-webhook-configuration"},
            "webhooks": [hook("mpod.kb.io", "", "pods", "/mutate--v1-pod"),
                         hook("mjob.kb.io", "batch", "jobs", "/mutate-batch-v1-job"),
                         hook("mworkload.kb.io", "kueue.x-k8s.io", "workloads",
                              "/mutate-kueue-x-k8s-io-v1beta2-workload"),
                         hook("mrayjob.kb.io", "ray.io", "rayjobs", "/mutate-ray-io-v1-rayjob"),
                         hook("mdeployment.kb.io", "apps", "deployments", "/mutate-apps-v1-deployment")]}
VALIDATING = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
              "metadata": {"name": "validating-webhook-configuration"},
              "webhooks": [hook("vpod.kb.io", "", "pods", "/validate--v1-pod")]}
CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


class RegistrationTest(unittest.TestCase):
    def registration(self):
        # kubectl create --dry-run=client -o json prints one object after the other.
        text = json.dumps(MUTATING, indent=1) + "\n" + json.dumps(VALIDATING, indent=1) + "\n"
        return webhooks.registration(webhooks.objects(text), 19443, CA)

    def test_keeps_only_the_kinds_the_comparison_uses(self):
        configs = self.registration()["items"]
        self.assertEqual([[h["name"] for h in c["webhooks"]] for c in configs],
                         [["mpod.kb.io", "mjob.kb.io", "mworkload.kb.io"], ["vpod.kb.io"]])

    def test_calls_kueue_on_loopback_trusting_the_harness_ca(self):
        pod = self.registration()["items"][0]["webhooks"][0]
        self.assertEqual(pod["clientConfig"], {"url": "https://127.0.0.1:19443/mutate--v1-pod",
                                               "caBundle": base64.b64encode(CA).decode()})

    def test_only_namespaces_of_the_kueue_side_pass_through_kueue(self):
        for config in self.registration()["items"]:
            for h in config["webhooks"]:
                with self.subTest(webhook=h["name"]):
                    self.assertEqual(h["namespaceSelector"], {"matchLabels": {"kueue-peer": "true"}})

    def test_names_cannot_clash_with_muster_webhooks(self):
        names = [c["metadata"]["name"] for c in self.registration()["items"]]
        self.assertEqual(names, ["kueue-mutating-webhook-configuration", "kueue-validating-webhook-configuration"])

    def test_reads_a_list_as_well(self):
        listed = {"apiVersion": "v1", "kind": "List", "items": [MUTATING, VALIDATING]}
        self.assertEqual(len(webhooks.objects(json.dumps(listed))), 2)


if __name__ == "__main__":
    unittest.main()
