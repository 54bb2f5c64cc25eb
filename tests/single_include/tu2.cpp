// little_loops — single-header smoke test, translation unit 2 of 2 (has main)
// SPDX-License-Identifier: MIT
#include <little_loops/fsm.hpp>

#include <cstdio>
#include <string>

namespace ll = little_loops;

std::string tu1_run_fix_loop();

int main() {
  const std::string from_tu1 = tu1_run_fix_loop();

  // The same templates again in this TU, plus the strict parser's diagnostics.
  auto bad = ll::load_loop_text(R"({"name": "tu2", "initial": "start", "statse": {}})");
  const std::string diagnosis = bad ? std::string("accepted") : ll::to_string(bad.error());

  auto loop = ll::load_loop_text(R"({
    "name": "tu2", "initial": "start",
    "states": {"start": {"action": "true", "next": "done"}, "done": {"terminal": true}}})");
  std::string from_tu2 = "load failed";
  if (loop) {
    ll::scripted_runner runner;
    auto executor = ll::make_executor(*loop, runner);
    from_tu2 = executor ? executor->run().final_state : ll::to_string(executor.error());
  }

  std::printf("tu1: %s\ntu2: %s\nbad document: %s\n", from_tu1.c_str(), from_tu2.c_str(),
              diagnosis.c_str());
  const bool ok = from_tu1 == "done after 3 steps" && from_tu2 == "done" && !bad;
  std::puts(ok ? "single header smoke: OK" : "single header smoke: FAILED");
  return ok ? 0 : 1;
}
