#!/usr/bin/env python3
# little_loops — e2e: sub-loop states (`loop:`) through ll-loop: validate, run, simulate, resume
# SPDX-License-Identifier: MIT
"""A parent runs a child found beside it; the child's events carry `depth`; its terminal
`output:` reaches the parent; an invalid child is reported with its own file:line:col."""
import json
import os
import signal

from harness import (Workdir, expect, expect_exit, expect_in, lines, ll, main, pids_with_marker,
                     spawn, wait_for, write)

CHILD = """\
name: child
parameters:
  item: {type: string, required: true}
initial: work
states:
  work:
    action: echo "child ${context.item}" >> log; echo made-${context.item}
    capture: made
    on_yes: done
    on_no: failed
  done:
    terminal: true
    output:
      summary: "${captured.made.output}"
  failed: {terminal: true}
"""

PARENT = """\
name: parent
initial: call
context: {thing: apple}
states:
  call:
    loop: child
    with: {item: "${context.thing}"}
    on_yes: report
    on_no: bad
  report:
    action: echo "parent ${captured.call.output.summary} ${captured.call.made.output}" >> log
    next: done
  bad: {terminal: true, failure: true}
  done: {terminal: true}
"""


def setup(wd, child=CHILD, parent=PARENT):
    write(wd / ".loops" / "child.yaml", child)
    write(wd / ".loops" / "parent.yaml", parent)


def test_run_a_child_and_read_its_output():
    with Workdir() as wd:
        setup(wd)
        r = ll("validate", "parent", cwd=wd)
        expect_exit(r, 0)
        r = ll("run", "parent", cwd=wd)
        expect_exit(r, 0)
        expect_in("\n  \u21b3 sub-loop child\n  [1/50] work", r.out, r, "the child's steps, indented")
        expect(lines(wd / "log") == ["child apple", "parent made-apple made-apple"], f"log: {lines(wd / 'log')}")
        events = [json.loads(x) for x in lines(wd / ".loops" / ".running" / "parent.events.jsonl")] \
            if (wd / ".loops" / ".running" / "parent.events.jsonl").exists() else None
        r = ll("history", "parent", "--json", cwd=wd)
        if events is None and r.code == 0:
            events = r.json() if isinstance(r.json(), list) else r.json().get("events", [])
        if events:
            depths = {e["event"] + "@" + str(e.get("depth", 0)) for e in events}
            expect("state_enter@1" in depths and "loop_start@1" in depths, f"child events at depth 1: {depths}")


def test_validate_reports_an_invalid_child_at_its_position():
    with Workdir() as wd:
        setup(wd, child=CHILD.replace("on_no: failed", "on_no: nowhere"))
        r = ll("validate", "parent", cwd=wd)
        expect(r.code == 0, "the parent loads, as in the reference, with a warning", r)
        expect_in("child loop 'child' is invalid", r.err + r.out, r)
        expect_in("child.yaml:10:5", r.err + r.out, r)
        r = ll("run", "parent", cwd=wd)
        expect(r.code != 0, "the sub-loop state takes its error route when it runs", r)
        setup(wd, parent=PARENT.replace('with: {item: "${context.thing}"}', "with: {itme: x}"))
        r = ll("validate", "parent", cwd=wd)
        expect(r.code != 0, "an unknown with: key", r)
        expect_in("'with.itme' is not a declared parameter of loop 'child'", r.err + r.out, r)


def test_simulate_runs_the_child_with_the_same_responses():
    with Workdir() as wd:
        setup(wd)
        r = ll("simulate", "parent", "--scenario", "all-pass", "--json", cwd=wd)
        expect_exit(r, 0)
        expect(r.json()["final_state"] == "done", "the child's yes routes the parent", r)
        r = ll("simulate", "parent", "--scenario", "all-fail", "--json", cwd=wd)
        expect(r.json()["final_state"] == "bad", "the child's failure routes on_no", r)


def test_show_marks_sub_loop_states():
    with Workdir() as wd:
        setup(wd)
        r = ll("show", "parent", cwd=wd)
        expect_exit(r, 0)
        expect_in("call: [loop: child], yes→report, no→bad", r.out, r)
        r = ll("show", "parent", "--format", "dot", cwd=wd)
        expect_exit(r, 0)
        expect_in('[loop: child]", shape=component', r.out, r)
        r = ll("show", "parent", "--format", "mermaid", cwd=wd)
        expect_exit(r, 0)
        expect_in("class s0 subloop", r.out, r)


STEPS_CHILD = """\
name: steps
initial: one
states:
  one:
    action: echo one >> log; echo first-out
    capture: first
    next: two
  two:
    action: echo two-start >> log; sleep 2.4681; echo two >> log
    next: three
  three:
    action: echo three >> log
    next: done
  done: {terminal: true}
"""

STEPS_PARENT = """\
name: outer
initial: before
states:
  before:
    action: echo before >> log
    next: call
  call:
    loop: steps
    context_passthrough: true
    on_yes: after
  after:
    action: echo "after ${captured.call.first.output}" >> log
    next: done
  done: {terminal: true}
"""


def test_kill_9_inside_a_child_then_resume_continues_there():
    with Workdir() as wd:
        write(wd / ".loops" / "steps.yaml", STEPS_CHILD)
        write(wd / ".loops" / "outer.yaml", STEPS_PARENT)
        proc = spawn("run", "outer", cwd=wd)
        wait_for(lambda: "two-start" in lines(wd / "log"), what="the child's slow action")
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=5)
        r = ll("status", "outer", "--json", cwd=wd)
        expect_exit(r, 0)
        expect(r.json().get("current_state") in (None, "call"), "the journal names the sub-loop state", r)
        r = ll("resume", "outer", cwd=wd)
        expect_exit(r, 0)
        expect(not pids_with_marker("sleep 2.4681"), "nothing is left running")
        log = lines(wd / "log")
        # `before` and the child's `one` finished before the kill: neither runs again; the
        # child's state in flight runs again, inside the child, then the parent goes on
        expect(log == ["before", "one", "two-start", "two-start", "two", "three", "after first-out"],
               f"resumed inside the child: {log}")
        r = ll("status", "outer", "--json", cwd=wd)
        expect(r.json()["status"] == "completed", "completed after resume", r)


if __name__ == "__main__":
    main()
