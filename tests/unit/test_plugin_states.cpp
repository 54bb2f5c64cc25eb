// little_loops — tests for the throttle (throttle:, on_throttle_hard) and learning states
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

#include <little_loops/render.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
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

namespace {

// A learning state `learn` (members `learning`, JSON) routing yes → planning, blocked →
// blocked, no → failed, error → failed.
std::string learning_loop(const std::string& learning, const std::string& routes =
                              R"("on_yes": "planning", "on_blocked": "blocked", "on_no": "failed", "on_error": "failed")") {
  return R"({"name": "l", "initial": "learn", "context": {"targets": "a, b ,, c", "retries": " 1 "}, "states": {
    "learn": {"type": "learning", "learning": )" + learning + ", " + routes + R"(},
    "planning": {"action": "plan", "on_yes": "done", "on_no": "done", "on_error": "done"},
    "blocked": {"terminal": true}, "failed": {"terminal": true}, "done": {"terminal": true}}})";
}

// A registry: each target's statuses in turn (the last one repeats); lookups recorded.
struct fake_registry {
  std::map<std::string, std::vector<ll::learning_status>> statuses;
  std::vector<std::string> lookups;

  ll::expected<ll::learning_status, ll::error> operator()(std::string_view target) {
    lookups.emplace_back(target);
    auto it = statuses.find(std::string(target));
    if (it == statuses.end()) return ll::learning_status::missing;
    auto& list = it->second;
    const ll::learning_status s = list.front();
    if (list.size() > 1) list.erase(list.begin());
    return s;
  }
};

struct learning_run {
  ll::scripted_runner runner;
  ll::recording_event_sink sink;
  fake_registry registry;
  ll::executor_options opts;

  ll::execution_result run(const std::string& text) {
    runner.otherwise(exit_with(0));
    opts.learning_registry = [this](std::string_view t) { return registry(t); };
    auto ex = ll::make_executor(compiled(text), runner, ll::default_evaluator{}, sink, opts);
    REQUIRE(ex.has_value());
    return ex->run();
  }
  std::vector<std::string> learning_events() const {
    std::vector<std::string> out;
    for (const auto& e : sink.events) {
      const std::string name = e.value("event", "");
      if (name.rfind("learning_", 0) == 0) out.push_back(name + ":" + e.value("target", ""));
    }
    return out;
  }
};

}  // namespace

TEST_SUITE("learning states") {
  TEST_CASE("learning: read strictly, written back, validated as the reference") {
    auto loop = loop_from(learning_loop(R"({"targets": ["A", "B"], "max_retries": 0})"));
    const auto& learn = loop.states.at("learn");
    REQUIRE(learn.learning);
    CHECK(learn.learning->targets == std::vector<std::string>{"A", "B"});
    CHECK(learn.learning->max_retries == 0);
    ll::json back = loop;
    CHECK(back["states"]["learn"]["learning"] == ll::json{{"targets", {"A", "B"}}, {"max_retries", 0}});
    CHECK(back["states"]["learn"]["type"] == "learning");

    auto errs = load_errors(learning_loop(R"({"target": ["A"], "max_retries": -1, "targets_csv": 3})"));
    INFO(dump(errs));
    CHECK(has_code(errs, "states.learn.learning.target", "unknown-key"));
    CHECK(dump(errs).find("did you mean \"targets\"") != std::string::npos);
    CHECK(has_code(errs, "states.learn.learning.max_retries", "out-of-range"));
    CHECK(has_code(errs, "states.learn.learning.targets_csv", "wrong-type"));

    errs = load_errors(learning_loop(R"({"targets": []})", R"("on_error": "failed")"));
    INFO(dump(errs));
    CHECK(has_code(errs, "states.learn.learning.targets", "learning-targets"));
    CHECK(has_code(errs, "states.learn.on_yes", "learning-routes"));
    CHECK(has_code(errs, "states.learn", "learning-routes"));
    CHECK(has_code(load_errors(R"({"name": "l", "initial": "a", "states": {
        "a": {"action": "x", "learning": {"targets": ["A"]}, "on_yes": "done", "on_no": "done"},
        "done": {"terminal": true}}})"), "states.a.learning", "learning-without-type"));
  }

  TEST_CASE("learning: every target proven is `yes`; the registry is asked per target") {
    learning_run t;
    t.registry.statuses = {{"A", {ll::learning_status::proven}}, {"B", {ll::learning_status::proven}}};
    const auto r = t.run(learning_loop(R"({"targets": ["A", "B"]})"));
    CHECK(r.final_state == "done");
    CHECK(t.registry.lookups == std::vector<std::string>{"A", "B"});
    CHECK(t.learning_events() == std::vector<std::string>{"learning_target_proven:A",
                                                          "learning_target_proven:B",
                                                          "learning_complete:"});
    CHECK(t.runner.calls().size() == 1);  // plan: nothing explored
    for (const auto& e : t.sink.events)
      if (e.value("event", "") == "learning_complete") CHECK(e["targets"] == ll::json{"A", "B"});
  }

  TEST_CASE("learning: a missing or stale target is explored, then looked up again") {
    learning_run t;
    t.registry.statuses = {{"A", {ll::learning_status::missing, ll::learning_status::stale,
                                  ll::learning_status::proven}}};
    const auto r = t.run(learning_loop(R"({"targets": ["A"], "max_retries": 2})"));
    CHECK(r.final_state == "done");
    REQUIRE(t.runner.calls().size() == 3);
    CHECK(t.runner.calls()[0].text == "/ll:explore-api A");
    CHECK(t.runner.calls()[0].kind == ll::action_kind::slash_command);
    CHECK(t.learning_events() ==
          std::vector<std::string>{"learning_target_stale:A", "learning_explore_invoked:A",
                                   "learning_target_stale:A", "learning_explore_invoked:A",
                                   "learning_target_proven:A", "learning_complete:"});
    std::vector<std::string> causes;
    for (const auto& e : t.sink.events)
      if (e.value("event", "") == "learning_target_stale") causes.push_back(e["cause"]);
    CHECK(causes == std::vector<std::string>{"missing", "stale"});
  }

  TEST_CASE("learning: retries exhausted or a refuted target blocks (on_blocked, else on_no)") {
    learning_run t;
    const auto r = t.run(learning_loop(R"({"targets": ["A"], "max_retries": 1})"));
    CHECK(r.final_state == "blocked");
    CHECK(t.runner.calls().size() == 1);
    CHECK(t.learning_events().back() == "learning_blocked:A");
    CHECK(t.sink.events[t.sink.events.size() - 3].value("reason", "") == "retries_exhausted");

    learning_run refuted;
    refuted.registry.statuses = {{"A", {ll::learning_status::proven}}, {"B", {ll::learning_status::refuted}}};
    const auto r2 = refuted.run(learning_loop(R"({"targets": ["A", "B", "C"]})",
                                               R"("on_yes": "planning", "on_no": "failed")"));
    CHECK(r2.final_state == "failed");
    CHECK(refuted.learning_events() == std::vector<std::string>{"learning_target_proven:A",
                                                                "learning_target_refuted:B",
                                                                "learning_blocked:B"});
    CHECK(refuted.registry.lookups.size() == 2);  // C is never looked up
  }

  TEST_CASE("learning: targets_csv and max_retries_expr are rendered when the state runs") {
    learning_run t;
    t.registry.statuses = {{"a", {ll::learning_status::proven}}, {"b", {ll::learning_status::proven}},
                           {"c", {ll::learning_status::missing, ll::learning_status::proven}}};
    const auto r = t.run(learning_loop(
        R"({"targets_csv": "${context.targets}", "max_retries_expr": "${context.retries}"})"));
    CHECK(r.final_state == "done");
    CHECK(t.registry.lookups == std::vector<std::string>{"a", "b", "c", "c"});

    learning_run bad;
    const auto r2 = bad.run(learning_loop(R"({"targets": ["a"], "max_retries_expr": "two"})"));
    CHECK(r2.final_state == "failed");  // the error verdict → on_error
    bool said = false;
    for (const auto& e : bad.sink.events)
      said = said || e.value("error", "").find("not an integer: \"two\"") != std::string::npos;
    CHECK(said);
  }

  TEST_CASE("learning: without a registry, or when it fails, the verdict is error") {
    ll::scripted_runner runner;
    auto ex = ll::make_executor(compiled(learning_loop(R"({"targets": ["A"]})")), runner);
    CHECK(ex->run().final_state == "failed");
    ll::fsm_loop loop = loop_from(learning_loop(R"({"targets": ["A"]})"));
    ll::executor_options opts;
    opts.learning_registry = [](std::string_view) -> ll::expected<ll::learning_status, ll::error> {
      throw std::runtime_error("disk on fire");
    };
    ll::recording_event_sink sink;
    auto failing = ll::make_executor(*ll::compile_loop(loop), runner, ll::default_evaluator{}, sink, opts);
    CHECK(failing->run().final_state == "failed");
    bool said = false;
    for (const auto& e : sink.events)
      said = said || e.value("error", "").find("disk on fire") != std::string::npos;
    CHECK(said);
  }

  TEST_CASE("learning: an exploration carries the learning state's agent, not another's") {
    std::vector<std::string> agents;
    ll::scripted_runner runner;
    runner.on_call([&agents](const ll::action_request& r) { agents.emplace_back(r.agent); });
    runner.otherwise(exit_with(0));
    ll::executor_options opts;
    opts.learning_registry = [](std::string_view) -> ll::expected<ll::learning_status, ll::error> {
      return ll::learning_status::missing;
    };
    auto ex = ll::make_executor(compiled(R"({"name": "l", "initial": "ask", "states": {
        "ask": {"action": "/ll:fix x", "agent": "reviewer", "next": "learn"},
        "learn": {"type": "learning", "learning": {"targets": ["A"], "max_retries": 1},
                  "agent": "explorer", "on_yes": "done", "on_no": "done"},
        "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, ll::null_event_sink{}, opts);
    CHECK(ex->run().final_state == "done");
    CHECK(agents == std::vector<std::string>{"reviewer", "explorer"});
  }

  TEST_CASE("learning: the slug of a target is the reference's") {
    CHECK(ll::learning_slug("Anthropic SDK streaming") == "anthropic-sdk-streaming");
    CHECK(ll::learning_slug("  @anthropic-ai/sdk tool_use -- v2 ") == "anthropic-aisdk-tool_use-v2");
  }
}

