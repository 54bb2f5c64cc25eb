// little_loops — convergence paradigm: compiled states, defaults, messages, direction
// SPDX-License-Identifier: MIT
#include "test_paradigms_support.hpp"

#include <little_loops/paradigms.hpp>
#include <little_loops/render.hpp>

using namespace little_loops;
using paradigm_test::spec;

namespace {

const char* const basic = R"({"paradigm": "convergence", "name": "reduce-errors",
    "check": "mypy src/ | grep -c error", "toward": 0, "using": "/ll:check-code fix"})";

fsm_loop convergence_ok(const json& s) {
  return paradigm_test::compile_ok([](const json& j) { return compile_convergence(j); }, s);
}

error convergence_err(const json& s) {
  return paradigm_test::compile_err([](const json& j) { return compile_convergence(j); }, s);
}

}  // namespace

TEST_CASE("convergence: measure -> apply -> done; stall ends in the failure terminal stalled, error is unrouted") {
  const auto loop = convergence_ok(spec(basic));
  CHECK(loop.name == "reduce-errors");
  CHECK(loop.paradigm == "convergence");
  CHECK(loop.initial == "measure");
  std::vector<std::string> names;
  for (const auto& [name, state] : loop.states) names.push_back(name);
  CHECK(names == std::vector<std::string>{"measure", "apply", "done", "stalled"});

  const auto& measure = loop.states.at("measure");
  // As in the original: the check is data in the context, the action refers to it.
  CHECK(measure.action == "${context.metric_cmd}");
  CHECK(measure.capture == "current_value");
  REQUIRE(measure.evaluate.has_value());
  CHECK(measure.evaluate->type == evaluator_type::convergence);
  CHECK(measure.evaluate->target == json("${context.target}"));
  CHECK(measure.evaluate->tolerance == json("${context.tolerance}"));
  CHECK(measure.evaluate->direction == convergence_direction::minimize);
  CHECK_FALSE(measure.evaluate->previous.has_value());  // the evaluator remembers it
  REQUIRE(measure.route.has_value());
  CHECK(measure.route->routes.at("target") == "done");
  CHECK(measure.route->routes.at("progress") == "apply");
  CHECK(measure.route->routes.at("stall") == "stalled");
  CHECK(measure.route->routes.size() == 3);
  CHECK_FALSE(measure.route->error_target.has_value());
  CHECK_FALSE(measure.route->default_target.has_value());
  CHECK(measure.on.empty());

  CHECK(loop.states.at("apply").action == "/ll:check-code fix");
  CHECK(loop.states.at("apply").next == "measure");
  CHECK(loop.states.at("done").terminal);
  CHECK_FALSE(loop.states.at("done").failure);
  // A run that stopped improving short of the target is a failure (design §3.15).
  CHECK(loop.states.at("stalled").terminal);
  CHECK(loop.states.at("stalled").failure);
}

TEST_CASE("convergence: context holds metric_cmd, target and tolerance (default 0)") {
  auto loop = convergence_ok(spec(basic));
  CHECK(loop.context == json{{"metric_cmd", "mypy src/ | grep -c error"}, {"target", 0}, {"tolerance", 0}});
  CHECK(loop.max_iterations == 50);

  loop = convergence_ok(spec(R"({"name": "t", "check": "cmd", "toward": 10, "using": "fix",
      "tolerance": 2, "context": {"dir": "src"}})"));
  CHECK(loop.context["tolerance"] == 2);
  CHECK(loop.context["target"] == 10);
  CHECK(loop.context["dir"] == "src");

  // Numbers written as strings are read as numbers.
  loop = convergence_ok(spec(R"({"name": "t", "check": "cmd", "toward": "80.5", "using": "fix", "tolerance": "1"})"));
  CHECK(loop.context["target"] == 80.5);
  CHECK(loop.context["tolerance"] == 1);
}

TEST_CASE("convergence: direction is passed to the evaluator") {
  auto loop = convergence_ok(spec(R"({"name": "coverage", "check": "cov.sh", "toward": 80,
      "using": "/improve", "direction": "maximize"})"));
  CHECK(loop.states.at("measure").evaluate->direction == convergence_direction::maximize);
  CHECK(render_preview(loop).find("Evaluator: convergence [toward: 80, tolerance: 0, direction: maximize]") !=
        std::string::npos);

  auto e = convergence_err(spec(R"({"name": "c", "check": "c", "toward": 1, "using": "f", "direction": "maximise"})"));
  CHECK(e.path == "direction");
  CHECK(e.message.find(R"(did you mean "maximize"?)") != std::string::npos);
}

TEST_CASE("convergence: missing fields in ONE diagnostic, and the other messages") {
  auto e = convergence_err(spec(R"({"paradigm": "convergence", "check": "cmd", "toward": 0, "using": "fix"})"));
  CHECK(e.message == "Convergence paradigm requires: name");
  e = convergence_err(spec(R"({"paradigm": "convergence", "name": "t", "toward": 0, "using": "fix"})"));
  CHECK(e.message == "Convergence paradigm requires: check");
  e = convergence_err(spec(R"({"paradigm": "convergence", "name": "t", "check": "c", "using": "fix"})"));
  CHECK(e.message == "Convergence paradigm requires: toward");
  e = convergence_err(spec(R"({"paradigm": "convergence", "name": "t", "check": "c", "toward": 0})"));
  CHECK(e.message == "Convergence paradigm requires: using");
  e = convergence_err(spec(R"({"paradigm": "convergence"})"));
  REQUIRE(e.details.size() == 1);
  CHECK(e.message == "Convergence paradigm requires: name, check, toward, using");

  e = convergence_err(spec(R"({"name": "t", "check": "c", "toward": "zero", "using": "f"})"));
  CHECK(e.path == "toward");
  CHECK(e.message == R"(expected a number, got string "zero")");
  e = convergence_err(spec(R"({"name": "t", "check": "c", "toward": 0, "using": "f", "tolerance": -1})"));
  CHECK(e.path == "tolerance");
  CHECK(e.message == "tolerance must not be negative");
  e = convergence_err(spec(R"({"name": "t", "check": "c", "toward": 0, "using": "f", "context": {"target": 5}})"));
  CHECK(e.path == "context.target");
  CHECK(e.details[0].code == "reserved-key");
  e = convergence_err(spec(R"({"name": "t", "check": "c", "toward": 0, "using": "f", "evaluator": {"type": "exit_code"}})"));
  CHECK(e.path == "evaluator");
  CHECK(e.details[0].code == "unknown-key");
  e = convergence_err(spec(R"({"name": "t", "check": "c", "toward": 0, "usng": "f"})"));
  CHECK(paradigm_test::has_diagnostic(e, "usng", R"(did you mean "using"?)"));
}

TEST_CASE("convergence: settings carried, round-trip equal") {
  const auto loop = convergence_ok(spec(R"({"name": "t", "check": "c", "toward": 3, "using": "f",
      "max_iterations": 9, "backoff": 0.5, "timeout": 120, "scope": ["a"], "on_handoff": "terminate",
      "llm": {"max_tokens": 100}, "direction": "maximize", "tolerance": 0.25})"));
  CHECK(loop.max_iterations == 9);
  CHECK(loop.backoff == 0.5);
  CHECK(loop.timeout == 120);
  CHECK(loop.scope == std::vector<std::string>{"a"});
  CHECK(loop.on_handoff == handoff_policy::terminate);
  CHECK(loop.llm.max_tokens == 100);
  const json doc = loop;
  auto back = parse_loop(doc);
  REQUIRE(back);
  CHECK(*back == loop);
}
