#!/usr/bin/env python3
"""Checks for the Grafana dashboards in this folder, without Grafana.

  check.py lint DIR
      Structural checks of every DIR/*.json: JSON parses; uid muster-<file name>; a
      current schemaVersion; a datasource variable (type datasource, prometheus) that
      every panel and every target uses; a namespace variable; unique panel ids and
      titles; gridPos inside the 24-column grid, panels not overlapping; a unit, a
      thresholds object and a description on every panel; every muster_* selector
      filtered by namespace=~"$namespace"; range vectors on Grafana's interval
      variables; nothing that can never come back empty (`vector(`).

  check.py query --prometheus URL --namespace NS --start T --end T [--save F] DIR
      Evaluates every target of every dashboard over [start, end] (unix seconds)
      through /api/v1/query_range, with the variables substituted as Grafana would
      ($namespace, $__rate_interval, $__interval, $__range, ...). Prints a table of
      panels and series counts; exits 1 listing `dashboard / panel / refId` for every
      query with no data (no series, or only NaN samples). --save writes the results
      for `render`.

  check.py render --results F --out DIR
      One PNG per dashboard (needs matplotlib): a grid of subplots, one per panel,
      a line per series, the panel's title and unit, threshold steps drawn when they
      fall inside the plotted range.

Stdlib only, except matplotlib for `render` (imported there).
"""

import argparse
import json
import math
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

MIN_SCHEMA_VERSION = 36  # Grafana 9.3+; the dashboards are written for 39 (Grafana 10.x/11.x)
GRID_COLUMNS = 24
DATASOURCE_VAR = "datasource"
NAMESPACE_VAR = "namespace"
NAMESPACE_MATCHER = 'namespace=~"$namespace"'
# Grafana's built-in interval variables a range vector may use.
RANGE_VARIABLES = {"$__rate_interval", "$__interval", "$__range"}
DATASOURCE_REFS = {"${datasource}", "$datasource"}

# ---------------------------------------------------------------------------
# Loading


def load_dashboards(directory):
    """[(path, dashboard or None, error or None)] for every *.json in directory, sorted."""
    out = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            out.append((path, json.loads(path.read_text()), None))
        except (OSError, json.JSONDecodeError) as e:
            out.append((path, None, f"does not parse: {e}"))
    return out


def panels_of(dashboard):
    """Every panel that shows data (rows' nested panels included, rows themselves not)."""
    out = []
    for p in dashboard.get("panels", []):
        if p.get("type") == "row":
            out.extend(p.get("panels", []))
        else:
            out.append(p)
    return out


def defaults_of(panel):
    """The panel's fieldConfig.defaults (unit, thresholds)."""
    return panel.get("fieldConfig", {}).get("defaults", {})


def variables_of(dashboard):
    return {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}


# ---------------------------------------------------------------------------
# Lint

METRIC_SELECTOR = re.compile(r"\b(muster_[a-zA-Z0-9_]+)\s*(\{[^}]*\})?")
RANGE_VECTOR = re.compile(r"\[([^\]]*)\]")


def expr_problems(expr):
    """What is wrong with one PromQL expression as a dashboard query."""
    bad = []
    if not expr.strip():
        return ["empty expr"]
    for m in METRIC_SELECTOR.finditer(expr):
        if NAMESPACE_MATCHER not in (m.group(2) or ""):
            bad.append(f"{m.group(1)} is not filtered by {NAMESPACE_MATCHER}")
    if not METRIC_SELECTOR.search(expr):
        bad.append("queries no muster_* metric")
    for m in RANGE_VECTOR.finditer(expr):
        window = m.group(1).split(":")[0].strip()
        if window not in RANGE_VARIABLES:
            bad.append(f"range [{m.group(1)}] is not one of {sorted(RANGE_VARIABLES)}")
    # `or vector(0)` and friends turn "no data" into a flat zero: a panel
    # must be able to come back empty when the metric is missing.
    if re.search(r"\bvector\s*\(", expr):
        bad.append("uses vector(): the panel could never come back empty")
    return bad


def datasource_uses_variable(ds):
    if isinstance(ds, str):
        return ds in DATASOURCE_REFS
    return isinstance(ds, dict) and ds.get("uid") in DATASOURCE_REFS


def lint_variables(dashboard):
    bad = []
    variables = variables_of(dashboard)
    ds = variables.get(DATASOURCE_VAR)
    if ds is None:
        bad.append(f"no '{DATASOURCE_VAR}' variable")
    elif ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        bad.append(f"variable '{DATASOURCE_VAR}' is not of type datasource for prometheus")
    ns = variables.get(NAMESPACE_VAR)
    if ns is None:
        bad.append(f"no '{NAMESPACE_VAR}' variable")
    else:
        query = ns.get("query")
        text = query.get("query", "") if isinstance(query, dict) else str(query or "")
        if ns.get("type") != "query" or not re.match(r"label_values\(muster_\w+.*,\s*namespace\)",
                                                     text):
            bad.append(f"variable '{NAMESPACE_VAR}' is not label_values(muster_..., namespace)")
        if not datasource_uses_variable(ns.get("datasource")):
            bad.append(f"variable '{NAMESPACE_VAR}' does not query ${{{DATASOURCE_VAR}}}")
    for name, v in variables.items():
        if v.get("type") == "query" and not datasource_uses_variable(v.get("datasource")):
            bad.append(f"variable '{name}' does not query ${{{DATASOURCE_VAR}}}")
    return bad


def lint_panel(panel):
    bad = []
    if not panel.get("title"):
        bad.append("no title")
    if not panel.get("description"):
        bad.append("no description")
    if not datasource_uses_variable(panel.get("datasource")):
        bad.append(f"datasource is not ${{{DATASOURCE_VAR}}}")
    defaults = defaults_of(panel)
    if not defaults.get("unit"):
        bad.append("no fieldConfig.defaults.unit")
    steps = defaults.get("thresholds", {}).get("steps")
    if not steps or steps[0].get("value") is not None:
        bad.append("no fieldConfig.defaults.thresholds (steps, the first with value null)")
    targets = panel.get("targets") or []
    if not targets:
        bad.append("no targets")
    ref_ids = [t.get("refId") for t in targets]
    if len(set(ref_ids)) != len(ref_ids) or None in ref_ids:
        bad.append(f"refIds missing or repeated: {ref_ids}")
    for t in targets:
        if not datasource_uses_variable(t.get("datasource")):
            bad.append(f"target {t.get('refId')}: datasource is not ${{{DATASOURCE_VAR}}}")
        bad.extend(f"target {t.get('refId')}: {p}" for p in expr_problems(t.get("expr", "")))
    return bad


def grid_problems(panels):
    bad = []
    cells = {}
    for p in panels:
        g = p.get("gridPos") or {}
        name = f"panel '{p.get('title')}'"
        if not all(isinstance(g.get(k), int) for k in ("x", "y", "w", "h")):
            bad.append(f"{name}: gridPos needs integer x, y, w, h")
            continue
        if g["x"] < 0 or g["y"] < 0 or g["w"] < 1 or g["h"] < 1 or g["x"] + g["w"] > GRID_COLUMNS:
            bad.append(f"{name}: gridPos {g} outside the {GRID_COLUMNS}-column grid")
            continue
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                other = cells.setdefault((x, y), p.get("title"))
                if other != p.get("title"):
                    bad.append(f"{name}: overlaps panel '{other}'")
                    break
            else:
                continue
            break
    return bad


def lint_dashboard(path, dashboard):
    """Problems of one dashboard, each a line naming the panel when there is one."""
    bad = []
    want_uid = f"muster-{path.stem}"
    if dashboard.get("uid") != want_uid:
        bad.append(f"uid {dashboard.get('uid')!r}, want {want_uid!r}")
    if not dashboard.get("title"):
        bad.append("no title")
    version = dashboard.get("schemaVersion")
    if not isinstance(version, int) or version < MIN_SCHEMA_VERSION:
        bad.append(f"schemaVersion {version!r}, want an integer >= {MIN_SCHEMA_VERSION}")
    bad.extend(lint_variables(dashboard))
    panels = panels_of(dashboard)
    if not panels:
        bad.append("no panels")
    ids = [p.get("id") for p in dashboard.get("panels", [])] + [
        p.get("id") for r in dashboard.get("panels", []) if r.get("type") == "row"
        for p in r.get("panels", [])]
    for i in sorted({i for i in ids if ids.count(i) > 1}, key=str):
        bad.append(f"panel id {i} is used {ids.count(i)} times")
    if None in ids:
        bad.append("a panel has no id")
    titles = [p.get("title") for p in panels]
    for t in sorted({t for t in titles if titles.count(t) > 1}, key=str):
        bad.append(f"panel title {t!r} is used {titles.count(t)} times")
    for p in panels:
        bad.extend(f"panel '{p.get('title')}' (id {p.get('id')}): {x}" for x in lint_panel(p))
    bad.extend(grid_problems(dashboard.get("panels", [])))
    return bad


def cmd_lint(args):
    dashboards = load_dashboards(args.dir)
    if not dashboards:
        print(f"lint: no *.json in {args.dir}", file=sys.stderr)
        return 1
    failed = 0
    for path, dashboard, error in dashboards:
        bad = [error] if error else lint_dashboard(path, dashboard)
        if bad:
            failed += 1
            for b in bad:
                print(f"{path.name}: {b}")
        else:
            n = len(panels_of(dashboard))
            print(f"{path.name}: ok ({n} panels, "
                  f"{sum(len(p.get('targets', [])) for p in panels_of(dashboard))} queries)")
    print(f"lint: {len(dashboards)} dashboards, {failed} with problems")
    return 1 if failed else 0


# ---------------------------------------------------------------------------
# Variables, as Grafana substitutes them

VARIABLE = re.compile(r"\$\{(\w+)(?::[\w]+)?\}|\$(\w+)|\[\[(\w+)\]\]")


def duration(seconds):
    """Prometheus duration text for whole seconds: 90 -> '90s'."""
    return f"{max(1, int(round(seconds)))}s"


def interval_variables(start, end, step, scrape_interval):
    """Grafana's built-in interval variables for a query over [start, end] at step.

    $__rate_interval is max($__interval + scrape interval, 4 x scrape interval):
    at least four scrapes, so rate() always has two samples even when one is lost.
    """
    rng = max(1.0, end - start)
    return {
        "__interval": duration(step),
        "__interval_ms": str(int(step * 1000)),
        "__rate_interval": duration(max(step + scrape_interval, 4 * scrape_interval)),
        "__range": duration(rng),
        "__range_s": str(int(round(rng))),
        "__range_ms": str(int(round(rng * 1000))),
    }


def default_values(dashboard, given):
    """The value of every variable of the dashboard: given ones first, else a
    multi/includeAll variable's All (regex .*), else its current value."""
    values = {}
    for name, v in variables_of(dashboard).items():
        if name in given:
            values[name] = given[name]
        elif v.get("includeAll"):
            values[name] = v.get("allValue") or ".*"
        else:
            current = (v.get("current") or {}).get("value")
            if isinstance(current, list):
                current = "|".join(current)
            if current:
                values[name] = current
    for name, value in given.items():
        values.setdefault(name, value)
    return values


def substitute(expr, values):
    """expr with $name, ${name} and [[name]] replaced; KeyError names an unknown one."""
    def one(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in values:
            raise KeyError(f"variable ${name} has no value")
        return values[name]

    return VARIABLE.sub(one, expr)


# ---------------------------------------------------------------------------
# Query


def query_range(base_url, expr, start, end, step, timeout=30):
    """The 'result' of /api/v1/query_range (a matrix); raises RuntimeError on an error reply."""
    params = urllib.parse.urlencode({"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                     "step": f"{step:g}"})
    url = f"{base_url.rstrip('/')}/api/v1/query_range?{params}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = json.load(r)
    except urllib.error.HTTPError as e:
        body = json.loads(e.read() or b"{}")
    if body.get("status") != "success":
        raise RuntimeError(f"{body.get('errorType', 'error')}: {body.get('error', body)}")
    return body["data"]["result"]


def is_number(text):
    """A sample value that is data: not NaN (+Inf / -Inf are values)."""
    try:
        return not math.isnan(float(text))
    except (TypeError, ValueError):
        return False


def series_with_data(result):
    return [s for s in result if any(is_number(v) for _, v in s.get("values", []))]


def auto_step(start, end, scrape_interval):
    """About 250 points per query, never finer than a scrape."""
    return max(scrape_interval, math.ceil((end - start) / 250))


def evaluate(dashboards, base_url, given, start, end, step, scrape_interval):
    """One row per target: dashboard, panel, refId, expr (substituted), series, with-data, error, result."""
    rows = []
    for path, dashboard, _ in dashboards:
        values = default_values(dashboard, given)
        values.update(interval_variables(start, end, step, scrape_interval))
        for panel in panels_of(dashboard):
            for target in panel.get("targets", []):
                row = {"dashboard": path.stem, "title": dashboard.get("title", path.stem),
                       "panel": panel.get("title"), "panelId": panel.get("id"),
                       "refId": target.get("refId"), "error": None, "result": []}
                try:
                    row["expr"] = substitute(target.get("expr", ""), values)
                    row["result"] = query_range(base_url, row["expr"], start, end, step)
                except (KeyError, RuntimeError, OSError) as e:
                    row.setdefault("expr", target.get("expr", ""))
                    row["error"] = str(e)
                row["series"] = len(row["result"])
                row["withData"] = len(series_with_data(row["result"]))
                rows.append(row)
    return rows


def print_table(rows, out=sys.stdout):
    width = max([len(f"{r['dashboard']} / {r['panel']} / {r['refId']}") for r in rows] + [10])
    print(f"{'dashboard / panel / refId':<{width}}  series  with data", file=out)
    for r in rows:
        name = f"{r['dashboard']} / {r['panel']} / {r['refId']}"
        print(f"{name:<{width}}  {r['series']:>6}  {r['withData']:>9}", file=out)


def cmd_query(args):
    dashboards = [d for d in load_dashboards(args.dir) if d[1] is not None]
    if not dashboards:
        print(f"query: no dashboards in {args.dir}", file=sys.stderr)
        return 1
    given = dict(kv.split("=", 1) for kv in args.var)
    given[NAMESPACE_VAR] = args.namespace
    step = args.step or auto_step(args.start, args.end, args.scrape_interval)
    rows = evaluate(dashboards, args.prometheus, given, args.start, args.end, step,
                    args.scrape_interval)
    print_table(rows)
    empty = [r for r in rows if r["withData"] == 0]
    panels = {(r["dashboard"], r["panelId"]) for r in rows}
    panels_empty = {(r["dashboard"], r["panelId"]) for r in empty}
    print(f"query: {len(dashboards)} dashboards, {len(panels)} panels, {len(rows)} queries over "
          f"{args.end - args.start:.0f} s (step {step} s): "
          f"{len(rows) - len(empty)} with data, {len(empty)} without "
          f"({len(panels) - len(panels_empty)} of {len(panels)} panels have data in every query)")
    if args.save:
        Path(args.save).write_text(json.dumps({
            "start": args.start, "end": args.end, "step": step, "namespace": args.namespace,
            "dashboards": {p.stem: d for p, d, _ in dashboards}, "rows": rows}))
    for r in empty:
        why = f"error: {r['error']}" if r["error"] else "no data"
        print(f"NO DATA: {r['dashboard']} / {r['panel']} / {r['refId']}: {why}\n    {r['expr']}")
    return 1 if empty else 0


# ---------------------------------------------------------------------------
# Render

LEGEND_MAX = 8


def legend_text(fmt, labels, ref_id):
    """Grafana's legendFormat: {{label}} replaced by the series' label value."""
    if not fmt or fmt == "__auto":
        inner = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        return f"{{{inner}}}" if inner else ref_id
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt)


# Display scale per Grafana unit: (factor, axis label).
UNIT_SCALE = {"percentunit": (100.0, "%"), "bytes": (1.0 / 2**30, "GiB"),
              "s": (1.0, "seconds"), "ops": (1.0, "per second"), "reqps": (1.0, "requests/s"),
              "short": (1.0, ""), "bool": (1.0, "0/1")}


def plot_panel(ax, panel, rows, start):
    unit = defaults_of(panel).get("unit", "short")
    factor, axis_label = UNIT_SCALE.get(unit, (1.0, unit))
    targets = {t.get("refId"): t for t in panel.get("targets", [])}
    lines = []
    for r in rows:
        fmt = targets.get(r["refId"], {}).get("legendFormat", "")
        for s in r["result"]:
            xs = [float(t) - start for t, _ in s["values"]]
            ys = [float(v) * factor if is_number(v) and math.isfinite(float(v)) else math.nan
                  for _, v in s["values"]]
            finite = [y for y in ys if not math.isnan(y)]
            lines.append((max(finite) if finite else -math.inf,
                          legend_text(fmt, s.get("metric", {}), r["refId"]), xs, ys))
    # Highest series first, so the legend (capped) names those that matter.
    lines.sort(key=lambda line: line[0], reverse=True)
    for i, (_, label, xs, ys) in enumerate(lines):
        ax.plot(xs, ys, linewidth=1.2, label=label if i < LEGEND_MAX else None)
    if not lines:
        ax.text(0.5, 0.5, "NO DATA", transform=ax.transAxes, ha="center", va="center",
                color="red", fontsize=14)
    title = panel.get("title", "")
    if panel.get("type") == "stat" and lines:
        last = [y for y in lines[0][3] if not math.isnan(y)]
        title += f"  [last: {last[-1]:.3g}{'%' if unit == 'percentunit' else ''}]" if last else ""
    ax.set_title(title, fontsize=9)
    ax.set_ylabel(f"{axis_label} ({unit})" if axis_label and axis_label != unit else unit,
                  fontsize=7)
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.3)
    draw_thresholds(ax, panel, factor)
    if lines:
        legend = ax.legend(fontsize=6, loc="upper left", framealpha=0.6)
        if len(lines) > LEGEND_MAX:
            legend.set_title(f"{len(lines)} series, top {LEGEND_MAX}", prop={"size": 6})


def draw_thresholds(ax, panel, factor):
    """Threshold steps as dashed lines, only those inside the data's range (a
    1 s latency threshold would flatten millisecond data)."""
    steps = defaults_of(panel).get("thresholds", {}).get("steps", [])
    low, high = ax.get_ylim()
    for s in steps:
        if s.get("value") is None:
            continue
        y = float(s["value"]) * factor
        if low <= y <= high:
            ax.axhline(y, color=s.get("color", "red"), linestyle="--", linewidth=0.8, alpha=0.8)


def render_dashboard(plt, name, dashboard, rows, start, end, out_dir):
    panels = panels_of(dashboard)
    # Grafana's order: top to bottom, left to right.
    panels.sort(key=lambda p: (p.get("gridPos", {}).get("y", 0), p.get("gridPos", {}).get("x", 0)))
    cols = 3
    nrows = max(1, math.ceil(len(panels) / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(6 * cols, 3.4 * nrows), squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        plot_panel(ax, panel, [r for r in rows if r["panelId"] == panel.get("id")], start)
        ax.set_xlim(0, end - start)
        ax.set_xlabel("seconds into the run", fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(f"{dashboard.get('title', name)} (uid {dashboard.get('uid')}): "
                 f"{len(panels)} panels, {end - start:.0f} s", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    path = Path(out_dir) / f"{name}.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def cmd_render(args):
    import matplotlib  # only here: lint and query need the stdlib alone
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    saved = json.loads(Path(args.results).read_text())
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for name, dashboard in sorted(saved["dashboards"].items()):
        rows = [r for r in saved["rows"] if r["dashboard"] == name]
        path = render_dashboard(plt, name, dashboard, rows, saved["start"], saved["end"], args.out)
        print(f"render: {path}")
    return 0


# ---------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    lint = sub.add_parser("lint", help="structural checks")
    lint.add_argument("dir")
    query = sub.add_parser("query", help="evaluate every panel query against Prometheus")
    query.add_argument("--prometheus", required=True, help="base URL, e.g. http://127.0.0.1:9090")
    query.add_argument("--namespace", required=True, help="value of $namespace (a regex)")
    query.add_argument("--start", type=float, required=True, help="unix seconds")
    query.add_argument("--end", type=float, required=True, help="unix seconds")
    query.add_argument("--step", type=float, default=0, help="seconds (default: about 250 points)")
    query.add_argument("--scrape-interval", type=float, default=15,
                       help="seconds, for $__rate_interval (default 15)")
    query.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                       help="value of another variable (default: All, or its current value)")
    query.add_argument("--save", help="write the results (JSON) here, for render")
    query.add_argument("dir")
    render = sub.add_parser("render", help="one PNG per dashboard from saved results")
    render.add_argument("--results", required=True, help="the file query --save wrote")
    render.add_argument("--out", required=True, help="directory for <dashboard>.png")
    args = parser.parse_args(argv)
    return {"lint": cmd_lint, "query": cmd_query, "render": cmd_render}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
