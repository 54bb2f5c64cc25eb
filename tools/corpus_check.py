#!/usr/bin/env python3
# little_loops — compatibility check against the little-loops reference corpus
# SPDX-License-Identifier: MIT
"""Validate every reference loop and test fixture with `ll-loop validate --json`.

Prints one line per file that does not validate, with its first error and how many errors
it has, then a summary of the most frequent causes, then `N/103 loops validate` (the 91
builtin loops and 12 oracles) and `M/38 fixtures validate`. Some fixtures are invalid on
purpose (missing-name, invalid-yaml-syntax, ...): the reference rejects them too.

Usage:
  python3 tools/corpus_check.py [--ll-loop build/examples/ll-loop] [--reference DIR] [--quiet]

DIR defaults to ../shared/reference/little-loops-head beside the repository. Exit status 0
whatever the figure (it is a measurement, not a test); 2 when ll-loop or DIR is missing.
"""

import argparse
import collections
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def corpus(reference):
    scripts = os.path.join(reference, "scripts")
    loops_dir = os.path.join(scripts, "little_loops", "loops")
    loops = [os.path.join(loops_dir, n) for n in sorted(os.listdir(loops_dir)) if n.endswith(".yaml")]
    oracles_dir = os.path.join(loops_dir, "oracles")
    loops += [os.path.join(oracles_dir, n) for n in sorted(os.listdir(oracles_dir)) if n.endswith(".yaml")]
    fixtures_dir = os.path.join(scripts, "tests", "fixtures", "fsm")
    fixtures = [os.path.join(fixtures_dir, n) for n in sorted(os.listdir(fixtures_dir))
                if n.endswith((".yaml", ".yml", ".json"))]
    return loops, fixtures


def check(ll_loop, path, loops_dir):
    """(ok, first error, error count, causes) for one file."""
    # The builtin loops are on the search path, as the reference's builtin directory is
    # searched last: oracles import lib/common.yaml from there.
    env = dict(os.environ, LL_LOOP_PATH=loops_dir)
    proc = subprocess.run([ll_loop, "validate", "--json", path], capture_output=True, text=True,
                          timeout=60, env=env)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        return False, tail[-1] if tail else f"exit {proc.returncode}, no output", 1, ["(no JSON)"]
    if report.get("valid"):
        return True, "", 0, []
    errors = [d for d in report.get("diagnostics", []) if d.get("level") == "error"]
    causes = []
    for d in errors:
        code = d.get("code", "?")
        if code == "unknown-key":
            causes.append(f"unknown key {d.get('path', '').rsplit('.', 1)[-1]}")
        else:
            causes.append(code)
    first = report.get("error", "")
    if errors:
        e = errors[0]
        first = f"{e.get('line', '?')}:{e.get('column', '?')}: {e.get('path', '')}: {e.get('message', '')}"
    return False, first, max(len(errors), 1), causes or [first]


def run_set(ll_loop, files, base, quiet, tally, loops_dir):
    passed = 0
    for path in files:
        ok, first, count, causes = check(ll_loop, path, loops_dir)
        if ok:
            passed += 1
            continue
        tally.update(set(causes))
        if not quiet:
            rel = os.path.relpath(path, base)
            more = f" (+{count - 1} more)" if count > 1 else ""
            print(f"FAIL {rel}: {first}{more}")
    return passed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ll-loop", default=os.path.join(ROOT, "build", "examples", "ll-loop"))
    parser.add_argument("--reference",
                        default=os.path.join(os.path.dirname(ROOT), "shared", "reference",
                                             "little-loops-head"))
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.add_argument("--causes", type=int, default=15, help="how many frequent causes to list")
    args = parser.parse_args()
    if not os.access(args.ll_loop, os.X_OK):
        print(f"corpus_check: no ll-loop at {args.ll_loop} (build the ll-loop target)", file=sys.stderr)
        return 2
    if not os.path.isdir(args.reference):
        print(f"corpus_check: no reference corpus at {args.reference}", file=sys.stderr)
        return 2
    loops, fixtures = corpus(args.reference)
    base = os.path.join(args.reference, "scripts")
    tally = collections.Counter()
    loops_dir = os.path.join(base, "little_loops", "loops")
    loops_ok = run_set(args.ll_loop, loops, base, args.quiet, tally, loops_dir)
    fixtures_ok = run_set(args.ll_loop, fixtures, base, args.quiet, tally, loops_dir)
    if tally and args.causes:
        print(f"most frequent causes (files affected):")
        for cause, n in tally.most_common(args.causes):
            print(f"  {n:4d}  {cause}")
    print(f"{loops_ok}/{len(loops)} loops validate")
    print(f"{fixtures_ok}/{len(fixtures)} fixtures validate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
