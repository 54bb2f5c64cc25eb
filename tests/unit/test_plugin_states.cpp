// little_loops — tests for the throttle (throttle:, on_throttle_hard) and learning states
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

#include <little_loops/render.hpp>

#include <string>
#include <vector>

using namespace executor_test;

namespace {

// A loop whose state `poll` runs `tick` and re-enters itself while it succeeds; `extra` is
// more members of `poll` (JSON, leading comma), `dialect` the loop's.
std::string poll_loop(const std::string& extra, const std::string& dialect = "current") {
  return R"({"name": "t", "initial": "poll", "dialect": ")" + dialect + R"(", "states": {
    "poll": {"action": "tick", "on_yes": "poll", "on_success": "poll", "on_no": "done")" + extra + R"(},
    "other": {"action": "other", "next": "poll"},
    "escalate": {"action": "escalate", "next": "done"},
    "done": {"terminal": true}, "failed": {"terminal": true}}})";
}


ll::diagnostics load_errors(const std::string& text) {
  auto loop = ll::load_loop_text(text);
  return loop ? ll::diagnostics{} : loop.error().details;
}


std::string dump(const ll::diagnostics& list) {
  std::string out;
  for (const auto& d : list) out += ll::to_string(d) + " [" + d.code + "]\n";
  return out;
}

}  // namespace

TEST_SUITE("throttle") {
  TEST_CASE("throttle: read strictly, written back, validated as the reference") {
    auto loop = loop_from(poll_loop(R"(, "throttle": {"normal_max": 1, "warn_max": 2, "hard_max": 3},
                                       "on_throttle_hard": "escalate")"));
    const auto& poll = loop.states.at("poll");
    REQUIRE(poll.throttle);
    CHECK(poll.throttle->warn_max == 2);
    CHECK(poll.on_throttle_hard == "escalate");
    ll::json back = loop;
    CHECK(back["states"]["poll"]["throttle"] == ll::json{{"normal_max", 1}, {"warn_max", 2}, {"hard_max", 3}});
    CHECK(back["states"]["poll"]["on_throttle_hard"] == "escalate");

    auto errs = load_errors(poll_loop(R"(, "throttle": {"hard_maxx": 3, "warn_max": "8", "normal_max": 0})"));
    INFO(dump(errs));
    CHECK(has_code(errs, "states.poll.throttle.hard_maxx", "unknown-key"));
    CHECK(dump(errs).find("did you mean \"hard_max\"") != std::string::npos);
    CHECK(has_code(errs, "states.poll.throttle.warn_max", "wrong-type"));
    CHECK(has_code(errs, "states.poll.throttle.normal_max", "out-of-range"));

    errs = load_errors(poll_loop(R"(, "throttle": {"normal_max": 8, "warn_max": 8, "hard_max": 4})"));
    INFO(dump(errs));
    CHECK(dump(errs).find("'throttle.normal_max' (8) must be less than 'throttle.warn_max' (8)") != std::string::npos);
    CHECK(dump(errs).find("'throttle.warn_max' (8) must be less than 'throttle.hard_max' (4)") != std::string::npos);
    CHECK(has_code(load_errors(poll_loop(R"(, "on_throttle_hard": "nowhere")")),
                   "states.poll.on_throttle_hard", "unknown-state"));
    CHECK(has_code(load_errors(poll_loop(R"(, "type": "learnin")")), "states.poll.type", "unknown-value"));
  }

  TEST_CASE("throttle: warn at warn_max, leave for on_throttle_hard at hard_max without evaluating") {
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(poll_loop(R"(, "throttle": {"warn_max": 2, "hard_max": 3},
                                                      "on_throttle_hard": "escalate")")),
                                runner, ll::default_evaluator{}, sink);
    const auto& r = ex->run();
    CHECK(r.final_state == "done");
    CHECK(runner.calls().size() == 4);  // tick ×3, escalate
    const auto warns = events_named(sink, "throttle_warn");
    REQUIRE(warns.size() == 1);
    CHECK(warns[0]["count"] == 2);
    CHECK(warns[0]["normal_max"] == 3);
    CHECK(warns[0]["hard_max"] == 3);
    const auto hards = events_named(sink, "throttle_hard");
    REQUIRE(hards.size() == 1);
    CHECK(hards[0]["next"] == "escalate");
    CHECK(events_named(sink, "evaluate").size() == 2);  // the third tick is not evaluated
    const auto routes = events_named(sink, "route");
    REQUIRE(routes.size() == 4);
    CHECK(routes[2]["reason"] == "throttle_hard");
  }

  TEST_CASE("throttle: at hard_max without a target the state goes on; beyond it the run ends") {
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(poll_loop(R"(, "throttle": {"warn_max": 2, "hard_max": 3})")),
                                runner, ll::default_evaluator{}, sink);
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::error);
    REQUIRE(r.error);
    CHECK(r.error->message ==
          "Throttle stop: state 'poll' exceeded hard_max=3 tool calls with no on_throttle_hard target");
    CHECK(runner.calls().size() == 4);
    const auto hards = events_named(sink, "throttle_hard");
    REQUIRE(hards.size() == 1);
    CHECK(hards[0]["next"].is_null());
    const auto stops = events_named(sink, "throttle_stop");
    REQUIRE(stops.size() == 1);
    CHECK(stops[0]["count"] == 4);
  }

  TEST_CASE("throttle: on_error is the fallback target; the defaults are 3/8/12") {
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(poll_loop(R"(, "on_error": "failed")")), runner,
                                ll::default_evaluator{}, sink);
    CHECK(ex->run().final_state == "failed");
    CHECK(runner.calls().size() == 12);
    CHECK(events_named(sink, "throttle_warn").at(0)["count"] == 8);
    CHECK(events_named(sink, "throttle_hard").at(0)["next"] == "failed");
  }

  TEST_CASE("throttle: leaving the state starts a new visit") {
    ll::scripted_runner runner;
    // yes (re-enter), no (leave for `other`, which comes back): two actions per visit
    runner.on_action("tick", {exit_with(0), exit_with(1), exit_with(0), exit_with(1), exit_with(0),
                              exit_with(1), exit_with(0), exit_with(1)});
    runner.otherwise(exit_with(0));
    ll::recording_event_sink sink;
    ll::fsm_loop loop = loop_from(R"({"name": "t", "initial": "poll", "dialect": "current", "states": {
        "poll": {"action": "tick", "on_yes": "poll", "on_no": "other", "on_error": "failed",
                 "throttle": {"warn_max": 2, "hard_max": 3}},
        "other": {"action": "other", "next": "poll"},
        "failed": {"terminal": true}}})");
    loop.max_iterations = 12;
    auto ex = ll::make_executor(*ll::compile_loop(loop), runner, ll::default_evaluator{}, sink);
    CHECK(ex->run().terminated_by == ll::termination::max_iterations);
    CHECK(events_named(sink, "throttle_hard").empty());
    CHECK(events_named(sink, "throttle_warn").size() == 4);  // each visit of poll reaches 2
  }

  TEST_CASE("throttle: the seed dialect counts only the states that write it") {
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    ll::recording_event_sink sink;
    ll::fsm_loop loop = loop_from(poll_loop("", "seed"));
    loop.max_iterations = 20;
    auto ex = ll::make_executor(*ll::compile_loop(loop), runner, ll::default_evaluator{}, sink);
    CHECK(ex->run().terminated_by == ll::termination::max_iterations);
    CHECK(events_named(sink, "throttle_warn").empty());
  }

  TEST_CASE("throttle: a learning-type state warns but is never made to leave or stop") {
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    ll::recording_event_sink sink;
    ll::fsm_loop loop = loop_from(poll_loop(R"(, "type": "learning", "throttle": {"warn_max": 2, "hard_max": 3})"));
    loop.max_iterations = 6;
    auto ex = ll::make_executor(*ll::compile_loop(loop), runner, ll::default_evaluator{}, sink);
    CHECK(ex->run().terminated_by == ll::termination::max_iterations);
    CHECK(events_named(sink, "throttle_warn").size() == 1);
    CHECK(events_named(sink, "throttle_hard").empty());
    CHECK(events_named(sink, "throttle_stop").empty());
  }

  TEST_CASE("throttle: the visit's count is in the snapshot and a resume goes on counting") {
    const std::string text = poll_loop(R"(, "throttle": {"warn_max": 2, "hard_max": 3},
                                          "on_throttle_hard": "escalate")");
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    auto first = ll::make_executor(compiled(text), runner);
    REQUIRE(first->step());
    REQUIRE(first->step());
    const ll::snapshot saved = first->snapshot();
    INFO(saved.counters.dump());
    CHECK(saved.counters["throttle"] == ll::json{{"state", "poll"}, {"calls", 2}});
    ll::scripted_runner later;
    later.otherwise(exit_with(0));
    auto resumed = ll::make_executor(compiled(text), later);
    REQUIRE(resumed->resume(saved));
    CHECK(resumed->run().final_state == "done");
    CHECK(later.calls().size() == 2);  // the third tick leaves for escalate
  }

  TEST_CASE("throttle: show and validate --json report it") {
    ll::fsm_loop loop = loop_from(poll_loop(R"(, "throttle": {"warn_max": 2, "hard_max": 3},
                                              "on_throttle_hard": "escalate")"));
    const std::string preview = ll::render_preview(loop);
    CHECK(preview.find("poll: warn at 2, leave at 3 \u2192 escalate") != std::string::npos);
    CHECK(preview.find("throttle_hard\u2192escalate") != std::string::npos);
    const ll::json j = ll::render_plugin_states_json(loop);
    CHECK(j["throttle"]["applies_to"] == "every_action_state");
    CHECK(j["throttle"]["states"]["poll"]["hard_max"] == 3);
    CHECK(j["throttle"]["states"]["other"]["hard_max"] == 12);
  }
}
