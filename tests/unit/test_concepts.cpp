// little_loops — the three concepts: shipped models, archetypes and near-misses
// SPDX-License-Identifier: MIT
#include <little_loops/fsm.hpp>

#include <doctest/doctest.h>

namespace ll = little_loops;

namespace {

struct good_runner {
  ll::expected<ll::action_result, ll::error> run(const ll::action_request&) { return {}; }
};
struct const_runner {  // a const member function is fine
  ll::expected<ll::action_result, ll::error> run(const ll::action_request&) const { return {}; }
};
struct plain_result_runner {  // returns a value convertible to expected<action_result, error>
  ll::action_result run(const ll::action_request&) {
    ll::action_result r;
    r.exit_code = 1;
    return r;
  }
};
struct runner_without_run {};
struct runner_wrong_return {
  int run(const ll::action_request&) { return 0; }
};
struct runner_wrong_param {
  ll::expected<ll::action_result, ll::error> run(std::string&) { return {}; }
};

struct good_eval {
  ll::expected<ll::evaluation_result, ll::error> evaluate(const ll::evaluation_request&) {
    return ll::evaluation_result{"success", ll::json::object()};
  }
};
struct plain_result_eval {  // returns a value convertible to expected<evaluation_result, error>
  ll::evaluation_result evaluate(const ll::evaluation_request& req) {
    return ll::evaluation_result{req.action != nullptr && req.action->exit_code == 1 ? "blocked" : "success",
                                 ll::json::object()};
  }
};
struct eval_returning_verdict_string {
  std::string evaluate(const ll::evaluation_request&) { return "success"; }
};
struct eval_old_signature {  // design sketch: (config, result, ctx) — not our protocol
  ll::expected<ll::evaluation_result, ll::error> evaluate(const ll::evaluate_config&,
                                                         const ll::action_result&,
                                                         const ll::interpolation_context&) {
    return {};
  }
};

struct good_sink {
  int n = 0;
  void on_event(const ll::loop_event&) noexcept { ++n; }
};
struct throwing_sink {
  void on_event(const ll::loop_event&) {}
};
struct sink_for_one_event {
  void on_event(const ll::route_event&) noexcept {}
};

}  // namespace

// Shipped models.
static_assert(ll::ActionRunner<ll::scripted_runner>);
static_assert(ll::Evaluator<ll::default_evaluator>);
static_assert(ll::EventSink<ll::null_event_sink>);
static_assert(ll::EventSink<ll::recording_event_sink>);

// Archetypes and near-misses.
static_assert(ll::ActionRunner<good_runner>);
static_assert(ll::ActionRunner<const_runner>);
static_assert(ll::ActionRunner<good_runner&>);
static_assert(ll::ActionRunner<plain_result_runner>);
static_assert(!ll::ActionRunner<runner_without_run>);
static_assert(!ll::ActionRunner<runner_wrong_return>);
static_assert(!ll::ActionRunner<runner_wrong_param>);
static_assert(ll::Evaluator<good_eval>);
static_assert(ll::Evaluator<plain_result_eval>);
static_assert(!ll::Evaluator<eval_returning_verdict_string>);
static_assert(!ll::Evaluator<eval_old_signature>);
static_assert(ll::EventSink<good_sink>);
static_assert(!ll::EventSink<throwing_sink>);
static_assert(!ll::EventSink<sink_for_one_event>);

// The executor accepts the archetypes (by value and by reference).
static_assert(sizeof(ll::fsm_executor<good_runner, good_eval, good_sink>) > 0);
static_assert(sizeof(ll::fsm_executor<good_runner&, good_eval&, good_sink&>) > 0);

TEST_SUITE("concepts") {
  TEST_CASE("an executor built from archetypes runs") {
    auto loop = ll::load_loop_text(R"({"name": "t", "initial": "a",
      "states": {"a": {"action": "x", "on_success": "done"}, "done": {"terminal": true}}})");
    REQUIRE(loop.has_value());
    good_sink sink;
    auto ex = ll::make_executor(*loop, good_runner{}, good_eval{}, sink);
    REQUIRE(ex.has_value());
    CHECK(ex->run().terminated_by == ll::termination::terminal);
    CHECK(sink.n == 7);  // start, enter, action start/complete, evaluate, route, complete
  }

  TEST_CASE("a runner and an evaluator returning plain results (convertible) run") {
    auto loop = ll::load_loop_text(R"({"name": "t", "initial": "a",
      "states": {"a": {"action": "x", "on_blocked": "done"}, "done": {"terminal": true}}})");
    REQUIRE(loop.has_value());
    auto ex = ll::make_executor(*loop, plain_result_runner{}, plain_result_eval{});
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::terminal);
    CHECK(r.final_state == "done");
  }
}
