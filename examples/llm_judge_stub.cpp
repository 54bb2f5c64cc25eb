// little_loops — example: wiring an LLM judge backend into the executor
// SPDX-License-Identifier: MIT
//
// The library builds the judge prompt, parses the reply tolerantly and fails closed; the host
// supplies the backend (a JudgeBackend: `ask(const judge_request&)` returning the raw reply
// text or a judge_error). This stub answers from a keyword in the output instead of calling a
// model, so the example runs offline. Replace `ask` with your API client.
#include <little_loops/fsm.hpp>

#include <cstdio>
#include <string>

namespace ll = little_loops;

/// A fake model: replies in a fenced JSON block with some chatter, as real models do.
struct keyword_judge {
  int calls = 0;
  ll::expected<std::string, ll::judge_error> ask(const ll::judge_request& request) {
    ++calls;
    const bool done = request.output_tail.find("ALL TESTS PASS") != std::string_view::npos;
    return std::string("Here is my assessment:\n```json\n{\"verdict\": \"") +
           (done ? "success" : "failure") +
           "\", \"confidence\": 0.9, \"reason\": \"looked for the pass marker\"}\n```";
  }
};
static_assert(ll::JudgeBackend<keyword_judge>);

/// The evaluator that uses it: deterministic evaluators as usual, llm_structured via the judge.
using judged_evaluator = ll::basic_evaluator<keyword_judge>;
static_assert(ll::Evaluator<judged_evaluator>);

int main() {
  // A prompt action (leading `/`) is judged by llm_structured by default (design §3.10).
  auto loop = ll::load_loop_text(R"({
    "name": "agent", "initial": "work", "max_iterations": 6,
    "states": {
      "work": {"action": "/fix-tests attempt ${state.iteration}",
               "on_success": "done", "on_failure": "work", "on_error": "gave_up"},
      "done": {"terminal": true},
      "gave_up": {"terminal": true, "failure": true}
    }})");
  if (!loop) {
    std::fprintf(stderr, "%s\n", ll::to_string(loop.error()).c_str());
    return 1;
  }

  // The agent "succeeds" on its third attempt.
  ll::scripted_runner agent;
  agent.by_index({ll::scripted_response::exit(0, "edited 2 files; 3 tests fail"),
                  ll::scripted_response::exit(0, "edited 1 file; 1 test fails"),
                  ll::scripted_response::exit(0, "ALL TESTS PASS")});

  ll::recording_event_sink events;
  auto executor = ll::make_executor(*loop, agent, judged_evaluator{keyword_judge{}}, events);
  if (!executor) return 1;
  const auto& result = executor->run();

  for (const auto& e : events.events)
    if (e["event"] == "evaluate")
      std::printf("judge said %s (%s)\n", e["verdict"].get<std::string>().c_str(),
                  e.value("reason", std::string("?")).c_str());
  std::printf("%s after %lld iterations, %d judge calls\n", result.final_state.c_str(),
              static_cast<long long>(result.iterations), executor->evaluator().judge().calls);
  return result.succeeded() ? 0 : 1;
}
