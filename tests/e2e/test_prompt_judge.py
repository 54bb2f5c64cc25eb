#!/usr/bin/env python3
# little_loops — e2e: a fake `claude` on PATH drives a prompt state and the command judge
# SPDX-License-Identifier: MIT
import os

from harness import FIXTURES, Workdir, expect, expect_exit, expect_in, ll, main, write

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
        calls = (wd / "claude.log").read_text().splitlines()
        expect("judge" not in calls, f"the judge was not called: {calls}", r)


def test_missing_claude_is_an_error_verdict():
    with Workdir() as wd:
        loop = write(wd / "prompt.yaml", LOOP)
        r = ll("run", loop, "--json", "--prompt-command", "/nonexistent/claude -p",
               "--judge-command", "/nonexistent/claude -p", cwd=wd, env=fake_env(wd))
        expect_exit(r, 2)
        expect(r.json()["final_state"] == "broken", "unrunnable judge → error → broken", r)
        expect(not (wd / "claude.log").exists(), "the fake claude on PATH was not used", r)


if __name__ == "__main__":
    main()
