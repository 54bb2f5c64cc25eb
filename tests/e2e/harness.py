# little_loops — end-to-end test helpers: run ll-loop as a process and check what it does
# SPDX-License-Identifier: MIT
"""Tiny stdlib-only harness for the ll-loop end-to-end tests.

Environment (set by tests/e2e.cmake):
  LL_LOOP        path of the ll-loop executable
  LL_SOURCE_DIR  the project's source directory (for examples/loops)

Each test script defines ``test_*`` functions and calls ``main()``; a failing check raises
``AssertionError`` with a message that shows the command, its exit code and its output.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

LL_LOOP = os.environ.get("LL_LOOP", "")
SOURCE_DIR = Path(os.environ.get("LL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
EXAMPLES = SOURCE_DIR / "examples" / "loops"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


class Result:
    """What a finished ll-loop process did."""

    def __init__(self, args, code, out, err, seconds):
        self.args, self.code, self.out, self.err, self.seconds = args, code, out, err, seconds

    def describe(self) -> str:
        return (f"$ ll-loop {' '.join(self.args)}\n(exit {self.code}, {self.seconds:.2f}s)\n"
                f"--- stdout ---\n{self.out[-4000:]}\n--- stderr ---\n{self.err[-4000:]}")

    def json(self):
        try:
            return json.loads(self.out)
        except json.JSONDecodeError as e:
            raise AssertionError(f"stdout is not JSON ({e})\n{self.describe()}") from None


def base_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env["LC_ALL"] = "C.UTF-8"
    if extra:
        env.update(extra)
    return env


def ll(*args, cwd=None, env=None, timeout=20, stdin=None) -> Result:
    """Runs ll-loop to completion and returns its Result."""
    start = time.monotonic()
    proc = subprocess.run([LL_LOOP, *map(str, args)], cwd=cwd, env=base_env(env),
                          capture_output=True, text=True, timeout=timeout, input=stdin)
    return Result([str(a) for a in args], proc.returncode, proc.stdout, proc.stderr,
                  time.monotonic() - start)


def spawn(*args, cwd=None, env=None) -> subprocess.Popen:
    """Starts ll-loop in the background (own session, so signals hit only it)."""
    return subprocess.Popen([LL_LOOP, *map(str, args)], cwd=cwd, env=base_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


class Skip(Exception):
    """Raised by a test that cannot run here; main() reports it as SKIP with the reason."""


def expect(cond, message, result: Result | None = None):
    if not cond:
        raise AssertionError(message + ("\n" + result.describe() if result else ""))


def expect_exit(result: Result, code: int):
    expect(result.code == code, f"expected exit {code}, got {result.code}", result)


def expect_in(needle: str, haystack: str, result: Result | None = None, what="output"):
    expect(needle in haystack, f"expected {needle!r} in {what}", result)


def wait_for(predicate, timeout=8.0, interval=0.02, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


# A loop whose check fails until its fix creates `ready` (shared by the verb tests).
CHECK_FIX = """\
name: check-fix
initial: check
states:
  check:
    action: test -f ready
    on_success: done
    on_failure: fix
    on_error: broken
  fix:
    action: touch ready
    next: check
  done:
    terminal: true
  broken:
    terminal: true
    failure: true
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def pids_with_marker(marker: str) -> list[int]:
    """PIDs of live processes whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if marker in cmd and ") Z " not in stat:
            found.append(int(entry.name))
    return found


class Workdir:
    """A temporary directory that is also the cwd for ll-loop (so .loops/ lands in it)."""

    def __enter__(self) -> Path:
        self.path = Path(tempfile.mkdtemp(prefix="ll_e2e_"))
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)
        return False


def main():
    """Runs every test_* function of the calling script (or those named on the command line)."""
    module = sys.modules["__main__"]
    if not LL_LOOP or not os.access(LL_LOOP, os.X_OK):
        print(f"LL_LOOP does not name an executable: {LL_LOOP!r}", file=sys.stderr)
        sys.exit(1)
    wanted = set(sys.argv[1:])
    tests = [(n, f) for n, f in vars(module).items()
             if n.startswith("test_") and callable(f) and (not wanted or n in wanted)]
    failures = 0
    for name, fn in tests:
        start = time.monotonic()
        try:
            fn()
            print(f"PASS {name} ({time.monotonic() - start:.2f}s)", flush=True)
        except Skip as why:
            print(f"SKIP {name}: {why}", flush=True)
        except Exception:  # noqa: BLE001 - report every failure, keep going
            failures += 1
            print(f"FAIL {name} ({time.monotonic() - start:.2f}s)", flush=True)
            traceback.print_exc()
    print(f"{len(tests) - failures}/{len(tests)} passed")
    sys.exit(1 if failures or not tests else 0)


__all__ = ["EXAMPLES", "FIXTURES", "Result", "Skip", "Workdir", "expect", "expect_exit", "expect_in",
           "lines", "ll", "main", "pids_with_marker", "signal", "spawn", "wait_for", "write"]
