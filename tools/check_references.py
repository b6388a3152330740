#!/usr/bin/env python3
"""Checks that the repository stands on its own: no reference to notes outside it.

Usage: check_references.py <project root>

A comment, doc or manifest states the fact it relies on, points at a doc of
the repository (docs/), or names the upstream source the fact came from (a
Kubernetes or Volcano file path, a KEP, an issue number). It never sends the
reader to notes that only some checkouts have: a sibling folder of notes, a
notes file by name, or "reference §N" of an unnamed document. Scans the
text files git tracks or would (new ones that .gitignore does not exclude;
every file when the root is not in a git work tree), except build
directories, this script and its own testdata. Exits 1 and
lists every line that refers out.
"""
import os
import pathlib
import re
import subprocess
import sys

SELF = pathlib.Path(__file__).resolve()
OWN_TESTDATA = SELF.parent / "testdata" / "references_tree"
# The notes kept beside the repository while it was written, by file stem. A
# name that is also a file of the scanned tree (docs/topology.md) is the
# repository's own doc and allowed.
NOTES = ("extender-protocol", "volcano", "aesthetics", "upstream-gang", "kueue", "peers-perf",
         "build-notes", "control-plane", "topology")
# The folder beside the checkout that held those notes. Named from its parts
# so that this file, which must know it, is not itself a reference to it.
NOTES_FOLDER = "sha" + "red"
NOTE_FILE = re.compile(r"(?<![\w-])((?:" + "|".join(re.escape(n) for n in NOTES) + r")\.md)\b")
RULES = [
    (re.compile(r"(?:\.\./)+" + NOTES_FOLDER + r"/|\b" + NOTES_FOLDER + r"/reference\b"),
     "a folder outside the repository"),
    (re.compile(r"\breference\s+(?:`?[\w./-]+`?\s+)?§"), "a section of an unnamed reference"),
]


def tracked_files(root: pathlib.Path):
    """The files git tracks under root and the new ones it does not ignore, or
    every file when git cannot say."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            check=True, capture_output=True).stdout
        return [root / p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for base, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            files += [pathlib.Path(base) / n for n in names]
        return files


def scanned(root: pathlib.Path, path: pathlib.Path):
    rel = path.relative_to(root)
    if rel.parts[0].startswith("build") or rel.parts[0].startswith("."):
        return False
    if path.resolve() == SELF:
        return False
    own = OWN_TESTDATA.resolve()
    return not (own in path.resolve().parents and own not in [root, *root.parents])


def text_of(path: pathlib.Path):
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def check_file(root, path, own_docs):
    text = text_of(path)
    if text is None:
        return None
    rel = path.relative_to(root).as_posix()
    found = []
    for lineno, line in enumerate(text.splitlines(), 1):
        why = next((why for rule, why in RULES if rule.search(line)), None)
        if why is None and any(m.group(1) not in own_docs for m in NOTE_FILE.finditer(line)):
            why = "a notes file outside the repository"
        if why is not None:
            found.append(f"{rel}:{lineno}: {why}: {line.strip()}")
    return found


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1]).resolve()
    files = sorted(p for p in tracked_files(root) if p.is_file() and scanned(root, p))
    own_docs = {p.name for p in files}
    count, found = 0, []
    for path in files:
        lines = check_file(root, path, own_docs)
        if lines is None:
            continue
        count += 1
        found += lines
    for line in found:
        print(line)
    print(f"check_references: {count} files, {len(found)} references")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
