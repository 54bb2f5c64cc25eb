#!/usr/bin/env python3
# little_loops — e2e: the reference's own fixtures end where the reference engine ends
# SPDX-License-Identifier: MIT
"""`ll-loop simulate` on fixtures of little-loops HEAD (tests/fixtures/reference/), with the
outcome its engine reaches on the same scenario: (terminated_by, final_state, steps). A
self-loop ends at the per-visit throttle (step 12 routes to on_error, step 13 stops), as the
reference's does."""
from pathlib import Path

from harness import SOURCE_DIR, Workdir, expect, expect_exit, ll, main, write

REFERENCE = SOURCE_DIR / "tests" / "fixtures" / "reference"

# fixture: {scenario: (terminated_by, final_state, steps)}, and its dialect
EXPECTED = {
    "valid-loop": ("current", {"all-pass": ("terminal", "done", 1), "all-fail": ("terminal", "done", 1),
                               "all-error": ("error", "check", 1), "first-fail": ("terminal", "done", 1)}),
    "no-description": ("current", {"all-pass": ("terminal", "done", 1), "all-error": ("error", "check", 1)}),
    "loop-with-unreachable-state": ("current", {"all-pass": ("terminal", "done", 1),
                                                "all-fail": ("terminal", "done", 1),
                                                "all-error": ("error", "start", 1)}),
    "analysis-degenerate-gate": ("current", {"all-pass": ("terminal", "done", 1),
                                             "all-fail": ("error", "check_outcome", 13),
                                             "first-fail": ("terminal", "done", 2)}),
    "semantic-valid-aligned": ("current", {"all-pass": ("terminal", "done", 1), "all-fail": ("terminal", "done", 2),
                                           "all-error": ("terminal", "done", 1), "first-fail": ("terminal", "done", 2)}),
    "semantic-goal-gap": ("current", {"all-pass": ("terminal", "done", 1), "all-fail": ("terminal", "done", 1)}),
    "broken-verify-loop": ("current", {"all-pass": ("error", None, 1), "all-fail": ("error", None, 1)}),
    "analysis-capture-vacuum": ("current", {"all-pass": ("max_iterations", "harvest", 20)}),
    "analysis-numeric-stall": ("seed", {"all-pass": ("terminal", "done", 1), "all-error": ("terminal", "done", 1)}),
    "assess-honest-failure": ("seed", {"all-pass": ("terminal", "done", 1), "all-fail": ("terminal", "done", 1)}),
    "assess-pid-corruption": ("seed", {"all-pass": ("terminal", "done", 1), "all-error": ("terminal", "done", 1)}),
    "custom-on-routing": ("seed", {"all-pass": ("error", "check", 1)}),
}


def simulate(wd, fixture, *args):
    r = ll("simulate", REFERENCE / f"{fixture}.yaml", "--json", *args, cwd=wd)
    doc = r.json()
    expect_exit(r, 1 if doc["terminated_by"] == "error" else 0)  # as `run`: an error fails
    return r, doc


def test_fixtures_end_where_the_reference_ends():
    with Workdir() as wd:
        for fixture, (dialect, scenarios) in EXPECTED.items():
            for scenario, (how, final, steps) in scenarios.items():
                r, doc = simulate(wd, fixture, "--scenario", scenario)
                got = (doc["terminated_by"], doc["final_state"] if final else None, doc["iterations"])
                expect(got == (how, final, steps), f"{fixture} {scenario}: {got} != {(how, final, steps)}", r)
                expect(doc["dialect"] == dialect, f"{fixture}: dialect {doc['dialect']}", r)


def test_numeric_stall_progresses_to_its_target():
    with Workdir() as wd:
        responses = write(Path(wd) / "r.json", '{"by_index": [{"output": "0.5"}, {"output": "0.6"}, {"output": "0.9"}]}')
        r, doc = simulate(wd, "analysis-numeric-stall", "--responses", responses)
        expect((doc["terminated_by"], doc["final_state"]) == ("terminal", "done"), "done", r)


def test_validate_reports_the_dialect():
    with Workdir() as wd:
        r = ll("validate", "--json", REFERENCE / "valid-loop.yaml", cwd=wd)
        expect_exit(r, 0)
        expect(r.json()["dialect"] == "current" and r.json()["dialect_inferred"] is True, "current", r)
        r = ll("show", REFERENCE / "assess-pid-corruption.yaml", cwd=wd)
        expect_exit(r, 0)
        expect("Dialect: seed (inferred)" in r.out, "show says the dialect", r)


def test_simulate_injects_run_dir_and_takes_input():
    with Workdir() as wd:
        loop = write(Path(wd) / "l.yaml", """
name: inj
input_key: topic
required_inputs: [topic]
context: {n: 1}
max_steps: 3
initial: a
states:
  a: {action: "echo ${context.run_dir}|${context.topic}|${context.max_steps}|${context.n}", next: done}
  done: {terminal: true}
""")
        r = ll("simulate", loop, "cats", cwd=wd)
        expect_exit(r, 0)
        expect(f"{Path(wd).resolve()}/.loops/runs/inj-simulate/|cats|3|1" in r.out, "injected", r)
        expect((Path(wd) / ".loops" / "runs" / "inj-simulate").is_dir(), "run_dir created", r)
        r = ll("simulate", loop, '{"n": 7}', cwd=wd)
        expect_exit(r, 1)
        expect("requires input 'topic'" in r.err, "required input", r)
        r = ll("simulate", loop, '{"n": 7}', "--context", "topic=x", cwd=wd)
        expect_exit(r, 0)
        expect("|x|3|7" in r.out, "JSON object sets known keys", r)


if __name__ == "__main__":
    main()
