// little_loops — event structs, the loop_event variant and their seed-002 JSON
// SPDX-License-Identifier: MIT
#include <little_loops/fsm.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <string>

namespace ll = little_loops;
using namespace std::chrono;

namespace {
const ll::event_time t0 = sys_days{year{2026} / 11 / 22} + hours{5} + minutes{6} + seconds{21} +
                          microseconds{123456};
}

TEST_SUITE("events") {
  TEST_CASE("timestamps are ISO 8601 UTC with microseconds") {
    CHECK(ll::format_timestamp(t0) == "2026-11-22T05:06:21.123456+00:00");
    CHECK(ll::format_timestamp(sys_days{year{1999} / 1 / 2}) == "1999-01-02T00:00:00.000000+00:00");
  }

  TEST_CASE("every event serialises as {event, ts, ...fields}") {
    const ll::json details = {{"exit_code", 1}, {"reason", "x"}};
    const std::vector<std::pair<ll::loop_event, ll::json>> cases{
        {ll::loop_start_event{t0, "demo"}, {{"loop", "demo"}}},
        {ll::loop_resume_event{t0, "demo", "fix", 4},
         {{"loop", "demo"}, {"from_state", "fix"}, {"iteration", 4}}},
        {ll::state_enter_event{t0, "check", 2}, {{"state", "check"}, {"iteration", 2}}},
        {ll::action_start_event{t0, "check", "pytest -q", false},
         {{"action", "pytest -q"}, {"is_prompt", false}}},
        {ll::action_complete_event{t0, "check", 1, 42, "  out\n", true, false, false, 0},
         {{"exit_code", 1}, {"duration_ms", 42}, {"output_preview", "out"}, {"is_prompt", true}}},
        {ll::evaluate_event{t0, "check", "exit_code", "failure", &details},
         {{"type", "exit_code"}, {"verdict", "failure"}, {"exit_code", 1}, {"reason", "x"}}},
        {ll::route_event{t0, "check", "fix", {}}, {{"from", "check"}, {"to", "fix"}}},
        {ll::route_event{t0, "done", "check", "maintain"},
         {{"from", "done"}, {"to", "check"}, {"reason", "maintain"}}},
        {ll::max_iterations_event{t0, "summary", 50},
         {{"summary_state", "summary"}, {"iterations", 50}}},
        {ll::handoff_event{t0, "b", 2, "go on"},
         {{"state", "b"}, {"iteration", 2}, {"continuation", "go on"}}},
        {ll::error_event{t0, "a", "route", "boom"},
         {{"state", "a"}, {"kind", "route"}, {"error", "boom"}}},
        {ll::loop_complete_event{t0, "done", 3, "terminal"},
         {{"final_state", "done"}, {"iterations", 3}, {"terminated_by", "terminal"}}},
    };
    for (const auto& [event, fields] : cases) {
      const ll::json j = ll::to_json(event);
      CAPTURE(j.dump());
      ll::json want = ll::json::object();
      want["event"] = ll::event_name(event);
      want["ts"] = "2026-11-22T05:06:21.123456+00:00";
      for (auto it = fields.begin(); it != fields.end(); ++it) want[it.key()] = it.value();
      CHECK(j == want);
      CHECK(j.begin().key() == "event");
      CHECK(ll::event_timestamp(event) == t0);
    }
  }

  TEST_CASE("action_complete: preview is the trimmed tail, abnormal flags only when set") {
    const std::string big(5000, 'x');
    const ll::json j = ll::to_json(ll::action_complete_event{t0, "s", 124, 10, big + "END\n",
                                                             false, true, false, 9});
    // Like Python's output[-2000:].strip(): the tail first, then trimmed.
    CHECK(j["output_preview"].get<std::string>().size() == 1999);
    CHECK(j["output_preview"].get<std::string>().substr(1996) == "END");
    CHECK(j["timed_out"] == true);
    CHECK(j["signal"] == 9);
    CHECK_FALSE(j.contains("cancelled"));
    const ll::json empty =
        ll::to_json(ll::action_complete_event{t0, "s", 0, 0, "", false, false, false, 0});
    CHECK(empty["output_preview"].is_null());
  }

  TEST_CASE("evaluate without details; default type") {
    const ll::json j = ll::to_json(ll::evaluate_event{t0, "s", "default", "success", nullptr});
    CHECK(j["type"] == "default");
    CHECK(j.size() == 4);
  }

  TEST_CASE("sinks") {
    static_assert(ll::EventSink<ll::null_event_sink>);
    static_assert(ll::EventSink<ll::recording_event_sink>);
    static_assert(std::is_empty_v<ll::null_event_sink>);
    ll::recording_event_sink rec;
    rec.on_event(ll::loop_start_event{t0, "x"});
    rec.on_event(ll::loop_complete_event{t0, "done", 1, "terminal"});
    CHECK(rec.names() == std::vector<std::string>{"loop_start", "loop_complete"});
  }
}
