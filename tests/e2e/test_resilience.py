#!/usr/bin/env python3
# little_loops — e2e: today's reference loops under simulate, and resilience across a kill -9
# SPDX-License-Identifier: MIT
"""Reference loops of little-loops HEAD (tests/fixtures/reference/loops/, with the library
files they import and inherit) run to a terminal under `ll-loop simulate --responses`, the
responses checked in under fixtures/reference_loops/. Then the design §6.6 promises that only
a real run can show: a run killed with SIGKILL between two retry attempts resumes with its
retry counters and its stall memory."""
import os
import signal
import time
from pathlib import Path

from harness import (SOURCE_DIR, Workdir, expect, expect_exit, expect_in, lines, ll, main,
                     spawn, wait_for, write)

LOOPS = SOURCE_DIR / "tests" / "fixtures" / "reference" / "loops"
RESPONSES = Path(__file__).resolve().parent / "fixtures" / "reference_loops"
ENV = {"LL_LOOP_PATH": str(LOOPS)}  # `from: lib/apo-base` inside lib/, as the reference's builtins

# loop: (extra arguments, terminated_by, final_state, iterations, what it exercises)
RUNS = {
    "apo-beam": ((), "terminal", "done", 8, "from: a library parent, output_contains on a capture"),
    "apo-contrastive": ((), "terminal", "done", 6, "a parent that inherits a parent"),
    "apo-textgrad": ((), "terminal", "done", 7, "gradient loop"),
    "rl-bandit": ((), "terminal", "done", 6, "convergence maximize: progress twice, then target"),
    "rl-rlhf": ((), "terminal", "done", 4, "output_numeric with on_yes/on_no"),
    "rl-policy": ((), "terminal", "done", 7, "import: lib/common.yaml, a convergence fragment"),
    "context-health-monitor": ((), "terminal", "done", 9, "action-less deciding states, a loop back"),
    "apo-opro": ((), "terminal", "done", 9, "a history of candidates, routed on a capture"),
    "apo-feedback-refinement": ((), "terminal", "done", 8, "an error route back to refine"),
    "p5js-sketch-generator": (("a braided particle field",), "terminal", "done", 10,
                              "positional input, diff_stall through a probe"),
    "rn-decompose": (("--context", "issue_id=ISS-7"), "terminal", "failed", 4,
                     "the reference's rate-limit keys: one retry, its wait skipped"),
    "incremental-refactor": (("--context", "test_cmd=pytest"), "error", "check_complete", 5,
                             "diff_stall, then an llm_structured state simulate cannot judge"),
}


def simulate(wd, loop, *args, responses=True):
    extra = ["--responses", RESPONSES / f"{loop}.json"] if responses else []
    return ll("simulate", LOOPS / f"{loop}.yaml", "--json", *extra, *args, cwd=wd, env=ENV)


def test_reference_loops_run_to_their_terminal():
    terminals = 0
    with Workdir() as wd:
        for loop, (args, how, final, steps, _why) in RUNS.items():
            r = simulate(wd, loop, *args)
            expect_exit(r, 1 if how == "error" else 0)
            doc = r.json()
            got = (doc["terminated_by"], doc["final_state"], doc["iterations"])
            expect(got == (how, final, steps), f"{loop}: {got} != {(how, final, steps)}", r)
            terminals += how == "terminal"
    expect(terminals >= 10, f"{terminals} loops reach a terminal")


def test_a_rate_limited_call_is_retried_and_its_wait_skipped():
    with Workdir() as wd:
        r = simulate(wd, "rn-decompose", "--context", "issue_id=ISS-7")
        doc = r.json()
        # the first retry waits the 30 s base plus half its 30 s jitter (simulate's jitter)
        expect(doc.get("skipped_waits") == {"count": 1, "seconds": 45.0}, "one wait skipped", r)
        r = ll("simulate", LOOPS / "rn-decompose.yaml", "--responses", RESPONSES / "rn-decompose.json",
               "--context", "issue_id=ISS-7", cwd=wd, env=ENV)
        expect_in("Policy: retry (rate_limit), attempt 1, wait 45.0s skipped", r.out, r)
        expect_in("Skipped waits: 1 (45s not slept)", r.out, r)


def test_a_probe_takes_no_turn_of_the_script():
    with Workdir() as wd:
        r = ll("simulate", LOOPS / "p5js-sketch-generator.yaml", "--responses",
               RESPONSES / "p5js-sketch-generator.json", "a braided particle field", cwd=wd, env=ENV)
        expect_exit(r, 0)
        expect_in("[SIMULATED] Probe: git diff --stat", r.out, r)
        expect_in("Would have executed 10 commands", r.out, r)


def test_backoff_is_reported_not_slept():
    with Workdir() as wd:
        r = ll("simulate", LOOPS / "worktree-health.yaml", "--json", "--scenario", "all-pass",
               "-n", "4", cwd=wd, env=ENV, timeout=10)
        expect_exit(r, 0)
        waits = r.json().get("skipped_waits", {})
        expect(waits.get("count", 0) >= 3 and waits["seconds"] == 300.0 * waits["count"],
               f"backoff 300 s skipped each step: {waits}", r)
        expect(r.seconds < 5, "nothing slept", r)


def test_validate_json_reports_the_policies():
    with Workdir() as wd:
        r = ll("validate", "--json", LOOPS / "rn-decompose.yaml", cwd=wd, env=ENV)
        expect_exit(r, 0)
        policies = r.json()["policies"]
        review = policies["states"]["run_size_review"]
        expect(review["catch"]["rate_limit"] == "rate_limit_diagnostic", "catch", r)
        expect(review["retry"][0] == {"on": ["rate_limit"], "interval": 30, "backoff_rate": 2,
                                      "jitter": 30, "max_attempts": 3, "built_in": True},
               f"short tier: {review['retry'][0]}", r)
        expect(review["retry"][1]["delays"] == [300, 900, 1800, 3600], "long tier", r)
        expect(policies["max_edge_revisits"] == 100 and policies["circuit"] is None, "caps", r)


def test_show_displays_the_rate_limit_policy():
    with Workdir() as wd:
        r = ll("show", LOOPS / "rn-decompose.yaml", cwd=wd, env=ENV)
        expect_exit(r, 0)
        expect_in("  run_size_review:\n    retry rate_limit: 30s \u00d72 (+\u226430s jitter), 3 attempts", r.out, r)
        expect_in("catch rate_limit\u2192rate_limit_diagnostic", r.out, r)
        expect_in("Max edge revisits: 100 (built in)", r.out, r)


# `watch` remembers the plan (action_stall); `call` fails with exit 3 and is retried twice,
# 2 s apart, then caught back to `watch`, which finds the plan unchanged: `stalled`. Killed
# during the first wait, the resumed run must neither start the retries again (3 calls in
# all) nor forget the plan (else `watch` says yes and `call` runs 3 more times).
KILLED = """\
name: resil
initial: watch
dialect: current
context: {plan: same}
states:
  watch:
    action: echo watch >> log
    evaluate: {type: action_stall, track: [context.plan], max_repeat: 1}
    on_yes: call
    on_no: stalled
  call:
    action: echo call >> log; exit 3
    retry:
      - on: [3]
        interval: 2
        backoff_rate: 1
        max_attempts: 2
    catch: {exit_code: watch}
    on_yes: done
    on_no: done
    on_error: done
  stalled: {terminal: true}
  done: {terminal: true}
"""


def test_kill_9_between_two_attempts_keeps_counters_and_stall_memory():
    with Workdir() as wd:
        write(wd / ".loops" / "resil.yaml", KILLED)
        proc = spawn("run", "resil", cwd=wd)
        wait_for(lambda: "call" in lines(wd / "log"), what="the first attempt")
        time.sleep(0.6)  # the attempt's boundary is saved; the 2 s wait has begun
        os.kill(proc.pid, signal.SIGKILL)  # inside the 2 s wait before the second attempt
        proc.communicate(timeout=5)
        expect(lines(wd / "log") == ["watch", "call"], f"killed before attempt 2: {lines(wd / 'log')}")
        r = ll("resume", "resil", cwd=wd, timeout=30)
        expect_exit(r, 0)
        log = lines(wd / "log")
        expect(log == ["watch", "call", "call", "call", "watch"], f"counters and memory kept: {log}", r)
        r = ll("status", "resil", "--json", cwd=wd)
        expect(r.json()["current_state"] == "stalled", "the stall memory ended it", r)



CIRCUIT = """\
name: circuit
initial: work
max_steps: 6
circuit:
  repeated_failure: {{window: 2, progress_paths: [out.txt]}}
states:
  work:
    action: "{action}; exit 1"
    on_yes: done
    on_no: work
    on_error: work
  done:
    terminal: true
"""


def test_progress_paths_keep_the_circuit_open_while_files_change():
    with Workdir() as wd:
        growing = write(wd / "growing.yaml", CIRCUIT.format(action="echo more >> out.txt"))
        r = ll("run", growing, "--json", cwd=wd)
        expect(r.json()["terminated_by"] == "max_iterations", "progress: no stall", r)
        still = write(wd / "still.yaml", CIRCUIT.format(action="true"))
        r = ll("run", still, "--json", cwd=wd)
        doc = r.json()
        expect(doc["terminated_by"] == "error" and "Stall detected" in (doc["error"] or ""),
               "no progress: the circuit trips", r)


if __name__ == "__main__":
    main()
