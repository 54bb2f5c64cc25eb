# little_loops — end-to-end tests of the host keys: agent, pruning_profile, session_mode
# SPDX-License-Identifier: MIT
"""`ll-loop run` hands a prompt state's agent to the prompt command (`--agent NAME`), sets
LL_AUTOMATION / LL_AUTOMATION_PROFILE for a pruning profile, and sends a `continue` state
the prior chained prompt's output first; `simulate`, `show` and `validate --json` report
them. An `mcp_tool` action runs `mcp-call SERVER/TOOL PARAMS` and mcp_result routes it."""

import json

from harness import Workdir, expect, expect_exit, expect_in, ll, main, write

HOST_LOOP = """\
name: hosted
initial: plan
pruning_profile:
  name: loop-wide
  suppress_claude_md: true
states:
  plan:
    action: make a plan
    action_type: prompt
    agent: planner
    session_mode: continue
    next: gate
  gate:
    action: echo gate
    next: build
  build:
    action: /ll:build now
    action_type: slash_command
    session_mode: continue
    pruning_profile:
      name: tight
    next: done
  done:
    terminal: true
"""

# Records each call's arguments and automation variables, one line per call, and answers.
RECORDER = """#!/bin/sh
{ printf '%s|' "$@"; printf '[%s:%s]\\n' "${LL_AUTOMATION-unset}" "${LL_AUTOMATION_PROFILE-unset}"; } >> calls.txt
echo "answer to call $(wc -l < calls.txt | tr -d ' ')"
"""


def test_run_hands_agent_profile_and_summary_to_the_prompt_command():
    with Workdir() as wd:
        loop = write(wd / "hosted.yaml", HOST_LOOP)
        rec = write(wd / "rec.sh", RECORDER)
        rec.chmod(0o755)
        r = ll("run", loop, "--prompt-command", f"'{rec}' -p", cwd=wd)
        expect_exit(r, 0)
        text = (wd / "calls.txt").read_text()
        expect(text.startswith("-p|--agent|planner|make a plan|[1:loop-wide]\n"),
               f"the first prompt gets --agent and the loop's profile: {text!r}", r)
        expect_in("## Continuity summary from the prior chained state\n\nanswer to call 1\n\n---\n\n"
                  "/ll:build now|[1:tight]", text, r, "calls.txt")
        expect(text.count("--agent") == 1, "only the planner gets an agent", r)


def test_simulate_shows_what_the_host_would_be_given():
    with Workdir() as wd:
        loop = write(wd / "hosted.yaml", HOST_LOOP)
        r = ll("simulate", loop, cwd=wd)
        expect_exit(r, 0)
        expect_in("[SIMULATED] Agent: planner", r.out, r)
        expect_in("[SIMULATED] Automation profile: loop-wide", r.out, r)
        expect_in("[SIMULATED] Automation profile: tight", r.out, r)
        expect_in("Continuity summary from the prior chained state", r.out, r)


def test_show_and_validate_report_the_host_settings():
    with Workdir() as wd:
        loop = write(wd / "hosted.yaml", HOST_LOOP)
        r = ll("show", loop, cwd=wd)
        expect_exit(r, 0)
        expect_in("Host settings:\n  plan: agent planner, automation profile loop-wide, session continue\n"
                  "  build: automation profile tight, session continue\n", r.out, r)
        r = ll("validate", "--json", loop, cwd=wd)
        expect_exit(r, 0)
        host = r.json()["host"]["states"]
        expect(host["plan"]["agent"] == "planner" and host["build"]["automation_profile"] == "tight",
               f"validate --json reports the host settings: {host}", r)
        expect("gate" not in host, "a shell state asks nothing of the host", r)


def test_bad_host_keys_are_errors_with_file_line_col():
    with Workdir() as wd:
        loop = write(wd / "bad.yaml", HOST_LOOP.replace("session_mode: continue\n    next: gate",
                                                        "session_mode: resume\n    next: gate")
                     .replace("  name: tight", "  nmae: tight"))
        r = ll("validate", loop, cwd=wd)
        expect_exit(r, 1)
        out = r.out + r.err
        expect_in("bad.yaml:11:5: error: states.plan.session_mode: unknown session_mode \"resume\"", out, r)
        expect_in("bad.yaml:21:7: error: states.build.pruning_profile.nmae: unknown key \"nmae\" "
                  "(did you mean \"name\"?)", out, r)


MCP_LOOP = """\
name: gate
initial: check
context:
  port: 3000
states:
  check:
    action_type: mcp_tool
    action: "playwright/screenshot"
    params:
      url: "http://localhost:${context.port}"
      full_page: true
    capture: shot
    route:
      success: done
      tool_error: retry
      not_found: skipped
      timeout: retry
  retry:
    terminal: true
  skipped:
    terminal: true
  done:
    terminal: true
"""

# A stand-in for mcp-call: records its arguments, answers as MCP_ANSWER / MCP_EXIT say.
FAKE_MCP_CALL = """#!/bin/sh
printf '%s\\n' "$@" > mcp-args.txt
printf '%s' "${MCP_ANSWER-}"
exit "${MCP_EXIT:-0}"
"""


def mcp_env(wd, answer, code):
    import os
    bin_dir = wd / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = write(bin_dir / "mcp-call", FAKE_MCP_CALL)
    fake.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}", "MCP_ANSWER": answer, "MCP_EXIT": str(code)}


def test_mcp_tool_runs_mcp_call_and_routes_on_its_result():
    with Workdir() as wd:
        loop = write(wd / "gate.yaml", MCP_LOOP)
        for answer, code, final in (('{"content": [{"type": "text", "text": "ok"}]}', 0, "done"),
                                    ('{"isError": true}', 0, "retry"),
                                    ("", 127, "skipped")):
            r = ll("run", loop, "--json", cwd=wd, env=mcp_env(wd, answer, code))
            result = r.json()
            expect(result["final_state"] == final, f"{answer!r} / exit {code} ends in {final}", r)
        args = (wd / "mcp-args.txt").read_text().split("\n")
        expect(args[0] == "playwright/screenshot", f"the tool is the first argument: {args}", r)
        expect(json.loads(args[1]) == {"url": "http://localhost:3000", "full_page": True},
               f"the rendered params are the second, as JSON: {args}", r)


def test_mcp_tool_in_simulate_show_and_validate():
    with Workdir() as wd:
        loop = write(wd / "gate.yaml", MCP_LOOP)
        r = ll("simulate", loop, cwd=wd)
        expect_exit(r, 0)
        expect_in("[SIMULATED] Would execute (MCP tool call): playwright/screenshot", r.out, r)
        expect_in('[SIMULATED] Params: {"url":"http://localhost:3000","full_page":true}', r.out, r)
        expect_in("Transition: check \u2192 done", r.out, r)
        r = ll("validate", "--json", loop, cwd=wd)
        expect_exit(r, 0)
        expect(r.json()["host"]["states"]["check"]["params"]["full_page"] is True,
               "validate --json reports the params", r)
        bad = write(wd / "bad.yaml", MCP_LOOP.replace("action_type: mcp_tool", "action_type: shell"))
        r = ll("validate", bad, cwd=wd)
        expect_exit(r, 1)
        expect_in("bad.yaml:9:5: error: states.check.params: 'params' field is only valid when "
                  "action_type is 'mcp_tool'", r.out + r.err, r)


if __name__ == "__main__":
    main()
