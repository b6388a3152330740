#!/usr/bin/env python3
"""Tests of harness/figures.py, table-driven: each quantile rule on the
same inputs (they differ on purpose), the summaries, spread, Jain's index,
the ratios, the cell formats and the side-by-side layout (stdlib only)."""

import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import figures  # noqa: E402


class Quantiles(unittest.TestCase):
    CASES = [
        # values, q, linear (quantile), nearest rank
        ([], 0.5, None, None),
        ([7], 0.9, 7, 7),
        ([3, 1, 2], 0.5, 2, 2),
        ([1, 2, 3, 4], 0.5, 2.5, 3),  # round(1.5) = 2 (banker's rounding): the third value
        ([1, 2, 3, 4, 5, 6], 0.5, 3.5, 3),  # round(2.5) = 2: the third value
        ([0, 10], 0.99, 9.9, 10),
        ([0, 10], 0.0, 0, 0),
        ([5, 1, 4, 2, 3], 0.9, 4.6, 5),
    ]

    def test_rules(self):
        for values, q, linear, nearest in self.CASES:
            with self.subTest(values=values, q=q):
                got = figures.quantile(values, q)
                if linear is None:
                    self.assertIsNone(got)
                else:
                    self.assertAlmostEqual(got, linear)
                self.assertEqual(figures.nearest_rank(values, q), nearest)

    def test_medians_of_sorted_lists(self):
        for values, lower, upper in (([], None, None), ([4], 4, 4), ([1, 2], 1, 2), ([1, 2, 3], 2, 2),
                                     ([1, 2, 3, 4], 2, 3)):
            with self.subTest(values=values):
                self.assertEqual(figures.lower_median(values), lower)
                self.assertEqual(figures.upper_median(values), upper)

    def test_inputs_are_not_sorted_in_place(self):
        values = [3, 1, 2]
        figures.quantile(values, 0.5)
        figures.nearest_rank(values, 0.5)
        self.assertEqual(values, [3, 1, 2])


class Summaries(unittest.TestCase):
    def test_summary(self):
        for values, want in (([], {"n": 0, "p50": None, "p90": None, "p99": None, "max": None}),
                             ([2, 1, 3], {"n": 3, "p50": 2, "p90": 2.8, "p99": 2.98, "max": 3})):
            with self.subTest(values=values):
                got = figures.summary(values)
                self.assertEqual(set(got), set(want))
                for k, v in want.items():
                    self.assertAlmostEqual(got[k], v) if v is not None else self.assertIsNone(got[k])

    def test_spread_mean_jain(self):
        cases = [
            # values, spread, mean, jain
            ([1.0], (1.0, 1.0, 1.0), 1.0, 1.0),
            ([3.0, 1.0, 2.0], (2.0, 1.0, 3.0), 2.0, 36 / 42),
            ([1.0, 4.0], (2.5, 1.0, 4.0), 2.5, 25 / 34),
            ([1, 0, 0], (0, 0, 1), 1 / 3, 1 / 3),  # one takes everything: 1/n
        ]
        for values, spread, mean, jain in cases:
            with self.subTest(values=values):
                self.assertEqual(figures.spread(values), spread)
                self.assertAlmostEqual(figures.mean(values), mean)
                self.assertAlmostEqual(figures.jain(values), jain)
        self.assertEqual(figures.mean([]), 0.0)
        self.assertIsNone(figures.jain([]))
        self.assertIsNone(figures.jain([0, 0]))

    def test_ratios(self):
        cases = [
            # a, b, ratio, positive_ratio
            (3, 2, 1.5, 1.5),
            (1, 0, None, None),
            (None, 1, None, None),
            (1, None, None, None),
            (-3, -2, 1.5, None),  # both negative (CPU-second deltas): ratio only
            (0, 4, 0.0, 0.0),
        ]
        for a, b, ratio, positive in cases:
            with self.subTest(a=a, b=b):
                self.assertEqual(figures.ratio(a, b), ratio)
                self.assertEqual(figures.positive_ratio(a, b), positive)


class Formats(unittest.TestCase):
    def test_cells(self):
        cases = [
            # function, args, want
            (figures.fixed, (None,), "-"),
            (figures.fixed, (1.23456,), "1.235"),
            (figures.fixed, (2.0, 0), "2"),
            (figures.fixed, (0.5, 3, "s"), "0.500s"),
            (figures.compact, (None,), "-"),
            (figures.compact, (["a", "b"],), "2"),
            (figures.compact, (2.50,), "2.5"),
            (figures.compact, (1e-7,), "1e-07"),
            (figures.compact, (7,), "7"),
            (figures.compact, (True,), "True"),
            (figures.fmt_spread, ([3.0, 1.0, 2.0],), "2.0 [1.0-3.0]"),
            (figures.fmt_spread, ([1.2345], 3), "1.234 [1.234-1.234]"),
            (figures.pct, (1, 8), "12.5% (1/8)"),
            (figures.pct, (0, 0), "-"),
            (figures.pct, (3, None), "-"),
        ]
        for fn, args, want in cases:
            with self.subTest(fn=fn.__name__, args=args):
                self.assertEqual(fn(*args), want)

    def test_natural_key(self):
        names = ["n10", "n2", "rack-1/n1", "n1", "rack-10/n0", "rack-2/n3"]
        self.assertEqual(sorted(names, key=figures.natural_key),
                         ["n1", "n2", "n10", "rack-1/n1", "rack-2/n3", "rack-10/n0"])


class Layout(unittest.TestCase):
    def test_columns_from_labels_and_names(self):
        cols = figures.Columns(["stock", "muster-gated-long-name"], ["pods", "gangs completed"])
        self.assertEqual((cols.width, cols.col), (17, 24))  # longest label + 2; longest name + 2 (> 16)
        self.assertEqual(cols.header(), " " * 17 + "stock".rjust(24) + "muster-gated-long-name".rjust(24))
        self.assertEqual(cols.row("pods", ["1", "-"]), "pods".ljust(17) + "1".rjust(24) + "-".rjust(24))

    def test_columns_at_least_min_col(self):
        cols = figures.Columns(["a"], ["x"])
        self.assertEqual((cols.width, cols.col), (3, 16))
        self.assertEqual(cols.row("x", ["5"]), "x  " + " " * 15 + "5")

    def test_fixed_columns_with_indent(self):
        cols = figures.Columns(["muster", "first-fit"], width=6, col=10, indent="  ")
        self.assertEqual(cols.header(), "  " + " " * 6 + "    muster" + " first-fit")
        self.assertEqual(cols.row("a label longer than 6", ["1"]), "  a label longer than 6" + " " * 9 + "1")


if __name__ == "__main__":
    unittest.main()
