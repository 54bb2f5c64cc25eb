// little_loops — tests for resilience at run time: retry/catch, caps, circuit, backoff (§6.6)
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

using namespace executor_test;
using namespace std::chrono_literals;

namespace {

// A current-dialect loop: `call` runs `work` with `extra` members (JSON, leading comma).
std::string call_loop(const std::string& extra, const std::string& top = "") {
  return R"({"name": "r", "initial": "call", "dialect": "current", )" + top + R"( "states": {
    "call": {"action": "work", "on_yes": "done", "on_no": "failed", "on_error": "failed")" +
         extra + R"(},
    "later": {"action": "wait", "next": "done"},
    "done": {"terminal": true}, "failed": {"terminal": true}}})";
}

struct harness {
  ll::manual_clock clock;
  ll::scripted_runner runner;
  ll::recording_event_sink sink;
  ll::executor_options opts;

  harness() {
    opts.clock = &clock;
    opts.random_source = [] { return 0.5; };
  }

  std::vector<ll::json> events(std::string_view name) const {
    std::vector<ll::json> out;
    for (const auto& e : sink.events)
      if (e.value("event", "") == name) out.push_back(e);
    return out;
  }
};

}  // namespace

TEST_SUITE("resilience") {
  TEST_CASE("a written retry entry re-runs the state, waiting through the clock") {
    harness h;
    h.runner.on_action("work", {exit_with(3, "boom"), exit_with(3, "boom"), exit_with(0)});
    auto ex = ll::make_executor(
        compiled(call_loop(R"(, "retry": [{"on": [3], "interval": 2, "backoff_rate": 3, "jitter": 1}])")),
        h.runner, ll::default_evaluator{}, h.sink, h.opts);
    const auto& r = ex->run();
    CHECK(r.final_state == "done");
    // 2 s + 0.5 × 1 s jitter, then 6 s + 0.5 s
    REQUIRE(h.clock.sleeps.size() == 2);
    CHECK(h.clock.sleeps[0] == 2500ms);
    CHECK(h.clock.sleeps[1] == 6500ms);
    const auto retries = h.events("resilience");
    REQUIRE(retries.size() == 2);
    CHECK(retries[1]["kind"] == "retry");
    CHECK(retries[1]["error_class"] == "exit_code");
    CHECK(retries[1]["attempt"] == 2);
    CHECK(retries[1]["delay_ms"] == 6500);
    CHECK(retries[1]["waited_ms"] == 9000);
  }

  TEST_CASE("a result that did not fail ends the state's retry streak") {
    harness h;
    h.runner.on_action("work", {exit_with(3), exit_with(0), exit_with(3), exit_with(3)});
    h.runner.on_action("bump", exit_with(0));
    auto ex = ll::make_executor(compiled(R"({"name": "r", "initial": "call", "dialect": "current",
      "states": {
        "call": {"action": "work", "on_yes": "bump", "on_no": "failed", "on_error": "failed",
                 "retry": [{"on": [3], "interval": 1, "max_attempts": 1}]},
        "bump": {"action": "bump", "next": "call"},
        "failed": {"terminal": true}}})"),
                                h.runner, ll::default_evaluator{}, h.sink, h.opts);
    const auto& r = ex->run();
    CHECK(r.final_state == "failed");
    CHECK(h.runner.calls().size() == 5);  // work ×2, bump, work ×2
    const auto acted = h.events("resilience");
    REQUIRE(acted.size() == 3);
    CHECK(acted[0]["kind"] == "retry");
    CHECK(acted[1]["kind"] == "retry");  // a fresh streak after the success
    CHECK(acted[1]["attempt"] == 1);
    CHECK(acted[2]["kind"] == "exhausted");
  }

  TEST_CASE("spent retries go to the catch entry of the error class") {
    harness h;
    h.runner.on_action("work", ll::scripted_response::exit(1, "", "HTTP 429 Too Many Requests"));
    auto ex = ll::make_executor(
        compiled(call_loop(R"(, "retry": [{"on": "rate_limit", "delays": [5], "max_attempts": 2}],
                               "catch": {"rate_limit": "later"})")),
        h.runner, ll::default_evaluator{}, h.sink, h.opts);
    const auto& r = ex->run();
    CHECK(r.final_state == "done");
    CHECK(h.runner.calls().size() == 4);  // work ×3, wait
    const auto acted = h.events("resilience");
    REQUIRE(acted.size() == 3);
    CHECK(acted[2]["kind"] == "catch");
    CHECK(acted[2]["target"] == "later");
    CHECK(acted[2]["attempt"] == 2);
  }

  TEST_CASE("the reference's rate-limit keys walk both tiers, then on_rate_limit_exhausted") {
    harness h;
    h.runner.on_action("work", exit_with(1, "rate limit reached"));
    auto ex = ll::make_executor(
        compiled(call_loop(R"(, "max_rate_limit_retries": 2, "on_rate_limit_exhausted": "later",
                               "rate_limit_backoff_base_seconds": 10, "rate_limit_max_wait_seconds": 200,
                               "rate_limit_long_wait_ladder": [60, 100])")),
        h.runner, ll::default_evaluator{}, h.sink, h.opts);
    CHECK(ex->run().final_state == "done");
    // short tier: 10 + 5, 20 + 5; long tier: 60, 100 (235 s ≥ 200: exhausted after waiting)
    REQUIRE(h.clock.sleeps.size() == 4);
    CHECK(h.clock.sleeps[0] == 15s);
    CHECK(h.clock.sleeps[1] == 25s);
    CHECK(h.clock.sleeps[2] == 60s);
    CHECK(h.clock.sleeps[3] == 100s);
    CHECK(h.events("resilience").back()["kind"] == "catch");
  }

  TEST_CASE("the current dialect's built-in entries retry API errors, then route as usual") {
    harness h;
    h.runner.on_action("work", ll::scripted_response::exit(1, "", "500 Internal Server Error"));
    auto ex = ll::make_executor(compiled(call_loop("")), h.runner, ll::default_evaluator{},
                                h.sink, h.opts);
    CHECK(ex->run().final_state == "failed");
    CHECK(h.clock.sleeps == std::vector<std::chrono::nanoseconds>{30s, 30s});
    CHECK(h.events("resilience").back()["kind"] == "exhausted");
  }

  TEST_CASE("a host error classifier decides the class") {
    harness h;
    h.opts.error_classifier = [](const ll::action_result& a) {
      return a.exit_code == 7 ? std::string("auth") : std::string();
    };
    h.runner.on_action("work", exit_with(7));
    auto ex = ll::make_executor(compiled(call_loop(R"(, "catch": {"auth": "later"})")), h.runner,
                                ll::default_evaluator{}, h.sink, h.opts);
    CHECK(ex->run().final_state == "done");
    CHECK(h.clock.sleeps.empty());
  }

  TEST_CASE("max_edge_revisits ends the run with the edge in the message") {
    harness h;
    h.runner.otherwise(exit_with(1));
    auto ex = ll::make_executor(compiled(R"({"name": "c", "initial": "a", "dialect": "current",
        "max_edge_revisits": 2, "max_steps": 100, "states": {
        "a": {"action": "x", "next": "b"}, "b": {"action": "y", "next": "a"},
        "done": {"terminal": true}}})"),
                                h.runner, ll::default_evaluator{}, h.sink, h.opts);
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::error);
    REQUIRE(r.error.has_value());
    CHECK(r.error->code == ll::errc::cap_reached);
    CHECK(r.error->message == "Cycle detected: edge a->b traversed 3 times (limit: 2)");
    CHECK(h.events("resilience").back()["kind"] == "cycle_detected");
    CHECK(r.iterations == 5);
  }

  TEST_CASE("the current dialect caps every edge at 100 revisits; the seed has no cap") {
    // (a throttle above the cap: the default one would stop the self-loop at 13 actions)
    const char* loop = R"({"name": "c", "initial": "a", "max_iterations": 500, %s "states": {
        "a": {"action": "x", "on_success": "a", "on_failure": "done", "throttle": {"hard_max": 1000}},
        "done": {"terminal": true}}})";
    ll::scripted_runner current_runner;
    current_runner.otherwise(exit_with(0));
    char text[400];
    std::snprintf(text, sizeof text, loop, R"("dialect": "current",)");
    auto current = ll::make_executor(compiled(text), current_runner);
    CHECK(current->run().error->message == "Cycle detected: edge a->a traversed 101 times (limit: 100)");
    std::snprintf(text, sizeof text, loop, "");
    ll::scripted_runner seed_runner;
    seed_runner.otherwise(exit_with(0));
    auto seed = ll::make_executor(compiled(text), seed_runner);
    CHECK(seed->run().terminated_by == ll::termination::max_iterations);
  }

  TEST_CASE("the circuit aborts, or routes, on a repeated (state, exit code, verdict)") {
    const std::string body = R"( "states": {
        "a": {"action": "x", "on_yes": "a", "on_no": "a", "on_error": "a"},
        "recover": {"action": "r", "next": "done"}, "done": {"terminal": true}}})";
    harness h;
    h.runner.otherwise(exit_with(1));
    auto ex = ll::make_executor(compiled(R"({"name": "c", "initial": "a", "dialect": "current",
        "circuit": {"repeated_failure": {"window": 3}},)" + body),
                                h.runner, ll::default_evaluator{}, h.sink, h.opts);
    const auto& r = ex->run();
    CHECK(r.iterations == 3);
    REQUIRE(r.error.has_value());
    CHECK(r.error->code == ll::errc::cap_reached);
    CHECK(r.error->message == "Stall detected: state a ended with exit code 1 and verdict no 3 times in a row");
    CHECK(h.events("resilience").back()["kind"] == "stall_detected");

    ll::scripted_runner runner;
    runner.otherwise(exit_with(1));
    auto routed = ll::make_executor(compiled(R"({"name": "c", "initial": "a", "dialect": "current",
        "circuit": {"repeated_failure": {"window": 2, "on_repeated_failure": "recover"}},)" + body),
                                    runner);
    CHECK(routed->run().final_state == "done");
    CHECK(routed->result().iterations == 3);
  }

  TEST_CASE("a state's own backoff replaces the loop's after it") {
    harness h;
    h.runner.otherwise(exit_with(0));
    auto ex = ll::make_executor(compiled(R"({"name": "b", "initial": "a", "backoff": 1, "states": {
        "a": {"action": "x", "next": "b", "backoff": 7}, "b": {"action": "y", "next": "done"},
        "done": {"terminal": true}}})"),
                                h.runner, ll::default_evaluator{}, h.sink, h.opts);
    ex->run();
    CHECK(h.clock.sleeps == std::vector<std::chrono::nanoseconds>{7s, 1s});
  }

  TEST_CASE("retry counters and edge counts survive a snapshot") {
    harness h;
    h.runner.on_action("work", {exit_with(3), exit_with(3), exit_with(3)});
    const std::string text = call_loop(R"(, "retry": [{"on": [3], "interval": 1, "max_attempts": 2}],
                                           "catch": {"exit_code": "later"})");
    auto first = ll::make_executor(compiled(text), h.runner, ll::default_evaluator{},
                                   h.sink, h.opts);
    REQUIRE(first->step());  // attempt 1 failed: a retry is due
    const ll::snapshot saved = first->snapshot();
    INFO(saved.counters.dump());
    CHECK(saved.counters["resilience"]["retries"]["call"]["total"] == 1);
    CHECK(saved.counters["resilience"]["edges"]["call->call"] == 1);
    CHECK(saved.counters["resilience"]["pending_wait"] == 1);  // taken before the next attempt

    ll::scripted_runner later_runner;
    later_runner.on_action("work", {exit_with(3), exit_with(3)});
    later_runner.otherwise(exit_with(0));
    ll::manual_clock clock;
    ll::executor_options opts = h.opts;
    opts.clock = &clock;
    auto resumed = ll::make_executor(compiled(text), later_runner, ll::default_evaluator{},
                                     ll::null_event_sink{}, opts);
    REQUIRE(resumed->resume(saved));
    CHECK(resumed->run().final_state == "done");
    // the pending wait, one more retry (the second of two), then the catch: not two more
    CHECK(clock.sleeps == std::vector<std::chrono::nanoseconds>{1s, 2s});
    CHECK(later_runner.calls().size() == 3);  // work ×2, wait
  }

  TEST_CASE("diff_stall reads git diff through the runner as a probe and remembers it") {
    harness h;
    h.runner.on_action("work", exit_with(0));
    h.runner.on_action("git diff --stat -- 'src' 'a b'",
                       {exit_with(0, "1 file"), exit_with(0, "2 files"), exit_with(0, "2 files"),
                        exit_with(0, "2 files")});
    auto ex = ll::make_executor(compiled(R"({"name": "d", "initial": "call", "dialect": "current",
        "states": {
        "call": {"action": "work", "evaluate": {"type": "diff_stall", "scope": ["src", "a b"],
                 "max_stall": 2}, "on_yes": "call", "on_no": "done", "on_error": "failed"},
        "done": {"terminal": true}, "failed": {"terminal": true}}})"),
                                h.runner, ll::default_evaluator{}, h.sink, h.opts);
    REQUIRE(ex->step());  // first round: remembered, yes
    REQUIRE(ex->step());  // changed: yes
    REQUIRE(ex->step());  // same once: yes (stall_count 1)
    // the memory is in the snapshot, not in a file
    const ll::snapshot saved = ex->snapshot();
    INFO(saved.counters.dump());
    CHECK(saved.counters["resilience"]["stall"]["diff:a b|src"]["count"] == 1);
    ex->run();
    CHECK(ex->result().final_state == "done");  // same twice: no
    std::size_t probes = 0;
    for (const auto& c : h.runner.calls()) probes += c.text.rfind("git diff", 0) == 0 ? 1 : 0;
    CHECK(probes == 4);
    const auto evaluations = h.events("evaluate");
    REQUIRE(evaluations.size() == 4);
    CHECK(evaluations.back()["verdict"] == "no");
    CHECK(evaluations.back()["stall_count"] == 2);
  }

  TEST_CASE("a failing git diff is the error verdict") {
    ll::scripted_runner runner;
    runner.on_action("git diff --stat", ll::scripted_response::exit(128, "", "not a git repository"));
    runner.otherwise(exit_with(0));
    auto ex = ll::make_executor(compiled(R"({"name": "d", "initial": "call", "dialect": "current",
        "states": {"call": {"action": "work", "evaluate": {"type": "diff_stall"},
                   "on_yes": "done", "on_no": "done", "on_error": "failed"},
        "done": {"terminal": true}, "failed": {"terminal": true}}})"), runner);
    CHECK(ex->run().final_state == "failed");
  }

  TEST_CASE("score_stall and open_question_stall read a history file through a probe") {
    struct round {
      const char* type;
      const char* history;
      const char* verdict;
    };
    const round rounds[] = {
        {"score_stall", "7\n", "yes"},                      // not enough history
        {"score_stall", "5\n6\n6.2\n", "no"},             // 6.2 is within epsilon 0.5 of 6: 1 stall
        {"score_stall", "5\n6\n7\n", "yes"},
        {"open_question_stall", "4\n3\n3\n", "no"},
        {"open_question_stall", "4\nx\n2\n", "yes"},      // unreadable lines are skipped
    };
    for (const auto& r : rounds) {
      CAPTURE(r.type);
      CAPTURE(r.history);
      ll::scripted_runner runner;
      runner.on_action("cat -- '/run/h' 2>/dev/null || true", exit_with(0, r.history));
      runner.otherwise(exit_with(0));
      ll::recording_event_sink sink;
      auto ex = ll::make_executor(compiled(std::string(R"({"name": "s", "initial": "call",
          "dialect": "current", "context": {"run_dir": "/run"}, "states": {
          "call": {"action": "work", "evaluate": {"type": ")") + r.type + R"(",
                   "history_file": "${context.run_dir}/h"}, "on_yes": "done", "on_no": "done"},
          "done": {"terminal": true}}})"),
                                  runner, ll::default_evaluator{}, sink);
      ex->run();
      std::string verdict;
      for (const auto& e : sink.events)
        if (e["event"] == "evaluate") verdict = e["verdict"];
      CHECK(verdict == r.verdict);
      CHECK(runner.calls().size() == 2);
    }
  }

  TEST_CASE("action_stall compares the tracked values between rounds") {
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    auto ex = ll::make_executor(compiled(R"({"name": "a", "initial": "call", "dialect": "current",
        "context": {"plan": "same"}, "states": {
        "call": {"action": "work", "evaluate": {"type": "action_stall", "track": ["plan"],
                 "max_repeat": 2}, "on_yes": "call", "on_no": "done"},
        "done": {"terminal": true}}})"), runner);
    ex->run();
    CHECK(ex->result().final_state == "done");
    CHECK(ex->result().iterations == 3);  // first, same (1), same (2): no
    CHECK(runner.calls().size() == 3);    // no probe
  }

  TEST_CASE("exit 143 after the agent's result event is an infra teardown: re-run twice, 5 s apart") {
    harness h;
    const std::string stream = R"({"type":"assistant"})" "\n" R"({"type":"result","result":"done"})" "\n";
    h.runner.on_action("work", {exit_with(143, stream), exit_with(143, stream), exit_with(143, stream)});
    auto ex = ll::make_executor(compiled(call_loop("")), h.runner, ll::default_evaluator{}, h.sink, h.opts);
    CHECK(ex->run().final_state == "failed");  // spent: the ordinary routes
    CHECK(h.runner.calls().size() == 3);
    REQUIRE(h.clock.sleeps.size() == 2);
    CHECK(h.clock.sleeps[0] == 5000ms);
    const auto acted = h.events("resilience");
    REQUIRE(acted.size() == 3);
    CHECK(acted[0]["error_class"] == "infra");
    CHECK(acted[2]["kind"] == "exhausted");
    // without a result event, exit 143 is an ordinary failure
    ll::action_result plain;
    plain.exit_code = 143;
    CHECK(ll::default_error_class(plain) == "exit_code");
    plain.output = stream;
    CHECK(ll::default_error_class(plain) == "infra");
  }

  TEST_CASE("three rate-limit exhaustions in a row are a rate_limit_storm") {
    harness h;
    h.runner.on_action("work", ll::scripted_response::exit(1, "", "HTTP 429 Too Many Requests"));
    auto ex = ll::make_executor(
        compiled(R"({"name": "s", "initial": "call", "dialect": "current", "states": {
          "call": {"action": "work", "retry": [{"on": "rate_limit", "delays": [1], "max_attempts": 1}],
                   "catch": {"rate_limit": "call2"}, "on_yes": "done", "on_no": "done"},
          "call2": {"action": "work", "retry": [{"on": "rate_limit", "delays": [1], "max_attempts": 1}],
                    "catch": {"rate_limit": "call3"}, "on_yes": "done", "on_no": "done"},
          "call3": {"action": "work", "retry": [{"on": "rate_limit", "delays": [1], "max_attempts": 1}],
                    "catch": {"rate_limit": "done"}, "on_yes": "done", "on_no": "done"},
          "done": {"terminal": true}}})"),
        h.runner, ll::default_evaluator{}, h.sink, h.opts);
    REQUIRE(ex->step());
    REQUIRE(ex->step());  // call: retried once, then caught
    CHECK(ex->snapshot().counters["resilience"]["rate_limit_exhaustions"] == 1);
    ex->run();
    CHECK(ex->result().final_state == "done");
    std::vector<std::string> kinds;
    for (const auto& e : h.events("resilience")) kinds.push_back(e["kind"].get<std::string>());
    CHECK(kinds == std::vector<std::string>{"retry", "catch", "retry", "catch", "retry", "catch", "rate_limit_storm"});
    CHECK(h.events("resilience").back()["attempt"] == 3);
  }

  TEST_CASE("circuit progress_paths: a changed fingerprint restarts the window; excluded paths count not") {
    const std::string text = R"({"name": "c", "initial": "call", "dialect": "current",
        "circuit": {"repeated_failure": {"window": 2, "progress_paths": ["out.txt", "${context.log}"],
                                         "exclude_paths": ["${context.log}"]}},
        "context": {"log": "ledger.log"},
        "states": {"call": {"action": "work", "on_yes": "done", "on_no": "call", "on_error": "call"},
                   "done": {"terminal": true}}})";
    ll::repeated_failure_config rf;
    rf.progress_paths = {"out.txt", "ledger.log"};
    rf.exclude_paths = {"ledger.log"};
    const std::string probe = *ll::detail::progress_probe(rf, ll::interpolation_context{});
    CHECK(probe.find("out.txt") != std::string::npos);
    CHECK(probe.find("ledger.log") == std::string::npos);
    harness h;
    h.runner.on_action("work", exit_with(1));
    h.runner.on_action(probe, {exit_with(0, "1 10\n"), exit_with(0, "2 11\n"), exit_with(0, "3 12\n"),
                               exit_with(0, "3 12\n")});
    auto ex = ll::make_executor(compiled(text), h.runner, ll::default_evaluator{}, h.sink, h.opts);
    REQUIRE(ex->step());
    REQUIRE(ex->step());  // progress: the same triple twice does not trip
    REQUIRE(ex->step());
    CHECK(ex->snapshot().counters["resilience"]["progress"]["call"] == "3 12\n");
    ex->run();  // no progress: tripped
    CHECK(ex->result().terminated_by == ll::termination::error);
    CHECK(ex->result().iterations == 4);
    const auto acted = h.events("resilience");
    REQUIRE(!acted.empty());
    CHECK(acted.back()["kind"] == "stall_detected");
  }

  TEST_CASE("without a random source, jitter draws from the executor's engine; a copy goes on alike") {
    ll::detail::jitter_engine engine;
    const double first = engine.uniform();
    CHECK(first >= 0.0);
    CHECK(first < 1.0);
    const ll::detail::jitter_engine copy = engine;
    ll::detail::jitter_engine moved = copy;
    for (int i = 0; i < 4; ++i) {
      const double a = engine.uniform();
      CHECK(a >= 0.0);
      CHECK(a < 1.0);
      CHECK(moved.uniform() == a);
    }
    ll::detail::jitter_engine assigned;
    assigned = moved;
    ll::detail::jitter_engine taken = std::move(moved);
    CHECK(taken.uniform() == assigned.uniform());
    CHECK(ll::detail::jitter_engine(ll::detail::jitter_engine{}).uniform() < 1.0);

    harness h;
    h.opts.random_source = nullptr;
    h.runner.on_action("work", {exit_with(3, "boom"), exit_with(0)});
    auto ex = ll::make_executor(
        compiled(call_loop(R"(, "retry": [{"on": [3], "interval": 2, "jitter": 1}])")), h.runner,
        ll::default_evaluator{}, h.sink, h.opts);
    CHECK(ex->run().final_state == "done");
    REQUIRE(h.clock.sleeps.size() == 1);
    CHECK(h.clock.sleeps[0] >= 2000ms);
    CHECK(h.clock.sleeps[0] < 3000ms);
  }
}
