#!/usr/bin/env python3
# little_loops — e2e fault suite: kill -9 at random boundaries, a full disk mid-run, starts at once
# SPDX-License-Identifier: MIT
"""Each test runs a loop of numbered steps to its end through faults, and checks the one
invariant that matters to a user: no finished step is lost, and none runs twice except the
one in flight when the fault struck (at most one per fault)."""
import os
import random
import shutil
import signal
import subprocess
import time

from harness import Workdir, expect, expect_exit, lines, ll, main, spawn, wait_for, write

STEPS = 40

# Step N logs "start N", works a little, logs "end N"; the 40th succeeds.
LOOP = """\
name: {name}
initial: step
max_iterations: 100
states:
  step:
    action: echo start ${{state.iteration}} >> {log}; sleep {sleep}; echo end ${{state.iteration}} >> {log}; test ${{state.iteration}} -ge {steps}
    on_success: done
    on_failure: step
  done:
    terminal: true
"""


def steps_loop(wd, name="steps", sleep="0.02", log="log"):
    return write(wd / f"{name}.yaml", LOOP.format(name=name, sleep=sleep, log=wd / log, steps=STEPS))


def check_invariant(wd, faults, log="log"):
    """Every step 1..STEPS finished, in order; re-runs at most one per fault."""
    entries = lines(wd / log)
    ends = [int(e.split()[1]) for e in entries if e.startswith("end ")]
    starts = [int(e.split()[1]) for e in entries if e.startswith("start ")]
    expect(set(ends) == set(range(1, STEPS + 1)), f"finished steps: {sorted(set(ends))}")
    first_ends = list(dict.fromkeys(ends))
    expect(first_ends == sorted(first_ends), f"steps finished out of order: {first_ends}")
    reruns = len(starts) - len(set(starts))
    expect(reruns <= faults, f"{reruns} steps ran twice after {faults} faults: {entries}")
    return reruns


def test_kill_9_at_random_boundaries_loses_nothing():
    rng = random.Random(int(os.environ.get("LL_FAULT_SEED", "32")))
    with Workdir() as wd:
        loop = steps_loop(wd, sleep="0.05")
        kills = 0
        verb = ["run", loop]
        finished = False
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and kills < 8:
            p = spawn(*verb, cwd=wd)
            time.sleep(rng.uniform(0.05, 0.4))
            if p.poll() is not None:  # finished before the kill
                finished = True
                break
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            kills += 1
            verb = ["resume", "steps"]
        if not finished:
            r = ll("resume", "steps", cwd=wd, timeout=30)
            expect(r.code == 0, f"resume after {kills} kills: exit {r.code}", r)
        expect(kills >= 3, f"only {kills} kills before the run ended")
        reruns = check_invariant(wd, kills)
        print(f"  {kills} kills, {reruns} steps re-run")


def test_a_full_disk_mid_run_loses_nothing():
    if os.geteuid() != 0 or not shutil.which("mount"):
        print("  SKIPPED: a tmpfs cannot be mounted (not root)")
        return
    with Workdir() as wd:
        disk = wd / "disk"
        disk.mkdir()
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"  SKIPPED: a tmpfs cannot be mounted: {p.stderr.strip()}")
            return
        try:
            # A long line per action output fills the journal's 64 KiB within a few steps.
            loop = write(wd / "steps.yaml", LOOP.format(name="steps", sleep="0", log=wd / "log", steps=STEPS)
                         .replace("test ${state.iteration}", "head -c 3000 /dev/zero | tr '\\0' x; test ${state.iteration}"))
            r = ll("run", loop, "--journal-dir", disk, cwd=wd)
            expect_exit(r, 3)
            subprocess.run(["mount", "-o", "remount,size=8m", str(disk)], check=True)
            r = ll("resume", "steps", "--journal-dir", disk, cwd=wd, timeout=30)
            expect_exit(r, 0)
            check_invariant(wd, 1)
        finally:
            subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_concurrent_starts_run_the_loop_once():
    with Workdir() as wd:
        loop = steps_loop(wd, sleep="0.01")
        procs = [spawn("run", loop, cwd=wd) for _ in range(6)]
        results = []
        for p in procs:
            out, err = p.communicate(timeout=40)
            results.append((p.returncode, err))
        winners = [r for r in results if r[0] == 0]
        expect(len(winners) == 1, f"exits: {[r[0] for r in results]}")
        for code, err in results:
            if code != 0:
                expect(code == 1 and "already running" in err, f"a refused start: exit {code}: {err}")
        check_invariant(wd, 0)


if __name__ == "__main__":
    main()
