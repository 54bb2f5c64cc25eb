// little_loops — compile_paradigm(): dispatch on `paradigm:`, fsm pass-through, slugify
// SPDX-License-Identifier: MIT
#include "test_paradigms_support.hpp"

#include <little_loops/paradigms.hpp>
#include <string>
#include <vector>

using namespace little_loops;
using paradigm_test::spec;

TEST_CASE("compile_paradigm routes on `paradigm`") {
  auto loop = compile_paradigm(spec(R"({"paradigm": "goal", "goal": "No errors", "tools": ["check", "fix"]})"));
  REQUIRE(loop);
  CHECK(loop->initial == "evaluate");
  loop = compile_paradigm(spec(R"({"paradigm": "convergence", "name": "test", "check": "cmd", "toward": 0, "using": "fix"})"));
  REQUIRE(loop);
  CHECK(loop->initial == "measure");
  loop = compile_paradigm(spec(R"({"paradigm": "invariants", "name": "test", "constraints": [{"name": "c1", "check": "cmd", "fix": "fix"}]})"));
  REQUIRE(loop);
  CHECK(loop->initial == "check_c1");
  loop = compile_paradigm(spec(R"({"paradigm": "imperative", "name": "test", "steps": ["step1"], "until": {"check": "cmd"}})"));
  REQUIRE(loop);
  CHECK(loop->initial == "step_0");
}

TEST_CASE("compile_paradigm: fsm documents, with or without the key, are loops") {
  auto loop = compile_paradigm(spec(R"({"paradigm": "fsm", "name": "test", "initial": "start",
      "states": {"start": {"terminal": true}}})"));
  REQUIRE(loop);
  CHECK(loop->name == "test");
  CHECK(loop->states.at("start").terminal);
  auto plain = compile_paradigm(spec(R"({"name": "test", "initial": "start", "states": {"start": {"terminal": true}}})"));
  REQUIRE(plain);
  CHECK(loop->paradigm == "fsm");  // kept, as the original's FSMLoop.from_dict keeps it
  CHECK_FALSE(plain->paradigm.has_value());
  loop->paradigm.reset();
  CHECK(*plain == *loop);

  // parse errors come from the schema parser
  auto bad = compile_paradigm(spec(R"({"paradigm": "fsm", "name": "t", "initial": "s",
      "states": {"s": {"terminal": true, "evaluate": {"type": "exit_code", "operator": "eqq"}}}})"));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == errc::invalid_loop);
  CHECK(paradigm_test::has_diagnostic(bad.error(), "states.s.evaluate.operator", R"(did you mean "eq"?)"));

  // and structural errors from validate()
  bad = compile_paradigm(spec(R"({"name": "t", "initial": "nowhere", "states": {"s": {"terminal": true}}})"));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == errc::invalid_loop);
  CHECK(bad.error().path == "initial");
  CHECK(bad.error().details[0].code == "unknown-initial");

  // warnings are reported, not fatal
  diagnostics warnings;
  loop = compile_paradigm(spec(R"({"name": "t", "initial": "s", "states": {"s": {"terminal": true},
      "orphan": {"terminal": true}}})"), &warnings);
  REQUIRE(loop);
  CHECK_FALSE(warnings.empty());
  CHECK_FALSE(has_errors(warnings));
}

TEST_CASE("compile_paradigm: a compiled loop keeps its paradigm and loads back as a loop") {
  for (const char* text :
       {R"({"paradigm": "goal", "goal": "No errors", "tools": ["check", "fix"]})",
        R"({"paradigm": "convergence", "name": "c", "check": "cmd", "toward": 0, "using": "fix"})",
        R"({"paradigm": "invariants", "name": "i", "constraints": [{"name": "c1", "check": "cmd", "fix": "fix"}]})",
        R"({"paradigm": "imperative", "name": "m", "steps": ["s"], "until": {"check": "cmd"}})"}) {
    auto compiled = compile_paradigm(spec(text));
    REQUIRE(compiled);
    const json doc = *compiled;
    CHECK(doc["paradigm"] == spec(text)["paradigm"]);
    // With `initial` the document is a loop (as the original's loader decides), not a spec.
    auto back = compile_paradigm(doc);
    INFO((back ? std::string() : paradigm_test::messages(back.error())));
    REQUIRE(back);
    CHECK(*back == *compiled);
    auto parsed = parse_loop(doc);
    REQUIRE(parsed);
    CHECK(*parsed == *compiled);
  }
  // A hand-written loop has none; in a loop any string is kept as provenance (as the
  // original's FSMLoop keeps it); without `initial` an unknown paradigm is refused.
  CHECK_FALSE(parse_loop(spec(R"({"name": "t", "initial": "s", "states": {"s": {"terminal": true}}})"))->paradigm);
  auto custom = compile_paradigm(spec(R"({"paradigm": "custom", "name": "t", "initial": "s", "states": {"s": {"terminal": true}}})"));
  REQUIRE(custom);
  CHECK(custom->paradigm == "custom");
  CHECK_FALSE(compile_paradigm(spec(R"({"paradigm": "custom", "name": "t"})")));
  // A paradigm spec handed to parse_loop says what to do.
  auto bad = parse_loop(spec(R"({"paradigm": "goal", "goal": "x", "tools": ["c"]})"));
  REQUIRE_FALSE(bad);
  CHECK(paradigm_test::has_diagnostic(bad.error(), "", "compiled with compile_paradigm"));
}

TEST_CASE("compile_paradigm: unknown paradigm lists the known ones") {
  auto e = compile_paradigm(spec(R"({"paradigm": "unknown"})"));
  REQUIRE_FALSE(e);
  CHECK(e.error().code == errc::invalid_spec);
  CHECK(e.error().path == "paradigm");
  CHECK(e.error().message ==
        "Unknown paradigm: 'unknown'. Must be one of: convergence, fsm, goal, imperative, invariants");
  REQUIRE(e.error().details.size() == 1);
  CHECK(e.error().details[0].code == "unknown-paradigm");

  e = compile_paradigm(spec(R"({"paradigm": "invariant"})"));
  REQUIRE_FALSE(e);
  CHECK(e.error().message ==
        "Unknown paradigm: 'invariant'. Must be one of: convergence, fsm, goal, imperative, "
        "invariants (did you mean \"invariants\"?)");

  e = compile_paradigm(spec(R"({"paradigm": 3})"));
  REQUIRE_FALSE(e);
  CHECK(e.error().path == "paradigm");
  CHECK(e.error().details[0].code == "wrong-type");

  e = compile_paradigm(json("goal"));
  REQUIRE_FALSE(e);
  CHECK(e.error().code == errc::invalid_spec);
}

TEST_CASE("compile_paradigm_text: JSON text in, syntax errors out") {
  auto loop = compile_paradigm_text(R"({"paradigm": "goal", "goal": "x", "tools": ["c"]})");
  REQUIRE(loop);
  CHECK(loop->name == "goal-x");
  auto bad = compile_paradigm_text(R"({"paradigm": "goal", "goal": )");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == errc::parse_error);
  bad = compile_paradigm_text(R"({"paradigm": "goal", "goal": "a", "goal": "b", "tools": ["c"]})");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == errc::parse_error);
}

TEST_CASE("slugify follows the original's rules") {
  using detail::slugify;
  CHECK(slugify("No Type Errors in src/") == "no-type-errors-in-src");
  CHECK(slugify("  --Hello__World--  ") == "hello__world");
  CHECK(slugify("a -/- b") == "a-b");
  CHECK(slugify("a/b") == "ab");
  CHECK(slugify("tab\tsep\nnl") == "tab-sep-nl");
  CHECK(slugify(std::string(60, 'x')) == std::string(50, 'x'));
  // The cut comes after trimming, so it may leave a trailing '-', as in the original.
  CHECK(slugify(std::string(49, 'a') + " b") == std::string(49, 'a') + "-");
  CHECK(slugify("") == "");
  CHECK(slugify("!!!") == "");
  CHECK(slugify("x", 0) == "");
  // Unicode: letters are kept and lower-cased, symbols and emoji dropped, the cut counts
  // characters, not bytes.
  CHECK(slugify("Caf\xC3\xA9 \xC3\x9Cn\xC3\xAF" "code \xE2\x80\x94 test") ==
        "caf\xC3\xA9-\xC3\xBCn\xC3\xAF" "code-test");
  CHECK(slugify("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xE3\x83\x86\xE3\x82\xB9\xE3\x83\x88") ==
        "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E-\xE3\x83\x86\xE3\x82\xB9\xE3\x83\x88");
  CHECK(slugify("emoji \xF0\x9F\x8E\x89 ok") == "emoji-ok");
  CHECK(slugify("\xC5\xB8" "es \xC4\x80" "B") == "\xC3\xBF" "es-\xC4\x81" "b");
  CHECK(slugify("\xCE\xA3\xCE\x9F\xCE\xA6\xCE\x99\xCE\x91 \xD0\x9C\xD0\x98\xD0\xA0") ==
        "\xCF\x83\xCE\xBF\xCF\x86\xCE\xB9\xCE\xB1-\xD0\xBC\xD0\xB8\xD1\x80");
  CHECK(slugify(std::string(60, '\xC3') ) == "");  // invalid UTF-8 bytes are dropped
  std::string accented;
  for (int i = 0; i < 60; ++i) accented += "\xC3\xA9";
  std::string expected;
  for (int i = 0; i < 50; ++i) expected += "\xC3\xA9";
  CHECK(slugify(accented) == expected);
}

TEST_CASE("slugify: every script as Python 3.11 (Unicode 14) slugs it") {
  // Expected values computed with the original's _slugify under Python 3.11: `\w` keeps
  // letters and numerics of every script and drops marks and symbols, str.lower() maps every
  // cased script, and a capital sigma ending a word becomes the final form.
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"\xCE\x9F\xCE\x94\xCE\xA5\xCE\xA3\xCE\xA3\xCE\x95\xCE\xA5\xCE\xA3 \xCE\x9A\xCE\x91\xCE\x99 \xCE\xA3\xCE\xA5\xCE\x9D\xCE\xA4\xCE\xA1\xCE\x9F\xCE\xA6\xCE\x9F\xCE\x99",
       "\xCE\xBF\xCE\xB4\xCF\x85\xCF\x83\xCF\x83\xCE\xB5\xCF\x85\xCF\x82-\xCE\xBA\xCE\xB1\xCE\xB9-\xCF\x83\xCF\x85\xCE\xBD\xCF\x84\xCF\x81\xCE\xBF\xCF\x86\xCE\xBF\xCE\xB9"},
      {"\xCE\xA3\xCE\x91\xCE\xA3-\xCE\xA3",
       "\xCF\x83\xCE\xB1\xCF\x82-\xCF\x83"},
      {"\xCE\x91\xCE\xA3'\xCE\x92 \xCE\x91\xCE\xA3\xC2\xB7",
       "\xCE\xB1\xCF\x83\xCE\xB2-\xCE\xB1\xCF\x82"},
      {"\xE0\xA4\x9F\xE0\xA4\xBE\xE0\xA4\x87\xE0\xA4\xAA \xE0\xA4\xA4\xE0\xA5\x8D\xE0\xA4\xB0\xE0\xA5\x81\xE0\xA4\x9F\xE0\xA4\xBF\xE0\xA4\xAF\xE0\xA4\xBE\xE0\xA4\x81 \xE0\xA4\xA0\xE0\xA5\x80\xE0\xA4\x95 \xE0\xA4\x95\xE0\xA4\xB0\xE0\xA5\x87\xE0\xA4\x82",
       "\xE0\xA4\x9F\xE0\xA4\x87\xE0\xA4\xAA-\xE0\xA4\xA4\xE0\xA4\xB0\xE0\xA4\x9F\xE0\xA4\xAF-\xE0\xA4\xA0\xE0\xA4\x95-\xE0\xA4\x95\xE0\xA4\xB0"},
      {"\xE0\xB8\x97\xE0\xB8\x94\xE0\xB8\xAA\xE0\xB8\xAD\xE0\xB8\x9A \xE0\xB8\xA0\xE0\xB8\xB2\xE0\xB8\xA9\xE0\xB8\xB2\xE0\xB9\x84\xE0\xB8\x97\xE0\xB8\xA2",
       "\xE0\xB8\x97\xE0\xB8\x94\xE0\xB8\xAA\xE0\xB8\xAD\xE0\xB8\x9A-\xE0\xB8\xA0\xE0\xB8\xB2\xE0\xB8\xA9\xE0\xB8\xB2\xE0\xB9\x84\xE0\xB8\x97\xE0\xB8\xA2"},
      {"\xD4\xB1 \xD4\xB2 \xD4\xB3 \xD4\xB1\xD4\xB2\xD4\xB3",
       "\xD5\xA1-\xD5\xA2-\xD5\xA3-\xD5\xA1\xD5\xA2\xD5\xA3"},
      {"\xE1\x8F\xA3\xE1\x8E\xB3\xE1\x8E\xA9 \xE1\x8E\xA6\xE1\x8F\xAC\xE1\x8F\x82\xE1\x8E\xAF\xE1\x8F\x8D\xE1\x8F\x97",
       "\xEA\xAE\xB3\xEA\xAE\x83\xEA\xAD\xB9-\xEA\xAD\xB6\xEA\xAE\xBC\xEA\xAE\x92\xEA\xAD\xBF\xEA\xAE\x9D\xEA\xAE\xA7"},
      {"\xE2\x92\xB6 \xE2\x93\x91 \xE2\x85\xAB \xC2\xBD \xC2\xB2",
       "\xE2\x85\xBB-\xC2\xBD-\xC2\xB2"},
      {"\xC7\x85ungla \xC7\x88 \xC7\x8A",
       "\xC7\x86ungla-\xC7\x89-\xC7\x8C"},
      {"\xE1\xB2\x90\xE1\xB2\x91\xE1\xB2\x92 Georgian Mtavruli",
       "\xE1\x83\x90\xE1\x83\x91\xE1\x83\x92-georgian-mtavruli"},
      {"\xF0\x90\x90\x80\xF0\x90\x90\x81 Deseret",
       "\xF0\x90\x90\xA8\xF0\x90\x90\xA9-deseret"},
      {"\xD8\xB9\xD8\xB1\xD8\xA8\xD9\x8A \xD9\xA1\xD9\xA2\xD9\xA3 \xD9\x85\xD9\x8E\xD8\xB1\xD9\x92\xD8\xAD\xD9\x8E\xD8\xA8\xD9\x8B\xD8\xA7",
       "\xD8\xB9\xD8\xB1\xD8\xA8\xD9\x8A-\xD9\xA1\xD9\xA2\xD9\xA3-\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7"},
      {"Z\xC3\xBCrich \xC4\xB0stanbul \xCE\xA3\xCE\x91\xCE\xA3",
       "z\xC3\xBCrich-i\xCC\x87stanbul-\xCF\x83\xCE\xB1\xCF\x82"},
      {"\xCA\xB0modifier \xCA\xBC" "apostrophe",
       "\xCA\xB0modifier-\xCA\xBC" "apostrophe"},
  };
  for (const auto& c : cases) {  // (no structured binding: clang 14 cannot capture one)
    CAPTURE(c.first);
    CHECK(detail::slugify(c.first) == c.second);
  }
}

TEST_CASE("a loop document with parse errors reports the validator's standalone findings too") {
  auto bad = compile_paradigm_text(R"({"name": "t", "initial": "start", "states": {
      "start": {"action": "x", "evaluate": {"type": "bogus"}, "on_success": "nowhere"},
      "other": {"terminal": "yes"}}})");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == errc::invalid_loop);
  REQUIRE(bad.error().details.size() == 3);
  CHECK(bad.error().details[2].path == "states.start.on_success");
  CHECK(bad.error().details[2].code == "unknown-state");
}

TEST_CASE("the validator's findings on a compiled paradigm name the spec's paths") {
  // validate() judges the compiled loop; what it finds is reported where the user wrote it.
  auto paths = [](const json& s) {
    auto loop = compile_paradigm(s);
    REQUIRE_FALSE(loop.has_value());
    CHECK(loop.error().code == errc::invalid_spec);
    std::vector<std::string> out;
    for (const auto& d : loop.error().details) out.push_back(d.path + ": " + d.message);
    return out;
  };
  using v = std::vector<std::string>;
  CHECK(paths(spec(R"({"paradigm": "goal", "goal": "g", "tools": ["echo ${oops", {"tool": "fix ${"}],
                       "evaluator": {"type": "output_contains"}})")) ==
        v{"evaluator: Evaluator type 'output_contains' requires 'pattern' field",
          R"(tools[0]: invalid template "echo ${oops": unterminated ${ at offset 5)",
          R"(tools[1].tool: invalid template "fix ${": unterminated ${ at offset 4)"});
  // One tool is both the check and the fix: its finding once.
  CHECK(paths(spec(R"({"paradigm": "goal", "goal": "g", "tools": ["${"]})")) ==
        v{R"(tools[0]: invalid template "${": unterminated ${ at offset 0)"});
  CHECK(paths(spec(R"({"paradigm": "invariants", "name": "inv", "constraints": [
                       {"name": "a", "check": "true", "fix": "true"},
                       {"name": "b", "check": "${", "fix": "x ${", "evaluator": {"type": "output_numeric", "target": 1}}]})")) ==
        v{"constraints[1].evaluator: Evaluator type 'output_numeric' requires 'operator' field",
          R"(constraints[1].check: invalid template "${": unterminated ${ at offset 0)",
          R"(constraints[1].fix: invalid template "x ${": unterminated ${ at offset 2)"});
  CHECK(paths(spec(R"({"paradigm": "imperative", "name": "imp", "steps": ["true", "${"],
                       "until": {"check": "${x", "evaluator": {"type": "output_json", "path": "a", "operator": "eq"}}})")) ==
        v{"until.evaluator: Evaluator type 'output_json' requires 'target' field",
          R"(steps[1]: invalid template "${": unterminated ${ at offset 0)",
          R"(until.check: invalid template "${x": unterminated ${ at offset 0)"});
  CHECK(paths(spec(R"({"paradigm": "convergence", "name": "c", "check": "echo 1", "toward": 0, "using": "${x"})")) ==
        v{R"(using: invalid template "${x": unterminated ${ at offset 0)"});
}

TEST_CASE("draft_paradigm: a host's changes are judged by the one validation") {
  // The goal's tool reads context.targte, close to the spec's `target`: an error, unless
  // the host (ll-loop's --context) defines it before validate_loop() runs.
  const json goal = spec(R"({"paradigm": "goal", "goal": "g", "context": {"target": "t"},
                             "tools": ["echo ${context.targte:shell}"]})");
  auto refused = draft_paradigm(goal);
  REQUIRE(refused);
  auto judged = validate_loop(std::move(*refused));
  REQUIRE_FALSE(judged.has_value());
  CHECK(judged.error().code == errc::invalid_spec);
  CHECK(judged.error().path == "tools[0]");  // at the spec's path, as compile_paradigm() says
  CHECK(judged.error().message == compile_paradigm(goal).error().message);

  auto draft = draft_paradigm(goal);
  REQUIRE(draft);
  CHECK(draft->loop().initial == "evaluate");
  CHECK(draft->findings().empty());
  draft->loop().context["targte"] = "x";
  draft->loop().max_iterations = 3;
  auto validated = validate_loop(std::move(*draft));
  REQUIRE(validated);
  CHECK(validated->loop().max_iterations == 3);
  auto compiled = compiled_loop::compile(std::move(*validated));  // no second validation
  REQUIRE(compiled);
  CHECK((*compiled)->loop().context.at("targte") == "x");

  // A change that causes a finding gets it, at the spec's path.
  auto capped = draft_paradigm(goal);
  REQUIRE(capped);
  capped->loop().context["targte"] = "x";
  capped->loop().max_iterations = 0;
  auto zero = validate_loop(std::move(*capped));
  REQUIRE_FALSE(zero.has_value());
  CHECK(zero.error().path == "max_iterations");
}

TEST_CASE("draft_paradigm: a loop document's draft validates as load_loop() does") {
  const json doc = spec(R"({"name": "t", "initial": "start", "states": {
      "start": {"action": "x", "evaluate": {"type": "bogus"}, "on_success": "nowhere"},
      "other": {"terminal": "yes"}}})");
  auto draft = draft_paradigm(doc);
  REQUIRE(draft);
  CHECK(draft->findings().size() == 2);  // the reader's; the validator's come with validation
  auto validated = validate_loop(std::move(*draft));
  REQUIRE_FALSE(validated.has_value());
  const auto loaded = load_loop(doc);
  REQUIRE_FALSE(loaded.has_value());
  CHECK(validated.error().message == loaded.error().message);
  CHECK(validated.error().details == loaded.error().details);

  diagnostics warnings;
  const json fine = spec(R"({"name": "t", "initial": "a", "states": {"a": {"action": "true", "next": "b"},
      "b": {"terminal": true}, "lost": {"terminal": true}}})");
  REQUIRE(load_loop(fine, &warnings));
  auto good = validate_loop(read_loop_draft(fine));
  REQUIRE(good);
  CHECK(good->warnings() == warnings);  // `lost` is unreachable
  CHECK_FALSE(good->warnings().empty());
  CHECK_FALSE(draft_paradigm(spec(R"({"paradigm": "goals"})")).has_value());
}
