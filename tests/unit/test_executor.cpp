// little_loops — executor core: seed 002's test list and the basic data model
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"
#include <stdexcept>
#include <string>
#include <vector>

using namespace executor_test;

namespace {

// Seed 002 builds its loops in memory (FSMLoop(...)), without load-time validation.
ll::state_config action_state(std::string action,
                              std::initializer_list<std::pair<const char*, const char*>> on) {
  ll::state_config s;
  s.action = std::move(action);
  for (const auto& [verdict, target] : on) s.on[verdict] = target;
  return s;
}

ll::state_config terminal_state() {
  ll::state_config s;
  s.terminal = true;
  return s;
}

constexpr std::string_view check_fix_loop = R"({
  "name": "test", "initial": "check",
  "states": {
    "check": {"action": "pytest", "on_success": "done", "on_failure": "fix"},
    "fix":   {"action": "fix.sh", "next": "check"},
    "done":  {"terminal": true}
  }})";

}  // namespace

TEST_SUITE("executor") {
  TEST_CASE("simple success path: check -> done on first success") {
    // Exactly the seed's loop: `on_failure: fix` names no state, and is never taken.
    ll::fsm_loop loop;
    loop.name = "test";
    loop.initial = "check";
    loop.states["check"] = action_state("pytest", {{"success", "done"}, {"failure", "fix"}});
    loop.states["done"] = terminal_state();
    ll::scripted_runner runner;
    runner.on_action("pytest", exit_with(0));
    auto ex = ll::make_executor(loop, runner);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.final_state == "done");
    CHECK(r.iterations == 1);
    CHECK(r.terminated_by == ll::termination::terminal);
    CHECK(r.succeeded());
    CHECK_FALSE(r.snapshot.has_value());
    CHECK(runner.call_count() == 1);
  }

  TEST_CASE("fix retry loop: check -> fix -> check -> done") {
    ll::scripted_runner runner;
    runner.by_index({exit_with(1), exit_with(0), exit_with(0)});
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(check_fix_loop), runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.final_state == "done");
    CHECK(r.iterations == 3);
    CHECK(r.terminated_by == ll::termination::terminal);
    REQUIRE(runner.calls().size() == 3);
    CHECK(runner.calls()[0].text == "pytest");
    CHECK(runner.calls()[1].text == "fix.sh");
    CHECK(runner.calls()[2].text == "pytest");

    // The full event sequence of seed 002 (a `next:` state emits no evaluate event).
    CHECK(sink.names() == std::vector<std::string>{
                              "loop_start",                                       //
                              "state_enter", "action_start", "action_complete",   // check
                              "evaluate", "route",                                //
                              "state_enter", "action_start", "action_complete",   // fix
                              "route",                                            //
                              "state_enter", "action_start", "action_complete",   // check
                              "evaluate", "route",                                //
                              "loop_complete"});
    const auto& ev = sink.events;
    CHECK(ev[0]["loop"] == "test");
    CHECK(ev[1]["state"] == "check");
    CHECK(ev[1]["iteration"] == 1);
    CHECK(ev[2]["action"] == "pytest");
    CHECK(ev[3]["exit_code"] == 1);
    CHECK(ev[4]["type"] == "default");
    CHECK(ev[4]["verdict"] == "failure");
    CHECK(ev[5]["from"] == "check");
    CHECK(ev[5]["to"] == "fix");
    CHECK(ev[9]["from"] == "fix");
    CHECK(ev[9]["to"] == "check");
    CHECK(ev[10]["iteration"] == 3);
    CHECK(ev[13]["verdict"] == "success");
    CHECK(ev.back()["final_state"] == "done");
    CHECK(ev.back()["iterations"] == 3);
    CHECK(ev.back()["terminated_by"] == "terminal");
    for (const auto& e : ev) {
      CHECK(e.begin().key() == "event");
      CHECK(std::next(e.begin()).key() == "ts");
    }
  }

  TEST_CASE("max_iterations respected") {
    // Exactly the seed's loop: one state and no terminal state; the cap ends it.
    ll::fsm_loop loop;
    loop.name = "test";
    loop.initial = "loop";
    loop.max_iterations = 3;
    loop.states["loop"] = action_state("fail.sh", {{"failure", "loop"}});
    ll::scripted_runner runner;
    runner.otherwise(exit_with(1));
    auto ex = ll::make_executor(loop, runner);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.iterations == 3);
    CHECK(r.terminated_by == ll::termination::max_iterations);
    CHECK(r.final_state == "loop");
    CHECK(runner.call_count() == 3);
  }

  TEST_CASE("variable interpolation: ${context.*} resolves in the action") {
    ll::scripted_runner runner;
    runner.on_action("mypy src/", exit_with(0));
    auto ex = ll::make_executor(loop_from(R"({
      "name": "test", "initial": "check", "context": {"target_dir": "src/"},
      "states": {"check": {"action": "mypy ${context.target_dir}", "on_success": "done"},
                 "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    ex->run();
    CHECK(runner.last_action() == "mypy src/");
    CHECK(ex->result().terminated_by == ll::termination::terminal);
  }

  TEST_CASE("capture stores the action result, trailing CR/LF stripped") {
    ll::scripted_runner runner;
    ll::action_result r42;
    r42.output = "42\r\n\n";
    r42.stderr_output = "warn\n";
    r42.duration = std::chrono::milliseconds(7);
    runner.on_action("count.sh", r42);
    auto ex = ll::make_executor(loop_from(R"({
      "name": "test", "initial": "measure",
      "states": {"measure": {"action": "count.sh", "capture": "errors", "next": "report"},
                 "report": {"action": "echo ${captured.errors.output} ${captured.errors.verdict}",
                            "next": "done"},
                 "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    REQUIRE(r.captured.count("errors") == 1);
    const auto& c = r.captured.at("errors");
    CHECK(c.output == "42");
    CHECK(c.stderr_output == "warn\n");
    CHECK(c.exit_code == 0);
    CHECK(c.duration_ms == 7);
    CHECK(c.verdict == "success");
    CHECK(runner.last_action() == "echo 42 success");
    const ll::json j = ll::to_json(r);
    CHECK(j["captured"]["errors"]["output"] == "42");
    CHECK(j["captured"]["errors"]["stderr"] == "warn\n");
  }

  TEST_CASE("events emitted for all lifecycle points") {
    ll::scripted_runner runner;
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(check_fix_loop), runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    ex->run();
    const auto n = sink.names();
    for (const char* kind : {"loop_start", "state_enter", "action_start", "action_complete",
                             "evaluate", "route", "loop_complete"})
      CHECK(std::find(n.begin(), n.end(), kind) != n.end());
  }

  TEST_CASE("explicit evaluate config overrides the default") {
    ll::scripted_runner runner;
    runner.on_action("count", exit_with(3, "7\n"));
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "count",
      "states": {"count": {"action": "count",
                           "evaluate": {"type": "output_numeric", "operator": "lt", "target": 10},
                           "on_success": "done", "on_failure": "count"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.final_state == "done");
    auto it = std::find_if(sink.events.begin(), sink.events.end(),
                           [](const ll::json& e) { return e["event"] == "evaluate"; });
    REQUIRE(it != sink.events.end());
    CHECK((*it)["type"] == "output_numeric");
    CHECK((*it)["verdict"] == "success");
  }

  TEST_CASE("slash commands are prompt actions and use the LLM default (no backend -> error)") {
    ll::scripted_runner runner;
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "ask",
      "states": {"ask": {"action": "/ll:check", "on_success": "done", "on_error": "failed"},
                 "done": {"terminal": true}, "failed": {"terminal": true, "failure": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    REQUIRE(runner.calls().size() == 1);
    CHECK(runner.calls()[0].kind == ll::action_kind::slash_command);
    CHECK(r.final_state == "failed");
    CHECK(r.terminated_by == ll::termination::terminal);
    CHECK(r.failure);
    CHECK_FALSE(r.succeeded());
    CHECK(ll::to_json(r)["failure"] == true);
  }

  TEST_CASE("a path is a shell command, as written or rendered; --no-llm's empty prompt command runs nothing") {
    ll::scripted_runner runner;
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "a", "context": {"script": "/usr/bin/true"},
      "states": {"a": {"action": "/usr/bin/true", "next": "b"},
                 "b": {"action": "${context.script} --flag", "next": "done"},
                 "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    CHECK(ex->run().final_state == "done");
    REQUIRE(runner.calls().size() == 2);
    CHECK(runner.calls()[0].kind == ll::action_kind::shell);
    CHECK(runner.calls()[1].kind == ll::action_kind::shell);
    CHECK(runner.calls()[1].text == "/usr/bin/true --flag");
  }

  TEST_CASE("an action that renders to /... runs as a slash command; its evaluator follows the text as written") {
    // Seed 002: the runner gets `is_slash_command=action.startswith("/")` on the interpolated
    // action; the default evaluator tests `state.action` (the template), so it stays exit_code.
    ll::scripted_runner runner;
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "ask", "context": {"cmd": "/ll:check", "shell": "echo hi"},
      "states": {"ask": {"action": "${context.cmd}", "on_success": "say"},
                 "say": {"action": "${context.shell}", "next": "lit"},
                 "lit": {"action": "$${context.cmd}", "next": "done"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.final_state == "done");
    REQUIRE(runner.calls().size() == 3);
    CHECK(runner.calls()[0].kind == ll::action_kind::slash_command);
    CHECK(runner.calls()[0].text == "/ll:check");
    CHECK(runner.calls()[1].kind == ll::action_kind::shell);
    CHECK(runner.calls()[2].kind == ll::action_kind::shell);
    CHECK(runner.calls()[2].text == "${context.cmd}");
    std::vector<bool> prompt_flags;
    for (const auto& e : sink.events)
      if (e["event"] == "action_start" || e["event"] == "action_complete")
        prompt_flags.push_back(e["is_prompt"].get<bool>());
    CHECK(prompt_flags == std::vector<bool>{true, true, false, false, false, false});
    const auto evaluate = std::find_if(sink.events.begin(), sink.events.end(),
                                       [](const ll::json& e) { return e["event"] == "evaluate"; });
    REQUIRE(evaluate != sink.events.end());
    CHECK((*evaluate)["verdict"] == "success");  // exit_code; llm_structured has no backend here
  }

  TEST_CASE("a state with neither action nor evaluate yields success and no evaluate event") {
    ll::scripted_runner runner;
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "hub",
      "states": {"hub": {"on_success": "done", "on_failure": "hub"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.final_state == "done");
    CHECK(r.iterations == 1);
    CHECK(runner.call_count() == 0);
    CHECK(sink.names() ==
          std::vector<std::string>{"loop_start", "state_enter", "route", "loop_complete"});
  }

  TEST_CASE("an empty action runs nothing, as a state without one (seed: `if state.action:`)") {
    ll::scripted_runner runner;
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "", "on_success": "done", "on_failure": "a"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.final_state == "done");
    CHECK(r.iterations == 1);
    CHECK(runner.call_count() == 0);
    CHECK(sink.names() ==
          std::vector<std::string>{"loop_start", "state_enter", "route", "loop_complete"});
  }

  TEST_CASE("${prev.evaluation} is the last evaluation: a state that is not evaluated keeps it") {
    // check (evaluated: failure) → log (next:, not evaluated) → hub (no action, not
    // evaluated) → fix: the director is handed check's evaluation (seed 004), while prev is hub.
    const char* doc = R"({
      "name": "t", "initial": "check",
      "states": {"check": {"action": "run-tests", "on_success": "done", "on_failure": "log"},
                 "log": {"action": "echo logged", "next": "hub"},
                 "hub": {"on_success": "fix"},
                 "fix": {"action": "fix ${prev.state} ${prev.evaluation.success} ${prev.evaluation.feedback:shell}",
                         "next": "done"},
                 "done": {"terminal": true}}})";
    ll::scripted_runner runner;
    runner.on_action("run-tests", exit_with(1, "2 failed"));
    auto ex = ll::make_executor(loop_from(doc), runner);
    REQUIRE(ex.has_value());
    CHECK(ex->run().final_state == "done");
    REQUIRE(runner.calls().size() == 3);
    CHECK(runner.calls()[2].text == "fix hub false 'command exited with code 1'");

    // ${loop.max_iterations} is the loop's cap (seed 004 §7).
    ll::scripted_runner capped;
    auto ex0 = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "a", "max_iterations": 7,
      "states": {"a": {"action": "try ${state.iteration}/${loop.max_iterations}", "next": "done"},
                 "done": {"terminal": true}}})"), capped);
    REQUIRE(ex0.has_value());
    ex0->run();
    REQUIRE(capped.calls().size() == 1);
    CHECK(capped.calls()[0].text == "try 1/7");

    // The same after a resume between log and fix: the snapshot keeps the last evaluation.
    ll::scripted_runner first;
    first.on_action("run-tests", exit_with(1, "2 failed"));
    auto ex1 = ll::make_executor(loop_from(doc), first);
    REQUIRE(ex1.has_value());
    for (int i = 0; i < 3; ++i) REQUIRE(ex1->step());  // check, log, hub
    const auto snap = ll::snapshot_from_json_text(ll::to_json(ex1->snapshot()).dump());
    REQUIRE(snap.has_value());
    REQUIRE(snap->last_evaluation.has_value());
    CHECK(snap->last_evaluation->state == "check");
    ll::scripted_runner second;
    auto ex2 = ll::make_executor(loop_from(doc), second);
    REQUIRE(ex2.has_value());
    REQUIRE(ex2->resume(*snap).has_value());
    CHECK(ex2->run().final_state == "done");
    REQUIRE(second.calls().size() == 1);
    CHECK(second.calls()[0].text == "fix hub false 'command exited with code 1'");

    // Evaluated states replace it: a later check's success is what the next fix sees.
    ll::scripted_runner again;
    again.on_action("run-tests", {exit_with(1, "2 failed"), exit_with(0, "ok")});
    auto ex3 = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "check",
      "states": {"check": {"action": "run-tests", "on_success": "report", "on_failure": "log"},
                 "log": {"action": "echo ${prev.evaluation.success}", "next": "check"},
                 "report": {"action": "echo ${prev.evaluation.success}", "next": "done"},
                 "done": {"terminal": true}}})"), again);
    REQUIRE(ex3.has_value());
    CHECK(ex3->run().final_state == "done");
    REQUIRE(again.calls().size() == 4);
    CHECK(again.calls()[1].text == "echo false");
    CHECK(again.calls()[3].text == "echo true");
  }

  TEST_CASE("prev is updated after every state, including next: states") {
    ll::scripted_runner runner;
    runner.on_action("first", exit_with(0, "one\n"));
    runner.on_action("second", exit_with(0, "two"));
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "first", "next": "b"},
                 "b": {"action": "second", "next": "c"},
                 "c": {"action": "echo ${prev.state}:${prev.output}:${prev.verdict}", "next": "done"},
                 "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    ex->run();
    CHECK(runner.last_action() == "echo b:two:success");
    REQUIRE(ex->prev() != nullptr);
    CHECK(ex->prev()->state == "c");
  }

  TEST_CASE("${prev.evaluation} hands the evaluator's feedback record to the next action") {
    ll::scripted_runner runner;
    runner.on_action("pytest", exit_with(1, "boom"));
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "check", "max_iterations": 2,
      "states": {"check": {"action": "pytest", "on_success": "done", "on_failure": "fix"},
                 "fix": {"action": "fix ${prev.evaluation}", "next": "done"},
                 "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    ex->run();
    REQUIRE(runner.calls().size() == 2);
    const std::string& text = runner.calls()[1].text;
    REQUIRE(text.rfind("fix ", 0) == 0);
    const ll::json record = ll::json::parse(text.substr(4), nullptr, false);
    REQUIRE_FALSE(record.is_discarded());
    CHECK(record["success"] == false);
    CHECK(record.contains("feedback"));
    CHECK(record["scriptOutput"]["stdout"] == "boom");
    CHECK(record["scriptOutput"]["exitCode"] == 1);
  }

  TEST_CASE("a director that runs first gets an empty ${prev.evaluation}, then the check's record") {
    ll::scripted_runner runner;
    runner.on_action("check", exit_with(1, "3 failing"));
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "director", "max_iterations": 3,
      "states": {"director": {"action": "gen [${prev.evaluation}]", "next": "check"},
                 "check": {"action": "check", "on_success": "done", "on_failure": "director"},
                 "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::max_iterations);
    REQUIRE(runner.calls().size() == 3);
    CHECK(runner.calls()[0].text == "gen []");
    const std::string& second = runner.calls()[2].text;
    const ll::json record = ll::json::parse(second.substr(5, second.size() - 6), nullptr, false);
    REQUIRE(record.is_object());
    CHECK(record["scriptOutput"]["stdout"] == "3 failing");
  }

  TEST_CASE("${prev.evaluation} of a state without an action has no scriptOutput, and resumes so") {
    ll::scripted_runner runner;
    auto loop = loop_from(R"({
      "name": "t", "initial": "gate", "max_iterations": 3, "context": {"status": "pending"},
      "states": {"gate": {"evaluate": {"type": "output_contains", "source": "${context.status}",
                                       "pattern": "ready"},
                          "on_success": "done", "on_failure": "fix"},
                 "fix": {"action": "fix ${prev.evaluation}", "next": "done"},
                 "done": {"terminal": true}}})");
    auto ex = ll::make_executor(loop, runner);
    REQUIRE(ex.has_value());
    REQUIRE(ex->step());  // gate: evaluated, no action
    const ll::snapshot snap = ex->snapshot();
    REQUIRE(snap.prev.has_value());
    CHECK_FALSE(snap.prev->ran_action);
    ex->run();
    REQUIRE(runner.calls().size() == 1);
    const ll::json record = ll::json::parse(runner.calls()[0].text.substr(4), nullptr, false);
    REQUIRE(record.is_object());
    CHECK(record["success"] == false);
    CHECK_FALSE(record.contains("scriptOutput"));

    // The same from the snapshot, through its JSON text.
    ll::scripted_runner again;
    auto resumed = ll::make_executor(loop, again);
    REQUIRE(resumed.has_value());
    auto read = ll::snapshot_from_json_text(ll::to_json(snap).dump());
    REQUIRE(read.has_value());
    REQUIRE(resumed->resume(*read).has_value());
    resumed->run();
    REQUIRE(again.calls().size() == 1);
    CHECK(again.calls()[0].text == runner.calls()[0].text);
  }

  TEST_CASE("exit-code details read the same in events, templates, prev and snapshots") {
    // The exit_code evaluator keeps its details unbuilt; every observer still sees
    // {"exit_code": N}.
    ll::scripted_runner runner;
    runner.by_index({exit_with(1), exit_with(0)});
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "check", "max_iterations": 3,
      "states": {"check": {"action": "pytest", "route": {"success": "done",
                             "failure": "c${result.details.exit_code}"}},
                 "c1": {"action": "fix ${prev.details} ${prev.details.exit_code} ${prev.evaluation}",
                        "next": "done"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    REQUIRE(ex->step());  // check: failure, routed through ${result.details.exit_code}
    CHECK(ex->current_state() == "c1");
    REQUIRE(ex->prev() != nullptr);
    CHECK(ex->prev()->details == ll::json{{"exit_code", 1}});
    CHECK(ex->prev()->details.to_json() == ll::json{{"exit_code", 1}});
    const ll::json snap = ll::to_json(ex->snapshot());
    CHECK(snap["prev"]["details"] == ll::json{{"exit_code", 1}});
    // The default evaluation's event is {type, verdict}, as seed 002 emits it.
    REQUIRE(sink.events.size() >= 5);
    CHECK(sink.events[4]["event"] == "evaluate");
    CHECK_FALSE(sink.events[4].contains("exit_code"));
    CHECK(sink.events[4].size() == 4);  // event, ts, type, verdict

    // A snapshot read back resumes with equal prev data (stored vs compact details).
    auto back = ll::snapshot_from_json(snap);
    REQUIRE(back.has_value());
    REQUIRE(back->prev.has_value());
    CHECK(*back->prev == *ex->prev());

    ex->run();
    REQUIRE(runner.calls().size() == 2);
    const std::string& text = runner.calls()[1].text;
    const std::string prefix = R"(fix {"exit_code":1} 1 )";
    REQUIRE(text.rfind(prefix, 0) == 0);
    const ll::json record = ll::json::parse(text.substr(prefix.size()), nullptr, false);
    REQUIRE_FALSE(record.is_discarded());
    CHECK(record["details"] == ll::json{{"exit_code", 1}});
    CHECK(record["feedback"] == "command exited with code 1");
  }

  TEST_CASE("state, loop and result namespaces are visible") {
    ll::scripted_runner runner;
    ll::manual_clock clock;
    ll::executor_options opts;
    opts.clock = &clock;
    auto ex = ll::make_executor(loop_from(R"({
      "name": "demo", "initial": "a",
      "states": {"a": {"action": "run ${state.name} ${state.iteration} ${loop.name} ${loop.started_at}",
                       "next": "done"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, ll::null_event_sink{}, opts);
    REQUIRE(ex.has_value());
    ex->run();
    CHECK(runner.last_action() == "run a 1 demo 2026-01-01T00:00:00+00:00");
  }

  TEST_CASE("step() advances one state at a time") {
    ll::scripted_runner runner;
    runner.by_index({exit_with(1), exit_with(0), exit_with(0)});
    auto ex = ll::make_executor(compiled(check_fix_loop), runner);
    REQUIRE(ex.has_value());
    CHECK(ex->current_state() == "check");
    CHECK(ex->step());
    CHECK(ex->current_state() == "fix");
    CHECK(ex->iteration() == 1);
    CHECK(ex->step());
    CHECK(ex->current_state() == "check");
    CHECK(ex->step());
    CHECK(ex->current_state() == "done");
    CHECK_FALSE(ex->finished());
    CHECK_FALSE(ex->step());  // reaching the terminal ends the run
    CHECK(ex->finished());
    CHECK(ex->result().terminated_by == ll::termination::terminal);
    CHECK_FALSE(ex->step());
  }

  TEST_CASE("a compiled loop is shared between executors; reset() runs again") {
    auto loop = compiled(check_fix_loop);
    ll::scripted_runner a, b;
    b.otherwise(exit_with(1));
    auto ea = ll::make_executor(loop, a);
    auto eb = ll::make_executor(loop, b);
    REQUIRE(ea.has_value());
    REQUIRE(eb.has_value());
    CHECK(ea->run().terminated_by == ll::termination::terminal);
    CHECK(eb->run().terminated_by == ll::termination::max_iterations);
    CHECK(eb->result().iterations == 50);
    ea->reset();
    CHECK(ea->run().iterations == 1);
    CHECK(a.call_count() == 2);
  }

  TEST_CASE("execution_result to_json") {
    ll::scripted_runner runner;
    auto ex = ll::make_executor(compiled(check_fix_loop), runner);
    REQUIRE(ex.has_value());
    const ll::json j = ll::to_json(ex->run());
    CHECK(j["final_state"] == "done");
    CHECK(j["iterations"] == 1);
    CHECK(j["terminated_by"] == "terminal");
    CHECK(j["failure"] == false);
    CHECK(j["captured"].is_object());
    CHECK(j.contains("duration_ms"));
    CHECK_FALSE(j.contains("snapshot"));
  }

  TEST_CASE("to_json has error and error_code only when the run has an error") {
    // Seed 002's to_dict() leaves out an `error` that is None.
    ll::scripted_runner ok;
    auto good = ll::make_executor(compiled(check_fix_loop), ok);
    REQUIRE(good.has_value());
    const ll::json j = ll::to_json(good->run());
    CHECK_FALSE(j.contains("error"));
    CHECK_FALSE(j.contains("error_code"));
    CHECK(j.contains("failure"));

    ll::scripted_runner broken;
    broken.otherwise(ll::error{ll::errc::action_failed, "Connection failed"});
    auto bad = ll::make_executor(compiled(R"({
      "name": "t", "initial": "check",
      "states": {"check": {"action": "x", "on_success": "done"}, "done": {"terminal": true}}})"),
                                 broken);
    REQUIRE(bad.has_value());
    const ll::json e = ll::to_json(bad->run());
    CHECK(e["terminated_by"] == "error");
    CHECK(e["error"] == "No valid transition from state \"check\" for verdict \"error\": Connection failed");
    CHECK(e["error_code"] == ll::error_id(ll::errc::no_transition));
  }

  TEST_CASE("an in-memory loop is built unless running it is impossible") {
    ll::scripted_runner runner;
    SUBCASE("no terminal state: runs until max_iterations") {
      ll::fsm_loop loop;
      loop.name = "t";
      loop.initial = "a";
      loop.max_iterations = 2;
      loop.states["a"] = action_state("x", {{"success", "a"}, {"failure", "a"}});
      auto ex = ll::make_executor(loop, runner);
      REQUIRE(ex.has_value());
      CHECK(ex->run().terminated_by == ll::termination::max_iterations);
      CHECK(runner.call_count() == 2);
    }
    SUBCASE("unknown initial state: refused") {
      ll::fsm_loop loop;
      loop.name = "t";
      loop.initial = "nowhere";
      loop.states["a"] = terminal_state();
      auto ex = ll::make_executor(loop, runner);
      REQUIRE_FALSE(ex.has_value());
      CHECK(ex.error().code == ll::errc::invalid_loop);
      CHECK(ex.error().message.find("Initial state 'nowhere' not found") != std::string::npos);
    }
    SUBCASE("bad evaluator config: refused") {
      ll::fsm_loop loop;
      loop.name = "t";
      loop.initial = "a";
      loop.states["a"] = action_state("x", {{"success", "done"}});
      loop.states["a"].evaluate.emplace();
      loop.states["a"].evaluate->type = ll::evaluator_type::output_numeric;  // no operator/target
      loop.states["done"] = terminal_state();
      auto ex = ll::make_executor(loop, runner);
      REQUIRE_FALSE(ex.has_value());
      CHECK(ex.error().code == ll::errc::invalid_loop);
      CHECK(ex.error().message.find("states.a.evaluate") != std::string::npos);
    }
    SUBCASE("the refusal still lists every diagnostic, lenient ones included") {
      ll::fsm_loop loop;
      loop.name = "t";
      loop.initial = "nowhere";
      loop.states["a"] = action_state("x", {{"success", "ghost"}});
      auto ex = ll::make_executor(loop, runner);
      REQUIRE_FALSE(ex.has_value());
      int lenient = 0;
      for (const auto& d : ex.error().details) lenient += d.code == "no-terminal" || d.code == "unknown-state";
      CHECK(lenient == 2);
    }
  }

  TEST_CASE("a target naming an unknown state ends the run as error only if taken") {
    ll::fsm_loop loop;
    loop.name = "test";
    loop.initial = "check";
    loop.states["check"] = action_state("pytest", {{"success", "done"}, {"failure", "fix"}});
    loop.states["done"] = terminal_state();
    ll::scripted_runner runner;
    runner.otherwise(exit_with(1));
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(loop, runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::error);
    CHECK(r.final_state == "check");
    CHECK(r.iterations == 1);
    REQUIRE(r.error.has_value());
    CHECK(r.error->code == ll::errc::unknown_state);  // as for an interpolated target
    CHECK(r.error->message ==
          "route target \"fix\" of state \"check\" is not a state (states.check.on_failure)");
    CHECK(r.error->path == "states.check.on_failure");
    const auto n = sink.names();
    REQUIRE(n.size() >= 2);
    CHECK(n[n.size() - 2] == "error");
    CHECK(n.back() == "loop_complete");
  }

  TEST_CASE("loading stays strict: validate and load_loop_text report what the executor allows") {
    constexpr std::string_view text = R"({
      "name": "test", "initial": "check",
      "states": {"check": {"action": "pytest", "on_success": "check", "on_failure": "fix"}}})";
    auto parsed = ll::parse_loop_text(text);
    REQUIRE(parsed.has_value());
    const auto found = ll::validate(*parsed);
    int no_terminal = 0, unknown = 0;
    for (const auto& d : found) {
      no_terminal += d.code == "no-terminal" && d.level == ll::severity::error;
      unknown += d.code == "unknown-state" && d.level == ll::severity::error &&
                 d.message == "References unknown state 'fix'";
    }
    CHECK(no_terminal == 1);
    CHECK(unknown == 1);
    auto loaded = ll::load_loop_text(text);
    REQUIRE_FALSE(loaded.has_value());
    CHECK(loaded.error().code == ll::errc::invalid_loop);
    ll::scripted_runner runner;
    CHECK(ll::make_executor(*parsed, runner).has_value());
  }

  TEST_CASE("captured references with a fallback load, and render the fallback") {
    ll::scripted_runner runner;
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "echo ${captured.x.output:default=none} [${captured.x.output?}]",
                       "on_success": "done"},
                 "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    CHECK(ex->run().terminated_by == ll::termination::terminal);
    CHECK(runner.last_action() == "echo none []");
  }

  TEST_CASE("invalid loops are refused at construction with diagnostics") {
    ll::fsm_loop loop;
    loop.name = "bad";
    loop.initial = "nowhere";
    ll::scripted_runner runner;
    auto ex = ll::make_executor(loop, runner);
    REQUIRE_FALSE(ex.has_value());
    CHECK(ex.error().code == ll::errc::invalid_loop);
    CHECK_FALSE(ex.error().details.empty());
  }

  TEST_CASE("a malformed action template is refused at construction") {
    ll::fsm_loop loop;
    loop.name = "bad";
    loop.initial = "a";
    ll::state_config a;
    a.action = "echo ${context.x";
    a.next = "done";
    ll::state_config done;
    done.terminal = true;
    loop.states["a"] = std::move(a);
    loop.states["done"] = std::move(done);
    auto c = ll::compile_loop(loop);
    REQUIRE_FALSE(c.has_value());
  }

  TEST_CASE("runner and evaluator errors become the error verdict") {
    ll::scripted_runner runner;
    runner.on_action("broken", ll::scripted_response(ll::error{ll::errc::action_failed, "no shell"}));
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(loop_from(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "broken", "on_success": "done", "on_error": "recover"},
                 "recover": {"terminal": true}, "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    CHECK(ex->run().final_state == "recover");
    auto it = std::find_if(sink.events.begin(), sink.events.end(),
                           [](const ll::json& e) { return e["event"] == "error"; });
    REQUIRE(it != sink.events.end());
    CHECK((*it)["kind"] == "action");
    CHECK((*it)["error"] == "no shell");
  }

  TEST_CASE("a runner or evaluator that throws gives the error verdict, not an exception (design §3.4)") {
    struct throwing_runner {
      int calls = 0;
      ll::action_result run(const ll::action_request& req) {
        ++calls;
        if (req.text == "boom") throw std::runtime_error("spawn table full");
        if (req.text == "odd") throw 42;
        return {};
      }
    };
    struct throwing_evaluator {
      ll::expected<ll::evaluation_result, ll::error> evaluate(const ll::evaluation_request& req) {
        if (req.state == "judged") throw std::runtime_error("judge backend crashed");
        return ll::default_evaluator{}.evaluate(req);
      }
    };
    const auto loop = loop_from(R"({
      "name": "t", "initial": "judged",
      "states": {"judged": {"action": "fine", "on_success": "wrong", "on_error": "spawned"},
                 "spawned": {"action": "boom", "on_success": "wrong", "on_error": "odd"},
                 "odd": {"action": "odd", "on_success": "wrong", "on_error": "recovered"},
                 "recovered": {"terminal": true}, "wrong": {"terminal": true}}})");
    throwing_runner runner;
    throwing_evaluator evaluator;
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(loop, runner, evaluator, sink);
    REQUIRE(ex.has_value());
    const ll::execution_result* r = nullptr;
    CHECK_NOTHROW(r = &ex->run());
    REQUIRE(r != nullptr);
    CHECK(r->final_state == "recovered");
    CHECK(r->iterations == 3);
    CHECK(runner.calls == 3);
    std::vector<std::string> errors;
    for (const auto& e : sink.events)
      if (e["event"] == "error") errors.push_back(e["kind"].get<std::string>() + ": " + e["error"].get<std::string>());
    CHECK(errors == std::vector<std::string>{"evaluator: the evaluator threw: judge backend crashed",
                                             "action: the action runner threw: spawn table full",
                                             "action: the action runner threw an exception"});
    REQUIRE(ex->snapshot().prev.has_value());
    CHECK(ex->snapshot().prev->state == "odd");
  }
}
