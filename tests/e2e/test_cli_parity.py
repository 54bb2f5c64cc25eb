#!/usr/bin/env python3
# little_loops — e2e: where ll-loop's output follows the Python original's CLI (cli.py):
# the final summary line, .fsm.yaml name lookup, paths as typed, "Validation error:" and
# `run --dry-run`'s execution plan
# SPDX-License-Identifier: MIT
import json
import os
import re
import signal

from harness import (CHECK_FIX, Workdir, expect, expect_exit, expect_in, lines, ll, main,
                     spawn, wait_for, write)

# A goal paradigm spec: the check fails until the fix has created `flag`.
GOAL = """\
paradigm: goal
name: flagged
goal: the flag file exists
tools:
  - test -f flag
  - touch flag
max_iterations: 6
"""

DURATION = r"\d+(\.\d)?s|\d+m \d+s"


def summary_lines(result):
    """The lines from the final summary on (the last `Loop completed:` / `Resumed …` line)."""
    out = result.out.splitlines()
    starts = [i for i, line in enumerate(out)
              if line.startswith(("Loop completed: ", "Resumed and completed: "))]
    expect(starts, "a final summary line", result)
    return out[starts[-1]:]


def expect_summary(result, lead, final, iterations, extra):
    got = summary_lines(result)
    pattern = rf"{lead}: {re.escape(final)} \({iterations} iterations, ({DURATION})\)"
    expect(re.fullmatch(pattern, got[0]) is not None, f"summary line {got[0]!r} ~ {pattern}",
           result)
    expect(got[1:] == extra, f"lines after the summary: {got[1:]!r}, expected {extra!r}", result)


# ---------------------------------------------------------------------------------------
# 1. The final summary: `Loop completed: <final> (N iterations, T)` for every outcome

def test_summary_success_terminal():
    with Workdir() as wd:
        r = ll("run", write(wd / "cf.yaml", CHECK_FIX), cwd=wd)
        expect_exit(r, 0)
        expect_summary(r, "Loop completed", "done", 3, [])


def test_summary_failure_terminal():
    with Workdir() as wd:
        r = ll("run", write(wd / "f.yaml", CHECK_FIX.replace("test -f ready", "exit 7")), cwd=wd)
        expect_exit(r, 2)
        expect_summary(r, "Loop completed", "broken", 1, ["  \u2717 failure terminal"])
        expect("Loop failed" not in r.out, "the old wording is gone", r)


def test_summary_max_iterations():
    with Workdir() as wd:
        spin = write(wd / "spin.yaml", CHECK_FIX.replace("test -f ready", "exit 1")
                     .replace("touch ready", "exit 0"))
        r = ll("run", spin, "--max-iterations", "4", cwd=wd)
        expect_exit(r, 1)
        expect_summary(r, "Loop completed", "check", 4, ["  stopped by max_iterations"])
        expect("Loop stopped" not in r.out, "the old wording is gone", r)


def test_summary_timeout():
    with Workdir() as wd:
        slow = write(wd / "slow.yaml", """\
name: slowpoke
initial: a
timeout: 0.4
max_iterations: 1000
states:
  a:
    action: sleep 0.1
    next: a
  done:
    terminal: true
""")
        r = ll("run", slow, cwd=wd)
        expect_exit(r, 1)
        expect_summary(r, "Loop completed", "a", r"\d+", ["  stopped by timeout"])


def test_summary_error():
    with Workdir() as wd:
        unrouted = write(wd / "unrouted.yaml", """\
name: unrouted
initial: a
states:
  a:
    action: exit 1
    on_success: done
  done:
    terminal: true
""")
        r = ll("run", unrouted, cwd=wd)
        expect_exit(r, 1)
        expect_summary(r, "Loop completed", "a", 1, ["  \u2717 stopped by error"])
        expect_in('No valid transition from state "a" for verdict "failure"', r.err, r, "stderr")


def test_summary_handoff_then_resume():
    with Workdir() as wd:
        write(wd / ".loops" / "handing.yaml", """\
name: handing
initial: one
states:
  one:
    action: "echo 'CONTEXT_HANDOFF: carry on from here'"
    next: two
  two:
    action: echo two >> log
    next: done
  done:
    terminal: true
""")
        r = ll("run", "handing", cwd=wd)
        expect_exit(r, 1)
        expect_summary(r, "Loop completed", "one", 1, [
            "  context handoff: carry on from here",
            "  Resume with: ll-loop resume handing (continues at two)"])
        r = ll("resume", "handing", cwd=wd)
        expect_exit(r, 0)
        expect(r.out.startswith("Resuming from context handoff (iteration 1)...\n"
                                "Context: carry on from here\n\n"), "handoff preamble", r)
        expect_summary(r, "Resumed and completed", "done", 2, [])
        expect(lines(wd / "log") == ["two"], "two ran once", r)


LONG_STEP = """\
name: steps
initial: one
states:
  one:
    action: echo one >> log
    next: two
  two:
    action: echo two-start >> log; sleep 4.4321; echo two >> log
    next: three
  three:
    action: test -f never-there
    on_success: done
    on_failure: broken
  done:
    terminal: true
  broken:
    terminal: true
    failure: true
"""


def test_summary_interrupted_then_resumed_to_failure_terminal():
    with Workdir() as wd:
        write(wd / ".loops" / "steps.yaml", LONG_STEP)
        proc = spawn("run", "steps", cwd=wd)
        wait_for(lambda: "two-start" in lines(wd / "log"), what="the slow action")
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=8)
        expect(proc.returncode == 1, f"interrupted run exits 1, got {proc.returncode}\n{out}\n{err}")
        tail = out.splitlines()[-3:]
        expect(re.fullmatch(rf"Loop completed: two \(2 iterations, ({DURATION})\)", tail[0])
               is not None and tail[1:] == ["  interrupted at two",
                                            "  Resume with: ll-loop resume steps"],
               f"interrupted summary: {tail!r}\n{out}\n{err}")
        # resume prints the original's `Resumed and completed:` line whatever the outcome,
        # then how it ended (here: a failure terminal, exit 2 as for run)
        r = ll("resume", "steps", cwd=wd)
        expect_exit(r, 2)
        expect_summary(r, "Resumed and completed", "broken", 4, ["  \u2717 failure terminal"])


def test_summary_colour_only_on_a_terminal():
    import pty
    import subprocess
    from harness import LL_LOOP, base_env
    with Workdir() as wd:
        # The name carries an OSC sequence: on a colour terminal only our own colour
        # sequences reach it.
        loop = write(wd / "f.yaml", CHECK_FIX.replace("test -f ready", "exit 7")
                     .replace("name: check-fix", 'name: "check\\e]0;t\\a"'))
        master, slave = pty.openpty()
        proc = subprocess.Popen([LL_LOOP, "run", str(loop)], cwd=wd,
                                env=base_env({"TERM": "xterm"}), stdout=slave,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        expect(proc.wait(timeout=10) == 2, "failure terminal exits 2 on a terminal too")
        text = b"".join(chunks).decode(errors="replace")
        expect("Loop completed: broken (1 iterations," in text, f"summary on a tty: {text!r}")
        expect("  \x1b[31m\u2717\x1b[0m failure terminal" in text, f"red cross: {text!r}")
        expect("Running loop: \x1b[1mcheck^[]0;t^G\x1b[0m" in text, f"name made visible: {text!r}")
        r = ll("run", loop, cwd=wd)
        expect("\x1b[" not in r.out, "no colour in a pipe", r)


def test_summary_quiet_and_json_unchanged():
    with Workdir() as wd:
        loop = write(wd / "f.yaml", CHECK_FIX.replace("test -f ready", "exit 7"))
        r = ll("run", loop, "--quiet", cwd=wd)
        expect_exit(r, 2)
        expect(r.out == "", "quiet prints nothing", r)
        r = ll("run", loop, "--json", cwd=wd)
        expect_exit(r, 2)
        expect(r.json()["final_state"] == "broken", "json result", r)


# ---------------------------------------------------------------------------------------
# 2. Name lookup: .loops/<name>.fsm.yaml before .loops/<name>.yaml

def test_compiled_loop_wins_over_its_spec():
    with Workdir() as wd:
        write(wd / ".loops" / "g.yaml", GOAL)
        r = ll("compile", ".loops/g.yaml", cwd=wd)
        expect_exit(r, 0)
        expect_in("Compiled to: .loops/g.fsm.yaml", r.out, r)
        compiled = wd / ".loops" / "g.fsm.yaml"
        text = compiled.read_text()
        expect("max_iterations: 6" in text, "compiled max_iterations", r)
        compiled.write_text(text.replace("max_iterations: 6", "max_iterations: 9"))

        r = ll("validate", "g", cwd=wd)
        expect_exit(r, 0)
        expect_in("Max iterations: 9", r.out, r)
        expect("paradigm file" not in r.out, "the compiled loop is not compiled again", r)
        r = ll("validate", "g", "--json", cwd=wd)
        expect(r.json()["path"].endswith("/.loops/g.fsm.yaml"), "validate --json path", r)
        r = ll("run", "g", "--dry-run", cwd=wd)
        expect_exit(r, 0)
        expect_in("Max iterations: 9", r.out, r)
        expect("Auto-compiling" not in r.out, "no compile for the .fsm.yaml", r)
        r = ll("show", "g", cwd=wd)
        expect_exit(r, 0)
        expect(re.search(r"^Source: .*/\.loops/g\.fsm\.yaml$", r.out, re.M) is not None,
               "show reads g.fsm.yaml", r)
        r = ll("simulate", "g", "--scenario", "all-fail", "--json", cwd=wd)
        expect_exit(r, 0)
        expect(r.json()["iterations"] == 9, "simulate reads g.fsm.yaml", r)
        r = ll("g", cwd=wd)  # shorthand for run
        expect_exit(r, 0)
        expect("Auto-compiling" not in r.out, "run reads g.fsm.yaml", r)
        expect_in("Running loop: flagged\nMax iterations: 9\n", r.out, r)
        r = ll("status", "flagged", "--json", cwd=wd)
        expect(r.json()["loop_path"].endswith("/.loops/g.fsm.yaml"), "journaled path", r)

        compiled.unlink()  # without the compiled file, the spec is found and compiled
        r = ll("validate", "g", cwd=wd)
        expect_exit(r, 0)
        expect_in("Compiling paradigm file for validation: .loops/g.yaml\n", r.out, r)
        expect_in("Max iterations: 6", r.out, r)


def test_compiled_json_wins_over_json_spec():
    with Workdir() as wd:
        spec = {"paradigm": "goal", "name": "jg", "goal": "flag", "max_iterations": 4,
                "tools": ["test -f flag", "touch flag"]}
        write(wd / ".loops" / "jg.json", json.dumps(spec))
        r = ll("compile", ".loops/jg.json", cwd=wd)
        expect_exit(r, 0)
        compiled = wd / ".loops" / "jg.fsm.json"
        doc = json.loads(compiled.read_text())
        doc["max_iterations"] = 11
        compiled.write_text(json.dumps(doc))
        r = ll("run", "jg", "--dry-run", cwd=wd)
        expect_exit(r, 0)
        expect_in("Max iterations: 11", r.out, r)


# ---------------------------------------------------------------------------------------
# 3. Paths as typed (or as resolved from a name), never made absolute

def test_paradigm_paths_as_typed():
    with Workdir() as wd:
        write(wd / "specs" / "goal.yaml", GOAL)
        write(wd / ".loops" / "named.yaml", GOAL.replace("flagged", "named"))
        for typed in ("specs/goal.yaml", "./specs/goal.yaml"):
            r = ll("run", typed, "--dry-run", cwd=wd)
            expect_exit(r, 0)
            expect(r.out.startswith(f"Auto-compiling paradigm file: {typed}\n"), typed, r)
            r = ll("validate", typed, cwd=wd)
            expect_exit(r, 0)
            expect(r.out.startswith(f"Compiling paradigm file for validation: {typed}\n"),
                   typed, r)
            expect("Compiled goal paradigm" not in r.out, "the old wording is gone", r)
        r = ll("run", "specs/goal.yaml", cwd=wd)
        expect_exit(r, 0)
        expect(r.out.startswith("Auto-compiling paradigm file: specs/goal.yaml\n"
                                "Running loop: flagged\n"), "real run", r)
        r = ll("run", "named", "--dry-run", cwd=wd)
        expect(r.out.startswith("Auto-compiling paradigm file: .loops/named.yaml\n"), "name", r)
        r = ll("validate", "named", cwd=wd)
        expect(r.out.startswith("Compiling paradigm file for validation: .loops/named.yaml\n"),
               "name", r)
        absolute = wd / "specs" / "goal.yaml"
        r = ll("run", absolute, "--dry-run", cwd=wd)
        expect(r.out.startswith(f"Auto-compiling paradigm file: {absolute}\n"), "absolute", r)
        r = ll("run", "specs/goal.yaml", "--quiet", cwd=wd)
        expect(r.out == "", "quiet hides the compile line", r)


def test_resume_of_a_paradigm_shows_the_path_as_typed():
    with Workdir() as wd:
        write(wd / "specs" / "slow_goal.yaml", GOAL.replace(
            "touch flag", "echo fix-start >> log; sleep 4.4322; touch flag"))
        proc = spawn("run", "specs/slow_goal.yaml", cwd=wd)
        wait_for(lambda: "fix-start" in lines(wd / "log"), what="the slow fix")
        os.kill(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=8)
        expect(proc.returncode == 1, f"interrupted: {out}")
        r = ll("resume", "flagged", cwd=wd)
        expect_exit(r, 0)
        expect(r.out.startswith("Auto-compiling paradigm file: specs/slow_goal.yaml\n"),
               "resume announces the compile with the path as typed", r)
        expect_summary(r, "Resumed and completed", "done", 4, [])


# ---------------------------------------------------------------------------------------
# 4. Load errors: `Validation error:` in run / simulate / resume (and show); validate keeps
#    `<name> is invalid:`

BAD = """\
name: bad
initial: start
states:
  start:
    action: echo hi
    on_success: nowhere
    on_failure: elsewhere
"""


def test_load_errors_wording():
    with Workdir() as wd:
        write(wd / "bad.yaml", BAD)
        for verb in ("run", "simulate", "show"):
            r = ll(verb, "bad.yaml", cwd=wd)
            expect_exit(r, 1)
            first, *rest = r.err.splitlines()
            expect(first.startswith("error: Validation error: "), f"{verb}: first line", r)
            expect(any("states.start.on_success" in line and "nowhere" in line for line in rest),
                   f"{verb}: per-diagnostic lines follow", r)
            expect(all(line.startswith("  bad.yaml:") for line in rest),
                   f"{verb}: diagnostics carry file:line:col", r)
            expect("is invalid" not in r.err, f"{verb}: not validate's wording", r)
        r = ll("validate", "bad.yaml", cwd=wd)
        expect_exit(r, 1)
        expect(r.err.startswith("error: bad.yaml is invalid: "), "validate keeps its wording", r)
        expect("Validation error" not in r.err, "validate: no Validation error", r)
        # a spec that does not compile: the compile is announced first, as in the original
        write(wd / "specs" / "badspec.yaml", "paradigm: goal\nname: g\n")
        r = ll("run", "specs/badspec.yaml", cwd=wd)
        expect_exit(r, 1)
        expect(r.out == "Auto-compiling paradigm file: specs/badspec.yaml\n", "announce", r)
        expect(r.err.startswith("error: Validation error: "), "spec error wording", r)
        expect_in("Goal paradigm requires", r.err, r, "stderr")
        r = ll("validate", "specs/badspec.yaml", cwd=wd)
        expect_exit(r, 1)
        expect(r.out == "Compiling paradigm file for validation: specs/badspec.yaml\n",
               "announce", r)
        expect(r.err.startswith("error: specs/badspec.yaml is invalid: "), "validate", r)


def test_resume_load_error_wording():
    with Workdir() as wd:
        loop = write(wd / ".loops" / "handing.yaml", """\
name: handing
initial: one
states:
  one:
    action: "echo 'CONTEXT_HANDOFF: later'"
    next: done
  done:
    terminal: true
""")
        r = ll("run", "handing", cwd=wd)
        expect_exit(r, 1)
        loop.write_text(BAD.replace("name: bad", "name: handing"))
        r = ll("resume", "handing", cwd=wd)
        expect_exit(r, 1)
        expect(r.err.startswith("error: Validation error: "), "resume wording", r)
        expect_in("  .loops/handing.yaml:", r.err, r, "stderr")
        # With no journal at all, an invalid loop is still reported as invalid, not as
        # "Nothing to resume" (the original loads and validates the loop first).
        write(wd / ".loops" / "never.yaml", "name: never\ninitial: nope\nstates:\n"
              "  done: {terminal: true}\n")
        r = ll("resume", "never", cwd=wd)
        expect_exit(r, 1)
        expect(r.err.startswith("error: Validation error: "), "resume of an invalid loop", r)


# ---------------------------------------------------------------------------------------
# 5. run --dry-run: the original's execution plan, nothing run, nothing journaled

PLAN_LOOP = """\
name: planner
initial: check
timeout: 3600
maintain: true
states:
  check:
    action: |
      touch ran-check; echo a very long action line that goes on and on past seventy characters
      echo second line
    evaluate:
      type: output_contains
      pattern: ok
    on_failure: fix
    on_success: done
    on_blocked: broken
    on_error: broken
    on_maintain: check
  fix:
    action: touch ran-fix
    next: check
  judge:
    action: echo 5
    evaluate:
      type: output_numeric
      operator: ge
      target: 3
    route:
      success: done
      failure: fix
      _error: broken
      _: check
  done:
    terminal: true
  broken:
    terminal: true
    failure: true
"""

PLAN_TEXT = """\
Execution plan for: planner

States:
  [check]
    action: touch ran-check; echo a very long action line that goes on and on past...
    evaluate: output_contains
    on_success -> done
    on_failure -> fix
    on_error -> broken
    on_blocked -> broken
    on_maintain -> check
  [fix]
    action: touch ran-fix
    next -> check
  [judge]
    action: echo 5
    evaluate: output_numeric
    route:
      success -> done
      failure -> fix
      _error -> broken
      _ -> check
  [done] [TERMINAL]
  [broken] [TERMINAL] [FAILURE]

Initial state: check
Max iterations: 50
Timeout: 3600s
"""


def test_dry_run_prints_the_plan():
    with Workdir() as wd:
        write(wd / "plan.yaml", PLAN_LOOP)
        r = ll("run", "plan.yaml", "--dry-run", cwd=wd)
        expect_exit(r, 0)
        expect(r.out == PLAN_TEXT, f"plan text:\n{r.out}\n--- expected ---\n{PLAN_TEXT}", r)
        expect(not (wd / ".loops").exists(), "no journal written", r)
        expect(not list(wd.glob("ran-*")), "no action ran", r)
        r = ll("run", "plan.yaml", "--dry-run", "-n", "7", "--quiet", cwd=wd)
        expect_exit(r, 0)
        expect(r.out == PLAN_TEXT.replace("Max iterations: 50", "Max iterations: 7"),
               "--max-iterations applies; --quiet keeps the plan", r)
        r = ll("run", "plan.yaml", "--dry-run", "--json", cwd=wd)
        expect_exit(r, 2)
        expect_in("--dry-run: not allowed with argument --json", r.err, r, "stderr")


def test_dry_run_check_fix_and_paradigm():
    with Workdir() as wd:
        write(wd / ".loops" / "cf.yaml", CHECK_FIX)
        r = ll("cf", "--dry-run", cwd=wd)
        expect_exit(r, 0)
        expect(r.out == """\
Execution plan for: check-fix

States:
  [check]
    action: test -f ready
    on_success -> done
    on_failure -> fix
    on_error -> broken
  [fix]
    action: touch ready
    next -> check
  [done] [TERMINAL]
  [broken] [TERMINAL] [FAILURE]

Initial state: check
Max iterations: 50
""", "check-fix plan", r)
        expect(not (wd / ".loops" / ".running").exists(), "no journal", r)
        expect(not (wd / "ready").exists(), "nothing ran", r)
        write(wd / "goal.yaml", GOAL)
        r = ll("run", "goal.yaml", "--dry-run", cwd=wd)
        expect_exit(r, 0)
        expect(r.out.startswith("Auto-compiling paradigm file: goal.yaml\n"
                                "Execution plan for: flagged\n\nStates:\n"), "paradigm plan", r)
        expect_in("Max iterations: 6\n", r.out, r)
        expect(not (wd / "flag").exists(), "nothing ran", r)


def test_dry_run_in_help():
    r = ll("run", "--help")
    expect_exit(r, 0)
    expect_in("--dry-run", r.out, r)
    expect_in(".loops/NAME.fsm.yaml", r.out, r)
    r = ll("--help")
    expect_in("--dry-run", r.out, r)



def test_the_originals_state_files():
    """State files the original wrote (its LoopState: loop_name, no pid, no snapshot) are read
    by list, status, stop and resume."""
    with Workdir() as wd:
        write(wd / ".loops" / "two-step.yaml", """\
name: two-step
initial: step1
states:
  step1:
    action: echo step1 >> log
    on_success: step2
  step2:
    action: echo "step2 after ${prev.state} ${captured.x.output}" >> log
    on_success: done
  done:
    terminal: true
""")
        running = wd / ".loops" / ".running"
        running.mkdir()
        def original(name, state, iteration, status, **more):
            record = {"loop_name": name, "current_state": state, "iteration": iteration,
                      "captured": {}, "prev_result": None, "last_result": None,
                      "started_at": "2026-01-15T10:00:00Z", "updated_at": "2026-01-15T10:05:00Z",
                      "status": status, **more}
            (running / f"{name}.state.json").write_text(json.dumps(record))
        original("loop-a", "check-errors", 3, "running")
        original("two-step", "step2", 1, "running",
                 captured={"x": {"output": "hi", "stderr": "", "exit_code": 0, "duration_ms": 5}},
                 prev_result={"output": "step1\n", "exit_code": 0, "state": "step1"})
        r = ll("list", "--running", cwd=wd)
        expect_exit(r, 0)
        expect_in("Journaled runs (running and finished):", r.out, r)
        expect_in("  loop-a   check-errors 3         running", r.out, r)
        r = ll("status", "loop-a", cwd=wd)
        expect_exit(r, 0)
        expect_in("Status: running", r.out, r)
        r = ll("stop", "loop-a", cwd=wd)
        expect_exit(r, 0)
        expect(ll("status", "loop-a", "--json", cwd=wd).json()["status"] == "interrupted",
               "stop marks it interrupted", r)
        r = ll("resume", "two-step", cwd=wd)
        expect_exit(r, 0)
        expect_in("Resumed and completed: done", r.out, r)
        expect(lines(wd / "log") == ["step2 after step1 hi"], "resumed at step2 with its data", r)
        events = [json.loads(x) for x in (running / "two-step.events.jsonl").read_text().splitlines()]
        expect(events[0]["event"] == "loop_resume" and events[0]["from_state"] == "step2"
               and events[0]["iteration"] == 1, "loop_resume event", r)


if __name__ == "__main__":
    main()
