// little_loops — tests: the LLM judge (seed 003 behaviour, fail closed)
// SPDX-License-Identifier: MIT
#include <little_loops/evaluators.hpp>

#include <doctest/doctest.h>

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ll = little_loops;

namespace {

// A backend scripted with one reply per call; records what it was asked.
struct scripted_judge {
  std::deque<ll::expected<std::string, ll::judge_error>> replies;
  std::vector<std::string> prompts;
  std::vector<std::string> tails;
  std::vector<std::string> models;
  std::vector<ll::json> schemas;
  std::vector<std::chrono::milliseconds> timeouts;

  ll::expected<std::string, ll::judge_error> ask(const ll::judge_request& r) {
    prompts.emplace_back(r.prompt);
    tails.emplace_back(r.output_tail);
    models.emplace_back(r.model);
    schemas.push_back(*r.schema);
    timeouts.push_back(r.timeout);
    REQUIRE_FALSE(replies.empty());
    auto next = std::move(replies.front());
    replies.pop_front();
    return next;
  }
};

static_assert(ll::JudgeBackend<scripted_judge>);

struct not_a_judge {
  int ask(const ll::judge_request&) { return 0; }
};
static_assert(!ll::JudgeBackend<not_a_judge>);

ll::evaluation_result judge_once(ll::expected<std::string, ll::judge_error> reply,
                                 ll::evaluate_config c = {}, ll::llm_config llm = {},
                                 std::string output = "worker did the thing",
                                 scripted_judge* out = nullptr) {
  c.type = ll::evaluator_type::llm_structured;
  ll::basic_evaluator<scripted_judge> e;
  e.judge().replies.push_back(std::move(reply));
  ll::action_result action;
  action.output = std::move(output);
  auto compiled = ll::compile_evaluator(c);
  REQUIRE(compiled);
  ll::evaluation_request req;
  req.config = &c;
  req.compiled = &*compiled;
  req.action = &action;
  req.kind = ll::action_kind::prompt;
  req.llm = &llm;
  auto r = e.evaluate(req);
  REQUIRE(r);
  if (out) *out = e.judge();
  return *r;
}

std::string ok(std::string s) { return s; }

}  // namespace

TEST_SUITE("llm_judge") {
  TEST_CASE("parse: bare verdict objects") {
    auto r = ll::parse_judge_reply(R"({"verdict":"success","confidence":0.9,"reason":"ok"})");
    CHECK(r.error.empty());
    CHECK(r.object["verdict"] == "success");
    auto f = ll::parse_judge_reply(R"({"verdict":"failure","reasons":["a","b"]})");
    CHECK(f.error.empty());
    CHECK(f.object["reasons"].size() == 2);
    CHECK(ll::parse_judge_reply(R"(  {"verdict":"partial"}  )").error.empty());
  }

  TEST_CASE("parse: fenced JSON") {
    auto r = ll::parse_judge_reply("```json\n{\"verdict\":\"success\",\"reason\":\"x\"}\n```");
    CHECK(r.error.empty());
    CHECK(r.object["verdict"] == "success");
  }

  TEST_CASE("parse: JSON after a preamble, braces inside strings") {
    auto r = ll::parse_judge_reply(
        "Sure {not json} here is my verdict:\n{\"verdict\": \"failure\", \"reason\": \"a } "
        "inside and a \\\" quote {\"}\nThanks!");
    CHECK(r.error.empty());
    CHECK(r.object["verdict"] == "failure");
    CHECK(r.object["reason"] == "a } inside and a \" quote {");
  }

  TEST_CASE("parse: several candidates") {
    auto agree = ll::parse_judge_reply(
        R"(first {"verdict":"success","confidence":0.9} then {"verdict":"success","confidence":"0.9"})");
    CHECK(agree.error.empty());
    CHECK(agree.object["confidence"] == 0.9);
    CHECK(ll::parse_judge_reply(R"({"verdict":"pass"} and again {"verdict":"pass","confidence":1})")
              .error.empty());
    auto disagree = ll::parse_judge_reply(
        R"(maybe {"verdict":"success"} or rather {"verdict":"failure"})");
    CHECK_FALSE(disagree.error.empty());
    CHECK(disagree.error.find("disagreeing") != std::string::npos);
    // The same verdict with other confidences is a disagreement too: with min_confidence 0.5
    // and uncertain_suffix, one says `success`, the other `success_uncertain`, and the
    // result must not depend on which comes first.
    for (const char* reply : {R"({"verdict":"success","confidence":0.9} {"verdict":"success","confidence":0.1})",
                              R"({"verdict":"success","confidence":0.1} {"verdict":"success","confidence":0.9})",
                              R"({"verdict":"success"} {"verdict":"success","confidence":0.2})",
                              R"({"verdict":"success","confidence":0.9} {"verdict":"success","confidence":null})"}) {
      CAPTURE(reply);
      auto r = ll::parse_judge_reply(reply);
      CHECK(r.error.find("disagreeing confidences") != std::string::npos);
      auto v = ll::judge_verdict(reply, 0.5, true);
      CHECK(v.verdict == "error");
      CHECK(v.details["malformed"] == true);
    }
    auto with_noise = ll::parse_judge_reply(R"({"note": 1} {"verdict":"blocked"})");
    CHECK(with_noise.error.empty());
    CHECK(with_noise.object["verdict"] == "blocked");
  }

  TEST_CASE("parse: garbage fails closed") {
    CHECK_FALSE(ll::parse_judge_reply("yes it passes").error.empty());
    CHECK_FALSE(ll::parse_judge_reply("").error.empty());
    CHECK_FALSE(ll::parse_judge_reply("   \n").error.empty());
    CHECK_FALSE(ll::parse_judge_reply("{not_json").error.empty());
    CHECK_FALSE(ll::parse_judge_reply(R"({"result": "fine"})").error.empty());
    CHECK(ll::parse_judge_reply(R"({"result": "", "is_error": false})").error ==
          "Empty result field in Claude CLI response");  // the original's words
    CHECK_FALSE(ll::parse_judge_reply(R"({"verdict": 1})").error.empty());
    CHECK_FALSE(ll::parse_judge_reply(std::string(100000, '{')).error.empty());
  }

  TEST_CASE("parse: a reply that repeats a key it is read by fails closed") {
    // A JSON parser keeps the last of two equal keys, so `fail` then `pass` would read as a
    // pass; seed 003's parser rejects the reply (serde: duplicate field), and so do we.
    for (const char* reply : {R"({"verdict":"fail","verdict":"pass"})",
                              R"({"verdict":"pass","verdict":"fail"})",
                              R"(Answer: {"verdict":"fail","reasons":["a"],"reasons":[]})",
                              R"({"verdict":"pass","confidence":0.1,"confidence":0.9})",
                              R"({"verdict":"fail","reason":"x","reason":""})",
                              R"({"is_error":true,"is_error":false,"result":"{\"verdict\":\"pass\"}"})",
                              R"({"structured_output":{"verdict":"fail","verdict":"pass"}})",
                              R"({"result":"{\"verdict\":\"fail\",\"verdict\":\"pass\"}"})"}) {
      CAPTURE(reply);
      auto r = ll::parse_judge_reply(reply);
      CHECK(r.error.find("judge reply repeats the key") != std::string::npos);
      auto v = ll::judge_verdict(reply, 0.5, false);
      CHECK(v.verdict == "error");
      CHECK(v.details["malformed"] == true);
    }
    CHECK(ll::parse_judge_reply(R"({"verdict":"fail","verdict":"pass"})").error ==
          "judge reply repeats the key \"verdict\"");
    // Other keys may repeat (the answer does not depend on them), and the same key in two
    // objects is no repetition.
    auto other = ll::parse_judge_reply(R"({"verdict":"pass","note":1,"note":2,"meta":{"verdict":"x"}})");
    CHECK(other.error.empty());
    CHECK(other.object["verdict"] == "pass");
  }

  TEST_CASE("parse: CLI envelopes") {
    auto s = ll::parse_judge_reply(
        R"({"type":"result","is_error":false,"result":"{\"verdict\":\"success\",\"confidence\":0.8}"})");
    CHECK(s.error.empty());
    CHECK(s.object["verdict"] == "success");
    auto o = ll::parse_judge_reply(R"({"structured_output":{"verdict":"partial"}})");
    CHECK(o.error.empty());
    CHECK(o.object["verdict"] == "partial");
    // Both keys are read: agreeing candidates are one answer; disagreeing ones fail closed
    // (the `structured_output` does not silently win over the `result` text).
    auto both = ll::parse_judge_reply(
        R"({"result":"{\"verdict\":\"success\"}","structured_output":{"verdict":"success"}})");
    CHECK(both.error.empty());
    CHECK(both.object["verdict"] == "success");
    auto disagree = ll::parse_judge_reply(
        R"({"result":"{\"verdict\":\"failure\",\"reason\":\"tests fail\"}",)"
        R"("structured_output":{"verdict":"success","reason":"ok"}})");
    CHECK_FALSE(disagree.error.empty());
    CHECK(disagree.error.find("disagree") != std::string::npos);
    // A `result` that is prose beside a `structured_output` answer is no candidate.
    auto prose = ll::parse_judge_reply(
        R"({"result":"Done.","structured_output":{"verdict":"partial"}})");
    CHECK(prose.error.empty());
    CHECK(prose.object["verdict"] == "partial");
    for (const char* falsy : {"false", "null", "0", "\"\"", "[]"}) {
      auto f = ll::parse_judge_reply(std::string(R"({"is_error":)") + falsy +
                                     R"(,"result":"{\"verdict\":\"success\"}"})");
      CHECK_MESSAGE(f.error.empty(), falsy);
      CHECK_FALSE(f.backend_error);
    }
  }

  TEST_CASE("parse: a CLI envelope reporting an error fails closed, whatever it wraps") {
    // `is_error` is read as the original read it: any truthy value.
    for (const char* truthy : {"true", "\"yes\"", "1", "[1]"}) {
      auto e = ll::parse_judge_reply(std::string(R"({"is_error":)") + truthy +
                                     R"(,"result":"{\"verdict\":\"success\"}"})");
      CHECK_MESSAGE(e.backend_error, truthy);
      CHECK(e.error == R"(judge reported an error: {"verdict":"success"})");
    }
    auto plain = ll::parse_judge_reply(R"({"is_error":true,"result":"  API overloaded\n"})");
    CHECK(plain.error == "judge reported an error: API overloaded");
    auto no_text = ll::parse_judge_reply(R"({"is_error":true})");
    CHECK(no_text.error == "judge reported an error: ");
    // A JSONL stream whose last line is the error envelope.
    auto stream = ll::parse_judge_reply(
        "{\"type\":\"system\"}\n{\"type\":\"result\",\"is_error\":true,\"result\":\"quota\"}\n");
    CHECK(stream.backend_error);
    CHECK(stream.error == "judge reported an error: quota");
    // Even an object that carries a verdict.
    CHECK(ll::parse_judge_reply(R"({"verdict":"success","is_error":true})").backend_error);
    // The text is cut to 200 bytes.
    auto longer = ll::parse_judge_reply(R"({"is_error":true,"result":")" + std::string(500, 'x') + "\"}");
    CHECK(longer.error == "judge reported an error: " + std::string(200, 'x'));
  }

  TEST_CASE("parse: prose or code with many braces before the verdict is still searched") {
    std::string reply;
    for (int i = 0; i < 300; ++i) reply += "if (x) { y(); }\n";
    reply += "```json\n{\"verdict\":\"success\"}\n```\n";
    auto r = ll::parse_judge_reply(reply);
    CHECK(r.error.empty());
    CHECK(r.object["verdict"] == "success");
    std::string braces;
    for (int i = 0; i < 100; ++i) braces += "{x} ";
    CHECK(ll::parse_judge_reply(braces + R"({"verdict":"failure"})").object["verdict"] == "failure");
    // Nested and unbalanced starts stay bounded (linear) and fail closed.
    CHECK_FALSE(ll::parse_judge_reply(std::string(50000, '{') + std::string(50000, '}')).error.empty());
    CHECK_FALSE(ll::parse_judge_reply(std::string(100000, '{') + R"({"verdict":"x"})").error.empty());
  }

  TEST_CASE("evaluate: verdict, confidence and details") {
    auto r = judge_once(ok(R"({"verdict":"success","confidence":0.9,"reason":"looks done"})"));
    CHECK(r.verdict == "success");
    CHECK(r.details["confidence"] == 0.9);
    CHECK(r.details["confident"] == true);
    CHECK(r.details["reason"] == "looks done");
    CHECK(r.details["raw"]["verdict"] == "success");
    auto missing_conf = judge_once(ok(R"({"verdict":"failure"})"));
    CHECK(missing_conf.verdict == "failure");
    CHECK(missing_conf.details["confidence"] == 1.0);
    CHECK(missing_conf.details["reason"] == "");
    // Seed 003's shape: `reasons` joined when there is no `reason`.
    auto reasons = judge_once(ok(R"({"verdict":"fail","reasons":["null check absent","no regression test"]})"));
    CHECK(reasons.verdict == "fail");
    CHECK(reasons.details["reason"] == "null check absent; no regression test");
    CHECK(judge_once(ok(R"({"verdict":"pass","reasons":[]})")).details["reason"] == "");
    CHECK(judge_once(ok(R"({"verdict":"fail","reason":"r","reasons":["x"]})")).details["reason"] == "r");
  }

  TEST_CASE("evaluate: min_confidence and uncertain_suffix") {
    ll::evaluate_config c;
    c.min_confidence = 0.7;
    auto plain = judge_once(ok(R"({"verdict":"success","confidence":0.5,"reason":"?"})"), c);
    CHECK(plain.verdict == "success");
    CHECK(plain.details["confident"] == false);
    c.uncertain_suffix = true;
    auto unsure = judge_once(ok(R"({"verdict":"success","confidence":0.5,"reason":"?"})"), c);
    CHECK(unsure.verdict == "success_uncertain");
    auto sure = judge_once(ok(R"({"verdict":"failure","confidence":0.7,"reason":"?"})"), c);
    CHECK(sure.verdict == "failure");
    auto str_conf = judge_once(ok(R"({"verdict":"failure","confidence":"0.2"})"), c);
    CHECK(str_conf.verdict == "failure_uncertain");
    auto bad_conf = judge_once(ok(R"({"verdict":"failure","confidence":"very"})"), c);
    CHECK(bad_conf.verdict == "error");
    // Only an absent confidence counts as 1.0: a null one must not pass min_confidence.
    auto null_conf = judge_once(ok(R"({"verdict":"success","confidence":null,"reason":"r"})"), c);
    CHECK(null_conf.verdict == "error");
    CHECK(null_conf.details["error"] ==
          "Failed to parse LLM response: confidence is not a number");
    CHECK(null_conf.details["malformed"] == true);
  }

  TEST_CASE("evaluate: fail closed") {
    auto timeout = judge_once(ll::unexpected(ll::judge_error{ll::judge_errc::timeout, ""}));
    CHECK(timeout.verdict == "error");
    CHECK(timeout.details["error"] == "LLM evaluation timeout");
    CHECK(timeout.details["timeout"] == true);
    CHECK(timeout.details["reason"] == "LLM evaluation timeout: judge timed out");
    auto said = judge_once(
        ll::unexpected(ll::judge_error{ll::judge_errc::timeout, "claude did not answer in 30 s"}));
    CHECK(said.details["error"] == "LLM evaluation timeout");  // exactly, whatever the backend says
    CHECK(said.details["reason"] ==
          "LLM evaluation timeout: judge timed out: claude did not answer in 30 s");
    auto empty = judge_once(ll::unexpected(
        ll::judge_error{ll::judge_errc::empty_output, "claude returned empty output (stderr: 429)"}));
    CHECK(empty.verdict == "error");
    CHECK(empty.details["error"] == "claude returned empty output (stderr: 429)");
    CHECK(empty.details["empty_output"] == true);
    for (const char* blank : {"", "  \n\t"}) {
      auto b = judge_once(ok(blank));
      CHECK(b.verdict == "error");
      CHECK(b.details["error"] == "judge returned empty output");
      CHECK(b.details["empty_output"] == true);
    }
    auto envelope = judge_once(ok(R"({"is_error":true,"result":"Overloaded"})"));
    CHECK(envelope.verdict == "error");
    CHECK(envelope.details["error"] == "judge reported an error: Overloaded");
    CHECK(envelope.details["api_error"] == true);
    auto failed = judge_once(ll::unexpected(ll::judge_error{ll::judge_errc::failed, "HTTP 500"}));
    CHECK(failed.verdict == "error");
    CHECK(failed.details["error"] == "judge backend error: HTTP 500");
    CHECK(failed.details["reason"] == "judge unavailable: judge LLM call failed: HTTP 500");
    auto garbage = judge_once(ok("yeah looks good to me"));
    CHECK(garbage.verdict == "error");
    CHECK(garbage.details["error"].get<std::string>().find("Failed to parse LLM response") == 0);
    CHECK(garbage.details["raw_preview"] == "yeah looks good to me");
    CHECK(garbage.details["error"] == "Failed to parse LLM response: no JSON object in judge reply");
    CHECK(garbage.details["reason"] ==
          "judge produced malformed JSON: no JSON object in judge reply");
    CHECK(judge_once(ok("")).verdict == "error");
    CHECK(judge_once(ok(R"({"verdict":"success"} {"verdict":"failure"})")).verdict == "error");
    CHECK(judge_once(ok(R"({"confidence":0.9})")).verdict == "error");
  }

  TEST_CASE("evaluate: llm disabled, no backend") {
    ll::llm_config off;
    off.enabled = false;
    auto r = judge_once(ok(R"({"verdict":"success"})"), {}, off);
    CHECK(r.verdict == "error");
    CHECK(r.details["error"] == "LLM evaluation disabled");
    ll::default_evaluator d;
    ll::evaluate_config c;
    c.type = ll::evaluator_type::llm_structured;
    ll::evaluation_request req;
    ll::action_result a;
    req.config = &c;
    req.action = &a;
    auto n = d.evaluate(req);
    REQUIRE(n);
    CHECK(n->verdict == "error");
    CHECK(n->details["error"] == "no judge backend");
  }

  TEST_CASE("prompt building: default prompt, schema, tail, model") {
    scripted_judge seen;
    ll::llm_config llm;
    llm.model = "haiku";
    llm.timeout = 12.5;
    std::string output = std::string(5000, 'a') + std::string(3000, 'b');
    judge_once(ok(R"({"verdict":"success"})"), {}, llm, output, &seen);
    REQUIRE(seen.prompts.size() == 1);
    CHECK(seen.tails[0].size() == 4000);
    CHECK(seen.tails[0] == std::string(1000, 'a') + std::string(3000, 'b'));
    CHECK(seen.prompts[0] == "Evaluate whether this action succeeded based on its output."
                             "\n\n<action_output>\n" + seen.tails[0] + "\n</action_output>");
    CHECK(seen.models[0] == "haiku");
    CHECK(seen.timeouts[0] == std::chrono::milliseconds(12500));
    CHECK(seen.schemas[0]["properties"]["verdict"]["enum"] ==
          ll::json::array({"success", "failure", "blocked", "partial"}));
    CHECK(seen.schemas[0]["required"] == ll::json::array({"verdict", "confidence", "reason"}));
  }

  TEST_CASE("prompt building: custom templated prompt and schema; UTF-8 tail") {
    scripted_judge seen;
    ll::evaluate_config c;
    c.prompt = "Did ${state.name} succeed?";
    c.schema = ll::json{{"type", "object"}};
    c.type = ll::evaluator_type::llm_structured;
    ll::basic_evaluator<scripted_judge> e;
    e.judge().replies.push_back(ok(R"({"verdict":"yes"})"));
    ll::action_result action;
    std::string euro = "\xe2\x82\xac";  // 3 bytes, 1 character
    for (int i = 0; i < 4100; ++i) action.output += euro;
    ll::interpolation_context ctx;
    ctx.state_name = "build";
    auto compiled = ll::compile_evaluator(c);
    REQUIRE(compiled);
    ll::evaluation_request req;
    req.config = &c;
    req.compiled = &*compiled;
    req.action = &action;
    req.context = &ctx;
    auto r = e.evaluate(req);
    REQUIRE(r);
    CHECK(r->verdict == "yes");
    CHECK(e.judge().prompts[0].rfind("Did build succeed?\n\n<action_output>\n", 0) == 0);
    CHECK(e.judge().tails[0].size() == 4000 * 3);
    CHECK(e.judge().schemas[0] == ll::json{{"type", "object"}});
    CHECK(ll::build_judge_prompt("P", "out") == "P\n\n<action_output>\nout\n</action_output>");
  }

  TEST_CASE("the loop's deadline bounds the judge (evaluation_request::time_left)") {
    ll::evaluate_config c;
    c.type = ll::evaluator_type::llm_structured;
    auto compiled = ll::compile_evaluator(c);
    REQUIRE(compiled);
    ll::action_result action;
    action.output = "done";
    ll::llm_config llm;
    llm.timeout = 60;
    const auto ask = [&](std::optional<std::chrono::milliseconds> left, scripted_judge& seen) {
      ll::basic_evaluator<scripted_judge> e;
      e.judge().replies.push_back(ok(R"({"verdict":"success"})"));
      ll::evaluation_request req;
      req.config = &c;
      req.compiled = &*compiled;
      req.action = &action;
      req.llm = &llm;
      req.time_left = left;
      auto r = e.evaluate(req);
      REQUIRE(r);
      seen = e.judge();
      return *r;
    };
    scripted_judge seen;
    CHECK(ask(std::chrono::milliseconds(2500), seen).verdict == "success");
    REQUIRE(seen.timeouts.size() == 1);
    CHECK(seen.timeouts[0] == std::chrono::milliseconds(2500));  // less than llm.timeout
    CHECK(ask(std::chrono::milliseconds(90000), seen).verdict == "success");
    CHECK(seen.timeouts[0] == std::chrono::milliseconds(60000));  // llm.timeout is less
    CHECK(ask(std::nullopt, seen).verdict == "success");
    CHECK(seen.timeouts[0] == std::chrono::milliseconds(60000));
    // No time left: the judge is not asked; the verdict is the timeout error.
    auto late = ask(std::chrono::milliseconds(0), seen);
    CHECK(seen.timeouts.empty());
    CHECK(late.verdict == "error");
    CHECK(late.details["timeout"] == true);
    CHECK(late.details["error"] == "LLM evaluation timeout");
  }

  TEST_CASE("prompt building: an empty schema means the default one") {
    scripted_judge seen;
    ll::evaluate_config c;
    c.schema = ll::json::object();
    judge_once(ok(R"({"verdict":"success"})"), c, {}, "out", &seen);
    REQUIRE(seen.schemas.size() == 1);
    CHECK(seen.schemas[0] == ll::default_judge_schema());
  }

  // Seed 003's evaluator tests, on the verdict's `reason`.
  TEST_CASE("seed 003: evaluator_timeout_treated_as_fail") {
    auto r = judge_once(ll::unexpected(ll::judge_error{ll::judge_errc::timeout, ""}));
    CHECK(r.verdict == "error");  // fail closed (design 3.10)
    CHECK(r.details["reason"].get<std::string>().find("timed out") != std::string::npos);
    auto said = judge_once(ll::unexpected(ll::judge_error{ll::judge_errc::timeout, "no answer"}));
    CHECK(said.details["reason"].get<std::string>().find("timed out") != std::string::npos);
  }

  TEST_CASE("seed 003: evaluator_malformed_response_treated_as_fail") {
    auto r = judge_once(ok("yeah looks good to me"));
    CHECK(r.verdict == "error");
    CHECK(r.details["malformed"] == true);
    CHECK(r.details["reason"].get<std::string>().find("malformed") != std::string::npos);
    // Every malformed reply says so, and why.
    for (const char* bad : {R"({"verdict":""})", R"({"verdict":"pass","confidence":null})",
                            R"({"confidence":0.9})", R"({"verdict":1})",
                            R"({"verdict":"pass"} {"verdict":"fail"})"}) {
      auto m = judge_once(ok(bad));
      CHECK_MESSAGE(m.verdict == "error", bad);
      CHECK_MESSAGE(m.details["malformed"] == true, bad);
      const auto reason = m.details["reason"].get<std::string>();
      CHECK_MESSAGE(reason.rfind("judge produced malformed JSON: ", 0) == 0, reason);
      CHECK_MESSAGE(m.details["error"].get<std::string>().rfind("Failed to parse LLM response: ", 0) == 0,
                    bad);
    }
    // A backend that could not interpret what it got says so too.
    auto backend = judge_once(ll::unexpected(ll::judge_error{ll::judge_errc::malformed, "too big"}));
    CHECK(backend.verdict == "error");
    CHECK(backend.details["error"] == "Failed to parse LLM response: too big");
    CHECK(backend.details["reason"] == "judge produced malformed output: too big");
    CHECK(backend.details["malformed"] == true);
  }

  TEST_CASE("seed 003: evaluator_fail_without_reasons_surfaces_default_message") {
    for (const char* bare : {R"({"verdict":"fail"})", R"({"verdict":"fail","reasons":[]})",
                             R"({"verdict":"fail","reason":null})",
                             R"({"verdict":"fail","reason":""})"}) {
      auto r = judge_once(ok(bare));
      CHECK_MESSAGE(r.verdict == "fail", bare);
      CHECK_MESSAGE(r.details["reason"] == "judge returned `fail` without reasons", bare);
      CHECK(r.details["reason"].get<std::string>().find("without reasons") != std::string::npos);
    }
    // Also under the `_uncertain` suffix.
    ll::evaluate_config c;
    c.min_confidence = 0.8;
    c.uncertain_suffix = true;
    auto unsure = judge_once(ok(R"({"verdict":"fail","confidence":0.1})"), c);
    CHECK(unsure.verdict == "fail_uncertain");
    CHECK(unsure.details["reason"] == "judge returned `fail` without reasons");
    // Reasons, when given, are the reason; other verdicts keep an empty one.
    CHECK(judge_once(ok(R"({"verdict":"fail","reason":"","reasons":["a","b"]})")).details["reason"] ==
          "a; b");
    // The default message is for an empty list only: `[""]` joins to "" (`reasons.join("; ")`).
    CHECK(judge_once(ok(R"({"verdict":"fail","reasons":[""]})")).details["reason"] == "");
    CHECK(judge_once(ok(R"({"verdict":"fail","reasons":["", ""]})")).details["reason"] == "; ");
    CHECK(judge_once(ok(R"({"verdict":"pass"})")).details["reason"] == "");
    CHECK(judge_once(ok(R"({"verdict":"failure"})")).details["reason"] == "");
  }

  TEST_CASE("fail closed on badly shaped reason / reasons") {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"verdict":"pass","reasons":"x"})", "reasons is not an array"},
        // seed 003's serde Vec<String> rejects null (absent is fine: empty)
        {R"({"verdict":"pass","reasons":null})", "reasons is not an array"},
        {R"({"verdict":"fail","reasons":null,"reason":null})", "reasons is not an array"},
        {R"({"verdict":"pass","reasons":{"a":"b"}})", "reasons is not an array"},
        {R"({"verdict":"pass","reasons":[1]})", "reasons holds an item that is not a string"},
        {R"({"verdict":"fail","reasons":["ok",null]})",
         "reasons holds an item that is not a string"},
        // Even when a good `reason` makes `reasons` unneeded.
        {R"({"verdict":"success","reason":"r","reasons":[["nested"]]})",
         "reasons holds an item that is not a string"},
        {R"({"verdict":"success","reason":5})", "reason is not a string"},
        {R"({"verdict":"success","reason":{"why":"x"}})", "reason is not a string"},
    };
    for (const auto& c : cases) {  // no structured binding: clang 14 cannot capture one
      const std::string reply = c.first;
      const std::string why = c.second;
      auto r = judge_once(ok(reply));
      CHECK_MESSAGE(r.verdict == "error", reply);
      CHECK_MESSAGE(r.details["malformed"] == true, reply);
      CHECK_MESSAGE(r.details["error"] == std::string("Failed to parse LLM response: ") + why, reply);
      CHECK_MESSAGE(r.details["reason"] == std::string("judge produced malformed JSON: ") + why, reply);
      CHECK_MESSAGE(r.details["raw_preview"] == reply, reply);
    }
    // Well-shaped ones pass through.
    CHECK(judge_once(ok(R"({"verdict":"pass","reasons":[],"reason":null})")).verdict == "pass");
    // Verdicts are free strings: not checked against the schema's enum (design 3.2).
    CHECK(judge_once(ok(R"({"verdict":"pass"})")).verdict == "pass");
  }
}
