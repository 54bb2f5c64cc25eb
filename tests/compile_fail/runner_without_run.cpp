// little_loops — compile-fail: a runner without run() must be rejected, naming ActionRunner
// SPDX-License-Identifier: MIT
// expected error: does not model ActionRunner
#include <little_loops/fsm.hpp>

struct not_a_runner {
  int go() { return 0; }
};

int main() {
  auto loop = little_loops::load_loop_text(
      R"({"name": "t", "initial": "done", "states": {"done": {"terminal": true}}})");
  not_a_runner runner;
  auto ex = little_loops::make_executor(*loop, runner);
  return ex ? 0 : 1;
}
