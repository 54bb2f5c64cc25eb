// little_loops — compile-fail: an on_event that may throw must be rejected, naming EventSink
// SPDX-License-Identifier: MIT
// expected error: does not model EventSink
#include <little_loops/fsm.hpp>

struct throwing_sink {
  void on_event(const little_loops::loop_event&) {}  // missing noexcept
};

int main() {
  auto loop = little_loops::load_loop_text(
      R"({"name": "t", "initial": "done", "states": {"done": {"terminal": true}}})");
  little_loops::scripted_runner runner;
  auto ex = little_loops::make_executor(*loop, runner, little_loops::default_evaluator{},
                                        throwing_sink{});
  return ex ? 0 : 1;
}
