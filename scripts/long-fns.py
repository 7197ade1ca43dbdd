#!/usr/bin/env python3
"""Lists the functions longer than a limit (100 lines by default) outside
tests, longest first: `LINES path:line name`.

    scripts/long-fns.py [--limit N] [PATH ...]   (default: src crates/dbio-core/src)

A function runs from its `fn` line to its closing brace (comments, strings
and character literals are skipped when braces are matched). Test code is
left out: files named tests.rs, *_tests.rs or tests_*.rs, and the blocks of
items marked #[cfg(test)] or #[test]. Exits 1 when it lists any, so it can
be a check.
"""

import argparse
import os
import re
import sys

FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
TEST_ATTR = re.compile(r"#\[\s*(cfg\s*\(\s*test\s*\)|test)\s*\]")


def code_only(text):
    """Comments, strings and char literals blanked; line breaks kept."""
    out, i, n = [], 0, len(text)

    def blank(s):
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c, d = text[i], text[i + 1] if i + 1 < n else ""
        prev = text[i - 1] if i > 0 else ""
        end = i + 1
        if c == "/" and d == "/":
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif c == "/" and d == "*":
            depth, k = 0, i
            while k + 1 < n:
                if text[k : k + 2] == "/*":
                    depth, k = depth + 1, k + 2
                elif text[k : k + 2] == "*/":
                    depth, k = depth - 1, k + 2
                    if depth == 0:
                        break
                else:
                    k += 1
            end = k if depth == 0 else n
        elif c in "rb" and not (prev.isalnum() or prev == "_"):
            m = re.compile(r'b?r(#*)"').match(text, i)
            if m:
                close = '"' + m.group(1)
                k = text.find(close, m.end())
                end = n if k < 0 else k + len(close)
            elif c == "b" and d == '"':
                end = string_end(text, i + 2)
        elif c == '"':
            end = string_end(text, i + 1)
        elif c == "'":
            m = re.compile(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'").match(text, i)
            if m:
                end = m.end()
        out.append(blank(text[i:end]) if end > i + 1 else c)
        i = end
    return "".join(out)


def string_end(text, k):
    while k < len(text):
        if text[k] == "\\":
            k += 2
        elif text[k] == '"':
            return k + 1
        else:
            k += 1
    return len(text)


def long_functions(path, limit):
    name = os.path.basename(path)[:-3]
    if name == "tests" or name.endswith("_tests") or name.startswith("tests_"):
        return []
    with open(path, encoding="utf-8", errors="replace") as f:
        code = code_only(f.read())
    found, depth, line = [], 0, 1
    stack = []  # (kind, depth at its opening brace, start line, name)
    pending = None  # a fn or a test item whose brace has not opened yet
    test_item = False
    i = 0
    while i < len(code):
        c = code[i]
        if c == "\n":
            line += 1
        elif c == "#":
            m = TEST_ATTR.match(code, i)
            if m:
                test_item = True
                i = m.end()
                continue
        elif c == "f":
            m = FN.match(code, i)
            if m and not (code[i - 1 : i].isalnum() or code[i - 1 : i] == "_"):
                pending = ("test" if test_item else "fn", line, m.group(1))
                test_item = False
                i = m.end()
                continue
        elif c == ";":
            pending, test_item = None, False
        elif c == "{":
            depth += 1
            if pending:
                stack.append((pending[0], depth, pending[1], pending[2]))
                pending = None
            elif test_item:
                stack.append(("test", depth, line, ""))
                test_item = False
        elif c == "}":
            if stack and stack[-1][1] == depth:
                kind, _, start, fname = stack.pop()
                in_test = any(k == "test" for k, *_ in stack)
                length = line - start + 1
                if kind == "fn" and not in_test and length > limit:
                    found.append((length, f"{path}:{start}", fname))
            depth -= 1
        i += 1
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("paths", nargs="*", default=["src", "crates/dbio-core/src"])
    args = p.parse_args()
    found = []
    for top in args.paths:
        files = [top] if top.endswith(".rs") else [
            os.path.join(d, f)
            for d, _, fs in os.walk(top)
            for f in fs
            if f.endswith(".rs")
        ]
        for f in sorted(files):
            found.extend(long_functions(f, args.limit))
    for length, where, name in sorted(found, key=lambda x: (-x[0], x[1])):
        print(f"{length:5} {where} {name}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
