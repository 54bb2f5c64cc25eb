#!/usr/bin/env python3
# little_loops — e2e: every ll-loop verb, its options, messages and exit codes
# SPDX-License-Identifier: MIT
import json
import os
import signal
import subprocess
import time

from harness import (CHECK_FIX, EXAMPLES, LL_LOOP, Workdir, base_env, expect, expect_exit,
                     expect_in, lines, ll, main, pids_with_marker, spawn, wait_for, write)


def test_global_help_and_version():
    r = ll("--help")
    expect_exit(r, 0)
    for verb in ("run", "validate", "compile", "show", "simulate", "test", "resume", "list", "status",
                 "history", "stop"):
        expect_in(verb, r.out, r)
    r = ll()
    expect_exit(r, 1)
    expect_in("usage: ll-loop", r.out, r)
    r = ll("--version")
    expect_exit(r, 0)
    expect_in("ll-loop", r.out, r)


def test_verb_help():
    for verb, option in (("run", "--max-iterations"), ("simulate", "--scenario"),
                         ("show", "--format"), ("history", "--tail"), ("compile", "--output"),
                         ("validate", "--json"), ("status", "--json"), ("stop", "NAME"),
                         ("resume", "NAME"), ("test", "--state")):
        r = ll(verb, "--help")
        expect_exit(r, 0)
        expect_in(f"usage: ll-loop {verb}", r.out, r)
        expect_in(option, r.out, r)


def test_usage_errors():
    r = ll("run", "x.yaml", "--max-iteration", "3")
    expect_exit(r, 2)
    expect_in("unrecognized argument: --max-iteration (did you mean --max-iterations?)", r.err, r)
    r = ll("run")
    expect_exit(r, 2)
    expect_in("the following arguments are required: LOOP", r.err, r)
    r = ll("simulate", "x", "--scenario", "sometimes")
    expect_exit(r, 2)
    expect_in("invalid choice: 'sometimes'", r.err, r)
    r = ll("run", "x", "--max-iterations")
    expect_exit(r, 2)
    expect_in("expected one argument", r.err, r)
    r = ll("run", "x", "--max-iterations", "many")
    expect_exit(r, 2)
    expect_in("--max-iterations", r.err, r)
    # A bad value is a usage error like the others: the verb's usage line, then the error.
    for argv in (["run", "x", "--max-iterations", "-1"], ["history", "x", "--tail", "-1"],
                 ["run", "x", "--output-limit", "0"], ["simulate", "x", "--max-iterations", "0"]):
        r = ll(*argv)
        expect_exit(r, 2)
        expect(r.err.startswith(f"usage: ll-loop {argv[0]}") and f"ll-loop {argv[0]}: error: " in r.err,
               f"usage line then error for {argv}", r)
    # A --context without "=" (or with an empty key) is the original's error, exit 1.
    for bad in ("novalue", " =x"):
        r = ll("run", "x", "--context", bad)
        expect_exit(r, 1)
        expect_in("Invalid --context format: '%s' (expected KEY=VALUE)" % bad, r.err, r)
    r = ll("--frobnicate")
    expect_exit(r, 2)


def test_loop_not_found():
    with Workdir() as wd:
        for verb in ("run", "validate", "show", "simulate", "test"):
            r = ll(verb, "no-such-loop", cwd=wd)
            expect_exit(r, 1)
            expect_in("Loop not found: no-such-loop", r.err, r)
        # A name with "/" is looked up in .loops/ too, as in the original.
        write(wd / ".loops" / "sub" / "x.yaml",
              "name: x\ninitial: a\nstates:\n  a:\n    terminal: true\n")
        r = ll("validate", "sub/x", cwd=wd)
        expect_exit(r, 0)
        expect_in("is valid", r.out, r)
        # A name that is there but cannot be used says why.
        os.symlink("missing.yaml", wd / "dangling.yaml")
        os.symlink("loop1.yaml", wd / "loop2.yaml")
        os.symlink("loop2.yaml", wd / "loop1.yaml")
        os.symlink("gone.yaml", wd / ".loops" / "named.yaml")
        for verb in ("run", "validate"):
            r = ll(verb, "dangling.yaml", cwd=wd)
            expect_exit(r, 1)
            expect_in("Loop not found: dangling.yaml (it is a dangling symbolic link "
                      "(to missing.yaml), not a loop file)", r.err, r)
            r = ll(verb, "loop1.yaml", cwd=wd)
            expect_exit(r, 1)
            expect_in("Loop not found: loop1.yaml (it is a symbolic link that cannot be followed "
                      "(Too many levels of symbolic links), not a loop file)", r.err, r)
            r = ll(verb, "named", cwd=wd)
            expect_exit(r, 1)
            expect_in("Loop not found: named (.loops/named.yaml is a dangling symbolic link "
                      "(to gone.yaml), not a loop file)", r.err, r)
        r = ll("compile", "loop1.yaml", cwd=wd)
        expect_exit(r, 1)
        expect_in("Input is a symbolic link that cannot be followed", r.err, r)


def test_validate_examples():
    for path in sorted(EXAMPLES.glob("*.yaml")):
        r = ll("validate", path)
        expect_exit(r, 0)
        expect_in("is valid", r.out, r)
        expect_in("Initial:", r.out, r)
        r = ll("validate", path, "--json")
        expect_exit(r, 0)
        doc = r.json()
        expect(doc["valid"] is True, "valid must be true", r)


def test_validate_prints_warnings_after_the_summary():
    with Workdir() as wd:
        path = write(wd / "w.yaml", "name: w\ninitial: a\nstates:\n  a: {action: 'true', next: done}\n"
                     "  orphan: {action: 'true', next: done}\n  done: {terminal: true}\n")
        r = ll("validate", path, cwd=wd)
        expect_exit(r, 0)
        expect_in("  Max iterations: 50\n"
                  "  \u26a0 [WARNING] states.orphan: State is not reachable from initial state",
                  r.out, r)
        expect(r.err == "", "warnings on stdout, as the original's validate", r)


def test_validate_invalid():
    with Workdir() as wd:
        bad = write(wd / "bad.yaml", """\
name: bad
initial: start
states:
  start:
    action: echo hi
    on_success: nowhere
    evaluate:
      type: exit_code
      operater: eq
""")
        r = ll("validate", bad)
        expect_exit(r, 1)
        expect_in("is invalid", r.err + r.out, r)
        expect_in("states.start", r.err + r.out, r)
        r = ll("validate", bad, "--json")
        expect_exit(r, 1)
        doc = r.json()
        expect(doc["valid"] is False and doc["diagnostics"], "diagnostics expected", r)
        expect(all("path" in d and "message" in d for d in doc["diagnostics"]),
               "diagnostics carry path and message", r)
        expect(all(d.get("file") == str(bad) and d.get("line", 0) > 0 and d.get("column", 0) > 0
                   for d in doc["diagnostics"]), "and where they are in the file", r)
        broken = write(wd / "broken.yaml", "name: x\nstates: [unclosed\n")
        r = ll("validate", broken)
        expect_exit(r, 1)
        expect_in("broken.yaml:3:1:", r.err, r)   # file:line:column
        notjson = write(wd / "broken.json", "{\"name\": ")
        r = ll("validate", notjson)
        expect_exit(r, 1)


def test_compile():
    with Workdir() as wd:
        spec = write(wd / "goal.yaml", (EXAMPLES / "goal_config_file.yaml").read_text())
        r = ll("compile", spec)
        expect_exit(r, 0)
        expect_in("Compiled to:", r.out, r)
        out = wd / "goal.fsm.yaml"
        expect(out.exists(), "default output goal.fsm.yaml", r)
        r2 = ll("validate", out)
        expect_exit(r2, 0)
        r = ll("compile", spec, "-o", wd / "g.json")
        expect_exit(r, 0)
        doc = json.loads((wd / "g.json").read_text())
        expect(doc["initial"] == "evaluate" and "fix" in doc["states"], "compiled goal", r)
        # The paradigm is kept as provenance; with `initial` the file is a loop, not a spec.
        expect(doc.get("paradigm") == "goal", "compiled goal keeps paradigm: goal", r)
        r2 = ll("validate", wd / "g.json")
        expect_exit(r2, 0)
        expect("paradigm for validation" not in r2.out, "a compiled loop is not compiled again", r2)
        r = ll("compile", spec, "-o", "-")
        expect_exit(r, 0)
        expect_in("initial:", r.out, r)
        r = ll("compile", wd / "missing.yaml")
        expect_exit(r, 1)
        expect_in("Input file not found", r.err, r)
        bad = write(wd / "bad_spec.yaml", "paradigm: goal\nname: g\n")
        r = ll("compile", bad)
        expect_exit(r, 1)
        expect_in("goal", r.err, r)
        broken = write(wd / "broken.yml", "invalid: yaml: content: [broken\n")
        r = ll("compile", broken)
        expect_exit(r, 1)
        expect_in("error: YAML parse error: ", r.err, r)


def test_compile_yaml_reads_back_exactly():
    # The YAML `compile` writes loads back as the same document, byte for byte: strings with
    # leading blanks, trailing or missing newlines, blank-only lines, YAML 1.1 line breaks
    # (NEL, LS, PS), control characters, quotes, keys YAML would read as something else
    # (`<<`, `yes`, `1e3`, multi-line, longer than a simple key may be), floats without a '.'.
    tricky = ["x\ny", "trail\n\n", "\n x", "  python3 - <<'PY'\nprint(1)\nPY\n", "a\n", "a\n  \nb\n",
              "a\n\n  b\n", "\tx\n", "x\r\ny\n", "\u00e9\n\u00fc\n", "\x01\n", "<<", "true", "yes", "No",
              "null", "~", "123", "1e3", "-", "? x", ": y", "# c", "key: v", "'q'", '"d"', "\\",
              "", " ", "\u2028", "\ufeffbom", "a\u0085b", "x\x7fy", "ok\n...\n", "ok\n---\n", "k" * 1500,
              "x\u2029y\n", "\x00nul", "a\n\tb\n", "emoji \U0001F600\n"]
    context = {}
    for i, text in enumerate(tricky):
        context[f"k{i}"] = text
        context[text or "empty"] = i
    context["numbers"] = [1e300, 0.5, -2.0, 1e-07, 5e-324, 7, -3]
    context["nested"] = {"a": [], "b": {}, "c": [{"x": 1, "y": [1, [2, {"z": None}]]}], "d": [[1, 2], []]}
    with Workdir() as wd:
        spec = write(wd / "g.json", json.dumps({"paradigm": "goal", "goal": "g",
                                                  "tools": ["true", "line one\nline two\n"],
                                                  "context": context}))
        expect_exit(ll("compile", spec, "-o", wd / "g.yaml"), 0)
        expect_exit(ll("compile", spec, "-o", wd / "g.out.json"), 0)
        r = ll("show", wd / "g.yaml", "--format", "json")
        expect_exit(r, 0)
        written = json.loads((wd / "g.out.json").read_text())
        expect(r.json() == written, "the compiled YAML reads back as the compiled JSON", r)
        expect("fix:\n    action: |\n      line one\n      line two\n" in (wd / "g.yaml").read_text(),
               "a multi-line action is a literal block")


def test_json_output_with_bytes_that_are_not_utf8():
    # An action's raw output is bytes: --json writes what is not UTF-8 as U+FFFD, never fails.
    with Workdir() as wd:
        loop = write(wd / "u8.json", json.dumps({"name": "u8", "initial": "a", "states": {
            "a": {"action": "printf 'bad \\377\\376 x'", "capture": "c", "next": "d"},
            "d": {"terminal": True}}}))
        r = ll("run", loop, "--json", "--quiet", cwd=wd)
        expect_exit(r, 0)
        expect(r.json()["captured"]["c"]["output"] == "bad \ufffd\ufffd x", "U+FFFD for bad bytes", r)
        # The finished run's state file keeps its captured values, as the original's does.
        state = json.loads((wd / ".loops" / ".running" / "u8.state.json").read_text())
        expect(state["captured"]["c"]["exit_code"] == 0 and state["snapshot"] is None,
               f"captured in the final state file: {state}")


def test_lost_output_is_a_failure():
    # Output that could not be written (a full disk) is an error, never a silent exit 0.
    if not os.path.exists("/dev/full"):
        return
    loop = EXAMPLES / "goal_config_file.yaml"
    with open("/dev/full", "w") as full:
        for argv in (["show", loop, "--format", "dot"], ["validate", loop, "--json"]):
            r = subprocess.run([LL_LOOP, *map(str, argv)], stdout=full, stderr=subprocess.PIPE,
                               text=True, env=base_env(), timeout=30)
            expect(r.returncode == 1 and "cannot write to standard output" in r.stderr,
                   f"{argv}: exit {r.returncode}, stderr {r.stderr!r}")
    with Workdir() as wd:
        r = ll("simulate", loop, "--events", "/dev/full", "--quiet", cwd=wd)
        expect_exit(r, 1)
        expect_in("cannot write the events to /dev/full", r.err, r)


def test_show_formats():
    path = EXAMPLES / "fsm_cache_warmup.yaml"
    r = ll("show", path)
    expect_exit(r, 0)
    for state in ("prepare", "probe", "warm", "report", "done", "broken"):
        expect_in(state, r.out, r)
    r = ll("show", path, "--format", "dot")
    expect_exit(r, 0)
    expect_in("digraph", r.out, r)
    r = ll("show", path, "--format", "mermaid")
    expect_exit(r, 0)
    expect_in("stateDiagram-v2", r.out, r)
    r = ll("show", path, "-f", "json")
    expect_exit(r, 0)
    expect(r.json()["initial"] == "prepare", "json initial", r)


def simulate_json(path, *extra, cwd=None):
    r = ll("simulate", path, "--json", *extra, cwd=cwd)
    return r, r.json()


def test_simulate_scenarios():
    with Workdir() as wd:
        path = write(wd / "cf.yaml", CHECK_FIX)
        r, doc = simulate_json(path, "--scenario", "all-pass")
        expect_exit(r, 0)
        expect(set(doc) == {"final_state", "iterations", "terminated_by", "duration_ms",
                            "captured", "error", "dialect"}, "result keys", r)
        expect(doc["final_state"] == "done" and doc["iterations"] == 1, "all-pass", r)
        r, doc = simulate_json(path, "--scenario", "first-fail")
        expect(doc["final_state"] == "done" and doc["iterations"] == 3, "first-fail", r)
        r, doc = simulate_json(path, "--scenario", "all-error")
        expect(doc["final_state"] == "broken", "all-error routes on_error", r)
        r, doc = simulate_json(path, "--scenario", "all-fail", "--max-iterations", "5")
        expect(doc["terminated_by"] == "max_iterations" and doc["iterations"] == 5, "all-fail", r)
        # alternating: check(1) fail → fix(0) → check(1) fail → fix(0) ...
        r, doc = simulate_json(path, "--scenario", "alternating", "-n", "6")
        expect(doc["terminated_by"] == "max_iterations", "alternating never passes here", r)
        r = ll("simulate", path, "--scenario", "first-fail")
        expect_exit(r, 0)
        expect_in("SIMULATION", r.out, r)
        expect_in("check", r.out, r)
        # The original's trace of each call, and its label of the scenario's result.
        expect_in("    [SIMULATED] Would execute (shell command): test -f ready\n"
                  "    [AUTO] Result: Failure\n", r.out, r)
        expect_in("    [SIMULATED] Would execute (shell command): touch ready\n"
                  "    [AUTO] Result: Success\n", r.out, r)
        r = ll("simulate", path, "--scenario", "all-fail", "-n", "1")
        expect_in("[AUTO] Result: Failure (scenario: all-fail)", r.out, r)
        # A simulated action outputs the original's placeholder: output evaluators see it.
        oc = write(wd / "oc.yaml", """\
name: oc
initial: check
states:
  check:
    action: make test
    capture: res
    evaluate: {type: output_contains, pattern: "simulated output for: make test"}
    on_success: done
    on_failure: failed
  done: {terminal: true}
  failed: {terminal: true}
""")
        r, doc = simulate_json(oc, "--scenario", "all-pass")
        expect(doc["final_state"] == "done", "placeholder output matched", r)
        expect(doc["captured"]["res"]["output"] == "[simulated output for: make test]",
               "captured placeholder", r)
        r, doc = simulate_json(oc)
        expect(doc["final_state"] == "done", "placeholder without a scenario too", r)
        # No output signals in a simulation (the original's simulate has no signal detector):
        # the placeholder of an action that prints a marker routes like any output.
        sig = write(wd / "sig.yaml", """\
name: sig
initial: a
states:
  a:
    action: "echo 'FATAL_ERROR: boom'"
    on_success: done
  done: {terminal: true}
""")
        r, doc = simulate_json(sig, "--scenario", "all-pass")
        expect(doc["terminated_by"] == "terminal" and doc["final_state"] == "done",
               "no signal detection in simulate", r)


def test_simulate_events_and_responses():
    with Workdir() as wd:
        path = write(wd / "cf.yaml", CHECK_FIX)
        r = ll("simulate", path, "--scenario", "first-fail", "--events", "-", "--quiet")
        expect_exit(r, 0)
        events = [json.loads(line) for line in r.out.splitlines() if line.strip()]
        names = [e["event"] for e in events]
        expect(names[0] == "loop_start" and names[-1] == "loop_complete", "event order", r)
        expect(all("ts" in e for e in events), "every event has ts", r)
        expect(names.count("action_start") == 3, "three actions", r)
        # With --json too, the result is one more JSON line after the events.
        r = ll("simulate", path, "--scenario", "first-fail", "--events", "-", "--json")
        expect_exit(r, 0)
        rows = [json.loads(line) for line in r.out.splitlines()]
        expect(rows[-1]["final_state"] == "done" and rows[-2]["event"] == "loop_complete",
               "events, then the result line", r)
        r = ll("simulate", path, "--events", wd / "ev.jsonl", "--quiet")
        expect_exit(r, 0)
        expect(len((wd / "ev.jsonl").read_text().splitlines()) >= 5, "events file", r)
        responses = write(wd / "resp.json", json.dumps({
            "by_action": {"test -f ready": [{"exit_code": 1}, {"exit_code": 1}, 0],
                          "touch ready": {"exit_code": 0, "output": "touched"}},
        }))
        # check fails twice (the list), then passes (its last entry repeats)
        r, doc = simulate_json(path, "--responses", responses)
        expect(doc["final_state"] == "done" and doc["iterations"] == 5, "by_action", r)
        responses = write(wd / "resp2.json", json.dumps({
            "by_index": [{"exit_code": 1}, {"exit_code": 0}, {"exit_code": 2}],
            "default": {"exit_code": 0}}))
        # call 0 fails, call 1 (fix) passes, call 2 errors → broken
        r, doc = simulate_json(path, "--responses", responses)
        expect(doc["final_state"] == "broken" and doc["iterations"] == 3, "by_index", r)
        # a responses file without a matching rule falls back to the scenario
        responses = write(wd / "resp3.json", json.dumps({"by_action": {"touch ready": 0}}))
        r, doc = simulate_json(path, "--responses", responses, "--scenario", "all-error")
        expect(doc["final_state"] == "broken", "scenario fallback", r)
        # A list's k-th entry answers the action's k-th call, also when by_index answered
        # an earlier one: call 0 (check, 1st) by_index; call 2 (check, 2nd) gets entry 1.
        responses = write(wd / "resp4.json", json.dumps({
            "by_index": [{"exit_code": 1}],
            "by_action": {"test -f ready": [{"exit_code": 1}, {"exit_code": 2}]}}))
        r, doc = simulate_json(path, "--responses", responses)
        expect(doc["final_state"] == "broken" and doc["iterations"] == 3, "k-th call of A", r)
        # Without a scenario, an unmatched call exits 0 with empty output (not a placeholder).
        responses = write(wd / "resp5.json", json.dumps({"by_action": {"x": 0}}))
        r, doc = simulate_json(oc_path := write(wd / "cap.yaml", """\
name: cap
initial: a
states:
  a: {action: say, capture: c, next: done}
  done: {terminal: true}
"""), "--responses", responses)
        expect(doc["captured"]["c"]["output"] == "", "unmatched: empty output", r)
        for bad_doc, where in (({"default": {"exit_code": 4294967297}}, "default.exit_code"),
                               ({"by_action": {"x": []}}, "by_action.x")):
            bad = write(wd / "bad.json", json.dumps(bad_doc))
            r = ll("simulate", oc_path, "--responses", bad)
            expect_exit(r, 1)
            expect_in(where, r.err, r)
        bad = write(wd / "bad.json", json.dumps({"by_index": "nope"}))
        r = ll("simulate", path, "--responses", bad)
        expect_exit(r, 1)
        expect_in("by_index", r.err, r)


def test_loop_files_that_are_not_regular_files_are_refused():
    # A FIFO would block the read until a writer comes; /dev/zero would never end.
    with Workdir() as wd:
        os.mkfifo(wd / "fifo.yaml")
        for verb in ("validate", "run"):
            for path in (wd / "fifo.yaml", "/dev/zero"):
                r = ll(verb, path, cwd=wd, timeout=10)
                expect_exit(r, 1)
                expect_in(f"cannot read {path}: not a regular file", r.err, r)
        (wd / "adir").mkdir()
        for verb in ("validate", "run", "show"):
            r = ll(verb, "adir", cwd=wd)
            expect_exit(r, 1)
            expect_in("Loop not found: adir (it is a directory, not a loop file)", r.err, r)
        r = ll("compile", wd / "fifo.yaml", cwd=wd, timeout=10)
        expect_exit(r, 1)
        expect_in("Input is a FIFO, not a file", r.err, r)
        with open(wd / "big.yaml", "wb") as big:
            big.truncate(64 * 1024 * 1024 + 1)
        r = ll("validate", wd / "big.yaml", cwd=wd, timeout=10)
        expect_exit(r, 1)
        expect_in("file is larger than 64 MiB (67108865 bytes)", r.err, r)
        loop = write(wd / "check.yaml", CHECK_FIX)
        r = ll("simulate", loop, "--responses", wd / "fifo.yaml", cwd=wd, timeout=10)
        expect_exit(r, 1)
        expect_in("cannot read responses file: ", r.err, r)
        expect_in("not a regular file", r.err, r)


def test_run_with_closed_standard_descriptors():
    # `>&-`, `2>&-`, `<&-`: the journal's files must not take descriptors 0-2, or the display
    # (or an error message) would be written into the event log.
    for closed in ((1,), (2,), (0, 1, 2)):
        with Workdir() as wd:
            loop = write(wd / "check.yaml", CHECK_FIX)
            proc = subprocess.run([LL_LOOP, "run", str(loop)], cwd=wd, env=base_env(),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=20,
                                  preexec_fn=lambda fds=closed: [os.close(fd) for fd in fds])
            expect(proc.returncode == 0, f"closed {closed}: exit {proc.returncode}")
            events = (wd / ".loops" / ".running" / "check-fix.events.jsonl").read_text()
            for line in events.splitlines():
                try:
                    json.loads(line)
                except json.JSONDecodeError:
                    raise AssertionError(f"closed {closed}: not an event: {line!r}") from None
            expect('"event":"loop_complete"' in events, f"closed {closed}: the log is whole")


def test_run_exit_codes_and_options():
    with Workdir() as wd:
        ok = write(wd / "ok.yaml", CHECK_FIX)
        r = ll("run", ok, cwd=wd)
        expect_exit(r, 0)
        expect_in("[1/50] check", r.out, r)
        expect_in("Loop completed: done", r.out, r)
        fail = write(wd / "fail.yaml", CHECK_FIX.replace("test -f ready", "exit 7"))
        r = ll("run", fail, cwd=wd)
        expect_exit(r, 2)
        spin = write(wd / "spin.yaml", CHECK_FIX.replace("test -f ready", "exit 1")
                     .replace("touch ready", "exit 0").replace("check-fix", "spin"))
        r = ll("run", spin, "--max-iterations", "4", "--json", cwd=wd)
        expect_exit(r, 1)
        doc = r.json()
        expect(doc["terminated_by"] == "max_iterations" and doc["iterations"] == 4, "cap", r)
        ctx = write(wd / "ctx.yaml", """\
name: ctx
initial: greet
context:
  who: nobody
states:
  greet:
    action: echo hello ${context.who:shell}
    capture: greeting
    next: done
  done:
    terminal: true
""")
        r = ll("run", ctx, "--context", "who=big world", "--json", cwd=wd)
        expect_exit(r, 0)
        doc = r.json()
        expect(doc["captured"]["greeting"]["output"] == "hello big world", "context override", r)
        # As in the original: split at the first "=", both sides stripped, the last one wins.
        r = ll("run", ctx, "--context", " who = a=b ", "--json", cwd=wd)
        expect_exit(r, 0)
        expect(r.json()["captured"]["greeting"]["output"] == "hello a=b", "stripped", r)
        r = ll("run", ctx, "--context", "who=x", "--context", "who=", "--json", cwd=wd)
        expect_exit(r, 0)
        expect(r.json()["captured"]["greeting"]["output"] == "hello ", "last wins", r)
        r = ll("run", ctx, "--quiet", cwd=wd)
        expect_exit(r, 0)
        expect(r.out == "", "quiet prints nothing", r)


TESTED = """\
name: tested
initial: check
context:
  want: 0 errors
states:
  check:
    action: printf '3 errors\\n'; echo oops >&2; exit 1
    evaluate:
      type: output_contains
      pattern: ${context.want}
    on_success: done
    on_failure: fix
  fix:
    action: touch fixed
    next: check
  ask:
    action: /ll:check
    on_success: done
    on_failure: fix
  idle:
    on_success: done
  done:
    terminal: true
"""


def test_test_verb():
    """`ll-loop test`: one state for real, its verdict and the transition it would take."""
    with Workdir() as wd:
        loop = write(wd / "tested.yaml", TESTED)
        r = ll("test", loop, cwd=wd)
        expect_exit(r, 0)
        for needle in ("## Test Iteration: tested", "State: check",
                       "Action: printf '3 errors\\n'; echo oops >&2; exit 1", "Exit code: 1",
                       "Output:\n3 errors\n", "Stderr:\noops\n", "Evaluator: output_contains",
                       "Verdict: FAILURE", "  pattern: 0 errors",
                       "Would transition: check \u2192 fix",
                       "\u2713 Loop appears to be configured correctly"):
            expect_in(needle, r.out, r)
        expect(not (wd / "fixed").exists() and not (wd / ".loops").exists(),
               "test runs one state and journals nothing", r)
        # --context reaches the evaluator's template: now the pattern matches.
        r = ll("test", loop, "--context", "want=3 errors", cwd=wd)
        expect_exit(r, 0)
        expect_in("Verdict: SUCCESS", r.out, r)
        expect_in("Would transition: check \u2192 done", r.out, r)
        # --state: a `next:` state runs for real and goes where `next` says.
        r = ll("test", loop, "--state", "fix", cwd=wd)
        expect_exit(r, 0)
        expect_in("Would transition: fix \u2192 check", r.out, r)
        expect((wd / "fixed").exists(), "the fix state's action ran", r)
        # A prompt action is simulated, never run; without `evaluate:` its exit code decides,
        # as in the original's `ll-loop test` (no judge runs).
        r = ll("test", loop, "--state", "ask", "--no-llm", cwd=wd)
        expect_exit(r, 0)
        for needle in ("[simulated output for: /ll:check]", "Evaluator: exit_code (default)",
                       "Verdict: SUCCESS", "Would transition: ask \u2192 done",
                       "\u2713 Loop appears to be configured correctly"):
            expect_in(needle, r.out, r)
        r = ll("test", loop, "--state", "ask", "--exit-code", "1", cwd=wd)
        expect_exit(r, 0)
        expect_in("exit code 1 (--exit-code)", r.out, r)
        expect_in("Exit code: 1", r.out, r)
        expect_in("Verdict: FAILURE", r.out, r)
        expect_in("Would transition: ask \u2192 fix", r.out, r)
        r = ll("test", loop, "--state", "ask", "--exit-code", "3", cwd=wd)
        expect_exit(r, 1)
        expect_in("Verdict: ERROR", r.out, r)
        # No action; a terminal; an unknown state; a bad --exit-code.
        r = ll("test", loop, "--state", "idle", cwd=wd)
        expect_exit(r, 0)
        expect_in("State 'idle' has no action to test", r.out, r)
        r = ll("test", loop, "--state", "done", cwd=wd)
        expect_exit(r, 0)
        expect_in("terminal state", r.out, r)
        r = ll("test", loop, "--state", "nope", cwd=wd)
        expect_exit(r, 1)
        expect_in("State 'nope' not found. Available: check, fix, ask, idle, done", r.err, r)
        r = ll("test", loop, "--exit-code", "x", cwd=wd)
        expect_exit(r, 2)
        expect_in("--exit-code", r.err, r)


# Reads ${context.targte}, close to its own key `target`: an error unless --context gives it.
OVERRIDDEN = """\
name: overridden
initial: go
context:
  target: t
states:
  go:
    action: "echo ${context.targte}"
    next: done
  done:
    terminal: true
"""

# The same as a goal spec: the compiled loop is validated once, after the overrides.
OVERRIDDEN_GOAL = """\
paradigm: goal
name: overridden-goal
goal: the flag
context:
  target: t
tools:
  - "echo ${context.targte}"
"""


def test_overrides_are_validated_with_the_loop():
    """run and simulate validate a loop once, after --context, --max-iterations and the
    input are applied: what the overrides settle is no error, and what they cause is
    reported at the file:line:col it concerns."""
    with Workdir() as wd:
        loop = write(wd / "overridden.yaml", OVERRIDDEN)
        spec = write(wd / "goal.yaml", OVERRIDDEN_GOAL)
        r = ll("validate", loop, cwd=wd)
        expect_exit(r, 1)
        expect_in("overridden.yaml:7:5: error: states.go.action: ${context.targte} reads "
                  "context.targte", r.err, r)
        r = ll("validate", spec, cwd=wd)
        expect_exit(r, 1)
        expect_in("goal.yaml:7:5: error: tools[0]: ${context.targte} reads context.targte", r.err, r)
        for path in (loop, spec):
            r = ll("run", path, "--context", "targte=x", "--max-iterations", "3", cwd=wd)
            expect_exit(r, 0)
            expect("Validation error" not in r.err and "reads context.targte" not in r.err,
                   "the override settles it", r)
            r = ll("simulate", path, "--context", "targte=x", cwd=wd)
            expect_exit(r, 0)
            expect("Validation error" not in r.err, "simulate validates after the override too", r)
        # The positional input is an override too: `input_key: targte` takes it.
        keyed = write(wd / "keyed.yaml", OVERRIDDEN.replace("initial: go", "initial: go\ninput_key: targte"))
        r = ll("run", keyed, "some input", cwd=wd)
        expect_exit(r, 0)
        expect("reads context.targte" not in r.err, "the input settles it", r)
        # A --context key that makes a reference look like a typo of it is placed as well.
        typo = write(wd / "typo.yaml", OVERRIDDEN.replace("  target: t\n", "  {}\n").replace(
            "context:\n  {}", "context: {}").replace("targte", "tgt"))
        for verb in ("run", "simulate"):
            r = ll(verb, typo, "--context", "tgx=1", cwd=wd)
            expect_exit(r, 1)
            expect_in("Validation error", r.err, r)
            expect_in("typo.yaml:6:5: error: states.go.action: ${context.tgt} reads context.tgt, "
                      "which the loop does not define (did you mean \"tgx\"?)", r.err, r)


def run_on_a_terminal(args, cwd, env_extra):
    """Runs ll-loop with stdout on a pseudo-terminal; returns (exit code, output)."""
    import os
    import pty
    import subprocess
    from harness import LL_LOOP, base_env
    master, slave = pty.openpty()
    proc = subprocess.Popen([LL_LOOP, *map(str, args)], cwd=cwd, env=base_env(env_extra),
                            stdout=slave, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO once the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=10), b"".join(chunks).decode(errors="replace")


def test_colour_only_on_a_terminal():
    with Workdir() as wd:
        loop = write(wd / "cf.yaml", CHECK_FIX)
        code, out = run_on_a_terminal(["run", loop], wd, {"TERM": "xterm"})
        expect(code == 0, f"exit {code}: {out}")
        expect("\x1b[" in out, f"colour on a terminal: {out!r}")
        code, out = run_on_a_terminal(["run", loop], wd, {"TERM": "xterm", "NO_COLOR": "1"})
        expect(code == 0 and "\x1b[3" not in out and "\x1b[1m" not in out,
               f"NO_COLOR disables colour: {out!r}")
        r = ll("run", loop, cwd=wd)
        expect("\x1b[" not in r.out, "no colour when stdout is a pipe", r)


def test_name_lookup_and_shorthand():
    with Workdir() as wd:
        write(wd / ".loops" / "hello.yaml", CHECK_FIX.replace("check-fix", "hello"))
        write(wd / ".loops" / "viajson.json", json.dumps({
            "name": "viajson", "initial": "a",
            "states": {"a": {"action": "true", "next": "b"}, "b": {"terminal": True}}}))
        r = ll("run", "hello", cwd=wd)
        expect_exit(r, 0)
        r = ll("hello", "--quiet", cwd=wd)
        expect_exit(r, 0)
        r = ll("validate", "viajson", cwd=wd)
        expect_exit(r, 0)
        r = ll("run", "viajson", "-q", cwd=wd)
        expect_exit(r, 0)


def test_list():
    with Workdir() as wd:
        r = ll("list", cwd=wd)
        expect_exit(r, 0)
        expect(r.out.strip() == "No loops available", "no .loops/", r)
        write(wd / ".loops" / "alpha.yaml", 'name: a\ndescription: "First line\\nmore"\n'
              "initial: x\nstates:\n  x: {terminal: true}\n")
        write(wd / ".loops" / "beta.json", '{"name": "b", "initial": "x", "states": {"x": {"terminal": true}}}')
        write(wd / ".loops" / "notes.txt", "not a loop")
        r = ll("list", cwd=wd)
        expect_exit(r, 0)
        expect(r.out.splitlines() == ["Available loops:", "  alpha  First line", "  beta"],
               "every loop file by the name run takes, with its description's first line", r)
        r = ll("list", "--json", cwd=wd)
        expect(r.json() == [{"name": "alpha", "path": ".loops/alpha.yaml"},
                            {"name": "beta", "path": ".loops/beta.json"}], "json", r)
        r = ll("list", "--running", cwd=wd)
        expect(r.out.strip() == "No journaled runs", "nothing journaled", r)
        expect_exit(ll("run", "alpha", "--quiet", cwd=wd), 0)
        r = ll("list", "--running", cwd=wd)
        # Finished runs too, so the heading says so; the columns line up.
        expect(r.out.splitlines() == ["Journaled runs (running and finished):",
                                      "  LOOP STATE ITERATION STATUS    ELAPSED",
                                      "  a    x     0         completed 0s"],
               "journaled runs", r)
        # The run time is the record's own (accumulated_ms, before the snapshot); a record of
        # an older layout has it in its snapshot only, and its run settings after it.
        write(wd / "slow.yaml", "name: slow\ninitial: s\nstates:\n  s: {action: 'sleep 1.2', next: done}\n"
              "  done: {terminal: true}\n")
        expect_exit(ll("run", "slow.yaml", "-q", cwd=wd), 0)
        write(wd / ".loops" / ".running" / "old.state.json",
              '{"name": "old", "status": "failed", "current_state": "x", "iteration": 3, '
              '"snapshot": {"elapsed_ms": 125000}, "extra": {"error": "boom"}}\n')
        r = ll("list", "--running", cwd=wd)
        expect_in("  slow done  1         completed 1s", r.out, r)
        expect_in("  old  x     3         failed    2m 5s", r.out, r)
        r = ll("status", "old", cwd=wd)
        expect_exit(r, 0)
        expect_in("Error: boom", r.out, r)
        write(wd / "bad.yaml", "name: bad\ninitial: s\nstates:\n  s: {action: 'exit 3', on_success: done}\n"
              "  done: {terminal: true}\n")
        expect_exit(ll("run", "bad.yaml", "-q", cwd=wd), 1)
        r = ll("status", "bad", cwd=wd)
        expect_in("Status: failed", r.out, r)
        expect_in("Error: ", r.out, r)
        expect(ll("status", "bad", "--json", cwd=wd).json()["accumulated_ms"] >= 0, "accumulated_ms", r)
        # A state file that cannot be read is said, not silently left out.
        write(wd / ".loops" / ".running" / "broken.state.json", "{not json")
        for args in (("list", "--running"), ("status",), ("list", "--running", "--json")):
            r = ll(*args, cwd=wd)
            expect_exit(r, 0)
            expect_in("warning: skipped .loops/.running/broken.state.json: ", r.err, r)
            expect_in("a", r.out, r)


def test_status_history_stop():
    with Workdir() as wd:
        write(wd / ".loops" / "hello.yaml", CHECK_FIX.replace("check-fix", "hello"))
        r = ll("status", "hello", cwd=wd)
        expect_exit(r, 1)
        expect_in("No state found for: hello", r.err, r)
        r = ll("run", "hello", "-q", cwd=wd)
        expect_exit(r, 0)
        r = ll("status", "hello", cwd=wd)
        expect_exit(r, 0)
        expect_in("Loop: hello", r.out, r)
        expect_in("Status: completed", r.out, r)
        r = ll("status", "hello", "--json", cwd=wd)
        expect_exit(r, 0)
        doc = r.json()
        expect(doc["status"] == "completed", "status json", r)
        expect(doc["loop_name"] == "hello" and doc["name"] == "hello", "status json: loop_name", r)
        r = ll("status", cwd=wd)
        expect_exit(r, 0)
        expect_in("hello", r.out, r)
        r = ll("history", "hello", cwd=wd)
        expect_exit(r, 0)
        expect_in("loop_start", r.out, r)
        expect_in("loop_complete", r.out, r)
        r = ll("history", "hello", "--tail", "1", cwd=wd)
        expect_exit(r, 0)
        expect(len(r.out.strip().splitlines()) == 1, "tail 1", r)
        expect_in("loop_complete", r.out, r)
        # The details as `key=value`; --tail 0 is every event (events[-0:]).
        expect_in(" loop_complete    final_state=done iterations=", r.out, r)
        expect_in(" terminated_by=terminal", r.out, r)
        every = ll("history", "hello", cwd=wd).out.strip().splitlines()
        r = ll("history", "hello", "--tail", "0", cwd=wd)
        expect(r.out.strip().splitlines() == every and len(every) > 3, "tail 0 shows all", r)
        # repr() of the details, exactly: quotes, escapes, non-printables, floats, None.
        details = [{"s": "it's", "q": "say \"hi\"", "both": "'\"", "nl": "a\nb\tc\\d",
                    "esc": "\x1b[2J\x7f", "uni": "caf\u00e9 \u00a0\u2028\U0001f600",
                    "f": 1.0, "big": 1e16, "small": 1.5e-07, "i": -3, "n": None,
                    "b": [True, False, {"x": []}]}]
        with open(wd / ".loops" / ".running" / "tricky.events.jsonl", "w") as f:
            for d in details:
                f.write(json.dumps({"event": "custom", "ts": "2026-11-24T00:00:00.5", **d}) + "\n")
        r = ll("history", "tricky", cwd=wd)
        # Readable text, one line per event, safe on a terminal: strings as they are (control
        # characters visible, newlines and tabs as spaces), the rest as JSON.
        expect(r.out.count("\n") == 1 and r.out.startswith("2026-11-24T00:00:00 custom "),
               "one line", r)
        for part in (" s=it's", ' q=say "hi"', " nl=a b c\\d", " esc=^[[2J^?", " n=null",
                     ' b=[true,false,{"x":[]}]', " i=-3", " f=1.0"):
            expect_in(part, r.out, r)
        expect("\x1b" not in r.out, "no raw escape", r)
        expect(r.err == "", "no warning for a clean log", r)
        # Lines that are not events are skipped, and said so on stderr (stdout stays the
        # history); so is a log ending in a cut line.
        with open(wd / ".loops" / ".running" / "tricky.events.jsonl", "a") as f:
            f.write("not json\n" + json.dumps({"event": 5}) + "\n" +
                    json.dumps({"event": "later", "ts": "2026-11-24T00:00:01"}) + "\n{\"event\": \"cu")
        r = ll("history", "tricky", cwd=wd)
        expect_exit(r, 0)
        expect_in("2026-11-24T00:00:01 later", r.out, r)
        expect_in("warning: 2 lines of the event log '.loops/.running/tricky.events.jsonl' are not "
                  "events (lines 2 and 3): skipped", r.err, r)
        expect_in("ends in an incomplete line (a write cut short, or one in progress): skipped", r.err, r)
        r = ll("history", "nobody", cwd=wd)
        expect_exit(r, 0)
        expect_in("No history for: nobody", r.out, r)
        r = ll("stop", "hello", cwd=wd)
        expect_exit(r, 1)
        expect_in("Loop not running: hello", r.err, r)
        r = ll("stop", "nobody", cwd=wd)
        expect_exit(r, 1)
        expect_in("No state found for: nobody", r.err, r)
        r = ll("resume", "hello", cwd=wd)
        expect_exit(r, 1)
        expect_in("Nothing to resume for: hello", r.err, r)
        # The original's statuses: an error is `failed` (not resumable); max_iterations is
        # `interrupted` (resumable, e.g. with a higher cap).
        write(wd / "err.yaml", "name: err\ninitial: a\nstates:\n  a: {action: 'exit 1', on_success: done}\n"
              "  done: {terminal: true}\n")
        expect_exit(ll("run", "err.yaml", cwd=wd), 1)
        expect(ll("status", "err", "--json", cwd=wd).json()["status"] == "failed", "error: failed")
        r = ll("resume", "err", cwd=wd)
        expect_exit(r, 1)
        expect_in("Nothing to resume for: err (status: failed)", r.err, r)
        write(wd / "cap.yaml", "name: cap\ninitial: a\nmax_iterations: 2\nstates:\n"
              "  a: {action: 'echo x >> cap.log', next: b}\n  b: {action: 'true', next: c}\n"
              "  c: {action: 'true', next: done}\n  done: {terminal: true}\n")
        expect_exit(ll("run", "cap.yaml", cwd=wd), 1)
        expect(ll("status", "cap", "--json", cwd=wd).json()["status"] == "interrupted",
               "max_iterations: interrupted")
        r = ll("resume", "cap", "--max-iterations", "10", "--json", cwd=wd)  # a higher cap
        expect_exit(r, 0)
        expect(r.json()["final_state"] == "done", "resumed past the cap", r)
        expect(lines(wd / "cap.log") == ["x"], "a ran once", r)


def test_names_and_output_are_shown_escaped_by_every_verb():
    # Names from the loop file and an action's output can hold terminal escapes (retitle the
    # window, clear the screen): simulate, run --dry-run and test show them in caret notation.
    with Workdir() as wd:
        write(wd / "esc.yaml", 'name: "evil\\e]0;title\\a"\n'
                               'initial: "st\\e[2J"\n'
                               'states:\n'
                               '  "st\\e[2J":\n'
                               '    action: "printf \'\\\\033]0;pwn\\\\007\'; exit 1"\n'
                               '    on_failure: done\n'
                               '    on_success: done\n'
                               '  done: {terminal: true}\n')
        for argv in (["simulate", "esc.yaml"], ["run", "esc.yaml", "--dry-run"], ["test", "esc.yaml"]):
            r = ll(*argv, cwd=wd)
            expect("\x1b" not in r.out and "\x07" not in r.out, f"{argv[0]}: no raw escape", r)
            expect_in("st^[[2J", r.out, r)
        r = ll("test", "esc.yaml", cwd=wd)
        expect_in("evil^[]0;title^G", r.out, r)
        expect_in("^[]0;pwn^G", r.out, r)  # the action's output


def test_option_values_say_their_limits():
    with Workdir() as wd:
        write(wd / "l.yaml", CHECK_FIX)
        r = ll("simulate", "l.yaml", "-n", "2147483647", cwd=wd)
        expect_exit(r, 2)
        expect_in("(a positive integer, at most 1000000000)", r.err, r)
        r = ll("compile", "l.yaml", "-o", "", cwd=wd)
        expect_exit(r, 2)
        expect_in("argument -o/--output: expected a file name or '-'", r.err, r)
        expect(not (wd / "l.fsm.yaml").exists(), "nothing written", r)


def test_a_journal_directory_that_cannot_be_read_is_an_error():
    with Workdir() as wd:
        r = ll("status", cwd=wd)  # no runs yet: not an error
        expect_exit(r, 0)
        expect_in("No loops in .loops/.running", r.out, r)
        write(wd / ".loops" / ".running", "a file, not a directory\n")
        for argv in (["status"], ["status", "--json"], ["list", "--running"]):
            r = ll(*argv, cwd=wd)
            expect_exit(r, 1)
            expect_in("cannot read the journal directory '.loops/.running': it is not a directory", r.err, r)
        r = ll("status", "--journal-dir", "", cwd=wd)
        expect_exit(r, 1)
        expect_in("cannot read the journal directory '': the path is empty", r.err, r)
        # An event log that is not a regular file: an error, not "No history".
        (wd / "j").mkdir()
        os.mkfifo(wd / "j" / "f.events.jsonl")
        (wd / "j" / "d.events.jsonl").mkdir()
        for name in ("f", "d"):
            r = ll("history", name, "--journal-dir", "j", cwd=wd)
            expect_exit(r, 1)
            expect_in(f"cannot read the event log 'j/{name}.events.jsonl': it is not a regular file", r.err, r)


def test_loop_names_that_share_journal_files():
    # `a b` and `a_b` map to the same files (.loops/.running/a_b.*): neither loop may take
    # over, show or resume the other's runs.
    with Workdir() as wd:
        write(wd / ".loops" / "spaced.yaml", CHECK_FIX.replace("check-fix", "'a b'"))
        write(wd / ".loops" / "underscored.yaml", CHECK_FIX.replace("check-fix", "a_b"))
        r = ll("run", "spaced", "-q", cwd=wd)
        expect_exit(r, 0)
        events = lines(wd / ".loops" / ".running" / "a_b.events.jsonl")
        expect(len(events) > 3, "the first loop's events", r)
        r = ll("run", "underscored", "-q", cwd=wd)
        expect_exit(r, 1)
        expect_in('hold the runs of loop "a b", not of "a_b"', r.err, r)
        expect(lines(wd / ".loops" / ".running" / "a_b.events.jsonl") == events,
               "the first loop's event log is untouched", r)
        for verb in ("status", "stop"):
            r = ll(verb, "a_b", cwd=wd)
            expect_exit(r, 1)
            expect_in('No state found for: a_b (its journal files hold loop "a b")', r.err, r)
        r = ll("resume", "a_b", cwd=wd)
        expect_exit(r, 1)
        expect_in('Nothing to resume for: a_b (its journal files hold loop "a b")', r.err, r)
        r = ll("history", "a_b", cwd=wd)
        expect_exit(r, 0)
        expect_in('No history for: a_b (its journal files hold loop "a b")', r.out, r)
        r = ll("status", "a b", cwd=wd)
        expect_exit(r, 0)
        expect_in("Status: completed", r.out, r)
        r = ll("history", "a b", cwd=wd)
        expect_exit(r, 0)
        expect_in("loop_complete", r.out, r)


def test_stop_running_loop_then_resume():
    with Workdir() as wd:
        write(wd / ".loops" / "slow.yaml", """\
name: slow
initial: wait
states:
  wait:
    action: echo started >> log; sleep 5; echo finished >> log
    next: after
  after:
    action: echo after >> log
    next: done
  done:
    terminal: true
""")
        proc = spawn("run", "slow", cwd=wd)
        wait_for(lambda: (wd / "log").exists(), what="the action to start")
        r = ll("status", "slow", cwd=wd)
        expect_in("Status: running", r.out, r)
        r = ll("stop", "slow", cwd=wd)
        expect_exit(r, 0)
        proc.wait(timeout=8)
        expect(proc.returncode == 1, f"stopped run exits 1, got {proc.returncode}")
        r = ll("status", "slow", "--json", cwd=wd)
        expect(r.json()["status"] == "interrupted", "interrupted after stop", r)
        log = (wd / "log").read_text().split()
        expect("finished" not in log, f"the action was killed: {log}")
        # As in the original, resume also takes the loop's file: its journal is found by the
        # name inside it. The killed action runs again, then the rest.
        r = ll("resume", ".loops/slow.yaml", "--quiet", cwd=wd, timeout=20)
        expect_exit(r, 0)
        log = (wd / "log").read_text().split()
        expect(log == ["started", "started", "finished", "after"], f"resumed to the end: {log}")


SCOPED = """\
name: {name}
initial: work
{scope}
states:
  work:
    action: echo {name} >> started; {action}
    next: done
  done:
    terminal: true
"""


def test_overlapping_scopes_do_not_run_at_once():
    with Workdir() as wd:
        (wd / "src" / "lib").mkdir(parents=True)
        write(wd / "long.yaml", SCOPED.format(name="long", scope="scope: [src]",
                                              action="while [ ! -f release ]; do sleep 0.05; done"))
        write(wd / "inner.yaml", SCOPED.format(name="inner", scope="scope: [src/lib]", action="true"))
        write(wd / "whole.yaml", SCOPED.format(name="whole", scope="", action="true"))
        write(wd / "beside.yaml", SCOPED.format(name="beside", scope="scope: [docs, srcs]",
                                                action="true"))
        write(wd / "ctx.yaml", SCOPED.format(name="ctx", scope="scope: ['${context.area}']",
                                             action="true"))
        # `show` says what a run claims.
        expect_in("Scope: src\n", ll("show", "long.yaml", cwd=wd).out)
        expect_in("Scope: ${context.area}\n", ll("show", "ctx.yaml", cwd=wd).out)
        expect_in("Scope: . (default: the working directory)\n", ll("show", "whole.yaml", cwd=wd).out)
        proc = spawn("run", "long.yaml", cwd=wd)
        wait_for(lambda: "long" in lines(wd / "started"), what="the long loop to start")
        # Inside its scope, or the whole project (no scope): refused, nothing journaled.
        for loop in ("inner.yaml", "whole.yaml"):
            r = ll("run", loop, cwd=wd)
            expect_exit(r, 1)
            expect_in("Scope conflict with running loop: long", r.err, r)
            expect_in(f"Conflicting scope: ['{(wd / 'src').resolve()}']", r.err, r)
            expect_in("Use --queue to wait for it to finish", r.err, r)
        r = ll("run", "ctx.yaml", "--context", "area=src/lib/x", cwd=wd)
        expect_exit(r, 1)
        expect_in("Scope conflict with running loop: long", r.err, r)
        expect(not (wd / ".loops" / ".running" / "inner.state.json").exists(),
               "a refused run journals nothing")
        # Beside it: runs.
        for args in (["beside.yaml"], ["ctx.yaml", "--context", "area=docs"]):
            r = ll("run", *args, "--quiet", cwd=wd)
            expect_exit(r, 0)
        # --queue waits for it, then runs.
        queued = spawn("run", "inner.yaml", "--queue", "--quiet", cwd=wd)
        time.sleep(1.5)
        expect(queued.poll() is None, "a queued run waits")
        expect("inner" not in lines(wd / "started"), "a queued run has not started")
        (wd / "release").touch()
        proc.wait(timeout=10)
        out, err = queued.communicate(timeout=10)
        expect(queued.returncode == 0, f"the queued run finished: {queued.returncode} {err}")
        expect_in("Waiting for conflicting loop 'long' to finish...", err)
        expect(lines(wd / "started")[-1] == "inner", "it ran after the long loop")
        # A finished run's claim is gone: anything may run.
        r = ll("run", "whole.yaml", "--quiet", cwd=wd)
        expect_exit(r, 0)
        # A path no file system can name is refused, not cut short at the NUL.
        write(wd / "nul.yaml", SCOPED.format(name="nul", scope='scope: ["src\\0x"]', action="true"))
        r = ll("run", "nul.yaml", cwd=wd)
        expect_exit(r, 1)
        expect_in("Invalid scope: a scope path holds a NUL byte", r.err, r)


def test_a_killed_runs_scope_claim_is_stale():
    with Workdir() as wd:
        write(wd / "long.yaml", SCOPED.format(name="long", scope="",
                                              action="while [ ! -f release ]; do sleep 0.0517; done"))
        write(wd / "other.yaml", SCOPED.format(name="other", scope="", action="true"))
        proc = spawn("run", "long.yaml", cwd=wd)
        wait_for(lambda: "long" in lines(wd / "started"), what="the long loop to start")
        expect_exit(ll("run", "other.yaml", cwd=wd), 1)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
        r = ll("run", "other.yaml", "--quiet", cwd=wd)
        (wd / "release").touch()  # the killed run's action, left behind, ends
        wait_for(lambda: not pids_with_marker("sleep 0.0517"), what="the orphaned action to end")
        expect_exit(r, 0)


if __name__ == "__main__":
    main()
