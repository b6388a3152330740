"""The Python harness the e2e scenarios (e2e/scenarios/*.py) and the benches
(bench/*.py) share: stdlib only, no install step.

Modules, one concern each:
  cluster    the cluster's kube-apiserver over its admin certificate (Api),
             requests with retries, object creation, list-then-watch loops
  recording  what a run writes and reads back: JSON-lines logs with receipt
             times, tailing a growing log, atomic status files, waiting on a
             condition until a deadline
  figures    report arithmetic and layout: quantiles (each report's own
             definition, named), summaries, spread, Jain's index, ratios,
             value formatting and side-by-side text tables

How it is found: this directory's parent, e2e/scenarios, is on sys.path -
by itself for the scripts there (Python puts a script's directory first),
and through the one sys.path entry bench/*.py already add for placement.py.
So `from harness import figures` works from any working directory.
"""
