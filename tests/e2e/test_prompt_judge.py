#!/usr/bin/env python3
# little_loops — e2e: a fake `claude` on PATH drives a prompt state and the command judge
# SPDX-License-Identifier: MIT
import json
import os

from harness import FIXTURES, LL_LOOP, Workdir, expect, expect_exit, expect_in, ll, main, wait_for, write

LOOP = """\
name: prompt-judge
initial: ask
max_iterations: 6
states:
  ask:
    action: Please write the word DONE into answer.txt
    action_type: prompt
    evaluate:
      type: llm_structured
      prompt: Did the agent write DONE into answer.txt?
    route:
      success: done
      failure: ask
      _error: broken
  done:
    terminal: true
  broken:
    terminal: true
    failure: true
"""


def fake_env(wd):
    path = f"{FIXTURES / 'fake_bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    return {"PATH": path, "FAKE_CLAUDE_LOG": str(wd / "claude.log")}


def test_prompt_action_and_judge_via_fake_claude():
    with Workdir() as wd:
        loop = write(wd / "prompt.yaml", LOOP)
        r = ll("run", loop, cwd=wd, env=fake_env(wd))
        expect_exit(r, 0)
        expect_in("(prompt) Please write the word DONE", r.out, r)
        expect_in("success", r.out, r)
        expect((wd / "answer.txt").read_text().strip() == "DONE", "the agent acted", r)
        calls = (wd / "claude.log").read_text().splitlines()
        expect(calls[0].startswith("action Please write") and calls[1] == "judge",
               f"one action then one judge call: {calls}", r)


def test_no_llm_makes_the_judge_fail_closed():
    with Workdir() as wd:
        loop = write(wd / "prompt.yaml", LOOP)
        r = ll("run", loop, "--no-llm", "--json", cwd=wd, env=fake_env(wd))
        expect_exit(r, 2)
        expect(r.json()["final_state"] == "broken", "error verdict → _error route", r)
        # --no-llm runs no LLM at all: neither the prompt action nor the judge.
        expect(not (wd / "claude.log").exists(), "claude was not called", r)


def test_missing_claude_is_an_error_verdict():
    with Workdir() as wd:
        loop = write(wd / "prompt.yaml", LOOP)
        r = ll("run", loop, "--json", "--prompt-command", "/nonexistent/claude -p",
               "--judge-command", "/nonexistent/claude -p", cwd=wd, env=fake_env(wd))
        expect_exit(r, 2)
        expect(r.json()["final_state"] == "broken", "unrunnable judge → error → broken", r)
        expect(not (wd / "claude.log").exists(), "the fake claude on PATH was not used", r)


QUOTED_LOOP = """\
name: quoted
initial: ask
max_iterations: 3
states:
  ask:
    action: the prompt
    action_type: prompt
    next: done
  done:
    terminal: true
"""


def test_prompt_command_words_follow_shell_quoting():
    with Workdir() as wd:
        loop = write(wd / "quoted.yaml", QUOTED_LOOP)
        (wd / "dir with space").mkdir()
        record = wd / "dir with space" / "record.sh"
        write(record, '#!/bin/sh\nfor a in "$@"; do printf \'<%s>\' "$a"; done > "$(dirname "$0")/argv.txt"\n')
        record.chmod(0o755)
        cmd = f"'{record}' --model \"big model\" it\\'s '' -p"
        r = ll("run", loop, "--prompt-command", cmd, cwd=wd)
        expect_exit(r, 0)
        argv = (wd / "dir with space" / "argv.txt").read_text()
        expect(argv == "<--model><big model><it's><><-p><the prompt>",
               f"argv words as a shell would split them: {argv!r}", r)
        # resume keeps the run's command: interrupt-free check through the journal's extra
        state = json.loads((wd / ".loops" / ".running" / "quoted.state.json").read_text())
        expect(state["extra"]["prompt_command"] == [str(record), "--model", "big model", "it's", "", "-p"],
               f"the command is journaled for resume: {state['extra']}", r)


STOPPING_LOOP = """\
name: quoted2
initial: first
states:
  first:
    action: touch .loops/.running/quoted2.stop
    next: ask
  ask:
    action: the second prompt
    action_type: prompt
    next: done
  done:
    terminal: true
"""


def test_resume_reuses_the_runs_prompt_command():
    with Workdir() as wd:
        loop = write(wd / "quoted2.yaml", STOPPING_LOOP)
        record = write(wd / "rec.sh", '#!/bin/sh\nprintf \'<%s>\' "$@" > argv.txt\n')
        record.chmod(0o755)
        r = ll("run", loop, "--prompt-command", f"'{record}' -x 'a b'", cwd=wd)
        expect_exit(r, 1)  # stopped at the boundary after `first` (stop file)
        expect(not (wd / "argv.txt").exists(), "the prompt did not run yet", r)
        r = ll("resume", "quoted2", cwd=wd)
        expect_exit(r, 0)
        expect((wd / "argv.txt").read_text() == "<-x><a b><the second prompt>",
               "resume ran the prompt with the run's --prompt-command", r)


def test_unbalanced_quotes_in_a_command_are_a_usage_error():
    with Workdir() as wd:
        loop = write(wd / "quoted.yaml", QUOTED_LOOP)
        for option in ("--prompt-command", "--judge-command"):
            r = ll("run", loop, option, "claude -p 'oops", cwd=wd)
            expect_exit(r, 2)
            expect_in("unterminated single quote", r.err, r, "stderr")
        r = ll("run", loop, "--prompt-command", "   ", cwd=wd)
        expect_exit(r, 2)
        expect_in("empty command", r.err, r, "stderr")


HANDOFF = """\
name: relay
initial: work
on_handoff: {policy}
states:
  work:
    action: "echo 'CONTEXT_HANDOFF: pick up at step 2'"
    next: done
  done:
    terminal: true
"""


def test_on_handoff_spawn_starts_a_detached_session_told_to_resume():
    with Workdir() as wd:
        loop = write(wd / "relay.yaml", HANDOFF.format(policy="spawn"))
        env = dict(fake_env(wd), FAKE_CLAUDE_ARGS_LOG=str(wd / "args.log"))
        r = ll("run", loop, cwd=wd, env=env)
        expect_exit(r, 1)
        expect_in("context handoff: pick up at step 2", r.out, r)
        expect_in("Continuation session started (pid", r.out, r)
        expect_in("Resume with: ll-loop resume relay", r.out, r)
        # The fake claude got the original's prompt (as a prompt action would, -p PROMPT).
        wait_for(lambda: (wd / "claude.log").exists(), what="the continuation session")
        log = (wd / "claude.log").read_text()
        expect(log.startswith("action Continue loop execution. Run: ll-loop resume relay\n\n"
                              "pick up at step 2"), f"the continuation prompt: {log!r}")
        # As the original: the unattended session is not given the permission bypass.
        wait_for(lambda: (wd / "args.log").exists(), what="the arguments")
        args = (wd / "args.log").read_text().splitlines()
        expect(args[0] == "-p" and "--dangerously-skip-permissions" not in args, f"arguments: {args}")
        status = ll("status", "relay", "--json", cwd=wd).json()
        expect(status["status"] == "awaiting_continuation", f"still resumable: {status}")
        events = [json.loads(line) for line in
                  (wd / ".loops" / ".running" / "relay.events.jsonl").read_text().splitlines()]
        spawned = [e for e in events if e["event"] == "handoff_spawned"]
        expect(len(spawned) == 1 and isinstance(spawned[0]["pid"], int)
               and spawned[0]["state"] == "done", f"handoff_spawned event: {events}")
        r = ll("resume", "relay", "--quiet", cwd=wd, env=fake_env(wd))
        expect_exit(r, 0)


def test_on_handoff_spawn_that_cannot_start_is_reported():
    with Workdir() as wd:
        loop = write(wd / "relay.yaml", HANDOFF.format(policy="spawn"))
        r = ll("run", loop, "--json", "--prompt-command", "/nonexistent/agent -p", cwd=wd)
        expect_exit(r, 1)
        expect_in("on_handoff: spawn: cannot start /nonexistent/agent", r.err, r)
        out = r.json()
        expect(out["status"] == "awaiting_continuation" and "continuation_pid" not in out,
               f"resumable, nothing started: {out}")


def test_on_handoff_terminate_ends_the_run_for_good():
    with Workdir() as wd:
        loop = write(wd / "relay.yaml", HANDOFF.format(policy="terminate"))
        expect_in("On handoff: terminate\n", ll("show", loop, cwd=wd).out)
        r = ll("run", loop, cwd=wd, env=fake_env(wd))
        expect_exit(r, 1)
        expect_in("on_handoff: terminate: the run ends here (not resumable)", r.out, r)
        expect("Resume with" not in r.out, "no resume hint", r)
        expect(not (wd / "claude.log").exists(), "nothing spawned", r)
        status = ll("status", "relay", "--json", cwd=wd).json()
        expect(status["status"] == "terminated", f"terminated: {status}")
        r = ll("resume", "relay", cwd=wd)
        expect_exit(r, 1)
        expect_in("Nothing to resume for: relay (status: terminated)", r.err, r)


def test_a_continuation_session_can_resume_at_once():
    # The session is started once the run's final record is written and its journal
    # closed: a continuation that resumes immediately always finds the run resumable.
    with Workdir() as wd:
        loop = write(wd / "relay.yaml", HANDOFF.format(policy="spawn"))
        script = f'"{LL_LOOP}" resume relay --quiet > resumed.txt 2>&1; echo "exit $?" >> resumed.txt'
        for attempt in range(5):
            (wd / "resumed.txt").unlink(missing_ok=True)
            r = ll("run", loop, "--quiet", "--prompt-command", f"/bin/sh -c '{script}' sh", cwd=wd)
            expect_exit(r, 1)
            wait_for(lambda: "exit" in ((wd / "resumed.txt").read_text() if (wd / "resumed.txt").exists() else ""),
                     what="the continuation's resume")
            text = (wd / "resumed.txt").read_text()
            expect(text.strip().endswith("exit 0"), f"attempt {attempt}: the resume failed: {text!r}")
            status = ll("status", "relay", "--json", cwd=wd).json()
            expect(status["status"] == "completed", f"resumed to the end: {status}")


if __name__ == "__main__":
    main()
