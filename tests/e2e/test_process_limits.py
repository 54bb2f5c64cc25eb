#!/usr/bin/env python3
# little_loops — e2e: grandchildren holding pipes, timeouts, and 100 MB of output
# SPDX-License-Identifier: MIT
import json
import os
import subprocess
import time

from harness import LL_LOOP, Workdir, base_env, expect, expect_exit, ll, main, pids_with_marker, write


def test_grandchild_keeping_the_pipe_open_does_not_block():
    with Workdir() as wd:
        loop = write(wd / "gc.yaml", """\
name: grandchild
initial: spawn
states:
  spawn:
    action: (sleep 31.111 &) ; echo parent-done
    capture: spawn
    timeout: 20
    on_success: done
    on_error: failed
  done:
    terminal: true
  failed:
    terminal: true
    failure: true
""")
        r = ll("run", loop, "--json", cwd=wd, timeout=15)
        expect(r.seconds < 5, f"did not wait for the grandchild ({r.seconds:.1f}s)", r)
        expect_exit(r, 0)
        expect(r.json()["captured"]["spawn"]["output"] == "parent-done", "output kept", r)
        expect(not pids_with_marker("sleep 31.111"), "leftover grandchild was killed")


def test_timeout_kills_the_whole_group():
    with Workdir() as wd:
        loop = write(wd / "to.yaml", """\
name: timeout
initial: slow
states:
  slow:
    action: sleep 32.222 & sleep 32.223; echo never
    timeout: 1
    on_success: done
    on_error: timed_out
  done:
    terminal: true
  timed_out:
    terminal: true
    failure: true
""")
        r = ll("run", loop, cwd=wd, timeout=15)
        expect_exit(r, 2)
        expect(r.seconds < 5, f"timed out cleanly ({r.seconds:.1f}s)", r)
        expect("timed out" in r.out, "the display says it timed out", r)
        expect(not pids_with_marker("sleep 32.22"), "no process of the group survived")


FLOOD = """\
name: big{size}
initial: flood
states:
  flood:
    action: head -c {size} /dev/zero | tr '\\0' x
    capture: flood
    next: done
  done:
    terminal: true
"""


def flood(wd, size, cap):
    """Runs a loop whose action prints `size` bytes; returns (seconds, peak RSS MiB, result).
    Each size is its own loop, so no run reads another's journal (a finished run's state file
    keeps its captured output, which the next run of that loop reads)."""
    loop = write(wd / f"big{size}.yaml", FLOOD.format(size=size))
    start = time.monotonic()
    proc = subprocess.Popen([LL_LOOP, "run", str(loop), "--json", "--output-limit", str(cap)],
                            cwd=wd, env=base_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - start
    expect(proc.returncode == 0, f"exit {proc.returncode}: {err.decode()[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, json.loads(out)


def test_100_mb_of_output_is_capped_without_growing_memory():
    with Workdir() as wd:
        cap = 1 << 20
        _, small_peak, _ = flood(wd, 4 * cap, cap)        # already past the cap
        seconds, peak, doc = flood(wd, 100_000_000, cap)  # 25 times more output
        captured = doc["captured"]["flood"]["output"]
        expect(len(captured) <= cap + 200, f"captured {len(captured)} bytes > cap {cap}")
        expect("truncated" in captured, "truncation marker present")
        print(f"  100 MB through a {cap >> 20} MiB cap: {seconds:.2f}s, peak RSS {peak:.1f} MiB "
              f"(4 MiB of output: {small_peak:.1f} MiB)")
        # Memory must not follow the output: 25x the output, (almost) the same peak. (An
        # absolute bound would depend on the build: ASan alone costs ~60 MiB.)
        expect(peak - small_peak < 8, f"peak RSS grew from {small_peak:.1f} to {peak:.1f} MiB")
        expect(peak < 256, f"peak RSS {peak:.1f} MiB")
        expect(seconds < 9, f"too slow: {seconds:.1f}s")


if __name__ == "__main__":
    main()
