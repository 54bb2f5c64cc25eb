#!/usr/bin/env python3
# little_loops — builds the single-header distribution in single_include/ from include/
# SPDX-License-Identifier: MIT
"""Amalgamate the little_loops headers.

Outputs (same relative paths as include/, so -Isingle_include vs -Iinclude is the only switch):
  single_include/little_loops/fsm.hpp   every core header (what include/little_loops/fsm.hpp
                                        pulls in), inlined depth-first, each file once.
  single_include/little_loops/<extra>   one header per opt-in adapter: every public header that
                                        fsm.hpp does not reach and that is not under detail/
                                        (posix runner, command judge, journal, YAML loader...).
                                        The headers of compose/, journal/ and yaml/ are parts of
                                        their umbrellas (compose.hpp, journal.hpp,
                                        yaml_loader.hpp), inlined there.
                                        Core includes become one `#include <little_loops/fsm.hpp>`,
                                        other extras stay as includes, private helpers are inlined
                                        inside include guards (two extras may share one).

Usage:
  python3 tools/amalgamate.py            regenerate single_include/
  python3 tools/amalgamate.py --check    exit 1 (with the command to run) when it is stale
  python3 tools/amalgamate.py --shims D  write forwarding headers into D for every inlined
                                         part (lets a test that includes a part header compile
                                         against the single headers)
  python3 tools/amalgamate.py --remap    emit #line directives pointing into include/ (debug
                                         builds only; never committed)

Deterministic: sorted traversal, LF line endings, no timestamps, no formatter pass.
Python 3 standard library only.
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE_DIR = os.path.join(ROOT, "include")
OUTPUT_DIR = os.path.join(ROOT, "single_include")
CORE = "little_loops/fsm.hpp"
# Opt-in adapters the design names; any other header outside fsm.hpp is reported.
KNOWN_ADAPTERS = ("little_loops/runners/", "little_loops/judges/", "little_loops/journal.hpp",
                  "little_loops/journal/", "little_loops/yaml_loader.hpp",
                  "little_loops/yaml/", "little_loops/document.hpp",
                  "little_loops/compose.hpp")

# Folders whose headers are parts of one umbrella adapter: they are inlined into it rather
# than given single headers of their own, so a user copies one file per adapter.
UMBRELLAS = {"little_loops/compose/": "little_loops/compose.hpp",
             "little_loops/journal/": "little_loops/journal.hpp",
             "little_loops/yaml/": "little_loops/yaml_loader.hpp"}

# Line-anchored, so an include inside a comment or a raw string literal never matches.
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"](little_loops/[^>"]+)[>"]')
PRAGMA_ONCE_RE = re.compile(r"^\s*#\s*pragma\s+once\b")
BANNER_RE = re.compile(r"^// (little_loops — |SPDX-License-Identifier:)")
BREADCRUMB_RE = re.compile(r"^// #include <little_loops/")


class AmalgamationError(Exception):
    pass


def read_lines(rel):
    path = os.path.join(INCLUDE_DIR, rel)
    if not os.path.isfile(path):
        raise AmalgamationError(f"include/{rel}: file not found")
    with open(path, "r", encoding="utf-8", newline="") as f:
        text = f.read()
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def closure(rel):
    """Every little_loops header reachable from rel (rel included)."""
    seen, todo = set(), [rel]
    while todo:
        cur = todo.pop()
        if cur in seen:
            continue
        seen.add(cur)
        for number, line in enumerate(read_lines(cur), 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            if not os.path.isfile(os.path.join(INCLUDE_DIR, m.group(1))):
                raise AmalgamationError(
                    f"include/{cur}:{number}: includes <{m.group(1)}>, which does not exist")
            todo.append(m.group(1))
    return seen


def public_headers():
    found = []
    base = os.path.join(INCLUDE_DIR, "little_loops")
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith((".hpp", ".h")):
                full = os.path.join(dirpath, name)
                found.append(os.path.relpath(full, INCLUDE_DIR).replace(os.sep, "/"))
    return sorted(found)


def guard_name(rel):
    return "LITTLE_LOOPS_AMALGAMATED_" + re.sub(r"[^A-Za-z0-9]", "_", rel[len("little_loops/"):]).upper()


def version():
    fields = {}
    for line in read_lines("little_loops/version.hpp"):
        m = re.match(r"#define LITTLE_LOOPS_VERSION_(MAJOR|MINOR|PATCH) (\d+)", line)
        if m:
            fields[m.group(1)] = m.group(2)
    return "{MAJOR}.{MINOR}.{PATCH}".format(**fields)


class Amalgamator:
    """Inlines one entry header. `core` maps core parts to the include that replaces them
    (None while building the core itself); `extras` stay as plain includes."""

    def __init__(self, entry, core_parts, extras, remap):
        self.entry = entry
        self.core_parts = core_parts
        self.extras = extras
        self.remap = remap
        self.visited = set()
        self.core_included = False
        self.out = []
        self.inlined = []

    def run(self):
        self.visited.add(self.entry)
        self.emit_file(self.entry, root=True)
        return self.out

    def emit_file(self, rel, root):
        numbered = list(enumerate(read_lines(rel), 1))
        while numbered and BANNER_RE.match(numbered[0][1]):
            numbered.pop(0)
        if not root:  # parts lose `#pragma once` and their leading/trailing blank lines
            numbered = [(n, line) for n, line in numbered if not PRAGMA_ONCE_RE.match(line)]
            while numbered and not numbered[0][1].strip():
                numbered.pop(0)
            while numbered and not numbered[-1][1].strip():
                numbered.pop()
        expected = None  # line number the compiler assumes for the next emitted line
        for number, line in numbered:
            if self.remap and number != expected:
                self.out.append(f'#line {number} "{os.path.join(INCLUDE_DIR, rel)}"')
            expected = number + 1
            m = INCLUDE_RE.match(line)
            if not m:
                self.out.append(line)
                continue
            self.emit_include(m.group(1), line)
            expected = None

    def emit_include(self, target, original):
        if self.core_parts is not None and target in self.core_parts:
            if not self.core_included:
                self.core_included = True
                self.out.append(f"#include <{CORE}>")
            else:
                self.out.append(f"// #include <{target}> (in <{CORE}>)")
            return
        if target in self.extras and target != self.entry:
            self.out.append(original.strip())
            return
        if target in self.visited:
            self.out.append(f"// #include <{target}> (already inlined above)")
            return
        self.visited.add(target)
        self.inlined.append(target)
        self.out.append(f"// #include <{target}>")
        guarded = self.core_parts is not None
        if guarded:
            self.out.append(f"#ifndef {guard_name(target)}")
            self.out.append(f"#define {guard_name(target)}")
        self.emit_file(target, root=False)
        if guarded:
            self.out.append(f"#endif  // {guard_name(target)}")
        self.out.append(f"// end of <{target}>")


def banner(entry, core):
    what = ("the core: every part of <little_loops/fsm.hpp>" if core else
            f"opt-in adapter <{entry}>; needs the single <{CORE}> next to it")
    return [
        f"// little_loops {version()} — single-header distribution, {what}",
        "// Generated by tools/amalgamate.py from include/ — do not edit; edit include/ and run",
        "// `python3 tools/amalgamate.py` instead.",
        "// SPDX-License-Identifier: MIT",
        "",
    ]


def sanity_check(entry, text, extras):
    allowed = set(extras)
    if entry != CORE:
        allowed.add(CORE)
    for number, line in enumerate(text.split("\n"), 1):
        m = INCLUDE_RE.match(line)
        if m and not BREADCRUMB_RE.match(line) and m.group(1) not in allowed:
            raise AmalgamationError(
                f"single_include/{entry}:{number}: <{m.group(1)}> was left as an include")


def generate(remap=False):
    """Returns ({relative output path: text}, {part: the single header that holds it})."""
    if not os.path.isfile(os.path.join(INCLUDE_DIR, CORE)):
        raise AmalgamationError(f"include/{CORE} is missing")
    core_parts = closure(CORE)
    extras = [h for h in public_headers()
              if h not in core_parts and "/detail/" not in h and not h.startswith(tuple(UMBRELLAS))]
    for extra in extras:
        closure(extra)
    for extra in extras:
        if not extra.startswith(KNOWN_ADAPTERS):
            print(f"amalgamate.py: note: <{extra}> is not reachable from <{CORE}>; it gets its "
                  "own single header (add it to fsm.hpp if it is a core part)", file=sys.stderr)
    outputs, owner = {}, {}
    for entry in [CORE] + extras:
        amalgamator = Amalgamator(entry, None if entry == CORE else core_parts, extras, remap)
        text = "\n".join(banner(entry, entry == CORE) + amalgamator.run()).rstrip("\n") + "\n"
        if not remap:
            sanity_check(entry, text, extras)
        outputs[entry] = text
        for part in amalgamator.inlined:
            owner.setdefault(part, entry)
    return outputs, owner


def existing_outputs(directory):
    found = set()
    for dirpath, _, filenames in os.walk(directory):
        for name in filenames:
            full = os.path.join(dirpath, name)
            found.add(os.path.relpath(full, directory).replace(os.sep, "/"))
    return found


def regenerate_command():
    script = os.path.relpath(os.path.abspath(__file__), os.getcwd())
    output = os.path.relpath(OUTPUT_DIR, os.getcwd())
    return f"python3 {script} && git add {output}/"


def check(outputs):
    stale = []
    for rel, text in sorted(outputs.items()):
        path = os.path.join(OUTPUT_DIR, rel)
        try:
            with open(path, "rb") as f:
                current = f.read()
        except OSError:
            stale.append(f"single_include/{rel} is missing")
            continue
        if current != text.encode("utf-8"):
            stale.append(f"single_include/{rel} differs from what include/ generates")
    for rel in sorted(existing_outputs(OUTPUT_DIR) - set(outputs)):
        stale.append(f"single_include/{rel} is no longer generated (delete it)")
    if not stale:
        print(f"single_include/ is up to date ({len(outputs)} headers)")
        return 0
    for line in stale:
        print(f"::error file=single_include::{line}", file=sys.stderr)
    print("Amalgamation required! The single header is stale. Regenerate and commit it:\n"
          f"    {regenerate_command()}", file=sys.stderr)
    return 1


def write(outputs, directory):
    for rel in sorted(existing_outputs(directory) - set(outputs)):
        os.remove(os.path.join(directory, rel))
    for rel, text in sorted(outputs.items()):
        path = os.path.join(directory, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(text.encode("utf-8"))
    shown = os.path.relpath(directory, ROOT) if directory.startswith(ROOT) else directory
    print(f"wrote {len(outputs)} headers to {shown}/: " + ", ".join(sorted(outputs)))


def write_shims(directory, owner):
    for part, entry in sorted(owner.items()):
        path = os.path.join(directory, part)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = f"// forwarding header for tests against single_include/\n#include <{entry}>\n"
        try:
            with open(path, "rb") as f:
                if f.read() == text.encode("utf-8"):
                    continue
        except OSError:
            pass
        with open(path, "wb") as f:
            f.write(text.encode("utf-8"))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="compare with single_include/ and exit 1 when stale")
    mode.add_argument("--shims", metavar="DIR",
                      help="write forwarding headers for every inlined part into DIR")
    mode.add_argument("--remap", metavar="DIR",
                      help="write the headers with #line directives into DIR (debugging)")
    args = parser.parse_args(argv)
    try:
        outputs, owner = generate(remap=bool(args.remap))
    except AmalgamationError as e:
        print(f"amalgamate.py: error: {e}", file=sys.stderr)
        return 2
    if args.check:
        return check(outputs)
    if args.shims:
        write_shims(args.shims, owner)
        return 0
    write(outputs, os.path.abspath(args.remap) if args.remap else OUTPUT_DIR)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
