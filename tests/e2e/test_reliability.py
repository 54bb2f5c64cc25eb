#!/usr/bin/env python3
# little_loops — e2e: a journal that cannot be written, size limits, cut output, small defects
# SPDX-License-Identifier: MIT
import json
import os
import shutil
import signal
import subprocess
import time

from harness import LL_LOOP, Workdir, base_env, expect, expect_exit, expect_in, ll, main, spawn, wait_for, write

# A loop of `n` counted steps: each `count` appends a line to `ran` (to see what ran twice).
COUNTER = """\
name: {name}
initial: count
max_iterations: {n}
states:
  count:
    action: echo {pad} >> ran; echo x
    next: count
  done:
    terminal: true
"""


def counter(wd, n=30, name="counter", pad="x"):
    return write(wd / f"{name}.yaml", COUNTER.format(name=name, n=n, pad=pad))


def test_a_state_file_that_cannot_be_written_stops_the_run_with_exit_3():
    with Workdir() as wd:
        loop = counter(wd)
        (wd / "j" / "counter.state.json" / "x").mkdir(parents=True)
        r = ll("run", loop, "--journal-dir", wd / "j", cwd=wd)
        expect_exit(r, 3)
        expect_in("cannot journal the run, so it stops before its next step", r.err, r)
        ran = len((wd / "ran").read_text().splitlines())
        # The state file is written by a background thread: its failure is seen a few
        # boundaries later (the checkpoint log still holds each boundary); never 30.
        expect(ran < 30, f"the run went on: {ran} steps", r)


def test_an_action_that_renders_past_the_argument_limit_is_an_error_at_once():
    with Workdir() as wd:
        action = "echo " + "${captured.big.output}" * 1000
        loop = write(wd / "render.yaml", f"""\
name: render
initial: make
states:
  make:
    action: head -c 10485760 /dev/zero | tr '\\0' x
    capture: big
    next: use
  use:
    action: '{action}'
    on_success: done
    on_error: failed
  done:
    terminal: true
  failed:
    terminal: true
    failure: true
""")
        r = ll("run", loop, cwd=wd, timeout=30)
        expect_exit(r, 2)
        expect(r.seconds < 10, f"took {r.seconds:.1f}s", r)
        expect_in("renders to more than 131071 bytes", r.out + r.err, r)


def test_sigterm_is_honoured_while_big_values_are_rendered():
    with Workdir() as wd:
        loop = write(wd / "spin.yaml", """\
name: spin
initial: make
max_iterations: 1000
states:
  make:
    action: head -c 10485760 /dev/zero | tr '\\0' x
    capture: big
    next: use
  use:
    action: 'echo ${captured.big.output}${captured.big.output}${captured.big.output}'
    on_error: make
    next: make
  done:
    terminal: true
""")
        p = spawn("run", loop, cwd=wd)
        time.sleep(1.5)
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            raise AssertionError("SIGTERM was not honoured within 10 s")
        expect(p.returncode == 1, f"exit {p.returncode}")


def test_cut_output_is_said_and_not_misjudged():
    with Workdir() as wd:
        loop = write(wd / "cut.yaml", """\
name: cut
initial: big
states:
  big:
    action: head -c 2000000 /dev/zero | tr '\\0' a; echo NEEDLE; head -c 2000000 /dev/zero | tr '\\0' b
    evaluate:
      type: output_contains
      pattern: NEEDLE
    on_success: done
    on_failure: missed
    on_error: cut
  done:
    terminal: true
  missed:
    terminal: true
    failure: true
  cut:
    terminal: true
    failure: true
""")
        r = ll("run", loop, "--output-limit", str(1 << 20), cwd=wd, timeout=30)
        expect_exit(r, 2)
        expect_in("output cut at 1 MiB; use --output-limit", r.out, r)
        expect_in("Loop completed: cut", r.out, r)
        events = [json.loads(line) for line in (wd / ".loops" / ".running" / "cut.events.jsonl").read_text().splitlines()]
        done = [e for e in events if e["event"] == "action_complete"][0]
        expect(done.get("output_truncated") is True and done.get("output_limit") == 1 << 20, f"event: {done}")
        ev = [e for e in events if e["event"] == "evaluate"][0]
        expect(ev["verdict"] == "error" and ev.get("output_truncated") is True, f"evaluate: {ev}")


def test_an_unreadable_event_log_is_an_error():
    with Workdir() as wd:
        loop = counter(wd, n=2)
        expect_exit(ll("run", loop, cwd=wd), 1)  # max_iterations
        log = wd / ".loops" / ".running" / "counter.events.jsonl"
        os.chmod(log, 0)
        prefix = []
        if os.geteuid() == 0:  # root reads any file: run as nobody
            if not shutil.which("setpriv"):
                print("  SKIPPED: root, and no setpriv to drop privileges")
                return
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            os.chmod(wd, 0o755)
        for verb in ("history", "status"):
            p = subprocess.run([*prefix, LL_LOOP, verb, "counter"], cwd=wd, env=base_env(),
                               capture_output=True, text=True, timeout=20)
            expect(p.returncode == 1, f"{verb}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
            expect("Permission denied" in p.stderr, f"{verb}: {p.stderr}")


def test_loops_that_share_journal_files_are_named():
    with Workdir() as wd:
        slow = write(wd / "ab.yaml", """\
name: a/b
initial: wait
scope: [one]
states:
  wait:
    action: sleep 5
    next: done
  done:
    terminal: true
""")
        other = write(wd / "a_b.yaml", """\
name: a_b
initial: go
scope: [two]
states:
  go:
    action: "true"
    next: done
  done:
    terminal: true
""")
        p = spawn("run", slow, cwd=wd)
        try:
            wait_for(lambda: (wd / ".loops" / ".running" / "a_b.state.json").exists() or
                     any((wd / ".loops" / ".running").glob("a_b.state.*.jsonl")), what="a/b to start")
            r = ll("run", other, cwd=wd)
            expect_exit(r, 1)
            expect_in("Loop already running: a/b, whose journal files loop a_b shares", r.err, r)
        finally:
            p.kill()
            p.wait()


def test_validate_refuses_a_nul_in_an_action():
    with Workdir() as wd:
        loop = write(wd / "nul.json", '{"name": "nul", "initial": "a", "states": {"a": {"action": '
                     '"echo a\\u0000b", "next": "done"}, "done": {"terminal": true}}}')
        r = ll("validate", loop, cwd=wd)
        expect_exit(r, 1)
        expect_in("NUL byte", r.out + r.err, r)


def test_a_repeated_template_warning_is_printed_once_with_its_count():
    with Workdir() as wd:
        action = "echo ${context.x}; " * 1000
        loop = write(wd / "warn.yaml", f"""\
name: warn
initial: a
context:
  x: "1"
states:
  a:
    action: '{action}'
    next: done
  done:
    terminal: true
""")
        r = ll("validate", loop, cwd=wd)
        expect_exit(r, 0)
        both = r.out + r.err
        expect(both.count("pasted into the shell command unquoted") == 1, "one warning", r)
        expect_in("(found 1000 times)", both, r)


if __name__ == "__main__":
    main()
