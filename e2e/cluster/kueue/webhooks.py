#!/usr/bin/env python3
"""Kueue's webhook registration for the loopback harness (standard library only).

Usage: webhooks.py PORT CA_FILE < manifests.json > registration.json

Reads Kueue's config/components/webhook/manifests.yaml as JSON (kubectl
create --dry-run=client -o json: one object after the other - a Mutating-
and a ValidatingWebhookConfiguration) and writes the registration the
harness applies, a v1 List:
  - only the webhooks of the kinds the comparison uses - pods, batch Jobs and
    Kueue's own objects; the other integrations are off in the harness's
    config (Kueue serves them no-ops anyway);
  - clientConfig: https://127.0.0.1:PORT<path> with the harness's CA (the
    in-cluster Service route cannot reach a process on loopback);
  - a namespaceSelector kueue-peer=true on every webhook, so pods of muster's
    and the other sides' namespaces never pass through Kueue, and a stopped
    Kueue never blocks them (cluster-scoped objects are not filtered by it);
  - names prefixed kueue- so they cannot clash with muster's own.
"""
import base64
import json
import sys

KEPT_GROUPS = {"", "batch", "kueue.x-k8s.io"}
PEER_SELECTOR = {"matchLabels": {"kueue-peer": "true"}}


def kept(hook):
    groups = {g for rule in hook.get("rules", []) for g in rule.get("apiGroups", [])}
    return bool(groups) and groups <= KEPT_GROUPS


def objects(text):
    """The JSON values of TEXT, one after the other (a List's items too)."""
    decoder, at, out = json.JSONDecoder(), 0, []
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return out
        value, at = decoder.raw_decode(text, at)
        out.extend(value.get("items", [value]))


def registration(configs, port, ca_pem):
    ca = base64.b64encode(ca_pem).decode()
    items = []
    for config in configs:
        hooks = [h for h in config.get("webhooks", []) if kept(h)]
        for hook in hooks:
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca}
            hook["namespaceSelector"] = PEER_SELECTOR
        config["webhooks"] = hooks
        config["metadata"] = {"name": "kueue-" + config["metadata"]["name"]}
        items.append(config)
    return {"apiVersion": "v1", "kind": "List", "items": items}


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[2], "rb") as f:
        ca_pem = f.read()
    json.dump(registration(objects(sys.stdin.read()), int(argv[1]), ca_pem), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
