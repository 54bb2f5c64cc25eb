#!/usr/bin/env python3
# little_loops — e2e: every loop in examples/loops/ runs to its terminal on a bare machine
# SPDX-License-Identifier: MIT
from harness import EXAMPLES, Workdir, expect, expect_exit, expect_in, ll, main


def run_example(name, wd, *extra):
    r = ll("run", EXAMPLES / name, "--context", f"workdir={wd / 'data'}", *extra, cwd=wd)
    return r


def test_goal_fix_really_fixes():
    with Workdir() as wd:
        r = run_example("goal_config_file.yaml", wd)
        expect_exit(r, 0)
        expect_in("Loop completed: done", r.out, r)
        expect((wd / "data" / "demo.conf").read_text() == "mode=ready\n", "fix wrote the file", r)
        expect_in("\u2717 failure", r.out, r)   # the first check failed ...
        expect_in("\u2713 success", r.out, r)   # ... and the last one passed
        again = run_example("goal_config_file.yaml", wd, "--json")
        expect_exit(again, 0)
        expect(again.json()["iterations"] == 1, "second run: the goal already holds", again)


def test_convergence_counter_reaches_target():
    with Workdir() as wd:
        # The check is data: it is pointed at the work directory through metric_cmd.
        r = run_example("convergence_counter.yaml", wd, "--json", "--context",
                        f"metric_cmd=cat '{wd / 'data'}/counter' 2>/dev/null || echo 0")
        expect_exit(r, 0)
        doc = r.json()
        expect(doc["terminated_by"] == "terminal" and doc["final_state"] == "done", "done", r)
        expect((wd / "data" / "counter").read_text().strip() == "5", "counter at 5", r)


def test_invariants_workspace_all_valid():
    with Workdir() as wd:
        (wd / "data").mkdir()
        for junk in ("a.tmp", "b.tmp"):
            (wd / "data" / junk).write_text("junk")
        r = run_example("invariants_workspace.yaml", wd)
        expect_exit(r, 0)
        expect_in("all_valid", r.out, r)
        readme = wd / "data" / "README"
        expect("little_loops" in readme.read_text(), "README fixed", r)
        expect(oct(readme.stat().st_mode & 0o777) == "0o600", "README private", r)
        expect(not list((wd / "data").glob("*.tmp")), "temp files removed", r)


def test_imperative_batches_until_three():
    with Workdir() as wd:
        r = run_example("imperative_batches.yaml", wd, "--json")
        expect_exit(r, 0)
        lines = (wd / "data" / "batches.log").read_text().splitlines()
        expect(len(lines) == 3, f"three batches, got {lines}", r)
        expect(r.json()["final_state"] == "done", "done", r)


def test_fsm_cache_warmup():
    with Workdir() as wd:
        r = run_example("fsm_cache_warmup.yaml", wd, "--context", "wanted=4")
        expect_exit(r, 0)
        expect_in("Loop completed: done", r.out, r)
        expect_in('"entries": 4', (wd / "data" / "cache.json").read_text(), r, "cache.json")
        # a corrupt cache is an evaluator error → the failure terminal, exit 2
        (wd / "data" / "cache.json").write_text("not json")
        r = run_example("fsm_cache_warmup.yaml", wd, "--json")
        expect_exit(r, 2)
        expect(r.json()["final_state"] == "broken", "failure terminal", r)


def test_every_example_is_covered():
    covered = {"goal_config_file.yaml", "convergence_counter.yaml", "invariants_workspace.yaml",
               "imperative_batches.yaml", "fsm_cache_warmup.yaml"}
    present = {p.name for p in EXAMPLES.glob("*.yaml")}
    expect(present == covered, f"examples without an e2e test: {sorted(present - covered)}")


if __name__ == "__main__":
    main()
