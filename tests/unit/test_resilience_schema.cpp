// little_loops — tests for reading, validating and showing the resilience keys (design §6.6)
// SPDX-License-Identifier: MIT
#include <little_loops/render.hpp>
#include <little_loops/validation.hpp>

#include <doctest/doctest.h>

#include "core_test_support.hpp"

#include <string>

namespace ll = little_loops;
using ll::json;
using core_test::dump_all;
using core_test::find_diagnostic;

namespace {

/// A current-dialect loop whose state `work` has the members `work` (JSON text, no braces)
/// and whose top level has `top` (JSON text with a trailing comma, or empty).
json current_loop(const std::string& work, const std::string& top = "") {
  return json::parse(R"({"name": "r", "initial": "work", )" + top + R"( "states": {
    "work": {"action": "x", )" + work + R"(, "on_yes": "done", "on_no": "work", "on_error": "failed"},
    "slow": {"action": "y", "on_yes": "done", "on_no": "done", "on_error": "done"},
    "done": {"terminal": true}, "failed": {"terminal": true}}})");
}

ll::diagnostics parse_errors(const json& doc) {
  auto loop = ll::parse_loop(doc);
  return loop ? ll::diagnostics{} : loop.error().details;
}

}  // namespace

TEST_CASE("retry and catch entries are read strictly into the state") {
  auto loop = ll::parse_loop(current_loop(R"(
    "retry": [{"on": ["rate_limit", 75], "interval": 2, "backoff_rate": 3, "max_delay": 10,
               "jitter": "full", "max_attempts": 4, "max_duration": 60},
              {"on": "timeout", "delays": [1, 5], "jitter": 0.5}],
    "catch": {"auth": "failed", "any": "slow"},
    "backoff": 1.5)"));
  REQUIRE(loop);
  const auto& r = loop->states.at("work").resilience;
  REQUIRE(r.retry.size() == 2);
  CHECK(r.retry[0].on == std::vector<std::string>{"rate_limit"});
  CHECK(r.retry[0].exit_codes == std::vector<int>{75});
  CHECK(r.retry[0].interval == 2);
  CHECK(r.retry[0].backoff_rate == 3);
  CHECK(r.retry[0].max_delay == 10);
  CHECK(r.retry[0].full_jitter);
  CHECK(r.retry[0].max_attempts == 4);
  CHECK(r.retry[0].max_duration == 60);
  CHECK(r.retry[1].delays == std::vector<double>{1, 5});
  CHECK(r.retry[1].jitter == 0.5);
  REQUIRE(r.catches.size() == 2);
  CHECK(r.catches[0] == std::pair<std::string, std::string>{"auth", "failed"});
  CHECK(r.backoff == 1.5);
  CHECK(ll::validate(*loop).empty());

  SUBCASE("and written back as read") {
    json written;
    ll::to_json(written, *loop);
    auto again = ll::parse_loop(written);
    REQUIRE(again);
    CHECK(*again == *loop);
  }
}

TEST_CASE("bad resilience values get a diagnostic with a path and a hint") {
  struct bad {
    const char* work;
    const char* path;
    const char* code;
  };
  const bad cases[] = {
      {R"("retry": [{"on": "rate_limt"}])", "states.work.retry[0].on", "unknown-value"},
      {R"("retry": [{"on": "auth", "intervall": 1}])", "states.work.retry[0].intervall", "unknown-key"},
      {R"("retry": [{"interval": 1}])", "states.work.retry[0]", "missing-field"},
      {R"("retry": [{"on": 300}])", "states.work.retry[0].on", "out-of-range"},
      {R"("retry": [{"on": "any", "backoff_rate": 0.5}])", "states.work.retry[0].backoff_rate", "out-of-range"},
      {R"("retry": [{"on": "any", "jitter": "half"}])", "states.work.retry[0].jitter", "unknown-value"},
      {R"("retry": {"on": "any"})", "states.work.retry", "wrong-type"},
      {R"("catch": {"rate_limits": "done"})", "states.work.catch.rate_limits", "unknown-value"},
      {R"("backoff": -1)", "states.work.backoff", "out-of-range"},
      {R"("max_rate_limit_retries": 0, "on_rate_limit_exhausted": "done")", "states.work.max_rate_limit_retries", "out-of-range"},
      {R"("rate_limit_long_wait_ladder": [])", "states.work.rate_limit_long_wait_ladder", "empty-value"},
      {R"("retyr": [])", "states.work.retyr", "unknown-key"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.work);
    const auto found = parse_errors(current_loop(c.work));
    INFO(dump_all(found));
    CHECK(find_diagnostic(found, c.path, c.code) != nullptr);
  }
  const auto hint = parse_errors(current_loop(R"("retyr": [])"));
  REQUIRE(!hint.empty());
  CHECK(hint.front().message.find("did you mean \"retry\"") != std::string::npos);
}

TEST_CASE("validation checks the targets and pairings of the resilience keys") {
  SUBCASE("a catch target must be a state") {
    auto loop = ll::parse_loop(current_loop(R"("catch": {"auth": "nowhere"})"));
    REQUIRE(loop);
    CHECK(find_diagnostic(ll::validate(*loop), "states.work.catch.auth", "unknown-state"));
  }
  SUBCASE("the rate-limit keys pair as in the reference") {
    auto loop = ll::parse_loop(current_loop(R"("max_rate_limit_retries": 2)"));
    REQUIRE(loop);
    CHECK(find_diagnostic(ll::validate(*loop), "states.work.max_rate_limit_retries", "retry-pairing"));
    auto other = ll::parse_loop(current_loop(R"("on_rate_limit_exhausted": "nowhere")"));
    REQUIRE(other);
    const auto found = ll::validate(*other);
    CHECK(find_diagnostic(found, "states.work.on_rate_limit_exhausted", "retry-pairing"));
    CHECK(find_diagnostic(found, "states.work.on_rate_limit_exhausted", "unknown-state"));
  }
  SUBCASE("the circuit routes to abort or a state, which it makes reachable") {
    auto loop = ll::parse_loop(current_loop(
        R"("retry": [])", R"("circuit": {"repeated_failure": {"window": 2, "on_repeated_failure": "slow"}},)"));
    REQUIRE(loop);
    INFO(dump_all(ll::validate(*loop)));
    CHECK(ll::validate(*loop).empty());
    CHECK(loop->resilience.repeated_failure->window == 2);
    auto bad = ll::parse_loop(current_loop(
        R"("retry": [])", R"("circuit": {"repeated_failure": {"on_repeated_failure": "slo"}},)"));
    REQUIRE(bad);
    CHECK(find_diagnostic(ll::validate(*bad), "circuit.repeated_failure.on_repeated_failure", "unknown-state"));
    CHECK(find_diagnostic(parse_errors(current_loop(R"("retry": [])", R"("circuit": {"repeated_failure": {"window": 0}},)")),
                          "circuit.repeated_failure.window", "out-of-range"));
    CHECK(find_diagnostic(parse_errors(current_loop(R"("retry": [])", R"("circuit": {"repeated_falure": {}},)")),
                          "circuit.repeated_falure", "unknown-key"));
  }
  SUBCASE("max_edge_revisits is at least 1") {
    CHECK(find_diagnostic(parse_errors(current_loop(R"("retry": [])", R"("max_edge_revisits": 0,)")),
                          "max_edge_revisits", "out-of-range"));
  }
}

TEST_CASE("the stall evaluators read their fields; others warn about them") {
  auto loop = ll::parse_loop(current_loop(
      R"("evaluate": {"type": "score_stall", "max_stall": 2, "history_file": "h", "epsilon": 0.1})"));
  REQUIRE(loop);
  const auto& e = *loop->states.at("work").evaluate;
  CHECK(e.type == ll::evaluator_type::score_stall);
  CHECK(e.stall.max_stall == 2);
  CHECK(e.stall.history_file == "h");
  CHECK(e.stall.epsilon == 0.1);
  const auto found = ll::validate(*loop);
  INFO(dump_all(found));
  CHECK(found.size() == 1);  // `slow` is unreachable: nothing about the evaluator
  CHECK(find_diagnostic(found, "states.slow", "unreachable-state"));

  auto diff = ll::parse_loop(current_loop(R"("evaluate": {"type": "diff_stall", "history_file": "h"})"));
  REQUIRE(diff);
  CHECK(find_diagnostic(ll::validate(*diff), "states.work.evaluate.history_file", "unused-evaluator-field"));
  CHECK(find_diagnostic(parse_errors(current_loop(R"("evaluate": {"type": "action_stall", "max_repeat": 0})")),
                        "states.work.evaluate.max_repeat", "out-of-range"));
}

TEST_CASE("show writes the policy a state runs with") {
  auto loop = ll::parse_loop(current_loop(
      R"("max_rate_limit_retries": 2, "on_rate_limit_exhausted": "slow",
         "rate_limit_backoff_base_seconds": 10, "rate_limit_long_wait_ladder": [60])"));
  REQUIRE(loop);
  const std::string shown = ll::render_preview(*loop);
  INFO(shown);
  // the reference's rate-limit keys, as retry and catch entries
  CHECK(shown.find("retry rate_limit: 10s \u00d72 (+\u226410s jitter), 2 attempts [built in]") != std::string::npos);
  CHECK(shown.find("retry rate_limit: waits 60s (the last repeats), until 21600s waited [built in]") != std::string::npos);
  CHECK(shown.find("catch rate_limit\u2192slow") != std::string::npos);
  // the current dialect's defaults, once
  CHECK(shown.find("every state with an action, unless it names the class:") != std::string::npos);
  CHECK(shown.find("retry api_error: 30s, 2 attempts [built in]") != std::string::npos);
  CHECK(shown.find("Max edge revisits: 100 (built in)") != std::string::npos);
  const json policies = ll::render_policies_json(*loop);
  CHECK(policies["states"]["work"]["catch"]["rate_limit"] == "slow");
  CHECK(policies["states"]["work"]["retry"][0]["max_attempts"] == 2);
  CHECK(policies["states"]["work"]["retry"][0]["built_in"] == true);
  CHECK(policies["states"]["slow"]["retry"].size() == 4);  // the current dialect's built-ins
  CHECK(policies["states"]["slow"]["retry"][3]["on"] == json::array({"infra"}));
  CHECK(shown.find("retry infra: 5s, 2 attempts [built in]") != std::string::npos);
  CHECK(policies["max_edge_revisits"] == 100);
  CHECK(policies["circuit"].is_null());

  json seed = json::parse(R"({"name": "s", "initial": "a", "states": {
      "a": {"action": "x", "next": "done"}, "done": {"terminal": true}}})");
  auto plain = ll::parse_loop(seed);
  REQUIRE(plain);
  CHECK(ll::render_preview(*plain).find("Policies") == std::string::npos);
  CHECK(ll::render_preview(*plain).find("Max edge revisits") == std::string::npos);
}
