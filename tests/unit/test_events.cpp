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
  TEST_CASE("timestamps are ISO 8601 UTC with microseconds, none when zero (Python's isoformat)") {
    CHECK(ll::format_timestamp(t0) == "2026-11-22T05:06:21.123456+00:00");
    CHECK(ll::format_timestamp(sys_days{year{1999} / 1 / 2}) == "1999-01-02T00:00:00+00:00");
    CHECK(ll::format_timestamp(sys_days{year{2024} / 2 / 29} + hours{23} + minutes{59} + seconds{59} +
                               microseconds{999999} + nanoseconds{999}) ==
          "2024-02-29T23:59:59.999999+00:00");  // truncated to microseconds
    CHECK(ll::format_timestamp(ll::event_time{}) == "1970-01-01T00:00:00+00:00");
    CHECK(ll::format_timestamp(sys_days{year{1969} / 12 / 31} + hours{23} + microseconds{5}) ==
          "1969-12-31T23:00:00.000005+00:00");
    CHECK(ll::format_timestamp(sys_days{year{2026} / 1 / 1} + nanoseconds{999}) ==
          "2026-01-01T00:00:00+00:00");  // below a microsecond: zero
    CHECK(ll::format_timestamp(sys_days{year{2026} / 1 / 1} + microseconds{1}) ==
          "2026-01-01T00:00:00.000001+00:00");
    CHECK(ll::format_timestamp(sys_days{year{2026} / 1 / 1} + milliseconds{500}) ==
          "2026-01-01T00:00:00.500000+00:00");
    // The ends of what a nanosecond system_clock holds (about 1677–2262).
    CHECK(ll::format_timestamp(sys_days{year{1700} / 3 / 1} + seconds{1}) == "1700-03-01T00:00:01+00:00");
    CHECK(ll::format_timestamp(sys_days{year{2262} / 1 / 1} + hours{10}) == "2262-01-01T10:00:00+00:00");
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
    // Only an empty output is null: a blank one strips to "".
    const ll::json blank =
        ll::to_json(ll::action_complete_event{t0, "s", 0, 0, "  \n", false, false, false, 0});
    CHECK(blank["output_preview"] == "");
    CHECK_FALSE(blank.contains("output_truncated"));
    // An output the runner cut says so, and where.
    const ll::json cut = ll::to_json(
        ll::action_complete_event{t0, "s", 0, 0, "x", false, false, false, 0, true, std::size_t{16} << 20});
    CHECK(cut["output_truncated"] == true);
    CHECK(cut["output_limit"] == 16 << 20);
    // What went wrong: the tail of stderr, when there is any.
    CHECK_FALSE(empty.contains("stderr_preview"));
    const ll::json failed = ll::to_json(ll::action_complete_event{
        t0, "s", 2, 0, "", false, false, false, 0, false, 0, big + "\nboom: no header\n"});
    CHECK(failed["stderr_preview"].get<std::string>().size() == 1999);
    CHECK(failed["stderr_preview"].get<std::string>().ends_with("\nboom: no header"));
  }

  TEST_CASE("action_complete: the preview counts characters, and strips as str.strip()") {
    // 2500 two-byte characters, then "END": the last 2000 characters are 1997 of them and
    // "END" (Python slices code points, not bytes), never half a character.
    std::string e_acute;
    for (int i = 0; i < 2500; ++i) e_acute += "\u00e9";
    const ll::json j = ll::to_json(
        ll::action_complete_event{t0, "s", 0, 0, e_acute + "END", false, false, false, 0});
    const std::string preview = j["output_preview"].get<std::string>();
    CHECK(preview.size() == 1997 * 2 + 3);
    CHECK(preview.substr(0, 2) == "\u00e9");
    // U+3000 (ideographic space), U+00A0 and \x1f are whitespace to str.strip().
    const ll::json u = ll::to_json(ll::action_complete_event{
        t0, "s", 0, 0, "\u3000\u00a0 ok \x1f\n", false, false, false, 0});
    CHECK(u["output_preview"] == "ok");
  }

  TEST_CASE("evaluate without details; default type") {
    const ll::json j = ll::to_json(ll::evaluate_event{t0, "s", "default", "success", nullptr});
    CHECK(j["type"] == "default");
    CHECK(j.size() == 4);
    // Seed 002 emits a default evaluation as {type, verdict}: details stay out of the JSON
    // (and of its JSON line) but reach the sink.
    const ll::json details = {{"exit_code", 1}, {"verdict", "shadow"}};
    const ll::evaluate_event quiet{t0, "s", "default", "failure", &details, false};
    CHECK(ll::to_json(quiet).dump() == ll::to_json(ll::evaluate_event{t0, "s", "default", "failure", nullptr}).dump());
    std::string line;
    ll::append_json_line(line, ll::loop_event{quiet});
    CHECK(line == ll::to_json(quiet).dump() + "\n");
  }

  TEST_CASE("append_json_line writes exactly the text of to_json(e).dump(), one line each") {
    // Hostile strings: quotes, backslashes, control characters, DEL, UTF-8, invalid UTF-8
    // (replaced by U+FFFD, as the journal's dump does) and a lone continuation byte.
    const std::vector<std::string> texts{"plain", "", "say \"hi\"\\n", "tab\there\nnew\x01\x1f\x7f",
                                         "caf\xc3\xa9 \xe2\x9c\x93", "bad \xff\xfe end", "\x80",
                                         "trunc \xe2\x9c", std::string("nul\0in", 6)};
    const ll::json details = {{"exit_code", 3}, {"value", 1.5}, {"nested", {{"a", {1, "x"}}}},
                              {"k\"ey", nullptr}, {"caf\xc3\xa9", true}};
    const ll::json shadowing = {{"verdict", "mine"}, {"extra", 1}};
    const ll::json not_object = ll::json::array({1, 2});
    std::vector<std::string> outputs;  // the events hold views: keep the texts alive
    outputs.reserve(texts.size());
    for (const auto& t : texts) outputs.push_back("  " + t + "\n");
    std::vector<ll::loop_event> events;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const std::string& t = texts[i];
      events.push_back(ll::loop_start_event{t0, t});
      events.push_back(ll::loop_resume_event{t0, t, t, -7});
      events.push_back(ll::state_enter_event{t0, t, 2});
      events.push_back(ll::action_start_event{t0, t, t, true});
      events.push_back(ll::action_complete_event{t0, t, -1, 12345678901, outputs[i], false, true,
                                                 true, 15});
      events.push_back(ll::evaluate_event{t0, t, t, t, &details});
      events.push_back(ll::route_event{t0, t, t, t});
      events.push_back(ll::max_iterations_event{t0, t, 1});
      events.push_back(ll::handoff_event{t0, t, 3, t});
      events.push_back(ll::error_event{t0, t, t, t});
      events.push_back(ll::loop_complete_event{t0, t, 4, t});
    }
    events.push_back(ll::evaluate_event{t0, "s", "exit_code", "failure", nullptr});
    events.push_back(ll::evaluate_event{t0, "s", "exit_code", "failure", &shadowing});
    events.push_back(ll::evaluate_event{t0, "s", "exit_code", "failure", &not_object});
    events.push_back(ll::action_complete_event{t0, "s", 0, 0, " \n", false, false, false, 0});
    std::string all;
    std::string expected_all;
    for (const auto& e : events) {
      const std::string want = ll::to_json(e).dump(-1, ' ', false, ll::json::error_handler_t::replace) + "\n";
      std::string got;
      ll::append_json_line(got, e);
      CAPTURE(want);
      CHECK(got == want);
      ll::append_json_line(all, e);
      expected_all += want;
    }
    CHECK(all == expected_all);  // appends, never overwrites
  }

  TEST_CASE("a sink reads exit-code details and phase time stamps as the executor lends them") {
    // Each evaluate event lends {"exit_code": N} from one reused buffer: the value is right
    // at every step. The wall clock is read as a step starts and after the runner, so the
    // events before the action share a reading and those after it share the next one.
    auto loop = ll::load_loop_text(R"({"name": "t", "initial": "a", "max_iterations": 3,
      "states": {"a": {"action": "x", "on_success": "a", "on_failure": "done"},
                 "done": {"terminal": true}}})");
    REQUIRE(loop);
    ll::scripted_runner runner;
    runner.by_index({ll::scripted_response::exit(0), ll::scripted_response::exit(1)});
    ll::manual_clock clock;
    struct sink_t {
      ll::manual_clock* clock;
      std::vector<std::string> lines;
      void on_event(const ll::loop_event& e) noexcept {
        if (const auto* ev = std::get_if<ll::evaluate_event>(&e))
          lines.push_back("details " + ev->details->dump());
        lines.push_back(std::string(ll::event_name(e)) + " " +
                        ll::format_timestamp(ll::event_timestamp(e)).substr(17, 2));
        if (std::holds_alternative<ll::action_start_event>(e)) clock->advance(seconds{1});
      }
    } sink{&clock, {}};
    ll::executor_options options;
    options.clock = &clock;
    auto ex = ll::make_executor(*loop, runner, ll::default_evaluator{}, sink, std::move(options));
    REQUIRE(ex);
    ex->step();
    ex->step();
    const std::vector<std::string> expected{
        "loop_start 00", "state_enter 00", "action_start 00", "action_complete 01",
        "details {\"exit_code\":0}", "evaluate 01", "route 01",
        "state_enter 01", "action_start 01", "action_complete 02",
        "details {\"exit_code\":1}", "evaluate 02", "route 02"};
    CHECK(ex->sink().lines == expected);
  }

  TEST_CASE("a sink whose wants_events() is false gets no events until it wants them") {
    auto loop = ll::load_loop_text(R"({"name": "t", "initial": "a", "max_iterations": 3,
      "states": {"a": {"action": "x", "on_success": "a", "on_failure": "a"},
                 "done": {"terminal": true}}})");
    REQUIRE(loop);
    struct sink_t {
      bool on = false;
      std::vector<std::string> names;
      [[nodiscard]] bool wants_events() const noexcept { return on; }
      void on_event(const ll::loop_event& e) noexcept { names.emplace_back(ll::event_name(e)); }
    };
    static_assert(ll::EventSink<sink_t>);
    ll::scripted_runner runner;
    auto ex = ll::make_executor(*loop, runner, ll::default_evaluator{}, sink_t{});
    REQUIRE(ex);
    ex->step();
    CHECK(ex->sink().names.empty());
    ex->sink().on = true;
    ex->step();
    CHECK(ex->sink().names ==
          std::vector<std::string>{"state_enter", "action_start", "action_complete", "evaluate", "route"});
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
