// little_loops — goal paradigm: compiled states, defaults, messages, evaluator pass-through
// SPDX-License-Identifier: MIT
#include "test_paradigms_support.hpp"

#include <little_loops/paradigms.hpp>
#include <little_loops/render.hpp>

using namespace little_loops;
using paradigm_test::spec;

namespace {

fsm_loop goal_ok(const json& s) {
  return paradigm_test::compile_ok([](const json& j) { return compile_goal(j); }, s);
}

error goal_err(const json& s) {
  return paradigm_test::compile_err([](const json& j) { return compile_goal(j); }, s);
}

}  // namespace

TEST_CASE("goal: two tools give evaluate -> fix -> done, with the error verdict bounded") {
  const auto loop = goal_ok(spec(R"({"paradigm": "goal", "goal": "No type errors",
      "tools": ["/ll:check-code types", "/ll:manage-issue bug fix"], "max_iterations": 20})"));
  CHECK(loop.name.rfind("goal-", 0) == 0);
  CHECK(loop.paradigm == "goal");
  CHECK(loop.initial == "evaluate");
  CHECK(loop.max_iterations == 20);
  REQUIRE(loop.states.size() == 4);
  const auto& evaluate = loop.states.at("evaluate");
  CHECK(evaluate.action == "/ll:check-code types");
  CHECK_FALSE(evaluate.action_type.has_value());
  CHECK_FALSE(evaluate.evaluate.has_value());
  CHECK(evaluate.on.at("success") == "done");
  CHECK(evaluate.on.at("failure") == "fix");
  CHECK(evaluate.on.at("error") == "failed");
  CHECK(evaluate.on.size() == 3);
  CHECK_FALSE(evaluate.next.has_value());
  const auto& fix = loop.states.at("fix");
  CHECK(fix.action == "/ll:manage-issue bug fix");
  CHECK(fix.next == "evaluate");
  CHECK(fix.on.empty());
  CHECK(loop.states.at("done").terminal);
  CHECK_FALSE(loop.states.at("done").failure);
  CHECK(loop.states.at("failed").terminal);
  CHECK(loop.states.at("failed").failure);
  // Document order of the compiled states.
  std::vector<std::string> names;
  for (const auto& [name, state] : loop.states) names.push_back(name);
  CHECK(names == std::vector<std::string>{"evaluate", "fix", "done", "failed"});
}

TEST_CASE("goal: defaults") {
  const auto loop = goal_ok(spec(R"({"goal": "Clean", "tools": ["/ll:check-code fix"]})"));
  CHECK(loop.max_iterations == 50);
  CHECK_FALSE(loop.backoff.has_value());
  CHECK_FALSE(loop.timeout.has_value());
  CHECK(loop.on_handoff == handoff_policy::pause);
  CHECK(loop.context == json::object());
  CHECK(loop.scope.empty());
  CHECK(loop.llm == llm_config{});
  CHECK_FALSE(loop.maintain);
  CHECK_FALSE(loop.description.has_value());
  // One tool: it is both the check and the fix.
  CHECK(loop.states.at("evaluate").action == "/ll:check-code fix");
  CHECK(loop.states.at("fix").action == "/ll:check-code fix");
}

TEST_CASE("goal: name is given or slugified from the goal") {
  CHECK(goal_ok(spec(R"({"name": "my-custom-goal", "goal": "Test", "tools": ["cmd"]})")).name ==
        "my-custom-goal");
  CHECK(goal_ok(spec(R"({"goal": "No Type Errors in src/", "tools": ["cmd"]})")).name ==
        "goal-no-type-errors-in-src");
  CHECK(goal_ok(spec(R"({"goal": "  Fix: the *build* -- now!  ", "tools": ["cmd"]})")).name ==
        "goal-fix-the-build-now");
  const std::string long_goal(80, 'x');
  CHECK(goal_ok(json{{"goal", long_goal}, {"tools", {"cmd"}}}).name ==
        "goal-" + std::string(50, 'x'));
}

TEST_CASE("goal: common loop settings are carried through") {
  const auto loop = goal_ok(spec(R"({"paradigm": "goal", "goal": "Test", "tools": ["cmd"],
      "description": "keeps tests green", "backoff": 2.5, "timeout": 300, "max_iterations": 7,
      "context": {"dir": "src", "n": 3}, "scope": ["src/", "tests/"],
      "llm": {"model": "opus", "max_tokens": 512, "enabled": false, "timeout": 60},
      "on_handoff": "spawn"})"));
  CHECK(loop.description == "keeps tests green");
  CHECK(loop.backoff == 2.5);
  CHECK(loop.timeout == 300);
  CHECK(loop.max_iterations == 7);
  CHECK(loop.context == json{{"dir", "src"}, {"n", 3}});
  CHECK(loop.scope == std::vector<std::string>{"src/", "tests/"});
  CHECK(loop.llm.model == "opus");
  CHECK(loop.llm.max_tokens == 512);
  CHECK_FALSE(loop.llm.enabled);
  CHECK(loop.llm.timeout == 60);
  CHECK(loop.on_handoff == handoff_policy::spawn);
}

TEST_CASE("goal: missing fields are named in ONE diagnostic") {
  auto e = goal_err(spec(R"({"paradigm": "goal", "tools": ["cmd"]})"));
  CHECK(e.message == "Goal paradigm requires: goal");
  REQUIRE(e.details.size() == 1);
  CHECK(e.details[0].path.empty());
  CHECK(e.details[0].code == "missing-field");

  e = goal_err(spec(R"({"paradigm": "goal", "goal": "Test"})"));
  CHECK(e.message == "Goal paradigm requires: tools");

  e = goal_err(spec(R"({"paradigm": "goal"})"));
  REQUIRE(e.details.size() == 1);
  CHECK(e.message == "Goal paradigm requires: goal, tools");
}

TEST_CASE("goal: tools errors") {
  auto e = goal_err(spec(R"({"goal": "Test", "tools": []})"));
  CHECK(e.message == "Goal paradigm 'tools' requires at least one tool");
  CHECK(e.path == "tools");

  e = goal_err(spec(R"({"goal": "Test", "tools": "cmd"})"));
  CHECK(e.path == "tools");
  CHECK(e.details[0].code == "wrong-type");

  e = goal_err(spec(R"({"goal": "Test", "tools": ["a", "b", "c"]})"));
  CHECK(e.path == "tools[2]");
  CHECK(e.message == "Goal paradigm 'tools' takes at most 2 entries (check, fix), got 3");

  e = goal_err(spec(R"({"goal": "Test", "tools": [{"action_type": "prompt"}]})"));
  CHECK(e.path == "tools[0]");
  CHECK(e.message ==
        R"(Invalid tool entry: {"action_type":"prompt"}. Dict entries must have a 'tool' key.)");

  e = goal_err(spec(R"({"goal": "Test", "tools": [42]})"));
  CHECK(e.message == "Invalid tool entry: 42. Dict entries must have a 'tool' key.");

  e = goal_err(spec(R"({"goal": "Test", "tools": [{"tool": "cmd", "action_type": "bad"}]})"));
  CHECK(e.path == "tools[0].action_type");
  CHECK(e.message == R"(Invalid action_type "bad". Must be one of: shell, prompt, slash_command)");

  e = goal_err(spec(R"({"goal": "Test", "tools": [{"tool": "cmd", "action_type": "promt"}]})"));
  CHECK(e.message ==
        R"(Invalid action_type "promt". Must be one of: shell, prompt, slash_command (did you mean "prompt"?))");

  e = goal_err(spec(R"({"goal": "Test", "tools": [{"tool": "cmd", "acton_type": "shell"}]})"));
  CHECK(e.path == "tools[0].acton_type");
  CHECK(e.message.find(R"(did you mean "action_type"?)") != std::string::npos);

  e = goal_err(spec(R"({"goal": "Test", "tools": [""]})"));
  CHECK(e.path == "tools[0]");
  CHECK(e.message == "must not be empty");
}

TEST_CASE("goal: object tool entries carry their action_type") {
  auto loop = goal_ok(spec(R"({"goal": "All issues refined", "tools": [
      {"tool": "Run `ll-issues refine-status`", "action_type": "prompt"},
      "ll-issues refine-status"]})"));
  CHECK(loop.states.at("evaluate").action == "Run `ll-issues refine-status`");
  CHECK(loop.states.at("evaluate").action_type == action_kind::prompt);
  CHECK(loop.states.at("fix").action == "ll-issues refine-status");
  CHECK_FALSE(loop.states.at("fix").action_type.has_value());

  loop = goal_ok(spec(R"({"goal": "Clean", "tools": [{"tool": "my-prompt", "action_type": "prompt"}]})"));
  CHECK(loop.states.at("fix").action == "my-prompt");
  CHECK(loop.states.at("fix").action_type == action_kind::prompt);

  // A top-level action_type is the default of entries without their own.
  loop = goal_ok(spec(R"({"goal": "Clean", "action_type": "prompt",
      "tools": ["Check the code", {"tool": "fix.sh", "action_type": "shell"}]})"));
  CHECK(loop.states.at("evaluate").action_type == action_kind::prompt);
  CHECK(loop.states.at("fix").action_type == action_kind::shell);
}

TEST_CASE("goal: strict keys and types") {
  auto e = goal_err(spec(R"({"goal": "Test", "tool": ["cmd"]})"));
  CHECK(paradigm_test::has_diagnostic(e, "tool", R"(did you mean "tools"?)"));
  CHECK(paradigm_test::has_diagnostic(e, "", "Goal paradigm requires: tools"));

  e = goal_err(spec(R"({"goal": "Test", "tools": ["cmd"], "max_iteration": 5})"));
  CHECK(paradigm_test::has_diagnostic(e, "max_iteration", R"(did you mean "max_iterations"?)"));

  e = goal_err(spec(R"({"goal": "Test", "tools": ["cmd"], "maintain": true})"));
  CHECK(paradigm_test::has_diagnostic(e, "maintain", "unknown key"));

  e = goal_err(spec(R"({"goal": 5, "tools": ["cmd"], "max_iterations": "ten",
      "on_handoff": "spwan", "llm": {"modle": "x"}, "context": [1]})"));
  CHECK(paradigm_test::has_diagnostic(e, "goal", "expected a string"));
  CHECK(paradigm_test::has_diagnostic(e, "max_iterations", ""));
  CHECK(paradigm_test::has_diagnostic(e, "on_handoff", R"(did you mean "spawn"?)"));
  CHECK(paradigm_test::has_diagnostic(e, "llm.modle", R"(did you mean "model"?)"));
  CHECK(paradigm_test::has_diagnostic(e, "context", ""));
  CHECK(e.details.size() == 5);
  CHECK(e.message.find("invalid goal paradigm spec: 5 errors, first: ") == 0);

  e = goal_err(json::array());
  CHECK(e.details[0].code == "wrong-type");

  e = goal_err(spec(R"({"paradigm": "imperative", "goal": "Test", "tools": ["cmd"]})"));
  CHECK(paradigm_test::has_diagnostic(e, "paradigm", "given to the goal compiler"));
}

TEST_CASE("goal: compiled loops go through validate()") {
  auto e = goal_err(spec(R"({"goal": "Test", "tools": ["cmd"], "max_iterations": 0})"));
  CHECK(paradigm_test::has_diagnostic(e, "max_iterations", ""));
  CHECK(e.details[0].code == "max-iterations-range");

  e = goal_err(spec(R"({"goal": "Test", "tools": ["cmd"], "evaluator": {"type": "output_numeric"}})"));
  CHECK(e.details[0].code == "evaluator-missing-field");

  diagnostics warnings;
  auto loop = compile_goal(spec(R"({"goal": "Test", "tools": ["cmd"]})"), &warnings);
  REQUIRE(loop);
  CHECK_FALSE(has_errors(validate(*loop)));
}

// --- seed 001: evaluator selection -------------------------------------------------------

TEST_CASE("seed 001: goal passes output_contains to the evaluate state") {
  const auto loop = goal_ok(spec(R"({"paradigm": "goal", "goal": "Lint passes",
      "tools": ["ruff check src/", "ruff check --fix src/"],
      "evaluator": {"type": "output_contains", "pattern": "All checks passed"}})"));
  const auto& ev = loop.states.at("evaluate").evaluate;
  REQUIRE(ev.has_value());
  CHECK(ev->type == evaluator_type::output_contains);
  CHECK(ev->pattern == "All checks passed");
  CHECK_FALSE(loop.states.at("fix").evaluate.has_value());
}

TEST_CASE("seed 001: goal passes output_numeric with operator and target") {
  const auto loop = goal_ok(spec(R"({"goal": "No errors", "tools": ["error_count.sh", "fix_errors.sh"],
      "evaluator": {"type": "output_numeric", "operator": "eq", "target": 0}})"));
  const auto& ev = loop.states.at("evaluate").evaluate;
  REQUIRE(ev.has_value());
  CHECK(ev->type == evaluator_type::output_numeric);
  CHECK(ev->op == comparison_op::eq);
  CHECK(ev->target == json(0));
}

TEST_CASE("seed 001: goal passes llm_structured") {
  const auto loop = goal_ok(spec(R"({"goal": "Code is clean", "tools": ["code_review.sh", "auto_fix.sh"],
      "evaluator": {"type": "llm_structured"}})"));
  REQUIRE(loop.states.at("evaluate").evaluate.has_value());
  CHECK(loop.states.at("evaluate").evaluate->type == evaluator_type::llm_structured);
}

TEST_CASE("seed 001: an explicit exit_code stays explicit, absence stays the default") {
  // The original dropped an explicit exit_code (returned None), so a prompt check silently
  // fell back to the LLM judge. Here the choice is kept.
  auto loop = goal_ok(spec(R"({"goal": "Tests pass", "tools": ["/ll:run-tests", "fix_tests.sh"],
      "evaluator": {"type": "exit_code"}})"));
  REQUIRE(loop.states.at("evaluate").evaluate.has_value());
  CHECK(loop.states.at("evaluate").evaluate->type == evaluator_type::exit_code);
  CHECK(render_preview(loop).find("Evaluator: exit_code\n") != std::string::npos);
  // It survives serialisation too.
  const json doc = loop;
  CHECK(doc["states"]["evaluate"]["evaluate"] == json{{"type", "exit_code"}});
  auto back = parse_loop(doc);
  REQUIRE(back);
  CHECK(back->states.at("evaluate").evaluate == loop.states.at("evaluate").evaluate);

  loop = goal_ok(spec(R"({"goal": "Tests pass", "tools": ["/ll:run-tests", "fix_tests.sh"]})"));
  CHECK_FALSE(loop.states.at("evaluate").evaluate.has_value());
  CHECK(render_preview(loop).find("Evaluator: llm_structured (default)\n") != std::string::npos);
}

TEST_CASE("seed 001: an empty or null evaluator means none (`if evaluator_spec:`)") {
  for (const char* none : {"null", "{}"}) {
    const std::string text =
        std::string(R"({"goal": "Clean", "tools": ["check"], "evaluator": )") + none + "}";
    auto loop = goal_ok(spec(text.c_str()));
    CHECK_FALSE_MESSAGE(loop.states.at("evaluate").evaluate.has_value(), none);
  }
  // A non-empty object without a type is still an error (the seed reads evaluator_spec["type"]).
  auto e = goal_err(spec(R"({"goal": "Clean", "tools": ["check"], "evaluator": {"pattern": "x"}})"));
  CHECK(e.path == "evaluator");
}

TEST_CASE("seed 001: the whole evaluator object is passed, not only type/pattern/target/operator") {
  // The seed's _build_evaluate_config copied four fields and dropped the rest.
  auto loop = goal_ok(spec(R"({"goal": "Clean", "tools": ["check"], "evaluator": {
      "type": "output_contains", "pattern": "ERROR", "negate": true, "source": "${prev.output}"}})"));
  auto ev = *loop.states.at("evaluate").evaluate;
  CHECK(ev.pattern == "ERROR");
  CHECK(ev.negate);
  CHECK(ev.source == "${prev.output}");

  loop = goal_ok(spec(R"({"goal": "Clean", "tools": ["check"], "evaluator": {
      "type": "output_json", "path": ".summary.errors", "operator": "le", "target": 2}})"));
  ev = *loop.states.at("evaluate").evaluate;
  CHECK(ev.path == ".summary.errors");
  CHECK(ev.op == comparison_op::le);
  CHECK(ev.target == json(2));

  loop = goal_ok(spec(R"({"goal": "Clean", "tools": ["check"], "evaluator": {
      "type": "convergence", "target": 0, "tolerance": 0.5, "direction": "maximize",
      "previous": "${prev.output}"}})"));
  ev = *loop.states.at("evaluate").evaluate;
  CHECK(ev.direction == convergence_direction::maximize);
  CHECK(ev.tolerance == json(0.5));
  CHECK(ev.previous == "${prev.output}");

  loop = goal_ok(spec(R"({"goal": "Clean", "tools": ["check"], "evaluator": {
      "type": "llm_structured", "prompt": "Is it clean?", "min_confidence": 0.8,
      "uncertain_suffix": true, "schema": {"type": "object"}}})"));
  ev = *loop.states.at("evaluate").evaluate;
  CHECK(ev.prompt == "Is it clean?");
  CHECK(ev.min_confidence == 0.8);
  CHECK(ev.uncertain_suffix);
  CHECK(ev.schema == json{{"type", "object"}});
}

TEST_CASE("goal: evaluator diagnostics come from the schema parser, under `evaluator`") {
  auto e = goal_err(spec(R"({"goal": "Clean", "tools": ["check"],
      "evaluator": {"type": "output_numeric", "operator": "eqq", "target": 0}})"));
  REQUIRE(e.details.size() == 1);
  CHECK(e.path == "evaluator.operator");
  CHECK(e.message.find(R"(did you mean "eq"?)") != std::string::npos);

  e = goal_err(spec(R"({"goal": "Clean", "tools": ["check"],
      "evaluator": {"type": "output_contains", "patern": "x"}})"));
  CHECK(paradigm_test::has_diagnostic(e, "evaluator.patern", R"(did you mean "pattern"?)"));

  e = goal_err(spec(R"({"goal": "Clean", "tools": ["check"], "evaluator": {"type": "regex"}})"));
  CHECK(e.path == "evaluator.type");

  e = goal_err(spec(R"({"goal": "Clean", "tools": ["check"], "evaluator": "exit_code"})"));
  CHECK(e.path == "evaluator");

  // Exactly what a state's `evaluate` gets from the schema parser, path aside.
  diagnostics direct;
  parse_evaluate_config(json{{"type", "output_numeric"}, {"operator", "eqq"}, {"target", 0}},
                        "evaluator", direct);
  e = goal_err(spec(R"({"goal": "Clean", "tools": ["check"],
      "evaluator": {"type": "output_numeric", "operator": "eqq", "target": 0}})"));
  CHECK(e.details == direct);
}

TEST_CASE("goal: round-trip through JSON gives an equal loop") {
  const auto loop = goal_ok(spec(R"({"goal": "Lint clean", "tools": ["ruff check", {"tool": "/fix", "action_type": "slash_command"}],
      "evaluator": {"type": "output_contains", "pattern": "0 errors", "negate": true},
      "backoff": 1, "timeout": 60, "context": {"a": [1, {"b": null}]}, "scope": ["src"],
      "llm": {"model": "haiku"}, "on_handoff": "terminate", "description": "d"})"));
  const json doc = loop;
  auto back = parse_loop(doc);
  INFO(doc.dump(2));
  REQUIRE(back);
  CHECK(*back == loop);
  auto again = compile_paradigm(doc);
  REQUIRE(again);
  CHECK(*again == loop);
}
