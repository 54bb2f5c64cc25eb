#!/usr/bin/env python3
# little_loops — e2e: the test guards (tamper_guard, prepatch_check) in a real git repository
# SPDX-License-Identifier: MIT
"""`tamper_guard:` through ll-loop: in a temporary git repository an action that edits a test
file is caught (fail: the failure terminal; revert: the file is restored), an action that
leaves the tests alone passes, and `simulate` runs a guarded loop with its probes answered
by nothing."""
import shutil
import subprocess
from pathlib import Path

from harness import Skip, Workdir, expect, expect_exit, expect_in, ll, main, write

TEST_FILE = "def test_ok():\n    assert 1 + 1 == 2\n"


def git(wd: Path, *args):
    subprocess.run(["git", *args], cwd=wd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@x", "HOME": str(wd), "PATH": "/usr/bin:/bin"})


def repo(wd: Path):
    if shutil.which("git") is None:
        raise Skip("git is not installed")
    write(wd / "tests" / "test_math.py", TEST_FILE)
    write(wd / "src" / "app.py", "x = 1\n")
    write(wd / ".gitignore", ".loops/\n")
    git(wd, "init", "-q")
    git(wd, "add", ".")
    git(wd, "commit", "-q", "-m", "base")


def loop(wd: Path, policy: str, action: str) -> Path:
    return write(wd / "guarded.yaml", f"""\
name: guarded
initial: verify
tamper_guard: {policy}
states:
  verify:
    action: "{action}"
    on_yes: done
    on_no: done
    on_error: done
  done:
    terminal: true
  failed:
    terminal: true
""")


def test_fail_sends_a_tampering_run_to_its_failure_terminal():
    with Workdir() as wd:
        repo(wd)
        path = loop(wd, "fail", "echo 'def test_ok(): pass' > tests/test_math.py")
        r = ll("run", path, "--json", cwd=wd)
        expect_exit(r, 2)
        expect(r.json()["final_state"] == "failed", "the guard routed to `failed`", r)
        git(wd, "checkout", "--", "tests/test_math.py")
        r = ll("run", path, cwd=wd)
        expect_in("tamper_guard (fail): 1 test file(s) changed", r.out, r)


def test_revert_restores_the_test_file_and_goes_on():
    with Workdir() as wd:
        repo(wd)
        path = loop(wd, "revert", "echo 'def test_ok(): pass' > tests/test_math.py")
        r = ll("run", path, "--json", cwd=wd)
        expect_exit(r, 0)
        expect(r.json()["final_state"] == "done", "the run went on", r)
        expect((wd / "tests" / "test_math.py").read_text() == TEST_FILE, "the test file is restored", r)


def test_an_added_test_file_is_a_finding_and_other_files_are_not():
    with Workdir() as wd:
        repo(wd)
        r = ll("run", loop(wd, "fail", "echo y = 2 >> src/app.py"), "--json", cwd=wd)
        expect_exit(r, 0)
        r = ll("run", loop(wd, "fail", "echo 'def test_new(): pass' > tests/test_new.py"), "--json", cwd=wd)
        expect_exit(r, 2)


def test_prepatch_check_without_a_checker_records_a_skip_and_goes_on():
    with Workdir() as wd:
        repo(wd)
        path = write(wd / "pre.yaml", """\
name: pre
initial: verify
prepatch_check: fail
states:
  verify:
    action: "echo 'def test_new(): pass' > tests/test_new.py"
    on_yes: report
    on_no: done
  report:
    action: "printf '%s' '${context._prepatch_check}'"
    capture: report
    next: done
  done:
    terminal: true
  failed:
    terminal: true
""")
        r = ll("run", path, "--json", cwd=wd)
        expect_exit(r, 0)
        doc = r.json()
        expect(doc["final_state"] == "done", "no checker: the run goes on", r)
        out = doc["captured"]["report"]["output"]
        expect_in('"verdict":"skipped"', out.replace(" ", ""), r)
        expect_in("no pre-patch checker in this host", out, r)
        r = ll("validate", path, "--json", cwd=wd)
        expect(r.json()["guards"]["prepatch_check"] == "fail", "validate --json shows the guard", r)


CHILD = """\
name: child
initial: work
states:
  work:
    action: "pwd > '${context.run_dir}/where.txt' && git rev-parse --abbrev-ref HEAD >> '${context.run_dir}/where.txt' && echo from-child > made.txt && git add made.txt && git commit -q -m child"
    on_yes: done
    on_no: failed
  done:
    terminal: true
  failed:
    terminal: true
"""

PARENT = """\
name: parent
initial: delegate
states:
  delegate:
    loop: child
    worktree: "${context.branch}"
    context_passthrough: true
    on_yes: done
    on_no: failed
    on_error: failed
  done:
    terminal: true
  failed:
    terminal: true
"""


def test_a_sub_loop_runs_in_a_worktree_of_its_branch():
    with Workdir() as wd:
        repo(wd)
        git(wd, "branch", "feature")
        write(wd / "child.yaml", CHILD)
        parent = write(wd / "parent.yaml", PARENT)
        run_dir = wd / "out"
        run_dir.mkdir()
        r = ll("run", parent, "--context", "branch=feature", "--context", f"run_dir={run_dir}", cwd=wd)
        expect_exit(r, 0)
        expect_in("sub_loop_worktree_attached: feature at", r.out, r)
        expect_in("sub_loop_worktree_detached: feature at", r.out, r)
        where, branch = (run_dir / "where.txt").read_text().split()
        expect("/.loops/worktrees/" in where and where.endswith("-subloop-feature"), f"ran in {where}", r)
        expect(branch == "feature", f"on branch {branch}", r)
        expect(not Path(where).exists(), "the worktree is removed", r)
        expect(not (wd / "made.txt").exists(), "the main checkout is untouched", r)
        log = subprocess.run(["git", "log", "--format=%s", "feature"], cwd=wd, capture_output=True, text=True).stdout
        expect(log.split()[0] == "child", "the child's commit is on the branch", r)
        # an empty branch: no worktree, the child runs here
        r = ll("run", parent, "--context", "branch=", "--context", f"run_dir={run_dir}", cwd=wd)
        expect_exit(r, 0)
        expect((run_dir / "where.txt").read_text().split()[0] == str(wd.resolve()) or
               (run_dir / "where.txt").read_text().split()[0] == str(wd), "ran in place", r)
        # a branch that does not exist: the state's error route
        r = ll("run", parent, "--context", "branch=no-such-branch", "--json", cwd=wd)
        expect_exit(r, 2)
        expect(r.json()["final_state"] == "failed", "the error route", r)
        r = ll("simulate", parent, "--context", "branch=feature", cwd=wd)
        expect_exit(r, 0)
        expect_in("[SIMULATED] Would attach a worktree to branch feature", r.out, r)


def test_simulate_answers_the_probes_with_nothing():
    with Workdir() as wd:
        path = loop(wd, "fail", "edit the tests")
        r = ll("simulate", path, cwd=wd)
        expect_exit(r, 0)
        expect_in("[SIMULATED] Probe: if [ -f pytest.ini ]", r.out, r)
        expect_in("Would have executed 1 commands", r.out, r)
        r = ll("validate", path, "--json", cwd=wd)
        expect(r.json()["guards"]["states"]["verify"] == {"tamper_guard": "fail"}, "validate --json", r)
        r = ll("show", path, cwd=wd)
        expect_in("verify: tamper_guard fail", r.out, r)


if __name__ == "__main__":
    main()
