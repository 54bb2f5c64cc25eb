// little_loops — tests of sub-loop states: a child loop run inside its parent's executor
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

#include <little_loops/render.hpp>

#include <doctest/doctest.h>

#include <map>
#include <stop_token>
#include <string>
#include <vector>

using namespace executor_test;
using ll::json;

namespace {

// Child loops by name, compiled from JSON text; loads are counted.
struct child_table final : ll::child_loop_resolver {
  std::map<std::string, ll::child_loop, std::less<>> loops;
  int loads = 0;

  child_table& add(const std::string& name, std::string_view text, json parameters = json::object()) {
    loops[name] = ll::child_loop{compiled(text), name, std::move(parameters)};
    return *this;
  }
  ll::expected<ll::child_loop, ll::error> load(std::string_view name, std::string_view) override {
    ++loads;
    const auto it = loops.find(name);
    if (it == loops.end())
      return ll::unexpected(ll::error{ll::errc::reference_not_found, "Loop not found: " + std::string(name)});
    return it->second;
  }
};

// A child that runs `echo child` and ends on `done` (exit 0) or `failed` (exit 1).
constexpr std::string_view child_loop_text = R"({"name": "child", "initial": "work", "states": {
  "work": {"action": "echo child ${context.item:default=}", "capture": "plan", "on_yes": "done", "on_no": "failed"},
  "done": {"terminal": true, "output": {"summary": "made ${captured.plan.output}"}},
  "failed": {"terminal": true}}})";

std::string parent_text(std::string_view call, std::string_view extra_states = "") {
  return std::string(R"({"name": "parent", "initial": "call", "context": {"x": "apple"}, "states": {"call": )") + std::string(call) +
         R"(, "ok": {"action": "echo ${captured.call.output.summary}", "next": "end"},
            "bad": {"terminal": true}, "broken": {"terminal": true}, "slow": {"terminal": true},
            "end": {"terminal": true})" + std::string(extra_states) + "}}";
}

ll::executor_options with_children(child_table& children) {
  ll::executor_options o;
  o.child_loops = &children;
  o.loop_id = "parent";
  return o;
}

}  // namespace

TEST_CASE("sub-loop: the child runs in the same executor and its outcome routes the parent") {
  child_table children;
  children.add("child", child_loop_text);
  ll::scripted_runner runner;
  runner.record(true).otherwise(exit_with(0, "plan-1\n"));
  ll::recording_event_sink sink;
  auto ex = ll::make_executor(
      compiled(parent_text(R"({"loop": "child", "with": {"item": "${context.x}"}, "on_yes": "ok", "on_no": "bad"})")),
      runner, ll::default_evaluator{}, sink, with_children(children));
  REQUIRE(ex.has_value());
  const auto& r = ex->run();
  CHECK(r.terminated_by == ll::termination::terminal);
  CHECK(r.final_state == "end");
  CHECK(r.iterations == 2);  // the sub-loop state is one step of the parent
  REQUIRE(runner.calls().size() == 2);
  CHECK(runner.calls()[0].text == "echo child apple");
  CHECK(runner.calls()[1].text == "echo made plan-1");
  // the record: the child's captures (with: was given), its outcome and its terminal output
  const json& rec = ex->captured().at("call").subloop;
  CHECK(rec["plan"]["output"] == "plan-1");
  CHECK(rec["terminated_by"] == "terminal");
  CHECK(rec["final_state"] == "done");
  CHECK(rec["output"]["summary"] == "made plan-1");
  // events: the child's carry depth 1, the parent's none
  std::vector<std::string> at_depth;
  for (const auto& e : sink.events) at_depth.push_back(e["event"].get<std::string>() + "@" + std::to_string(e.value("depth", 0)));
  CHECK(at_depth == std::vector<std::string>{
                        "loop_start@0", "state_enter@0", "loop_start@1", "state_enter@1", "action_start@1",
                        "action_complete@1", "evaluate@1", "route@1", "loop_complete@1", "route@0",
                        "state_enter@0", "action_start@0", "action_complete@0", "route@0", "loop_complete@0"});
  CHECK(ex->prev() != nullptr);
}

namespace {

// Each event's name and depth, in order (what a moved executor must go on emitting).
std::vector<std::string> names_at_depth(const ll::recording_event_sink& sink) {
  std::vector<std::string> out;
  for (const auto& e : sink.events) out.push_back(e["event"].get<std::string>() + "@" + std::to_string(e.value("depth", 0)));
  return out;
}

}  // namespace

TEST_CASE("executor: a moved executor goes on where it was, inside a sub-loop too") {
  child_table children;
  children.add("child", child_loop_text);
  const auto loop = compiled(parent_text(R"({"loop": "child", "with": {"item": "${context.x}"}, "on_yes": "ok", "on_no": "bad"})"));
  const auto runner = [] {
    ll::scripted_runner r;
    r.otherwise(exit_with(0, "plan-1\n"));
    return r;
  };
  auto plain = ll::make_executor(loop, runner(), ll::default_evaluator{}, ll::recording_event_sink{},
                                 with_children(children));
  REQUIRE(plain.has_value());
  const ll::execution_result expected = plain->run();

  // The runner, evaluator and sink are owned: they move with the executor.
  auto ex = ll::make_executor(loop, runner(), ll::default_evaluator{}, ll::recording_event_sink{},
                              with_children(children));
  REQUIRE(ex.has_value());
  REQUIRE(ex->step());
  REQUIRE(ex->step());  // inside the child: a frame is parked
  CHECK(ex->loop().loop().name == "child");
  auto moved = std::move(*ex);
  CHECK(moved.current_state() == "done");
  const auto& r = moved.run();
  CHECK(r.terminated_by == expected.terminated_by);
  CHECK(r.final_state == expected.final_state);
  CHECK(r.iterations == expected.iterations);
  CHECK(moved.captured().at("call").subloop == plain->captured().at("call").subloop);
  CHECK(moved.runner().calls().size() == plain->runner().calls().size());
  CHECK(names_at_depth(moved.sink()) == names_at_depth(plain->sink()));

  // Moved back by assignment: the executor runs again, and its stop source is its own.
  *ex = std::move(moved);
  ex->reset();
  std::stop_source stop;
  stop.request_stop();
  CHECK(ex->run(stop.get_token()).terminated_by == ll::termination::cancelled);
  ex->reset();
  CHECK(ex->run().final_state == expected.final_state);
}

namespace {

// Runs `call` (the parent's sub-loop state) with `children` and the runner answering every
// action with `code`; returns the parent's final state.
std::string route_of(child_table& children, std::string_view call, int code = 0,
                     ll::termination* how = nullptr) {
  ll::scripted_runner runner;
  runner.otherwise(exit_with(code, "x"));
  auto ex = ll::make_executor(compiled(parent_text(call)), runner, ll::default_evaluator{},
                              ll::null_event_sink{}, with_children(children));
  REQUIRE(ex.has_value());
  const auto& r = ex->run();
  if (how != nullptr) *how = r.terminated_by;
  return r.final_state;
}

}  // namespace

TEST_CASE("sub-loop: how the child ends picks the parent's route (design §6.5)") {
  child_table children;
  children.add("child", child_loop_text);
  children.add("stuck", R"({"name": "stuck", "initial": "a", "max_iterations": 2, "states": {
      "a": {"action": "x", "next": "a"}, "z": {"terminal": true}}})");
  children.add("lost", R"({"name": "lost", "initial": "a", "states": {
      "a": {"action": "x", "on_yes": "z"}, "z": {"terminal": true}}})");
  const std::string routes = R"("on_yes": "ok", "on_no": "bad")";
  CHECK(route_of(children, R"({"loop": "child", )" + routes + "}", 0) == "end");
  // a failure terminal (here by its name, in the current dialect) is `no`
  CHECK(route_of(children, R"({"loop": "child", )" + routes + "}", 1) == "bad");
  // the child's step cap: on_timeout, else on_no
  CHECK(route_of(children, R"({"loop": "stuck", "on_timeout": "slow", )" + routes + "}") == "slow");
  CHECK(route_of(children, R"({"loop": "stuck", )" + routes + "}") == "bad");
  // the child's run error (no transition for `no`): on_error, else on_no
  CHECK(route_of(children, R"({"loop": "lost", "on_error": "broken", )" + routes + "}", 1) == "broken");
  CHECK(route_of(children, R"({"loop": "lost", )" + routes + "}", 1) == "bad");
  // a child that cannot be found (also a templated name) is the state's error verdict
  CHECK(route_of(children, R"({"loop": "ghost", "on_error": "broken", )" + routes + "}") == "broken");
  CHECK(route_of(children, R"({"loop": "${context.x}", "on_error": "broken", )" + routes + "}") == "broken");
  ll::termination how{};
  CHECK(route_of(children, R"({"loop": "ghost", )" + routes + "}", 0, &how) == "call");
  CHECK(how == ll::termination::error);
}

TEST_CASE("sub-loop: what the child starts with, by mode") {
  child_table children;
  children.add("echo", R"({"name": "echo", "initial": "a", "context": {"own": "child", "x": "mine"},
      "states": {"a": {"action": "echo ${context.x} ${context.own} ${context.p:default=none} ${context.first:default=-}",
                       "capture": "said", "on_yes": "done"}, "done": {"terminal": true}}})",
               json{{"p", {{"type", "string"}, {"default", "dflt"}}}, {"q", {{"type", "string"}}}});
  children.add("needs", R"({"name": "needs", "initial": "done", "states": {"done": {"terminal": true}}})",
               json{{"must", {{"type", "string"}, {"required", true}}}});
  const auto first_action = [&](std::string_view call) {
    ll::scripted_runner runner;
    runner.record(true).otherwise(exit_with(0, "said"));
    auto ex = ll::make_executor(compiled(parent_text(call, R"(, "first": {"action": "echo 1", "capture": "first", "next": "call"})")),
                                runner, ll::default_evaluator{}, ll::null_event_sink{}, with_children(children));
    REQUIRE(ex.has_value());
    ex->run();
    return runner.calls().empty() ? std::string() : runner.calls()[0].text;
  };
  // with: bindings win over the child's context; defaults fill the rest
  CHECK(first_action(R"({"loop": "echo", "with": {"x": "${context.x}"}, "on_yes": "end"})") == "echo apple child dflt -");
  // passthrough: the parent's context and captures under the child's own context, which wins
  CHECK(first_action(R"({"loop": "echo", "context_passthrough": true, "on_yes": "end"})") == "echo mine child none -");
  // neither: only the child's own context
  CHECK(first_action(R"({"loop": "echo", "on_yes": "end"})") == "echo mine child none -");
  // a required parameter left unbound is the state's error verdict
  CHECK(route_of(children, R"({"loop": "needs", "with": {"other": 1}, "on_yes": "end", "on_error": "broken"})") == "broken");
  CHECK(route_of(children, R"({"loop": "needs", "with": {"must": 1}, "on_yes": "end", "on_error": "broken"})") == "end");
}

TEST_CASE("sub-loop: captures come back only with with: or passthrough; capture: keeps the events") {
  child_table children;
  children.add("child", child_loop_text);
  ll::scripted_runner runner;
  runner.otherwise(exit_with(0, "p"));
  ll::recording_event_sink sink;
  auto ex = ll::make_executor(compiled(parent_text(R"({"loop": "child", "capture": "log", "on_yes": "end"})")),
                              runner, ll::default_evaluator{}, sink, with_children(children));
  REQUIRE(ex.has_value());
  ex->run();
  const json& rec = ex->captured().at("call").subloop;
  CHECK_FALSE(rec.contains("plan"));
  CHECK(rec["terminated_by"] == "terminal");
  const ll::captured_record& log = ex->captured().at("log");
  CHECK(log.verdict == "yes");
  CHECK(log.output.find(R"("event":"loop_start")") != std::string::npos);
  CHECK(log.output.find(R"("event":"loop_complete")") != std::string::npos);
  CHECK(log.output.find(R"("depth":1)") != std::string::npos);
  REQUIRE(ex->prev() != nullptr);
}

TEST_CASE("sub-loop: prev after a sub-loop state holds its verdict and the child's outcome") {
  child_table children;
  children.add("child", child_loop_text);
  ll::scripted_runner runner;
  runner.record(true).otherwise(exit_with(1));
  auto ex = ll::make_executor(
      compiled(parent_text(R"({"loop": "child", "on_yes": "ok", "on_no": "ok"})")), runner,
      ll::default_evaluator{}, ll::null_event_sink{}, with_children(children));
  REQUIRE(ex.has_value());
  while (ex->current_state() != "ok" || ex->loop().loop().name != "parent") REQUIRE(ex->step());
  const ll::prev_record* prev = ex->prev();
  REQUIRE(prev != nullptr);
  CHECK(prev->state == "call");
  CHECK(prev->verdict == "no");
  CHECK_FALSE(prev->ran_action);
  CHECK(prev->details == json{{"terminated_by", "terminal"}, {"final_state", "failed"}, {"failure_terminal", true}});
}

TEST_CASE("sub-loop: a handoff inside a child pauses the whole run; resume goes on in the child") {
  child_table children;
  children.add("child", R"({"name": "child", "initial": "a", "states": {
      "a": {"action": "hand over", "next": "b"}, "b": {"action": "echo b", "next": "done"},
      "done": {"terminal": true}}})");
  const std::string parent = parent_text(R"({"loop": "child", "on_yes": "end"})");
  ll::scripted_runner runner;
  runner.record(true).on_action("hand over", exit_with(0, "CONTEXT_HANDOFF: later")).otherwise(exit_with(0));
  auto ex = ll::make_executor(compiled(parent), runner, ll::default_evaluator{}, ll::null_event_sink{},
                              with_children(children));
  REQUIRE(ex.has_value());
  const auto& paused = ex->run();
  CHECK(paused.terminated_by == ll::termination::handoff);
  CHECK(paused.final_state == "call");
  REQUIRE(paused.snapshot.has_value());
  REQUIRE(paused.snapshot->frames.size() == 1);
  CHECK(paused.snapshot->frames[0]["current_state"] == "b");
  ll::scripted_runner later;
  later.record(true).otherwise(exit_with(0));
  auto again = ll::make_executor(compiled(parent), later, ll::default_evaluator{}, ll::null_event_sink{},
                                 with_children(children));
  REQUIRE(again.has_value());
  REQUIRE(again->resume(*paused.snapshot).has_value());
  CHECK(again->run().final_state == "end");
  REQUIRE(later.calls().size() == 1);
  CHECK(later.calls()[0].text == "echo b");
}

TEST_CASE("sub-loop: the child's time is clamped to the parent's and to the state's timeout") {
  CHECK(ll::detail::child_timeout_ms(std::nullopt, std::nullopt, std::nullopt) == std::nullopt);
  CHECK(ll::detail::child_timeout_ms(60, std::nullopt, 1000) == 1000);
  CHECK(ll::detail::child_timeout_ms(std::nullopt, 2, 5000) == 2000);
  CHECK(ll::detail::child_timeout_ms(1, 2, std::nullopt) == 1000);
  CHECK(ll::detail::child_timeout_ms(std::nullopt, std::nullopt, -5) == 1);
  child_table children;
  children.add("spin", R"({"name": "spin", "initial": "a", "max_iterations": 1000, "states": {
      "a": {"action": "x", "next": "a"}, "z": {"terminal": true}}})");
  ll::manual_clock clock;
  ll::scripted_runner runner;
  runner.otherwise(exit_with(0)).on_call([&clock](const ll::action_request&) { clock.advance(std::chrono::seconds(1)); });
  auto options = with_children(children);
  options.clock = &clock;
  auto ex = ll::make_executor(compiled(R"({"name": "p", "initial": "call", "timeout": 10, "states": {
      "call": {"loop": "spin", "timeout": 4, "on_timeout": "after", "on_yes": "end"},
      "after": {"action": "x", "next": "end"}, "end": {"terminal": true}}})"),
                              runner, ll::default_evaluator{}, ll::null_event_sink{}, options);
  REQUIRE(ex.has_value());
  const auto& r = ex->run();
  CHECK(r.final_state == "end");
  CHECK(runner.call_count() == 6);  // 5 child actions (past 4 s after the 5th), then `after`
}

TEST_CASE("sub-loop: a stop inside a child ends the whole run, every frame reporting") {
  child_table children;
  children.add("child", child_loop_text);
  ll::scripted_runner runner;
  ll::recording_event_sink sink;
  auto ex = ll::make_executor(compiled(parent_text(R"({"loop": "child", "on_yes": "ok", "on_no": "bad"})")),
                              runner, ll::default_evaluator{}, sink, with_children(children));
  REQUIRE(ex.has_value());
  runner.otherwise(exit_with(0)).on_call([&ex](const ll::action_request&) { ex->request_stop(); });
  const auto& r = ex->run();
  CHECK(r.terminated_by == ll::termination::cancelled);
  CHECK(r.final_state == "call");
  std::vector<std::string> ends;
  for (const auto& e : sink.events)
    if (e["event"] == "loop_complete") ends.push_back(e["final_state"].get<std::string>() + "@" + std::to_string(e.value("depth", 0)));
  CHECK(ends == std::vector<std::string>{"done@1", "call@0"});
}

TEST_CASE("sub-loop: a loop calling itself stops at max_subloop_depth, routed as an error") {
  child_table children;
  children.add("self", R"({"name": "self", "initial": "call", "states": {
      "call": {"loop": "self", "on_yes": "done", "on_error": "deepest"},
      "deepest": {"terminal": true}, "done": {"terminal": true}}})");
  ll::scripted_runner runner;
  ll::recording_event_sink sink;
  auto options = with_children(children);
  options.max_subloop_depth = 4;
  auto ex = ll::make_executor(children.loops["self"].loop, runner, ll::default_evaluator{}, sink, options);
  REQUIRE(ex.has_value());
  const auto& r = ex->run();
  CHECK(r.terminated_by == ll::termination::terminal);
  CHECK(r.final_state == "done");
  int max_depth = 0;
  bool limit_reported = false;
  for (const auto& e : sink.events) {
    max_depth = std::max(max_depth, e.value("depth", 0));
    if (e["event"] == "error" && e["error"].get<std::string>().find("max_subloop_depth 4") != std::string::npos)
      limit_reported = true;
  }
  CHECK(max_depth == 3);
  CHECK(limit_reported);
}

namespace {

// parent → mid → leaf; leaf runs three actions, mid one after leaf, the parent one at the end.
void add_stack(child_table& children, std::string_view leaf_last = "echo leaf-3") {
  children.add("leaf", std::string(R"({"name": "leaf", "initial": "a", "states": {
      "a": {"action": "echo leaf-1", "capture": "one", "next": "b"},
      "b": {"action": "echo leaf-2", "next": "c"},
      "c": {"action": ")") + std::string(leaf_last) + R"(", "next": "done"},
      "done": {"terminal": true}}})");
  children.add("mid", R"({"name": "mid", "initial": "call", "states": {
      "call": {"loop": "leaf", "context_passthrough": true, "on_yes": "after"},
      "after": {"action": "echo mid-after ${captured.call.one.output}", "next": "done"},
      "done": {"terminal": true}}})");
}

constexpr std::string_view top_text = R"({"name": "top", "initial": "call", "states": {
    "call": {"loop": "mid", "on_yes": "last"},
    "last": {"action": "echo top-last", "next": "done"},
    "done": {"terminal": true}}})";

}  // namespace

TEST_CASE("sub-loop snapshot: the stack is kept, and resume continues inside the grandchild") {
  child_table children;
  add_stack(children);
  ll::scripted_runner first;
  first.record(true).otherwise(exit_with(0, "out"));
  auto ex = ll::make_executor(compiled(top_text), first, ll::default_evaluator{}, ll::null_event_sink{},
                              with_children(children));
  REQUIRE(ex.has_value());
  first.on_call([&ex](const ll::action_request& r) {
    if (r.text == "echo leaf-2") ex->request_stop();
  });
  const auto& stopped = ex->run();
  REQUIRE(stopped.terminated_by == ll::termination::cancelled);
  REQUIRE(stopped.snapshot.has_value());
  const ll::snapshot& snap = *stopped.snapshot;
  CHECK(snap.loop_name == "top");
  CHECK(snap.current_state == "call");
  REQUIRE(snap.frames.is_array());
  REQUIRE(snap.frames.size() == 2);
  CHECK(snap.frames[0]["loop"] == "mid");
  CHECK(snap.frames[0]["current_state"] == "call");
  CHECK(snap.frames[1]["loop"] == "leaf");
  CHECK(snap.frames[1]["current_state"] == "c");
  CHECK(snap.frames[1]["loop_id"] == "leaf");
  // version 2 JSON; both writers agree; it reads back equal
  const ll::json j = ll::to_json(snap);
  CHECK(j["version"] == 2);
  std::string text;
  ll::append_snapshot_json(text, snap);
  CHECK(text == j.dump(-1, ' ', false, ll::json::error_handler_t::replace));
  auto back = ll::snapshot_from_json(j);
  REQUIRE(back.has_value());
  CHECK(*back == snap);
  // a flat snapshot is still version 1
  CHECK(ll::to_json(ll::snapshot{})["version"] == 1);

  ll::scripted_runner second;
  second.record(true).otherwise(exit_with(0, "out"));
  auto again = ll::make_executor(compiled(top_text), second, ll::default_evaluator{}, ll::null_event_sink{},
                                 with_children(children));
  REQUIRE(again.has_value());
  REQUIRE(again->resume(*back).has_value());
  const auto& r = again->run();
  CHECK(r.terminated_by == ll::termination::terminal);
  std::vector<std::string> ran;
  for (const auto& c : second.calls()) ran.push_back(c.text);
  // no finished action runs again; the grandchild's capture survived the resume
  CHECK(ran == std::vector<std::string>{"echo leaf-3", "echo mid-after out", "echo top-last"});
}

TEST_CASE("sub-loop snapshot: a child that changed since is refused, naming its frame") {
  child_table children;
  add_stack(children);
  ll::scripted_runner runner;
  runner.otherwise(exit_with(0));
  auto ex = ll::make_executor(compiled(top_text), runner, ll::default_evaluator{}, ll::null_event_sink{},
                              with_children(children));
  REQUIRE(ex.has_value());
  runner.on_call([&ex](const ll::action_request& r) {
    if (r.text == "echo leaf-1") ex->request_stop();
  });
  const auto snap = ex->run().snapshot;
  REQUIRE(snap.has_value());
  child_table changed;
  add_stack(changed, "echo leaf-3 changed");
  auto again = ll::make_executor(compiled(top_text), runner, ll::default_evaluator{}, ll::null_event_sink{},
                                 with_children(changed));
  REQUIRE(again.has_value());
  auto resumed = again->resume(*snap);
  REQUIRE_FALSE(resumed.has_value());
  CHECK(resumed.error().code == ll::errc::snapshot_mismatch);
  CHECK(resumed.error().message.find("frame 2 (leaf) changed since the snapshot") != std::string::npos);
  CHECK(again->current_state() == "call");
}

TEST_CASE("sub-loop worktree: the child's actions run in the worktree the host attaches") {
  child_table children;
  children.add("child", R"({"name": "child", "initial": "a", "states": {
      "a": {"action": "hand over", "next": "b"}, "b": {"action": "echo b", "next": "done"},
      "done": {"terminal": true}}})");
  const std::string parent = parent_text(
      R"({"loop": "child", "worktree": "${context.x}-branch ", "on_yes": "after", "on_error": "broken"})",
      R"(, "after": {"action": "echo after", "next": "end"})");
  ll::executor_options opts = with_children(children);
  std::vector<std::string> log;
  opts.attach_worktree = [&](std::string_view branch, json& child) -> ll::expected<std::string, std::string> {
    log.push_back("attach " + std::string(branch));
    child["anchored"] = true;
    return "/wt/" + std::string(branch);
  };
  opts.detach_worktree = [&](std::string_view path) { log.push_back("detach " + std::string(path)); };
  ll::scripted_runner runner;
  std::vector<std::string> dirs;
  runner.on_call([&](const ll::action_request& r) { dirs.push_back(std::string(r.text) + "@" + std::string(r.working_dir)); })
      .on_action("hand over", exit_with(0, "CONTEXT_HANDOFF: later"))
      .otherwise(exit_with(0));
  ll::recording_event_sink sink;
  auto ex = ll::make_executor(compiled(parent), runner, ll::default_evaluator{}, sink, opts);
  REQUIRE(ex.has_value());
  const auto& paused = ex->run();
  REQUIRE(paused.terminated_by == ll::termination::handoff);
  CHECK(log == std::vector<std::string>{"attach apple-branch", "detach /wt/apple-branch"});
  CHECK(dirs == std::vector<std::string>{"hand over@/wt/apple-branch"});
  REQUIRE(paused.snapshot.has_value());
  CHECK(paused.snapshot->frames[0]["worktree"] == "apple-branch");
  CHECK(paused.snapshot->frames[0]["context"]["anchored"] == true);
  bool attached_event = false;
  for (const auto& e : sink.events)
    attached_event |= e.value("kind", "") == "sub_loop_worktree_attached" && e["branch"] == "apple-branch" &&
                      e["path"] == "/wt/apple-branch" && !e.contains("depth");
  CHECK(attached_event);

  // resume attaches the branch again; the parent's actions run where the host runs them
  log.clear();
  dirs.clear();
  auto again = ll::make_executor(compiled(parent), runner, ll::default_evaluator{}, sink, opts);
  REQUIRE(again->resume(*paused.snapshot).has_value());
  CHECK(again->run().final_state == "end");
  CHECK(log == std::vector<std::string>{"attach apple-branch", "detach /wt/apple-branch"});
  REQUIRE(dirs.size() == 2);
  CHECK(dirs[0] == "echo b@/wt/apple-branch");
  CHECK(dirs[1].ends_with("@"));
}

TEST_CASE("sub-loop worktree: empty is none; without a host or on failure the state errs") {
  child_table children;
  children.add("child", child_loop_text);
  SUBCASE("rendered empty: no worktree") {
    ll::executor_options opts = with_children(children);
    int attached = 0;
    opts.attach_worktree = [&](std::string_view, json&) -> ll::expected<std::string, std::string> {
      ++attached;
      return std::string("/x");
    };
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    auto ex = ll::make_executor(compiled(parent_text(R"({"loop": "child", "worktree": "${context.none:default=}", "on_yes": "ok"})")),
                                runner, ll::default_evaluator{}, ll::null_event_sink{}, opts);
    CHECK(ex->run().final_state == "end");
    CHECK(attached == 0);
  }
  SUBCASE("no host, then a failing host") {
    for (const bool host : {false, true}) {
      ll::executor_options opts = with_children(children);
      if (host)
        opts.attach_worktree = [](std::string_view, json&) -> ll::expected<std::string, std::string> {
          return ll::unexpected(std::string("fatal: invalid reference: gone"));
        };
      ll::scripted_runner runner;
      runner.record(true).otherwise(exit_with(0));
      ll::recording_event_sink sink;
      auto ex = ll::make_executor(compiled(parent_text(R"({"loop": "child", "worktree": "gone", "on_yes": "ok", "on_error": "broken"})")),
                                  runner, ll::default_evaluator{}, sink, opts);
      CHECK(ex->run().final_state == "broken");
      CHECK(runner.calls().empty());
      bool reported = false;
      for (const auto& e : sink.events)
        reported |= e.value("kind", "") == "sub_loop_worktree_error" &&
                    e.value("message", "").find(host ? "invalid reference" : "attaches no worktrees") != std::string::npos;
      CHECK(reported);
    }
  }
  SUBCASE("worktree without loop is an error; the key is read and written back") {
    auto bad = ll::parse_loop(json::parse(R"({"name": "p", "initial": "a", "states": {
        "a": {"action": "x", "worktree": "b", "next": "d"}, "d": {"terminal": true}}})"));
    REQUIRE(bad);
    bool found = false;
    for (const auto& d : ll::validate(*bad))
      found |= d.path == "states.a.worktree" && d.code == "with-without-loop" && d.level == ll::severity::error;
    CHECK(found);
    auto good = ll::parse_loop(json::parse(parent_text(R"({"loop": "child", "worktree": "epic/${context.x}", "on_yes": "ok"})")));
    REQUIRE(good);
    json written;
    ll::to_json(written, *good);
    CHECK(written["states"]["call"]["worktree"] == "epic/${context.x}");
    CHECK(ll::render_preview(*good).find("call: [loop: child, worktree: epic/${context.x}]") != std::string::npos);
  }
}
