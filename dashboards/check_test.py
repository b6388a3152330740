#!/usr/bin/env python3
"""Unit tests of check.py: the dashboards in this folder pass its lint, and
each structural rule fails a dashboard that breaks it (a check that cannot fail
proves nothing). The queries' data is e2e/scenarios/observe.sh's, against a
real Prometheus."""

import copy
import json
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check  # noqa: E402


def dashboards():
    return [(p, d) for p, d, err in check.load_dashboards(HERE) if not err]


def first_panel(d):
    return check.panels_of(d)[0]


class RealDashboards(unittest.TestCase):
    def test_five_dashboards_lint_clean(self):
        names = sorted(p.stem for p, _ in dashboards())
        self.assertEqual(names, ["gangs", "gpus", "queues", "reconciler", "scheduling"])
        for path, d in dashboards():
            self.assertEqual(check.lint_dashboard(path, d), [], path.name)

    def test_every_panel_has_queries_of_muster_metrics(self):
        for path, d in dashboards():
            for p in check.panels_of(d):
                self.assertTrue(p.get("targets"), (path.name, p.get("title")))
                for t in p["targets"]:
                    self.assertIn("muster_", t["expr"], (path.name, p["title"]))


class LintFails(unittest.TestCase):
    """Table: a mutation of a real dashboard -> a line of the lint naming it."""

    def mutated(self, mutate):
        path, d = dashboards()[0]
        d = copy.deepcopy(d)
        mutate(d)
        return check.lint_dashboard(path, d)

    def test_table(self):
        def dup_id(d):
            ps = check.panels_of(d)
            ps[1]["id"] = ps[0]["id"]

        def no_ds_var(d):
            d["templating"]["list"] = [v for v in d["templating"]["list"] if v["name"] != "datasource"]

        def fixed_ds(d):
            first_panel(d)["datasource"] = {"type": "prometheus", "uid": "prom-1"}

        def no_ns_filter(d):
            first_panel(d)["targets"][0]["expr"] = "sum(muster_extender_requests_total)"

        def fixed_range(d):
            first_panel(d)["targets"][0]["expr"] = 'rate(muster_x_total{namespace=~"$namespace"}[5m])'

        def vector_zero(d):
            first_panel(d)["targets"][0]["expr"] = 'sum(muster_x{namespace=~"$namespace"}) or vector(0)'

        def no_unit(d):
            first_panel(d)["fieldConfig"]["defaults"].pop("unit", None)

        def no_thresholds(d):
            first_panel(d)["fieldConfig"]["defaults"].pop("thresholds", None)

        def old_schema(d):
            d["schemaVersion"] = 27

        def overlap(d):
            ps = check.panels_of(d)
            ps[1]["gridPos"] = dict(ps[0]["gridPos"])

        def wrong_uid(d):
            d["uid"] = "something"

        cases = [
            ("duplicate panel id", dup_id, "is used 2 times"),
            ("no datasource variable", no_ds_var, "no 'datasource' variable"),
            ("panel with a fixed datasource", fixed_ds, "datasource is not ${datasource}"),
            ("query without the namespace filter", no_ns_filter, 'is not filtered by namespace=~"$namespace"'),
            ("fixed range vector", fixed_range, "range [5m] is not one of"),
            ("or vector(0)", vector_zero, "uses vector()"),
            ("panel without unit", no_unit, "no fieldConfig.defaults.unit"),
            ("panel without thresholds", no_thresholds, "no fieldConfig.defaults.thresholds"),
            ("old schemaVersion", old_schema, "schemaVersion 27"),
            ("overlapping panels", overlap, "overlaps panel"),
            ("uid not muster-<file>", wrong_uid, "uid 'something'"),
        ]
        for name, mutate, want in cases:
            with self.subTest(name):
                bad = self.mutated(mutate)
                self.assertTrue(any(want in b for b in bad), bad)


class Variables(unittest.TestCase):
    def test_substitution_as_grafana(self):
        values = {"namespace": "muster-system", "datasource": "prom"}
        values.update(check.interval_variables(0, 600, 5, 1))
        expr = 'rate(muster_a_total{namespace=~"$namespace"}[$__rate_interval]) / ${namespace} [[namespace]]'
        self.assertEqual(check.substitute(expr, values),
                         'rate(muster_a_total{namespace=~"muster-system"}[6s]) / muster-system muster-system')
        # $__rate_interval = max($__interval + scrape, 4 scrapes): 5 s + 1 s above, 4 s here.
        self.assertEqual(check.interval_variables(0, 600, 1, 1)["__rate_interval"], "4s")
        with self.assertRaises(KeyError):
            check.substitute("muster_a{x=\"$unknown\"}", values)

    def test_nan_only_series_is_no_data(self):
        result = [{"metric": {}, "values": [[1, "NaN"], [2, "NaN"]]},
                  {"metric": {"q": "a"}, "values": [[1, "NaN"], [2, "3"]]}]
        self.assertEqual(check.series_with_data(result), [result[1]])
        self.assertTrue(check.is_number("+Inf"))


if __name__ == "__main__":
    unittest.main()
