// little_loops — imperative paradigm: step chain, until check, messages, evaluators
// SPDX-License-Identifier: MIT
#include "test_paradigms_support.hpp"

#include <little_loops/paradigms.hpp>

using namespace little_loops;
using paradigm_test::spec;

namespace {

fsm_loop imperative_ok(const json& s) {
  return paradigm_test::compile_ok([](const json& j) { return compile_imperative(j); }, s);
}

error imperative_err(const json& s) {
  return paradigm_test::compile_err([](const json& j) { return compile_imperative(j); }, s);
}

}  // namespace

TEST_CASE("imperative: three steps chain into check_done") {
  const auto loop = imperative_ok(spec(R"({"paradigm": "imperative", "name": "fix-all",
      "steps": ["cmd1", "cmd2", "cmd3"], "until": {"check": "verify"}})"));
  CHECK(loop.name == "fix-all");
  CHECK(loop.paradigm == "imperative");
  CHECK(loop.initial == "step_0");
  std::vector<std::string> names;
  for (const auto& [name, state] : loop.states) names.push_back(name);
  CHECK(names == std::vector<std::string>{"step_0", "step_1", "step_2", "check_done", "done"});
  CHECK(loop.states.at("step_0").action == "cmd1");
  CHECK(loop.states.at("step_0").next == "step_1");
  CHECK(loop.states.at("step_1").next == "step_2");
  CHECK(loop.states.at("step_2").next == "check_done");
  const auto& check = loop.states.at("check_done");
  CHECK(check.action == "verify");
  CHECK(check.on.at("success") == "done");
  CHECK(check.on.at("failure") == "step_0");
  CHECK(check.on.size() == 2);  // `error` is unrouted, as in the original: it ends the run
  CHECK_FALSE(check.evaluate.has_value());
  CHECK(loop.states.at("done").terminal);
}

TEST_CASE("imperative: single step, defaults, settings") {
  auto loop = imperative_ok(spec(R"({"name": "t", "steps": ["cmd"], "until": {"check": "mypy src/"}})"));
  CHECK(loop.states.at("step_0").next == "check_done");
  CHECK(loop.max_iterations == 50);
  loop = imperative_ok(spec(R"({"name": "t", "steps": ["cmd"], "until": {"check": "v"},
      "backoff": 2, "timeout": 600, "max_iterations": 10})"));
  CHECK(loop.backoff == 2);
  CHECK(loop.timeout == 600);
  CHECK(loop.max_iterations == 10);
}

TEST_CASE("imperative: until.passes does not change the routes (seed 001, the original); false warns") {
  diagnostics warnings;
  const auto loop = compile_imperative(
      spec(R"({"name": "t", "steps": ["s"], "until": {"check": "grep TODO src", "passes": false}})"),
      &warnings);
  REQUIRE(loop.has_value());
  CHECK(loop->states.at("check_done").on.at("success") == "done");
  CHECK(loop->states.at("check_done").on.at("failure") == "step_0");
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].code == "passes-ignored");
  CHECK(warnings[0].path == "until.passes");
  CHECK(warnings[0].level == severity::warning);
  diagnostics none;
  CHECK(compile_imperative(spec(R"({"name": "t", "steps": ["s"], "until": {"check": "c", "passes": true}})"),
                           &none)
            ->states.at("check_done").on.at("success") == "done");
  CHECK(none.empty());
  CHECK(imperative_err(spec(R"({"name": "t", "steps": ["s"], "until": {"check": "c", "passes": "no"}})"))
            .details.at(0).path == "until.passes");
}

TEST_CASE("imperative: messages") {
  auto e = imperative_err(spec(R"({"paradigm": "imperative", "steps": ["cmd"], "until": {"check": "x"}})"));
  CHECK(e.message == "Imperative paradigm requires: name");
  e = imperative_err(spec(R"({"paradigm": "imperative", "name": "test", "until": {"check": "x"}})"));
  CHECK(e.message == "Imperative paradigm requires: steps");
  e = imperative_err(spec(R"({"paradigm": "imperative", "name": "test", "steps": ["cmd"]})"));
  CHECK(e.message == "Imperative paradigm requires: until");
  e = imperative_err(spec(R"({"paradigm": "imperative"})"));
  REQUIRE(e.details.size() == 1);
  CHECK(e.message == "Imperative paradigm requires: name, steps, until");
  e = imperative_err(spec(R"({"name": "test", "steps": [], "until": {"check": "x"}})"));
  CHECK(e.message == "Imperative paradigm 'steps' requires at least one step");
  CHECK(e.path == "steps");
  e = imperative_err(spec(R"({"name": "test", "steps": ["cmd"], "until": {}})"));
  CHECK(e.message == "Imperative paradigm 'until' requires 'check' field");
  CHECK(e.path == "until");
  e = imperative_err(spec(R"({"name": "test", "steps": ["cmd", 3], "until": {"check": "x"}})"));
  CHECK(e.path == "steps[1]");
  e = imperative_err(spec(R"({"name": "test", "steps": ["cmd"], "until": "x"})"));
  CHECK(e.path == "until");
  e = imperative_err(spec(R"({"name": "test", "steps": ["cmd"], "until": {"check": "x", "pass": true}})"));
  CHECK(e.path == "until.pass");
  CHECK(e.message.find(R"(did you mean "passes"?)") != std::string::npos);
  e = imperative_err(spec(R"({"name": "test", "step": ["cmd"], "until": {"check": "x"}})"));
  CHECK(paradigm_test::has_diagnostic(e, "step", R"(did you mean "steps"?)"));
}

TEST_CASE("seed 001: imperative passes the until evaluator to check_done") {
  auto loop = imperative_ok(spec(R"({"paradigm": "imperative", "name": "build-loop", "steps": ["npm run build"],
      "until": {"check": "npm test", "evaluator": {"type": "output_numeric", "operator": "eq", "target": 0}}})"));
  REQUIRE(loop.states.at("check_done").evaluate.has_value());
  CHECK(loop.states.at("check_done").evaluate->type == evaluator_type::output_numeric);
  CHECK(loop.states.at("check_done").evaluate->op == comparison_op::eq);
  CHECK(loop.states.at("check_done").evaluate->target == json(0));

  loop = imperative_ok(spec(R"({"name": "t", "steps": ["cmd1"], "until": {"check": "verify",
      "evaluator": {"type": "output_contains", "pattern": "SUCCESS", "negate": true, "source": "${prev.output}"}}})"));
  CHECK(loop.states.at("check_done").evaluate->type == evaluator_type::output_contains);
  CHECK(loop.states.at("check_done").evaluate->pattern == "SUCCESS");
  CHECK(loop.states.at("check_done").evaluate->negate);
  CHECK(loop.states.at("check_done").evaluate->source == "${prev.output}");

  loop = imperative_ok(spec(R"({"name": "t", "steps": ["cmd1"], "until": {"check": "/verify", "evaluator": {"type": "exit_code"}}})"));
  REQUIRE(loop.states.at("check_done").evaluate.has_value());
  CHECK(loop.states.at("check_done").evaluate->type == evaluator_type::exit_code);
}

TEST_CASE("imperative: evaluator diagnostics under until.evaluator; round-trip") {
  auto e = imperative_err(spec(R"({"name": "t", "steps": ["s"], "until": {"check": "c",
      "evaluator": {"type": "output_json", "path": ".x", "operator": "eqq", "target": 1}}})"));
  REQUIRE(e.details.size() == 1);
  CHECK(e.path == "until.evaluator.operator");

  const auto loop = imperative_ok(spec(R"({"name": "t", "steps": ["a", "b"], "until": {"check": "c", "passes": false,
      "evaluator": {"type": "output_json", "path": ".ok", "operator": "eq", "target": true}},
      "context": {"x": 1}, "scope": ["s"], "llm": {"enabled": false}, "on_handoff": "spawn", "backoff": 3})"));
  const json doc = loop;
  auto back = parse_loop(doc);
  REQUIRE(back);
  CHECK(*back == loop);
}
