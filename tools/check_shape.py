#!/usr/bin/env python3
# little_loops — checks the code's shape (design §7): no hand-written header in include/
# over 700 lines, no function in include/ or examples/ over 100 lines (Universal Ctags end
# lines; lambdas count). Prints each offender and exits 1 when there is one.
# SPDX-License-Identifier: MIT
"""Usage: python3 tools/check_shape.py [--max-header N] [--max-function N]"""

import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATED = {"include/little_loops/detail/unicode_tables.hpp"}  # tools/gen_unicode_tables.py


def long_headers(limit):
    found = []
    for base, _, files in os.walk(os.path.join(ROOT, "include")):
        for name in sorted(files):
            path = os.path.join(base, name)
            rel = os.path.relpath(path, ROOT)
            if not name.endswith(".hpp") or rel in GENERATED:
                continue
            with open(path, encoding="utf-8") as f:
                lines = sum(1 for _ in f)
            if lines > limit:
                found.append(f"{rel}: {lines} lines (limit {limit})")
    return found


def long_functions(limit):
    ctags = shutil.which("ctags")
    if ctags is None:
        sys.exit("check_shape: Universal Ctags (package universal-ctags) is needed")
    out = subprocess.run(
        [ctags, "-R", "--languages=C++", "--fields=+ne", "--kinds-c++=f", "-x",
         "--_xformat=%{end} %{line} %N %F", "include", "examples"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    found = []
    for row in out.splitlines():
        parts = row.split(maxsplit=3)
        if len(parts) != 4 or not parts[0].isdigit():
            continue
        end, start, name, path = int(parts[0]), int(parts[1]), parts[2], parts[3]
        if end - start > limit:
            found.append(f"{path}:{start}: {name} is {end - start} lines (limit {limit})")
    return sorted(found)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-header", type=int, default=700)
    parser.add_argument("--max-function", type=int, default=100)
    args = parser.parse_args()
    problems = long_headers(args.max_header) + long_functions(args.max_function)
    for p in problems:
        print(p)
    if problems:
        return 1
    print("shape: every header and function is within its limit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
