#!/usr/bin/env python3
"""Lists the core's `pub` items that nothing outside the core names:
`path:line kind name`, one a line. Such an item should be `pub(crate)` (or
private): the core is public only for what the dbio crate, its tests,
benches and bench programs use.

    scripts/core-pub.py [--all] [--count] [--root DIR]

An item is a `pub` fn (free or in an impl), struct, enum, union, trait,
type, const, static or mod of crates/dbio-core/src, outside test files
(tests.rs, *_tests.rs, tests_*.rs) and outside `#[cfg(test)]` blocks. It is
named outside when its name occurs as a whole word in the code (comments
and strings left out) of src/, tests/, benches/, bench/ or the core's own
tests/ and benches/. Matching by name alone is generous: a `pub fn run`
counts as used because some other `run` is; the list errs on keeping.

Files in SKIP are not listed (without --all): for items other work is
moving or changing at the time, to be trimmed once it has landed (the
list is empty now).

Exits 1 when it lists any item, so it can be a check.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
long_fns = __import__("long-fns")

CORE = "crates/dbio-core/src"
OUTSIDE = ["src", "tests", "benches", "bench", "crates/dbio-core/tests", "crates/dbio-core/benches"]
SKIP: list[str] = [
    # Paths (prefixes) left out while other work changes them; none now.
]
ITEM = re.compile(
    r"^[ \t]*pub\s+(?:(?:const|async|unsafe|extern\s+\"C\")\s+)*"
    r"(fn|struct|enum|union|trait|type|const|static|mod)\s+([A-Za-z_][A-Za-z0-9_]*)",
    re.M,
)
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def rust_files(root):
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith(".rs"):
                yield os.path.join(d, f)


def is_test_file(path):
    name = os.path.basename(path)
    return name == "tests.rs" or name.endswith("_tests.rs") or name.startswith("tests_")


def words_outside():
    seen = set()
    for root in OUTSIDE:
        if not os.path.isdir(root):
            continue
        for path in rust_files(root):
            with open(path, encoding="utf-8", errors="replace") as f:
                seen.update(WORD.findall(long_fns.code_only(f.read())))
    return seen


def test_lines(code):
    """Line numbers (1-based) inside `#[cfg(test)]`/`#[test]` items."""
    out = set()
    for m in long_fns.TEST_ATTR.finditer(code):
        start = code.find("{", m.end())
        semi = code.find(";", m.end())
        if start < 0 or (0 <= semi < start):
            continue
        depth, k = 0, start
        while k < len(code):
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, k) + 1
        out.update(range(first, last + 1))
    return out


def unnamed(skip=True):
    outside = words_outside()
    found = []
    for path in rust_files(CORE):
        if is_test_file(path) or (skip and any(path.startswith(s) for s in SKIP)):
            continue
        with open(path, encoding="utf-8") as f:
            code = long_fns.code_only(f.read())
        tests = test_lines(code)
        for m in ITEM.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            kind, name = m.group(1), m.group(2)
            if line in tests or name in outside:
                continue
            found.append((path, line, kind, name))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true", help="also list the files in SKIP")
    ap.add_argument("--count", action="store_true", help="print only how many")
    ap.add_argument("--root", help="the repository (default: the one holding this script)")
    args = ap.parse_args()
    os.chdir(args.root or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    found = unnamed(skip=not args.all)
    if args.count:
        print(len(found))
    else:
        for path, line, kind, name in found:
            print(f"{path}:{line} {kind} {name}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
