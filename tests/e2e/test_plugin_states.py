#!/usr/bin/env python3
# little_loops — e2e: the throttle and learning states of ll-loop run and simulate
# SPDX-License-Identifier: MIT
"""A state's actions are counted per visit (`throttle:`): warned about, sent to
`on_throttle_hard`, stopped beyond hard_max, under a real `ll-loop run` of shell actions and
under `simulate`; the reference's recursive-refine (via lib/common.yaml's with_throttle)
validates."""
import json

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


if __name__ == "__main__":
    main()
