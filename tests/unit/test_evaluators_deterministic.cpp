// little_loops — tests: the deterministic evaluators (seed 000) and the default evaluator
// SPDX-License-Identifier: MIT
#include <little_loops/evaluators.hpp>
#include <little_loops/validation.hpp>

#include <doctest/doctest.h>
#include <re2/re2.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace ll = little_loops;

namespace {

ll::evaluate_config cfg(ll::evaluator_type t) {
  ll::evaluate_config c;
  c.type = t;
  return c;
}

struct runner {
  ll::default_evaluator eval;
  ll::action_result action;
  ll::json context = ll::json::object();
  ll::interpolation_context ctx;
  std::optional<double> memory;

  runner() { ctx.context = &context; }

  ll::evaluation_result run(const ll::evaluate_config* c, std::string output, int exit_code = 0,
                            ll::action_kind kind = ll::action_kind::shell) {
    action.output = std::move(output);
    action.exit_code = exit_code;
    std::optional<ll::compiled_evaluator> compiled;
    ll::evaluation_request req;
    req.state = "s";
    req.config = c;
    if (c) {
      auto ce = ll::compile_evaluator(*c);
      REQUIRE(ce);
      compiled = std::move(*ce);
      req.compiled = &*compiled;
    }
    req.kind = kind;
    req.action = &action;
    req.context = &ctx;
    req.convergence_memory = &memory;
    auto r = eval.evaluate(req);
    REQUIRE(r);
    return *r;
  }
};

}  // namespace

TEST_SUITE("evaluators") {
  TEST_CASE("exit code mapping (seed)") {
    CHECK(ll::evaluate_exit_code(0).verdict == "success");
    CHECK(ll::evaluate_exit_code(1).verdict == "failure");
    CHECK(ll::evaluate_exit_code(2).verdict == "error");
    CHECK(ll::evaluate_exit_code(127).verdict == "error");
    CHECK(ll::evaluate_exit_code(-1).verdict == "error");
    CHECK(ll::evaluate_exit_code(127).details == ll::json{{"exit_code", 127}});
  }

  TEST_CASE("evaluation_details: every form reads as the same JSON") {
    const ll::evaluation_details empty;
    CHECK(empty.to_json() == ll::json::object());
    CHECK(empty == ll::json::object());
    CHECK(empty.dump() == "{}");
    CHECK(ll::evaluation_details(ll::json(nullptr)) == empty);  // null reads as {}

    const auto compact = ll::evaluation_details::exit_code(3);
    CHECK(compact.to_json() == ll::json{{"exit_code", 3}});
    CHECK(compact.dump() == R"({"exit_code":3})");
    // Equality is by content across forms, and tells different codes apart.
    const ll::evaluation_details stored = ll::json{{"exit_code", 3}};
    CHECK(compact == stored);
    CHECK(stored == compact);
    CHECK_FALSE(compact == ll::evaluation_details::exit_code(4));
    CHECK_FALSE(compact == empty);
    CHECK_FALSE(empty == compact);
    CHECK_FALSE(stored == ll::evaluation_details::exit_code(0));

    // materialize() builds the compact form in place; empty details stay empty.
    auto m = ll::evaluation_details::exit_code(7);
    const ll::json& built = m.materialize();
    CHECK(built == ll::json{{"exit_code", 7}});
    CHECK(m == ll::evaluation_details::exit_code(7));
    ll::evaluation_details e2;
    CHECK(e2.materialize() == ll::json::object());

    // operator[] keeps what was there and adds the member.
    auto w = ll::evaluation_details::exit_code(2);
    w["note"] = "x";
    CHECK(w.dump() == R"({"exit_code":2,"note":"x"})");
    ll::evaluation_details fresh;
    fresh["a"] = 1;
    CHECK(fresh == ll::json{{"a", 1}});

    // Braced JSON literals assign as with json; assigning JSON replaces a compact form.
    ll::evaluation_details b = ll::evaluation_details::exit_code(1);
    b = {{"k", "v"}};
    CHECK(b == ll::json{{"k", "v"}});
    b = ll::json::object();
    CHECK(b == empty);

    // visit() lends the JSON without building stored details.
    CHECK(compact.visit([](const ll::json& j) { return j.at("exit_code").get<int>(); }) == 3);
    CHECK(empty.visit([](const ll::json& j) { return j.is_object() && j.empty(); }));
  }

  TEST_CASE("output_numeric (seed)") {
    auto r = ll::evaluate_output_numeric("3", ll::comparison_op::lt, 5);
    CHECK(r.verdict == "success");
    CHECK(r.details.dump() == R"({"value":3.0,"target":5.0,"operator":"lt"})");
    auto e = ll::evaluate_output_numeric("not a number", ll::comparison_op::eq, 5);
    CHECK(e.verdict == "error");
    CHECK(e.details == ll::json{{"error", "Cannot parse as number: not a number"}});
  }

  TEST_CASE("output_numeric keeps a document's integer target exact and an integer") {
    // The seed passes config.target as the document gives it: the details show `5`, not
    // `5.0`, and the float output compares with the int exactly (2**53 + 1 > 2.0**53).
    runner r;
    auto c = cfg(ll::evaluator_type::output_numeric);
    c.op = ll::comparison_op::lt;
    c.target = 5;
    CHECK(r.run(&c, "3").details.dump() == R"({"value":3.0,"target":5,"operator":"lt"})");
    CHECK(r.run(&c, "5").verdict == "failure");
    c.target = 5.0;
    CHECK(r.run(&c, "3").details.dump() == R"({"value":3.0,"target":5.0,"operator":"lt"})");
    using op = ll::comparison_op;
    // The output reads as 2.0**53 (below the target) and 2.0**64 (above it).
    struct row { op o; const char* below; const char* above; };
    for (const row& x : {row{op::eq, "failure", "failure"}, row{op::ne, "success", "success"},
                         row{op::lt, "success", "failure"}, row{op::le, "success", "failure"},
                         row{op::gt, "failure", "success"}, row{op::ge, "failure", "success"}}) {
      c.op = x.o;
      c.target = std::int64_t{9007199254740993};  // 2**53 + 1: no double has it
      CHECK(r.run(&c, "9007199254740993").verdict == std::string(x.below));
      c.target = std::uint64_t{18446744073709551615u};  // 2**64 - 1
      CHECK(r.run(&c, "18446744073709551615").verdict == std::string(x.above));
    }
    c.op = op::ne;
    c.target = 1;
    CHECK(r.run(&c, "nan").verdict == "success");
    c.op = op::eq;
    CHECK(r.run(&c, "nan").verdict == "failure");
    CHECK(r.run(&c, "1.0").verdict == "success");
    CHECK(r.run(&c, "x").verdict == "error");
  }

  TEST_CASE("output_numeric operators") {
    using op = ll::comparison_op;
    struct row { const char* out; op o; double t; const char* verdict; };
    for (const row& r : {row{"5", op::eq, 5, "success"}, row{"5", op::ne, 5, "failure"},
                                row{"4", op::lt, 5, "success"}, row{"5", op::lt, 5, "failure"},
                                row{"5", op::le, 5, "success"}, row{"6", op::le, 5, "failure"},
                                row{"6", op::gt, 5, "success"}, row{"5", op::gt, 5, "failure"},
                                row{"5", op::ge, 5, "success"}, row{"4", op::ge, 5, "failure"}}) {
      CAPTURE(r.out);
      CHECK(ll::evaluate_output_numeric(r.out, r.o, r.t).verdict == std::string(r.verdict));
    }
  }

  TEST_CASE("numeric parsing: whitespace, signs, decimals, exponents") {
    using ll::detail::parse_number;
    CHECK(parse_number("  42\n") == 42.0);
    CHECK(parse_number("\t-3.5 ") == -3.5);
    CHECK(parse_number("+7") == 7.0);
    CHECK(parse_number(".5") == 0.5);
    CHECK(parse_number("5.") == 5.0);
    CHECK(parse_number("1e3") == 1000.0);
    CHECK(parse_number("1.5E-2") == 0.015);
    CHECK(parse_number("-2e+2") == -200.0);
    CHECK(parse_number("inf") == HUGE_VAL);
    CHECK(parse_number("-Infinity") == -HUGE_VAL);
    CHECK(std::isnan(*parse_number("nan")));
    CHECK(parse_number("1e999") == HUGE_VAL);
    // Out of range: the first significant digit's magnitude decides between inf and ±0, as
    // Python's float() (zeros after the point count; leading zeros do not).
    const std::string zeros(400, '0');
    CHECK(parse_number("0." + zeros + "1") == 0.0);
    CHECK(std::signbit(*parse_number("-0." + zeros + "1")));
    CHECK(*parse_number("-0." + zeros + "1") == 0.0);
    CHECK(parse_number(zeros + "1e-400") == 0.0);
    CHECK(parse_number("0." + zeros + "1e5") == 0.0);
    CHECK(parse_number(zeros + "1" + zeros) == HUGE_VAL);
    CHECK(parse_number("0." + zeros + "1e800") == HUGE_VAL);
    CHECK(parse_number("-1" + zeros) == -HUGE_VAL);
    CHECK(parse_number("1e-99999999999999999999") == 0.0);
    CHECK(parse_number("0.001e99999999999999999999") == HUGE_VAL);
    CHECK(ll::evaluate_output_numeric("0." + zeros + "1\n", ll::comparison_op::gt, 5).verdict ==
          "failure");
    CHECK(ll::evaluate_output_json("[0." + zeros + "1]", ".0", ll::comparison_op::eq, 0).verdict ==
          "success");
    for (const char* bad : {"", "   ", "1_000", "0x10", "1e", "e5", ".", "+", "1.2.3", "12abc",
                            "1 2", "--1", "infinit", "١x", "²", "Ⅻ", "\xd9", "\xc0\xb1"}) {
      CAPTURE(bad);
      CHECK_FALSE(parse_number(bad).has_value());
    }
    // Any Unicode decimal digit reads as its ASCII digit, as Python's float() reads it.
    CHECK(parse_number("١") == 1.0);                 // U+0661 ARABIC-INDIC DIGIT ONE
    CHECK(parse_number("３") == 3.0);                // U+FF13 FULLWIDTH DIGIT THREE
    CHECK(parse_number("12٣") == 123.0);
    CHECK(parse_number("٣.٥") == 3.5);
    CHECK(parse_number("-٣e٢") == -300.0);
    CHECK(parse_number("\u00a0४२\u3000") == 42.0);  // Devanagari, between Unicode spaces
    CHECK(parse_number("𝟘𝟙") == 1.0);               // U+1D7D8..: mathematical digits
    CHECK(ll::evaluate_output_numeric("٣\n", ll::comparison_op::eq, 3).verdict == "success");
    CHECK(ll::evaluate_output_numeric("1_000", ll::comparison_op::eq, 1000).verdict == "error");
    CHECK(ll::evaluate_output_numeric(" 2.5e1 \n", ll::comparison_op::eq, 25).verdict ==
          "success");
  }

  TEST_CASE("output_numeric error text keeps the first 100 characters") {
    std::string junk(150, 'x');
    auto e = ll::evaluate_output_numeric(junk, ll::comparison_op::eq, 1);
    CHECK(e.details["error"] == std::string("Cannot parse as number: ").append(100, 'x'));
  }

  TEST_CASE("invalid UTF-8 in outputs never makes details unserialisable") {
    auto e = ll::evaluate_output_numeric("\xff\xfe oops", ll::comparison_op::eq, 1);
    CHECK(e.verdict == "error");
    CHECK_NOTHROW((void)e.details.dump());
    auto c = ll::evaluate_output_contains("abc", "\xff", false);
    CHECK_NOTHROW((void)c.details.dump());
  }

  TEST_CASE("output_json (seed)") {
    auto r = ll::evaluate_output_json(R"({"summary": {"failed": 0}})", ".summary.failed",
                                      ll::comparison_op::eq, 0);
    CHECK(r.verdict == "success");
    CHECK(r.details.dump() == R"({"value":0,"path":".summary.failed","target":0,"operator":"eq"})");
  }

  TEST_CASE("output_json path forms") {
    const char* doc = R"({"a": {"b": [{"c": 1}, {"c": 2}]}, "0": "zero", "list": [10, 20]})";
    using op = ll::comparison_op;
    CHECK(ll::evaluate_output_json(doc, ".a.b.1.c", op::eq, 2).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".a.b[1].c", op::eq, 2).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, "a.b.0.c", op::eq, 1).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".list[0]", op::eq, 10).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".0", op::eq, "zero").verdict == "success");
    // An index is any run of decimal digits, as `part.isdigit()` then `int(part)` read it:
    // leading zeros, any length, any script's digits; other "digits" (², ①) are keys.
    CHECK(ll::evaluate_output_json(doc, ".list.01", op::eq, 20).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".list.00000000000000000000001", op::eq, 20).verdict ==
          "success");
    CHECK(ll::evaluate_output_json(doc, ".list.\u0661", op::eq, 20).verdict == "success");  // ١
    CHECK(ll::evaluate_output_json(doc, ".list.\uff10", op::eq, 10).verdict == "success");  // ０
    CHECK(ll::evaluate_output_json(doc, ".list.\u00b2", op::eq, 10).verdict == "error");    // ²
    CHECK(ll::evaluate_output_json(doc, ".list.99999999999999999999999", op::eq, 10).verdict ==
          "error");
    CHECK(ll::evaluate_output_json(R"({"a": [[1, 2], [3, 4]]})", ".a.\u0661.\u0660", op::eq, 3)
              .verdict == "success");
    CHECK(ll::evaluate_output_json("[1,2]", ".1", op::eq, 2).verdict == "success");
    // A key holding brackets, as the original reads `.a[0]` (split at dots only): found when
    // the `[N]` reading names nothing; the `[N]` reading wins when both name a value.
    CHECK(ll::evaluate_output_json(R"({"a[0]": 7})", ".a[0]", op::eq, 7).verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": {"b[0]": 3}})", ".a.b[0]", op::eq, 3).verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": [5], "a[0]": 7})", ".a[0]", op::eq, 5).verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": [5]})", ".a[1]", op::eq, 5).details ==
          ll::json{{"error", "Path not found: .a[1]"}});
    CHECK(ll::evaluate_output_json("42", ".", op::eq, 42).verdict == "success");
    CHECK(ll::evaluate_output_json("42", "", op::gt, 41).verdict == "success");
    auto whole = ll::evaluate_output_json(R"({"x":1})", ".", op::eq, ll::json{{"x", 1}});
    CHECK(whole.verdict == "success");
    auto nf = ll::evaluate_output_json(doc, ".a.b.5.c", op::eq, 1);
    CHECK(nf.verdict == "error");
    CHECK(nf.details == ll::json{{"error", "Path not found: .a.b.5.c"}});
    CHECK(ll::evaluate_output_json(doc, ".a.x", op::eq, 1).details["error"] ==
          "Path not found: .a.x");
    CHECK(ll::evaluate_output_json(doc, ".list.-1", op::eq, 20).verdict == "error");
    CHECK(ll::evaluate_output_json(doc, ".a.b.c", op::eq, 1).verdict == "error");
  }

  TEST_CASE("output_json comparisons by type") {
    using op = ll::comparison_op;
    const char* doc = R"({"n": 5, "f": 2.5, "s": "ok", "b": true, "z": null, "l": [1, 2],
                         "o": {"x": 1, "y": [true]}, "big": 18446744073709551615})";
    CHECK(ll::evaluate_output_json(doc, ".n", op::lt, 6).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".n", op::ge, 6).verdict == "failure");
    CHECK(ll::evaluate_output_json(doc, ".n", op::eq, 5.0).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".f", op::gt, 2).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".big", op::gt, 1).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".big", op::lt, -1).verdict == "failure");
    CHECK(ll::evaluate_output_json(doc, ".s", op::eq, "ok").verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".s", op::ne, "ok").verdict == "failure");
    CHECK(ll::evaluate_output_json(doc, ".s", op::ne, "nope").verdict == "success");
    // bool is an int in Python: True == 1, True > 0
    CHECK(ll::evaluate_output_json(doc, ".b", op::eq, true).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".b", op::eq, 1).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".b", op::gt, 0).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".z", op::eq, nullptr).verdict == "success");
    CHECK(ll::evaluate_output_json(doc, ".l", op::eq, ll::json::array({1, 2.0})).verdict ==
          "success");
    CHECK(ll::evaluate_output_json(doc, ".o", op::eq, ll::json::parse(R"({"y":[1],"x":1})"))
              .verdict == "success");
    // number vs string: not equal, and ordering is unsupported
    CHECK(ll::evaluate_output_json(doc, ".n", op::eq, "5").verdict == "failure");
    auto e = ll::evaluate_output_json(doc, ".s", op::lt, "z");
    CHECK(e.verdict == "error");
    CHECK(e.details == ll::json{{"error", "Operator lt not supported for non-numeric values"}});
    auto s = ll::evaluate_output_json(doc, ".s", op::eq, "ok");
    CHECK(s.details.dump() == R"({"value":"ok","path":".s","target":"ok"})");
  }

  TEST_CASE("output_json invalid input") {
    auto e = ll::evaluate_output_json("not json", ".a", ll::comparison_op::eq, 1);
    CHECK(e.verdict == "error");
    CHECK(e.details["error"].get<std::string>().rfind("Invalid JSON: ", 0) == 0);
    CHECK(ll::evaluate_output_json("", ".a", ll::comparison_op::eq, 1).verdict == "error");
    CHECK(ll::evaluate_output_json("{\"a\":1} trailing", ".a", ll::comparison_op::eq, 1)
              .verdict == "error");
    std::string deep(100000, '[');
    auto d = ll::evaluate_output_json(deep, ".", ll::comparison_op::eq, 1);
    CHECK(d.verdict == "error");
    CHECK(d.details["error"].get<std::string>().find("Nesting too deep") != std::string::npos);
    std::string ok_deep = std::string(500, '[') + std::string(500, ']');
    CHECK(ll::evaluate_output_json(ok_deep, ".0.0.0", ll::comparison_op::eq, 1).verdict ==
          "failure");
  }

  TEST_CASE("output_contains (seed)") {
    auto r = ll::evaluate_output_contains("Error: 5 failures", R"(\d+ failures)");
    CHECK(r.verdict == "success");
    CHECK(r.details.dump() == R"({"matched":true,"pattern":"\\d+ failures","negate":false})");
    CHECK(ll::evaluate_output_contains("All tests passed", "Error", true).verdict == "success");
    CHECK(ll::evaluate_output_contains("Error here", "Error", true).verdict == "failure");
    CHECK(ll::evaluate_output_contains("nothing", "Error").verdict == "failure");
  }

  TEST_CASE("output_contains matching modes") {
    ll::pattern_matcher lit("tests passed");
    CHECK(lit.match_mode() == ll::pattern_matcher::mode::literal);
    CHECK(lit.search("all tests passed!"));
    CHECK_FALSE(lit.search("all tests failed"));
    ll::pattern_matcher re("^ok$");
    CHECK(re.match_mode() == ll::pattern_matcher::mode::regex);
    CHECK(re.search("ok"));
    CHECK(re.search("ok\n"));  // Python: $ matches before a final newline
    CHECK_FALSE(re.search("ok\nmore"));
    ll::pattern_matcher bad("[unclosed");
    CHECK(bad.match_mode() == ll::pattern_matcher::mode::substring_fallback);
    CHECK_FALSE(bad.regex_error().empty());
    CHECK(bad.search("x [unclosed y"));
    CHECK_FALSE(bad.search("unclosed"));
    CHECK(ll::evaluate_output_contains("a (b", "(b").verdict == "success");  // fallback
    ll::pattern_matcher z(R"(done\Z)");
    CHECK(z.match_mode() == ll::pattern_matcher::mode::regex);
    CHECK(z.search("all done"));
    CHECK_FALSE(z.search("done later"));
    ll::pattern_matcher alt("PASS|OK");
    CHECK(alt.search("status: OK"));
    CHECK(ll::evaluate_output_contains("anything", "").verdict == "success");
    CHECK(ll::evaluate_output_contains(std::string("a\0b", 3), std::string("\0b", 2)).verdict ==
          "success");
  }

  TEST_CASE("regex prefilter literal") {
    using ll::detail::required_literal;
    CHECK(required_literal("[0-9]+ failures") == " failures");
    CHECK(required_literal(R"(\d+ tests? passed)") == " passed");
    CHECK(required_literal("abc(def)+ghij") == "ghij");
    CHECK(required_literal("abcd?") == "abc");
    CHECK(required_literal(R"(a\.b\.c)") == "a.b.c");
    CHECK(required_literal("x[abc]yz") == "yz");
    CHECK(required_literal("PASS|OK").empty());
    CHECK(required_literal("(?i)error").empty());
    ll::pattern_matcher m("[0-9]+ failures");
    CHECK(m.required_literal() == " failures");
    CHECK(m.search("ran: 12 failures"));
    CHECK_FALSE(m.search("ran: no failures"));
    CHECK_FALSE(m.search("ran: 12 passed"));
  }

  TEST_CASE("output_json error messages follow Python") {
    using op = ll::comparison_op;
    CHECK(ll::evaluate_output_json("not json", ".a", op::eq, 1).details["error"] ==
          "Invalid JSON: Expecting value: line 1 column 1 (char 0)");
    CHECK(ll::evaluate_output_json("{\"a\": 1} x", ".a", op::eq, 1).details["error"] ==
          "Invalid JSON: Extra data: line 1 column 10 (char 9)");
    CHECK(ll::evaluate_output_json("{\n\"a\" 1}", ".a", op::eq, 1).details["error"] ==
          "Invalid JSON: Expecting ':' delimiter: line 2 column 5 (char 6)");
    CHECK(ll::evaluate_output_json("{'a': 1}", ".a", op::eq, 1).details["error"] ==
          "Invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 "
          "(char 1)");
    CHECK(ll::evaluate_output_json("[1, 2", ".0", op::eq, 1).details["error"] ==
          "Invalid JSON: Expecting ',' delimiter: line 1 column 6 (char 5)");
    CHECK(ll::evaluate_output_json("\"abc", ".", op::eq, 1).details["error"] ==
          "Invalid JSON: Unterminated string starting at: line 1 column 1 (char 0)");
    // A selected object keeps the output's key order in the details, as a Python dict; a
    // repeated key keeps its first place and takes its last value, in small objects and in
    // big ones (found by hash) alike.
    auto kept = ll::evaluate_output_json(R"({"o": {"z": 1, "a": 2, "m": [{"y": 1, "b": 2}], "z": 3}})",
                                         ".o", op::ne, 0);
    CHECK(kept.details["value"].dump() == R"({"z":3,"a":2,"m":[{"y":1,"b":2}]})");
    {
      std::string big = "{", expected = "{";
      for (int k = 40; k > 0; --k) {
        big += "\"k" + std::to_string(k) + "\": " + std::to_string(k) + ", ";
        expected += "\"k" + std::to_string(k) + "\":" + (k == 7 ? "-7" : std::to_string(k)) + ",";
      }
      big += "\"k7\": -7}";
      expected.back() = '}';
      auto b = ll::evaluate_output_json(big, "", op::ne, 0);
      CHECK(b.details["value"].dump() == expected);
      CHECK(ll::evaluate_output_json(big, ".k7", op::eq, -7).verdict == "success");
      CHECK(ll::evaluate_output_json(big, "", op::eq, ll::json::parse(big)).verdict == "success");
    }
    // duplicate keys: the last one wins, as in Python
    CHECK(ll::evaluate_output_json(R"({"a": 1, "a": 2})", ".a", op::eq, 2).verdict == "success");
    // ... at every depth of the path: a later copy replaces what an earlier copy matched.
    const auto not_found = [](const char* doc, const char* path) {
      auto r = ll::evaluate_output_json(doc, path, op::eq, 1);
      return r.verdict == "error" &&
             r.details["error"] == std::string("Path not found: ") + path;
    };
    CHECK(not_found(R"({"a": {"b": 1}, "a": 5})", ".a.b"));
    CHECK(not_found(R"({"a":[{"b":1}],"a":[{"c":1}]})", ".a.0.b"));
    CHECK(not_found(R"({"x":{"a":{"b":1},"a":2}})", ".x.a.b"));
    CHECK(not_found(R"({"x":{"a":{"b":1}},"x":{"a":{"b":3},"a":{"c":1}}})", ".x.a.b"));
    CHECK(not_found(R"({"a":1,"a":{"b":1},"a":{"c":{"b":1}}})", ".a.b"));
    CHECK(ll::evaluate_output_json(R"({"a": 1, "a": 2})", ".a", op::eq, 1).verdict ==
          "failure");  // top level: value 2
    auto later = ll::evaluate_output_json(R"({"a":{"b":1},"a":{"b":2}})", ".a.b", op::eq, 2);
    CHECK(later.verdict == "success");
    CHECK(later.details["value"] == 2);
    CHECK(ll::evaluate_output_json(R"({"a":5,"a":{"b":1}})", ".a.b", op::eq, 1).verdict ==
          "success");
    CHECK(ll::evaluate_output_json(R"({"a":[{"b":1}],"a":[{"b":3}]})", ".a.0.b", op::eq, 3)
              .verdict == "success");
    // Repeated keys off the path do not disturb the match.
    CHECK(ll::evaluate_output_json(R"({"a":{"b":1,"c":{"b":9,"b":8}},"z":{"a":1,"a":2}})",
                                   ".a.b", op::eq, 1)
              .verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a":{"b":1},"b":2,"b":3})", ".a.b", op::eq, 1).verdict ==
          "success");
    // escaped keys
    CHECK(ll::evaluate_output_json(R"({"a\u0062": 3})", ".ab", op::eq, 3).verdict == "success");
    CHECK(ll::evaluate_output_json(" \n {\"a\": [1, {\"b\": -2.5e1}]} \n", ".a.1.b", op::eq, -25)
              .verdict == "success");
    CHECK(ll::evaluate_output_json("[01]", ".0", op::eq, 1).verdict == "error");
    CHECK(ll::evaluate_output_json("[1,]", ".0", op::eq, 1).verdict == "error");
    CHECK(ll::evaluate_output_json("[\"\\x\"]", ".0", op::eq, 1).verdict == "error");
  }

  TEST_CASE("convergence (seed)") {
    CHECK(ll::evaluate_convergence(0, 5, 0).verdict == "target");
    CHECK(ll::evaluate_convergence(3, 5, 0).verdict == "progress");
    CHECK(ll::evaluate_convergence(5, 5, 0).verdict == "stall");
    CHECK(ll::evaluate_convergence(8, 5, 10, 0, ll::convergence_direction::maximize).verdict ==
          "progress");
    CHECK(ll::evaluate_convergence(4, 5, 10, 0, ll::convergence_direction::maximize).verdict ==
          "stall");
    CHECK(ll::evaluate_convergence(7, 5, 0).verdict == "stall");
  }

  TEST_CASE("convergence details") {
    CHECK(ll::evaluate_convergence(0, 5, 0).details.dump() ==
          R"({"current":0.0,"target":0.0,"delta":0})");
    CHECK(ll::evaluate_convergence(3, std::nullopt, 0).details.dump() ==
          R"({"current":3.0,"previous":null,"target":0.0,"delta":null})");
    CHECK(ll::evaluate_convergence(3, 5, 0).details.dump() ==
          R"({"current":3.0,"previous":5.0,"target":0.0,"delta":-2.0,"direction":"minimize"})");
    CHECK(ll::evaluate_convergence(0.5, 5, 0, 1).verdict == "target");
    CHECK(ll::evaluate_convergence(1.5, 5, 0, 1).verdict == "progress");
  }
}

TEST_SUITE("default evaluator") {
  TEST_CASE("no evaluate: shell → exit_code, prompt → judge") {
    runner r;
    CHECK(r.run(nullptr, "", 0).verdict == "success");
    CHECK(r.run(nullptr, "", 1).verdict == "failure");
    CHECK(r.run(nullptr, "", 3).verdict == "error");
    auto j = r.run(nullptr, "text", 0, ll::action_kind::prompt);
    CHECK(j.verdict == "error");
    CHECK(j.details["error"] == "no judge backend");
    CHECK(r.run(nullptr, "text", 0, ll::action_kind::slash_command).details["error"] ==
          "no judge backend");
  }

  TEST_CASE("no action and no evaluate → success") {
    ll::default_evaluator e;
    ll::evaluation_request req;
    auto res = e.evaluate(req);
    REQUIRE(res);
    CHECK(res->verdict == "success");
  }

  TEST_CASE("abnormal actions are errors for every evaluator") {
    runner r;
    for (auto t : {ll::evaluator_type::exit_code, ll::evaluator_type::output_numeric,
                   ll::evaluator_type::output_contains, ll::evaluator_type::convergence,
                   ll::evaluator_type::output_json, ll::evaluator_type::llm_structured}) {
      auto c = cfg(t);
      c.pattern = "x";
      c.target = 0;
      r.action = {};
      r.action.timed_out = true;
      ll::evaluation_request req;
      auto ce = ll::compile_evaluator(c);
      REQUIRE(ce);
      req.config = &c;
      req.compiled = &*ce;
      req.action = &r.action;
      auto res = r.eval.evaluate(req);
      REQUIRE(res);
      CHECK(res->verdict == "error");
      CHECK(res->details["timed_out"] == true);
      CHECK(res->details["error"] == "action timed out");
    }
    ll::evaluation_request req;
    r.action = {};
    r.action.signal = 9;
    r.action.exit_code = -9;
    req.action = &r.action;
    auto res = r.eval.evaluate(req);
    CHECK(res->verdict == "error");
    CHECK(res->details["error"] == "action killed by signal 9");
    CHECK(res->details["signal"] == 9);
    r.action = {};
    r.action.cancelled = true;
    res = r.eval.evaluate(req);
    CHECK(res->details["error"] == "action cancelled");
    r.action = {};
    r.action.timed_out = r.action.idle_timeout = true;
    res = r.eval.evaluate(req);
    CHECK(res->details["idle_timeout"] == true);
    // A program that could not be started (a prompt command missing): nothing to judge.
    r.action = {};
    r.action.not_started = true;
    r.action.exit_code = 127;
    r.action.stderr_output = "little_loops: cannot run \"claude\": No such file or directory";
    auto judge_cfg = cfg(ll::evaluator_type::llm_structured);
    auto judge = ll::compile_evaluator(judge_cfg);
    REQUIRE(judge);
    req.config = &judge_cfg;
    req.compiled = &*judge;
    res = r.eval.evaluate(req);
    CHECK(res->verdict == "error");
    CHECK(res->details["not_started"] == true);
    CHECK(res->details["error"] ==
          "action could not be started: little_loops: cannot run \"claude\": No such file or directory");
    CHECK(res->details["exit_code"] == 127);
  }

  TEST_CASE("templated fields") {
    runner r;
    r.context = {{"max", 5}, {"word", "PASS"}, {"path", ".result.count"}, {"tol", "0.5"},
                 {"goal", 0}, {"alt", "{\"x\": 7}"}};
    auto c = cfg(ll::evaluator_type::output_numeric);
    c.op = ll::comparison_op::le;
    c.target = "${context.max}";
    CHECK(r.run(&c, "5").verdict == "success");
    CHECK(r.run(&c, "6").verdict == "failure");
    c.target = "${context.nope}";
    auto e = r.run(&c, "6");
    CHECK(e.verdict == "error");
    CHECK(e.details["error"].get<std::string>().rfind("Cannot resolve target: ", 0) == 0);
    c.target = "${context.word}";
    CHECK(r.run(&c, "6").verdict == "error");

    auto p = cfg(ll::evaluator_type::output_contains);
    p.pattern = "${context.word}";
    CHECK(r.run(&p, "result: PASS").verdict == "success");
    CHECK(r.run(&p, "result: FAIL").verdict == "failure");
    CHECK(r.run(&p, "result: PASS").details["pattern"] == "PASS");

    auto j = cfg(ll::evaluator_type::output_json);
    j.path = "${context.path}";
    j.op = ll::comparison_op::eq;
    j.target = "${context.max}";  // renders "5" → compared as a number
    auto jr = r.run(&j, R"({"result": {"count": 5}})");
    CHECK(jr.verdict == "success");
    CHECK(jr.details["path"] == ".result.count");
    j.target = "5";  // a literal string stays a string
    CHECK(r.run(&j, R"({"result": {"count": 5}})").verdict == "failure");
    // A context boolean renders "true" and compares as the boolean; other text is a string.
    r.context["flag"] = true;
    j.path = ".ok";
    j.target = "${context.flag}";
    CHECK(r.run(&j, R"({"ok": true})").verdict == "success");
    CHECK(r.run(&j, R"({"ok": "true"})").verdict == "failure");
    j.target = "${context.word}";
    CHECK(r.run(&j, R"({"ok": "PASS"})").verdict == "success");
    // `$${` is the escape in a target without placeholders too: it compares as `${`.
    j.target = "$${x}";
    auto esc = r.run(&j, R"({"ok": "${x}"})");
    CHECK(esc.verdict == "success");
    CHECK(esc.details["target"] == "${x}");
    CHECK(r.run(&j, R"({"ok": "$${x}"})").verdict == "failure");
    // A key holding brackets is found through the dispatcher too, literal path or rendered.
    j.target = 7;
    j.path = ".a[0]";
    CHECK(r.run(&j, R"({"a[0]": 7})").verdict == "success");
    r.context["bracketed"] = ".a[0]";
    j.path = "${context.bracketed}";
    CHECK(r.run(&j, R"({"a[0]": 7})").verdict == "success");
    CHECK(r.run(&j, R"({"a": [7]})").verdict == "success");

    auto s = cfg(ll::evaluator_type::output_json);
    s.source = "${context.alt}";
    s.path = ".x";
    s.op = ll::comparison_op::eq;
    s.target = 7;
    CHECK(r.run(&s, "not json at all").verdict == "success");

    auto cv = cfg(ll::evaluator_type::convergence);
    cv.target = "${context.goal}";
    cv.tolerance = "${context.tol}";
    r.memory.reset();
    CHECK(r.run(&cv, "0.4").verdict == "target");
    // A tolerance that cannot be resolved is an error, as a target is (never a silent 0).
    for (const char* bad : {"${context.nope}", "${context.word}"}) {
      CAPTURE(bad);
      cv.tolerance = bad;
      r.memory.reset();
      auto tr = r.run(&cv, "0.5");
      CHECK(tr.verdict == "error");
      CHECK(tr.details["error"].get<std::string>().rfind("Cannot resolve tolerance: ", 0) == 0);
    }
    cv.tolerance = "${context.word}";
    CHECK(r.run(&cv, "0.5").details["error"] ==
          "Cannot resolve tolerance: could not convert string to float: 'PASS'");
  }

  TEST_CASE("convergence keeps its own memory") {
    runner r;
    auto c = cfg(ll::evaluator_type::convergence);
    c.target = 0;
    auto a = r.run(&c, "10");
    CHECK(a.verdict == "progress");
    CHECK(a.details["previous"].is_null());
    CHECK(r.memory == 10.0);
    auto b = r.run(&c, "7");
    CHECK(b.verdict == "progress");
    CHECK(b.details["previous"] == 10.0);
    CHECK(r.run(&c, "7").verdict == "stall");
    CHECK(r.run(&c, "9").verdict == "stall");
    CHECK(r.run(&c, "0").verdict == "target");
    auto bad = r.run(&c, "n/a");
    CHECK(bad.verdict == "error");
    CHECK(bad.details["error"] == "Cannot parse output as number: n/a");
  }

  TEST_CASE("convergence previous: template wins; unresolvable means no previous") {
    runner r;
    r.context = {{"last", "4"}};
    auto c = cfg(ll::evaluator_type::convergence);
    c.target = 10;
    c.direction = ll::convergence_direction::maximize;
    c.previous = "${context.last}";
    r.memory = 100.0;
    CHECK(r.run(&c, "5").verdict == "progress");
    CHECK(r.run(&c, "3").verdict == "stall");
    c.previous = "${prev.output}";  // no prev yet → no previous value
    auto x = r.run(&c, "3");
    CHECK(x.verdict == "progress");
    CHECK(x.details["previous"].is_null());
  }
}

// Python fidelity of the deterministic evaluators. Expected values were checked with Python
// 3.11: `re.search(pattern, text)`, `json.loads(text)` (and its error messages),
// `float(text.strip())`, and Python's exact int/float comparison.
TEST_SUITE("evaluators: Python fidelity") {
  struct contains_case {
    const char* pattern;
    const char* text;
    bool python;  // bool(re.search(pattern, text))
  };

  // Every case: the verdict with the memmem prefilter equals Python's, equals RE2's own
  // PartialMatch on the translated pattern, and a match always contains the literal.
  TEST_CASE("output_contains: prefilter verdicts equal re.search and RE2") {
    const contains_case cases[] = {
        {R"(\d{3} errors)", "123 errors", true},  // the prefilter picked "3} errors"
        {R"(\d{3} errors)", "12 errors", false},
        {"[0-9]{2,} failed", "12 failed", true},
        {"[0-9]{2,} failed", "1 failed", false},
        {"x{2}", "xx", true},
        {"x{2}", "x", false},
        {"a{0}b", "b", true},
        {"a{1}b", "b", false},
        {R"(\x41BC)", "ABC", true},  // the prefilter took "41BC" as literal text
        {R"(\x41BC)", "xBC", false},
        {R"(\x411)", "A1", true},  // \x takes exactly two digits
        {R"(\101BC)", "ABC", true},  // octal escape
        {"ab{2,3}c", "abbc", true},
        {"ab{2,3}c", "abc", false},
        {"ab{,2}c", "ac", true},  // Python: {,2} is {0,2}
        {"ab{,2}c", "abbbc", false},
        {"x{,2}y", "xxy", true},
        {"x{,}y", "y", true},
        {"x{}y", "x{}y", true},  // {} is literal text
        {"x{}y", "xy", false},
        {"a{b", "a{b", true},
        {"a{,b}", "a{,b}", true},
        {"colou?r", "color", true},
        {"colou?r", "colour", true},
        {"ab*c", "ac", true},
        {"ab+c", "abbc", true},
        {"ab+c", "ac", false},
        {"caf\xC3\xA9?s", "cafs", true},  // the optional atom is a whole UTF-8 character
        {"caf\xC3\xA9+", "caf\xC3\xA9\xC3\xA9", true},
        {R"(\.{2}x)", "..x", true},
        {R"(a\.?b)", "ab", true},
        {"(ab)+c", "ababc", true},
        {"(?:ab){2}c", "ababc", true},
        {"x(a|b)y", "xby", true},
        {"PASS|OK", "OK", true},
        {"(?i)error", "ERROR", true},
        {"[[]x", "[x", true},
        {"[]a]+z", "]]z", true},
        {"[^]]z", "az", true},
        {R"(\d+\s+tests? passed)", "5  test passed", true},
        {R"(v\d\.\d)", "v1.2", true},
        {R"(\t x)", "\t x", true},
        {"a.c", "abc", true},
        {R"(^\w+: \d{1,3}%$)", "cov: 85%", true},
        {R"(\bend\b)", "the end.", true},
        {R"((\d{2}):(\d{2}))", "12:34", true},
        {R"(\{2\})", "{2}", true},
        {R"(a\{,2\})", "a{,2}", true},  // escaped braces stay literal
        {"[{,2}]x", ",x", true},        // so do braces in a class
    };
    RE2::Options opts;
    opts.set_log_errors(false);
    for (const auto& c : cases) {
      CAPTURE(c.pattern);
      CAPTURE(c.text);
      ll::pattern_matcher m(c.pattern);
      REQUIRE(m.match_mode() == ll::pattern_matcher::mode::regex);
      CHECK(m.search(c.text) == c.python);
      RE2 re(ll::detail::python_to_re2(c.pattern), opts);
      REQUIRE(re.ok());
      CHECK(RE2::PartialMatch(c.text, re) == c.python);
      if (c.python) CHECK(std::string_view(c.text).find(m.required_literal()) != std::string::npos);
    }
  }

  // Random patterns over a small alphabet (repetitions, escapes with arguments, classes,
  // groups, anchors, UTF-8): whenever RE2 compiles the pattern, search() with the prefilter
  // gives RE2's own PartialMatch verdict on random texts, and every match contains the
  // required literal. Deterministic (fixed seed; mt19937's output is standardised).
  TEST_CASE("output_contains: prefilter property over generated patterns") {
    const std::vector<std::string> tokens = {
        "a", "b", "x", "1", "\xC3\xA9", " ", "{2}", "{,2}", "{0}", "{1,}", "{0,1}", "?", "*",
        "+", R"(\d)", R"(\w)", "[ab]", "[^a]", "(", ")", ".", R"(\x61)", R"(\x{62})", R"(\.)",
        "{", "}", ",", R"(\{)", "^", "$", R"(\b)", R"(\141)", R"(\pL)", "|"};
    const std::vector<std::string> letters = {"a", "b", "x", "1", "{", "}", ",", ".", " ",
                                              "\xC3\xA9"};
    std::mt19937 rng(20240611);
    const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    RE2::Options opts;
    opts.set_log_errors(false);
    int compiled = 0, filtered = 0, matches = 0, filtered_matches = 0;
    for (int p = 0; p < 3000; ++p) {
      std::string pattern;
      for (std::size_t k = 1 + pick(7); k > 0; --k) pattern += tokens[pick(tokens.size())];
      ll::pattern_matcher m(pattern);
      if (m.match_mode() != ll::pattern_matcher::mode::regex) continue;
      RE2 re(ll::detail::python_to_re2(pattern), opts);
      REQUIRE(re.ok());
      ++compiled;
      if (!m.required_literal().empty()) ++filtered;
      for (int t = 0; t < 16; ++t) {
        std::string text;
        for (std::size_t k = pick(9); k > 0; --k) text += letters[pick(letters.size())];
        const bool expected = RE2::PartialMatch(text, re);  // texts have no final newline
        matches += expected ? 1 : 0;
        filtered_matches += expected && !m.required_literal().empty() ? 1 : 0;
        if (m.search(text) != expected || (expected && text.find(m.required_literal()) ==
                                                            std::string::npos)) {
          CAPTURE(pattern);
          CAPTURE(text);
          CAPTURE(m.required_literal());
          CHECK(m.search(text) == expected);
          CHECK(text.find(m.required_literal()) != std::string::npos);
        }
      }
    }
    // The property is exercised: many patterns compile, have a literal, and match.
    CHECK(compiled > 1000);
    CHECK(filtered > 300);
    CHECK(matches > 2000);
    CHECK(filtered_matches > 300);
  }

  TEST_CASE("output_contains: required literal of repetitions and escapes") {
    using ll::detail::required_literal;
    CHECK(required_literal(R"(\d{3} errors)") == " errors");
    CHECK(required_literal("[0-9]{2,} failed") == " failed");
    CHECK(required_literal("x{2}").empty());
    CHECK(required_literal("a{0}b") == "b");
    CHECK(required_literal("abc{2}d") == "ab");
    CHECK(required_literal(R"(\x41BC)") == "BC");
    CHECK(required_literal(R"(\x{41}BC)") == "BC");
    CHECK(required_literal(R"(\p{Greek}xy)") == "xy");
    CHECK(required_literal(R"(\pLxy)") == "xy");
    CHECK(required_literal(R"(\101BCD)") == "BCD");
    CHECK(required_literal(R"(ab\Qcd\E)") == "ab");
    CHECK(required_literal("caf\xC3\xA9?") == "caf");  // never half a UTF-8 character
    CHECK(required_literal("ab{b") == "ab");           // a literal brace just ends the run
    CHECK(required_literal("x[[:alpha:]]yz") == "x");  // RE2's nested class: stop there
    CHECK(required_literal("(a|b)cd") == "");          // `|` anywhere: no literal
    CHECK(required_literal("ab(?i)cd") == "");
  }

  TEST_CASE("output_contains: \\d, \\w and \\s are Unicode, as in a Python str pattern") {
    const auto found = [](std::string_view text, std::string_view pattern) {
      return ll::evaluate_output_contains(text, pattern).verdict == "success";
    };
    // (Python 3.11: re.search(pattern, text) for each of these.)
    CHECK(found("na\xC3\xAFve", R"(^\w+$)"));           // ï is a word character
    CHECK(found("\xD9\xA3 passed", R"(\d passed)"));    // ARABIC-INDIC DIGIT THREE
    CHECK(found("\xE2\x85\xAB", R"(^\w$)"));             // Ⅻ (Nl) is \w, not \d
    CHECK_FALSE(found("\xE2\x85\xAB", R"(\d)"));
    CHECK(found("a\xC2\xA0" "b", R"(a\sb)"));              // NO-BREAK SPACE
    CHECK(found("a\xE3\x80\x80" "b", R"(a[\s,]b)"));       // IDEOGRAPHIC SPACE, in a class
    CHECK(found("a\x1C" "b", R"(a\sb)"));                // FILE SEPARATOR is whitespace too
    CHECK_FALSE(found("\xC3\xA9", R"(\W)"));
    CHECK_FALSE(found("\xC3\xA9", R"([\W])"));
    CHECK(found("\xC3\xA9", R"([^\W])"));
    CHECK_FALSE(found("\xE3\x80\x80", R"(\S)"));
    CHECK_FALSE(found("\xE3\x80\x80", R"([\S])"));
    CHECK(found("x\xE2\x80\x83y", R"(x[^\S]y)"));      // EM SPACE
    CHECK(found("\xE6\x97\xA5\xE6\x9C\xAC", R"(^[\w-]+$)"));
    CHECK_FALSE(found("\xF0\x9F\x8E\x89", R"(\w)"));   // an emoji is not a word character
    using ll::detail::python_to_re2;
    CHECK(python_to_re2(R"(\d+\D)") == R"(\p{Nd}+\P{Nd})");
    CHECK(python_to_re2(R"([\w.])") == R"([\p{L}\p{N}_.])");
  }

  TEST_CASE("output_contains: {,n} means {0,n} as in Python") {
    using ll::detail::python_to_re2;
    CHECK(python_to_re2("x{,2}y") == "x{0,2}y");
    CHECK(python_to_re2("x{,}y") == "x{0,}y");
    CHECK(python_to_re2("(ab){,2}") == "(ab){0,2}");
    CHECK(python_to_re2("[ab]{,3}") == "[ab]{0,3}");
    CHECK(python_to_re2(R"(\d{,3})") == R"(\p{Nd}{0,3})");
    CHECK(python_to_re2("x{2,3}{,2}") == "x{2,3}{,2}");  // not after an atom: Python rejects
    CHECK(python_to_re2("{,2}") == "{,2}");
    CHECK(python_to_re2("(|{,2})") == "(|{,2})");
    CHECK(python_to_re2(R"(a\{,2})") == R"(a\{,2})");  // escaped: literal
    CHECK(python_to_re2("[{,2}]") == "[{,2}]");        // in a class: literal
    CHECK(python_to_re2("[]{,2}]") == R"([\]{,2}])");  // a leading `]` is escaped for RE2
    CHECK(python_to_re2("x{}{,2}") == "x{}{0,2}");     // `x{}` is literal text, `}` an atom
    CHECK(python_to_re2(R"(end\Z)") == R"(end\z)");
    CHECK(ll::evaluate_output_contains("xxy", "x{,2}y").verdict == "success");
    CHECK(ll::evaluate_output_contains("xxxy", "^x{,2}y").verdict == "failure");
  }

  TEST_CASE("output_contains: counts with leading zeros are numbers, as in Python") {
    using ll::detail::python_to_re2;
    CHECK(python_to_re2("a{01}") == "a{1}");
    CHECK(python_to_re2("a{1,02}") == "a{1,2}");
    CHECK(python_to_re2("a{0001}") == "a{1}");
    CHECK(python_to_re2("x{,02}y") == "x{0,2}y");
    CHECK(python_to_re2("a{00}b") == "a{0}b");
    CHECK(python_to_re2("a{0,0}b") == "a{0,0}b");
    CHECK(python_to_re2("a{10,}") == "a{10,}");
    CHECK(ll::evaluate_output_contains("-a", "a{01}").verdict == "success");
    CHECK(ll::evaluate_output_contains("xaay", "xa{1,02}y").verdict == "success");
    CHECK(ll::evaluate_output_contains("xaaay", "xa{1,02}y").verdict == "failure");
  }

  TEST_CASE("output_contains: a class range needs single characters at both ends (Python)") {
    // re.error "bad character range \d-z" → the seed's substring search.
    ll::pattern_matcher bad(R"([\d-z])");
    CHECK(bad.match_mode() == ll::pattern_matcher::mode::substring_fallback);
    CHECK(bad.regex_error().find(R"(bad character range \d-z)") != std::string::npos);
    CHECK_FALSE(bad.search("-a"));
    CHECK(bad.search(R"(x[\d-z]y)"));
    for (const char* p : {R"([\D-z])", R"([a-\w])", R"([\w-.])", R"([^\s-x])", R"([]\d-z])"}) {
      CAPTURE(p);
      CHECK(ll::pattern_matcher(p).match_mode() == ll::pattern_matcher::mode::substring_fallback);
    }
    // Not ranges: a `-` first, last, or right after a range is a member.
    for (const char* p : {R"([\d-])", R"([-\d])", R"([a-c-\d])", R"([\d\-z])", R"([]-a])"}) {
      CAPTURE(p);
      ll::pattern_matcher m(p);
      CHECK(m.match_mode() != ll::pattern_matcher::mode::substring_fallback);
    }
    CHECK(ll::evaluate_output_contains("-", R"([a-c-\d])").verdict == "success");
    CHECK(ll::evaluate_output_contains("7", R"([a-c-\d])").verdict == "success");
    CHECK(ll::evaluate_output_contains("b", "[a-c-x]").verdict == "success");
  }

  TEST_CASE("output_contains: the (?u) flag is Python's default for a str pattern") {
    using ll::detail::python_to_re2;
    CHECK(python_to_re2(R"((?u)\w+)") == R"([\p{L}\p{N}_]+)");
    CHECK(python_to_re2("(?iu)a") == "(?i)a");
    CHECK(python_to_re2("(?u:a)b") == "(?:a)b");
    CHECK(python_to_re2("(?ui-s:a)") == "(?i-s:a)");
    CHECK(ll::pattern_matcher(R"((?u)\w)").match_mode() !=
          ll::pattern_matcher::mode::substring_fallback);
    CHECK(ll::evaluate_output_contains("\xC3\xA9", R"((?u)^\w$)").verdict == "success");
    // A NUL byte is no flag (std::strchr would find the terminator): "unknown extension".
    ll::pattern_matcher nul(std::string("a(?\0)", 6));
    CHECK(nul.match_mode() == ll::pattern_matcher::mode::substring_fallback);
    CHECK(nul.regex_error().find("unknown extension") != std::string::npos);
    // Python rejects these: `a` with `u`, and turning `u` (or `a`) off.
    for (const char* p : {"(?au)x", "(?-u:x)", "(?i-a:x)"}) {
      CAPTURE(p);
      CHECK(ll::pattern_matcher(p).match_mode() == ll::pattern_matcher::mode::substring_fallback);
    }
  }

  TEST_CASE("output_contains: the (?a) flag makes \\d, \\w and \\s ASCII, as in Python") {
    using ll::detail::python_to_re2;
    CHECK(python_to_re2(R"((?a)\w+)") == R"([0-9A-Za-z_]+)");
    CHECK(python_to_re2(R"((?ai)\d\D)") == R"((?i)[0-9][^0-9])");
    CHECK(python_to_re2(R"((?a:\s)\s)").find(R"((?:[\t\n\x0B\f\r ])[)") == 0);
    CHECK(python_to_re2(R"((?a)[\w.][^\W][\S])") == R"([0-9A-Za-z_.][0-9A-Za-z_][^\t\n\x0B\f\r ])");
    // Expected verdicts are bool(re.search(pattern, text)) in Python 3.11.
    struct c { const char* pattern; const char* text; bool python; };
    for (const c& k : {c{R"((?a)\w+)", "word abc", true}, c{R"((?a)^\w$)", "\xC3\xA9", false},
                       c{R"(^\w$)", "\xC3\xA9", true}, c{R"((?a)\d)", "\xD9\xA3", false},
                       c{R"((?a:\d)\d)", "1\xD9\xA3", true}, c{R"((?a:\d)\d)", "\xD9\xA3" "1", false},
                       c{R"((?a)\s)", "\x0B", true}, c{R"((?a)\s)", "\xC2\xA0", false},
                       c{R"((?ai)X)", "x", true}}) {
      CAPTURE(k.pattern);
      CAPTURE(k.text);
      ll::pattern_matcher m(k.pattern);
      CHECK(m.match_mode() != ll::pattern_matcher::mode::substring_fallback);
      CHECK(m.search(k.text) == k.python);
    }
  }

  // Python's `$` (no MULTILINE) matches at the end and before a newline that ends the text;
  // `\Z` only at the very end. An escaped `\$` or a `$` in a class is a literal.
  struct py_case {
    std::string pattern;
    std::string text;
    bool python;    // bool(re.search(pattern, text)), or `pattern in text` after re.error
    bool rejected;  // re.compile(pattern) raises re.error (→ substring search)
  };
  const auto check_py_cases = [](const std::vector<py_case>& cases) {
    for (const auto& c : cases) {
      CAPTURE(c.pattern);
      CAPTURE(c.text);
      ll::pattern_matcher m(c.pattern);
      CHECK((m.match_mode() == ll::pattern_matcher::mode::substring_fallback) == c.rejected);
      CHECK(m.search(c.text) == c.python);
      CHECK(ll::evaluate_output_contains(c.text, c.pattern).verdict ==
            (c.python ? "success" : "failure"));
      if (c.rejected) CHECK_FALSE(m.regex_error().empty());
    }
  };

  TEST_CASE("output_contains: `$` matches before a final newline only, as in Python") {
    check_py_cases({
        {"total: \\$\\d+\\Z", "total: $5\n", false, false},
        {"total: \\$\\d+$", "total: $5\n", true, false},
        {"a\\Z|b$", "a\n", false, false},
        {"a\\Z|b$", "b\n", true, false},
        {"a$\n", "a\n", true, false},
        {"a$\n", "a\nb", false, false},
        {"a$\nb", "a\nb", false, false},
        {"a$\\n", "a\n", true, false},
        {"^ok$", "ok\n", true, false},
        {"^ok$", "ok\n\n", false, false},
        {"^ok$", "ok\nmore", false, false},
        {"[$]x", "$x", true, false},
        {"\\$x", "$x", true, false},
        {"x$$", "x\n", true, false},
        {"x$\n$", "x\n", true, false},
        {"x$\\Z", "x\n", false, false},
        {"x$\\Z", "x", true, false},
        {"(a$)?\n", "a\n", true, false},
        {"(?:done|ok)$", "ok\n", true, false},
        {"\\d\\Z", "5\n", false, false},
        {"(?m)^ok$", "x\nok\ny", true, false},
        {"(?m:ok$)\ny", "ok\ny", true, false},
        {"(?-m:ok$)", "ok\ny", false, false},
        {"(?im)OK$", "ok\ny", true, false},
        {"a$\n*", "a\n", true, false},
    });
    using ll::detail::python_to_re2;
    CHECK(python_to_re2("ok$") == R"(ok(?:\n?\z))");
    CHECK(python_to_re2("a$\n") == R"(a\n\z)");
    CHECK(python_to_re2(R"(a$\Z)") == R"(a\z\z)");
    CHECK(python_to_re2(R"(\$[$])") == R"(\$[$])");
    CHECK(python_to_re2("(?m)ok$") == "(?m)ok$");
    CHECK(python_to_re2("(?m:a$)b$") == R"((?m:a$)b(?:\n?\z))");
    // The translated `$` keeps the memmem prefilter.
    CHECK(ll::pattern_matcher(R"(^\d+ passed$)").required_literal() == " passed");
  }

  TEST_CASE("output_contains: what Python's re rejects falls back to substring search") {
    // Escapes Python does not know, malformed \x \u \U, group references, global flags
    // after the start, extensions Python lacks: re.error, so the seed searches for the
    // pattern text. Valid Python that RE2 reads differently is translated.
    check_py_cases({
        {"done\\z", "done", false, true},
        {"done\\z", "done\\z", true, true},
        {"\\pL", "x", false, true},
        {"\\pL", "a\\pL", true, true},
        {"[[:alpha:]]", "x", false, false},
        {"[[:alpha:]]", "a]", true, false},
        {"a(?i)BC", "abc", false, true},
        {"a(?i)BC", "xa(?i)BC", true, true},
        {"\\u0041", "A", true, false},
        {"a(?#c)b", "ab", true, false},
        {"a(?#c)*", "aa", true, false},
        {"\\x{41}1", "A1", false, true},
        {"\\x411", "A1", true, false},
        {"\\u004", "A", false, true},
        {"\\U00000041", "A", true, false},
        {"\\U0041", "A", false, true},
        {"[\\u0041]", "A", true, false},
        {"\\e", "e", false, true},
        {"[\\A]", "A", false, true},
        {"[\\b]", "\b", true, false},
        {"\\12", "\n", false, true},
        {"\\12", "x\\12", true, true},
        {"\\123", "S", true, false},
        {"[\\1]", "\x01", true, false},
        {"\\0", std::string("\0", 1), true, false},
        {"a|(?i)b", "B", false, true},
        {"(?i)(?m)abc", "ABC", true, false},
        {"(?#c)(?i)a", "A", true, false},
        {"(?<n>a)", "a", false, true},
        {"(?U)a+", "a", false, true},
        {"a**", "a**", true, true},
        {"x{2}{,2}", "xx", false, true},
        {"x\\", "x\\", true, true},
        {"\\_x", "_x", true, false},
        {"\\\xC3\xA9", "\xC3\xA9", true, false},
    });
    using ll::detail::python_to_re2;
    CHECK(python_to_re2(R"(\u0041\U0001F600)") == R"(\x{41}\x{1F600})");
    CHECK(python_to_re2(R"(\x41[\x42\b])") == R"(\x{41}[\x{42}\x08])");
    CHECK(python_to_re2(R"(\101\0)") == R"(\x{41}\x{0})");
    CHECK(python_to_re2("a(?#comment)b") == "ab");
    CHECK(python_to_re2("[[:alpha:]]") == R"([\[:alpha:]])");
    ll::pattern_matcher z(R"(done\z)");
    CHECK(z.match_mode() == ll::pattern_matcher::mode::substring_fallback);
    CHECK(z.regex_error() == R"(bad escape \z at position 4)");
    // \N{NAME} is valid Python, but names are not resolved here: substring search (Python
    // would match "a").
    ll::pattern_matcher named(R"(\N{LATIN SMALL LETTER A})");
    CHECK(named.match_mode() == ll::pattern_matcher::mode::substring_fallback);
    CHECK_FALSE(named.search("a"));
  }

  TEST_CASE("output_json: numbers beyond a double are ±inf as in json.loads") {
    using op = ll::comparison_op;
    auto big = ll::evaluate_output_json(R"({"a": 1e400})", ".a", op::gt, 0);
    CHECK(big.verdict == "success");  // Python: value inf
    CHECK(big.details["value"].get<double>() == HUGE_VAL);
    auto neg = ll::evaluate_output_json(R"({"a": -1e400})", ".a", op::lt, 0);
    CHECK(neg.verdict == "success");  // Python: value -inf
    CHECK(neg.details["value"].get<double>() == -HUGE_VAL);
    CHECK(ll::evaluate_output_json(R"({"a": 1e-400})", ".a", op::eq, 0).verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": 1e400, "b": 2})", ".b", op::eq, 2).verdict ==
          "success");
    CHECK(ll::evaluate_output_json(R"({"a": [1e400]})", ".a", op::eq,
                                   ll::json::array({HUGE_VAL}))
              .verdict == "success");
  }

  TEST_CASE("output_json: NaN, Infinity and -Infinity are values as in json.loads") {
    using op = ll::comparison_op;
    CHECK(ll::evaluate_output_json(R"({"a": NaN})", ".a", op::ne, 0).verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": NaN})", ".a", op::eq, 0).verdict == "failure");
    CHECK(ll::evaluate_output_json(R"({"a": NaN})", ".a", op::ge, 0).verdict == "failure");
    CHECK(ll::evaluate_output_json(R"({"a": Infinity})", ".a", op::gt, 5).verdict == "success");
    CHECK(ll::evaluate_output_json("[-Infinity]", ".0", op::lt, 0).verdict == "success");
    CHECK(ll::evaluate_output_json("NaN", ".", op::ne, 1).verdict == "success");
    // Skipped over, not selected.
    CHECK(ll::evaluate_output_json(R"({"x": NaN, "y": [Infinity, -Infinity], "a": 1})", ".a",
                                   op::eq, 1)
              .verdict == "success");
    // Inside a selected container: kept as doubles (NaN equals nothing, as in Python); in
    // serialised details they read null, as nlohmann writes non-finite numbers.
    auto whole = ll::evaluate_output_json(R"({"a": [1, NaN, -Infinity]})", ".a", op::eq,
                                          ll::json::array({1, 0, 0}));
    CHECK(whole.verdict == "failure");
    CHECK(std::isnan(whole.details["value"][1].get<double>()));
    CHECK(whole.details["value"][2].get<double>() == -HUGE_VAL);
    CHECK(whole.details.dump() == R"({"value":[1,null,null],"path":".a","target":[1,0,0]})");
    CHECK(ll::evaluate_output_json(R"({"a": {"b": NaN}})", ".a", op::ne,
                                   ll::json{{"b", 0}})
              .verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": [Infinity]})", ".a", op::eq,
                                   ll::json::array({HUGE_VAL}))
              .verdict == "success");
    // What json.loads rejects stays an error, with its message.
    CHECK(ll::evaluate_output_json("[-NaN]", ".0", op::eq, 0).details["error"] ==
          "Invalid JSON: Expecting value: line 1 column 2 (char 1)");
    CHECK(ll::evaluate_output_json("[nan]", ".0", op::eq, 0).details["error"] ==
          "Invalid JSON: Expecting value: line 1 column 2 (char 1)");
    CHECK(ll::evaluate_output_json("[Infinit]", ".0", op::eq, 0).details["error"] ==
          "Invalid JSON: Expecting value: line 1 column 2 (char 1)");
    CHECK(ll::evaluate_output_json("[-Inf]", ".0", op::eq, 0).details["error"] ==
          "Invalid JSON: Expecting value: line 1 column 2 (char 1)");
    CHECK(ll::evaluate_output_json("[NaN", ".0", op::eq, 0).details["error"] ==
          "Invalid JSON: Expecting ',' delimiter: line 1 column 5 (char 4)");
  }

  TEST_CASE("output_json: surrogate escapes") {
    using op = ll::comparison_op;
    // A pair is one code point (json.loads gives '😀'), in keys and in values.
    CHECK(ll::evaluate_output_json(R"({"\ud83d\ude00": 1})", ".\xF0\x9F\x98\x80", op::eq, 1)
              .verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": "x\ud83d\ude00"})", ".a", op::eq,
                                   "x\xF0\x9F\x98\x80")
              .verdict == "success");
    // A lone surrogate differs from every string (Python: '\ud800' != 'x'); details show it
    // as U+FFFD.
    auto lone = ll::evaluate_output_json(R"({"a": "\ud800"})", ".a", op::eq, "x");
    CHECK(lone.verdict == "failure");
    CHECK(lone.details["value"] == "\xEF\xBF\xBD");
    CHECK(ll::evaluate_output_json(R"({"a": "\ud800"})", ".a", op::eq, "\xEF\xBF\xBD")
              .verdict == "failure");
    CHECK(ll::evaluate_output_json(R"({"a": "\ud800"})", ".a", op::ne, "x").verdict ==
          "success");
    CHECK(ll::evaluate_output_json(R"({"a": "\ud83dA"})", ".a", op::eq, "\xEF\xBF\xBD" "A")
              .verdict == "failure");
    auto in_key = ll::evaluate_output_json(R"({"o": {"\udc00": 1}})", ".o", op::ne, 0);
    CHECK(in_key.verdict == "success");
    CHECK(in_key.details["value"] == ll::json{{"\xEF\xBF\xBD", 1}});
    CHECK(ll::evaluate_output_json(R"({"\ud800": 1})", ".\xEF\xBF\xBD", op::eq, 1).verdict ==
          "error");  // Path not found
  }

  TEST_CASE("output_json: error positions count characters as json.loads does") {
    using op = ll::comparison_op;
    const auto err = [](const char* doc) {
      return ll::evaluate_output_json(doc, ".0", op::eq, 0).details["error"].get<std::string>();
    };
    CHECK(err("{\"\xC3\xA9\": }") == "Invalid JSON: Expecting value: line 1 column 7 (char 6)");
    CHECK(err("[\"\xC3\xA9\", x]") == "Invalid JSON: Expecting value: line 1 column 7 (char 6)");
    CHECK(err("[\"\xF0\x9F\x98\x80\", x]") ==
          "Invalid JSON: Expecting value: line 1 column 7 (char 6)");
    CHECK(err("{\"\xC3\xA9\":\n \"\xC3\xBC\" x}") ==
          "Invalid JSON: Expecting ',' delimiter: line 2 column 6 (char 11)");
    // Invalid \uXXXX escapes point at the `u`.
    CHECK(err(R"(["\u12"])") == R"(Invalid JSON: Invalid \uXXXX escape: line 1 column 4 (char 3))");
    CHECK(err(R"(["\u12)") == R"(Invalid JSON: Invalid \uXXXX escape: line 1 column 4 (char 3))");
    CHECK(err(R"(["\u1234)") ==
          R"(Invalid JSON: Invalid \uXXXX escape: line 1 column 4 (char 3))");
    CHECK(ll::evaluate_output_json(R"("\u1234")", ".", op::ne, 0).verdict == "success");
    CHECK(err(R"("\ud800\u12")") ==
          R"(Invalid JSON: Invalid \uXXXX escape: line 1 column 9 (char 8))");
    CHECK(err(R"({"a":"\uZZZZ"})") ==
          R"(Invalid JSON: Invalid \uXXXX escape: line 1 column 8 (char 7))");
    CHECK(err(R"(["\x"])") == R"(Invalid JSON: Invalid \escape: line 1 column 3 (char 2))");
    CHECK(err("[\"a\t\"]") ==
          "Invalid JSON: Invalid control character at: line 1 column 4 (char 3)");
    CHECK(err("\xEF\xBB\xBF{\"a\":1}") ==
          "Invalid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 "
          "(char 0)");
  }

  TEST_CASE("exact int/float comparison as Python") {
    using ll::detail::compare_int_double;
    constexpr auto i64max = std::numeric_limits<std::int64_t>::max();
    constexpr auto i64min = std::numeric_limits<std::int64_t>::min();
    constexpr auto u64max = std::numeric_limits<std::uint64_t>::max();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double two53 = 9007199254740992.0, two63 = 9223372036854775808.0,
                 two64 = 18446744073709551616.0;
    CHECK(compare_int_double(std::int64_t{9007199254740993}, two53) == 1);
    CHECK(compare_int_double(std::int64_t{9007199254740992}, two53) == 0);
    CHECK(compare_int_double(i64max, two63) == -1);  // 2**63 - 1 < 2.0**63
    CHECK(compare_int_double(i64min, -two63) == 0);
    CHECK(compare_int_double(i64min, -HUGE_VAL) == 1);
    CHECK(compare_int_double(i64max, HUGE_VAL) == -1);
    CHECK(compare_int_double(std::int64_t{0}, -0.0) == 0);
    CHECK(compare_int_double(std::int64_t{-1}, -0.5) == -1);
    CHECK(compare_int_double(std::int64_t{-1}, -1.5) == 1);
    CHECK(compare_int_double(std::int64_t{2}, 2.5) == -1);
    CHECK(compare_int_double(std::int64_t{5}, nan) == 2);
    CHECK(compare_int_double(u64max, two64) == -1);
    CHECK(compare_int_double(u64max, 1.8446744073709550e19) == 1);
    CHECK(compare_int_double(std::uint64_t{0}, -0.0) == 0);
    CHECK(compare_int_double(std::uint64_t{0}, -0.5) == 1);
    CHECK(compare_int_double(std::uint64_t{1}, 0.5) == 1);
    CHECK(compare_int_double(std::uint64_t{1}, 1.5) == -1);
    CHECK(compare_int_double(std::uint64_t{1}, nan) == 2);

    using op = ll::comparison_op;
    // Python: 9007199254740993 == 9007199254740992.0 is False.
    CHECK(ll::evaluate_output_json(R"({"a": 9007199254740993})", ".a", op::eq, two53).verdict ==
          "failure");
    CHECK(ll::evaluate_output_json(R"({"a": 9007199254740993})", ".a", op::gt, two53).verdict ==
          "success");
    CHECK(ll::evaluate_output_json(R"({"a": 9007199254740992})", ".a", op::eq, two53).verdict ==
          "success");
    CHECK(ll::evaluate_output_json(R"({"a": 9007199254740992.0})", ".a", op::eq,
                                   std::int64_t{9007199254740993})
              .verdict == "failure");
    CHECK(ll::evaluate_output_json(R"({"a": -9007199254740993})", ".a", op::lt, -two53)
              .verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": 18446744073709551615})", ".a", op::lt, two64)
              .verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": -0})", ".a", op::eq, -0.0).verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": 1})", ".a", op::ne, nan).verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": 1})", ".a", op::lt, HUGE_VAL).verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": true})", ".a", op::eq, 1.0).verdict == "success");
    CHECK(ll::evaluate_output_json(R"({"a": [9007199254740993]})", ".a", op::eq,
                                   ll::json::array({two53}))
              .verdict == "failure");
  }

  TEST_CASE("numbers: float(text.strip()) strips Unicode whitespace") {
    using ll::detail::parse_number;
    using ll::detail::trim_py;
    CHECK(parse_number("5\xC2\xA0") == 5.0);                  // U+00A0
    CHECK(parse_number("\xE2\x80\x83 7 ") == 7.0);            // U+2003
    CHECK(parse_number("\xC2\x85" "5") == 5.0);               // U+0085
    CHECK(parse_number("\xE1\x9A\x80" "1\xE2\x80\xA9") == 1.0);  // U+1680, U+2029
    CHECK(parse_number("\xE2\x80\x80\xE2\x80\x8A" "2\xE2\x80\xA8") == 2.0);  // U+2000, U+200A
    CHECK(parse_number("\xE2\x80\xAF" "3\xE2\x81\x9F") == 3.0);  // U+202F, U+205F
    CHECK(parse_number("\xE3\x80\x80-4\xE3\x80\x80\x1c") == -4.0);  // U+3000
    // Not whitespace for Python: U+200B, U+180E, U+2010; and à (C3 A0) is a letter.
    CHECK_FALSE(parse_number("5\xE2\x80\x8B").has_value());
    CHECK_FALSE(parse_number("\xE1\xA0\x8E" "5").has_value());
    CHECK_FALSE(parse_number("5\xE2\x80\x90").has_value());
    CHECK(trim_py("x\xC3\xA0") == "x\xC3\xA0");
    CHECK(trim_py("\xC2\xA0 x \xC2\xA0") == "x");
    CHECK(trim_py("\xE3\x80\x80\xC2\xA0").empty());
    CHECK(ll::evaluate_output_numeric("5\xC2\xA0", ll::comparison_op::eq, 5).verdict ==
          "success");
    runner r;
    auto c = cfg(ll::evaluator_type::convergence);
    c.target = 0;
    auto first = r.run(&c, "\xE2\x80\x83 7 \xE3\x80\x80");
    CHECK(first.verdict == "progress");
    CHECK(first.details["current"] == 7.0);
  }
}

TEST_SUITE("evaluators") {
  TEST_CASE("an output the runner cut: evaluators that need all of it say so instead of misjudging") {
    runner r;
    r.action.truncated = true;
    r.action.output_limit = std::size_t{16} << 20;
    const std::string cut = "head\n[... output truncated by little_loops ...]\ntail";
    auto contains = cfg(ll::evaluator_type::output_contains);
    contains.pattern = "NEEDLE";  // in the part that was cut: not found is not a failure
    auto missing = r.run(&contains, cut);
    CHECK(missing.verdict == "error");
    CHECK(missing.details["error"] ==
          "output cut at 16 MiB (the runner's output limit): output_contains needs the whole output");
    CHECK(missing.details["output_truncated"] == true);
    CHECK(missing.details["output_limit"] == 16 << 20);
    contains.pattern = "tail";  // found: stands
    auto found = r.run(&contains, cut);
    CHECK(found.verdict == "success");
    CHECK(found.details["output_truncated"] == true);
    auto json_eval = cfg(ll::evaluator_type::output_json);
    json_eval.path = ".a";
    CHECK(r.run(&json_eval, "{\"a\": 1, " + cut).details["error"] ==
          "output cut at 16 MiB (the runner's output limit): output_json needs the whole output");
    CHECK(r.run(&json_eval, cut).verdict == "error");
    auto numeric = cfg(ll::evaluator_type::output_numeric);
    CHECK(r.run(&numeric, cut).verdict == "error");
    auto exit_code = cfg(ll::evaluator_type::exit_code);
    auto by_exit = r.run(&exit_code, cut, 0);
    CHECK(by_exit.verdict == "success");
    CHECK(by_exit.details["output_truncated"] == true);
    // Not cut: as before.
    r.action.truncated = false;
    contains.pattern = "NEEDLE";
    CHECK(r.run(&contains, cut).verdict == "failure");
    CHECK(ll::output_cut_text(1000) == "output cut at 1000 bytes");
    CHECK(ll::output_cut_text(64 << 10) == "output cut at 64 KiB");
  }
}

TEST_CASE("harbor_scorer reads the exit code, then a float score") {
  auto yes = ll::evaluate_harbor_scorer(" 0.75\n", 0);
  CHECK(yes.verdict == "yes");
  CHECK(yes.details.materialize()["score"] == 0.75);
  CHECK(ll::evaluate_harbor_scorer("0.9", 3).verdict == "no");
  auto bad = ll::evaluate_harbor_scorer("score: high", 0);
  CHECK(bad.verdict == "error");
  CHECK(bad.details.materialize()["error"] == "Scorer stdout is not a float: score: high");

  // a core evaluator, not a plugin key
  auto loop = ll::parse_loop_text(R"({"name": "h", "initial": "s", "dialect": "current", "states": {
      "s": {"action": "score", "evaluate": {"type": "harbor_scorer"}, "on_yes": "done",
            "on_no": "done", "on_error": "done"}, "done": {"terminal": true}}})");
  REQUIRE(loop);
  CHECK(ll::validate(*loop).empty());
}
