// little_loops — tests of the command judge backend (judges/command_judge.hpp)
// SPDX-License-Identifier: MIT
#include <little_loops/judges/command_judge.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace ll = little_loops;
using namespace std::chrono_literals;

namespace {

ll::command_judge shell_judge(std::string script) {
  ll::command_judge_options opts;
  opts.command = {"/bin/sh", "-c", std::move(script), "fake-claude", "{model}", "{schema}",
                  "--max={max_tokens}"};
  return ll::command_judge(opts);
}

ll::judge_request request(std::string_view prompt, const ll::json* schema = nullptr) {
  ll::judge_request r;
  r.prompt = prompt;
  r.model = "sonnet";
  r.max_tokens = 99;
  r.schema = schema;
  r.timeout = 10s;
  return r;
}

}  // namespace

TEST_CASE("command_judge models JudgeBackend and defaults to the Claude CLI call") {
  static_assert(ll::JudgeBackend<ll::command_judge>);
  const ll::command_judge judge;
  const auto& cmd = judge.options().command;
  REQUIRE(cmd.size() >= 2);
  CHECK(cmd[0] == "claude");
  CHECK(cmd[1] == "-p");
  CHECK(std::find(cmd.begin(), cmd.end(), "{model}") != cmd.end());
  CHECK(std::find(cmd.begin(), cmd.end(), "{schema}") != cmd.end());
}

TEST_CASE("the prompt goes to stdin, placeholders are substituted, stdout is the reply") {
  const ll::json schema = {{"type", "object"}};
  auto judge = shell_judge(R"(printf 'args=%s|%s|%s\n' "$1" "$2" "$3"; printf 'stdin='; cat)");
  const std::string prompt = "Judge this.\n\n<action_output>\nok\n</action_output>";
  auto reply = judge.ask(request(prompt, &schema));
  REQUIRE(reply.has_value());
  CHECK(*reply == "args=sonnet|{\"type\":\"object\"}|--max=99\nstdin=" + prompt);
}

TEST_CASE("the reply feeds the library's llm_structured evaluation") {
  auto judge = shell_judge(
      R"(cat > /dev/null; echo '{"type":"result","is_error":false,"result":"{\"verdict\":\"success\",\"confidence\":0.9,\"reason\":\"fine\"}"}')");
  ll::llm_config llm;
  auto result = ll::evaluate_llm_structured(judge, "all tests passed", "", nullptr, 0.5, false, llm);
  CHECK(result.verdict == "success");
  CHECK(result.details["reason"] == "fine");
}

TEST_CASE("typed failures") {
  SUBCASE("non-zero exit carries stderr") {
    auto judge = shell_judge("cat >/dev/null; echo 'rate limited' >&2; exit 3");
    auto r = judge.ask(request("p"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ll::judge_errc::failed);
    CHECK(r.error().message.find("status 3") != std::string::npos);
    CHECK(r.error().message.find("rate limited") != std::string::npos);
  }
  SUBCASE("timeout") {
    ll::command_judge_options opts;
    opts.command = {"/bin/sh", "-c", "sleep 30"};
    opts.timeout = 200ms;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = ll::command_judge(opts).ask(request("p"));
    CHECK(std::chrono::steady_clock::now() - t0 < 5s);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ll::judge_errc::timeout);
    ll::llm_config llm;
    ll::command_judge slow(opts);
    auto e = ll::evaluate_llm_structured(slow, "out", "", nullptr, 0.5, false, llm);
    CHECK(e.verdict == "error");
    CHECK(e.details["error"] == "LLM evaluation timeout");
    CHECK(e.details["timeout"] == true);
    CHECK(e.details["reason"] == "LLM evaluation timeout: judge timed out: /bin/sh did not answer within 200 ms");
  }
  SUBCASE("program not installed") {
    ll::command_judge_options opts;
    opts.command = {"little-loops-no-such-claude-cli", "-p"};
    auto r = ll::command_judge(opts).ask(request("p"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ll::judge_errc::unavailable);
    CHECK(r.error().message.rfind("little-loops-no-such-claude-cli CLI not found (cannot run", 0) == 0);
    // The original's words when the Claude CLI is missing.
    opts.command = {"/nonexistent/claude", "-p"};
    auto c = ll::command_judge(opts).ask(request("p"));
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message.rfind("claude CLI not found. Install from "
                                  "https://docs.anthropic.com/en/docs/claude-code (cannot run", 0) == 0);
  }
  SUBCASE("empty output") {
    auto r = shell_judge("cat >/dev/null; echo '   '; echo ' warn ' >&2").ask(request("p"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ll::judge_errc::empty_output);
    CHECK(r.error().message == "/bin/sh returned empty output (stderr: warn)");
    ll::llm_config llm;
    auto judge = shell_judge("cat >/dev/null; echo '   '");
    auto e = ll::evaluate_llm_structured(judge, "out", "", nullptr, 0.5, false, llm);
    CHECK(e.verdict == "error");
    CHECK(e.details["error"] == "/bin/sh returned empty output");
    CHECK(e.details["empty_output"] == true);
  }
  SUBCASE("error envelope") {
    auto r = shell_judge(R"(cat >/dev/null; echo '{"is_error":true,"result":"API overloaded"}')").ask(request("p"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ll::judge_errc::failed);
    CHECK(r.error().message == "judge reported an error: API overloaded");
  }
  SUBCASE("error envelope: any truthy is_error, or the last line of a JSONL stream") {
    auto s = shell_judge(R"(cat >/dev/null; echo '{"is_error":"yes","result":"quota"}')").ask(request("p"));
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().message == "judge reported an error: quota");
    auto l = shell_judge(
        R"(cat >/dev/null; echo '{"type":"system"}'; echo '{"is_error":true,"result":"quota"}'; echo)")
        .ask(request("p"));
    REQUIRE_FALSE(l.has_value());
    CHECK(l.error().kind == ll::judge_errc::failed);
    CHECK(l.error().message == "judge reported an error: quota");
  }
  SUBCASE("oversized reply") {
    ll::command_judge_options opts;
    opts.command = {"/bin/sh", "-c", "cat >/dev/null; head -c 5000 /dev/zero"};
    opts.max_reply_bytes = 1000;
    auto r = ll::command_judge(opts).ask(request("p"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ll::judge_errc::malformed);
  }
  SUBCASE("cancelled") {
    std::stop_source source;
    source.request_stop();
    ll::command_judge_options opts;
    opts.command = {"/bin/sh", "-c", "sleep 30"};
    opts.stop = source.get_token();
    auto r = ll::command_judge(opts).ask(request("p"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ll::judge_errc::failed);
  }
}

TEST_CASE("a judge that ignores its stdin does not hang or kill the host") {
  const std::string big(1 << 20, 'p');  // more than a pipe holds
  auto r = shell_judge("exec 0<&-; echo '{\"verdict\":\"success\"}'").ask(request(big));
  REQUIRE(r.has_value());
  CHECK(r->find("success") != std::string::npos);
}
