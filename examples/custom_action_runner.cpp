// little_loops — example: a custom ActionRunner that runs actions in-process
// SPDX-License-Identifier: MIT
//
// A runner is any type with `run(const action_request&) -> expected<action_result, error>`.
// This one understands two toy commands and keeps its own state, so the loop "fixes" a counter
// until the check passes — no processes involved. Output:
//   check: 3 problems left  (exit 1)
//   fix -> 2
//   ...
//   finished in state done after 7 iterations (terminal)
#include <little_loops/fsm.hpp>

#include <cstdio>
#include <string>

namespace ll = little_loops;

/// Runs `check` and `fix N` against an in-memory problem counter.
class counter_runner {
 public:
  explicit counter_runner(int problems) : problems_(problems) {}

  ll::expected<ll::action_result, ll::error> run(const ll::action_request& request) {
    ll::action_result result;
    const std::string text(request.text);
    if (text == "check") {
      result.output = std::to_string(problems_) + " problems left\n";
      result.exit_code = problems_ == 0 ? 0 : 1;
      std::printf("check: %s", result.output.c_str());
    } else if (text.rfind("fix ", 0) == 0) {
      problems_ -= std::stoi(text.substr(4));
      if (problems_ < 0) problems_ = 0;
      std::printf("fix -> %d\n", problems_);
    } else {
      // Anything else is a runner error: the executor turns it into the verdict `error`.
      return ll::unexpected(ll::error{ll::errc::action_failed, "unknown command: " + text});
    }
    return result;
  }

 private:
  int problems_;
};
static_assert(ll::ActionRunner<counter_runner>);

int main() {
  auto loop = ll::load_loop_text(R"({
    "name": "counter", "initial": "check", "context": {"step": 1},
    "states": {
      "check": {"action": "check", "on_success": "done", "on_failure": "fix"},
      "fix":   {"action": "fix ${context.step}", "next": "check"},
      "done":  {"terminal": true}
    }})");
  if (!loop) {
    std::fprintf(stderr, "%s\n", ll::to_string(loop.error()).c_str());
    return 1;
  }
  auto executor = ll::make_executor(*loop, counter_runner{3});
  if (!executor) {
    std::fprintf(stderr, "%s\n", ll::to_string(executor.error()).c_str());
    return 1;
  }
  const ll::execution_result& result = executor->run();
  std::printf("finished in state %s after %lld iterations (%s)\n", result.final_state.c_str(),
              static_cast<long long>(result.iterations),
              std::string(ll::to_string(result.terminated_by)).c_str());
  return result.succeeded() ? 0 : 1;
}
