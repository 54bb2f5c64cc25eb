// little_loops — tests: the seed-004 feedback record
// SPDX-License-Identifier: MIT
#include <little_loops/evaluators.hpp>

#include <doctest/doctest.h>

namespace ll = little_loops;

namespace {

ll::prev_record from(const ll::evaluation_result& r, std::string out = "", int code = 0) {
  ll::prev_record p;
  p.state = "check";
  p.output = std::move(out);
  p.stderr_output = "warn";
  p.exit_code = code;
  p.verdict = r.verdict;
  p.details = r.details;
  return p;
}

}  // namespace

TEST_SUITE("feedback") {
  TEST_CASE("record shape") {
    auto rec = ll::feedback_record(from(ll::evaluate_exit_code(0), "ok\n", 0));
    CHECK(rec.dump() ==
          R"({"success":true,"feedback":"command exited with code 0","details":{"exit_code":0},)"
          R"("scriptOutput":{"stdout":"ok\n","stderr":"warn","exitCode":0}})");
  }

  TEST_CASE("scriptOutput only when the state ran an action (seed 004: \"present when script execution is involved\")") {
    auto p = from(ll::evaluate_output_contains("", "ready"));
    p.output.clear();
    p.stderr_output.clear();
    p.ran_action = false;
    auto rec = ll::feedback_record(p);
    CHECK(rec.dump() ==
          R"({"success":false,"feedback":"pattern 'ready' not found in output","details":)"
          R"({"matched":false,"pattern":"ready","negate":false}})");
    ll::interpolation_context ctx;
    ctx.prev = &p;
    CHECK_FALSE(ll::interpolate("${prev.evaluation.scriptOutput}", ctx).has_value());
    CHECK(*ll::interpolate("${prev.evaluation.scriptOutput?}", ctx) == "");
  }

  TEST_CASE("feedback text per evaluator") {
    using op = ll::comparison_op;
    auto fb = [](const ll::evaluation_result& r) {
      return ll::feedback_record(from(r))["feedback"].get<std::string>();
    };
    CHECK(fb(ll::evaluate_exit_code(1)) == "command exited with code 1");
    CHECK(fb(ll::evaluate_output_numeric("3", op::lt, 5)) == "value 3.0 < 5.0: condition met");
    CHECK(fb(ll::evaluate_output_numeric("7", op::lt, 5)) ==
          "value 7.0 < 5.0: condition not met");
    CHECK(fb(ll::evaluate_output_numeric("x", op::lt, 5)) == "Cannot parse as number: x");
    CHECK(fb(ll::evaluate_output_json(R"({"a":2})", ".a", op::eq, 2)) ==
          "value at .a 2 == 2: condition met");
    CHECK(fb(ll::evaluate_output_contains("Error: x", "Error")) ==
          "pattern 'Error' found in output");
    CHECK(fb(ll::evaluate_output_contains("fine", "Error", true)) ==
          "pattern 'Error' not found in output (negated)");
    CHECK(fb(ll::evaluate_convergence(3, 5, 0)) ==
          "value 3.0 made progress towards the target 0.0 (previous 5.0)");
    CHECK(fb(ll::evaluate_convergence(0, 5, 0)) == "value 0.0 reached the target 0.0");
    CHECK(fb(ll::evaluate_convergence(6, 5, 0)) ==
          "value 6.0 stalled short of the target 0.0 (previous 5.0)");
    auto judge = ll::judge_verdict(R"({"verdict":"failure","reason":"null check absent"})", 0.5,
                                   false);
    CHECK(fb(judge) == "null check absent");
    // A judge that gives no reason (or an empty one, or seed 003's `reasons: []`): the
    // sentence is derived from the verdict, never an empty feedback.
    CHECK(fb(ll::judge_verdict(R"({"verdict":"success"})", 0.5, false)) == "verdict: success");
    CHECK(fb(ll::judge_verdict(R"({"verdict":"failure","reason":""})", 0.5, false)) ==
          "verdict: failure");
    CHECK(fb(ll::judge_verdict(R"({"verdict":"pass","reasons":[]})", 0.5, false)) ==
          "verdict: pass");
    ll::evaluation_result bare;
    bare.verdict = "blocked";
    CHECK(fb(bare) == "verdict: blocked");
  }

  TEST_CASE("a judge's metrics, violations and suggestions are the record's details (seed 004 example)") {
    auto judged = ll::judge_verdict(
        R"({"verdict":"failure","reason":"Function doesn't handle empty arrays",)"
        R"("violations":["No empty array check"],"suggestions":["Add a check"],)"
        R"("metrics":{"score":0.3}})",
        0.5, false);
    auto p = from(judged);
    auto rec = ll::feedback_record(p);
    CHECK(rec["feedback"] == "Function doesn't handle empty arrays");
    CHECK(rec["details"]["violations"] == ll::json::array({"No empty array check"}));
    CHECK(rec["details"]["suggestions"] == ll::json::array({"Add a check"}));
    CHECK(rec["details"]["metrics"] == ll::json{{"score", 0.3}});
    CHECK(rec["details"]["raw"]["violations"] == rec["details"]["violations"]);  // still there
    ll::interpolation_context ctx;
    ctx.prev = &p;
    CHECK(*ll::interpolate("${prev.evaluation.details.violations}", ctx) ==
          R"(["No empty array check"])");
    // A reply without them adds nothing; the evaluator's own details are never replaced.
    auto plain = ll::feedback_record(from(ll::judge_verdict(R"({"verdict":"success"})", 0.5, false)));
    CHECK_FALSE(plain["details"].contains("violations"));
    ll::evaluation_result own;
    own.verdict = "failure";
    own.details = ll::json{{"violations", 1}, {"raw", {{"violations", 2}, {"metrics", 3}}}};
    auto kept = ll::feedback_record(from(own));
    CHECK(kept["details"]["violations"] == 1);
    CHECK(kept["details"]["metrics"] == 3);
  }

  TEST_CASE("success flag") {
    CHECK(ll::feedback_record(from(ll::evaluate_convergence(0, 5, 0)))["success"] == true);
    CHECK(ll::feedback_record(from(ll::evaluate_convergence(3, 5, 0)))["success"] == false);
    CHECK(ll::feedback_record(from(ll::evaluate_exit_code(2)))["success"] == false);
    // A judge's passing verdicts pass: seed 003's `pass`, and `yes`; uncertain ones do not.
    auto judged = [](const char* reply) {
      return ll::feedback_record(from(ll::judge_verdict(reply, 0.5, true)))["success"];
    };
    CHECK(judged(R"({"verdict":"pass","reasons":[]})") == true);
    CHECK(judged(R"({"verdict":"yes"})") == true);
    CHECK(judged(R"({"verdict":"success"})") == true);
    CHECK(judged(R"({"verdict":"pass","confidence":0.2})") == false);
    CHECK(judged(R"({"verdict":"fail","reasons":["x"]})") == false);
    CHECK(judged(R"({"verdict":"partial"})") == false);
  }

  TEST_CASE("exposed as ${prev.evaluation}") {
    auto p = from(ll::evaluate_exit_code(1), "boom", 1);
    ll::interpolation_context ctx;
    ctx.prev = &p;
    auto all = ll::interpolate("${prev.evaluation}", ctx);
    REQUIRE(all);
    CHECK(ll::json::parse(*all) == ll::feedback_record(p));
    CHECK(*ll::interpolate("${prev.evaluation.feedback}", ctx) == "command exited with code 1");
    CHECK(*ll::interpolate("${prev.evaluation.scriptOutput.stdout}", ctx) == "boom");
  }

  TEST_CASE("after an unevaluated state, ${prev.evaluation} is the last evaluation made") {
    auto checked = from(ll::evaluate_exit_code(1), "2 failed", 1);
    checked.state = "check";
    ll::prev_record logged;
    logged.state = "log";
    logged.verdict = "success";
    logged.evaluated = false;
    ll::interpolation_context ctx;
    ctx.prev = &logged;
    ctx.last_evaluation = &checked;
    CHECK(*ll::interpolate("${prev.state}", ctx) == "log");
    CHECK(*ll::interpolate("${prev.evaluation.success}", ctx) == "false");
    CHECK(*ll::interpolate("${prev.evaluation.feedback}", ctx) == "command exited with code 1");
    CHECK(*ll::interpolate("${prev.evaluation.scriptOutput.stdout}", ctx) == "2 failed");
    // No evaluation before it: null, as before any state ran.
    ctx.last_evaluation = nullptr;
    CHECK(*ll::interpolate("[${prev.evaluation}]", ctx) == "[]");
    CHECK(*ll::interpolate("${prev.evaluation:default=none yet}", ctx) == "none yet");
    CHECK_FALSE(ll::interpolate("${prev.evaluation.feedback}", ctx).has_value());
  }

  TEST_CASE("before any state ran, ${prev.evaluation} is null (seed 004: getLastEvaluation -> null)") {
    const ll::interpolation_context none;
    CHECK(*ll::interpolate("gen --last '${prev.evaluation}'", none) == "gen --last ''");
    CHECK(*ll::interpolate("${prev.evaluation:default=first attempt}", none) == "first attempt");
    CHECK(*ll::interpolate("${prev.evaluation?}", none) == "");
    CHECK(*ll::interpolate("${prev.evaluation:shell}", none) == "''");
    // Its fields, and the rest of prev, are missing as before.
    CHECK_FALSE(ll::interpolate("${prev.evaluation.feedback}", none).has_value());
    CHECK(*ll::interpolate("${prev.evaluation.feedback?}", none) == "");
    CHECK_FALSE(ll::interpolate("${prev.output}", none).has_value());
  }
}
