// little_loops — compile-fail: an evaluator returning a bare verdict must be rejected, naming Evaluator
// SPDX-License-Identifier: MIT
// expected error: does not model Evaluator
#include <little_loops/fsm.hpp>

#include <string>

struct string_evaluator {
  std::string evaluate(const little_loops::evaluation_request&) { return "success"; }
};

int main() {
  auto loop = little_loops::load_loop_text(
      R"({"name": "t", "initial": "done", "states": {"done": {"terminal": true}}})");
  little_loops::scripted_runner runner;
  auto ex = little_loops::make_executor(*loop, runner, string_evaluator{});
  return ex ? 0 : 1;
}
