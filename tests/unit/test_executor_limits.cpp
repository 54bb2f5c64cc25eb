// little_loops — executor limits: iterations cap, on_max_iterations, timeout, backoff, cancellation
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

#include <chrono>
#include <stop_token>
#include <string>
#include <vector>

using namespace executor_test;
using namespace std::chrono_literals;

TEST_SUITE("executor.limits") {
  TEST_CASE("a terminal reached on the last allowed step ends as terminal") {
    ll::scripted_runner runner;
    runner.by_index({exit_with(1), exit_with(0), exit_with(0)});
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "check", "max_iterations": 3,
      "states": {"check": {"action": "pytest", "on_success": "done", "on_failure": "fix"},
                 "fix": {"action": "fix", "next": "check"},
                 "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.iterations == 3);
    CHECK(r.terminated_by == ll::termination::terminal);
    CHECK(r.final_state == "done");
  }

  TEST_CASE("on_max_iterations runs once when the cap is hit") {
    ll::scripted_runner runner;
    runner.otherwise(exit_with(1));
    runner.on_action("summarise", exit_with(0));
    ll::recording_event_sink sink;
    constexpr std::string_view text = R"({
      "name": "t", "initial": "work", "max_iterations": 3, "on_max_iterations": "summary",
      "states": {"work": {"action": "work", "on_failure": "work", "on_success": "done"},
                 "summary": {"action": "summarise", "next": "BACK"},
                 "done": {"terminal": true}}})";
    SUBCASE("summary then terminal: max_iterations") {
      std::string t(text);
      t.replace(t.find("BACK"), 4, "done");
      auto ex = ll::make_executor(compiled(t), runner, ll::default_evaluator{}, sink);
      REQUIRE(ex.has_value());
      const auto& r = ex->run();
      CHECK(runner.call_count() == 4);
      CHECK(runner.calls().back().text == "summarise");
      CHECK(r.terminated_by == ll::termination::max_iterations);
      CHECK(r.final_state == "done");
      CHECK(r.iterations == 4);
      auto it = std::find_if(sink.events.begin(), sink.events.end(), [](const ll::json& e) {
        return e["event"] == "max_iterations_summary";
      });
      REQUIRE(it != sink.events.end());
      CHECK((*it)["summary_state"] == "summary");
      CHECK((*it)["iterations"] == 3);
    }
    SUBCASE("summary routes back into the loop: it still runs only once") {
      std::string t(text);
      t.replace(t.find("BACK"), 4, "work");
      auto ex = ll::make_executor(compiled(t), runner);
      REQUIRE(ex.has_value());
      const auto& r = ex->run();
      CHECK(runner.call_count() == 4);
      CHECK(r.terminated_by == ll::termination::max_iterations);
      CHECK(r.final_state == "work");
    }
  }

  TEST_CASE("loop timeout is checked between steps (injectable clock)") {
    ll::manual_clock clock;
    ll::scripted_runner runner;
    runner.otherwise(exit_with(1));
    runner.on_call([&](const ll::action_request& req) {
      CHECK(req.deadline.has_value());
      clock.advance(600ms);
    });
    ll::executor_options opts;
    opts.clock = &clock;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "a", "timeout": 1,
      "states": {"a": {"action": "x", "on_failure": "a", "on_success": "done"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, ll::null_event_sink{}, opts);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::timeout);
    CHECK(runner.call_count() == 2);  // 1200 ms > 1000 ms after the second action
    CHECK(r.duration_ms == 1200);
    REQUIRE(r.snapshot.has_value());
    CHECK(r.snapshot->current_state == "a");
    CHECK(r.snapshot->elapsed_ms == 1200);
  }

  TEST_CASE("a loop timeout hit inside an action ends the run as timeout") {
    ll::manual_clock clock;
    ll::scripted_runner runner;
    runner.on_action("slow", ll::scripted_response::timeout("partial"));
    std::optional<std::chrono::steady_clock::time_point> seen_deadline;
    runner.on_call([&](const ll::action_request& req) {
      if (req.text == "slow") {
        seen_deadline = req.deadline;
        REQUIRE(req.deadline.has_value());
        clock.advance(*req.deadline - clock.now() + 1ms);  // the runner stops at the deadline
      } else {
        clock.advance(2s);
      }
    });
    ll::executor_options opts;
    opts.clock = &clock;
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "fast", "timeout": 10,
      "states": {"fast": {"action": "quick", "next": "slow"},
                 "slow": {"action": "slow", "capture": "s", "on_success": "done", "on_error": "done"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, sink, opts);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    REQUIRE(seen_deadline.has_value());
    CHECK(r.terminated_by == ll::termination::timeout);
    CHECK(r.final_state == "slow");
    CHECK(r.iterations == 2);
    CHECK(r.captured.count("s") == 0);  // the action did not complete
    REQUIRE(r.snapshot.has_value());
    CHECK(r.snapshot->current_state == "slow");  // re-run on resume: it never completed
    CHECK(sink.events.back()["terminated_by"] == "timeout");
    CHECK(sink.events[sink.events.size() - 2]["event"] == "action_complete");
    CHECK(sink.events[sink.events.size() - 2]["timed_out"] == true);
  }

  TEST_CASE("an unrouted verdict after the loop timeout passed is the error, not timeout") {
    ll::manual_clock clock;
    ll::scripted_runner runner;
    runner.otherwise(exit_with(1));
    runner.on_call([&](const ll::action_request&) { clock.advance(5s); });  // exits normally
    ll::executor_options opts;
    opts.clock = &clock;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "check", "timeout": 1,
      "states": {"check": {"action": "x", "on_success": "done"}, "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, ll::null_event_sink{}, opts);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::error);
    REQUIRE(r.error.has_value());
    CHECK(r.error->code == ll::errc::no_transition);
    CHECK(r.error->message == "No valid transition from state \"check\" for verdict \"failure\"");
  }

  TEST_CASE("the loop timeout bounds the LLM judge: it gets the time left, or is not asked") {
    struct timed_judge {
      std::vector<std::chrono::milliseconds>* timeouts;
      ll::expected<std::string, ll::judge_error> ask(const ll::judge_request& r) const {
        timeouts->push_back(r.timeout);
        return std::string(R"({"verdict":"failure"})");
      }
    };
    std::vector<std::chrono::milliseconds> asked;
    ll::manual_clock clock;
    ll::scripted_runner runner;
    runner.on_call([&](const ll::action_request&) { clock.advance(4s); });
    ll::executor_options opts;
    opts.clock = &clock;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "ask", "timeout": 10, "llm": {"timeout": 300},
      "states": {"ask": {"action": "/review", "on_success": "done", "on_failure": "ask",
                         "on_error": "ask"},
                 "done": {"terminal": true}}})"),
                                runner, ll::basic_evaluator<timed_judge>{timed_judge{&asked}},
                                ll::null_event_sink{}, opts);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    // 10 s in all: 4 s gone at the first judgement, 8 s at the second; at the third (12 s)
    // none is left: the verdict is the judge's timeout `error` (routed like any verdict), and
    // the run ends as timeout before a fourth step.
    REQUIRE(asked.size() == 2);
    CHECK(asked[0] == 6000ms);
    CHECK(asked[1] == 2000ms);
    CHECK(r.terminated_by == ll::termination::timeout);
  }

  TEST_CASE("a terminal reached after the loop timeout passed ends as timeout (seed 002's order)") {
    // Seed 002 checks the timeout before the terminal; design §3.5 reverses only the
    // iteration cap (a terminal on the last allowed step ends as `terminal`).
    ll::manual_clock clock;
    ll::scripted_runner runner;
    runner.on_call([&](const ll::action_request&) { clock.advance(5s); });
    ll::executor_options opts;
    opts.clock = &clock;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "check", "timeout": 1,
      "states": {"check": {"action": "x", "on_success": "done", "on_failure": "done"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, ll::null_event_sink{}, opts);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::timeout);
    CHECK(r.final_state == "done");
    CHECK(r.iterations == 1);
    CHECK(r.duration_ms == 5000);
    CHECK_FALSE(r.error.has_value());

    // The same with maintain: the timeout ends it before a restart.
    ll::manual_clock clock2;
    ll::scripted_runner runner2;
    runner2.on_call([&](const ll::action_request&) { clock2.advance(5s); });
    opts.clock = &clock2;
    auto ex2 = ll::make_executor(compiled(R"({
      "name": "t", "initial": "check", "timeout": 1, "maintain": true,
      "states": {"check": {"action": "x", "on_success": "done", "on_failure": "done"},
                 "done": {"terminal": true}}})"),
                                 runner2, ll::default_evaluator{}, ll::null_event_sink{}, opts);
    REQUIRE(ex2.has_value());
    const auto& r2 = ex2->run();
    CHECK(r2.terminated_by == ll::termination::timeout);
    CHECK(r2.final_state == "done");
    CHECK(r2.iterations == 1);

    // Within the timeout the terminal ends the run as usual.
    ll::manual_clock clock3;
    ll::scripted_runner runner3;
    opts.clock = &clock3;
    auto ex3 = ll::make_executor(compiled(R"({
      "name": "t", "initial": "check", "timeout": 1,
      "states": {"check": {"action": "x", "on_success": "done", "on_failure": "done"},
                 "done": {"terminal": true}}})"),
                                 runner3, ll::default_evaluator{}, ll::null_event_sink{}, opts);
    REQUIRE(ex3.has_value());
    CHECK(ex3->run().terminated_by == ll::termination::terminal);
  }

  TEST_CASE("an action timeout without the loop deadline is just the error verdict") {
    ll::scripted_runner runner;
    runner.on_action("slow", ll::scripted_response::timeout());
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "slow",
      "states": {"slow": {"action": "slow", "timeout": 2, "on_success": "done", "on_error": "failed"},
                 "done": {"terminal": true}, "failed": {"terminal": true, "failure": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.final_state == "failed");
    CHECK(r.failure);
    REQUIRE(runner.calls().size() == 1);
    REQUIRE(runner.calls()[0].timeout.has_value());
    CHECK(*runner.calls()[0].timeout == 2000ms);
    CHECK_FALSE(runner.calls()[0].had_deadline);
  }

  TEST_CASE("backoff sleeps between steps through the injectable clock") {
    ll::manual_clock clock;
    ll::scripted_runner runner;
    runner.by_index({exit_with(1), exit_with(0), exit_with(0)});
    ll::executor_options opts;
    opts.clock = &clock;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "check", "backoff": 2.5,
      "states": {"check": {"action": "pytest", "on_success": "done", "on_failure": "fix"},
                 "fix": {"action": "fix", "next": "check"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, ll::null_event_sink{}, opts);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::terminal);
    REQUIRE(clock.sleeps.size() == 3);
    for (auto d : clock.sleeps) CHECK(d == 2500ms);
    CHECK(r.duration_ms == 7500);
  }

  TEST_CASE("cancellation mid-run: honoured at the next state boundary") {
    std::stop_source source;
    ll::scripted_runner runner;
    runner.by_index({exit_with(1), exit_with(0), exit_with(0)});
    runner.on_call([&](const ll::action_request& req) {
      if (req.text == "fix") source.request_stop();
    });
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "check",
      "states": {"check": {"action": "pytest", "on_success": "done", "on_failure": "fix"},
                 "fix": {"action": "fix", "next": "check"},
                 "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    const auto& r = ex->run(source.get_token());
    CHECK(r.terminated_by == ll::termination::cancelled);
    CHECK(runner.call_count() == 2);
    CHECK(r.final_state == "check");  // fix completed and routed; check is next
    REQUIRE(r.snapshot.has_value());
    CHECK(r.snapshot->current_state == "check");
    CHECK(sink.events.back()["terminated_by"] == "cancelled");
  }

  TEST_CASE("the stop token reaches the runner; a cancelled action is re-run on resume") {
    ll::scripted_runner runner;
    ll::action_result stopped;
    stopped.cancelled = true;
    stopped.exit_code = -15;
    stopped.signal = 15;
    runner.on_action("long", stopped);
    bool token_seen = false;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "first",
      "states": {"first": {"action": "short", "next": "second"},
                 "second": {"action": "long", "next": "done"},
                 "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    runner.on_call([&](const ll::action_request& req) {
      if (req.text == "long") {
        ex->request_stop();
        token_seen = req.stop.stop_requested();
      }
    });
    const auto& r = ex->run();
    CHECK(token_seen);
    CHECK(r.terminated_by == ll::termination::cancelled);
    CHECK(r.final_state == "second");
    // As in the original, the stopped attempt was an iteration; resume runs it again as the
    // next one.
    CHECK(r.iterations == 2);
    REQUIRE(r.snapshot.has_value());
    CHECK(r.snapshot->current_state == "second");
    CHECK(r.snapshot->iteration == 2);
  }

  TEST_CASE("a stop requested before the run ends it before any state") {
    ll::scripted_runner runner;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "next": "done"}, "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    ex->request_stop();
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::cancelled);
    CHECK(r.iterations == 0);
    CHECK(runner.call_count() == 0);
  }

  TEST_CASE("duration and elapsed come from the injected clock") {
    ll::manual_clock clock;
    clock.auto_advance = 1ms;
    ll::scripted_runner runner;
    ll::executor_options opts;
    opts.clock = &clock;
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "t=${loop.elapsed_ms}", "next": "done"}, "done": {"terminal": true}}})"),
                                runner, ll::default_evaluator{}, ll::null_event_sink{}, opts);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.duration_ms > 0);
    CHECK(runner.last_action().substr(0, 2) == "t=");
  }
}

TEST_SUITE("executor.limits") {
  TEST_CASE("an action that renders past the action size limit is the error verdict; nothing runs") {
    ll::scripted_runner runner;
    runner.on_action("big", exit_with(0, std::string(std::size_t{1} << 20, 'x')));
    std::string action;
    for (int i = 0; i < 1000; ++i) action += "${captured.out.output}";
    ll::json loop = ll::json::parse(R"({
      "name": "t", "initial": "make",
      "states": {"make": {"action": "big", "capture": "out", "next": "use"},
                 "use": {"action": "", "on_success": "done", "on_error": "failed"},
                 "done": {"terminal": true}, "failed": {"terminal": true, "failure": true}}})");
    loop["states"]["use"]["action"] = action;
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(loop.dump()), runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.final_state == "failed");
    CHECK(runner.calls().size() == 1);  // the oversized action never reached the runner
    bool named = false;
    for (const auto& e : sink.events)
      if (e.dump().find("renders to more than 131071 bytes") != std::string::npos) named = true;
    CHECK(named);
  }
}
