#!/usr/bin/env python3
"""Checks that no shell script under `set -o pipefail` pipes into `grep -q`.

Usage: check_pipes.py <project root>

`producer | grep -q PATTERN` is a race under pipefail: grep exits at its first
match, and a producer that writes again after that (kubectl writes each line
of a list on its own) dies of SIGPIPE, so the pipeline's status is 141 even
though the pattern matched. e2e_gw_upstream_gang failed CI that way (2 runs in
300 of its `kubectl api-resources | grep -qx`). Read the output whole first:
`grep -q PATTERN <<<"$(producer)"`, or `out=$(producer)` then grep. The same
holds for `grep -m N` and `grep --quiet`/`--silent`, and for `head`, which
quits after its lines (e2e_gpu_sharing failed CI with exit 141 on
`failed_scheduling POD | head -n 1`): `sed -n 1p` reads to the end instead.
Scans the *.sh files (outside build directories) that set pipefail or source
a script beside them that does (the scenarios get it from lib.sh); comment
lines are skipped.
Exits 1 and lists every such pipe.
"""
import pathlib
import re
import sys

# A single `|` (not `||`) followed by grep whose options include q, m,
# --quiet, --silent or --max-count, or by head.
EARLY_QUIT_GREP = re.compile(
    r"(?<!\|)\|(?!\|)\s*(?:grep\s+(?:-[A-Za-z]*[qm][A-Za-z]*\b|--(?:quiet|silent|max-count)\b)"
    r"|head\b)")
PIPEFAIL = re.compile(r"\bset\s+-[a-z]*o\s+pipefail")
# `source x.sh` / `. "$DIR/x.sh"`: the file name sourced.
SOURCED = re.compile(r"^\s*(?:source|\.)\s+\S*?([\w.-]+\.sh)\b", re.MULTILINE)
SKIPPED_DIRS = {".git", "build", "node_modules"}


def scripts(root: pathlib.Path):
    for path in sorted(root.rglob("*.sh")):
        parts = path.relative_to(root).parts
        if any(p in SKIPPED_DIRS or p.startswith("build") for p in parts[:-1]):
            continue
        yield path


def sets_pipefail(path: pathlib.Path) -> bool:
    text = path.read_text(errors="replace")
    if PIPEFAIL.search(text):
        return True
    for name in SOURCED.findall(text):
        lib = path.parent / name
        if lib.is_file() and PIPEFAIL.search(lib.read_text(errors="replace")):
            return True
    return False


def violations(path: pathlib.Path):
    text = path.read_text(errors="replace")
    if not sets_pipefail(path):
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        if EARLY_QUIT_GREP.search(line):
            yield number, line.strip()


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1]).resolve()
    own_testdata = pathlib.Path(__file__).resolve().parent / "testdata" / "pipes_tree"
    found = 0
    files = 0
    for path in scripts(root):
        if root != own_testdata and own_testdata in path.parents:
            continue
        files += 1
        for number, line in violations(path):
            found += 1
            print(f"{path.relative_to(root)}:{number}: pipes into an early-quitting reader "
                  f"under pipefail (SIGPIPE race): {line}")
    print(f"{files} files, {found} early-quitting pipes")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
