// little_loops — tests for schema.hpp: enum names, strict parsing, serialisation, round trips
// SPDX-License-Identifier: MIT
#include <little_loops/json_schema.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/validation.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "core_test_support.hpp"

#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>

namespace ll = little_loops;
using ll::json;
using core_test::dump_all;
using core_test::find_diagnostic;

namespace {

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(LITTLE_LOOPS_FIXTURES_DIR) + "/core/" + name, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Order-insensitive comparison of two documents (nlohmann::json sorts object keys).
bool same_document(const json& a, const json& b) {
  return nlohmann::json::parse(a.dump()) == nlohmann::json::parse(b.dump());
}

}  // namespace

TEST_CASE("only /name and /namespace:name are slash commands; a path is a shell command") {
  for (const char* slash : {"/ll:fix", "/ll:fix src --all", "/review", "/commit\nmore", "/a.b-c_d:x-1"}) {
    CAPTURE(slash);
    CHECK(ll::is_slash_command_text(slash));
  }
  for (const char* shell : {"/usr/bin/true", "/bin/sh -c x", "/ll:fix/x", "/", "/ ll", "/:x", "/x:",
                            "/a::b", "/.hidden", "./run.sh", "echo /ll:fix", "", "/tmp/x;y", "/x$(y)"}) {
    CAPTURE(shell);
    CHECK_FALSE(ll::is_slash_command_text(shell));
  }
  ll::state_config state;
  state.action = "/usr/bin/make";
  CHECK_FALSE(ll::runs_prompt_action(state));
  state.action = "/ll:fix";
  CHECK(ll::runs_prompt_action(state));
  state.action_type = ll::action_kind::shell;
  CHECK_FALSE(ll::runs_prompt_action(state));
}

TEST_CASE("the JSON Schema names the keys the loader accepts, in both dialects") {
  const ll::json schema = ll::loop_json_schema();
  CHECK(schema["$schema"] == "https://json-schema.org/draft/2020-12/schema");
  const ll::json& defs = schema["$defs"];
  for (const char* key : {"name", "initial", "states", "max_iterations", "max_steps", "on_max_steps",
                          "dialect", "context", "llm", "scope", "on_handoff", "import", "from"})
    CHECK_MESSAGE(defs["loop"]["properties"].contains(key), key);
  CHECK(defs["loop"]["additionalProperties"] == false);
  for (const char* key : {"action", "action_type", "evaluate", "route", "next", "terminal", "on_yes",
                          "max_retries"})
    CHECK_MESSAGE(defs["state"]["properties"].contains(key), key);
  CHECK(defs["state"]["patternProperties"].contains("^on_.+$"));
  CHECK(defs["state"]["properties"]["action_type"]["enum"] ==
        ll::json::array({"shell", "prompt", "slash_command", "mcp_tool"}));
  CHECK(defs["evaluate"]["properties"]["type"]["enum"].size() == 13);
  CHECK(defs["state"]["properties"]["retry"]["type"] == "array");
  CHECK(defs["state"]["properties"]["catch"]["type"] == "object");
  CHECK(defs["evaluate"]["properties"]["max_stall"]["type"] == "integer");
  CHECK(defs["loop"]["properties"]["circuit"]["type"] == "object");
  CHECK(defs["loop"]["properties"]["dialect"]["enum"] == ll::json::array({"seed", "current"}));
  CHECK(defs["llm"]["properties"].contains("max_tokens"));
  CHECK_FALSE(defs["state"]["properties"].contains("host_guard"));  // a plugin key is an error
  CHECK(defs["state"]["properties"]["agent"]["type"] == "string");
  CHECK(defs["state"]["properties"]["session_mode"]["enum"] == ll::json::array({"fresh", "continue"}));
  CHECK(defs["loop"]["properties"]["pruning_profile"]["properties"]["suppress_catalog"]["type"] == "boolean");
  CHECK(defs["loop"]["properties"]["pruning_profile"]["additionalProperties"] == false);
  CHECK(defs["state"]["properties"]["worktree"]["type"] == "string");
  CHECK(defs["loop"]["properties"]["tamper_guard"]["enum"] == ll::json::array({"revert", "fail", "allow"}));
  CHECK(defs["state"]["properties"]["prepatch_check"]["enum"] == ll::json::array({"fail", "warn", "allow"}));
}

TEST_CASE("enum names round-trip through to_string and the parse helpers") {
  for (auto t : {ll::evaluator_type::exit_code, ll::evaluator_type::output_numeric,
                 ll::evaluator_type::output_json, ll::evaluator_type::output_contains,
                 ll::evaluator_type::convergence, ll::evaluator_type::llm_structured})
    CHECK(ll::parse_evaluator_type(ll::to_string(t)) == t);
  for (auto op : {ll::comparison_op::eq, ll::comparison_op::ne, ll::comparison_op::lt,
                  ll::comparison_op::le, ll::comparison_op::gt, ll::comparison_op::ge})
    CHECK(ll::parse_comparison_op(ll::to_string(op)) == op);
  CHECK(ll::to_string(ll::convergence_direction::maximize) == "maximize");
  CHECK(ll::parse_convergence_direction("minimize") == ll::convergence_direction::minimize);
  CHECK(ll::to_string(ll::action_kind::slash_command) == "slash_command");
  CHECK(ll::parse_action_kind("prompt") == ll::action_kind::prompt);
  CHECK(ll::to_string(ll::handoff_policy::terminate) == "terminate");
  CHECK(ll::parse_handoff_policy("spawn") == ll::handoff_policy::spawn);
  CHECK(ll::to_string(ll::evaluator_type::output_json) == "output_json");

  CHECK_FALSE(ll::parse_evaluator_type("Exit_Code").has_value());  // exact spelling only
  CHECK_FALSE(ll::parse_comparison_op("==").has_value());
  CHECK_FALSE(ll::parse_convergence_direction("").has_value());
  static_assert(ll::enum_from_string<ll::comparison_op>("ge") == ll::comparison_op::ge);
  static_assert(ll::to_string(ll::comparison_op::lt) == "lt");

  json j = ll::evaluator_type::convergence;  // ADL to_json: the document spelling
  CHECK(j == "convergence");
}

TEST_CASE("parse_enum reports unknown values with a hint and the valid names") {
  ll::diagnostics out;
  CHECK_FALSE(ll::parse_enum<ll::comparison_op>(json("eqq"), "states.fix.evaluate.operator", out));
  REQUIRE(out.size() == 1);
  CHECK(out[0].path == "states.fix.evaluate.operator");
  CHECK(out[0].code == "unknown-value");
  CHECK(out[0].message ==
        "Invalid operator 'eqq'. Must be one of: eq, ge, gt, le, lt, ne (did you mean \"eq\"?)");

  out.clear();
  CHECK_FALSE(ll::parse_enum<ll::convergence_direction>(json("sideways"), "d", out));
  REQUIRE(out.size() == 1);
  CHECK(out[0].message.find("did you mean") == std::string::npos);  // nothing close

  out.clear();
  CHECK_FALSE(ll::parse_enum<ll::action_kind>(json(3), "a", out));
  REQUIRE(out.size() == 1);
  CHECK(out[0].code == "wrong-type");
  CHECK(out[0].message == "expected a string, got integer 3");

  out.clear();
  CHECK(ll::parse_enum<ll::handoff_policy>(json("pause"), "p", out) == ll::handoff_policy::pause);
  CHECK(out.empty());
}

TEST_CASE("a minimal loop parses with every default") {
  const auto loop = ll::parse_loop_text(read_fixture("minimal_loop.json"));
  REQUIRE_MESSAGE(loop.has_value(), (loop ? "" : ll::to_string(loop.error())));
  CHECK(loop->name == "minimal");
  CHECK(loop->initial == "run");
  CHECK_FALSE(loop->description.has_value());
  REQUIRE(loop->states.size() == 2);
  CHECK(loop->states.begin()->first == "run");  // document order
  const auto& run = loop->states.at("run");
  CHECK(run.action == "true");
  CHECK_FALSE(run.action_type.has_value());
  CHECK_FALSE(run.evaluate.has_value());
  REQUIRE(run.on.size() == 2);
  CHECK(run.on.at("success") == "done");
  CHECK(run.on.at("failure") == "run");
  CHECK(loop->states.at("done").terminal);
  CHECK(loop->max_iterations == 50);
  CHECK(loop->context == json::object());
  CHECK(loop->scope.empty());
  CHECK_FALSE(loop->backoff.has_value());
  CHECK_FALSE(loop->timeout.has_value());
  CHECK_FALSE(loop->maintain);
  CHECK(loop->llm == ll::llm_config{});
  CHECK(loop->llm.model == "sonnet");
  CHECK(loop->llm.max_tokens == 256);
  CHECK(loop->llm.timeout == 1800);
  CHECK(loop->on_handoff == ll::handoff_policy::pause);
  CHECK_FALSE(loop->on_max_iterations.has_value());
}

TEST_CASE("every field of a full loop is read") {
  const auto loop = ll::parse_loop_text(read_fixture("full_loop.json"));
  REQUIRE_MESSAGE(loop.has_value(), (loop ? "" : ll::to_string(loop.error())));
  CHECK(loop->description == "Run the tests, fix failures, stop when green");
  CHECK(loop->context.at("limit") == 4);
  CHECK(loop->scope == std::vector<std::string>{"src/", "tests/"});
  CHECK(loop->max_iterations == 20);
  CHECK(loop->backoff == 0.25);
  CHECK(loop->timeout == 3600);
  CHECK(loop->maintain);
  CHECK_FALSE(loop->llm.enabled);
  CHECK(loop->llm.model == "opus");
  CHECK(loop->llm.max_tokens == 512);
  CHECK(loop->llm.timeout == 60);
  CHECK(loop->on_handoff == ll::handoff_policy::spawn);
  CHECK(loop->on_max_iterations == "broken");

  const auto& check = loop->states.at("check");
  CHECK(check.action_type == ll::action_kind::shell);
  REQUIRE(check.evaluate.has_value());
  CHECK(check.evaluate->type == ll::evaluator_type::output_json);
  CHECK(check.evaluate->op == ll::comparison_op::eq);
  CHECK(check.evaluate->target == json(0));
  CHECK(check.evaluate->path == ".summary.failed");
  CHECK(check.evaluate->source == "${captured.report.output}");
  CHECK(check.on.at("error") == "broken");
  CHECK(check.capture == "report");
  CHECK(check.timeout == 300);

  const auto& fix = loop->states.at("fix");
  CHECK(fix.action_type == ll::action_kind::slash_command);
  CHECK(fix.evaluate->type == ll::evaluator_type::llm_structured);
  CHECK(fix.evaluate->prompt == "Did the fix work?");
  CHECK(fix.evaluate->schema->at("type") == "object");
  CHECK(fix.evaluate->min_confidence == 0.7);
  CHECK(fix.evaluate->uncertain_suffix);
  REQUIRE(fix.route.has_value());
  CHECK(fix.route->routes.size() == 3);  // `_` and `_error` are kept apart
  CHECK(fix.route->routes.at("partial") == "measure");
  CHECK(fix.route->default_target == "$current");
  CHECK(fix.route->error_target == "broken");
  CHECK(fix.on.empty());
  CHECK(fix.timeout == 1.5);

  const auto& measure = loop->states.at("measure");
  CHECK(measure.evaluate->tolerance == json("${context.tolerance}"));
  CHECK(measure.evaluate->previous == "${captured.count.output}");
  CHECK(measure.evaluate->direction == ll::convergence_direction::maximize);
  CHECK(measure.on.at("target") == "grep");  // generic on_<verdict>
  CHECK(measure.on.at("stall") == "broken");
  CHECK(measure.on_maintain == "check");      // a real field, not a shorthand
  CHECK(measure.on.count("maintain") == 0);

  const auto& grep = loop->states.at("grep");
  CHECK(grep.evaluate->pattern == "ERROR \\d+");
  CHECK(grep.evaluate->negate);
  CHECK(grep.next == "number");

  CHECK(loop->states.at("number").evaluate->target == json("${context.limit}"));
  CHECK(loop->states.at("broken").failure);

  // The full fixture is structurally valid (warnings only).
  const auto found = ll::validate(*loop);
  CHECK_MESSAGE(!ll::has_errors(found), dump_all(found));
}

TEST_CASE("to_json omits defaults and uses the canonical key order") {
  ll::fsm_loop loop;
  loop.name = "n";
  loop.initial = "a";
  ll::state_config a;
  a.action = "make";
  a.on["success"] = "done";
  a.on["blocked"] = "done";
  loop.states["a"] = a;
  ll::state_config done;
  done.terminal = true;
  loop.states["done"] = done;
  CHECK(json(loop).dump() ==
        R"({"name":"n","initial":"a","states":{"a":{"action":"make","on_success":"done",)"
        R"("on_blocked":"done"},"done":{"terminal":true}}})");

  loop.description = "d";
  loop.max_iterations = 7;
  loop.timeout = 30.0;
  loop.backoff = 0.5;
  loop.on_max_iterations = "done";
  loop.llm.max_tokens = 100;
  loop.on_handoff = ll::handoff_policy::terminate;
  loop.maintain = true;
  const json j = loop;
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"name", "description", "initial", "states",
                                         "max_iterations", "backoff", "timeout", "maintain",
                                         "llm", "on_handoff", "on_max_iterations"});
  CHECK(j.at("timeout").is_number_integer());  // 30.0 is written as 30
  CHECK(j.at("backoff") == 0.5);
  CHECK(j.at("llm") == json{{"max_tokens", 100}});

  ll::evaluate_config e;
  CHECK(json(e).dump() == R"({"type":"exit_code"})");
  e.type = ll::evaluator_type::convergence;
  e.min_confidence = 0.5;  // default: omitted
  e.direction = ll::convergence_direction::maximize;
  e.target = 3;
  CHECK(json(e).dump() == R"({"type":"convergence","target":3,"direction":"maximize"})");

  ll::route_config r;
  r.error_target = "x";
  r.default_target = "y";
  r.routes["success"] = "z";
  CHECK(json(r).dump() == R"({"success":"z","_":"y","_error":"x"})");

  CHECK(json(ll::llm_config{}) == json::object());
}

TEST_CASE("round trip: to_json(parse(doc)) == doc and parse(to_json(loop)) == loop") {
  for (const char* name : {"full_loop.json", "minimal_loop.json"}) {
    CAPTURE(name);
    const auto doc = ll::parse_json_text(read_fixture(name));
    REQUIRE(doc.has_value());
    const auto loop = ll::parse_loop(*doc);
    REQUIRE(loop.has_value());
    const json back = *loop;
    CHECK(back == *doc);  // same keys, same order, same values
    CHECK(back.dump() == doc->dump());
    const auto again = ll::parse_loop(back);
    REQUIRE(again.has_value());
    CHECK(*again == *loop);
  }

  // A document written in another key order is the same document.
  const auto shuffled = ll::parse_json_text(R"({
    "states": {"b": {"terminal": true},
               "a": {"next": "b", "timeout": 2, "action": "x", "route": {"_": "b", "ok": "b"}}},
    "initial": "a", "name": "shuffled", "timeout": 9.5})");
  REQUIRE(shuffled.has_value());
  const auto loop = ll::parse_loop(*shuffled);
  REQUIRE(loop.has_value());
  CHECK(same_document(json(*loop), *shuffled));
  CHECK(json(*loop).begin().key() == "name");
}

TEST_CASE("shorthands are generic and route tables keep `_` and `_error` apart") {
  const auto loop = ll::parse_loop_text(R"({"name": "g", "initial": "a", "states": {
      "a": {"action": "x", "on_blocked": "b", "on_success_uncertain": "b", "on_yes": "b",
            "route": {"error": "b", "_error": "a", "_": "b"}},
      "b": {"terminal": true}}})");
  REQUIRE(loop.has_value());
  const auto& a = loop->states.at("a");
  CHECK(a.on.size() == 3);
  CHECK(a.on.at("blocked") == "b");
  CHECK(a.on.at("success_uncertain") == "b");
  CHECK(a.on.at("yes") == "b");
  CHECK(a.route->routes.size() == 1);
  CHECK(a.route->routes.at("error") == "b");
  CHECK(a.route->error_target == "a");
  CHECK(a.route->default_target == "b");
}

TEST_CASE("parse_evaluate_config is strict and reports paths below the given one") {
  ll::diagnostics out;
  auto ok = ll::parse_evaluate_config(
      json::parse(R"({"type": "output_numeric", "operator": "lt", "target": 5})"),
      "goal.evaluator", out);
  REQUIRE(ok.has_value());
  CHECK(out.empty());
  CHECK(ok->type == ll::evaluator_type::output_numeric);
  CHECK(ok->op == ll::comparison_op::lt);
  CHECK(ok->target == json(5));

  auto bad = ll::parse_evaluate_config(
      json::parse(R"({"type": "output_contains", "patern": "x", "negate": "yes",
                      "min_confidence": "high", "tolerance": [1]})"),
      "goal.evaluator", out);
  CHECK_FALSE(bad.has_value());
  REQUIRE(out.size() == 4);
  CHECK(out[0].path == "goal.evaluator.patern");
  CHECK(out[0].code == "unknown-key");
  CHECK(out[0].message == "unknown key \"patern\" (did you mean \"pattern\"?)");
  CHECK(out[1].path == "goal.evaluator.negate");
  CHECK(out[1].code == "wrong-type");
  CHECK(out[1].message == "expected a boolean (true or false), got string \"yes\"");
  CHECK(out[2].path == "goal.evaluator.min_confidence");
  CHECK(out[3].path == "goal.evaluator.tolerance");
  CHECK(out[3].message == "expected a number or a template string, got an array");

  out.clear();
  CHECK_FALSE(ll::parse_evaluate_config(json::object(), "e", out).has_value());
  REQUIRE(out.size() == 1);
  CHECK(out[0].path == "e");
  CHECK(out[0].code == "missing-field");

  // Diagnostics already in `out` do not make a good config fail.
  out.clear();
  out.push_back(ll::diagnostic{ll::severity::error, "x", "earlier", "other"});
  CHECK(ll::parse_evaluate_config(json{{"type", "exit_code"}}, "e", out).has_value());
  CHECK(out.size() == 1);
}

TEST_CASE("parse_json_text reports line, column and byte offset") {
  const auto r = ll::parse_json_text("{\n  \"name\": tru}");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ll::errc::parse_error);
  CHECK(r.error().message.find("line 2, column") != std::string::npos);
  CHECK(r.error().message.find("(byte ") != std::string::npos);
  CHECK(r.error().message.find("invalid literal") != std::string::npos);
  REQUIRE(r.error().details.size() == 1);
  CHECK(r.error().details[0].code == "parse-error");

  const auto dup = ll::parse_json_text(R"({"a": {"b": 1, "c": [ {"d": 1, "d": 2} ], "b": 3}})");
  REQUIRE_FALSE(dup.has_value());
  CHECK(dup.error().code == ll::errc::parse_error);
  REQUIRE(dup.error().details.size() == 2);
  CHECK(dup.error().details[0].path == "a.c[0].d");
  CHECK(dup.error().details[0].code == "duplicate-key");
  CHECK(dup.error().details[1].path == "a.b");

  CHECK(ll::parse_json_text(R"([1, {"a": [{"a": 1}]}, {"a": 2}])").has_value());

  // The message quotes the input near the error: ill-formed bytes are replaced so the
  // message itself can be serialised.
  const auto raw = ll::parse_json_text("{\"a\": 1,\n \xef\"b\": 2}");
  REQUIRE_FALSE(raw.has_value());
  CHECK_NOTHROW((void)json(raw.error().message).dump());
  CHECK(raw.error().message.find("\xEF\xBF\xBD") != std::string::npos);
}

TEST_CASE("documents are read as json::parse reads them, keys in order, numbers typed") {
  // scan_json_text builds the document itself (appending keys without a search); it must
  // give what json::parse gives, key order and number types included, for any text.
  std::mt19937 rng(11);
  std::function<json(int)> random_value = [&](int depth) -> json {
    switch (depth > 3 ? rng() % 5 : rng() % 7) {
      case 0: return nullptr;
      case 1: return rng() % 2 == 0;
      case 2: return static_cast<std::int64_t>(rng()) - (1LL << 31);
      case 3: return static_cast<double>(rng() % 1000) / 7.0;
      case 4: return std::string(rng() % 4, static_cast<char>('a' + rng() % 3)) + "\u00e9";
      case 5: {
        json a = json::array();
        for (unsigned n = rng() % 4; n > 0; --n) a.push_back(random_value(depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (unsigned n = rng() % 5; n > 0; --n) o[fmt::format("k{}", rng() % 6)] = random_value(depth + 1);
        return o;
      }
    }
  };
  for (int round = 0; round < 300; ++round) {
    const std::string text = random_value(0).dump();
    const auto read = ll::parse_json_text(text);
    REQUIRE(read.has_value());
    const json expected = json::parse(text);
    CHECK(*read == expected);
    CHECK(read->dump() == expected.dump());  // same key order
  }
  CHECK(ll::parse_json_text("18446744073709551615")->is_number_unsigned());
  CHECK(ll::parse_json_text("-3")->is_number_integer());
  CHECK(ll::parse_json_text("2.50")->is_number_float());

  // With repeated keys (an error for loops), the first place and the last value, as
  // json::parse keeps them.
  ll::diagnostics found;
  const auto dup = ll::detail::scan_json_text(R"({"a": 1, "b": [2], "a": {"c": 3}, "d": 4})", found);
  REQUIRE(dup.has_value());
  CHECK(dup->dump() == R"({"a":{"c":3},"b":[2],"d":4})");
  CHECK(found.size() == 1);
}

TEST_CASE("invalid loops list every problem in error.details") {
  const auto r = ll::parse_loop_text(R"({"name": 1, "initial": "a", "states": {
      "a": {"actoin": "x", "evaluate": {"type": "output_numerc", "operator": "eqq"}}},
      "maxiterations": 3})");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ll::errc::invalid_loop);
  const auto& d = r.error().details;
  CHECK_MESSAGE(d.size() == 5, dump_all(d));
  CHECK(find_diagnostic(d, "name", "wrong-type"));
  CHECK(find_diagnostic(d, "states.a.actoin", "unknown-key"));
  CHECK(find_diagnostic(d, "states.a.evaluate.type", "unknown-value"));
  CHECK(find_diagnostic(d, "states.a.evaluate.operator", "unknown-value"));
  const auto* top = find_diagnostic(d, "maxiterations", "unknown-key");
  REQUIRE(top);
  CHECK(top->message == "unknown key \"maxiterations\" (did you mean \"max_iterations\"?)");
  CHECK(r.error().message.rfind("invalid loop document: 5 errors", 0) == 0);
  CHECK(ll::to_string(r.error()).rfind("LL-E102: invalid loop document", 0) == 0);
}

TEST_CASE("an empty capture name is an error (nothing could read it)") {
  const auto r = ll::parse_loop_text(R"({"name": "t", "initial": "a", "states": {
      "a": {"action": "x", "capture": "", "next": "done"}, "done": {"terminal": true}}})");
  REQUIRE_FALSE(r.has_value());
  const auto* d = find_diagnostic(r.error().details, "states.a.capture", "empty-value");
  REQUIRE(d);
  CHECK(d->message.find("must not be empty") != std::string::npos);
}

TEST_CASE("documents built through the json API are checked too") {
  // Ill-formed UTF-8 cannot come from text (nlohmann rejects it) but can from code.
  json doc = json::parse(R"({"name": "u", "initial": "a", "states": {"a": {"terminal": true}}})");
  doc["description"] = std::string("bad \xff byte");
  doc["context"] = json{{"k\xc3", "v"}, {"list", json::array({std::string("\xed\xa0\x80")})}};
  auto r = ll::parse_loop(doc);
  REQUIRE_FALSE(r.has_value());
  const auto& d = r.error().details;
  CHECK_MESSAGE(d.size() == 3, dump_all(d));
  CHECK(find_diagnostic(d, "description", "invalid-utf8"));
  CHECK(find_diagnostic(d, "context.k\xEF\xBF\xBD", "invalid-utf8"));  // key sanitised in path
  CHECK(find_diagnostic(d, "context.list[0]", "invalid-utf8"));
  // Every message and path can be serialised.
  for (const auto& diag : d) CHECK_NOTHROW((void)json(diag.path + diag.message).dump());

  json bad_state = doc;
  bad_state.erase("description");
  bad_state.erase("context");
  bad_state["states"][std::string("\xc0")] = json{{"terminal", true}};
  r = ll::parse_loop(bad_state);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().details.at(0).code == "invalid-utf8");

  json binary = doc;
  binary.erase("description");
  binary["context"] = json{{"blob", json::binary({1, 2, 3})}};
  r = ll::parse_loop(binary);
  REQUIRE_FALSE(r.has_value());
  CHECK(find_diagnostic(r.error().details, "context.blob", "wrong-type"));
}

TEST_CASE("numbers: integers, ranges and non-finite values") {
  auto with = [](const std::string& extra) {
    return R"({"name": "n", "initial": "a", "states": {"a": {"terminal": true}}, )" + extra +
           "}";
  };
  CHECK(ll::parse_loop_text(with(R"("max_iterations": 2147483647)"))->max_iterations ==
        2147483647);
  CHECK(ll::parse_loop_text(with(R"("max_iterations": -3)"))->max_iterations == -3);
  CHECK(ll::parse_loop_text(with(R"("timeout": 1e300)"))->timeout == 1e300);

  auto code_of = [&](const std::string& extra) {
    auto r = ll::parse_loop_text(with(extra));
    return r ? std::string("ok") : r.error().details.at(0).code;
  };
  CHECK(code_of(R"("max_iterations": 2147483648)") == "out-of-range");
  CHECK(code_of(R"("max_iterations": -2147483649)") == "out-of-range");
  CHECK(code_of(R"("max_iterations": 1e30)") == "out-of-range");
  // A whole number written as a float is that integer (JSON Schema's `integer`, Python).
  CHECK(ll::parse_loop_text(with(R"("max_iterations": 10.0)"))->max_iterations == 10);
  CHECK(ll::parse_loop_text(with(R"("llm": {"max_tokens": 1e3})"))->llm.max_tokens == 1000);
  CHECK(code_of(R"("max_iterations": 10.5)") == "wrong-type");
  CHECK(code_of(R"("llm": {"max_tokens": 1.5})") == "wrong-type");
  // Out of range says the range.
  auto big = ll::parse_loop_text(with(R"("max_iterations": 3000000000)"));
  REQUIRE_FALSE(big.has_value());
  CHECK(big.error().details.at(0).message == "integer 3000000000 is too large (max 2147483647)");
  auto small = ll::parse_loop_text(with(R"("max_iterations": -2147483649)"));
  REQUIRE_FALSE(small.has_value());
  CHECK(small.error().details.at(0).message ==
        "integer -2147483649 is too small (min -2147483648)");

  json doc = json::parse(with(R"("backoff": 1)"));
  doc["backoff"] = std::numeric_limits<double>::infinity();
  auto r = ll::parse_loop(doc);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().details.at(0).path == "backoff");
  CHECK(r.error().details.at(0).code == "out-of-range");
}

TEST_CASE("deep nesting is bounded and never crashes") {
  auto base = [](const std::string& extra) {
    return R"({"name": "n", "initial": "a", "states": {"a": {"terminal": true}}, )" + extra +
           "}";
  };
  // Deeper than max_value_depth inside a kept value: rejected while reading.
  const std::string nested300 = std::string(300, '[') + std::string(300, ']');
  auto r = ll::parse_loop_text(base(R"("context": {"x": )" + nested300 + "}"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ll::errc::invalid_loop);
  REQUIRE(r.error().details.size() == 1);
  std::string expected_path = "context.x";
  for (std::size_t i = 1; i < ll::max_value_depth; ++i) expected_path += "[0]";
  CHECK(r.error().details[0].path == expected_path);
  CHECK(r.error().details[0].code == "too-deep");

  // Shallow enough: accepted and round-trips.
  const std::string ok_nested = std::string(100, '[') + std::string(100, ']');
  r = ll::parse_loop_text(base(R"("context": {"x": )" + ok_nested + "}"));
  REQUIRE(r.has_value());
  CHECK(json(*r).at("context").at("x").is_array());

  // Deeper than max_document_depth anywhere: refused before a document is built, also
  // 100000 levels of objects (no recursion, memory linear in the depth).
  std::string deeper;
  for (int i = 0; i < 100000; ++i) deeper += R"({"k":)";
  deeper += "0" + std::string(100000, '}');
  const std::string junk = base(R"("junk": )" + deeper);
  r = ll::parse_loop_text(junk);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ll::errc::parse_error);
  REQUIRE(r.error().details.size() == 1);
  CHECK(r.error().details[0].code == "too-deep");
  CHECK(r.error().details[0].path.rfind("junk.k.k.k", 0) == 0);
  // The location is the bracket that opens level 513: the document's own `{` is level 1,
  // so it is the 512th `{"k":`.
  const std::size_t level_513 = junk.find(R"("junk": )") + 8 + 511 * 5;
  REQUIRE(junk.substr(level_513, 5) == R"({"k":)");
  CHECK(r.error().message == fmt::format("JSON nested deeper than 512 levels at line 1, column {} (byte {})",
                                         level_513 + 1, level_513 + 1));
  // On a later line, brackets inside strings not counted.
  const std::string multi = "{\"s\": \"[[{{\",\n  \"x\":\n" + std::string(600, '[') + std::string(600, ']') + "}";
  auto m = ll::parse_json_text(multi);
  REQUIRE_FALSE(m.has_value());
  CHECK(m.error().message == "JSON nested deeper than 512 levels at line 3, column 512 (byte 533)");

  const auto unclosed = ll::parse_json_text(std::string(100000, '['));
  REQUIRE_FALSE(unclosed.has_value());
  CHECK(unclosed.error().details.at(0).code == "too-deep");

  // Exactly at the limit is fine.
  const std::size_t limit = ll::max_document_depth;
  CHECK(ll::parse_json_text(std::string(limit, '[') + std::string(limit, ']')).has_value());
  CHECK_FALSE(
      ll::parse_json_text(std::string(limit + 1, '[') + std::string(limit + 1, ']')).has_value());
}
