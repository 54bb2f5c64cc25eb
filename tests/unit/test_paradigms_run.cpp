// little_loops — compiled paradigm loops run by the executor (scripted runner)
// SPDX-License-Identifier: MIT
#include "test_paradigms_support.hpp"

#include <little_loops/paradigms.hpp>

using namespace little_loops;
using paradigm_test::spec;
using R = scripted_response;

namespace {

fsm_loop compiled(const char* text) {
  auto loop = compile_paradigm(spec(text));
  INFO((loop ? std::string() : paradigm_test::messages(loop.error())));
  REQUIRE(loop.has_value());
  return *loop;
}

execution_result run(const fsm_loop& loop, scripted_runner& runner) {
  auto ex = make_executor(loop, runner);
  INFO((ex ? std::string() : to_string(ex.error())));
  REQUIRE(ex.has_value());
  return ex->run();
}

}  // namespace

TEST_CASE("run goal: fix until the check passes") {
  scripted_runner runner;
  runner.on_action("pytest", {R::exit(1), R::exit(1), R::exit(0)});
  const auto r = run(compiled(R"({"paradigm": "goal", "goal": "tests pass", "tools": ["pytest", "fix.sh"]})"),
                     runner);
  CHECK(r.final_state == "done");
  CHECK(r.iterations == 5);
  CHECK(r.succeeded());
}

TEST_CASE("run goal: an evaluator error ends in `failed` at once instead of spinning (BUG-624)") {
  scripted_runner runner;
  runner.on_action("make check", R::exit(2));  // exit_code: 2 is the `error` verdict
  const auto r = run(compiled(R"({"paradigm": "goal", "goal": "builds", "tools": ["make check", "fix.sh"]})"),
                     runner);
  CHECK(r.final_state == "failed");
  CHECK(r.terminated_by == termination::terminal);
  CHECK(r.failure);
  CHECK_FALSE(r.succeeded());
  CHECK(r.iterations == 1);
  CHECK(runner.call_count() == 1);  // the fix never ran

  scripted_runner timeouts;
  timeouts.otherwise(R::timeout());
  const auto t = run(compiled(R"({"paradigm": "goal", "goal": "g", "tools": ["slow", "fix"]})"), timeouts);
  CHECK(t.final_state == "failed");
}

TEST_CASE("run goal: an explicit exit_code evaluator on a prompt check is honoured") {
  scripted_runner runner;
  runner.otherwise(R::exit(0));
  // Default for a `/` action is the LLM judge; with no judge backend that is `error`.
  auto r = run(compiled(R"({"paradigm": "goal", "goal": "g", "tools": ["/ll:check", "fix"]})"), runner);
  CHECK(r.final_state == "failed");
  // With the explicit choice the exit code decides.
  r = run(compiled(R"({"paradigm": "goal", "goal": "g", "tools": ["/ll:check", "fix"],
      "evaluator": {"type": "exit_code"}})"), runner);
  CHECK(r.final_state == "done");
  CHECK(r.succeeded());
}

TEST_CASE("run goal: the passed-through evaluator decides") {
  scripted_runner runner;
  runner.on_action("ruff check", {R::exit(0, "3 errors"), R::exit(0, "0 errors")});
  const auto r = run(compiled(R"({"paradigm": "goal", "goal": "lint", "tools": ["ruff check", "ruff --fix"],
      "evaluator": {"type": "output_contains", "pattern": "^0 errors"}})"), runner);
  CHECK(r.final_state == "done");
  CHECK(r.iterations == 3);
}

TEST_CASE("run convergence: progress, then a stall ends in the failure terminal `stalled`") {
  scripted_runner runner;
  runner.on_action("count", {R::exit(0, "5\n"), R::exit(0, "3\n"), R::exit(0, "3\n")});
  const auto r = run(compiled(R"({"paradigm": "convergence", "name": "c", "check": "count", "toward": 0, "using": "fix"})"),
                     runner);
  CHECK(r.final_state == "stalled");
  CHECK(r.terminated_by == termination::terminal);
  CHECK(r.failure);
  CHECK(r.iterations == 5);
  REQUIRE(r.captured.count("current_value") == 1);
  CHECK(r.captured.at("current_value").output == "3");
}

TEST_CASE("run convergence: the check runs from ${context.metric_cmd}, as data") {
  // A `${VAR}` in the check reaches the shell as written (it is not a template of ours).
  auto loop = compiled(R"({"paradigm": "convergence", "name": "c",
      "check": "echo ${HOME} | wc -c", "toward": 0, "using": "fix"})");
  scripted_runner runner;
  runner.on_action("echo ${HOME} | wc -c", R::exit(0, "0"));
  auto r = run(loop, runner);
  CHECK(r.final_state == "done");
  REQUIRE(runner.calls().size() == 1);
  CHECK(runner.calls()[0].text == "echo ${HOME} | wc -c");
  CHECK(runner.calls()[0].kind == action_kind::shell);

  // Overriding the context (`ll-loop run --context metric_cmd=…`) changes what is measured.
  loop.context["metric_cmd"] = "other-count";
  scripted_runner other;
  other.on_action("other-count", R::exit(0, "0"));
  r = run(loop, other);
  CHECK(r.final_state == "done");
  REQUIRE(other.calls().size() == 1);
  CHECK(other.calls()[0].text == "other-count");

  // A `/slash` check is still run as a prompt: the kind is read from the rendered action.
  scripted_runner slash;
  slash.on_action("/ll:count-errors", R::exit(0, "0"));
  r = run(compiled(R"({"paradigm": "convergence", "name": "c", "check": "/ll:count-errors",
      "toward": 0, "using": "fix"})"), slash);
  CHECK(r.final_state == "done");
  REQUIRE(slash.calls().size() == 1);
  CHECK(slash.calls()[0].kind == action_kind::slash_command);
}

TEST_CASE("run convergence: reaching the target, maximize, and unreadable values") {
  scripted_runner runner;
  runner.on_action("count", {R::exit(0, "4"), R::exit(0, "1"), R::exit(0, "0.5")});
  auto r = run(compiled(R"({"paradigm": "convergence", "name": "c", "check": "count", "toward": 0,
      "tolerance": 0.5, "using": "fix"})"), runner);
  CHECK(r.final_state == "done");
  CHECK(r.succeeded());
  CHECK(r.iterations == 5);

  scripted_runner up;
  up.on_action("cov", {R::exit(0, "60"), R::exit(0, "75"), R::exit(0, "80")});
  r = run(compiled(R"({"paradigm": "convergence", "name": "c", "check": "cov", "toward": 80,
      "direction": "maximize", "using": "fix"})"), up);
  CHECK(r.final_state == "done");
  CHECK(r.iterations == 5);

  scripted_runner junk;
  junk.on_action("count", R::exit(0, "n/a"));
  r = run(compiled(R"({"paradigm": "convergence", "name": "c", "check": "count", "toward": 0, "using": "fix"})"),
          junk);
  // `error` is unrouted: the run ends as an error naming the state, the verdict and why.
  CHECK(r.terminated_by == termination::error);
  CHECK(r.final_state == "measure");
  CHECK(r.iterations == 1);
  REQUIRE(r.error.has_value());
  CHECK(r.error->message.find("No valid transition from state \"measure\" for verdict \"error\"") == 0);
  CHECK(r.error->message.find("Cannot parse output as number: n/a") != std::string::npos);
}

TEST_CASE("run invariants and imperative: an evaluator error ends the run as an error, unrouted") {
  scripted_runner runner;
  runner.on_action("lint", R::exit(2));
  auto r = run(compiled(R"({"paradigm": "invariants", "name": "g", "constraints": [
      {"name": "lint", "check": "lint", "fix": "fix-lint"}]})"), runner);
  CHECK(r.terminated_by == termination::error);
  CHECK(r.final_state == "check_lint");
  CHECK(runner.call_count() == 1);  // the fix never ran

  scripted_runner steps;
  steps.on_action("verify", R::exit(3));
  r = run(compiled(R"({"paradigm": "imperative", "name": "i", "steps": ["a"], "until": {"check": "verify"}})"),
          steps);
  CHECK(r.terminated_by == termination::error);
  CHECK(r.final_state == "check_done");
  CHECK(steps.call_count() == 2);
}

TEST_CASE("run invariants: each constraint is checked and fixed in order") {
  scripted_runner runner;
  runner.on_action("lint", {R::exit(0)}).on_action("types", {R::exit(1), R::exit(0)});
  const auto r = run(compiled(R"({"paradigm": "invariants", "name": "g", "constraints": [
      {"name": "lint", "check": "lint", "fix": "fix-lint"},
      {"name": "types", "check": "types", "fix": "fix-types"}]})"), runner);
  CHECK(r.final_state == "all_valid");
  CHECK(r.succeeded());
  REQUIRE(runner.calls().size() == 4);
  CHECK(runner.calls()[0].text == "lint");
  CHECK(runner.calls()[1].text == "types");
  CHECK(runner.calls()[2].text == "fix-types");
  CHECK(runner.calls()[3].text == "types");
}

TEST_CASE("run invariants: a `${` in a constraint name is text in the generated targets") {
  scripted_runner runner;
  runner.on_action("a", {R::exit(1), R::exit(0)}).on_action("b", R::exit(0));
  auto loop = compiled(R"({"paradigm": "invariants", "name": "q", "context": {"x": "hello"},
      "constraints": [{"name": "${context.x}", "check": "a", "fix": "f"},
                      {"name": "$${y}", "check": "b", "fix": "g"}]})");
  CHECK(loop.states.count("check_${context.x}") == 1);
  CHECK(loop.states.at("check_${context.x}").on.at("failure") == "fix_$${context.x}");
  CHECK(loop.states.at("check_${context.x}").on.at("success") == "check_$$${y}");
  CHECK(validate(loop).empty());
  const auto r = run(loop, runner);
  CHECK(r.final_state == "all_valid");
  CHECK(r.succeeded());
  REQUIRE(runner.calls().size() == 4);
  CHECK(runner.calls()[1].text == "f");
  CHECK(runner.calls()[3].text == "b");
  CHECK(escape_template("a${b}$${c}$") == "a$${b}$$${c}$");
}

TEST_CASE("run imperative: steps repeat until the check passes") {
  scripted_runner runner;
  runner.on_action("verify", {R::exit(1), R::exit(0)});
  const auto r = run(compiled(R"({"paradigm": "imperative", "name": "i", "steps": ["a", "b"],
      "until": {"check": "verify"}})"), runner);
  CHECK(r.final_state == "done");
  CHECK(r.iterations == 6);
  std::vector<std::string> texts;
  for (const auto& c : runner.calls()) texts.push_back(c.text);
  CHECK(texts == std::vector<std::string>{"a", "b", "verify", "a", "b", "verify"});
}

TEST_CASE("run: max_iterations bounds every compiled loop") {
  scripted_runner runner;
  runner.otherwise(R::exit(1));
  const auto r = run(compiled(R"({"paradigm": "goal", "goal": "g", "tools": ["c", "f"], "max_iterations": 7})"),
                     runner);
  CHECK(r.terminated_by == termination::max_iterations);
  CHECK(r.iterations == 7);
}
