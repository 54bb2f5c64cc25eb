// little_loops — the host settings at run time: what the runner is asked (agent, automation
// profile) and the session chain of session_mode: continue
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

#include <map>
#include <string>
#include <vector>

using namespace executor_test;
using ll::json;

namespace host_requests_test {

/// What the runner saw of one call.
struct seen_call {
  std::string state;
  std::string text;
  std::string agent;
  std::string profile;
};

/// A scripted runner that keeps each request's host fields.
inline ll::scripted_runner recording(std::vector<seen_call>& calls) {
  ll::scripted_runner runner;
  runner.on_call([&calls](const ll::action_request& r) {
    calls.push_back(seen_call{std::string(r.state), std::string(r.text), std::string(r.agent),
                              std::string(r.automation_profile)});
  });
  return runner;
}

constexpr std::string_view heading = "## Continuity summary from the prior chained state\n\n";

// plan (continue) → gate (shell) → build (continue) → judge (fresh) → after (continue).
constexpr std::string_view chain_loop = R"({"name": "chain", "initial": "plan", "states": {
  "plan": {"action": "plan it", "action_type": "prompt", "session_mode": "continue", "next": "gate"},
  "gate": {"action": "test -f x", "next": "build"},
  "build": {"action": "build it", "action_type": "prompt", "session_mode": "continue", "next": "judge"},
  "judge": {"action": "judge it", "action_type": "prompt", "next": "after"},
  "after": {"action": "after it", "action_type": "prompt", "session_mode": "continue", "next": "done"},
  "done": {"terminal": true}}})";

/// The calls a new executor of `loop` makes when it resumes `snap` and runs to the end.
inline std::vector<seen_call> resumed_calls(std::string_view loop, const ll::snapshot& snap) {
  std::vector<seen_call> calls;
  auto runner = recording(calls);
  auto ex = ll::make_executor(compiled(loop), runner);
  REQUIRE(ex.has_value());
  REQUIRE(ex->resume(snap).has_value());
  ex->run();
  return calls;
}

}  // namespace host_requests_test

using host_requests_test::chain_loop;
using host_requests_test::heading;
using host_requests_test::recording;
using host_requests_test::resumed_calls;
using host_requests_test::seen_call;

TEST_CASE("host settings: a prompt action's request carries its agent and automation profile") {
  std::vector<seen_call> calls;
  auto runner = recording(calls);
  auto ex = ll::make_executor(compiled(R"({"name": "h", "initial": "ask",
    "pruning_profile": {"name": "loop-wide"},
    "states": {
      "ask": {"action": "/ll:fix x", "agent": "reviewer", "next": "mine"},
      "mine": {"action": "do", "action_type": "prompt", "pruning_profile": {"name": "own"}, "next": "off"},
      "off": {"action": "do", "action_type": "prompt", "pruning_profile": {"enabled": false}, "next": "sh"},
      "sh": {"action": "echo", "next": "done"},
      "done": {"terminal": true}}})"),
                              runner);
  REQUIRE(ex.has_value());
  CHECK(ex->run().terminated_by == ll::termination::terminal);
  REQUIRE(calls.size() == 4);
  CHECK(calls[0].agent == "reviewer");
  CHECK(calls[0].profile == "loop-wide");
  CHECK(calls[1].agent.empty());
  CHECK(calls[1].profile == "own");
  CHECK(calls[2].profile.empty());  // a disabled profile asks nothing
  CHECK(calls[3].agent.empty());    // a shell action gets none
  CHECK(calls[3].profile.empty());
}

TEST_CASE("session chain: a continue prompt gets the prior chained prompt's output first") {
  std::vector<seen_call> calls;
  auto runner = recording(calls);
  runner.on_action("plan it", exit_with(0, "  the plan: A then B\n\n"))
      .on_action("build it", exit_with(0, "built A and B"))
      .on_action("judge it", exit_with(0, "fine"))
      .on_action("test -f x", exit_with(0, "gate output"));
  ll::recording_event_sink sink;
  auto ex = ll::make_executor(compiled(chain_loop), runner, ll::default_evaluator{}, sink);
  REQUIRE(ex.has_value());
  CHECK(ex->run().terminated_by == ll::termination::terminal);
  REQUIRE(calls.size() == 5);
  CHECK(calls[0].text == "plan it");
  CHECK(calls[1].text == "test -f x");  // a shell action between them neither takes nor leaves one
  CHECK(calls[2].text == std::string(heading) + "the plan: A then B\n\n---\n\nbuild it");
  CHECK(calls[3].text == "judge it");   // fresh: nothing, and the chain is broken
  CHECK(calls[4].text == "after it");   // build's summary was taken by judge
  // action_start shows the text sent.
  bool shown = false;
  for (const auto& e : sink.events)
    if (e.value("event", "") == "action_start" && e.value("action", "").ends_with("build it"))
      shown = e.value("action", "").starts_with(heading);
  CHECK(shown);
}

TEST_CASE("session chain: a failed prompt leaves no summary; a handoff drops it") {
  SUBCASE("exit 1") {
    std::vector<seen_call> calls;
    auto runner = recording(calls);
    runner.on_action("plan it", exit_with(1, "half a plan"));
    auto ex = ll::make_executor(compiled(chain_loop), runner);
    REQUIRE(ex.has_value());
    ex->run();
    REQUIRE(calls.size() >= 3);
    CHECK(calls[2].text == "build it");
  }
  SUBCASE("a handoff in the summary's state: the resumed run starts fresh") {
    std::vector<seen_call> calls;
    auto runner = recording(calls);
    runner.on_action("plan it", exit_with(0, "plan\nCONTEXT_HANDOFF: go on"));
    auto ex = ll::make_executor(compiled(chain_loop), runner);
    REQUIRE(ex.has_value());
    const auto& r = ex->run();
    REQUIRE(r.terminated_by == ll::termination::handoff);
    REQUIRE(r.snapshot.has_value());
    const bool kept = r.snapshot->counters.is_object() && r.snapshot->counters.contains("session_summary");
    CHECK_FALSE(kept);
    const auto later = resumed_calls(chain_loop, *r.snapshot);
    REQUIRE(later.size() >= 2);
    CHECK(later[1].text == "build it");
  }
}

TEST_CASE("session chain: the pending summary is kept in a snapshot and resumed") {
  std::vector<seen_call> calls;
  auto runner = recording(calls);
  runner.on_action("plan it", exit_with(0, "remember me"));
  auto ex = ll::make_executor(compiled(chain_loop), runner);
  REQUIRE(ex.has_value());
  ex->step();  // plan ran: its summary is pending
  const ll::snapshot snap = ex->snapshot();
  REQUIRE(snap.counters.is_object());
  CHECK(snap.counters["session_summary"] == "remember me");
  // The view a journal writes holds it too.
  const auto view = ex->snapshot_view();
  REQUIRE(view.counters != nullptr);
  CHECK((*view.counters)["session_summary"] == "remember me");
  // Written and read back as JSON, then resumed in another executor.
  const auto reread = ll::snapshot_from_json(ll::json(snap));
  REQUIRE(reread.has_value());
  const auto later = resumed_calls(chain_loop, *reread);
  REQUIRE(later.size() >= 2);
  CHECK(later[1].text == std::string(heading) + "remember me\n\n---\n\nbuild it");
}

TEST_CASE("session chain: a summary keeps the end of a long output") {
  ll::detail::session_chain chain;
  ll::action_result a;
  a.output = std::string(ll::detail::continuity_summary_limit, 'a') + "tail";
  chain.leave(ll::action_kind::prompt, ll::session_mode::continued, a, false);
  CHECK(chain.summary().size() == ll::detail::continuity_summary_limit);
  CHECK(chain.summary().ends_with("tail"));
  chain.leave(ll::action_kind::shell, ll::session_mode::continued, a, true);
  CHECK(chain.summary().empty());  // a handoff drops it, whatever ran
  std::string buffer = "viewed";
  chain.leave(ll::action_kind::slash_command, ll::session_mode::continued, a, false);
  const std::string_view sent = chain.take(ll::session_mode::continued, buffer, buffer);
  CHECK(sent.ends_with("\n\n---\n\nviewed"));  // `text` may view the buffer it is built in
  CHECK(chain.summary().empty());
}

TEST_CASE("mcp_result reads the exit code, then the response envelope") {
  const auto verdict = [](std::string_view out, int code) { return ll::evaluate_mcp_result(out, code).verdict; };
  CHECK(verdict("", 127) == "not_found");
  CHECK(verdict("{\"isError\": false}", 124) == "timeout");
  CHECK(verdict("{\"content\": []}", 0) == "success");
  CHECK(verdict("", 0) == "success");                       // no output: an empty envelope
  CHECK(verdict("{\"isError\": true}", 0) == "tool_error");
  CHECK(verdict("{\"isError\": false}", 1) == "success");   // isError wins over the exit code
  CHECK(verdict("{\"content\": []}", 1) == "tool_error");   // without it, the exit code says
  CHECK(verdict("{\"isError\": 0}", 1) == "success");       // Python's truth
  CHECK(verdict("[1]", 2) == "tool_error");
  const auto bad = ll::evaluate_mcp_result("not json", 0);
  CHECK(bad.verdict == "tool_error");
  CHECK(bad.details.to_json()["error"] == "Invalid JSON from mcp-call: not json");
  const auto ok = ll::evaluate_mcp_result(" {\"content\": [{\"text\": \"hi\"}]} \n", 0);
  CHECK(ok.details.to_json()["envelope"]["content"][0]["text"] == "hi");
  CHECK(ok.details.to_json()["exit_code"] == 0);
}

TEST_CASE("mcp_tool: the runner gets the tool and its rendered params; mcp_result routes") {
  constexpr std::string_view loop = R"({"name": "m", "initial": "call", "context": {"port": 3000},
    "states": {
      "call": {"action": "playwright/${context.kind:default=screenshot}", "action_type": "mcp_tool",
               "params": {"url": "http://localhost:${context.port}", "n": 2, "nested": {"s": "${state.name}"}},
               "capture": "shot", "agent": "ignored",
               "route": {"success": "done", "tool_error": "retry", "not_found": "skipped", "timeout": "slow",
                         "_error": "broken"}},
      "retry": {"terminal": true}, "skipped": {"terminal": true}, "slow": {"terminal": true},
      "broken": {"terminal": true}, "done": {"terminal": true}}})";
  const auto run = [&](ll::scripted_response response, std::vector<std::string>* params = nullptr) {
    ll::scripted_runner runner;
    runner.on_call([params](const ll::action_request& r) {
      CHECK(r.kind == ll::action_kind::mcp_tool);
      CHECK(r.text == "playwright/screenshot");
      CHECK(r.agent.empty());
      if (params) params->emplace_back(r.params);
    });
    runner.otherwise(std::move(response));
    auto ex = ll::make_executor(compiled(loop), runner);
    REQUIRE(ex.has_value());
    return ex->run().final_state;
  };
  std::vector<std::string> params;
  CHECK(run(exit_with(0, "{\"content\": []}"), &params) == "done");
  REQUIRE(params.size() == 1);
  CHECK(json::parse(params[0]) == json{{"url", "http://localhost:3000"}, {"n", 2}, {"nested", {{"s", "call"}}}});
  CHECK(run(exit_with(0, "{\"isError\": true}")) == "retry");
  CHECK(run(exit_with(127)) == "skipped");
  ll::scripted_response timed_out = exit_with(124);
  timed_out.result.timed_out = true;  // a runner's timeout is mcp_result's `timeout`, not `error`
  CHECK(run(timed_out) == "slow");
  ll::scripted_response killed = exit_with(-9);
  killed.result.signal = 9;
  CHECK(run(killed) == "broken");
}

TEST_CASE("mcp_tool: params that cannot be rendered are the error verdict, the tool is not called") {
  ll::scripted_runner runner;
  auto ex = ll::make_executor(compiled(R"({"name": "m", "initial": "call", "states": {
      "call": {"action": "srv/tool", "action_type": "mcp_tool", "params": {"q": "${captured.none.output}"},
               "on_success": "done", "on_error": "broken"},
      "done": {"terminal": true}, "broken": {"terminal": true}}})"),
                              runner);
  REQUIRE(ex.has_value());
  CHECK(ex->run().final_state == "broken");
  CHECK(runner.calls().empty());
}
