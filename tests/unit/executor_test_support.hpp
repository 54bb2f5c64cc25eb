// little_loops — shared helpers of the executor tests
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/fsm.hpp>
#include <little_loops/scripted_runner.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ll = little_loops;

namespace executor_test {

// Parse + validate a loop written as JSON; fails the test on any error.
inline ll::fsm_loop loop_from(std::string_view text) {
  auto loop = ll::load_loop_text(text);
  if (!loop) FAIL_CHECK(ll::to_string(loop.error()));
  REQUIRE(loop.has_value());
  return *loop;
}

inline std::shared_ptr<const ll::compiled_loop> compiled(std::string_view text) {
  auto c = ll::compile_loop(loop_from(text));
  if (!c) FAIL_CHECK(ll::to_string(c.error()));
  REQUIRE(c.has_value());
  return *c;
}

inline ll::scripted_response exit_with(int code, std::string output = {}) {
  return ll::scripted_response::exit(code, std::move(output));
}

// The event names of a recording sink, without time stamps.
inline std::vector<std::string> names(const ll::recording_event_sink& sink) { return sink.names(); }

// The recorded events (as JSON) whose name is `name`, in order.
inline std::vector<ll::json> events_named(const ll::recording_event_sink& sink,
                                          std::string_view name) {
  std::vector<ll::json> out;
  for (const auto& e : sink.events)
    if (e.value("event", "") == name) out.push_back(e);
  return out;
}

// True when `list` has a diagnostic at `path` with `code`.
inline bool has_code(const ll::diagnostics& list, std::string_view path, std::string_view code) {
  for (const auto& d : list)
    if (d.path == path && d.code == code) return true;
  return false;
}

}  // namespace executor_test
