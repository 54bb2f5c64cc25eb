#!/usr/bin/env python3
# little_loops — end-to-end benchmark of `ll-loop run` (not a ctest: timing varies by machine)
# SPDX-License-Identifier: MIT
"""Measures, for a 200-step loop whose actions are `true`:

* per-iteration cost of `ll-loop run` vs a bare posix_spawn + wait of `/bin/sh -c true`
  (done here with os.posix_spawn, i.e. in the measuring process, no shell in between);
* time from starting ll-loop to its first action (a `date +%s%N` action, minus the same
  command spawned directly);
* peak RSS of ll-loop (wait4 rusage).

Usage: LL_LOOP=build/examples/ll-loop python3 tests/e2e/bench_run.py [rounds]
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LL = os.environ.get("LL_LOOP") or sys.exit("set LL_LOOP to the ll-loop executable")
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
STEPS = 200


def chain_loop(path: Path, steps: int, action: str) -> Path:
    lines = [f"name: chain{steps}", "initial: s0", f"max_iterations: {steps + 10}", "states:"]
    for i in range(steps):
        lines += [f"  s{i}:", f"    action: {action}", f"    next: s{i + 1}"]
    lines += [f"  s{steps}:", "    terminal: true"]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_ll(args, cwd):
    t0 = time.perf_counter_ns()
    proc = subprocess.Popen([LL, *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter_ns() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if proc.returncode != 0:
        sys.exit(f"ll-loop failed ({proc.returncode}): {err}")
    return elapsed, usage.ru_maxrss


def bare_spawn(n):
    t0 = time.perf_counter_ns()
    for _ in range(n):
        pid = os.posix_spawn("/bin/sh", ["/bin/sh", "-c", "true"], os.environ)
        os.waitpid(pid, 0)
    return time.perf_counter_ns() - t0


def main():
    with tempfile.TemporaryDirectory(prefix="ll_bench_") as tmp:
        wd = Path(tmp)
        loop200 = chain_loop(wd / "chain200.yaml", STEPS, "'true'")
        loop1 = chain_loop(wd / "chain1.yaml", 1, "'true'")
        shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else wd
        shm_journal = Path(tempfile.mkdtemp(prefix="ll_bench_journal_", dir=shm))

        bare, ll_disk, ll_shm, ll_one, rss = [], [], [], [], []
        for _ in range(ROUNDS):
            bare.append(bare_spawn(STEPS))
            t, r = run_ll(["run", str(loop200), "--quiet"], wd)
            ll_disk.append(t)
            rss.append(r)
            t, _ = run_ll(["run", str(loop200), "--quiet", "--journal-dir", str(shm_journal)], wd)
            ll_shm.append(t)
            t, _ = run_ll(["run", str(loop1), "--quiet", "--journal-dir", str(shm_journal)], wd)
            ll_one.append(t)

        # time to first action: the action prints CLOCK_REALTIME ns; compare with the same
        # command spawned directly
        first = wd / "first.txt"
        probe = wd / "probe.yaml"
        probe.write_text(f"name: probe\ninitial: a\nstates:\n  a:\n    action: date +%s%N > {first}\n"
                         "    next: b\n  b:\n    terminal: true\n")
        ttfa, direct = [], []
        for _ in range(ROUNDS):
            t0 = time.time_ns()
            run_ll(["run", str(probe), "--quiet", "--journal-dir", str(shm_journal)], wd)
            ttfa.append(int(first.read_text()) - t0)
            t0 = time.time_ns()
            pid = os.posix_spawn("/bin/sh", ["/bin/sh", "-c", f"date +%s%N > {first}"], os.environ)
            os.waitpid(pid, 0)
            direct.append(int(first.read_text()) - t0)

        med = statistics.median
        per_bare = med(bare) / STEPS / 1e3
        # subtract the fixed start-up/teardown cost measured with a 1-step loop
        per_disk = (med(ll_disk) - med(ll_one)) / (STEPS - 1) / 1e3
        per_shm = (med(ll_shm) - med(ll_one)) / (STEPS - 1) / 1e3
        print(f"rounds: {ROUNDS}, steps: {STEPS}")
        print(f"bare posix_spawn+wait of /bin/sh -c true : {per_bare:8.1f} us/iteration")
        print(f"ll-loop run, journal on {shm}           : {per_shm:8.1f} us/iteration "
              f"({(per_shm / per_bare - 1) * 100:+.1f}%)")
        print(f"ll-loop run, journal in .loops/.running  : {per_disk:8.1f} us/iteration "
              f"({(per_disk / per_bare - 1) * 100:+.1f}%)")
        print(f"ll-loop run, whole 200-step run          : {med(ll_shm) / 1e6:8.1f} ms (journal on shm), "
              f"{med(ll_disk) / 1e6:.1f} ms (disk)")
        print(f"ll-loop start-up + 1 step + exit         : {med(ll_one) / 1e6:8.2f} ms")
        print(f"time to first action                     : {(med(ttfa) - med(direct)) / 1e6:8.2f} ms "
              f"(ll-loop {med(ttfa) / 1e6:.2f} ms - direct spawn {med(direct) / 1e6:.2f} ms)")
        print(f"peak RSS of ll-loop (200 steps)          : {max(rss) / 1024:8.1f} MiB")
        for f in shm_journal.iterdir():
            f.unlink()
        shm_journal.rmdir()


if __name__ == "__main__":
    main()
