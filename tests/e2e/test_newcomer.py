#!/usr/bin/env python3
# little_loops — e2e: a newcomer writes, runs and debugs loops with the README and --help only
# SPDX-License-Identifier: MIT
"""Each test is one row of what a new user hit, scripted as their session: what they wrote,
what they typed, and what ll-loop must tell them."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from harness import (LL_LOOP, SOURCE_DIR, Workdir, expect, expect_exit, expect_in, lines, ll,
                     main, pids_with_marker, spawn, wait_for, write)

# A prompt command that leaves a mark: anything sent to the LLM shows up as a file (the
# prompt itself is sh's $1, unused).
MARK_PROMPT = ["--prompt-command", "sh -c 'touch LLM_RAN' prompt"]


# --- high ------------------------------------------------------------------------------

def test_a_path_is_a_shell_command_and_llm_actions_are_marked():
    with Workdir() as wd:
        write(wd / "paths.yaml", """\
name: paths
initial: direct
context:
  script: /usr/bin/true
states:
  direct:
    action: /usr/bin/true
    on_success: rendered
    on_failure: failed
    on_error: failed
  rendered:
    action: ${context.script}
    on_success: done
    on_failure: failed
    on_error: failed
  done:
    terminal: true
  failed:
    terminal: true
    failure: true
""")
        r = ll("run", "paths.yaml", *MARK_PROMPT, cwd=wd)
        expect_exit(r, 0)
        expect(not (wd / "LLM_RAN").exists(), "a path (as written or rendered) never goes to the LLM", r)
        write(wd / "fix.yaml", """\
name: fix
initial: fix
states:
  fix:
    action: /ll:fix src
    next: done
  done:
    terminal: true
""")
        # validate and show name every state an LLM runs.
        r = ll("validate", "fix.yaml", cwd=wd)
        expect_exit(r, 0)
        expect_in("LLM action", r.out, r)
        expect_in("fix: slash command /ll:fix src", r.out, r)
        r = ll("validate", "paths.yaml", cwd=wd)
        expect("LLM action" not in r.out, "a path (as written or rendered) is not an LLM action", r)
        # A templated action is judged by what the loop's context renders it to.
        write(wd / "templated.yaml", """\
name: templated
initial: ask
context:
  cmd: /ll:check
states:
  ask:
    action: ${context.cmd}
    next: done
  done:
    terminal: true
""")
        r = ll("validate", "templated.yaml", cwd=wd)
        expect_in("ask: slash command /ll:check (from ${context.cmd})", r.out, r)
        r = ll("show", "fix.yaml", cwd=wd)
        expect_in("LLM actions", r.out, r)
        expect_in("fix: slash command /ll:fix src", r.out, r)
        r = ll("validate", "fix.yaml", "--json", cwd=wd)
        expect(r.json()["llm_actions"] == ["fix: slash command /ll:fix src"], "llm_actions", r)
        # --no-llm runs no prompt or slash command.
        r = ll("run", "fix.yaml", "--no-llm", *MARK_PROMPT, cwd=wd)
        expect(not (wd / "LLM_RAN").exists(), "--no-llm ran the slash command", r)
        expect_exit(r, 1)
        expect_in("not run", r.out + r.err, r)
        # Nor does a handoff start an agent session under --no-llm.
        write(wd / "relay.yaml", """\
name: relay
on_handoff: spawn
initial: work
states:
  work:
    action: "echo 'CONTEXT_HANDOFF: go on'"
    next: done
  done:
    terminal: true
""")
        r = ll("run", "relay.yaml", "--no-llm", *MARK_PROMPT, cwd=wd)
        expect_in("no session started (--no-llm)", r.err, r)
        time.sleep(0.2)
        expect(not (wd / "LLM_RAN").exists(), "--no-llm started an agent session", r)
        # Without it, it does run (the mark proves the check above can fail).
        r = ll("run", "fix.yaml", *MARK_PROMPT, cwd=wd)
        expect((wd / "LLM_RAN").exists(), "a slash command goes to the prompt command", r)


FAILING = """\
name: failing
initial: build
states:
  build:
    action: 'echo compiling; echo "boom: missing header" >&2; exit 2'
    on_success: done
    on_failure: done
  done:
    terminal: true
"""


def test_a_failing_command_shows_its_exit_code_and_stderr():
    with Workdir() as wd:
        write(wd / "failing.yaml", FAILING)
        r = ll("run", "failing.yaml", cwd=wd)
        expect_exit(r, 1)
        expect_in("exit 2", r.out, r)
        expect_in("stderr: boom: missing header", r.out, r)
        expect("\u2502 compiling" not in r.out, "stdout only with --verbose", r)
        r = ll("run", "failing.yaml", "--verbose", cwd=wd)
        expect_in("\u2502 compiling", r.out, r)
        expect_in("stderr: boom: missing header", r.out, r)
        r = ll("run", "failing.yaml", "--json", cwd=wd)
        failed = r.json()["last_failed_action"]
        expect(failed == {"state": "build", "exit_code": 2, "stderr_tail": ["boom: missing header"]},
               f"last_failed_action: {failed}", r)
        r = ll("history", "failing", cwd=wd)
        expect_exit(r, 0)
        expect_in("exit_code=2", r.out, r)
        expect_in("stderr: boom: missing header", r.out, r)
        events = [json.loads(x) for x in lines(wd / ".loops" / ".running" / "failing.events.jsonl")]
        done = [e for e in events if e["event"] == "action_complete"]
        expect(done and done[0]["stderr_preview"] == "boom: missing header", f"events: {done}")


def test_yaml_mistakes_are_explained():
    with Workdir() as wd:
        cases = {
            "colon.yaml": ("name: x\ninitial: a\nstates:\n  a:\n    action: echo said: hi\n    next: a\n",
                           "colon.yaml:5:13:", "quote this value or use a block scalar (>-)"),
            "tab.yaml": ("name: x\ninitial: a\nstates:\n  a:\n\taction: echo hi\n    next: a\n",
                         "tab.yaml:5:1:", "tabs cannot indent YAML"),
            "indent.yaml": ("name: x\ninitial: a\nstates:\n  a:\n    action: echo hi\n     next: a\n",
                            "indent.yaml:6:6:", "expected this key at column 5"),
        }
        for name, (text, where, hint) in cases.items():
            write(wd / name, text)
            r = ll("validate", name, cwd=wd)
            expect_exit(r, 1)
            expect_in(where, r.err, r)
            expect_in(hint, r.err, r)
            expect("illegal map value:" not in r.err and "end of map not found:" not in r.err,
                   "the parser's words come after the hint, not instead of it", r)


def test_output_pasted_into_a_shell_action_is_a_warning():
    with Workdir() as wd:
        write(wd / "paste.yaml", """\
name: paste
initial: ask
states:
  ask:
    action: echo hi
    capture: out
    next: say
  say:
    action: 'echo "said: ${captured.out.output}" ${prev.output} ${prev.exit_code}'
    next: done
  done:
    terminal: true
""")
        r = ll("validate", "paste.yaml", cwd=wd)
        expect_exit(r, 0)
        for ref in ("${captured.out.output:shell}", "${prev.output:shell}"):
            expect_in("write " + ref, r.out, r)
        expect("${prev.exit_code:shell}" not in r.out, "an exit code is safe", r)


# --- medium ----------------------------------------------------------------------------

def test_a_verdict_typo_is_an_error_and_unrouted_verdicts_are_warned():
    with Workdir() as wd:
        write(wd / "typo.yaml", """\
name: typo
initial: check
states:
  check:
    action: test -f ready
    on_sucess: done
    on_failure: done
  done:
    terminal: true
""")
        r = ll("validate", "typo.yaml", cwd=wd)
        expect_exit(r, 1)
        expect_in('exit_code can never produce the verdict "sucess" (did you mean "success"?)', r.err, r)
        write(wd / "unrouted.yaml", """\
name: unrouted
initial: check
states:
  check:
    action: test -f ready
    on_success: done
    on_failure: done
  done:
    terminal: true
""")
        r = ll("validate", "unrouted.yaml", cwd=wd)
        expect_exit(r, 0)
        expect_in('states.check: exit_code can give the verdict "error", which has no route', r.out, r)


def test_a_context_typo_is_an_error_unless_guarded():
    with Workdir() as wd:
        body = """\
name: ctx
initial: a
context:
  target: prod
states:
  a:
    action: echo {ref}
    next: done
  done:
    terminal: true
"""
        write(wd / "typo.yaml", body.replace("{ref}", "${context.targte:shell}"))
        r = ll("validate", "typo.yaml", cwd=wd)
        expect_exit(r, 1)
        expect_in('reads context.targte, which the loop does not define (did you mean "target"?)', r.err, r)
        for fine in ("${context.targte?}", "${context.targte:default=x}", "${context.run_dir:shell}"):
            write(wd / "fine.yaml", body.replace("{ref}", fine))
            r = ll("validate", "fine.yaml", cwd=wd)
            expect_exit(r, 0)


def test_a_second_ctrl_c_kills_the_action_and_says_so():
    with Workdir() as wd:
        # The action ignores SIGTERM, so the first Ctrl-C cannot end it within the grace.
        write(wd / "stubborn.yaml", """\
name: stubborn
initial: a
states:
  a:
    action: trap '' TERM; echo started > started; sleep 7.531; echo finished > finished
    next: done
  done:
    terminal: true
""")
        proc = spawn("run", "stubborn.yaml", cwd=wd)
        wait_for(lambda: (wd / "started").exists(), what="the action")
        os.kill(proc.pid, signal.SIGINT)
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=8)
        expect("killed the running action's process group" in err, f"said so: {err!r}")
        wait_for(lambda: not pids_with_marker("sleep 7.531"), timeout=3, what="the action to be gone")
        expect(not (wd / "finished").exists(), "the action did not finish")


def test_every_verb_finds_a_run_by_file_name_or_loop_name():
    with Workdir() as wd:
        write(wd / ".loops" / "deploy.yaml", """\
name: deploy-prod
initial: a
states:
  a:
    action: echo deployed
    next: done
  done:
    terminal: true
""")
        r = ll("run", "deploy", cwd=wd)
        expect_exit(r, 0)
        for name in ("deploy", "deploy-prod"):
            r = ll("status", name, cwd=wd)
            expect_exit(r, 0)
            expect_in("Loop: deploy-prod", r.out, r)
            r = ll("history", name, cwd=wd)
            expect_exit(r, 0)
            expect_in("loop_complete", r.out, r)


def test_resume_after_the_iteration_cap_says_how_to_go_on():
    with Workdir() as wd:
        write(wd / "capped.yaml", """\
name: capped
max_iterations: 3
initial: a
states:
  a:
    action: echo tick >> ticks
    next: a
  done:
    terminal: true
""")
        r = ll("run", "capped.yaml", cwd=wd)
        expect_exit(r, 1)
        r = ll("resume", "capped", cwd=wd)
        expect_exit(r, 1)
        expect_in("Resume with --max-iterations N (more than 3)", r.err, r)
        expect(len(lines(wd / "ticks")) == 3, "nothing ran", r)
        r = ll("resume", "capped", "--max-iterations", "5", cwd=wd)
        expect(len(lines(wd / "ticks")) == 5, f"two more steps: {lines(wd / 'ticks')}", r)


def test_a_stalled_convergence_run_fails():
    with Workdir() as wd:
        write(wd / "conv.yaml", """\
paradigm: convergence
name: conv
check: echo 5
toward: 0
using: echo fixing
""")
        r = ll("run", "conv.yaml", "--json", cwd=wd)
        expect_exit(r, 2)
        doc = r.json()
        expect(doc["final_state"] == "stalled" and doc["failure"] is True, f"result: {doc}", r)


def test_cmake_installs_ll_loop_as_a_component_and_honours_build_testing():
    build = Path(LL_LOOP).resolve().parents[1]
    if not (build / "CMakeCache.txt").exists() or shutil.which("cmake") is None:
        raise AssertionError(f"no CMake build tree above {LL_LOOP}")
    with Workdir() as wd:
        r = subprocess.run(["cmake", "--install", str(build), "--component", "ll-loop",
                            "--prefix", str(wd)], capture_output=True, text=True, timeout=60)
        expect(r.returncode == 0, f"install failed: {r.stderr}")
        expect((wd / "bin" / "ll-loop").exists(), f"bin/ll-loop installed: {r.stdout}")
        expect(not (wd / "include").exists(), "the ll-loop component installs only the program")
        tree = wd / "tree"
        r = subprocess.run(["cmake", "-S", str(SOURCE_DIR), "-B", str(tree), "-DBUILD_TESTING=OFF",
                            "-DLITTLE_LOOPS_TEST_DIST=OFF"], capture_output=True, text=True, timeout=120)
        expect(r.returncode == 0, f"configure failed: {r.stderr[-2000:]}")
        expect(not (tree / "tests").exists(), "BUILD_TESTING=OFF configures no tests")
        expect((tree / "examples").exists(), "the examples are still configured")


def test_simulate_fails_after_an_error():
    with Workdir() as wd:
        write(wd / "failing.yaml", FAILING)
        r = ll("simulate", "failing.yaml", "--scenario", "all-error", cwd=wd)
        expect_exit(r, 1)
        r = ll("simulate", "failing.yaml", "--scenario", "all-pass", cwd=wd)
        expect_exit(r, 0)


# --- low -------------------------------------------------------------------------------

def test_a_mistyped_command_gets_a_did_you_mean():
    with Workdir() as wd:
        write(wd / "f.yaml", FAILING)
        r = ll("runn", "f.yaml", cwd=wd)
        expect_exit(r, 2)
        expect_in("unknown command 'runn' (did you mean 'run'?)", r.err, r)
        r = ll("histroy", "f", cwd=wd)
        expect_in("(did you mean 'history'?)", r.err, r)
        # A loop whose name is close to a command still runs by the shorthand.
        write(wd / ".loops" / "lst.yaml", "name: lst\ninitial: a\nstates:\n  a:\n    terminal: true\n")
        r = ll("lst", cwd=wd)
        expect_exit(r, 0)


def test_history_reads_as_text_or_json_lines():
    with Workdir() as wd:
        write(wd / "failing.yaml", FAILING)
        ll("run", "failing.yaml", cwd=wd)
        r = ll("history", "failing", cwd=wd)
        expect("{'" not in r.out and "': " not in r.out, "no Python dict syntax", r)
        expect_in("state_enter", r.out, r)
        r = ll("history", "failing", "--json", cwd=wd)
        expect_exit(r, 0)
        events = [json.loads(x) for x in r.out.splitlines()]
        expect(events[0]["event"] == "loop_start" and events[-1]["event"] == "loop_complete",
               "JSON lines, one event each", r)


def test_list_running_says_what_it_lists_in_columns():
    with Workdir() as wd:
        write(wd / "failing.yaml", FAILING)
        ll("run", "failing.yaml", cwd=wd)
        write(wd / "longer-name.yaml", FAILING.replace("name: failing", "name: longer-name"))
        ll("run", "longer-name.yaml", cwd=wd)
        r = ll("list", "--running", cwd=wd)
        expect_exit(r, 0)
        out = r.out.splitlines()
        expect(out[0] == "Journaled runs (running and finished):", "honest heading", r)
        header = out[1]
        expect(header.split() == ["LOOP", "STATE", "ITERATION", "STATUS", "ELAPSED"], "column heads", r)
        for row in out[2:]:
            expect(row.index(row.split()[3]) == header.index("STATUS"), "aligned columns", r)


def test_output_contains_anchoring_is_explained_and_test_shows_the_match():
    with Workdir() as wd:
        body = """\
name: anchored
initial: check
states:
  check:
    action: printf 'building\\nPASS all\\n'
    evaluate:
      type: output_contains
      pattern: '{pattern}'
    on_success: done
    on_failure: done
    on_error: done
  done:
    terminal: true
"""
        write(wd / "a.yaml", body.replace("{pattern}", "^PASS"))
        r = ll("test", "a.yaml", cwd=wd)
        expect_in("Verdict: FAILURE", r.out, r)
        expect_in("write (?m)^PASS to anchor at each line", r.out, r)
        write(wd / "m.yaml", body.replace("{pattern}", "(?m)^PASS \\w+"))
        r = ll("test", "m.yaml", cwd=wd)
        expect_in("Verdict: SUCCESS", r.out, r)
        expect_in('matched: "PASS all" (line 2 of the output)', r.out, r)
        doc = (SOURCE_DIR / "docs" / "loop-format.md").read_text()
        expect("(?m)^PASS" in doc, "docs say it next to the evaluator")


# --- the JSON Schema -------------------------------------------------------------------

def test_the_json_schema_is_generated_and_the_committed_copy_is_fresh():
    r = ll("schema")
    expect_exit(r, 0)
    schema = r.json()
    committed = (SOURCE_DIR / "docs" / "loop.schema.json").read_text()
    expect(r.out == committed,
           "docs/loop.schema.json is stale: regenerate it with `ll-loop schema > docs/loop.schema.json`", r)
    loop_keys = schema["$defs"]["loop"]["properties"]
    for key in ("max_iterations", "max_steps", "on_max_steps", "dialect", "required_inputs"):
        expect(key in loop_keys, f"loop key {key} (both dialects)")
    expect("on_yes" in schema["$defs"]["state"]["properties"], "current-dialect state keys")
    doc = (SOURCE_DIR / "docs" / "loop-format.md").read_text()
    expect("# yaml-language-server: $schema=" in doc, "the editor line is documented")


if __name__ == "__main__":
    main()
