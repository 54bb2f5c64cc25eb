#!/usr/bin/env python3
# little_loops — e2e: the throttle and learning states of ll-loop run and simulate
# SPDX-License-Identifier: MIT
"""A state's actions are counted per visit (`throttle:`): warned about, sent to
`on_throttle_hard`, stopped beyond hard_max, under a real `ll-loop run` of shell actions and
under `simulate`; the reference's recursive-refine (via lib/common.yaml's with_throttle)
validates. A learning state reads the registry under the working directory
(`.ll/learning-tests/<slug>.md`), explores a missing target with `/ll:explore-api` through
the prompt command (a fake `claude` here that proves it), and routes on the outcome; the
reference's learning fixtures and ready-to-implement-gate validate."""
import json
import os

from harness import (SOURCE_DIR, Skip, Workdir, expect, expect_exit, expect_in, ll, main, write)

REFERENCE = SOURCE_DIR.parent.parent / "shared" / "reference" / "little-loops-head" / "scripts"

THROTTLED = """\
name: throttled
initial: poll
states:
  poll:
    action: "echo tick >> ticks.txt"
    action_type: shell
    throttle: {normal_max: 1, warn_max: 2, hard_max: 3}
    on_yes: poll
    on_no: done
    on_throttle_hard: escalate
  escalate:
    action: "echo escalated > escalated.txt"
    next: done
  done:
    terminal: true
"""


def test_run_warns_then_leaves_for_on_throttle_hard():
    with Workdir() as wd:
        loop = write(wd / "throttled.yaml", THROTTLED)
        r = ll("run", loop, cwd=wd)
        expect_exit(r, 0)
        expect((wd / "ticks.txt").read_text().count("tick") == 3, "poll ran 3 actions", r)
        expect((wd / "escalated.txt").exists(), "on_throttle_hard ran", r)
        expect_in("throttle_warn: poll ran 2 actions in this visit", r.out, r)
        expect_in("throttle_hard: poll ran 3 actions in this visit (hard_max 3) \u2192 escalate", r.out, r)


def test_run_stops_beyond_hard_max_without_a_target():
    with Workdir() as wd:
        loop = write(wd / "stopped.yaml", THROTTLED.replace("    on_throttle_hard: escalate\n", ""))
        r = ll("run", loop, cwd=wd)
        expect_exit(r, 1)
        expect((wd / "ticks.txt").read_text().count("tick") == 4, "the 4th action is the last", r)
        expect_in("Throttle stop: state 'poll' exceeded hard_max=3 tool calls with no "
                  "on_throttle_hard target", r.out + r.err, r)


def test_simulate_reports_the_throttle_events():
    with Workdir() as wd:
        loop = write(wd / "throttled.yaml", THROTTLED)
        events = wd / "events.jsonl"
        r = ll("simulate", loop, "--events", events, cwd=wd)
        expect_exit(r, 0)
        expect_in("Throttle: throttle_hard: poll ran 3 actions", r.out, r)
        got = [json.loads(line) for line in events.read_text().splitlines()]
        names = [e["event"] for e in got if e["event"].startswith("throttle")]
        expect(names == ["throttle_warn", "throttle_hard"], f"{names}", r)
        warn = next(e for e in got if e["event"] == "throttle_warn")
        expect({k: warn[k] for k in ("state", "count", "normal_max", "warn_max", "hard_max")} ==
               {"state": "poll", "count": 2, "normal_max": 1, "warn_max": 2, "hard_max": 3}, f"{warn}", r)


def test_show_and_validate_json_report_the_throttle():
    with Workdir() as wd:
        loop = write(wd / "throttled.yaml", THROTTLED)
        r = ll("show", loop, cwd=wd)
        expect_exit(r, 0)
        expect_in("poll: warn at 2, leave at 3 \u2192 escalate", r.out, r)
        r = ll("validate", loop, "--json", cwd=wd)
        expect_exit(r, 0)
        doc = r.json()
        expect(doc["throttle"]["states"]["poll"] == {"normal_max": 1, "warn_max": 2, "hard_max": 3,
                                                     "on_throttle_hard": "escalate"}, f"{doc}", r)
        bad = write(wd / "bad.yaml", THROTTLED.replace("hard_max: 3}", "hard_max: 3, hard_maxx: 4}")
                    .replace("on_throttle_hard: escalate", "on_throttle_hard: escalat"))
        r = ll("validate", bad, cwd=wd)
        expect_exit(r, 1)
        expect_in("bad.yaml:7:57: error: states.poll.throttle.hard_maxx: unknown key \"hard_maxx\" "
                  "(did you mean \"hard_max\"?)", r.err, r)
        expect_in("bad.yaml:10:5: error: states.poll.on_throttle_hard: References unknown state "
                  "'escalat'", r.err, r)


def test_recursive_refine_validates_with_its_throttle():
    loops = REFERENCE / "little_loops" / "loops"
    if not (loops / "recursive-refine.yaml").exists():
        raise Skip(f"no reference corpus at {loops}")
    with Workdir() as wd:
        r = ll("validate", loops / "recursive-refine.yaml", "--json", cwd=wd)
        expect_exit(r, 0)
        doc = r.json()
        expect(doc["throttle"]["states"]["run_size_review"]["on_throttle_hard"] == "enqueue_or_skip",
               "with_throttle's on_throttle_hard", r)


LEARNING = """\
name: learn-first
initial: learn
states:
  learn:
    type: learning
    learning:
      targets: ["Widget API", "Gadget SDK"]
      max_retries: 1
    on_yes: build
    on_blocked: blocked
    on_no: blocked
  build:
    action: "echo built > built.txt"
    action_type: shell
    next: done
  blocked:
    terminal: true
    failure: true
  done:
    terminal: true
"""

# A fake `claude`: `/ll:explore-api <target>` writes a proven record for the target.
FAKE_CLAUDE = """\
#!/bin/sh
prompt=""
while [ $# -gt 0 ]; do
  case "$1" in -p|--print) if [ $# -gt 1 ]; then prompt="$2"; shift; fi ;; esac
  shift
done
echo "$prompt" >> claude.log
case "$prompt" in
  "/ll:explore-api Widget API")
    mkdir -p .ll/learning-tests
    printf -- "---\\ntarget: Widget API\\ndate: '2026-01-01'\\nstatus: proven\\n---\\nbody\\n" > .ll/learning-tests/widget-api.md ;;
esac
echo explored
"""

RECORD = "---\ntarget: {target}\ndate: '2026-01-01'\nstatus: {status}\n---\n"


def learning_env(wd):
    fake = write(wd / "bin" / "claude", FAKE_CLAUDE)
    fake.chmod(0o755)
    return {"PATH": f"{wd / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_run_explores_a_missing_target_then_goes_on():
    with Workdir() as wd:
        loop = write(wd / "learn.yaml", LEARNING)
        write(wd / ".ll" / "learning-tests" / "gadget-sdk.md", RECORD.format(target="Gadget SDK", status="proven"))
        r = ll("run", loop, cwd=wd, env=learning_env(wd))
        expect_exit(r, 0)
        expect((wd / "claude.log").read_text().splitlines() == ["/ll:explore-api Widget API"], "one exploration", r)
        expect((wd / "built.txt").exists(), "on_yes ran", r)
        for line in ("stale (missing): Widget API", "exploring Widget API (attempt 1)",
                     "proven: Widget API", "proven: Gadget SDK", "complete: Widget API, Gadget SDK"):
            expect_in(line, r.out, r)


def test_run_blocks_on_a_refuted_target_and_on_exhausted_retries():
    with Workdir() as wd:
        loop = write(wd / "learn.yaml", LEARNING)
        write(wd / ".ll" / "learning-tests" / "gadget-sdk.md", RECORD.format(target="Gadget SDK", status="refuted"))
        r = ll("run", loop, cwd=wd, env=learning_env(wd))
        expect_exit(r, 2)  # a failure terminal
        expect_in("blocked on Gadget SDK (refuted)", r.out, r)
        # a stale record is explored; this claude cannot prove Gadget SDK: retries exhausted
        write(wd / ".ll" / "learning-tests" / "gadget-sdk.md", RECORD.format(target="Gadget SDK", status="stale"))
        events = wd / "events.jsonl"
        r = ll("simulate", loop, "--events", events, cwd=wd)
        expect_exit(r, 0)
        got = [json.loads(line) for line in events.read_text().splitlines()]
        blocked = [e for e in got if e["event"] == "learning_blocked"]
        expect(len(blocked) == 1 and blocked[0]["reason"] == "retries_exhausted"
               and blocked[0]["target"] == "Gadget SDK", f"{blocked}", r)
        stale = [e["cause"] for e in got if e["event"] == "learning_target_stale"]
        expect(stale == ["stale"], f"{stale}", r)


def test_registry_age_staleness_and_a_malformed_record():
    with Workdir() as wd:
        loop = write(wd / "learn.yaml", LEARNING.replace('"Widget API", ', ""))
        old = "---\ntarget: Gadget SDK\ndate: '2020-01-01'\nstatus: proven\n---\n"
        write(wd / ".ll" / "learning-tests" / "gadget-sdk.md", old)
        r = ll("simulate", loop, cwd=wd)  # staleness is off without the config
        expect_in("proven: Gadget SDK", r.out, r)
        write(wd / ".ll" / "ll-config.json",
              json.dumps({"learning_tests": {"enabled": True, "stale_after_days": 30}}))
        r = ll("simulate", loop, cwd=wd)
        expect_in("stale (missing): Gadget SDK", r.out, r)  # too old: read as missing
        write(wd / ".ll" / "learning-tests" / "gadget-sdk.md", "---\nstatus: [proven\n---\n")
        r = ll("run", loop, cwd=wd)
        expect_exit(r, 1)  # the error verdict, which this state does not route
        expect_in("learning registry: " + str(wd / ".ll" / "learning-tests" / "gadget-sdk.md") + ":1:1:",
                  r.err, r)


def test_learning_is_reported_and_checked_by_validate():
    with Workdir() as wd:
        loop = write(wd / "learn.yaml", LEARNING)
        r = ll("validate", loop, "--json", cwd=wd)
        expect_exit(r, 0)
        expect(r.json()["learning"]["learn"] == {"targets": ["Widget API", "Gadget SDK"], "max_retries": 1},
               "validate --json", r)
        r = ll("show", loop, cwd=wd)
        expect_in("learn: proves Widget API, Gadget SDK (explores each up to 1 times", r.out, r)
        bad = write(wd / "bad.yaml", LEARNING.replace("max_retries: 1", "max_retries: 1\n      retries: 3"))
        r = ll("validate", bad, cwd=wd)
        expect_exit(r, 1)
        expect_in("bad.yaml:9:7: invalid loop document", r.err, r)
        expect_in("states.learn.learning.retries: unknown key \"retries\"", r.err, r)
        bad = write(wd / "bad.yaml", LEARNING.replace("    on_yes: build\n", ""))
        r = ll("validate", bad, cwd=wd)
        expect_exit(r, 1)
        expect_in("type=learning requires 'on_yes' (target for all-proven)", r.err, r)


def test_reference_learning_loops_validate():
    scripts = REFERENCE
    files = [scripts / "little_loops" / "loops" / "ready-to-implement-gate.yaml",
             scripts / "tests" / "fixtures" / "fsm" / "learning-state-loop.yaml",
             scripts / "tests" / "fixtures" / "fsm" / "learning-state-csv-loop.yaml"]
    if not all(f.exists() for f in files):
        raise Skip(f"no reference corpus at {scripts}")
    with Workdir() as wd:
        for f in files:
            r = ll("validate", f, cwd=wd)
            expect_exit(r, 0)


if __name__ == "__main__":
    main()
