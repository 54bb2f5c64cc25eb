// little_loops — the one consumer program every packaging test builds (find_package,
// add_subdirectory, FetchContent, single header, Conan test_package)
// SPDX-License-Identifier: MIT
#include <little_loops/fsm.hpp>

#if defined(LL_CONSUMER_WITH_YAML) && __has_include(<little_loops/yaml_loader.hpp>)
#  include <little_loops/yaml_loader.hpp>
#  define LL_CONSUMER_YAML 1
#else
#  define LL_CONSUMER_YAML 0
#endif

#include <cstdio>
#include <string>

namespace ll = little_loops;

int main() {
#if LL_CONSUMER_YAML
  auto loop = ll::load_loop_yaml(R"(name: consumer
initial: check
states:
  check: {action: make test, on_success: done, on_failure: done}
  done: {terminal: true}
)");
#else
  auto loop = ll::load_loop_text(R"({
    "name": "consumer", "initial": "check",
    "states": {"check": {"action": "make test", "on_success": "done", "on_failure": "done"},
               "done": {"terminal": true}}})");
#endif
  if (!loop) {
    std::printf("consumer: %s\n", ll::to_string(loop.error()).c_str());
    return 1;
  }
  ll::scripted_runner runner;  // replays results; a real host would use a process runner
  auto executor = ll::make_executor(*loop, runner);
  if (!executor) {
    std::printf("consumer: %s\n", ll::to_string(executor.error()).c_str());
    return 1;
  }
  const auto& result = executor->run();
  std::printf("little_loops %s consumer (%s): %s in %lld step(s)\n", LITTLE_LOOPS_VERSION_STRING,
              LL_CONSUMER_YAML ? "yaml" : "json", result.final_state.c_str(),
              static_cast<long long>(result.iterations));
  return result.final_state == "done" ? 0 : 1;
}
