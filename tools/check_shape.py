#!/usr/bin/env python3
"""Size limits for the I/O controllers: no function over 60 lines, no file over 600.

Usage: check_shape.py ROOT [DIR ...]   (DIRs default to extender reconciler)

A function is counted from the line of its opening brace's signature to its
closing brace (a rough brace match over comment- and string-free text, which
is what a reader scrolls through). Flag tables and metric declarations are
long by nature; they are allowed by name in ALLOWED_LONG below, with the
reason. Exit 1 and one line per violation when a limit is broken.
"""
import os
import re
import sys

MAX_FUNCTION_LINES = 60
MAX_FILE_LINES = 600
# file suffix -> function names allowed over the limit, and why.
ALLOWED_LONG = {
    # Flag tables: one line per flag, read as a table.
    "app.cc": {"Setters"},
    "app_flags.cc": {"Setters"},
    # Metric declarations: one block per metric family.
    "metrics.cc": {"ExtenderMetrics", "ReconcilerMetrics"},
}
CONTAINER = re.compile(r"\b(namespace|class|struct|union|enum|extern)\b[^;{}()]*$")


def strip(text):
    """Blanks comments, string and char literals, keeping newlines."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """Yields (name, first_line, line_count) of each function body."""
    code = strip(text)
    stack = []  # per open brace: ("container"|"function"|"block", name, line)
    last_stmt_end = 0
    for i, c in enumerate(code):
        if c in ";}":
            if c == "}" and stack:
                kind, name, line = stack.pop()
                if kind == "function":
                    end_line = code.count("\n", 0, i) + 1
                    yield name, line, end_line - line + 1
            last_stmt_end = i + 1
        elif c == "{":
            head = code[last_stmt_end:i]
            in_function = any(k == "function" for k, _, _ in stack)
            if in_function:
                stack.append(("block", "", 0))
            elif CONTAINER.search(head.replace("\n", " ")):
                stack.append(("container", "", 0))
            elif re.search(r"\)[\w\s:&<>,*\->]*$", head):
                m = re.search(r"([\w:~]+(?:operator\S*)?)\s*\(", head)
                name = m.group(1) if m else "?"
                start = last_stmt_end + len(head) - len(head.lstrip())
                line = code.count("\n", 0, start) + 1
                stack.append(("function", name, line))
            else:
                stack.append(("block", "", 0))
            last_stmt_end = i + 1


def check(root, dirs):
    problems = []
    for d in dirs:
        for base, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith((".cc", ".h")):
                    continue
                path = os.path.join(base, f)
                rel = os.path.relpath(path, root)
                text = open(path, encoding="utf-8").read()
                lines = text.count("\n")
                if lines > MAX_FILE_LINES:
                    problems.append(f"{rel}: {lines} lines (limit {MAX_FILE_LINES})")
                allowed = ALLOWED_LONG.get(f, set())
                for name, line, count in functions(text):
                    if count > MAX_FUNCTION_LINES and name.split("::")[-1] not in allowed \
                            and name not in allowed:
                        problems.append(f"{rel}:{line}: {name} is {count} lines "
                                        f"(limit {MAX_FUNCTION_LINES})")
    return problems


def main(argv):
    root = argv[1] if len(argv) > 1 else "."
    dirs = argv[2:] or ["extender", "reconciler"]
    problems = check(root, dirs)
    for p in problems:
        print(p)
    print(f"{len(problems)} shape violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
