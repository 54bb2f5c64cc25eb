#!/usr/bin/env python3
# little_loops — end-to-end benchmark of `ll-loop run` (not a ctest: timing varies by machine)
# SPDX-License-Identifier: MIT
"""Measures, for a 200-step loop whose actions are `true`:

* per-iteration cost of `ll-loop run` vs a bare posix_spawn + wait of the same command,
  `bash -c true` (ll-loop's default shell; `--shell /bin/sh` measures both with `/bin/sh -c`), done
  in this process through libc (ctypes: no interpreter work between spawns beyond the call);
  the per-iteration cost is the marginal one: (200-step run − the same loop stopped by
  `--max-iterations 1`) / 199, so loading the 200-state file, start-up and exit cancel out;
* the same with the journal on tmpfs (/dev/shm) and on a disk directory (default: the
  benchmark's temporary directory; pass --disk-dir to choose);
* time from starting ll-loop to its first action (a `date +%s%N` action, minus the same
  command spawned directly);
* peak RSS of ll-loop (wait4 rusage).

Rounds alternate bare / tmpfs / disk / 1-step runs so that machine load hits all alike; the
medians are reported.

With --compare OTHER (another ll-loop build, e.g. of an older commit), every round also runs
both builds on tmpfs in random order and prints both per-round overheads: a before/after
comparison under the same machine load.

Usage: LL_LOOP=build/examples/ll-loop python3 tests/e2e/bench_run.py [--rounds N] [--disk-dir D]
                                                                     [--compare OTHER_LL_LOOP]
                                                                     [--shell PATH]
"""

import argparse
import ctypes
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = 200
SHELL = shutil.which("bash") or "/bin/bash"  # what the bare spawns run (see --shell)
EXTRA_ARGS = {}  # ll-loop executable -> arguments added to each of its runs

_libc = ctypes.CDLL(None, use_errno=True)
_libc.posix_spawn.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_void_p,
                              ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_void_p]
_libc.waitpid.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
_environ = ctypes.c_void_p.in_dll(_libc, "environ")


def chain_loop(path: Path, steps: int, action: str) -> Path:
    lines = [f"name: chain{steps}", "initial: s0", f"max_iterations: {steps + 10}", "states:"]
    for i in range(steps):
        lines += [f"  s{i}:", f"    action: {action}", f"    next: s{i + 1}"]
    lines += [f"  s{steps}:", "    terminal: true"]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_ll(ll, args, cwd, ok_codes=(0,)):
    t0 = time.perf_counter_ns()
    proc = subprocess.Popen([ll, *args, *EXTRA_ARGS.get(ll, [])], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter_ns() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if proc.returncode not in ok_codes:
        sys.exit(f"ll-loop failed ({proc.returncode}): {err}")
    return elapsed, usage.ru_maxrss


def bare_spawn(n):
    shell = SHELL.encode()
    argv = (ctypes.c_char_p * 4)(shell, b"-c", b"true", None)
    pid = ctypes.c_int()
    status = ctypes.c_int()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        if _libc.posix_spawn(ctypes.byref(pid), shell, None, None, argv, _environ) != 0:
            sys.exit("posix_spawn failed")
        _libc.waitpid(pid.value, ctypes.byref(status), 0)
    return time.perf_counter_ns() - t0


def fs_of(path: Path) -> str:
    best, fstype = "", "?"
    for line in Path("/proc/mounts").read_text().splitlines():
        parts = line.split()
        mnt = parts[1]
        if str(path).startswith(mnt) and len(mnt) > len(best):
            best, fstype = mnt, f"{parts[2]} on {parts[0]}"
    return fstype


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rounds", nargs="?", type=int, default=10)
    ap.add_argument("--rounds", dest="rounds_opt", type=int)
    ap.add_argument("--disk-dir", help="parent of the on-disk journal directory")
    ap.add_argument("--ll-loop", default=os.environ.get("LL_LOOP"))
    ap.add_argument("--compare", help="another ll-loop build, measured in the same rounds")
    ap.add_argument("--shell", help="run shell actions and the bare spawns with this shell "
                    "(ll-loop --shell-command 'SHELL -c'; default: ll-loop's default, bash)")
    opts = ap.parse_args()
    ll = opts.ll_loop or sys.exit("set LL_LOOP (or --ll-loop) to the ll-loop executable")
    global SHELL
    if opts.shell:
        SHELL = opts.shell
    for b in filter(None, (ll, opts.compare)):
        helped = subprocess.run([b, "run", "--help"], capture_output=True, text=True).stdout
        if "--shell-command" in helped:
            if opts.shell:
                EXTRA_ARGS[b] = ["--shell-command", f"{opts.shell} -c"]
        elif os.path.realpath(SHELL) != os.path.realpath("/bin/sh"):
            # builds before --shell-command ran shell actions with /bin/sh -c
            sys.exit(f"{b} runs shell actions with /bin/sh: pass --shell /bin/sh")
    rounds = opts.rounds_opt or opts.rounds

    with tempfile.TemporaryDirectory(prefix="ll_bench_") as tmp:
        wd = Path(tmp)
        loop200 = chain_loop(wd / "chain200.yaml", STEPS, "'true'")
        shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else wd
        shm_journal = Path(tempfile.mkdtemp(prefix="ll_bench_journal_", dir=shm))
        disk_journal = Path(tempfile.mkdtemp(prefix="ll_bench_journal_", dir=opts.disk_dir or wd))

        bare, disk, disk1, tmpfs, tmpfs1, rss = [], [], [], [], [], []
        compared = {b: ([], []) for b in ([ll, opts.compare] if opts.compare else [])}
        for _ in range(rounds):
            bare.append(bare_spawn(STEPS))
            for b in random.sample(list(compared), len(compared)):
                t, _ = run_ll(b, ["run", str(loop200), "--quiet", "--journal-dir", str(shm_journal)], wd)
                compared[b][0].append(t)
                t, _ = run_ll(b, ["run", str(loop200), "--quiet", "--max-iterations", "1",
                                  "--journal-dir", str(shm_journal)], wd, ok_codes=(1,))
                compared[b][1].append(t)
            t, r = run_ll(ll, ["run", str(loop200), "--quiet", "--journal-dir", str(disk_journal)], wd)
            disk.append(t)
            rss.append(r)
            t, _ = run_ll(ll, ["run", str(loop200), "--quiet", "--journal-dir", str(shm_journal)], wd)
            tmpfs.append(t)
            # the same loop stopped after one iteration (exit 1: max_iterations)
            t, _ = run_ll(ll, ["run", str(loop200), "--quiet", "--max-iterations", "1",
                               "--journal-dir", str(shm_journal)], wd, ok_codes=(1,))
            tmpfs1.append(t)
            t, _ = run_ll(ll, ["run", str(loop200), "--quiet", "--max-iterations", "1",
                               "--journal-dir", str(disk_journal)], wd, ok_codes=(1,))
            disk1.append(t)

        # time to first action: the action prints CLOCK_REALTIME ns; compare with the same
        # command spawned directly
        first = wd / "first.txt"
        probe = wd / "probe.yaml"
        probe.write_text(f"name: probe\ninitial: a\nstates:\n  a:\n    action: date +%s%N > {first}\n"
                         "    next: b\n  b:\n    terminal: true\n")
        ttfa, direct = [], []
        for _ in range(rounds):
            t0 = time.time_ns()
            run_ll(ll, ["run", str(probe), "--quiet", "--journal-dir", str(disk_journal)], wd)
            ttfa.append(int(first.read_text()) - t0)
            t0 = time.time_ns()
            pid = os.posix_spawn(SHELL, [SHELL, "-c", f"date +%s%N > {first}"], os.environ)
            os.waitpid(pid, 0)
            direct.append(int(first.read_text()) - t0)

        med = statistics.median
        per_bare = med(bare) / STEPS / 1e3
        per_shm = (med(tmpfs) - med(tmpfs1)) / (STEPS - 1) / 1e3
        per_disk = (med(disk) - med(disk1)) / (STEPS - 1) / 1e3

        def paired(full, one):
            # the overhead within each round (runs next to each other see the same machine
            # load), then the median and quartiles over the rounds
            ratios = sorted(((f - o) / (STEPS - 1)) / (b / STEPS) - 1 for f, o, b in zip(full, one, bare))
            q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratios[0]] * 3
            return f"per round: median {q[1] * 100:+.1f}%, quartiles {q[0] * 100:+.1f}%..{q[2] * 100:+.1f}%"
        print(f"ll-loop: {ll}")
        print(f"rounds: {rounds}, steps: {STEPS}, load average: {os.getloadavg()[0]:.2f}")
        print(f"bare posix_spawn+wait of {SHELL} -c true : {per_bare:8.1f} us/iteration")
        print(f"ll-loop run, journal on tmpfs              : {per_shm:8.1f} us/iteration "
              f"({(per_shm / per_bare - 1) * 100:+.1f}%; {paired(tmpfs, tmpfs1)})   [{fs_of(shm_journal)}]")
        print(f"ll-loop run, journal on disk               : {per_disk:8.1f} us/iteration "
              f"({(per_disk / per_bare - 1) * 100:+.1f}%; {paired(disk, disk1)})   [{fs_of(disk_journal)}]")
        print(f"ll-loop run, whole 200-step run            : {med(tmpfs) / 1e6:8.1f} ms (tmpfs), "
              f"{med(disk) / 1e6:.1f} ms (disk)")
        print(f"ll-loop load 200 states + 1 step + exit    : {med(tmpfs1) / 1e6:8.2f} ms (tmpfs), "
              f"{med(disk1) / 1e6:.2f} ms (disk)")
        print(f"time to first action (journal on disk)     : {(med(ttfa) - med(direct)) / 1e6:8.2f} ms "
              f"(ll-loop {med(ttfa) / 1e6:.2f} ms - direct spawn {med(direct) / 1e6:.2f} ms)")
        print(f"peak RSS of ll-loop (200 steps)            : {max(rss) / 1024:8.1f} MiB")
        for b, (full, one) in compared.items():
            print(f"compare, tmpfs, same rounds                : {paired(full, one)}   [{b}]")
        for d in (shm_journal, disk_journal):
            for f in d.iterdir():
                f.unlink()
            d.rmdir()


if __name__ == "__main__":
    main()
