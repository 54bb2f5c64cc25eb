// little_loops — tests for the test guards: tamper_guard and prepatch_check (design §6.3)
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

#include <little_loops/detail/tamper_guard.hpp>
#include <little_loops/render.hpp>

#include <string>
#include <vector>

using namespace executor_test;
namespace detail = ll::detail;

namespace {

// A current-dialect loop whose `verify` state has the members `extra` (JSON, leading comma)
// and whose top level has `top` (JSON, trailing comma).
std::string guarded_loop(const std::string& extra, const std::string& top = "") {
  return R"({"name": "g", "initial": "verify", "dialect": "current", )" + top + R"( "states": {
    "verify": {"action": "pytest", "on_yes": "done", "on_no": "verify", "on_error": "done")" +
         extra + R"(},
    "done": {"terminal": true}, "failed": {"terminal": true}}})";
}

ll::diagnostics load_findings(const std::string& text) {
  auto loop = ll::parse_loop(ll::json::parse(text));
  if (!loop) return loop.error().details;
  return ll::validate(*loop);
}


// The probes of a guarded state whose test files are `tests/test_a.py` (hash `h1` before the
// action, `after` after it) and `src/app.py`; `changed` is what git sees changed on exit.
void script_probes(ll::scripted_runner& runner, const std::string& after,
                   const std::string& changed = "tests/test_a.py\n") {
  runner.on_action(detail::listing_probe(true), exit_with(0, "src/app.py\ntests/test_a.py\n"));
  runner.on_action(detail::listing_probe(false), exit_with(0, changed));
  runner.on_action(detail::hash_probe({"tests/test_a.py"}),
                   {exit_with(0, "h1\n"), exit_with(0, after + "\n")});
}


}  // namespace

TEST_SUITE("guards") {
  TEST_CASE("globs of test files: ** spans directories, * stays in one") {
    CHECK(detail::glob_match("**/test_*.py", "test_a.py"));
    CHECK(detail::glob_match("**/test_*.py", "a/b/test_a.py"));
    CHECK_FALSE(detail::glob_match("**/test_*.py", "a/test_b/x.py"));
    CHECK(detail::glob_match("**/tests/**", "tests/x/y.txt"));
    CHECK(detail::glob_match("**/tests/**", "pkg/tests/y.py"));
    CHECK_FALSE(detail::glob_match("**/tests/**", "pkg/testsuite/y.py"));
    CHECK(detail::glob_match("conftest.py", "conftest.py"));
    CHECK_FALSE(detail::glob_match("conftest.py", "a/conftest.py"));
    CHECK(detail::glob_match("src/?.c", "src/a.c"));
    CHECK_FALSE(detail::glob_match("src/*.c", "src/a/b.c"));
  }

  TEST_CASE("tamper_guard and prepatch_check are read at both levels and written back") {
    auto loop = ll::parse_loop(ll::json::parse(guarded_loop(
        R"(, "tamper_guard": "revert", "prepatch_check": "warn")",
        R"("tamper_guard": "fail", "tamper_guard_ok": true,)")));
    REQUIRE(loop);
    CHECK(loop->guards.tamper_guard == "fail");
    CHECK(loop->states.at("verify").guards.tamper_guard == "revert");
    CHECK(loop->states.at("verify").guards.prepatch_check == "warn");
    ll::json written;
    ll::to_json(written, *loop);
    CHECK(written["tamper_guard"] == "fail");
    CHECK(written["states"]["verify"]["prepatch_check"] == "warn");
    auto again = ll::parse_loop(written);
    REQUIRE(again);
    CHECK(*again == *loop);
    const ll::json shown = ll::render_guards_json(*loop);
    CHECK(shown["states"]["verify"]["tamper_guard"] == "revert");
    CHECK(ll::render_preview(*loop).find("verify: tamper_guard revert, prepatch_check warn") !=
          std::string::npos);
  }

  TEST_CASE("a guard of the wrong type is an error; an unknown value a warning its flag silences") {
    CHECK(has_code(load_findings(guarded_loop(R"(, "tamper_guard": true)")),
                   "states.verify.tamper_guard", "wrong-type"));
    CHECK(has_code(load_findings(guarded_loop("", R"("prepatch_check": ["fail"],)")),
                   "prepatch_check", "wrong-type"));
    const auto warned = load_findings(guarded_loop(R"(, "tamper_guard": "block")", R"("prepatch_check": "stop",)"));
    CHECK(has_code(warned, "states.verify.tamper_guard", "unknown-tamper-guard"));
    CHECK(has_code(warned, "prepatch_check", "unknown-prepatch-check"));
    CHECK_FALSE(ll::has_errors(warned));
    const auto silenced = load_findings(guarded_loop(
        R"(, "tamper_guard": "block")", R"("tamper_guard_ok": true, "prepatch_check": "stop", "prepatch_check_ok": true,)"));
    CHECK_FALSE(has_code(silenced, "states.verify.tamper_guard", "unknown-tamper-guard"));
    CHECK_FALSE(has_code(silenced, "prepatch_check", "unknown-prepatch-check"));
  }

  TEST_CASE("tamper_guard fail: a changed test file sends the run to the failure terminal") {
    ll::scripted_runner runner;
    runner.on_action("pytest", exit_with(0));
    script_probes(runner, "h2");
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(guarded_loop("", R"("tamper_guard": "fail",)")), runner,
                                ll::default_evaluator{}, sink);
    const auto& r = ex->run();
    CHECK(r.final_state == "failed");
    CHECK(r.failure);
    const auto guards = events_named(sink, "guard");
    REQUIRE(guards.size() == 1);
    CHECK(guards[0]["kind"] == "tamper_guard");
    CHECK(guards[0]["passed"] == false);
    CHECK(guards[0]["findings"] == 1);
    CHECK(guards[0]["target"] == "failed");
    const auto routes = events_named(sink, "route");
    REQUIRE(!routes.empty());
    CHECK(routes[0]["reason"] == "tamper_guard");
  }

  TEST_CASE("tamper_guard: unchanged files pass; allow records; a state's own policy wins") {
    SUBCASE("unchanged") {
      ll::scripted_runner runner;
      runner.on_action("pytest", exit_with(0));
      script_probes(runner, "h1");
      auto ex = ll::make_executor(compiled(guarded_loop("", R"("tamper_guard": "fail",)")), runner);
      CHECK(ex->run().final_state == "done");
    }
    SUBCASE("allow, by the state over the loop's fail") {
      ll::scripted_runner runner;
      runner.on_action("pytest", exit_with(0));
      script_probes(runner, "h2");
      auto ex = ll::make_executor(
          compiled(guarded_loop(R"(, "tamper_guard": "allow")", R"("tamper_guard": "fail",)")), runner);
      CHECK(ex->run().final_state == "done");
      const ll::snapshot s = ex->snapshot();
      const ll::json& rec = s.context["_tamper_guard"][0];
      CHECK(rec["state"] == "verify");
      CHECK(rec["policy"] == "allow");
      CHECK(rec["passed"] == true);
      CHECK(rec["findings"][0] == ll::json{{"path", "tests/test_a.py"}, {"kind", "modified"}, {"is_config", false}});
    }
    SUBCASE("a deleted and an added test file, and the pytest configuration") {
      ll::scripted_runner runner;
      runner.on_action("pytest", exit_with(0));
      runner.on_action(detail::listing_probe(true),
                       exit_with(0, ":pytest-config pytest.ini\ntests/test_a.py\n"));
      runner.on_action(detail::listing_probe(false),
                       exit_with(0, ":pytest-config pytest.ini\ntests/test_new.py\npytest.ini\n"));
      runner.on_action(detail::hash_probe({"tests/test_a.py", "pytest.ini"}), exit_with(0, "h1\nc1\n"));
      runner.on_action(detail::hash_probe({"pytest.ini", "tests/test_a.py", "tests/test_new.py"}),
                       exit_with(0, "c2\n-\nn1\n"));
      auto ex = ll::make_executor(compiled(guarded_loop("", R"("tamper_guard": "allow",)")), runner);
      ex->run();
      const ll::snapshot saved = ex->snapshot();
      const ll::json& f = saved.context["_tamper_guard"][0]["findings"];
      REQUIRE(f.size() == 3);
      CHECK(f[0] == ll::json{{"path", "pytest.ini"}, {"kind", "modified"}, {"is_config", true}});
      CHECK(f[1]["kind"] == "deleted");
      CHECK(f[2] == ll::json{{"path", "tests/test_new.py"}, {"kind", "added"}, {"is_config", false}});
    }
  }

  TEST_CASE("tamper_guard revert restores tracked files through a probe and goes on") {
    ll::scripted_runner runner;
    runner.on_action("pytest", exit_with(0));
    script_probes(runner, "h2");
    runner.on_action(detail::revert_probe({"tests/test_a.py"}), exit_with(0, "+\n"));
    auto ex = ll::make_executor(compiled(guarded_loop("", R"("tamper_guard": "revert",)")), runner);
    CHECK(ex->run().final_state == "done");
    const ll::snapshot saved = ex->snapshot();
    const ll::json& rec = saved.context["_tamper_guard"][0];
    CHECK(rec["passed"] == true);
    CHECK(rec["reverted"] == ll::json::array({"tests/test_a.py"}));
    bool reverted = false;
    for (const auto& c : runner.calls()) reverted |= c.text == detail::revert_probe({"tests/test_a.py"});
    CHECK(reverted);
  }

  TEST_CASE("an unguarded state and a state whose guard value is unknown run no probe") {
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    auto ex = ll::make_executor(compiled(guarded_loop(R"(, "tamper_guard": "block")")), runner);
    CHECK(ex->run().final_state == "done");
    CHECK(runner.calls().size() == 1);
  }

  TEST_CASE("failure_target: on_no when it fails, else the first failure terminal by name") {
    auto loop = compiled(R"({"name": "t", "initial": "a", "dialect": "current", "states": {
      "a": {"action": "x", "on_yes": "ok", "on_no": "zz_failed"},
      "b": {"action": "x", "on_yes": "ok", "on_no": "a"},
      "ok": {"terminal": true}, "zz_failed": {"terminal": true, "failure": true},
      "error": {"terminal": true}}})");
    const auto& states = loop->loop().states;
    CHECK(loop->state(*detail::failure_target(*loop, states.at("a"))).name == "zz_failed");
    CHECK(loop->state(*detail::failure_target(*loop, states.at("b"))).name == "error");
  }

  TEST_CASE("prepatch_check fail: a flagged patch sends the run to the failure terminal") {
    ll::scripted_runner runner;
    runner.on_action("pytest", exit_with(0));
    const std::string diff = "diff --git a/tests/test_x.py b/tests/test_x.py\n+def test_x(): pass\n";
    runner.on_action(detail::prepatch_diff_probe("main"), exit_with(0, "abc123\n" + diff));
    ll::executor_options opts;
    std::vector<std::string> seen;
    opts.prepatch_checker = [&](const ll::prepatch_request& r) {
      seen.push_back(std::string(r.state) + "|" + std::string(r.base_ref) + "|" + std::string(r.step_diff));
      return ll::prepatch_verdict{"flagged", ""};
    };
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(compiled(guarded_loop("", R"("prepatch_check": "fail",)")), runner,
                                ll::default_evaluator{}, sink, opts);
    CHECK(ex->run().final_state == "failed");
    REQUIRE(seen.size() == 1);
    CHECK(seen[0] == "verify|abc123|" + diff);
    const auto guards = events_named(sink, "guard");
    REQUIRE(guards.size() == 1);
    CHECK(guards[0]["kind"] == "prepatch_check_flagged");
    CHECK(guards[0]["target"] == "failed");
    CHECK(events_named(sink, "route")[0]["reason"] == "prepatch_check");
    const ll::snapshot saved = ex->snapshot();
    CHECK(saved.context["_prepatch_check"][0] ==
          ll::json{{"state", "verify"}, {"policy", "fail"}, {"verdict", "flagged"}, {"base_ref", "abc123"},
                   {"skipped_reason", nullptr}, {"memoized", false}});
  }

  TEST_CASE("prepatch_check: warn reports, a red exit skips, no checker skips, a repeat is memoized") {
    SUBCASE("warn") {
      ll::scripted_runner runner;
      runner.on_action("pytest", exit_with(0));
      ll::executor_options opts;
      opts.prepatch_checker = [](const ll::prepatch_request&) { return ll::prepatch_verdict{"flagged", ""}; };
      ll::recording_event_sink sink;
      auto ex = ll::make_executor(compiled(guarded_loop(R"(, "prepatch_check": "warn")")), runner,
                                  ll::default_evaluator{}, sink, opts);
      CHECK(ex->run().final_state == "done");
      const auto guards = events_named(sink, "guard");
      REQUIRE(guards.size() == 1);
      CHECK(guards[0]["policy"] == "warn");
      CHECK_FALSE(guards[0].contains("target"));
    }
    SUBCASE("red") {
      ll::scripted_runner runner;
      runner.on_action("pytest", {exit_with(1), exit_with(0)});
      ll::executor_options opts;
      int asked = 0;
      opts.prepatch_checker = [&](const ll::prepatch_request&) { ++asked; return ll::prepatch_verdict{"clean", ""}; };
      auto ex = ll::make_executor(compiled(guarded_loop(R"(, "prepatch_check": "fail")")), runner,
                                  ll::default_evaluator{}, ll::null_event_sink{}, opts);
      CHECK(ex->run().final_state == "done");
      const ll::snapshot saved = ex->snapshot();
      const ll::json& records = saved.context["_prepatch_check"];
      REQUIRE(records.size() == 2);
      CHECK(records[0]["verdict"] == "skipped");
      CHECK(records[0]["skipped_reason"] == "guarded state's action did not succeed (red path)");
      CHECK(records[1]["verdict"] == "clean");
      CHECK(asked == 1);
    }
    SUBCASE("no checker, then the same patch again") {
      ll::scripted_runner runner;
      runner.on_action("pytest", {exit_with(1), exit_with(0), exit_with(0)});
      runner.on_action(detail::prepatch_diff_probe("main"), exit_with(0, "b1\nsame diff\n"));
      auto ex = ll::make_executor(compiled(R"({"name": "g", "initial": "verify", "dialect": "current",
          "prepatch_check": "allow", "states": {
          "verify": {"action": "pytest", "on_yes": "again", "on_no": "verify"},
          "again": {"action": "pytest", "on_yes": "done", "on_no": "done"},
          "done": {"terminal": true}}})"), runner);
      CHECK(ex->run().final_state == "done");
      const ll::snapshot saved = ex->snapshot();
      const ll::json& records = saved.context["_prepatch_check"];
      REQUIRE(records.size() == 3);
      CHECK(records[1]["skipped_reason"] == "no pre-patch checker in this host");
      CHECK(records[1]["memoized"] == false);
      CHECK(records[2]["memoized"] == true);
      CHECK(records[2]["base_ref"] == "b1");
    }
  }

  TEST_CASE("when both guards fail a state, the tamper guard's route wins") {
    ll::scripted_runner runner;
    runner.on_action("pytest", exit_with(0));
    script_probes(runner, "h2");
    ll::executor_options opts;
    opts.prepatch_checker = [](const ll::prepatch_request&) { return ll::prepatch_verdict{"flagged", ""}; };
    ll::recording_event_sink sink;
    auto ex = ll::make_executor(
        compiled(guarded_loop("", R"("prepatch_check": "fail", "tamper_guard": "fail",)")), runner,
        ll::default_evaluator{}, sink, opts);
    CHECK(ex->run().final_state == "failed");
    CHECK(events_named(sink, "route")[0]["reason"] == "tamper_guard");
    CHECK(events_named(sink, "guard").size() == 2);
    // the patch is read before the tamper guard's exit probes
    std::size_t diff_at = 0, listing_at = 0;
    for (std::size_t i = 0; i < runner.calls().size(); ++i) {
      if (runner.calls()[i].text == detail::prepatch_diff_probe("main")) diff_at = i;
      if (runner.calls()[i].text == detail::listing_probe(false)) listing_at = i;
    }
    CHECK(diff_at < listing_at);
  }
}
