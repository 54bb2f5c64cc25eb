// little_loops — executor routing: resolution order, $current, dynamic targets, error policy
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

using namespace executor_test;

namespace {

// An Evaluator that returns scripted verdicts in order (the last repeats) and records requests.
struct verdict_script {
  explicit verdict_script(std::vector<std::string> v) : verdicts(std::move(v)) {}
  std::vector<std::string> verdicts;
  std::size_t calls = 0;
  std::vector<bool> had_config;

  ll::expected<ll::evaluation_result, ll::error> evaluate(const ll::evaluation_request& req) {
    had_config.push_back(req.config != nullptr);
    const std::string& v = verdicts[std::min(calls, verdicts.size() - 1)];
    ++calls;
    if (v == "!fail") return ll::unexpected(ll::error{ll::errc::evaluation_failed, "judge exploded"});
    ll::evaluation_result r;
    r.verdict = v;
    r.details = ll::json::object();
    r.details["n"] = calls;
    return r;
  }
};
static_assert(ll::Evaluator<verdict_script>);

template <class Eval = ll::default_evaluator>
ll::execution_result run_loop(std::string_view text, ll::scripted_runner& runner, Eval eval = Eval{},
                              ll::recording_event_sink* sink = nullptr) {
  ll::recording_event_sink local;
  auto ex = ll::make_executor(compiled(text), runner, std::move(eval), sink ? *sink : local);
  REQUIRE(ex.has_value());
  ex->run();
  return ex->result();
}

}  // namespace

TEST_SUITE("executor.routing") {
  TEST_CASE("route table: exact key, then _error for error, then _") {
    constexpr std::string_view loop = R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "route": {"success": "ok", "_": "other", "_error": "err"}},
                 "ok": {"terminal": true}, "other": {"terminal": true}, "err": {"terminal": true}}})";
    ll::scripted_runner runner;
    SUBCASE("exact key") {
      runner.otherwise(exit_with(0));
      CHECK(run_loop(loop, runner).final_state == "ok");
    }
    SUBCASE("error verdict takes _error, not _ (the original checked _ first)") {
      runner.otherwise(exit_with(2));
      CHECK(run_loop(loop, runner).final_state == "err");
    }
    SUBCASE("other verdicts take _") {
      runner.otherwise(exit_with(1));
      CHECK(run_loop(loop, runner).final_state == "other");
    }
  }

  TEST_CASE("_ is checked before the on_<verdict> shorthands") {
    ll::scripted_runner runner;
    runner.otherwise(exit_with(1));
    auto ex = ll::compile_loop(loop_from(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "route": {"_": "dflt"}, "on_failure": "short"},
                 "dflt": {"terminal": true}, "short": {"terminal": true}}})"));
    REQUIRE(ex.has_value());
    auto e = ll::make_executor(*ex, runner);
    REQUIRE(e.has_value());
    CHECK(e->run().final_state == "dflt");
  }

  TEST_CASE("on_<verdict> works for any verdict") {
    ll::scripted_runner runner;
    const auto r = run_loop(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "on_blocked": "wait", "on_success": "done"},
                 "wait": {"action": "y", "on_partial": "done"},
                 "done": {"terminal": true}}})",
                            runner, verdict_script{{"blocked", "partial"}});
    CHECK(r.final_state == "done");
    CHECK(r.iterations == 2);
  }

  TEST_CASE("next: happy path; a failed, killed or timed-out action goes to on_error [BUG-940]") {
    constexpr std::string_view with_on_error = R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "next": "ok", "on_error": "recover"},
                 "ok": {"terminal": true}, "recover": {"terminal": true}}})";
    constexpr std::string_view without_on_error = R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "next": "ok"}, "ok": {"terminal": true}}})";
    ll::scripted_runner runner;
    SUBCASE("success follows next") {
      runner.otherwise(exit_with(0));
      CHECK(run_loop(with_on_error, runner).final_state == "ok");
    }
    SUBCASE("non-zero exit goes to on_error") {
      runner.otherwise(exit_with(1));
      CHECK(run_loop(with_on_error, runner).final_state == "recover");
    }
    SUBCASE("timeout goes to on_error") {
      runner.otherwise(ll::scripted_response::timeout());
      CHECK(run_loop(with_on_error, runner).final_state == "recover");
    }
    SUBCASE("signal death goes to on_error") {
      ll::action_result killed;
      killed.exit_code = -9;
      killed.signal = 9;
      runner.otherwise(killed);
      CHECK(run_loop(with_on_error, runner).final_state == "recover");
    }
    SUBCASE("without on_error, next is taken") {
      runner.otherwise(exit_with(1));
      CHECK(run_loop(without_on_error, runner).final_state == "ok");
    }
    SUBCASE("without on_error, next is taken after a timeout or a signal death too") {
      // The action ran and ended badly: that is the original's and the design's behaviour.
      ll::action_result killed;
      killed.exit_code = -9;
      killed.signal = 9;
      runner.by_index({ll::scripted_response::timeout(), killed, exit_with(2)});
      constexpr std::string_view chain = R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "next": "b"}, "b": {"action": "y", "next": "c"},
                   "c": {"action": "z", "next": "ok"}, "ok": {"terminal": true}}})";
      const auto r = run_loop(chain, runner);
      CHECK(r.terminated_by == ll::termination::terminal);
      CHECK(r.final_state == "ok");
      CHECK(runner.call_count() == 3);
    }
  }

  TEST_CASE("next: an action that could not be run at all is an unrouted error without on_error") {
    ll::scripted_runner runner;
    SUBCASE("interpolation failure: the run ends as error, the action never ran") {
      ll::recording_event_sink sink;
      const auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "echo ${env.LITTLE_LOOPS_TEST_UNSET_VARIABLE}", "next": "done"},
                   "done": {"terminal": true}}})",
                              runner, ll::default_evaluator{}, &sink);
      CHECK(runner.call_count() == 0);
      CHECK(r.terminated_by == ll::termination::error);
      CHECK(r.final_state == "a");
      REQUIRE(r.error.has_value());
      CHECK(r.error->code == ll::errc::no_transition);
      CHECK(r.error->message.rfind("No valid transition from state \"a\" for verdict \"error\": ", 0) == 0);
      CHECK(r.error->message.find("LITTLE_LOOPS_TEST_UNSET_VARIABLE") != std::string::npos);
      const auto n = sink.names();
      CHECK(std::find(n.begin(), n.end(), "route") == n.end());
    }
    SUBCASE("runner error: the run ends as error with the runner's message") {
      runner.otherwise(ll::error{ll::errc::action_failed, "cannot spawn"});
      const auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "next": "done"}, "done": {"terminal": true}}})",
                              runner);
      CHECK(r.terminated_by == ll::termination::error);
      REQUIRE(r.error.has_value());
      CHECK(r.error->message ==
            "No valid transition from state \"a\" for verdict \"error\": cannot spawn");
    }
    SUBCASE("with on_error, it goes there") {
      runner.otherwise(ll::error{ll::errc::action_failed, "cannot spawn"});
      const auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "next": "done", "on_error": "recover"},
                   "done": {"terminal": true}, "recover": {"terminal": true}}})",
                              runner);
      CHECK(r.terminated_by == ll::termination::terminal);
      CHECK(r.final_state == "recover");
    }
  }

  TEST_CASE("a next: state is never evaluated, with or without evaluate (seed 002, the original)") {
    ll::scripted_runner runner;
    ll::recording_event_sink sink;
    // b's evaluator would say `error` (the output is not a number): it never runs, and the
    // action's exit code 0 takes `next`, not on_error.
    const auto r = run_loop(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "next": "b"},
                 "b": {"action": "y", "next": "done", "on_error": "broken",
                       "evaluate": {"type": "output_numeric", "operator": "eq", "target": 1}},
                 "done": {"terminal": true}, "broken": {"terminal": true, "failure": true}}})",
                            runner, ll::default_evaluator{}, &sink);
    CHECK(r.final_state == "done");
    const auto n = sink.names();
    CHECK(std::count(n.begin(), n.end(), "evaluate") == 0);
  }

  TEST_CASE("a default evaluation's event is {type, verdict} (seed 002); an explicit one merges its details") {
    ll::scripted_runner runner;
    runner.by_index({exit_with(1), exit_with(0)});
    ll::recording_event_sink sink;
    run_loop(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "on_failure": "b", "on_success": "b"},
                 "b": {"action": "y", "evaluate": {"type": "exit_code"}, "on_success": "done"},
                 "done": {"terminal": true}}})",
             runner, ll::default_evaluator{}, &sink);
    std::vector<ll::json> evaluations;
    for (const auto& e : sink.events)
      if (e["event"] == "evaluate") evaluations.push_back(e);
    REQUIRE(evaluations.size() == 2);
    CHECK(evaluations[0].size() == 4);  // event, ts, type, verdict
    CHECK(evaluations[0]["type"] == "default");
    CHECK(evaluations[0]["verdict"] == "failure");
    CHECK(evaluations[1]["type"] == "exit_code");
    CHECK(evaluations[1]["exit_code"] == 0);
  }

  TEST_CASE("a next: state without evaluate reports no evaluate event when its action fails") {
    // Seed 002 never evaluates a next: state; a timeout, a signal death or an action that
    // could not run only picks on_error (the error itself is an `error` event).
    ll::action_result killed;
    killed.exit_code = -9;
    killed.signal = 9;
    ll::scripted_runner runner;
    runner.by_index({ll::scripted_response::timeout(), killed});
    ll::recording_event_sink sink;
    const auto r = run_loop(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "next": "b", "on_error": "b"},
                 "b": {"action": "y", "next": "c", "on_error": "c"},
                 "c": {"action": "echo ${env.LITTLE_LOOPS_TEST_UNSET_VARIABLE}", "next": "done",
                       "on_error": "done"},
                 "done": {"terminal": true}}})",
                            runner, ll::default_evaluator{}, &sink);
    CHECK(r.final_state == "done");
    const auto n = sink.names();
    CHECK(std::count(n.begin(), n.end(), "evaluate") == 0);
    CHECK(std::count(n.begin(), n.end(), "route") == 3);
  }

  TEST_CASE("$current re-enters the state, in routes and in next") {
    ll::scripted_runner runner;
    runner.on_action("poll", {exit_with(1), exit_with(1), exit_with(0)});
    auto r = run_loop(R"({
      "name": "t", "initial": "poll",
      "states": {"poll": {"action": "poll", "on_failure": "$current", "on_success": "done"},
                 "done": {"terminal": true}}})",
                      runner);
    CHECK(r.final_state == "done");
    CHECK(r.iterations == 3);

    ll::scripted_runner again;
    auto r2 = run_loop(R"({
      "name": "t", "initial": "spin", "max_iterations": 4,
      "states": {"spin": {"action": "tick", "next": "$current"}, "done": {"terminal": true}}})",
                       again);
    CHECK(r2.terminated_by == ll::termination::max_iterations);
    CHECK(again.call_count() == 4);
  }

  TEST_CASE("interpolated targets are resolved and checked at run time") {
    ll::scripted_runner runner;
    SUBCASE("context target") {
      auto r = run_loop(R"({
        "name": "t", "initial": "a", "context": {"where": "b"},
        "states": {"a": {"action": "x", "on_success": "${context.where}"},
                   "b": {"terminal": true}}})",
                        runner);
      CHECK(r.final_state == "b");
    }
    SUBCASE("result is visible in route targets") {
      auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "route": {"_": "to_${result.verdict}"}},
                   "to_success": {"terminal": true}, "to_failure": {"terminal": true}}})",
                        runner, verdict_script{{"failure"}});
      CHECK(r.final_state == "to_failure");
    }
    SUBCASE("prev in a route target is the state before this one (seed 002), result is this one") {
      ll::scripted_runner r2;
      auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "next": "b"},
                   "b": {"action": "y", "on_success": "${prev.state}_then_${result.verdict}"},
                   "a_then_success": {"terminal": true}, "b_then_success": {"terminal": true}}})",
                        r2);
      CHECK(r.final_state == "a_then_success");
      // Once routed, prev is b, as everywhere else.
      ll::scripted_runner r3;
      r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "next": "b"},
                   "b": {"action": "y", "route": {"_": "${prev.state}_after"}},
                   "a_after": {"action": "z ${prev.state}", "next": "done"},
                   "done": {"terminal": true}}})",
                   r3);
      CHECK(r.final_state == "done");
      REQUIRE(r3.calls().size() == 3);
      CHECK(r3.calls()[2].text == "z b");
    }
    SUBCASE("at the first state a prev target is the error verdict (no previous state)") {
      auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "on_success": "${prev.state}", "on_error": "none"},
                   "none": {"terminal": true}}})",
                        runner);
      CHECK(r.final_state == "none");
    }
    SUBCASE("an unknown resolved target ends the run with an error naming it") {
      ll::recording_event_sink sink;
      auto r = run_loop(R"({
        "name": "t", "initial": "a", "context": {"where": "nowhere"},
        "states": {"a": {"action": "x", "on_success": "${context.where}"},
                   "b": {"terminal": true}}})",
                        runner, ll::default_evaluator{}, &sink);
      CHECK(r.terminated_by == ll::termination::error);
      REQUIRE(r.error.has_value());
      CHECK(r.error->code == ll::errc::unknown_state);
      CHECK(r.error->message.find("nowhere") != std::string::npos);
      CHECK(r.final_state == "a");
      CHECK(sink.events.back()["terminated_by"] == "error");
    }
  }

  TEST_CASE("No valid transition: error naming state and verdict") {
    ll::scripted_runner runner;
    runner.otherwise(exit_with(1));
    auto r = run_loop(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "on_success": "done"}, "done": {"terminal": true}}})",
                      runner);
    CHECK(r.terminated_by == ll::termination::error);
    CHECK(r.final_state == "a");
    CHECK(r.iterations == 1);
    REQUIRE(r.error.has_value());
    CHECK(r.error->code == ll::errc::no_transition);
    CHECK(r.error->message == "No valid transition from state \"a\" for verdict \"failure\"");
    // "a" ran and has nowhere to go: no snapshot to resume from (it would run "a" again).
    CHECK_FALSE(r.snapshot.has_value());
  }

  TEST_CASE("an unrouted error verdict names its cause") {
    ll::scripted_runner runner;
    constexpr std::string_view only_success = R"({
      "name": "test", "initial": "check",
      "states": {"check": {"action": "test.sh", "on_success": "done"}, "done": {"terminal": true}}})";
    SUBCASE("runner error (the seed's 'Connection failed' in result.error)") {
      runner.otherwise(ll::error{ll::errc::action_failed, "Connection failed"});
      const auto r = run_loop(only_success, runner);
      CHECK(r.terminated_by == ll::termination::error);
      REQUIRE(r.error.has_value());
      CHECK(r.error->code == ll::errc::no_transition);
      CHECK(r.error->message ==
            "No valid transition from state \"check\" for verdict \"error\": Connection failed");
    }
    SUBCASE("action timeout") {
      runner.otherwise(ll::scripted_response::timeout());
      const auto r = run_loop(only_success, runner);
      REQUIRE(r.error.has_value());
      CHECK(r.error->message ==
            "No valid transition from state \"check\" for verdict \"error\": action timed out");
    }
    SUBCASE("evaluator error") {
      const auto r = run_loop(only_success, runner, verdict_script{{"!fail"}});
      REQUIRE(r.error.has_value());
      CHECK(r.error->message ==
            "No valid transition from state \"check\" for verdict \"error\": judge exploded");
    }
    SUBCASE("no known cause (exit code 2): the message ends at the verdict") {
      runner.otherwise(exit_with(2));
      const auto r = run_loop(only_success, runner);
      REQUIRE(r.error.has_value());
      CHECK(r.error->message == "No valid transition from state \"check\" for verdict \"error\"");
    }
    SUBCASE("other verdicts have no cause appended") {
      runner.otherwise(exit_with(1));
      const auto r = run_loop(only_success, runner);
      REQUIRE(r.error.has_value());
      CHECK(r.error->message == "No valid transition from state \"check\" for verdict \"failure\"");
    }
  }

  TEST_CASE("unknown on_maintain / on_max_iterations targets fail only when taken") {
    ll::scripted_runner runner;
    SUBCASE("on_maintain") {
      ll::fsm_loop loop;
      loop.name = "t";
      loop.initial = "a";
      loop.maintain = true;
      loop.states["a"].action = "x";
      loop.states["a"].on["success"] = "done";
      loop.states["done"].terminal = true;
      loop.states["done"].on_maintain = "ghost";
      auto ex = ll::make_executor(loop, runner);
      REQUIRE(ex.has_value());
      const auto& r = ex->run();
      CHECK(r.terminated_by == ll::termination::error);
      CHECK(r.final_state == "done");
      REQUIRE(r.error.has_value());
      CHECK(r.error->code == ll::errc::unknown_state);
      CHECK(r.error->path == "states.done.on_maintain");
      CHECK(r.error->message.find("\"ghost\"") != std::string::npos);
    }
    SUBCASE("on_max_iterations") {
      ll::fsm_loop loop;
      loop.name = "t";
      loop.initial = "a";
      loop.max_iterations = 2;
      loop.on_max_iterations = "ghost";
      loop.states["a"].action = "x";
      loop.states["a"].on["success"] = "a";
      auto ex = ll::make_executor(loop, runner);
      REQUIRE(ex.has_value());
      const auto& r = ex->run();
      CHECK(runner.call_count() == 2);
      CHECK(r.terminated_by == ll::termination::error);
      REQUIRE(r.error.has_value());
      CHECK(r.error->code == ll::errc::unknown_state);
      CHECK(r.error->message == "on_max_iterations names \"ghost\", which is not a state");
    }
  }

  TEST_CASE("maintain: an unrouted verdict falls back to on_maintain, else the initial state") {
    ll::scripted_runner runner;
    runner.on_action("watch", {exit_with(1), exit_with(0)});
    runner.on_action("reset", exit_with(1));
    auto r = run_loop(R"({
      "name": "t", "initial": "watch", "maintain": true, "max_iterations": 4,
      "states": {"watch": {"action": "watch", "on_success": "done", "on_maintain": "reset"},
                 "reset": {"action": "reset", "on_success": "done"},
                 "done": {"terminal": true}}})",
                      runner);
    REQUIRE(runner.calls().size() == 3);
    CHECK(runner.calls()[0].text == "watch");
    CHECK(runner.calls()[1].text == "reset");  // failure unrouted -> on_maintain
    CHECK(runner.calls()[2].text == "watch");  // failure unrouted -> initial
    CHECK(r.terminated_by == ll::termination::max_iterations);
  }

  TEST_CASE("maintain: a terminal restarts from the initial state; a restart counts as one iteration") {
    ll::scripted_runner runner;
    ll::recording_event_sink sink;
    auto r = run_loop(R"({
      "name": "t", "initial": "a", "maintain": true, "max_iterations": 5,
      "states": {"a": {"action": "x", "on_success": "done"}, "done": {"terminal": true}}})",
                      runner, ll::default_evaluator{}, &sink);
    // a(1) restart(2) a(3) restart(4) a(5) -> at done the cap is reached.
    CHECK(runner.call_count() == 3);
    CHECK(r.iterations == 5);
    CHECK(r.terminated_by == ll::termination::max_iterations);
    CHECK(r.final_state == "done");
    int restarts = 0;
    for (const auto& e : sink.events)
      if (e["event"] == "route" && e.value("reason", "") == "maintain") {
        ++restarts;
        CHECK(e["from"] == "done");
        CHECK(e["to"] == "a");
      }
    CHECK(restarts == 2);
  }

  TEST_CASE("one error policy: interpolation failures are the error verdict and route") {
    ll::scripted_runner runner;
    ll::recording_event_sink sink;
    SUBCASE("routed to on_error") {
      auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "echo ${env.LITTLE_LOOPS_TEST_UNSET_VARIABLE}", "on_success": "done",
                         "on_error": "recover"},
                   "done": {"terminal": true}, "recover": {"terminal": true}}})",
                        runner, ll::default_evaluator{}, &sink);
      CHECK(r.final_state == "recover");
      CHECK(runner.call_count() == 0);  // the action never ran
      const auto n = sink.names();
      CHECK(std::find(n.begin(), n.end(), "action_start") == n.end());
      auto err = std::find_if(sink.events.begin(), sink.events.end(),
                              [](const ll::json& e) { return e["event"] == "error"; });
      REQUIRE(err != sink.events.end());
      CHECK((*err)["kind"] == "interpolation");
      auto ev = std::find_if(sink.events.begin(), sink.events.end(),
                             [](const ll::json& e) { return e["event"] == "evaluate"; });
      REQUIRE(ev != sink.events.end());
      CHECK((*ev)["verdict"] == "error");
      CHECK((*ev)["error"].get<std::string>().find("LITTLE_LOOPS_TEST_UNSET_VARIABLE") != std::string::npos);
    }
    SUBCASE("unrouted: the run ends as error") {
      auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "echo ${env.LITTLE_LOOPS_TEST_UNSET_VARIABLE}", "on_success": "done"},
                   "done": {"terminal": true}}})",
                        runner);
      CHECK(r.terminated_by == ll::termination::error);
      REQUIRE(r.error.has_value());
      CHECK(r.error->message.find("\"error\"") != std::string::npos);
      CHECK(r.error->message.find("LITTLE_LOOPS_TEST_UNSET_VARIABLE") != std::string::npos);
    }
  }

  TEST_CASE("one error policy: a route target that cannot be interpolated is the error verdict") {
    ll::scripted_runner runner;
    ll::recording_event_sink sink;
    SUBCASE("routed to on_error, with prev saying why") {
      auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "capture": "c", "on_success": "${context.missing}",
                         "on_error": "recover"},
                   "recover": {"action": "after ${prev.verdict}: ${prev.details.error}",
                               "next": "done"},
                   "done": {"terminal": true}}})",
                        runner, ll::default_evaluator{}, &sink);
      CHECK(r.terminated_by == ll::termination::terminal);
      CHECK(r.final_state == "done");
      REQUIRE(runner.calls().size() == 2);
      CHECK(runner.calls()[1].text.rfind("after error: route target \"${context.missing}\"", 0) == 0);
      CHECK(r.captured.at("c").verdict == "error");
      auto err = std::find_if(sink.events.begin(), sink.events.end(),
                              [](const ll::json& e) { return e["event"] == "error"; });
      REQUIRE(err != sink.events.end());
      CHECK((*err)["kind"] == "interpolation");
      auto route = std::find_if(sink.events.begin(), sink.events.end(),
                                [](const ll::json& e) { return e["event"] == "route"; });
      REQUIRE(route != sink.events.end());
      CHECK((*route)["to"] == "recover");
    }
    SUBCASE("a next: target goes to on_error too") {
      auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "next": "${context.missing}", "on_error": "recover"},
                   "recover": {"terminal": true}}})",
                        runner);
      CHECK(r.final_state == "recover");
      CHECK(r.terminated_by == ll::termination::terminal);
    }
    SUBCASE("unrouted: the run ends as an error naming the target") {
      auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "on_success": "${context.missing}"},
                   "done": {"terminal": true}}})",
                        runner);
      CHECK(r.terminated_by == ll::termination::error);
      CHECK(r.final_state == "a");
      REQUIRE(r.error.has_value());
      CHECK(r.error->message.find("\"error\"") != std::string::npos);
      CHECK(r.error->message.find("${context.missing}") != std::string::npos);
    }
    SUBCASE("an error verdict whose own target fails ends the run") {
      auto r = run_loop(R"({
        "name": "t", "initial": "a",
        "states": {"a": {"action": "x", "on_failure": "${context.missing}",
                         "on_error": "${context.gone}"},
                   "done": {"terminal": true}}})",
                        runner, verdict_script{{"failure"}});
      CHECK(r.terminated_by == ll::termination::error);
      REQUIRE(r.error.has_value());
      CHECK(r.error->message.find("${context.gone}") != std::string::npos);
    }
  }

  TEST_CASE("evaluator errors are the error verdict") {
    ll::scripted_runner runner;
    ll::recording_event_sink sink;
    auto r = run_loop(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "route": {"success": "done", "_error": "recover"}},
                 "done": {"terminal": true}, "recover": {"terminal": true}}})",
                      runner, verdict_script{{"!fail"}}, &sink);
    CHECK(r.final_state == "recover");
    auto ev = std::find_if(sink.events.begin(), sink.events.end(),
                           [](const ll::json& e) { return e["event"] == "evaluate"; });
    REQUIRE(ev != sink.events.end());
    CHECK((*ev)["error"] == "judge exploded");
  }

  TEST_CASE("the evaluator gets the config only when the state has evaluate:") {
    ll::scripted_runner runner;
    verdict_script script{{"success"}};
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "on_success": "b"},
                 "b": {"action": "y", "evaluate": {"type": "exit_code"}, "on_success": "done"},
                 "done": {"terminal": true}}})"),
                                runner, script);
    REQUIRE(ex.has_value());
    ex->run();
    CHECK(script.had_config == std::vector<bool>{false, true});
  }
}
