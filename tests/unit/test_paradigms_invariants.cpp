// little_loops — invariants paradigm: check/fix chain, maintain, messages, evaluators
// SPDX-License-Identifier: MIT
#include "test_paradigms_support.hpp"

#include <little_loops/paradigms.hpp>

#include <string>
#include <vector>

using namespace little_loops;
using paradigm_test::spec;

namespace {

fsm_loop invariants_ok(const json& s) {
  return paradigm_test::compile_ok([](const json& j) { return compile_invariants(j); }, s);
}

error invariants_err(const json& s) {
  return paradigm_test::compile_err([](const json& j) { return compile_invariants(j); }, s);
}

}  // namespace

TEST_CASE("invariants: two constraints chain check/fix pairs into all_valid") {
  const auto loop = invariants_ok(spec(R"({"paradigm": "invariants", "name": "guardian", "constraints": [
      {"name": "tests", "check": "pytest", "fix": "fix1"},
      {"name": "lint", "check": "ruff", "fix": "fix2"}]})"));
  CHECK(loop.name == "guardian");
  CHECK(loop.paradigm == "invariants");
  CHECK(loop.initial == "check_tests");
  std::vector<std::string> names;
  for (const auto& [name, state] : loop.states) names.push_back(name);
  CHECK(names == std::vector<std::string>{"check_tests", "fix_tests", "check_lint", "fix_lint",
                                          "all_valid"});
  const auto& ct = loop.states.at("check_tests");
  CHECK(ct.action == "pytest");
  CHECK(ct.on.at("success") == "check_lint");
  CHECK(ct.on.at("failure") == "fix_tests");
  CHECK(ct.on.size() == 2);  // `error` is unrouted, as in the original: it ends the run
  CHECK(loop.states.at("fix_tests").action == "fix1");
  CHECK(loop.states.at("fix_tests").next == "check_tests");
  CHECK(loop.states.at("check_lint").on.at("success") == "all_valid");
  CHECK(loop.states.at("check_lint").on.at("failure") == "fix_lint");
  CHECK(loop.states.at("fix_lint").next == "check_lint");
  CHECK(loop.states.at("all_valid").terminal);
  CHECK_FALSE(loop.states.at("all_valid").failure);
  CHECK_FALSE(loop.states.at("all_valid").on_maintain.has_value());
  CHECK_FALSE(loop.maintain);
}

TEST_CASE("invariants: three constraints and a single one") {
  auto loop = invariants_ok(spec(R"({"name": "t", "constraints": [{"name": "c1", "check": "1", "fix": "f1"},
      {"name": "c2", "check": "2", "fix": "f2"}, {"name": "c3", "check": "3", "fix": "f3"}]})"));
  CHECK(loop.states.at("check_c1").on.at("success") == "check_c2");
  CHECK(loop.states.at("check_c2").on.at("success") == "check_c3");
  CHECK(loop.states.at("check_c3").on.at("success") == "all_valid");
  loop = invariants_ok(spec(R"({"name": "t", "constraints": [{"name": "c1", "check": "cmd", "fix": "fix"}]})"));
  CHECK(loop.initial == "check_c1");
  CHECK(loop.states.at("check_c1").on.at("success") == "all_valid");
}

TEST_CASE("invariants: maintain loops all_valid back to the first check") {
  auto loop = invariants_ok(spec(R"({"name": "t", "maintain": true, "constraints": [
      {"name": "c1", "check": "cmd", "fix": "fix"}, {"name": "c2", "check": "cmd", "fix": "fix"}]})"));
  CHECK(loop.maintain);
  CHECK(loop.states.at("all_valid").on_maintain == "check_c1");
  CHECK(loop.states.at("all_valid").terminal);
  loop = invariants_ok(spec(R"({"name": "t", "maintain": false, "constraints": [{"name": "c1", "check": "cmd", "fix": "fix"}]})"));
  CHECK_FALSE(loop.maintain);
  CHECK_FALSE(loop.states.at("all_valid").on_maintain.has_value());
}

TEST_CASE("invariants: messages") {
  auto e = invariants_err(spec(R"({"paradigm": "invariants", "constraints": [{"name": "a", "check": "b", "fix": "c"}]})"));
  CHECK(e.message == "Invariants paradigm requires: name");
  e = invariants_err(spec(R"({"paradigm": "invariants", "name": "test"})"));
  CHECK(e.message == "Invariants paradigm requires: constraints");
  e = invariants_err(spec(R"({"paradigm": "invariants"})"));
  REQUIRE(e.details.size() == 1);
  CHECK(e.message == "Invariants paradigm requires: name, constraints");
  e = invariants_err(spec(R"({"name": "test", "constraints": []})"));
  CHECK(e.message == "Invariants paradigm 'constraints' requires at least one constraint");
  CHECK(e.path == "constraints");
  e = invariants_err(spec(R"({"name": "test", "constraints": [{"check": "cmd", "fix": "fix"}]})"));
  CHECK(e.message == "Constraint 0 requires 'name' field");
  CHECK(e.path == "constraints[0]");
  e = invariants_err(spec(R"({"name": "test", "constraints": [{"name": "c1", "fix": "fix"}]})"));
  CHECK(e.message == "Constraint 'c1' requires 'check' field");
  e = invariants_err(spec(R"({"name": "test", "constraints": [{"name": "c1", "check": "cmd"}]})"));
  CHECK(e.message == "Constraint 'c1' requires 'fix' field");
  // One diagnostic per missing field, each in the original's words.
  e = invariants_err(spec(R"({"name": "test", "constraints": [{"name": "ok", "check": "a", "fix": "b"}, {}]})"));
  REQUIRE(e.details.size() == 3);
  CHECK(e.details[0].message == "Constraint 1 requires 'name' field");
  CHECK(e.details[1].message == "Constraint 1 requires 'check' field");
  CHECK(e.details[2].message == "Constraint 1 requires 'fix' field");
  CHECK(e.details[0].path == "constraints[1]");
  CHECK(e.message.find("Constraint 1 requires 'name' field") != std::string::npos);
  e = invariants_err(spec(R"({"name": "test", "constraints": [{"name": "c1"}]})"));
  REQUIRE(e.details.size() == 2);
  CHECK(e.details[0].message == "Constraint 'c1' requires 'check' field");
  CHECK(e.details[1].message == "Constraint 'c1' requires 'fix' field");
  e = invariants_err(spec(R"({"name": "t", "constraints": [{"name": "a", "check": "1", "fix": "2"},
      {"name": "a", "check": "3", "fix": "4"}]})"));
  CHECK(e.path == "constraints[1].name");
  CHECK(e.message == R"(duplicate constraint name "a" (constraints[0] has it too))");
  // Each repeat names the first constraint with that name, by its place in the document.
  e = invariants_err(spec(R"({"name": "t", "constraints": [{"name": "x"},
      {"name": "a", "check": "1", "fix": "2"}, {"name": "a", "check": "3", "fix": "4"},
      {"name": "a", "check": "5", "fix": "6"}]})"));
  std::vector<std::string> repeats;
  for (const auto& d : e.details)
    if (d.code == "duplicate-name") repeats.push_back(d.path + ": " + d.message);
  CHECK(repeats == std::vector<std::string>{
                       R"(constraints[2].name: duplicate constraint name "a" (constraints[1] has it too))",
                       R"(constraints[3].name: duplicate constraint name "a" (constraints[1] has it too))"});
  e = invariants_err(spec(R"({"name": "t", "constraints": [{"name": "a", "check": "1", "fix": "2", "evaluater": {}}]})"));
  CHECK(e.path == "constraints[0].evaluater");
  CHECK(e.message.find(R"(did you mean "evaluator"?)") != std::string::npos);
  e = invariants_err(spec(R"({"name": "t", "constraints": ["pytest"]})"));
  CHECK(e.path == "constraints[0]");
  e = invariants_err(spec(R"({"name": "t", "constraints": [{"name": "a", "check": "1", "fix": "2"}], "maintian": true})"));
  CHECK(paradigm_test::has_diagnostic(e, "maintian", R"(did you mean "maintain"?)"));
  e = invariants_err(spec(R"({"name": "t", "constraints": [{"name": "a", "check": "1", "fix": "2"}], "maintain": "yes"})"));
  CHECK(e.path == "maintain");
}

TEST_CASE("seed 001: invariants pass each constraint's evaluator") {
  const auto loop = invariants_ok(spec(R"({"paradigm": "invariants", "name": "quality-gate", "constraints": [
      {"name": "lint", "check": "ruff check src/", "fix": "ruff check --fix src/",
       "evaluator": {"type": "output_contains", "pattern": "0 errors"}},
      {"name": "types", "check": "mypy src/", "fix": "/ll:manage-issue bug fix"}]})"));
  REQUIRE(loop.states.at("check_lint").evaluate.has_value());
  CHECK(loop.states.at("check_lint").evaluate->type == evaluator_type::output_contains);
  CHECK(loop.states.at("check_lint").evaluate->pattern == "0 errors");
  CHECK_FALSE(loop.states.at("check_types").evaluate.has_value());
  CHECK_FALSE(loop.states.at("fix_lint").evaluate.has_value());
}

TEST_CASE("seed 001: invariants with mixed evaluator types, every field kept") {
  const auto loop = invariants_ok(spec(R"({"name": "test", "constraints": [
      {"name": "c1", "check": "cmd1", "fix": "fix1", "evaluator": {"type": "output_contains", "pattern": "OK", "negate": true}},
      {"name": "c2", "check": "cmd2", "fix": "fix2", "evaluator": {"type": "output_numeric", "operator": "lt", "target": 5, "source": "${prev.output}"}},
      {"name": "c3", "check": "cmd3", "fix": "fix3", "evaluator": {"type": "llm_structured", "prompt": "ok?", "min_confidence": 0.9}},
      {"name": "c4", "check": "cmd4", "fix": "fix4", "evaluator": {"type": "output_json", "path": ".a[0].b", "operator": "eq", "target": "yes"}},
      {"name": "c5", "check": "/judge", "fix": "fix5", "evaluator": {"type": "exit_code"}}]})"));
  CHECK(loop.states.at("check_c1").evaluate->negate);
  CHECK(loop.states.at("check_c2").evaluate->op == comparison_op::lt);
  CHECK(loop.states.at("check_c2").evaluate->target == json(5));
  CHECK(loop.states.at("check_c2").evaluate->source == "${prev.output}");
  CHECK(loop.states.at("check_c3").evaluate->type == evaluator_type::llm_structured);
  CHECK(loop.states.at("check_c3").evaluate->prompt == "ok?");
  CHECK(loop.states.at("check_c3").evaluate->min_confidence == 0.9);
  CHECK(loop.states.at("check_c4").evaluate->path == ".a[0].b");
  CHECK(loop.states.at("check_c4").evaluate->target == json("yes"));
  REQUIRE(loop.states.at("check_c5").evaluate.has_value());
  CHECK(loop.states.at("check_c5").evaluate->type == evaluator_type::exit_code);
  const json doc = loop;
  auto back = parse_loop(doc);
  REQUIRE(back);
  CHECK(*back == loop);
}

TEST_CASE("invariants: evaluator diagnostics carry the constraint path") {
  auto e = invariants_err(spec(R"({"name": "t", "constraints": [{"name": "a", "check": "1", "fix": "2"},
      {"name": "b", "check": "1", "fix": "2", "evaluator": {"type": "output_numeric", "operator": "eqq", "target": 1}}]})"));
  REQUIRE(e.details.size() == 1);
  CHECK(e.path == "constraints[1].evaluator.operator");
  CHECK(e.message.find(R"(did you mean "eq"?)") != std::string::npos);
}

TEST_CASE("invariants: settings carried, round-trip equal") {
  const auto loop = invariants_ok(spec(R"({"name": "t", "maintain": true, "max_iterations": 30, "backoff": 2,
      "timeout": 900, "context": {"k": "v"}, "scope": ["src/"], "llm": {"model": "opus"}, "on_handoff": "spawn",
      "constraints": [{"name": "types", "check": "mypy", "fix": "/fix", "evaluator": {"type": "output_contains", "pattern": "Success"}}]})"));
  CHECK(loop.max_iterations == 30);
  CHECK(loop.backoff == 2);
  CHECK(loop.timeout == 900);
  CHECK(loop.context == json{{"k", "v"}});
  CHECK(loop.llm.model == "opus");
  CHECK(loop.on_handoff == handoff_policy::spawn);
  const json doc = loop;
  auto back = parse_loop(doc);
  REQUIRE(back);
  CHECK(*back == loop);
}
