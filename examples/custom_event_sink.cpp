// little_loops — example: custom EventSinks (JSON lines and a progress display)
// SPDX-License-Identifier: MIT
//
// A sink is any type with `void on_event(const loop_event&) noexcept`. Events are small
// structs in a std::variant; `to_json(event)` gives seed 002's `{"event", "ts", ...}` shape.
#include <little_loops/fsm.hpp>

#include <cstdio>
#include <string>
#include <type_traits>
#include <variant>

namespace ll = little_loops;

/// Writes one JSON object per event (a journal in ten lines).
struct json_lines_sink {
  std::FILE* out = stdout;
  void on_event(const ll::loop_event& event) noexcept {
    try {
      const std::string line = ll::to_json(event).dump();
      std::fprintf(out, "%s\n", line.c_str());
    } catch (...) {  // a sink must not throw; drop the line
    }
  }
};
static_assert(ll::EventSink<json_lines_sink>);

/// Prints a human-readable line for the events it cares about (std::visit over the variant).
struct progress_sink {
  int transitions = 0;
  void on_event(const ll::loop_event& event) noexcept {
    std::visit(
        [this](const auto& e) {
          using E = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<E, ll::state_enter_event>) {
            std::printf("[%lld] %.*s\n", static_cast<long long>(e.iteration),
                        static_cast<int>(e.state.size()), e.state.data());
          } else if constexpr (std::is_same_v<E, ll::evaluate_event>) {
            std::printf("     verdict: %.*s\n", static_cast<int>(e.verdict.size()), e.verdict.data());
          } else if constexpr (std::is_same_v<E, ll::route_event>) {
            ++transitions;
          } else if constexpr (std::is_same_v<E, ll::loop_complete_event>) {
            std::printf("done: %.*s after %d transitions\n", static_cast<int>(e.terminated_by.size()),
                        e.terminated_by.data(), transitions);
          }
        },
        event);
  }
};
static_assert(ll::EventSink<progress_sink>);

int main() {
  auto loop = ll::load_loop_text(R"({
    "name": "demo", "initial": "check",
    "states": {
      "check": {"action": "pytest", "on_success": "done", "on_failure": "fix"},
      "fix":   {"action": "fix.sh", "next": "check"},
      "done":  {"terminal": true}
    }})");
  if (!loop) return 1;

  // Scripted results: the first check fails, the fix works, the second check passes.
  ll::scripted_runner runner;
  runner.on_action("pytest", {ll::scripted_response::exit(1, "1 failed"),
                              ll::scripted_response::exit(0, "all passed")});

  std::puts("-- progress --");
  progress_sink progress;
  auto ex1 = ll::make_executor(*loop, runner, ll::default_evaluator{}, progress);
  if (!ex1) return 1;
  ex1->run();

  std::puts("-- json lines --");
  runner.reset();
  auto ex2 = ll::make_executor(*loop, runner, ll::default_evaluator{}, json_lines_sink{});
  if (!ex2) return 1;
  return ex2->run().succeeded() ? 0 : 1;
}
