// little_loops — tests for validation.hpp: every rule, and a table of malformed documents
// SPDX-License-Identifier: MIT
#include <little_loops/compiled_loop.hpp>
#include <little_loops/validation.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "core_test_support.hpp"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace ll = little_loops;
using ll::json;
using core_test::dump_all;
using core_test::find_diagnostic;

namespace {

std::size_t count_code(const ll::diagnostics& list, const std::string& code) {
  std::size_t n = 0;
  for (const auto& d : list) n += d.code == code ? 1 : 0;
  return n;
}

/// A loop document: `states` are the states before a terminal `done`; `top` are extra
/// top-level members (with a trailing comma).
std::string loop_doc(const std::string& states, const std::string& top = "") {
  return R"({"name": "t", "initial": "a", )" + top + R"("states": {)" + states +
         (states.empty() ? "" : ", ") + R"("done": {"terminal": true}}})";
}

/// Parses (strictly) and validates; the test fails if the document does not parse.
ll::diagnostics check_all(const std::string& text) {
  auto loop = ll::parse_loop_text(text);
  REQUIRE_MESSAGE(loop.has_value(), (loop ? "" : dump_all(loop.error().details)));
  return ll::validate(*loop);
}

/// check_all() without `unrouted-verdict` warnings: most documents here route only the
/// verdicts their rule is about (the unrouted ones have tests of their own).
ll::diagnostics check(const std::string& text) {
  auto found = check_all(text);
  std::erase_if(found, [](const ll::diagnostic& d) { return d.code == "unrouted-verdict"; });
  return found;
}

}  // namespace

TEST_CASE("a well-formed loop has no diagnostics") {
  const auto found = check_all(loop_doc(R"("a": {"action": "make", "on_success": "done",
                                                "on_failure": "a", "on_error": "done"})"));
  CHECK_MESSAGE(found.empty(), dump_all(found));
}

// ---------------------------------------------------------------------------------------
// The table: malformed documents, each with the exact diagnostic it must produce.
// ---------------------------------------------------------------------------------------

struct malformed_case {
  const char* label;
  std::string text;
  ll::errc code;
  const char* path;
  const char* rule;
};

TEST_CASE("malformed documents give the right diagnostic and never crash") {
  const std::string deep = std::string(10000, '[') + std::string(10000, ']');
  const std::string deep_objects = [] {
    std::string s;
    for (int i = 0; i < 10000; ++i) s += R"({"k":)";
    s += "1";
    s += std::string(10000, '}');
    return s;
  }();
  const std::string ok_a = R"("a": {"action": "x", "on_success": "done"})";
  const auto E = ll::errc::invalid_loop;
  const auto P = ll::errc::parse_error;

  const std::vector<malformed_case> cases{
      // not a loop at all
      {"root array", "[]", E, "", "wrong-type"},
      {"root string", R"("loop")", E, "", "wrong-type"},
      {"root null", "null", E, "", "null-value"},
      {"root number", "42", E, "", "wrong-type"},
      {"empty text", "", P, "", "parse-error"},
      {"truncated", R"({"name": "t", "states": {)", P, "", "parse-error"},
      {"trailing garbage", loop_doc(ok_a) + " x", P, "", "parse-error"},
      {"single quotes", "{'name': 't'}", P, "", "parse-error"},
      {"invalid UTF-8 in a string", "{\"name\": \"\xff\xfe\"}", P, "", "parse-error"},
      {"number overflow", loop_doc(ok_a, R"("timeout": 1e400, )"), P, "", "parse-error"},
      {"deep junk (10000 arrays) unclosed", std::string(10000, '['), P, "[0]", "too-deep"},
      {"unclosed shallow array", "[[[", P, "", "parse-error"},
      // missing fields
      {"missing name", R"({"initial": "a", "states": {"a": {"terminal": true}}})", E, "",
       "missing-field"},
      {"missing initial", R"({"name": "t", "states": {"a": {"terminal": true}}})", E, "",
       "missing-field"},
      {"missing states", R"({"name": "t", "initial": "a"})", E, "", "missing-field"},
      {"evaluate without type", loop_doc(R"("a": {"action": "x", "evaluate": {"operator": "eq"},
                                              "on_success": "done"})"),
       E, "states.a.evaluate", "missing-field"},
      {"output_numeric without target",
       loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_numeric", "operator": "eq"},
                    "on_success": "done"})"),
       E, "states.a.evaluate", "evaluator-missing-field"},
      {"output_json without path",
       loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_json", "operator": "eq",
                    "target": 1}, "on_success": "done"})"),
       E, "states.a.evaluate", "evaluator-missing-field"},
      {"output_contains without pattern",
       loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_contains"},
                    "on_success": "done"})"),
       E, "states.a.evaluate", "evaluator-missing-field"},
      // wrong types
      {"name is a number", R"({"name": 7, "initial": "a", "states": {"a": {"terminal": true}}})",
       E, "name", "wrong-type"},
      {"states is an array", R"({"name": "t", "initial": "a", "states": []})", E, "states",
       "wrong-type"},
      {"state is a string", loop_doc(R"("a": "run tests")"), E, "states.a", "wrong-type"},
      {"terminal is a string", loop_doc(ok_a + R"(, "z": {"terminal": "yes"})"), E,
       "states.z.terminal", "wrong-type"},
      {"action is null", loop_doc(R"("a": {"action": null, "on_success": "done"})"), E,
       "states.a.action", "null-value"},
      {"max_iterations is a string", loop_doc(ok_a, R"("max_iterations": "10", )"), E,
       "max_iterations", "wrong-type"},
      {"max_iterations is fractional", loop_doc(ok_a, R"("max_iterations": 2.5, )"), E,
       "max_iterations", "wrong-type"},
      {"max_iterations huge", loop_doc(ok_a, R"("max_iterations": 99999999999999999999999, )"),
       E, "max_iterations", "out-of-range"},
      {"timeout as text", loop_doc(ok_a, R"("timeout": "10s", )"), E, "timeout", "wrong-type"},
      {"context is an array", loop_doc(ok_a, R"("context": [1, 2], )"), E, "context",
       "wrong-type"},
      {"scope is a string", loop_doc(ok_a, R"("scope": "src/", )"), E, "scope", "wrong-type"},
      {"scope holds a number", loop_doc(ok_a, R"("scope": ["src/", 3], )"), E, "scope[1]",
       "wrong-type"},
      {"llm is a string", loop_doc(ok_a, R"("llm": "sonnet", )"), E, "llm", "wrong-type"},
      {"schema is an array",
       loop_doc(R"("a": {"action": "/x", "evaluate": {"type": "llm_structured", "schema": []},
                    "on_success": "done"})"),
       E, "states.a.evaluate.schema", "wrong-type"},
      {"tolerance is a boolean",
       loop_doc(R"("a": {"action": "x", "evaluate": {"type": "convergence", "target": 0,
                    "tolerance": true}, "on_target": "done"})"),
       E, "states.a.evaluate.tolerance", "wrong-type"},
      {"route target is a number", loop_doc(R"("a": {"action": "x", "route": {"success": 1}})"),
       E, "states.a.route.success", "wrong-type"},
      {"target is null",
       loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_numeric", "operator": "eq",
                    "target": null}, "on_success": "done"})"),
       E, "states.a.evaluate.target", "null-value"},
      {"numeric target is a word",
       loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_numeric", "operator": "eq",
                    "target": "five"}, "on_success": "done"})"),
       E, "states.a.evaluate.target", "evaluator-target"},
      // unknown keys
      {"unknown top-level key", loop_doc(ok_a, R"("maxiterations": 5, )"), E, "maxiterations",
       "unknown-key"},
      {"paradigm key that is not a string", loop_doc(ok_a, R"("paradigm": 3, )"), E, "paradigm",
       "wrong-type"},
      {"unknown state key", loop_doc(R"("a": {"actoin": "x", "on_success": "done"})"), E,
       "states.a.actoin", "unknown-key"},
      {"unknown evaluate key",
       loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_contains", "pattern": "y",
                    "negated": true}, "on_success": "done"})"),
       E, "states.a.evaluate.negated", "unknown-key"},
      {"unknown llm key", loop_doc(ok_a, R"("llm": {"modle": "opus"}, )"), E, "llm.modle",
       "unknown-key"},
      {"reserved route key", loop_doc(R"("a": {"action": "x", "route": {"_default": "done"}})"),
       E, "states.a.route._default", "unknown-key"},
      {"bare on_", loop_doc(R"("a": {"action": "x", "on_": "done", "next": "done"})"), E,
       "states.a.on_", "invalid-key"},
      {"empty state name", loop_doc(ok_a + R"(, "": {"terminal": true})"), E, "states.",
       "invalid-key"},
      {"duplicate key", loop_doc(R"("a": {"action": "x", "action": "y", "next": "done"})"), E,
       "states.a.action", "duplicate-key"},
      // unknown enum values
      {"evaluator type", loop_doc(R"("a": {"action": "x", "evaluate": {"type": "exitcode"},
                                       "on_success": "done"})"),
       E, "states.a.evaluate.type", "unknown-value"},
      {"operator", loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_numeric",
                                 "operator": "gte", "target": 1}, "on_success": "done"})"),
       E, "states.a.evaluate.operator", "unknown-value"},
      {"direction", loop_doc(R"("a": {"action": "x", "evaluate": {"type": "convergence",
                                  "target": 1, "direction": "maximise"}, "on_target": "done"})"),
       E, "states.a.evaluate.direction", "unknown-value"},
      {"action_type", loop_doc(R"("a": {"action": "x", "action_type": "bash",
                                    "on_success": "done"})"),
       E, "states.a.action_type", "unknown-value"},
      {"on_handoff", loop_doc(ok_a, R"("on_handoff": "stop", )"), E, "on_handoff",
       "unknown-value"},
      // dangling references and structure
      {"dangling on_success", loop_doc(R"("a": {"action": "x", "on_success": "dne"})"), E,
       "states.a.on_success", "unknown-state"},
      {"dangling route entry", loop_doc(R"("a": {"action": "x", "route": {"failure": "fix"}})"),
       E, "states.a.route.failure", "unknown-state"},
      {"dangling default route", loop_doc(R"("a": {"action": "x", "route": {"_": "nowhere"}})"),
       E, "states.a.route._", "unknown-state"},
      {"dangling next", loop_doc(R"("a": {"action": "x", "next": "b"})"), E, "states.a.next",
       "unknown-state"},
      {"dangling on_maintain",
       loop_doc(R"("a": {"action": "x", "next": "done", "on_maintain": "zz"})"), E,
       "states.a.on_maintain", "unknown-state"},
      // on_maintain is a name, never interpolated (seed 002), so `${…}` there is checked too
      {"templated on_maintain",
       loop_doc(R"("a": {"action": "x", "next": "done", "on_maintain": "${context.t}"})"), E,
       "states.a.on_maintain", "unknown-state"},
      {"dangling on_max_iterations", loop_doc(ok_a, R"("on_max_iterations": "summary", )"), E,
       "on_max_iterations", "unknown-state"},
      {"unknown initial", R"({"name": "t", "initial": "start", "states": {"done":
                               {"terminal": true}}})",
       E, "initial", "unknown-initial"},
      {"empty states", R"({"name": "t", "initial": "a", "states": {}})", E, "states",
       "no-states"},
      {"no terminal", R"({"name": "t", "initial": "a", "states": {"a": {"action": "x",
                           "next": "a"}}})",
       E, "states", "no-terminal"},
      {"state without transition", loop_doc(R"("a": {"action": "x"})"), E, "states.a",
       "no-transition"},
      // ranges
      {"max_iterations zero", loop_doc(ok_a, R"("max_iterations": 0, )"), E, "max_iterations",
       "max-iterations-range"},
      {"negative timeout", loop_doc(ok_a, R"("timeout": -5, )"), E, "timeout", "timeout-range"},
      {"negative state timeout", loop_doc(R"("a": {"action": "x", "timeout": -1, "next": "done"})"),
       E, "states.a.timeout", "timeout-range"},
      {"absurd timeout", loop_doc(ok_a, R"("timeout": 1e300, )"), E, "timeout",
       "timeout-range"},
      {"negative backoff", loop_doc(ok_a, R"("backoff": -1, )"), E, "backoff", "backoff-range"},
      {"llm.max_tokens zero", loop_doc(ok_a, R"("llm": {"max_tokens": 0}, )"), E,
       "llm.max_tokens", "llm-max-tokens-range"},
      {"llm.timeout negative", loop_doc(ok_a, R"("llm": {"timeout": -1}, )"), E, "llm.timeout",
       "llm-timeout-range"},
      {"negative tolerance",
       loop_doc(R"("a": {"action": "x", "evaluate": {"type": "convergence", "target": 0,
                    "tolerance": -0.5}, "on_target": "done"})"),
       E, "states.a.evaluate.tolerance", "negative-tolerance"},
      {"min_confidence above 1",
       loop_doc(R"("a": {"action": "/x", "evaluate": {"type": "llm_structured",
                    "min_confidence": 1.5}, "on_success": "done"})"),
       E, "states.a.evaluate.min_confidence", "min-confidence-range"},
      // deep nesting: documents deeper than max_document_depth are refused while parsing,
      // values deeper than max_value_depth while reading (rows check a path prefix)
      {"deep junk under an unknown key", loop_doc(ok_a, R"("junk": )" + deep + ", "), P, "junk",
       "too-deep"},
      {"deep junk as a state", loop_doc(R"("a": )" + deep), P, "states.a", "too-deep"},
      {"deep junk as a name", R"({"name": )" + deep_objects + "}", P, "name", "too-deep"},
      {"deep junk as a target",
       loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_json", "path": ".a",
                    "operator": "eq", "target": )" +
                deep_objects + R"(}, "on_success": "done"})"),
       P, "states.a.evaluate.target", "too-deep"},
      {"deep value as a target",
       loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_json", "path": ".a",
                    "operator": "eq", "target": )" +
                std::string(300, '[') + std::string(300, ']') + R"(}, "on_success": "done"})"),
       E, "states.a.evaluate.target", "too-deep"},
  };
  CHECK(cases.size() >= 30);

  for (const auto& c : cases) {
    CAPTURE(c.label);
    const auto result = ll::load_loop_text(c.text);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == c.code);
    const auto& found = result.error().details;
    bool matched = false;
    for (const auto& d : found) {
      CHECK_FALSE(d.message.empty());
      // Deep paths are long: the "too-deep" rows check the code and the path prefix.
      const bool path_ok = std::string(c.rule) == "too-deep" ? d.path.rfind(c.path, 0) == 0
                                                              : d.path == c.path;
      if (path_ok && d.code == c.rule) matched = true;
    }
    CHECK_MESSAGE(matched, "expected [" << c.rule << "] at \"" << c.path << "\", got:\n"
                                        << dump_all(found));
  }
}

TEST_CASE("did-you-mean hints name the closest key or value") {
  auto first_message = [](const std::string& text) {
    auto r = ll::load_loop_text(text);
    REQUIRE_FALSE(r.has_value());
    return r.error().details.at(0).message;
  };
  CHECK(first_message(loop_doc(R"("a": {"actoin": "x", "next": "done"})")) ==
        "unknown key \"actoin\" (did you mean \"action\"?)");
  CHECK(first_message(loop_doc(R"("a": {"action": "x", "evalute": {"type": "exit_code"},
                                        "next": "done"})")) ==
        "unknown key \"evalute\" (did you mean \"evaluate\"?)");
  CHECK(first_message(loop_doc(R"("a": {"action": "x", "Terminal": true})")) ==
        "unknown key \"Terminal\" (did you mean \"terminal\"?)");
  CHECK(first_message(loop_doc(R"("a": {"action": "x", "action_type": "promt",
                                        "next": "done"})")) ==
        "unknown action_type \"promt\" (did you mean \"prompt\"?); expected one of: shell, "
        "prompt, slash_command, mcp_tool");
  CHECK(first_message(loop_doc(R"("a": {"action": "x", "next": "done"})",
                               R"("on_handof": "spawn", )")) ==
        "unknown key \"on_handof\" (did you mean \"on_handoff\"?)");
  CHECK(first_message(loop_doc(R"("a": {"action": "x", "next": "done"})",
                               R"("max_step": 5, )")) ==
        "unknown key \"max_step\" (did you mean \"max_steps\"?)");
  CHECK(first_message(loop_doc(R"("a": {"action": "x", "next": "done"})",
                               R"("zzzz": 5, )")) == "unknown key \"zzzz\"");
  CHECK(first_message(loop_doc(R"("a": {"action": "x", "next": "dnoe"})")) ==
        "References unknown state 'dnoe' (did you mean \"done\"?)");
}

TEST_CASE("edit distance with a limit is exact up to the limit and above it beyond") {
  // The limited form computes only the band |i - j| <= limit; it must agree with the full
  // computation (optimal string alignment: transpositions count 1) wherever it matters.
  std::mt19937 rng(7);
  auto random_word = [&](std::size_t max_len) {
    std::string w(rng() % (max_len + 1), 'a');
    for (auto& c : w) c = static_cast<char>('a' + rng() % 3);
    return w;
  };
  for (int round = 0; round < 3000; ++round) {
    const std::string a = random_word(12), b = random_word(12);
    const std::size_t full = ll::detail::edit_distance(a, b);
    for (std::size_t limit = 0; limit <= 5; ++limit) {
      CAPTURE(a);
      CAPTURE(b);
      CAPTURE(limit);
      const std::size_t limited = ll::detail::edit_distance(a, b, limit);
      if (full <= limit)
        CHECK(limited == full);
      else
        CHECK(limited > limit);
    }
  }
  CHECK(ll::detail::edit_distance("ab", "ba") == 1);
  CHECK(ll::detail::edit_distance("kitten", "sitting") == 3);
  CHECK(ll::detail::edit_distance("kitten", "sitting", 2) > 2);
}

TEST_CASE("did-you-mean stays cheap on hostile documents") {
  // No hint for a name over 256 bytes (a typo hint that long helps nobody, and each look
  // passes over every state name).
  const std::string long_name(300, 'q');
  auto r = ll::load_loop_text(loop_doc(R"("a": {"action": "x", "next": ")" + long_name + R"(x"}, ")" +
                                       long_name + R"(": {"action": "y", "next": "done"})"));
  REQUIRE_FALSE(r.has_value());
  const auto* dangling = find_diagnostic(r.error().details, "states.a.next", "unknown-state");
  REQUIRE(dangling != nullptr);
  CHECK(dangling->message.find("did you mean") == std::string::npos);

  // Only the first 64 targets naming no state get a hint; every one is reported.
  std::string states;
  for (int i = 0; i < 70; ++i)
    states += fmt::format(R"("s{}": {{"action": "x", "next": "dnoe"}}, )", i);
  auto many = ll::load_loop_text(loop_doc(states + R"("a": {"action": "x", "next": "s0"})"));
  REQUIRE_FALSE(many.has_value());
  std::size_t reported = 0, hinted = 0;
  for (const auto& d : many.error().details) {
    if (d.code != "unknown-state") continue;
    ++reported;
    hinted += d.message.find("(did you mean \"done\"?)") != std::string::npos ? 1 : 0;
  }
  CHECK(reported == 70);
  CHECK(hinted == 64);
}

// ---------------------------------------------------------------------------------------
// Rules one by one (messages follow the Python reference where it has the rule).
// ---------------------------------------------------------------------------------------

TEST_CASE("reference messages match the Python validator") {
  auto found = check(R"({"name": "t", "initial": "start", "states": {"a": {"action": "x"}}})");
  const auto* initial = find_diagnostic(found, "initial", "unknown-initial");
  REQUIRE(initial);
  CHECK(initial->message == "Initial state 'start' not found in states");
  const auto* terminal = find_diagnostic(found, "states", "no-terminal");
  REQUIRE(terminal);
  CHECK(terminal->message ==
        "No terminal state defined. At least one state must have 'terminal: true'");
  const auto* none = find_diagnostic(found, "states.a", "no-transition");
  REQUIRE(none);
  CHECK(none->message ==
        "State has no transition defined. Add routing, 'next', or mark as 'terminal: true'");
  // Missing top-level keys: one diagnostic in the original's words.
  {
    auto r = ll::load_loop_text(R"({"name": "incomplete"})");
    REQUIRE_FALSE(r.has_value());
    REQUIRE(r.error().details.size() == 1);
    CHECK(r.error().details[0].code == "missing-field");
    CHECK(r.error().details[0].message.rfind("missing required fields: initial, states", 0) == 0);
  }
  // initial missing: nothing is reached from it, so, as in the original, every state is
  // also reported unreachable (warnings, beside the error)
  REQUIRE(count_code(found, "unreachable-state") == 1);
  CHECK(find_diagnostic(found, "states.a", "unreachable-state")->level == ll::severity::warning);
  {
    auto two = check(R"({"name": "t", "initial": "start", "on_max_iterations": "sum",
                         "states": {"a": {"action": "x", "next": "b"}, "b": {"terminal": true},
                                    "sum": {"action": "s", "next": "b"}}})");
    CHECK(count_code(two, "unreachable-state") == 1);  // on_max_iterations reaches sum and b
    CHECK(find_diagnostic(two, "states.a", "unreachable-state"));
  }

  found = check(loop_doc(R"("a": {"action": "x", "on_success": "done"})",
                         R"("max_iterations": -1, "backoff": -2, "timeout": 0,
                            "llm": {"max_tokens": 0, "timeout": 0}, "on_max_iterations": "q", )"));
  CHECK(find_diagnostic(found, "max_iterations", "max-iterations-range")->message ==
        "max_iterations must be > 0, got -1");
  CHECK(find_diagnostic(found, "backoff", "backoff-range")->message ==
        "backoff must be >= 0, got -2");
  CHECK(find_diagnostic(found, "timeout", "timeout-range")->message ==
        "timeout must be > 0, got 0");
  CHECK(find_diagnostic(found, "llm.max_tokens", "llm-max-tokens-range")->message ==
        "llm.max_tokens must be > 0, got 0");
  CHECK(find_diagnostic(found, "llm.timeout", "llm-timeout-range")->message ==
        "llm.timeout must be > 0, got 0");
  CHECK(find_diagnostic(found, "on_max_iterations", "unknown-state")->message ==
        "on_max_iterations references unknown state 'q' (must be a declared state)");
  CHECK(found.size() == 6);

  found = check(loop_doc(R"("a": {"action": "x", "on_success": "elsewhere", "on_failure": "done"})"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].message == "References unknown state 'elsewhere'");
  CHECK(found[0].level == ll::severity::error);

  found = check(loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_json"},
                                  "on_success": "done"})"));
  REQUIRE(found.size() == 3);
  CHECK(found[0].message == "Evaluator type 'output_json' requires 'path' field");
  CHECK(found[1].message == "Evaluator type 'output_json' requires 'operator' field");
  CHECK(found[2].message == "Evaluator type 'output_json' requires 'target' field");

  found = check(loop_doc(R"("a": {"action": "x", "evaluate": {"type": "convergence",
                                  "target": 1, "tolerance": -1}, "on_target": "done"})"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].message == "Tolerance cannot be negative");
  found = check(loop_doc(R"("a": {"action": "/x", "evaluate": {"type": "llm_structured",
                                  "min_confidence": -0.1}, "on_success": "done"})"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].message == "min_confidence must be between 0 and 1");

  // As in the original, the ranges are checked only where the type reads the field; a field
  // another type would read is dead configuration (a warning), not an error.
  found = check(loop_doc(R"("a": {"action": "x", "evaluate": {"type": "exit_code",
                                  "min_confidence": 1.5}, "on_success": "done"})"));
  CHECK_FALSE(ll::has_errors(found));
  CHECK(count_code(found, "min-confidence-range") == 0);
  found = check(loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_numeric",
                                  "operator": "eq", "target": 0, "tolerance": -1}, "on_success": "done"})"));
  CHECK_FALSE(ll::has_errors(found));
  CHECK(count_code(found, "negative-tolerance") == 0);

  // A state timeout of 0 is the runner's default (seed 002: `state.timeout or 120`).
  found = check(loop_doc(R"("a": {"action": "x", "timeout": 0, "next": "done"})"));
  CHECK(count_code(found, "timeout-range") == 0);

  // Unknown operator, direction and evaluator type in the original's sentences.
  auto first_message = [](const std::string& text) {
    auto r = ll::load_loop_text(text);
    REQUIRE_FALSE(r.has_value());
    return r.error().details.at(0).message;
  };
  CHECK(first_message(loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_numeric",
                                 "operator": "invalid", "target": 0}, "on_success": "done"})")) ==
        "Invalid operator 'invalid'. Must be one of: eq, ge, gt, le, lt, ne");
  CHECK(first_message(loop_doc(R"("a": {"action": "x", "evaluate": {"type": "convergence",
                                 "target": 0, "direction": "up"}, "on_target": "done"})")) ==
        "Invalid direction 'up'. Must be 'minimize' or 'maximize'");
  CHECK(first_message(loop_doc(R"("a": {"action": "x", "evaluate": {"type": "bogus"},
                                 "on_success": "done"})")) ==
        "Unknown evaluator type 'bogus'. Must be one of: action_stall, classify, convergence, "
        "diff_stall, exit_code, harbor_scorer, llm_structured, mcp_result, open_question_stall, "
        "output_contains, output_json, output_numeric, score_stall");
}

TEST_CASE("evaluator requirements per type") {
  struct row {
    const char* evaluate;
    std::size_t missing;
  };
  const row rows[] = {
      {R"({"type": "exit_code"})", 0},
      {R"({"type": "output_numeric"})", 2},
      {R"({"type": "output_numeric", "operator": "lt", "target": 3})", 0},
      {R"({"type": "output_json", "operator": "lt"})", 2},
      {R"({"type": "output_json", "path": ".a", "operator": "eq", "target": {"x": [1]}})", 0},
      {R"({"type": "output_contains"})", 1},
      {R"({"type": "output_contains", "pattern": "ok"})", 0},
      {R"({"type": "convergence"})", 1},
      {R"({"type": "convergence", "target": "${context.goal}"})", 0},
      {R"({"type": "llm_structured"})", 0},
  };
  for (const auto& r : rows) {
    CAPTURE(r.evaluate);
    const auto found = check(loop_doc(std::string(R"("a": {"action": "x", "evaluate": )") +
                                      r.evaluate + R"(, "route": {"_": "done"}})"));
    CHECK_MESSAGE(count_code(found, "evaluator-missing-field") == r.missing, dump_all(found));
    CHECK(count_code(found, "evaluator-missing-field") == found.size());
  }
}

TEST_CASE("numeric targets and tolerances must be numbers or templates") {
  auto codes = [](const std::string& evaluate) {
    return check(loop_doc(R"("a": {"action": "x", "evaluate": )" + evaluate +
                          R"(, "route": {"_": "done"}})"));
  };
  CHECK(codes(R"({"type": "output_numeric", "operator": "eq", "target": " 4.5e1 "})").empty());
  CHECK(codes(R"({"type": "convergence", "target": 0, "tolerance": "0.1"})").empty());
  CHECK(codes(R"({"type": "convergence", "target": 0, "tolerance": "${context.t}"})").empty());
  CHECK(count_code(codes(R"({"type": "convergence", "target": true})"), "evaluator-target") == 1);
  CHECK(count_code(codes(R"({"type": "convergence", "target": 0, "tolerance": "lots"})"),
                   "evaluator-target") == 1);
  // output_json compares any JSON value.
  CHECK(codes(R"({"type": "output_json", "path": ".", "operator": "eq", "target": "done"})")
            .empty());
  // Validation reads numbers with the run-time grammar (Python's float()): what it accepts
  // parses when the loop runs, and what it rejects would be an `error` verdict at every step.
  CHECK(codes(R"({"type": "output_numeric", "operator": "eq", "target": "inf"})").empty());
  CHECK(codes(R"({"type": "output_numeric", "operator": "eq", "target": "\u0665"})").empty());
  CHECK(count_code(codes(R"j({"type": "output_numeric", "operator": "eq", "target": "nan(1)"})j"),
                   "evaluator-target") == 1);
  CHECK(count_code(codes(R"({"type": "output_numeric", "operator": "eq", "target": "0x10"})"),
                   "evaluator-target") == 1);
  CHECK(count_code(codes(R"({"type": "convergence", "target": 0, "tolerance": "1_0"})"),
                   "evaluator-target") == 1);
  CHECK(count_code(codes(R"({"type": "convergence", "target": 0, "tolerance": "-1"})"),
                   "negative-tolerance") == 1);
  CHECK(count_code(codes(R"({"type": "convergence", "target": 0, "tolerance": -1})"),
                   "negative-tolerance") == 1);
}

TEST_CASE("dynamic targets are exempt from reference checks") {
  const auto found = check(loop_doc(
      R"("a": {"action": "x", "on_success": "$current", "on_failure": "${context.next}",
               "route": {"_": "${result.verdict}_state"}, "next": "done"})"));
  CHECK(count_code(found, "unknown-state") == 0);
  CHECK(count_code(found, "unreachable-state") == 0);  // anything may be reached
}

TEST_CASE("a target that is only an escape is static: `$${x}` names the state `${x}`") {
  auto found = check(loop_doc(R"("a": {"action": "x", "next": "$${done}"},
                                 "orphan": {"action": "y", "next": "done"})"));
  const auto* unknown = find_diagnostic(found, "states.a.next", "unknown-state");
  REQUIRE(unknown);
  CHECK(unknown->message.find("$${done}") != std::string::npos);
  CHECK(find_diagnostic(found, "states.orphan", "unreachable-state"));  // not "anything"
  // Naming a state whose name holds `${`, it is checked and followed like any other.
  found = check(loop_doc(R"("a": {"action": "x", "next": "$${odd}"},
                            "${odd}": {"action": "y", "next": "done"})"));
  CHECK(count_code(found, "unknown-state") == 0);
  CHECK(count_code(found, "unreachable-state") == 0);
}

TEST_CASE("an output_contains pattern searched for as plain text is a warning") {
  auto with = [](const std::string& pattern) {
    return check(loop_doc(R"("a": {"action": "x", "evaluate": {"type": "output_contains",
                          "pattern": )" + ll::json(pattern).dump() + R"(}, "on_success": "done",
                          "on_failure": "done"})"));
  };
  // Python's re runs it, RE2 cannot: the verdict may differ from the original's.
  for (const char* lookaround : {"error(?!s)", "(?<=a)x", "(ab)\\1", "(?x) h e"}) {
    CAPTURE(lookaround);
    const auto found = with(lookaround);
    REQUIRE(found.size() == 1);
    CHECK(found[0].code == "pattern-not-regex");
    CHECK(found[0].level == ll::severity::warning);
    CHECK(found[0].path == "states.a.evaluate.pattern");
    CHECK(found[0].message.find("RE2 does not support") != std::string::npos);
  }
  // Python's re rejects it too: the same plain-text search as the original, still reported.
  const auto invalid = with("a(b");
  REQUIRE(invalid.size() == 1);
  CHECK(invalid[0].message.find("not a valid regular expression") != std::string::npos);
  CHECK(invalid[0].message.find("as the original does") != std::string::npos);
  // Literals, regexes and templates (known only at run time) are fine.
  for (const char* fine : {"error", "err.r|fatal", "^ok$", "\\d+ passed", "${context.p}"}) {
    CAPTURE(fine);
    CHECK(with(fine).empty());
  }
}

TEST_CASE("warnings: conflicts, dead configuration and unreachable states") {
  auto found = check(loop_doc(R"("a": {"action": "x", "on_success": "done",
                                       "route": {"failure": "a"}})"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "route-conflict");
  CHECK(found[0].level == ll::severity::warning);
  CHECK(found[0].path == "states.a");

  found = check(loop_doc(R"("a": {"action": "x", "on_success": "done", "route": {"_": "a"}})"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].message.find("never used") != std::string::npos);

  // next + on_error is the documented happy-path/error split: no warning.
  CHECK(check(loop_doc(R"("a": {"action": "x", "next": "done", "on_error": "a"})")).empty());
  found = check(loop_doc(R"("a": {"action": "x", "next": "done", "on_failure": "a"})"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "next-with-routing");
  CHECK(found[0].path == "states.a.next");
  found = check(loop_doc(R"("a": {"action": "x", "next": "done", "evaluate": {"type": "exit_code"}})"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "next-with-evaluate");
  CHECK(found[0].path == "states.a.evaluate");
  CHECK(found[0].level == ll::severity::warning);

  found = check(loop_doc(R"("a": {"action": "x", "next": "z", "on_error": "done"},
                            "z": {"terminal": true, "action": "echo bye", "failure": true})"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "terminal-action");
  CHECK(found[0].path == "states.z.action");
  CHECK(found[0].level == ll::severity::warning);

  found = check(loop_doc(R"("a": {"action": "x", "next": "z", "on_error": "done"},
                            "z": {"terminal": true, "on_success": "a"})"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "terminal-transitions");

  found = check(loop_doc(R"("a": {"next": "done", "failure": true, "capture": "c"})"));
  CHECK(find_diagnostic(found, "states.a.failure", "failure-not-terminal"));
  CHECK(find_diagnostic(found, "states.a.capture", "capture-without-action"));
  CHECK_FALSE(ll::has_errors(found));

  // `action: ""` runs nothing (the seed's `if state.action:`): said, not an error.
  found = check(loop_doc(R"("a": {"action": "", "capture": "c", "next": "done"})"));
  CHECK(find_diagnostic(found, "states.a.action", "empty-action"));
  CHECK(find_diagnostic(found, "states.a.capture", "capture-without-action"));
  CHECK_FALSE(ll::has_errors(found));

  // Fields nothing reads: the action's on a state that runs none, an evaluation or a
  // maintain target that is never used.
  found = check(loop_doc(R"("a": {"timeout": 5, "action_type": "prompt", "next": "b"},
                            "b": {"action": "", "timeout": 5, "next": "z"},
                            "z": {"terminal": true, "action": "echo bye", "timeout": 5,
                                  "action_type": "shell", "evaluate": {"type": "exit_code"},
                                  "on_maintain": "a"})"));
  for (const char* where : {"states.a.timeout", "states.a.action_type", "states.b.timeout",
                            "states.z.timeout", "states.z.action_type", "states.z.evaluate",
                            "states.z.on_maintain"}) {
    CAPTURE(where);
    const auto* d = find_diagnostic(found, where, "unused-state-field");
    REQUIRE(d != nullptr);
    CHECK(d->level == ll::severity::warning);
  }
  CHECK(find_diagnostic(found, "states.a.timeout", "unused-state-field")->message ==
        "'timeout' limits the state's action, and this state has no action: it is never used");
  CHECK(find_diagnostic(found, "states.z.timeout", "unused-state-field")->message ==
        "'timeout' limits the state's action, and a terminal state runs no action: it is never "
        "used");
  CHECK_FALSE(ll::has_errors(found));
  // Where they are read: no such warning (an evaluation without an action reads "" and exit
  // 0; a maintain loop restarts from its terminal's on_maintain).
  found = check(loop_doc(R"("a": {"action": "x", "timeout": 5, "action_type": "shell",
                                  "on_success": "b", "on_failure": "b"},
                            "b": {"evaluate": {"type": "exit_code"}, "on_success": "z", "on_failure": "z"},
                            "z": {"terminal": true, "on_maintain": "a"})",
                         R"("maintain": true, )"));
  for (const auto& d : found) CHECK_MESSAGE(d.code != "unused-state-field", d.path);

  found = check(loop_doc(R"("a": {"action": "x", "evaluate": {"type": "exit_code",
                                  "pattern": "p", "direction": "maximize"}, "next": "done"})"));
  CHECK(find_diagnostic(found, "states.a.evaluate.pattern", "unused-evaluator-field"));
  CHECK(find_diagnostic(found, "states.a.evaluate.direction", "unused-evaluator-field"));

  found = check(loop_doc(R"("a": {"action": "/x", "evaluate": {"type": "llm_structured"},
                                  "on_success": "done"})",
                         R"("llm": {"enabled": false}, )"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "llm-disabled");

  found = check(loop_doc(R"("a": {"action": "x", "on_sucess": "done", "on_failure": "a",
                                  "route": {"eror": "a"}})"));
  // exit_code can never give these: errors now (the run would stop at them), not warnings.
  REQUIRE(find_diagnostic(found, "states.a.on_sucess", "impossible-verdict") != nullptr);
  CHECK(find_diagnostic(found, "states.a.on_sucess", "impossible-verdict")->message ==
        "exit_code can never produce the verdict \"sucess\" (did you mean \"success\"?)");
  CHECK(find_diagnostic(found, "states.a.route.eror", "impossible-verdict"));
  // A judge may give any verdict: a close one is still only suspicious.
  found = check(loop_doc(R"("a": {"action": "/x", "on_sucess": "done", "on_error": "done"})"));
  REQUIRE(find_diagnostic(found, "states.a.on_sucess", "suspicious-verdict") != nullptr);
  CHECK(find_diagnostic(found, "states.a.on_sucess", "suspicious-verdict")->message ==
        "no built-in evaluator produces the verdict \"sucess\" (did you mean \"success\"?)");

  found = check(loop_doc(R"("a": {"action": "x", "next": "done"},
                            "island": {"action": "y", "next": "done"},
                            "summary": {"action": "z", "next": "done"})",
                         R"("on_max_iterations": "summary", )"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].code == "unreachable-state");
  CHECK(found[0].path == "states.island");
  CHECK(found[0].message == "State is not reachable from initial state");
}

TEST_CASE("load_loop separates errors from warnings") {
  ll::diagnostics warnings;
  auto ok = ll::load_loop_text(loop_doc(R"("a": {"action": "x", "next": "done"},
                                           "spare": {"terminal": true})"),
                               &warnings);
  REQUIRE(ok.has_value());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].code == "unreachable-state");

  auto bad = ll::load_loop(json::parse(loop_doc(R"("a": {"action": "x", "next": "nope"},
                                                   "spare": {"terminal": true})")));
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ll::errc::invalid_loop);
  CHECK(bad.error().details.size() == 3);  // the error and two unreachable warnings
  CHECK(bad.error().message ==
        "invalid loop document: 1 error (first: states.a.next: References unknown state "
        "'nope')");
}

TEST_CASE("validation of a large loop finds every problem once") {
  ll::fsm_loop loop;
  loop.name = "big";
  loop.initial = "s0";
  for (int i = 0; i < 200; ++i) {
    ll::state_config s;
    // (fmt::format, not "s" + std::to_string(i): GCC 12 -O3 warns inside that operator+)
    s.action = fmt::format("step {}", i);
    s.on["success"] = i + 1 < 200 ? fmt::format("s{}", i + 1) : "done";
    s.on["failure"] = i % 50 == 49 ? fmt::format("missing{}", i) : "s0";
    loop.states[fmt::format("s{}", i)] = s;
  }
  ll::state_config done;
  done.terminal = true;
  loop.states["done"] = done;
  const auto found = ll::validate(loop);
  CHECK(found.size() == 204);
  CHECK(count_code(found, "unknown-state") == 4);
  CHECK(count_code(found, "unrouted-verdict") == 200);  // no state routes `error`
}

TEST_CASE("verdicts: an impossible one is an error with a did-you-mean, an unrouted one a warning") {
  // exit_code gives success, failure, error: `sucess` can never come.
  auto found = check_all(loop_doc(R"("a": {"action": "make", "on_sucess": "done", "on_failure": "a",
                                          "on_error": "done"})"));
  const auto* typo = find_diagnostic(found, "states.a.on_sucess", "impossible-verdict");
  REQUIRE(typo != nullptr);
  CHECK(typo->level == ll::severity::error);
  CHECK(typo->message == "exit_code can never produce the verdict \"sucess\" (did you mean \"success\"?)");
  // ... and `success` is then unrouted.
  const auto* unrouted = find_diagnostic(found, "states.a", "unrouted-verdict");
  REQUIRE(unrouted != nullptr);
  CHECK(unrouted->level == ll::severity::warning);
  CHECK(unrouted->message.find("\"success\"") != std::string::npos);
  // A verdict the evaluator gives, or its twin, is not impossible; a judge can give any.
  CHECK(count_code(check_all(loop_doc(R"("a": {"action": "make", "on_yes": "done", "on_no": "a",
                                            "on_error": "done"})")), "impossible-verdict") == 0);
  CHECK(count_code(check_all(loop_doc(R"("a": {"action": "make", "evaluate": {"type": "llm_structured"},
                                            "on_sucess": "done", "on_error": "done"})")), "impossible-verdict") == 0);
  // Convergence: target, progress, stall, error. One warning per unrouted verdict.
  found = check_all(loop_doc(R"("a": {"action": "m", "evaluate": {"type": "convergence", "target": 0},
                                      "route": {"target": "done", "progres": "a"}})"));
  CHECK(find_diagnostic(found, "states.a.route.progres", "impossible-verdict") != nullptr);
  CHECK(count_code(found, "unrouted-verdict") == 3);  // progress, stall, error
  // `_` routes every verdict; a `next:` state and a maintain loop are not judged by verdict.
  CHECK(count_code(check_all(loop_doc(R"("a": {"action": "m", "on_success": "done", "route": {"_": "done"}})")),
                   "unrouted-verdict") == 0);
  CHECK(count_code(check_all(loop_doc(R"("a": {"action": "m", "next": "done"})")), "unrouted-verdict") == 0);
  CHECK(count_code(check_all(loop_doc(R"("a": {"action": "m", "on_success": "done"})", R"("maintain": true, )")),
                   "unrouted-verdict") == 0);
}

TEST_CASE("templates: a context key close to a defined one is an error unless guarded") {
  const auto with = [](const std::string& action) {
    return check_all(loop_doc(R"("a": {"action": )" + ll::json(action).dump() +
                                  R"(, "on_success": "done", "on_failure": "done", "on_error": "done"})",
                              R"("context": {"target": "x"}, )"));
  };
  auto found = with("echo ${context.targte:shell}");
  const auto* typo = find_diagnostic(found, "states.a.action", "template-unknown-context");
  REQUIRE(typo != nullptr);
  CHECK(typo->level == ll::severity::error);
  CHECK(typo->message.find("(did you mean \"target\"?)") != std::string::npos);
  for (const char* fine : {"echo ${context.targte?}", "echo ${context.targte:default=y}",
                           "echo ${context.target:shell}", "echo ${context.run_dir:shell}",
                           "echo ${context.input:shell}", "echo ${context.unrelated_key:shell}"}) {
    CAPTURE(fine);
    CHECK(count_code(with(fine), "template-unknown-context") == 0);
  }
}

TEST_CASE("templates: action output pasted into a shell action is a warning, even in quotes") {
  const auto with = [](const std::string& action) {
    return check_all(loop_doc(R"("a": {"action": "echo hi", "capture": "out", "next": "b"},
                                 "b": {"action": )" + ll::json(action).dump() +
                              R"(, "on_success": "done", "on_failure": "done", "on_error": "done"})"));
  };
  for (const char* risky : {"echo \"said: ${captured.out.output}\"", "echo ${prev.output}",
                            "echo '${result.details}'", "echo ${prev.stderr}"}) {
    CAPTURE(risky);
    const auto found = with(risky);
    const auto* w = find_diagnostic(found, "states.b.action", "template-unquoted-output");
    REQUIRE(w != nullptr);
    CHECK(w->level == ll::severity::warning);
    CHECK(w->message.find(":shell}") != std::string::npos);
  }
  for (const char* fine : {"echo ${captured.out.output:shell}", "exit ${prev.exit_code}",
                           "echo ${captured.out.duration_ms}", "echo ${prev.state}"}) {
    CAPTURE(fine);
    CHECK(count_code(with(fine), "template-unquoted-output") == 0);
  }
}

namespace {
const ll::diagnostic* at_path(const ll::diagnostics& list, const std::string& path) {
  for (const auto& d : list)
    if (d.path == path) return &d;
  return nullptr;
}
}  // namespace

TEST_CASE("a document with parse errors also gets the validator's findings that stand on their own") {
  // As the original's validator, every problem at once: the unknown evaluator type and
  // action_type (parse), and the route to a state that does not exist (validation) — in the
  // same state as a parse error, since targets are read as written.
  auto bad = ll::load_loop_text(R"({"name": "t", "initial": "start", "states": {
      "start": {"action": "x", "evaluate": {"type": "bogus"}, "on_success": "nowhere"},
      "other": {"action_type": "weird", "terminal": true}}})");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ll::errc::invalid_loop);
  const auto& found = bad.error().details;
  CHECK(found.size() == 3);
  CHECK(at_path(found, "states.start.evaluate.type") != nullptr);
  CHECK(at_path(found, "states.other.action_type") != nullptr);
  const auto* dangling = at_path(found, "states.start.on_success");
  REQUIRE(dangling != nullptr);
  CHECK(dangling->code == "unknown-state");
  CHECK(bad.error().message.rfind("invalid loop document: 3 errors (first: states.start.evaluate.type:", 0) == 0);
}

TEST_CASE("findings that could stem from what a parse error left out are not added") {
  SUBCASE("an unreadable terminal is not 'no terminal state'; an unreadable next is not 'no transition'") {
    auto bad = ll::load_loop_text(R"({"name": "t", "initial": "a", "max_iterations": 0, "states": {
        "a": {"action": "x", "next": 5},
        "b": {"action": "y", "on_success": "a", "on_failure": "gone"},
        "done": {"terminal": "yes"}}})");
    REQUIRE_FALSE(bad.has_value());
    const auto& found = bad.error().details;
    CHECK(count_code(found, "no-terminal") == 0);
    CHECK(count_code(found, "no-transition") == 0);
    CHECK(count_code(found, "unreachable-state") == 0);  // warnings of a partial loop: left out
    CHECK(at_path(found, "states.b.on_failure") != nullptr);  // stands on its own
    CHECK(at_path(found, "max_iterations") != nullptr);       // another key: stands too
    CHECK(ll::detail::count_errors(found) == found.size());
    CHECK(found.size() == 4);
  }
  SUBCASE("an unreadable evaluate leaves its state's route verdicts unchecked") {
    auto bad = ll::load_loop_text(R"({"name": "t", "initial": "a", "states": {
        "a": {"action": "x", "evaluate": {"type": "output_numeric", "operator": "bogus", "target": 1},
              "route": {"weird_verdict": "done"}},
        "done": {"terminal": true}}})");
    REQUIRE_FALSE(bad.has_value());
    REQUIRE(bad.error().details.size() == 1);
    CHECK(bad.error().details[0].path == "states.a.evaluate.operator");
  }
  SUBCASE("a state that is not an object still exists: the initial state is found") {
    auto bad = ll::load_loop_text(R"({"name": "t", "initial": "a", "states": {"a": 3, "done": {"terminal": true}}})");
    REQUIRE_FALSE(bad.has_value());
    REQUIRE(bad.error().details.size() == 1);
    CHECK(bad.error().details[0].path == "states.a");
  }
  SUBCASE("an unreadable `states` keeps no validator finding") {
    auto bad = ll::load_loop_text(R"({"name": "t", "initial": "a", "states": [1], "max_iterations": -1})");
    REQUIRE_FALSE(bad.has_value());
    REQUIRE(bad.error().details.size() == 1);
    CHECK(bad.error().details[0].path == "states");
  }
}

TEST_CASE("an action holding a NUL byte is refused by validation, as the runner refuses it") {
  const auto found = check(loop_doc(R"("a": {"action": "echo a\u0000b", "next": "done"})"));
  const auto* nul = find_diagnostic(found, "states.a.action", "action-nul");
  REQUIRE_MESSAGE(nul != nullptr, dump_all(found));
  CHECK(nul->level == ll::severity::error);
  CHECK(nul->path == "states.a.action");
  CHECK(nul->message == "'action' holds a NUL byte (\\u0000, at byte 6): a program cannot be given it");
  CHECK(count_code(check(loop_doc(R"("a": {"action": "echo ab", "next": "done"})")), "action-nul") == 0);
}

TEST_CASE("a template warning repeated in one field is given once, with its count") {
  std::string action;
  for (int i = 0; i < 1000; ++i) action += "echo ${context.x}; ";
  ll::json doc = ll::json::parse(loop_doc(R"("a": {"action": "", "next": "done"})", R"("context": {"x": "1"}, )"));
  doc["states"]["a"]["action"] = action;
  const auto found = check(doc.dump());
  REQUIRE(count_code(found, "template-unquoted-context") == 1);
  CHECK(find_diagnostic(found, "states.a.action", "template-unquoted-context")->message.find("(found 1000 times)") != std::string::npos);
}

TEST_CASE("validate_loop: the validated loop keeps its warnings and the templates it parsed") {
  auto parsed = ll::parse_loop_text(R"({"name": "t", "initial": "a", "states": {
      "a": {"action": "echo ${context.x:shell}", "capture": "out",
            "on_success": "b", "on_failure": "done"},
      "b": {"action": "echo ${captured.out.output}", "next": "done",
            "evaluate": {"type": "output_contains", "pattern": "${context.x}"}},
      "lonely": {"action": "echo ${context.x:shell}", "next": "done"},
      "done": {"terminal": true}}})");
  REQUIRE(parsed);
  auto valid = ll::validate_loop(*parsed);
  REQUIRE(valid);
  CHECK(valid->loop().name == "t");
  CHECK(count_code(valid->warnings(), "unreachable-state") == 1);  // lonely
  // Every distinct template text, once (lonely's action repeats a's).
  ll::template_table kept;
  const ll::diagnostics again = ll::validate(*parsed, &kept);
  CHECK(again.size() == valid->warnings().size());
  CHECK(kept.size() == 5);  // two actions (lonely repeats a's), "b", "done", the pattern
  auto from_table = kept.compile("echo ${context.x:shell}");
  auto fresh = ll::compile_template("echo ${context.x:shell}");
  REQUIRE(from_table);
  REQUIRE(fresh);
  CHECK(from_table->source() == fresh->source());
  CHECK(from_table->variable_count() == 1);
  ll::interpolation_context ctx;
  const json context{{"x", "a b"}};
  ctx.context = &context;
  CHECK(*ll::render(*from_table, ctx) == *ll::render(*fresh, ctx));
  CHECK(kept.compile("not ${kept").has_value() == false);  // not kept: compiled, and refused

  auto compiled = ll::compiled_loop::compile(std::move(*valid));
  REQUIRE(compiled);
  CHECK((*compiled)->states().size() == 4);
  CHECK((*compiled)->state(*(*compiled)->find("a")).action->source() == "echo ${context.x:shell}");
}

TEST_CASE("validate_loop refuses a loop with an error, with every finding") {
  auto parsed = ll::parse_loop_text(R"({"name": "t", "initial": "a", "states": {
      "a": {"action": "x", "on_success": "nowhere"}, "done": {"terminal": true}}})");
  REQUIRE(parsed);
  auto valid = ll::validate_loop(*parsed);
  REQUIRE_FALSE(valid);
  CHECK(valid.error().code == ll::errc::invalid_loop);
  CHECK(valid.error().path == "states.a.on_success");
  CHECK(at_path(valid.error().details, "states.a.on_success") != nullptr);
}

TEST_CASE("sub-loop states: the reference's static rules and what they leave unused") {
  const auto codes = [](const std::string& states) {
    std::vector<std::string> out;
    for (const auto& d : check(loop_doc(states))) out.push_back(d.path + " " + d.code);
    return out;
  };
  const auto has = [&](const std::string& states, const std::string& entry) {
    const auto list = codes(states);
    return std::find(list.begin(), list.end(), entry) != list.end();
  };
  CHECK(codes(R"("a": {"loop": "child", "with": {"x": "${context.y}", "n": [1, {"k": "v"}]},
                 "timeout": 5, "capture": "c", "on_yes": "done", "on_no": "done"})")
            .empty());
  CHECK(has(R"("a": {"loop": "c", "action": "x", "on_yes": "done"})", "states.a subloop-action"));
  CHECK(has(R"("a": {"action": "x", "with": {"k": 1}, "on_yes": "done"})", "states.a.with with-without-loop"));
  CHECK(has(R"("a": {"action": "x", "context_passthrough": true, "on_yes": "done"})",
            "states.a.context_passthrough with-without-loop"));
  CHECK(has(R"("a": {"loop": "c", "with": {"k": 1}, "context_passthrough": true, "on_yes": "done"})",
            "states.a with-and-passthrough"));
  CHECK(has(R"("a": {"loop": "c", "terminal": true})", "states.a.loop subloop-terminal"));
  CHECK(has(R"("a": {"loop": "c", "evaluate": {"type": "exit_code"}, "on_yes": "done"})",
            "states.a.evaluate unused-state-field"));
  CHECK(has(R"("a": {"action": "x", "output": {"k": "v"}, "on_yes": "done"})", "states.a.output unused-state-field"));
  // templates in loop:, with: and output: are checked like any other
  CHECK(has(R"("a": {"loop": "${nope.x}", "on_yes": "done"})", "states.a.loop template-unknown-namespace"));
  CHECK(has(R"("a": {"loop": "c", "with": {"k": "${nope.x}"}, "on_yes": "done"})",
            "states.a.with.k template-unknown-namespace"));
  CHECK(has(R"("a": {"loop": "c", "on_yes": "b"}, "b": {"terminal": true, "output": {"k": "${nope.x}"}})",
            "states.b.output.k template-unknown-namespace"));
  // a sub-loop state's record has the child's captures: no unknown-key warning for them
  CHECK(codes(R"("a": {"loop": "c", "on_yes": "b"}, "b": {"action": "echo ${captured.a.plan.output:shell}", "next": "done"})")
            .empty());
}

TEST_CASE("sub-loop keys are read strictly") {
  for (const char* bad : {R"("loop": 3)", R"("loop": "")", R"("with": [1])", R"("context_passthrough": "yes")",
                          R"("output": "x")"}) {
    CAPTURE(bad);
    auto loop = ll::parse_loop_text(loop_doc(std::string(R"("a": {"on_yes": "done", )") + bad + "}"));
    CHECK_FALSE(loop.has_value());
  }
  auto typo = ll::parse_loop_text(loop_doc(R"("a": {"loop": "c", "with_": {}, "on_yes": "done"})"));
  REQUIRE_FALSE(typo.has_value());
  CHECK(typo.error().details[0].message.find("did you mean \"with\"") != std::string::npos);
  auto loop = ll::parse_loop_text(loop_doc(R"("a": {"loop": "c", "with": {"k": 1}, "on_yes": "done"})"));
  REQUIRE(loop.has_value());
  CHECK(*loop->states["a"].loop == "c");
  CHECK(loop->states["a"].with.at("k") == 1);
  // written back (show --format json, the digest) and read again, unchanged
  json back;
  ll::to_json(back, *loop);
  CHECK(back["states"]["a"]["loop"] == "c");
  CHECK(back["states"]["a"]["with"]["k"] == 1);
  auto again = ll::parse_loop_text(back.dump());
  REQUIRE(again.has_value());
  CHECK(*again == *loop);
}
