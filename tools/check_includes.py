#!/usr/bin/env python3
"""Checks that every #include in the source tree follows muster's dependency rule.

Usage: check_includes.py <project root>

A module may include only the modules listed for it below (README, "Dependency
rule"). The pure policy modules additionally may not include threads, sockets,
HTTP, JSON or the wall clock. Exits 1 and lists every violation.
"""
import pathlib
import re
import sys

# module -> project modules it may include (itself always allowed). base is
# below everything (std, threads, cpp-httplib) and includes no muster module;
# the pure core (model, gang, queue, topology) does not include base.
ALLOWED = {
    "base": set(),
    "model": set(),
    "kube/codec": {"base", "model"},
    "kube/client": {"base", "model", "kube/codec"},
    "gang": {"model"},
    "queue": {"model"},
    "topology": {"model"},
    "extender": {"base", "model", "gang", "queue", "topology", "kube/codec", "kube/client"},
    "reconciler": {"base", "model", "kube/codec", "kube/client"},
    # bench measures every layer (the watch framer of kube/client too).
    "bench": {"base", "model", "gang", "queue", "topology", "kube/codec", "kube/client",
              "extender"},
    "cmd": {"base", "model", "gang", "queue", "topology", "kube/codec", "kube/client", "extender",
            "reconciler", "cmd"},
}
MODULES = sorted(ALLOWED, key=len, reverse=True)  # "kube/codec" before "kube"
PURE = {"model", "gang", "queue", "topology"}
# System headers and symbols the pure core must not touch.
IMPURE_HEADERS = re.compile(
    r"^(thread|mutex|shared_mutex|condition_variable|future|fstream|filesystem|"
    r"sys/socket\.h|netinet/.*|arpa/.*|unistd\.h|httplib\.h|rapidjson/.*|spdlog/.*|"
    r"prometheus/.*|yaml-cpp/.*|openssl/.*)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
# Files allowed to read the wall clock: the one RealClock implementation.
CLOCK_EXEMPT = {"model/clock.cc"}


def module_of(rel: str):
    for m in MODULES:
        if rel.startswith(m + "/"):
            return m
    return None


def check_file(root: pathlib.Path, path: pathlib.Path):
    rel = path.relative_to(root).as_posix()
    mod = module_of(rel)
    if mod is None:
        return []
    errors = []
    is_test = rel.endswith("_test.cc") or "/testing/" in rel
    for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        m = INCLUDE.match(line)
        if m:
            kind, target = m.groups()
            if kind == '"':
                dep = module_of(target)
                if dep is not None and dep != mod and dep not in ALLOWED[mod]:
                    errors.append(f"{rel}:{lineno}: {mod} may not include {target}")
            elif mod in PURE and not is_test and IMPURE_HEADERS.match(target):
                errors.append(f"{rel}:{lineno}: pure module {mod} may not include <{target}>")
        if (mod in PURE and rel not in CLOCK_EXEMPT and not is_test
                and "system_clock" in line and not line.lstrip().startswith("//")):
            errors.append(f"{rel}:{lineno}: pure module {mod} may not read the wall clock")
    return errors


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1]).resolve()
    files = [p for p in root.rglob("*") if p.suffix in (".h", ".cc") and
             not any(part.startswith("build") or part.startswith(".") for part in
                     p.relative_to(root).parts)]
    errors = [e for f in sorted(files) for e in check_file(root, f)]
    for e in errors:
        print(e)
    print(f"check_includes: {len(files)} files, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
