// little_loops — single-header smoke test, translation unit 1 of 2
// SPDX-License-Identifier: MIT
// Both TUs include the generated header and instantiate the same inline functions and
// templates (parser, validator, executor with a scripted runner); linking them into one program
// catches a missing `inline` (multiple definitions), and the build catches a missing standard
// include (only single_include/ and the dependencies are on the include path).
#include <little_loops/fsm.hpp>

#include <string>

namespace ll = little_loops;

// check -> fix -> check -> done, scripted: pytest fails once, then passes.
std::string tu1_run_fix_loop() {
  auto loop = ll::load_loop_text(R"({
    "name": "tu1", "initial": "check",
    "states": {
      "check": {"action": "pytest", "on_success": "done", "on_failure": "fix"},
      "fix":   {"action": "fix.sh", "next": "check"},
      "done":  {"terminal": true}
    }})");
  if (!loop) {
    return "load failed: " + ll::to_string(loop.error());
  }
  ll::scripted_runner runner;
  runner.on_action("pytest", {ll::scripted_response::exit(1), ll::scripted_response::exit(0)});
  auto executor = ll::make_executor(*loop, runner);
  if (!executor) {
    return "make_executor failed: " + ll::to_string(executor.error());
  }
  const auto& result = executor->run();
  return result.final_state + " after " + std::to_string(result.iterations) + " steps";
}
