#!/usr/bin/env python3
# little_loops — e2e: loops composed at load (from:, flow:, import:, fragment:) through ll-loop
# SPDX-License-Identifier: MIT
"""`validate`, `show` and `simulate` of composed loops from tests/fixtures/compose; names found
beside the loop, in .loops/ and on LL_LOOP_PATH; composition errors with the chain and the
position in the file the text came from."""
import shutil

from harness import SOURCE_DIR, Workdir, expect, expect_exit, expect_in, ll, main, write

COMPOSE = SOURCE_DIR / "tests" / "fixtures" / "compose"


def test_validate_show_and_simulate_an_inheriting_loop():
    r = ll("validate", "--json", "child.yaml", cwd=COMPOSE)
    expect_exit(r, 0)
    expect(r.json()["valid"] is True, "child.yaml validates", r)
    r = ll("show", "child.yaml", "--format", "json", cwd=COMPOSE)
    expect_exit(r, 0)
    loop = r.json()
    states = loop["states"]
    expect(list(states) == ["check", "fix", "done", "failed"], "states in the parent's order", r)
    expect_in("compose.hpp", states["check"]["action"], r, "the child's action")
    expect_in(".loops/tmp/fix-count", states["fix"]["action"], r, "the fragment's action, ${param.*} filled")
    r = ll("simulate", "child.yaml", "--scenario", "all-pass", "--json", cwd=COMPOSE)
    expect_exit(r, 0)
    expect(r.json()["final_state"] == "done", "simulate reaches done", r)


def test_flow_list_becomes_states():
    r = ll("show", "flow.yaml", cwd=COMPOSE)
    expect_exit(r, 0)
    expect_in("build → test → done", r.out, r)
    r = ll("simulate", "flow.yaml", "--scenario", "all-pass", "--json", cwd=COMPOSE)
    expect_exit(r, 0)
    expect(r.json()["final_state"] == "done", "the last flow entry is terminal", r)


def test_names_are_found_on_the_host_search_path():
    with Workdir() as wd:
        shutil.copy(COMPOSE / "child.yaml", wd / "child.yaml")
        r = ll("validate", "child.yaml", cwd=wd)
        expect(r.code != 0, "lib/base is not beside the copy", r)
        expect_in("Loop not found: lib/base", r.err, r)
        r = ll("validate", "child.yaml", cwd=wd, env={"LL_LOOP_PATH": f"/nonexistent:{COMPOSE}"})
        expect_exit(r, 0)
        # a name on the command line is looked up there too, after .loops/
        r = ll("validate", "flow", cwd=wd, env={"LL_LOOP_PATH": str(COMPOSE)})
        expect_exit(r, 0)
        # .loops/ comes before the host path
        write(wd / ".loops" / "lib" / "base.yaml", """\
name: project-base
description: the project's own base
initial: check
states:
  check: {action: "true", next: done}
  done: {terminal: true}
""")
        r = ll("show", "child.yaml", "--format", "json", cwd=wd, env={"LL_LOOP_PATH": str(COMPOSE)})
        expect_exit(r, 0)
        expect_in("the project's own base", r.out, r)


def test_composition_errors_show_the_chain_and_the_other_file():
    r = ll("validate", "bad/cycle-a.yaml", cwd=COMPOSE)
    expect(r.code != 0, "a cycle is an error", r)
    expect_in("Circular `from:` chain: bad/cycle-a.yaml -> cycle-b -> cycle-a", r.err, r)
    expect_in("bad/cycle-b.yaml:2:1:", r.err, r)
    r = ll("validate", "bad/uses-broken.yaml", cwd=COMPOSE)
    expect(r.code != 0, "a bad fragment is an error", r)
    expect_in("bad/broken-lib.yaml:6:7:", r.err, r)
    expect_in('did you mean "output_contains"', r.err, r)
    r = ll("validate", "--json", "bad/missing-param.yaml", cwd=COMPOSE)
    expect(r.code != 0, "a required parameter without a binding is an error", r)
    report = r.json()
    errors = [d for d in report["diagnostics"] if d["level"] == "error"]
    expect(len(errors) == 1, "one error for the missing parameter", r)
    expect_in("Required parameter 'counter_key' of fragment 'retry_counter'", errors[0]["message"], r)
    expect(errors[0]["line"] == 6, "at the state that uses the fragment", r)
    r = ll("validate", "bad/missing-child.yaml", cwd=COMPOSE)
    expect(r.code != 0, "a sub-loop that does not exist is an error", r)
    expect_in("bad/missing-child.yaml:5:5:", r.err, r)
    expect_in("Loop reference 'no-such-loop' does not resolve to any file", r.err, r)
    r = ll("run", "bad/missing-param.yaml", cwd=COMPOSE)
    expect(r.code != 0, "run refuses it before any action", r)
    expect_in("Validation error:", r.err, r)


if __name__ == "__main__":
    main()
