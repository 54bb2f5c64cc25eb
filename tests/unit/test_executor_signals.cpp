// little_loops — output signals (handoff, fatal error, stop) and handoff -> resume
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

#include <algorithm>
#include <chrono>

using namespace executor_test;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view three_steps = R"({
  "name": "work", "initial": "a", "on_handoff": "spawn",
  "states": {"a": {"action": "step-a", "capture": "a", "next": "b"},
             "b": {"action": "step-b ${captured.a.output}", "capture": "b", "next": "c"},
             "c": {"action": "step-c", "capture": "c", "next": "done"},
             "done": {"terminal": true}}})";

}  // namespace

TEST_SUITE("executor.signals") {
  TEST_CASE("detect_output_signal: markers, payloads, priority") {
    const auto sigs = ll::default_output_signals();
    using ll::detail::find_output_signal;
    auto h = find_output_signal("work\nCONTEXT_HANDOFF:   continue at step 3  \nmore", sigs);
    REQUIRE(h.has_value());
    CHECK(h->kind == ll::signal_kind::handoff);
    CHECK(h->payload == "continue at step 3");
    CHECK_FALSE(find_output_signal("CONTEXT_HANDOFF:", sigs).has_value());  // payload required
    auto s = find_output_signal("LOOP_STOP:", sigs);
    REQUIRE(s.has_value());
    CHECK(s->kind == ll::signal_kind::stop);
    CHECK(s->payload.empty());
    auto both = find_output_signal("LOOP_STOP: x\nFATAL_ERROR: disk full", sigs);
    REQUIRE(both.has_value());
    CHECK(both->kind == ll::signal_kind::error);  // earlier in the list wins
    CHECK(both->payload == "disk full");
    CHECK_FALSE(find_output_signal("all good", sigs).has_value());
    // Only whitespace after the marker: the original's `MARKER\s*(.+)` still matches (empty
    // payload) unless that whitespace is only newlines.
    for (const char* text : {"CONTEXT_HANDOFF:   ", "CONTEXT_HANDOFF: \n", "CONTEXT_HANDOFF:\r\n",
                             "x\nCONTEXT_HANDOFF:\t"}) {
      auto w = find_output_signal(text, sigs);
      REQUIRE_MESSAGE(w.has_value(), text);
      CHECK(w->kind == ll::signal_kind::handoff);
      CHECK(w->payload.empty());
    }
    CHECK_FALSE(find_output_signal("CONTEXT_HANDOFF:\n", sigs).has_value());
    CHECK_FALSE(find_output_signal("CONTEXT_HANDOFF:\n\n", sigs).has_value());
    auto fatal = find_output_signal("FATAL_ERROR:  ", sigs);
    REQUIRE(fatal.has_value());
    CHECK(fatal->kind == ll::signal_kind::error);
    // A payload on a later line is taken (whitespace, newlines included, is skipped).
    auto later = find_output_signal("CONTEXT_HANDOFF: \nnext steps", sigs);
    REQUIRE(later.has_value());
    CHECK(later->payload == "next steps");
  }

  TEST_CASE("LOOP_STOP: in a state with no route for its verdict still stops (cancelled)") {
    ll::scripted_runner runner;
    runner.on_action("x", ll::scripted_response::exit(1, "LOOP_STOP: bye"));
    auto ex = ll::make_executor(compiled(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "on_success": "done"}, "done": {"terminal": true}}})"),
                                runner);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::cancelled);
    CHECK(r.final_state == "a");
    CHECK_FALSE(r.error.has_value());
    REQUIRE(r.signal.has_value());
    CHECK(*r.signal == ll::signal_kind::stop);
    CHECK(r.signal_payload == "bye");
  }

  TEST_CASE("handoff -> resume -> completion with the same captured data") {
    ll::manual_clock clock;
    ll::executor_options opts;
    opts.clock = &clock;
    auto loop = compiled(three_steps);

    // First session: b prints the handoff signal.
    ll::scripted_runner first;
    first.on_action("step-a", exit_with(0, "A\n"));
    first.on_action("step-b A", exit_with(0, "B done\nCONTEXT_HANDOFF: resume at c\n"));
    first.on_call([&](const ll::action_request&) { clock.advance(100ms); });
    ll::recording_event_sink sink1;
    auto ex1 = ll::make_executor(loop, first, ll::default_evaluator{}, sink1, opts);
    REQUIRE(ex1.has_value());
    const auto& r1 = ex1->run();
    CHECK(r1.terminated_by == ll::termination::handoff);
    CHECK(r1.final_state == "b");
    REQUIRE(r1.signal.has_value());
    CHECK(*r1.signal == ll::signal_kind::handoff);
    CHECK(r1.signal_payload == "resume at c");
    CHECK(r1.on_handoff == ll::handoff_policy::spawn);
    CHECK(r1.iterations == 2);
    REQUIRE(r1.snapshot.has_value());
    CHECK(r1.snapshot->current_state == "c");  // b completed: never re-run
    CHECK(r1.snapshot->elapsed_ms == 200);
    const auto n1 = sink1.names();
    // handoff_detected is the last event: the run is handed off, not complete (as in the
    // original).
    CHECK(n1.back() == "handoff_detected");
    CHECK(std::count(n1.begin(), n1.end(), "loop_complete") == 0);
    CHECK(sink1.events.back()["continuation"] == "resume at c");
    const ll::json rj = ll::to_json(r1);
    CHECK(rj["continuation"] == "resume at c");
    CHECK(rj["on_handoff"] == "spawn");
    CHECK(rj["handoff"] == true);  // the original's to_dict() keys
    CHECK(rj["continuation_prompt"] == "resume at c");
    CHECK(rj["snapshot"]["current_state"] == "c");

    // The snapshot survives serialisation.
    const std::string saved = ll::to_json(*r1.snapshot).dump();
    auto restored = ll::snapshot_from_json_text(saved);
    REQUIRE(restored.has_value());

    // Second session: a fresh executor resumes and finishes.
    ll::scripted_runner second;
    second.on_call([&](const ll::action_request&) { clock.advance(100ms); });
    ll::recording_event_sink sink2;
    auto ex2 = ll::make_executor(loop, second, ll::default_evaluator{}, sink2, opts);
    REQUIRE(ex2.has_value());
    REQUIRE(ex2->resume(*restored).has_value());
    const auto& r2 = ex2->run();
    CHECK(r2.terminated_by == ll::termination::terminal);
    CHECK(r2.final_state == "done");
    CHECK(r2.iterations == 3);
    REQUIRE(second.calls().size() == 1);
    CHECK(second.calls()[0].text == "step-c");
    CHECK(r2.duration_ms == 300);  // elapsed time kept across the resume
    REQUIRE(r2.captured.count("a") == 1);
    REQUIRE(r2.captured.count("b") == 1);
    CHECK(r2.captured.at("a") == r1.captured.at("a"));
    CHECK(r2.captured.at("b") == r1.captured.at("b"));
    CHECK(r2.captured.count("c") == 1);
    CHECK(sink2.events.front()["event"] == "loop_resume");
    CHECK(sink2.events.front()["from_state"] == "c");
    CHECK(sink2.events.front()["iteration"] == 2);
  }

  TEST_CASE("FATAL_ERROR: ends the run as error with the payload") {
    ll::scripted_runner runner;
    runner.on_action("step-a", exit_with(0, "FATAL_ERROR: disk full"));
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(three_steps), runner, ll::default_evaluator{}, sink);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::error);
    CHECK(r.final_state == "a");
    REQUIRE(r.error.has_value());
    CHECK(r.error->message == "disk full");
    CHECK(runner.call_count() == 1);
    const auto n = sink.names();
    CHECK(std::find(n.begin(), n.end(), "route") == n.end());
  }

  TEST_CASE("LOOP_STOP: the state routes, then the run ends as cancelled") {
    ll::scripted_runner runner;
    runner.on_action("step-a", exit_with(0, "LOOP_STOP:"));
    auto ex = ll::make_executor(compiled(three_steps), runner);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::cancelled);
    REQUIRE(r.signal.has_value());
    CHECK(*r.signal == ll::signal_kind::stop);
    CHECK(r.final_state == "b");
    CHECK(r.iterations == 1);
    REQUIRE(r.snapshot.has_value());
    CHECK(r.snapshot->current_state == "b");
  }

  TEST_CASE("signal patterns are configurable") {
    ll::scripted_runner runner;
    runner.on_action("step-a", exit_with(0, "CONTEXT_HANDOFF: ignored\n@@pause later"));
    ll::executor_options opts;
    opts.signals = {ll::output_signal{"@@pause", ll::signal_kind::handoff, true}};
    auto ex = ll::make_executor(compiled(three_steps), runner, ll::default_evaluator{},
                                ll::null_event_sink{}, opts);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    CHECK(r.terminated_by == ll::termination::handoff);
    CHECK(r.signal_payload == "later");

    ll::scripted_runner quiet;
    quiet.otherwise(exit_with(0, "CONTEXT_HANDOFF: nope"));
    ll::executor_options none;
    none.signals.clear();
    auto ex2 = ll::make_executor(compiled(three_steps), quiet, ll::default_evaluator{},
                                 ll::null_event_sink{}, none);
    REQUIRE(ex2.has_value());
    CHECK(ex2->run().terminated_by == ll::termination::terminal);
  }
}
