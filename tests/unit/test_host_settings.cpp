// little_loops — tests for reading, validating and showing the host settings (agent,
// pruning_profile, session_mode)
// SPDX-License-Identifier: MIT
#include <little_loops/render.hpp>
#include <little_loops/validation.hpp>

#include <doctest/doctest.h>

#include "core_test_support.hpp"

#include <string>
#include <utility>

namespace ll = little_loops;
using ll::json;
using core_test::dump_all;
using core_test::find_diagnostic;

namespace host_test {

/// A loop whose prompt state `ask` has the members `ask` (JSON text, with a trailing comma
/// or empty), whose shell state `run` has `run`, and whose top level has `top`.
inline json host_loop(const std::string& ask, const std::string& top = "", const std::string& run = "") {
  return json::parse(R"({"name": "h", "initial": "ask", )" + top + R"( "states": {
    "ask": {"action": "/ll:fix it", "action_type": "slash_command", )" + ask + R"( "next": "run"},
    "run": {"action": "make", )" + run + R"( "next": "done"},
    "done": {"terminal": true}}})");
}

inline ll::diagnostics host_errors(const json& doc) {
  auto loop = ll::parse_loop(doc);
  return loop ? ll::diagnostics{} : loop.error().details;
}

inline ll::fsm_loop host_parsed(const json& doc) {
  auto loop = ll::parse_loop(doc);
  if (!loop) FAIL_CHECK(dump_all(loop.error().details));
  REQUIRE(loop.has_value());
  return *loop;
}

}  // namespace host_test

using host_test::host_loop;
using host_test::host_errors;
using host_test::host_parsed;

TEST_CASE("agent, pruning_profile and session_mode are read into the state and the loop") {
  const auto loop = host_parsed(host_loop(
      R"("agent": "reviewer", "session_mode": "continue",
         "pruning_profile": {"name": "tight", "suppress_catalog": true, "suppress_claude_md": true},)",
      R"("session_mode": "fresh", "pruning_profile": {"enabled": false},)"));
  const auto& host = loop.states.at("ask").host;
  CHECK(host.agent == "reviewer");
  CHECK(host.session == ll::session_mode::continued);
  REQUIRE(host.pruning);
  CHECK(host.pruning->enabled);
  CHECK(host.pruning->name == "tight");
  CHECK(host.pruning->suppress_catalog);
  CHECK(host.pruning->suppress_claude_md);
  CHECK(loop.host.session == ll::session_mode::fresh);
  REQUIRE(loop.host.pruning);
  CHECK_FALSE(loop.host.pruning->enabled);
  CHECK(loop.host.pruning->name == "default");

  SUBCASE("they round-trip through to_json") {
    json written;
    ll::to_json(written, loop);
    CHECK(written["states"]["ask"]["agent"] == "reviewer");
    CHECK(written["states"]["ask"]["session_mode"] == "continue");
    CHECK(written["pruning_profile"] == json{{"enabled", false}});
    CHECK(written["session_mode"] == "fresh");
    CHECK(host_parsed(written) == loop);
  }
}

TEST_CASE("a state's setting wins over the loop's; the loop's applies to the rest") {
  const auto loop = host_parsed(host_loop(R"("pruning_profile": {"name": "mine"},)",
                                     R"("pruning_profile": {"name": "ours"}, "session_mode": "continue",)"));
  const auto& ask = loop.states.at("ask").host;
  const auto& run = loop.states.at("run").host;
  CHECK(ll::effective_pruning_profile(loop.host, ask)->name == "mine");
  CHECK(ll::effective_pruning_profile(loop.host, run)->name == "ours");
  CHECK(ll::automation_profile_of(loop.host, ask) == "mine");
  CHECK(ll::effective_session_mode(loop.host, ask) == ll::session_mode::continued);
  CHECK(ll::effective_session_mode(ll::loop_host_settings{}, ask) == ll::session_mode::fresh);
  ll::loop_host_settings disabled;
  disabled.pruning = ll::pruning_profile{};
  disabled.pruning->enabled = false;
  CHECK(ll::automation_profile_of(disabled, run).empty());
}

TEST_CASE("the host keys are read strictly") {
  SUBCASE("an unknown pruning_profile member is an error with a did-you-mean") {
    const auto errors = host_errors(host_loop(R"("pruning_profile": {"nmae": "x"},)"));
    const auto* d = find_diagnostic(errors, "states.ask.pruning_profile.nmae", "unknown-key");
    REQUIRE(d);
    CHECK(d->message.find("did you mean \"name\"") != std::string::npos);
  }
  SUBCASE("wrong types are diagnosed at their path") {
    const auto errors = host_errors(host_loop(
        R"("agent": 3, "pruning_profile": {"enabled": "yes"}, "session_mode": true,)"));
    INFO(dump_all(errors));
    CHECK(find_diagnostic(errors, "states.ask.agent", "wrong-type"));
    CHECK(find_diagnostic(errors, "states.ask.pruning_profile.enabled", "wrong-type"));
    CHECK(find_diagnostic(errors, "states.ask.session_mode", "wrong-type"));
  }
  SUBCASE("a session mode other than fresh or continue is an error") {
    const auto errors = host_errors(host_loop("", R"("session_mode": "continued",)"));
    const auto* d = find_diagnostic(errors, "session_mode", "unknown-value");
    REQUIRE(d);
    CHECK(d->message.find("did you mean \"continue\"") != std::string::npos);
  }
  SUBCASE("an empty agent or profile name is an error") {
    const auto errors = host_errors(host_loop(R"("agent": "", "pruning_profile": {"name": ""},)"));
    CHECK(find_diagnostic(errors, "states.ask.agent", "empty-value"));
    CHECK(find_diagnostic(errors, "states.ask.pruning_profile.name", "empty-value"));
  }
  SUBCASE("pruning_profile must be an object; null leaves it unset") {
    CHECK(find_diagnostic(host_errors(host_loop(R"("pruning_profile": "tight",)")),
                          "states.ask.pruning_profile", "wrong-type"));
    CHECK_FALSE(host_parsed(host_loop("", R"("pruning_profile": null,)")).host.pruning);
  }
  SUBCASE("a misspelt host key gets a did-you-mean") {
    const auto errors = host_errors(host_loop(R"("agnet": "x",)"));
    const auto* d = find_diagnostic(errors, "states.ask.agnet", "unknown-key");
    REQUIRE(d);
    CHECK(d->message.find("did you mean \"agent\"") != std::string::npos);
  }
}

TEST_CASE("validation: host keys on states without a prompt action are unused") {
  const auto found = ll::validate(host_parsed(host_loop(
      "", "", R"("agent": "a", "session_mode": "continue", "pruning_profile": {},)")));
  INFO(dump_all(found));
  CHECK(find_diagnostic(found, "states.run.agent", "unused-state-field"));
  CHECK(find_diagnostic(found, "states.run.session_mode", "unused-state-field"));
  CHECK(find_diagnostic(found, "states.run.pruning_profile", "unused-state-field"));
  CHECK_FALSE(find_diagnostic(found, "states.ask.agent", "unused-state-field"));
}

TEST_CASE("validation: the reference's pruning-profile warnings (MR-12) and pruning_profile_ok") {
  SUBCASE("a /ll: skill under no profile") {
    const auto found = ll::validate(host_parsed(host_loop("")));
    const auto* d = find_diagnostic(found, "states.ask.pruning_profile", "pruning-profile-missing");
    REQUIRE(d);
    CHECK(d->level == ll::severity::warning);
    CHECK(d->message.find("/ll:fix") != std::string::npos);
    CHECK_FALSE(find_diagnostic(found, "states.run.pruning_profile", "pruning-profile-missing"));
  }
  SUBCASE("a /ll: skill under a catalog-suppressing profile (the loop's)") {
    const auto found = ll::validate(host_parsed(host_loop("", R"("pruning_profile": {"suppress_catalog": true},)")));
    CHECK(find_diagnostic(found, "states.ask.action", "pruning-profile-catalog"));
    CHECK_FALSE(find_diagnostic(found, "states.ask.pruning_profile", "pruning-profile-missing"));
  }
  SUBCASE("a disabled profile suppresses nothing but still counts as one") {
    const auto found = ll::validate(host_parsed(host_loop(R"("pruning_profile": {"enabled": false, "suppress_catalog": true},)")));
    CHECK_FALSE(find_diagnostic(found, "states.ask.action", "pruning-profile-catalog"));
    CHECK_FALSE(find_diagnostic(found, "states.ask.pruning_profile", "pruning-profile-missing"));
  }
  SUBCASE("pruning_profile_ok silences both") {
    const auto found = ll::validate(host_parsed(host_loop(
        R"("pruning_profile": {"suppress_catalog": true},)", R"("pruning_profile_ok": true,)")));
    CHECK_FALSE(find_diagnostic(found, "states.ask.action", "pruning-profile-catalog"));
    const auto none = ll::validate(host_parsed(host_loop("", R"("pruning_profile_ok": true,)")));
    CHECK_FALSE(find_diagnostic(none, "states.ask.pruning_profile", "pruning-profile-missing"));
  }
  SUBCASE("only an action that starts with / invokes a skill") {
    const auto skill = [](std::string action) {
      ll::state_config state;
      state.action = std::move(action);
      return std::string(ll::detail::invoked_skill(state));
    };
    CHECK(skill("  /ll:go-on now") == "go-on");
    CHECK(skill("/x then /ll:y") == "y");
    CHECK(skill("run /ll:y").empty());
    CHECK(skill("/ll: y").empty());
  }
}

TEST_CASE("validation: an llm_structured state that continues a session, and session_mode_ok") {
  auto doc = host_loop("", R"("pruning_profile_ok": true,)");
  doc["states"]["ask"].erase("next");
  doc["states"]["ask"]["session_mode"] = "continue";
  doc["states"]["ask"]["evaluate"] = json{{"type", "llm_structured"}};
  doc["states"]["ask"]["on_yes"] = "run";
  doc["states"]["ask"]["on_no"] = "run";
  doc["states"]["ask"]["on_error"] = "run";
  const auto found = ll::validate(host_parsed(doc));
  INFO(dump_all(found));
  const auto* d = find_diagnostic(found, "states.ask.session_mode", "session-mode-evaluator");
  REQUIRE(d);
  CHECK(d->level == ll::severity::warning);
  doc["session_mode_ok"] = true;
  CHECK_FALSE(find_diagnostic(ll::validate(host_parsed(doc)), "states.ask.session_mode", "session-mode-evaluator"));
  doc["states"]["ask"]["session_mode"] = "fresh";
  doc["session_mode"] = "continue";
  doc.erase("session_mode_ok");
  CHECK_FALSE(find_diagnostic(ll::validate(host_parsed(doc)), "states.ask.session_mode", "session-mode-evaluator"));
}

TEST_CASE("show and validate --json report the host settings as they take effect") {
  const auto loop = host_parsed(host_loop(R"("agent": "reviewer",)",
                                     R"("pruning_profile": {"name": "ci"}, "session_mode": "continue",)"));
  const std::string preview = ll::render_preview(loop);
  CHECK(preview.find("Host settings:\n  ask: agent reviewer, automation profile ci, session continue\n") !=
        std::string::npos);
  // a shell state asks nothing
  CHECK(preview.substr(preview.find("Host settings:")).find("  run:") == std::string::npos);
  const json j = ll::render_host_settings_json(loop);
  CHECK(j["states"]["ask"]["agent"] == "reviewer");
  CHECK(j["states"]["ask"]["automation_profile"] == "ci");
  CHECK(j["states"]["ask"]["pruning_profile"] == json{{"name", "ci"}});
  CHECK(j["states"]["ask"]["session_mode"] == "continue");
  CHECK_FALSE(j["states"].contains("run"));
}

TEST_CASE("mcp_tool actions: params are read, checked and shown") {
  const json doc = json::parse(R"({"name": "m", "initial": "call", "states": {
    "call": {"action": "playwright/screenshot", "action_type": "mcp_tool",
             "params": {"url": "http://localhost:${context.port:default=3000}", "shots": [1, "${state.name}"]},
             "route": {"success": "done", "tool_error": "done", "not_found": "done", "timeout": "done"}},
    "done": {"terminal": true}}})");
  const auto loop = host_parsed(doc);
  const auto& call = loop.states.at("call");
  CHECK(call.action_type == ll::action_kind::mcp_tool);
  REQUIRE(call.host.params);
  CHECK((*call.host.params)["shots"][0] == 1);
  json written;
  ll::to_json(written, loop);
  CHECK(written["states"]["call"]["params"] == doc["states"]["call"]["params"]);
  CHECK(host_parsed(written) == loop);
  const auto found = ll::validate(loop);
  INFO(dump_all(found));
  CHECK(ll::detail::count_errors(found) == 0);
  // mcp_result's verdicts are known: `error` (a killed call) is the one left unrouted.
  const auto* unrouted = find_diagnostic(found, "states.call", "unrouted-verdict");
  REQUIRE(unrouted);
  CHECK(unrouted->message.find("\"error\"") != std::string::npos);
  CHECK(ll::render_host_settings_json(loop)["states"]["call"]["params"] == doc["states"]["call"]["params"]);
  CHECK(ll::render_preview(loop).find("  call: params {\"url\":") != std::string::npos);

  SUBCASE("params must be an object") {
    auto bad = doc;
    bad["states"]["call"]["params"] = "url=x";
    CHECK(find_diagnostic(host_errors(bad), "states.call.params", "wrong-type"));
  }
  SUBCASE("params are only for mcp_tool actions (an error, as in the reference)") {
    auto bad = doc;
    bad["states"]["call"]["action_type"] = "shell";
    const auto errors = ll::validate(host_parsed(bad));
    const auto* d = find_diagnostic(errors, "states.call.params", "params-without-mcp");
    REQUIRE(d);
    CHECK(d->level == ll::severity::error);
  }
  SUBCASE("the strings in params are checked as templates") {
    auto bad = doc;
    bad["states"]["call"]["params"]["url"] = "${nowhere.x}";
    const auto errors = ll::validate(host_parsed(bad));
    INFO(dump_all(errors));
    CHECK(find_diagnostic(errors, "states.call.params.url", "template-unknown-namespace"));
  }
  SUBCASE("an mcp_tool state asks no agent, profile or session") {
    auto odd = doc;
    odd["states"]["call"]["agent"] = "a";
    CHECK(find_diagnostic(ll::validate(host_parsed(odd)), "states.call.agent", "unused-state-field"));
  }
}
