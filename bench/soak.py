#!/usr/bin/env python3
"""The soak driver (bench/soak.sh runs it on a running cluster; stdlib only).

  soak.py run CLUSTER_DIR --seed N --minutes M --out DIR
          [--report-every S] [--check-every S] [--grace S] [--warmup S]

One thread, one loop, for M minutes of seeded churn in namespace `soak`:
  every --tick (1 s) one action picked by the seeded rng (soak_figures.ACTIONS):
    gang   a PodGroup (minMember = pods) + its pods, gated (muster.io/gang),
           schedulerName volcano, 2-8 pods x 1-8 GPUs, run 10-60 s (kwok's
           muster.io/run-seconds), in one of the soak queues
    pod    a plain volcano pod (no PodGroup), 0-4 GPUs, run 5-60 s
    job    a Volcano Job (batch.volcano.sh/v1alpha1; the reconciler makes its
           PodGroup and pods): one or two tasks, 1-5 pods, a third flaky (every
           pod exits 1; PodFailed -> RestartJob, maxRetry 2, then Failed)
    queue  a soak queue's spec.weight set to 1-8
    node   add a kwok Node (a copy of the cluster's first) or drain one added
           before (cordon, wait until no pod is bound to it, delete)
    idle   nothing
  creations are skipped while the live load is above --max-gpus GPUs or
  --max-pods pods (the host has 2 cores and runs the control plane too);
  every --clean-every (5 s) finished things are deleted: plain pods once
  finished, gangs once every pod finished, Jobs once Completed/Failed/Aborted
  (the garbage collector takes their pods and PodGroup); anything alive
  longer than --stuck (600 s) is deleted too and counted as stuck.
  every --check-every (10 s): the invariants (soak_figures' docstring) over
  lists of every pod, Node, PodGroup and Job, both muster processes alive
  with the PIDs and start times of the state file's `proc` lines, their
  /healthz answering; a sample of each process's VmRSS, open fds and Threads
  (/proc), the extender's muster_extender_cache_objects and the reconciler's
  muster_reconciler_jobs. Every --report-every (300 s) a report line.
After M minutes: no more creations; cleaning goes on until namespace soak
is empty and the added nodes are gone (at most --drain 240 s), then a last
check, and the extender's cache must be back to its size at the start
(pods, podgroups, nodes) and the reconciler's Jobs gauge at 0.
Verdict: flat (soak_figures.flat_verdict: the last sample under churn vs
the one at --warmup, default 10 min, or a third of the run when shorter)
and no violation; exit 1 otherwise. Writes OUT/samples.jsonl (every
sample), OUT/violations.txt and OUT/summary.json.
"""

import argparse
import json
import os
import sys
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e", "scenarios"))
sys.path.insert(0, HERE)
from harness import cluster  # noqa: E402  e2e/scenarios/harness
from placement import fake_gpu_pod_spec  # noqa: E402
import gang_workload as gw  # noqa: E402  e2e/scenarios/gang_workload.py
from reconciler_figures import parse_prom  # noqa: E402
import soak_figures as sf  # noqa: E402

NS = "soak"
QUEUES = ("soak-a", "soak-b", "soak-c")
PG_API = "/apis/scheduling.volcano.sh/v1beta1"
JOB_API = "/apis/batch.volcano.sh/v1alpha1"
MUSTER = ("extender", "reconciler")


def log(msg):
    print(msg, flush=True)


class Soak:
    def __init__(self, args):
        self.args = args
        self.api = cluster.Api(args.cluster_dir)
        self.conn = None
        with open(os.path.join(args.cluster_dir, "state")) as f:
            self.ports, procs = sf.parse_state(f.read())
        self.procs = {p: procs[p] for p in MUSTER if p in procs}
        with open(os.path.join(args.cluster_dir, "nodes.json")) as f:
            self.node_template = json.load(f)["items"][0]
        self.rng = sf.new_rng(args.seed)
        self.t0 = time.monotonic()
        self.n = 0
        self.churned = {"gang_pods": 0, "plain_pods": 0, "gangs": 0, "jobs": 0, "job_pods": 0, "flaky_jobs": 0,
                        "weights": 0,
                        "nodes_added": 0, "nodes_removed": 0, "stuck": 0, "deleted_pods": 0}
        self.gangs = {}      # name -> {"pods": [...], "gpus": n, "born": t}
        self.plain = {}      # name -> {"gpus": n, "born": t}
        self.jobs = {}       # name -> {"pods": n, "gpus": n, "born": t}
        self.extras = {}     # node name -> None (serving) or drain start time
        self.job_groups = {}  # Job name -> its PodGroups (ownerReferences), from the last check
        self.deleting = set()  # gang keys (ns/pg) being deleted: exempt from the partial check
        self.watch = sf.GangWatch(args.grace)
        self.violations = []
        self.samples = []
        self.pods = []
        self.samples_f = open(os.path.join(args.out, "samples.jsonl"), "w")
        self.errors = 0

    # --- API ---------------------------------------------------------------------

    def call(self, method, path, body=None, ctype="application/json", ok=(200, 201, 202, 404, 409)):
        data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
        self.conn, status, text = cluster.send(self.api, self.conn, method, path, data, content_type=ctype,
                                               timeout=60)
        if status not in ok:
            self.errors += 1
            log(f"  api: {method} {path}: HTTP {status} {text[:200]!r}")
        return status, text

    def list(self, path):
        status, text = self.call("GET", path, ok=(200,))
        if status != 200:
            raise RuntimeError(f"GET {path}: HTTP {status}")
        return json.loads(text)["items"]

    def delete(self, path):
        return self.call("DELETE", path, {"kind": "DeleteOptions", "apiVersion": "v1",
                                          "propagationPolicy": "Background", "gracePeriodSeconds": 0})[0]

    def now(self):
        return time.monotonic() - self.t0

    # --- setup ---------------------------------------------------------------------

    def setup(self):
        self.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": NS}})
        for _ in range(100):  # pods need the default ServiceAccount
            if self.call("GET", f"/api/v1/namespaces/{NS}/serviceaccounts/default", ok=(200, 404))[0] == 200:
                break
            time.sleep(0.2)
        for q in QUEUES:
            self.call("POST", f"{PG_API}/queues", {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                                                   "metadata": {"name": q},
                                                   "spec": {"weight": 1 + QUEUES.index(q), "reclaimable": True}})
            self.call("PATCH", f"{PG_API}/queues/{q}/status", {"status": {"state": "Open"}},
                      "application/merge-patch+json")

    # --- churn ---------------------------------------------------------------------

    def load(self):
        gpus = sum(g["gpus"] for g in self.gangs.values()) + sum(p["gpus"] for p in self.plain.values()) + \
            sum(j["gpus"] for j in self.jobs.values())
        pods = sum(len(g["pods"]) for g in self.gangs.values()) + len(self.plain) + \
            sum(j["pods"] for j in self.jobs.values())
        return gpus, pods

    def act(self, creating=True):
        action = sf.pick_action(self.rng)
        gpus, pods = self.load()
        full = gpus >= self.args.max_gpus or pods >= self.args.max_pods
        self.n += 1
        name = f"{action[0]}{self.n:05d}"
        if action == "gang":
            size, per, run = sf.gang_shape(self.rng)
            queue = self.rng.choice(QUEUES)
            if not creating or full:
                return
            pg = gw.pod_group(name, size, queue=queue)
            self.call("POST", f"{PG_API}/namespaces/{NS}/podgroups", pg)
            names = []
            for i in range(size):
                pod = gw.gang_pod(name, i, per, size, "volcano", gated=True)
                pod["metadata"]["annotations"][sf.RUN] = str(run)
                self.call("POST", f"/api/v1/namespaces/{NS}/pods", pod)
                names.append(pod["metadata"]["name"])
            self.gangs[name] = {"pods": names, "gpus": size * per, "born": self.now()}
            self.churned["gangs"] += 1
            self.churned["gang_pods"] += size
        elif action == "pod":
            per, run = self.rng.choice((0, 1, 1, 2, 4)), self.rng.randint(5, 60)
            if not creating or full:
                return
            self.call("POST", f"/api/v1/namespaces/{NS}/pods", sf.plain_pod(name, per, run, fake_gpu_pod_spec))
            self.plain[name] = {"gpus": per, "born": self.now()}
            self.churned["plain_pods"] += 1
        elif action == "job":
            tasks, per, run, flaky = sf.job_shape(self.rng)
            queue = self.rng.choice(QUEUES)
            if not creating or full:
                return
            self.call("POST", f"{JOB_API}/namespaces/{NS}/jobs",
                      sf.volcano_job(name, queue, tasks, per, run, flaky, fake_gpu_pod_spec))
            size = sum(r for _, r in tasks)
            self.jobs[name] = {"pods": size, "gpus": size * per, "born": self.now()}
            self.churned["jobs"] += 1
            self.churned["job_pods"] += size
            self.churned["flaky_jobs"] += int(flaky)
        elif action == "queue":
            q, w = self.rng.choice(QUEUES), self.rng.randint(1, 8)
            self.call("PATCH", f"{PG_API}/queues/{q}", {"spec": {"weight": w}}, "application/merge-patch+json")
            self.churned["weights"] += 1
        elif action == "node":
            serving = sorted(n for n, d in self.extras.items() if d is None)
            add = self.rng.random() < (0.9 if len(serving) < 2 else 0.1 if len(serving) >= 5 else 0.5)
            if add and creating:
                node = f"soak-x-{self.n:05d}"
                self.call("POST", "/api/v1/nodes", sf.extra_node(self.node_template, node))
                self.extras[node] = None
                self.churned["nodes_added"] += 1
            elif serving:
                self.cordon(self.rng.choice(serving))

    def cordon(self, node):
        self.call("PATCH", f"/api/v1/nodes/{node}", {"spec": {"unschedulable": True}},
                  "application/merge-patch+json")
        self.extras[node] = self.now()

    # --- cleaning ------------------------------------------------------------------

    def clean(self, pods, jobs, draining=False):
        """Deletes what finished (and what is stuck); `pods`/`jobs`: lists of
        namespace soak."""
        now = self.now()
        by_name = {p["metadata"]["name"]: p for p in pods}
        for name, info in list(self.plain.items()):
            pod = by_name.get(name)
            stuck = now - info["born"] > self.args.stuck
            if pod is None or pod["status"].get("phase") in sf.TERMINAL or stuck:
                self.churned["stuck"] += int(stuck and pod is not None
                                             and pod["status"].get("phase") not in sf.TERMINAL)
                self.delete(f"/api/v1/namespaces/{NS}/pods/{name}")
                self.churned["deleted_pods"] += 1
                del self.plain[name]
        for name, info in list(self.gangs.items()):
            mine = [by_name.get(p) for p in info["pods"]]
            done = all(p is None or p["status"].get("phase") in sf.TERMINAL for p in mine)
            stuck = now - info["born"] > self.args.stuck
            if done or stuck:
                self.churned["stuck"] += int(stuck and not done)
                self.deleting.add(f"{NS}/{name}")
                for p in info["pods"]:
                    self.delete(f"/api/v1/namespaces/{NS}/pods/{p}")
                    self.churned["deleted_pods"] += 1
                self.delete(f"{PG_API}/namespaces/{NS}/podgroups/{name}")
                del self.gangs[name]
        live_jobs = {j["metadata"]["name"]: j for j in jobs}
        for name, info in list(self.jobs.items()):
            job = live_jobs.get(name)
            phase = ((job or {}).get("status") or {}).get("state", {}).get("phase")
            stuck = now - info["born"] > self.args.stuck
            if job is None or phase in sf.JOB_DONE or stuck:
                self.churned["stuck"] += int(stuck and job is not None and phase not in sf.JOB_DONE)
                if job is not None:
                    self.delete(f"{JOB_API}/namespaces/{NS}/jobs/{name}")
                    for pg in self.job_groups.get(name, ()):
                        self.deleting.add(f"{NS}/{pg}")
                del self.jobs[name]
        # Drained nodes: gone once no pod is bound to them (or after 180 s).
        on_node = {}
        for p in self.pods:
            if sf.node_of(p):
                on_node[sf.node_of(p)] = on_node.get(sf.node_of(p), 0) + 1
        for node, since in list(self.extras.items()):
            if draining and since is None:
                self.cordon(node)
                continue
            if since is not None and (on_node.get(node, 0) == 0 or now - since > 180):
                self.delete(f"/api/v1/nodes/{node}")
                del self.extras[node]
                self.churned["nodes_removed"] += 1

    # --- checks and samples --------------------------------------------------------

    def proc_sample(self):
        out, dead = {}, []
        for name, (pid, start) in self.procs.items():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if sf.stat_starttime(f.read()) != start:
                        raise OSError("PID reused")
                with open(f"/proc/{pid}/status") as f:
                    rss, threads = sf.parse_status(f.read())
                fds = len(os.listdir(f"/proc/{pid}/fd"))
            except OSError as e:
                dead.append(f"{name} (pid {pid}) is gone: {e}")
                continue
            out[name] = {"rss_kb": rss, "fds": fds, "threads": threads}
        return out, dead

    def http(self, port, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()

    def check(self, draining=False):
        """Lists everything, cleans, checks the invariants and samples;
        returns the sample."""
        now = self.now()
        pods = self.list("/api/v1/pods?limit=100000")
        nodes = self.list("/api/v1/nodes?limit=100000")
        pgs = self.list(f"{PG_API}/podgroups?limit=100000")
        jobs = self.list(f"{JOB_API}/jobs?limit=100000")
        self.pods = pods
        self.job_groups = {}
        for pg in pgs:
            for ref in pg["metadata"].get("ownerReferences") or []:
                if ref.get("kind") == "Job":
                    self.job_groups.setdefault(ref["name"], []).append(pg["metadata"]["name"])
        found = []
        found += sf.gpu_overcommit(nodes, pods)
        found += sf.job_duplicates(jobs, pods)
        job_names = {j["metadata"]["name"] for j in jobs if j["metadata"].get("namespace") == NS
                     and not j["metadata"].get("deletionTimestamp")}
        exempt = set(self.deleting)
        for name, groups in self.job_groups.items():
            if name not in job_names:
                exempt.update(f"{NS}/{g}" for g in groups)
        counts = sf.gang_counts(pgs, pods)
        found += self.watch.observe(now, counts, exempt)
        self.deleting &= set(counts)  # forget gangs that are gone
        procs, dead = self.proc_sample()
        found += dead
        for p in MUSTER:
            try:
                status, _ = self.http(self.ports[p], "/healthz")
                if status != 200:
                    found.append(f"{p} /healthz: HTTP {status}")
            except (OSError, KeyError) as e:
                found.append(f"{p} /healthz: {e}")
        cache, phases = {}, {}
        try:
            cache = sf.cache_sizes(parse_prom(self.http(self.ports["extender"], "/metrics")[1]))
            phases = sf.job_phases(parse_prom(self.http(self.ports["reconciler"], "/metrics")[1]))
        except (OSError, KeyError) as e:
            log(f"  metrics: {e}")
        for v in found:
            log(f"  VIOLATION at {sf.clock(now)}: {v}")
            self.violations.append(f"{sf.clock(now)} {v}")
        soak_pods = [p for p in pods if p["metadata"].get("namespace") == NS]
        self.clean(soak_pods, [j for j in jobs if j["metadata"].get("namespace") == NS], draining)
        sample = {"t": round(now, 1), "procs": procs, "cache": cache, "jobs": phases,
                  "soak_pods": len(soak_pods), "nodes": len(nodes), "load": self.load(),
                  "partial_longest": round(self.watch.longest, 1), "violations": len(self.violations)}
        self.samples_f.write(json.dumps(sample, sort_keys=True) + "\n")
        self.samples_f.flush()
        return sample

    # --- the run -------------------------------------------------------------------

    def run(self):
        a = self.args
        self.setup()
        base = self.check()
        self.samples.append(base)
        log(sf.report_line(base, self.churned, len(self.violations)) + "  (start)")
        end = a.minutes * 60
        next_tick = next_clean = next_check = next_report = 0.0
        next_report = a.report_every
        while self.now() < end:
            t = self.now()
            if t >= next_tick:
                self.act()
                next_tick = t + a.tick
            if t >= next_check:
                s = self.check()
                self.samples.append(s)
                next_check, next_clean = t + a.check_every, t + a.clean_every
            elif t >= next_clean:  # cleaning alone needs only namespace soak
                self.pods = self.list("/api/v1/pods?limit=100000")
                self.clean([p for p in self.pods if p["metadata"].get("namespace") == NS],
                           self.list(f"{JOB_API}/namespaces/{NS}/jobs"))
                next_clean = t + a.clean_every
            if t >= next_report:
                log(sf.report_line(self.samples[-1], self.churned, len(self.violations)))
                next_report += a.report_every
            time.sleep(max(0.0, min(next_tick, next_check, next_clean) - self.now()))
        last_churn = self.check()
        self.samples.append(last_churn)
        log(sf.report_line(last_churn, self.churned, len(self.violations)) + "  (end of churn)")
        # Drain: delete everything as it finishes; the added nodes go.
        drained_at = None
        deadline = self.now() + a.drain
        while self.now() < deadline:
            s = self.check(draining=True)
            if not (self.gangs or self.plain or self.jobs or self.extras) and s["soak_pods"] == 0 and \
                    s["cache"].get("pods", -1) == base["cache"].get("pods") and \
                    s["cache"].get("podgroups", -1) == base["cache"].get("podgroups") and \
                    s["cache"].get("nodes", -1) == base["cache"].get("nodes") and not s["jobs"]:
                drained_at = self.now()
                break
            time.sleep(5)
        final = self.check()
        log(sf.report_line(final, self.churned, len(self.violations)) + "  (drained)")
        if drained_at is None:
            v = (f"not drained in {a.drain} s: soak pods {final['soak_pods']}, cache {final['cache']} "
                 f"(start {base['cache']}), reconciler jobs {final['jobs']}, tracked gangs {len(self.gangs)} "
                 f"pods {len(self.plain)} jobs {len(self.jobs)} extra nodes {len(self.extras)}")
            log(f"  VIOLATION at end: {v}")
            self.violations.append(f"end {v}")
        else:
            log(f"drained in {drained_at - last_churn['t']:.0f} s: cache back to {final['cache']}")
        warm = a.warmup if a.warmup is not None else min(600, end / 3)
        flat, lines = sf.flat_verdict(self.samples, warm)
        log(f"flat? (last sample under churn vs the one at {sf.clock(warm)})")
        for line in lines:
            log("  " + line)
        for p in MUSTER:
            slope = sf.slope_mib_per_hour(self.samples, p, warm)
            if slope is not None:
                log(f"  {p}: RSS trend after warm-up {slope:+.1f} MiB/h (least squares, informational)")
        start, last = self.samples[0]["procs"], final["procs"]
        for p in MUSTER:
            if p in start and p in last:
                log(f"  {p}: start RSS {start[p]['rss_kb'] / 1024:.1f} MiB fds {start[p]['fds']} -> after drain "
                    f"RSS {last[p]['rss_kb'] / 1024:.1f} MiB fds {last[p]['fds']}")
        log(f"longest partly bound gang seen: {self.watch.longest:.0f} s (grace {a.grace:.0f} s); "
            f"API errors {self.errors}")
        log("churned: " + " ".join(f"{k}={v}" for k, v in sorted(self.churned.items())))
        with open(os.path.join(a.out, "violations.txt"), "w") as f:
            f.writelines(v + "\n" for v in self.violations)
        summary = {"seed": a.seed, "minutes": a.minutes, "flat": flat, "flat_lines": lines,
                   "violations": self.violations, "churned": self.churned, "start": self.samples[0],
                   "warm": sf.sample_at(self.samples, warm), "last_churn": last_churn, "final": final}
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
        ok = flat and not self.violations
        log(f"VERDICT: {'PASS' if ok else 'FAIL'}: RSS/fds {'flat' if flat else 'NOT flat'}, "
            f"{len(self.violations)} invariant violations")
        return 0 if ok else 1


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("cluster_dir")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--minutes", type=float, default=30)
    r.add_argument("--out", required=True)
    r.add_argument("--report-every", type=float, default=None, help="seconds (default 300; 60 below 15 min)")
    r.add_argument("--check-every", type=float, default=10)
    r.add_argument("--clean-every", type=float, default=5)
    r.add_argument("--tick", type=float, default=1.0)
    r.add_argument("--grace", type=float, default=60)
    r.add_argument("--warmup", type=float, default=None, help="seconds (default 600, or a third of the run)")
    r.add_argument("--stuck", type=float, default=600)
    r.add_argument("--drain", type=float, default=240)
    r.add_argument("--max-gpus", type=int, default=480)
    r.add_argument("--max-pods", type=int, default=250)
    args = p.parse_args(argv[1:])
    if args.report_every is None:
        args.report_every = 300 if args.minutes >= 15 else 60
    os.makedirs(args.out, exist_ok=True)
    return Soak(args).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
