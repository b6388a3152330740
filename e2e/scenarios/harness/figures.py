"""Report figures: the arithmetic and the text layout of the e2e and bench
reports (pure; stdlib only).

Contract: every function is pure and deterministic; an empty input gives
None (or the documented neutral value), never an exception. The reports
print these values and scenarios and docs quote them, so each definition is
kept exactly as the report that uses it has always computed it: the
quantile definitions differ on purpose (named by their rule), and a
changed rounding or padding here changes published tables.
"""

import re
import statistics


# --- order statistics --------------------------------------------------------------


def quantile(xs, q):
    """Linear interpolation between closest ranks (numpy's default); None
    for no values. The benches' p50/p90/p99."""
    if not xs:
        return None
    xs = sorted(xs)
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def nearest_rank(values, q):
    """The value at rank round(q x (n - 1)) of the sorted values (no
    interpolation: always one of the values); None for no values. The queue
    scenario's medians and p90s."""
    v = sorted(values)
    if not v:
        return None
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def lower_median(sorted_values):
    """The lower of the two middle values of an already sorted list (the
    middle one for an odd count); None when empty."""
    return sorted_values[(len(sorted_values) - 1) // 2] if sorted_values else None


def upper_median(sorted_values):
    """The upper of the two middle values of an already sorted list (the
    middle one for an odd count); None when empty."""
    return sorted_values[len(sorted_values) // 2] if sorted_values else None


def summary(xs):
    """{"n", "p50", "p90", "p99", "max"} of `xs` (linear quantiles; None
    figures when empty)."""
    return {"n": len(xs), "p50": quantile(xs, 0.5), "p90": quantile(xs, 0.9),
            "p99": quantile(xs, 0.99), "max": max(xs) if xs else None}


def spread(values):
    """(median, min, max) of a non-empty list."""
    return statistics.median(values), min(values), max(values)


def mean(values):
    """The arithmetic mean; 0.0 for no values."""
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def jain(xs):
    """Jain's fairness index (sum x)^2 / (n x sum x^2): 1 when all are equal,
    1/n when one takes everything; None for no values or all zero."""
    xs = list(xs)
    sq = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * sq) if xs and sq else None


def ratio(a, b):
    """a / b; None when either is missing or b is 0 (any sign allowed)."""
    return None if a is None or b is None or b == 0 else a / b


def positive_ratio(a, b):
    """a / b; None when either is missing or b is not positive."""
    return None if b is None or b <= 0 or a is None else a / b


# --- formatting --------------------------------------------------------------------


def fixed(x, digits=3, unit=""):
    """`x` with `digits` decimals and `unit` appended; "-" for None."""
    return "-" if x is None else f"{x:.{digits}f}{unit}"


def compact(v):
    """A table cell: "-" for None, a list by its length (its names are listed
    after the table), a float in %g, anything else as str()."""
    if v is None:
        return "-"
    if isinstance(v, list):
        return str(len(v))
    return f"{v:g}" if isinstance(v, float) else str(v)


def fmt_spread(values, digits=1):
    """ "median [min-max]" of a non-empty list."""
    med, lo, hi = spread(values)
    return f"{med:.{digits}f} [{lo:.{digits}f}-{hi:.{digits}f}]"


def pct(a, b):
    """ "12.5% (1/8)"; "-" when b is 0 or missing."""
    return "-" if not b else f"{100.0 * a / b:.1f}% ({a}/{b})"


def parse_metrics(text):
    """{series: value} of a Prometheus text page, the series as printed
    (name and labels); comments and unparsable values skipped."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series, _, value = line.rpartition(" ")
        try:
            out[series] = float(value)
        except ValueError:
            pass
    return out


def natural_key(name):
    """Sort key of names with numbers by value (n2 before n10)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


class Columns:
    """A side-by-side text table: `indent`, a left-aligned label column, then
    one right-aligned column per side. By default the label column is the
    longest of `labels` + 2 wide and every side column max(`min_col`, longest
    name + 2); `width` and `col` fix them instead. Cells must be str."""

    def __init__(self, names, labels=(), min_col=16, width=None, col=None, indent=""):
        self.names = list(names)
        self.width = width if width is not None else max(len(label) for label in labels) + 2
        self.col = col if col is not None else max(min_col, *(len(n) + 2 for n in self.names))
        self.indent = indent

    def header(self):
        """The row of side names over an empty label."""
        return self.row("", self.names)

    def row(self, label, cells):
        return self.indent + label.ljust(self.width) + "".join(c.rjust(self.col) for c in cells)
