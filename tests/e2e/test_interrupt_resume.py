#!/usr/bin/env python3
# little_loops — e2e: Ctrl-C mid-action and kill -9 of ll-loop, then `resume` to completion
# SPDX-License-Identifier: MIT
import os
import signal
import time

from harness import (Workdir, expect, expect_exit, expect_in, lines, ll, main,
                     pids_with_marker, spawn, wait_for, write)

# Each action appends to log: "<state>" when it completes (and "two-start" when the slow
# action begins), so the log proves what ran and how often.
LOOP = """\
name: steps
initial: one
states:
  one:
    action: echo one >> log
    next: two
  two:
    action: echo two-start >> log; sleep {sleep}; echo two >> log
    next: three
  three:
    action: echo three >> log
    next: done
  done:
    terminal: true
"""


def start_and_wait_for_two(wd, sleep):
    write(wd / ".loops" / "steps.yaml", LOOP.format(sleep=sleep))
    proc = spawn("run", "steps", cwd=wd)
    wait_for(lambda: "two-start" in lines(wd / "log"), what="the slow action")
    return proc


def test_ctrl_c_mid_action_then_resume():
    with Workdir() as wd:
        proc = start_and_wait_for_two(wd, "4.321")
        t0 = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=8)
        expect(time.monotonic() - t0 < 4, "Ctrl-C stops promptly")
        expect(proc.returncode == 1, f"interrupted run exits 1, got {proc.returncode}\n{out}\n{err}")
        expect(not pids_with_marker("sleep 4.321"), "the action's process group was killed")
        r = ll("status", "steps", "--json", cwd=wd)
        expect(r.json()["status"] == "interrupted", "journaled as interrupted", r)
        r = ll("resume", "steps", cwd=wd)
        expect_exit(r, 0)
        expect_in("Resum", r.out, r)
        log = lines(wd / "log")
        expect(log.count("one") == 1, f"'one' ran once: {log}")
        expect(log.count("two") == 1, f"'two' completed once: {log}")
        expect(log.count("three") == 1, f"'three' ran once: {log}")
        expect(log[-1] == "three", f"order: {log}")
        r = ll("status", "steps", "--json", cwd=wd)
        expect(r.json()["status"] == "completed", "completed after resume", r)


def test_sigterm_is_graceful_too():
    with Workdir() as wd:
        proc = start_and_wait_for_two(wd, "4.322")
        os.kill(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=8)
        expect(proc.returncode == 1, f"exit 1, got {proc.returncode}")
        r = ll("status", "steps", "--json", cwd=wd)
        expect(r.json()["status"] == "interrupted", "journaled as interrupted", r)


def test_kill_9_then_resume():
    with Workdir() as wd:
        proc = start_and_wait_for_two(wd, "1.234")
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=5)
        # the orphaned action finishes on its own (nobody is left to kill it)
        wait_for(lambda: not pids_with_marker("sleep 1.234"), what="the orphaned action")
        r = ll("status", "steps", "--json", cwd=wd)
        expect_exit(r, 0)
        expect(r.json()["status"] in ("running", "interrupted", "crashed"),
               "a crashed run is visible", r)
        r = ll("resume", "steps", cwd=wd)
        expect_exit(r, 0)
        log = lines(wd / "log")
        expect(log.count("one") == 1, f"'one' (completed before the crash) ran once: {log}")
        expect(log.count("three") == 1, f"'three' ran once: {log}")
        expect(log[-1] == "three", f"order: {log}")


def test_kill_9_then_resume_stops_the_orphaned_action():
    # The action outlives its killed ll-loop; `resume` finds it by LL_LOOP_RUN_ID and stops
    # it before running the state again, so the two never run at once and the orphan never
    # finishes (one "two" in the log, from the resumed run).
    with Workdir() as wd:
        proc = start_and_wait_for_two(wd, "2.468")
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=5)
        expect(pids_with_marker("sleep 2.468"), "the orphaned action is still running")
        r = ll("resume", "steps", cwd=wd)
        expect_exit(r, 0)
        expect_in("the crashed run (pid %d) left running" % proc.pid, r.err, r)
        expect(not pids_with_marker("sleep 2.468"), "nothing is left running")
        log = lines(wd / "log")
        expect(log == ["one", "two-start", "two-start", "two", "three"],
               f"the orphan was stopped, the state ran again to completion: {log}")


def test_bytes_that_are_not_utf8_survive_a_stop_and_resume():
    # An action's output and a --context value in Latin-1: the journal (JSON text) keeps
    # their exact bytes, so the resumed run pastes what the stopped one would have.
    with Workdir() as wd:
        write(wd / "latin.yaml", """\
name: latin
initial: a
states:
  a:
    action: printf 'caf\\351 \\377'
    capture: word
    next: b
  b:
    action: echo b-start >> log; sleep 3.579; printf '%s' '${captured.word.output}' > word.bin; printf '%s' '${context.k}' > k.bin
    next: done
  done:
    terminal: true
""")
        proc = spawn("run", "latin.yaml", "--context", os.fsdecode(b"k=x\xffy"), cwd=wd)
        wait_for(lambda: "b-start" in lines(wd / "log"), what="the slow action")
        os.kill(proc.pid, signal.SIGINT)
        proc.communicate(timeout=8)
        expect(proc.returncode == 1, f"interrupted run exits 1, got {proc.returncode}")
        expect(not (wd / "word.bin").exists(), "b was stopped before it wrote")
        r = ll("resume", "latin", cwd=wd)
        expect_exit(r, 0)
        expect((wd / "word.bin").read_bytes() == b"caf\xe9 \xff",
               f"captured bytes: {(wd / 'word.bin').read_bytes()!r}", r)
        expect((wd / "k.bin").read_bytes() == b"x\xffy",
               f"context bytes: {(wd / 'k.bin').read_bytes()!r}", r)


if __name__ == "__main__":
    main()
