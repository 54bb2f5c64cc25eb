// little_loops — tests of the YAML loader (yaml_loader.hpp)
// SPDX-License-Identifier: MIT
#include <little_loops/yaml_loader.hpp>

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace ll = little_loops;
namespace fs = std::filesystem;

namespace {

const std::filesystem::path fixtures = std::filesystem::path(LITTLE_LOOPS_FIXTURES_DIR) / "adapters";

ll::json yaml(std::string_view text) {
  auto doc = ll::yaml_to_json(text, "t.yaml");
  if (!doc) FAIL_CHECK(ll::to_string(doc.error()));
  REQUIRE(doc.has_value());
  return *doc;
}

ll::error yaml_error(std::string_view text, ll::yaml_source_map* map = nullptr) {
  auto doc = ll::yaml_to_json(text, "t.yaml", map);
  REQUIRE_FALSE(doc.has_value());
  return doc.error();
}

}  // namespace

TEST_CASE("key order is preserved") {
  auto doc = yaml("zeta: 1\nalpha: 2\nmid:\n  y: 1\n  b: 2\n");
  CHECK(doc.dump() == R"({"zeta":1,"alpha":2,"mid":{"y":1,"b":2}})");
}

TEST_CASE("scalars resolve like PyYAML safe_load") {
  auto doc = yaml(R"(
a: true
b: False
c: yes
d: No
e: on
f: OFF
g: y
h: 42
i: -17
j: 0x1F
k: 017
l: 0b101
m: 1_000
n: 1:30
o: 3.25
p: 1.0e+3
q: 1e3
r: 1.5e3
s: .5
t: -.inf
u: ~
v: null
w:
x: "true"
y: '42'
z: !!str 7
aa: 09
ab: 2024-01-15
ac: 1.
ad: +12
ae: |
  block
af: !!float 3
ag: -.5
)");
  CHECK(doc["a"] == true);
  CHECK(doc["b"] == false);
  CHECK(doc["c"] == true);
  CHECK(doc["d"] == false);
  CHECK(doc["e"] == true);
  CHECK(doc["f"] == false);
  CHECK(doc["g"] == "y");
  CHECK(doc["h"] == 42);
  CHECK(doc["h"].is_number_integer());
  CHECK(doc["i"] == -17);
  CHECK(doc["j"] == 31);
  CHECK(doc["k"] == 15);
  CHECK(doc["l"] == 5);
  CHECK(doc["m"] == 1000);
  CHECK(doc["n"] == 90);
  CHECK(doc["o"] == 3.25);
  CHECK(doc["o"].is_number_float());
  CHECK(doc["p"] == 1000.0);
  CHECK(doc["q"] == "1e3");    // PyYAML: a float needs a dot
  CHECK(doc["r"] == "1.5e3");  // PyYAML: an exponent needs a sign
  CHECK(doc["s"] == 0.5);
  CHECK(std::isinf(doc["t"].get<double>()));
  CHECK(doc["t"].get<double>() < 0);
  CHECK(doc["u"].is_null());
  CHECK(doc["v"].is_null());
  CHECK(doc["w"].is_null());
  CHECK(doc["x"] == "true");
  CHECK(doc["y"] == "42");
  CHECK(doc["z"] == "7");
  CHECK(doc["aa"] == "09");
  CHECK(doc["ab"] == "2024-01-15");
  CHECK(doc["ac"] == 1.0);
  CHECK(doc["ad"] == 12);
  CHECK(doc["ae"] == "block\n");
  CHECK(doc["af"] == 3.0);
  CHECK(doc["ag"] == "-.5");
}

TEST_CASE("floats out of range: too large is infinity, too small is zero, as Python reads them") {
  auto doc = yaml("a: 1.0e+400\nb: -1.0e+400\nc: 1.0e-400\nd: -1.0e-400\ne: 0.000001e-400\n"
                  "f: 1000000.0e-310\ng: 0.0e+400\n");
  CHECK(std::isinf(doc["a"].get<double>()));
  CHECK(doc["a"].get<double>() > 0);
  CHECK(std::isinf(doc["b"].get<double>()));
  CHECK(doc["b"].get<double>() < 0);
  CHECK(doc["c"] == 0.0);
  CHECK_FALSE(std::signbit(doc["c"].get<double>()));
  CHECK(doc["d"] == 0.0);
  CHECK(std::signbit(doc["d"].get<double>()));  // -0.0, as float("-1e-400")
  CHECK(doc["e"] == 0.0);
  CHECK(doc["f"] == 1e-304);
  CHECK(doc["g"] == 0.0);
  // A loop cannot hold them: JSON (a compiled loop, a journal) has no infinity or NaN.
  auto loop = ll::load_loop_yaml(
      "name: n\ninitial: a\nmax_iterations: .inf\ncontext: {x: 1.0e+400, y: [1, .nan], z: 1.0e-400}\n"
      "states:\n  a: {terminal: true}\n");
  REQUIRE_FALSE(loop.has_value());
  const auto& d = loop.error().details;
  REQUIRE(d.size() == 3);
  CHECK(d[0].path == "max_iterations");
  CHECK(d[0].message == "number is not finite");
  CHECK(d[1].path == "context.x");
  CHECK(d[1].message.rfind("number is not finite", 0) == 0);
  CHECK(d[2].path == "context.y[1]");
}

TEST_CASE("every escape of a double-quoted scalar is UTF-8, as PyYAML reads it") {
  // yaml-cpp writes \N and \_ as the lone bytes 0x85 / 0xA0; the loader re-encodes them.
  auto doc = yaml("a: \"non\\_breaking\"\nb: \"next\\Nline\"\nc: \"\\xe9\\_\\u00e9\"\n"
                  "\"k\\_ey\": 1\nd: \"caf\u00e9\\_\"\n");
  CHECK(doc["a"] == "non\u00a0breaking");
  CHECK(doc["b"] == "next\u0085line");
  CHECK(doc["c"] == "\u00e9\u00a0\u00e9");
  CHECK(doc["k\u00a0ey"] == 1);
  CHECK(doc["d"] == "caf\u00e9\u00a0");
  CHECK(ll::detail::is_valid_utf8(doc.dump()));
  // A loop using them loads.
  auto loop = ll::load_loop_yaml(
      "name: t\ndescription: \"non\\_breaking\"\ninitial: a\nstates:\n  a:\n    terminal: true\n",
      "t.yaml");
  CHECK(loop.has_value());
}

TEST_CASE("keys are their source text") {
  auto doc = yaml("yes: a\n1: b\ntrue: c\n");
  CHECK(doc.dump() == R"({"yes":"a","1":"b","true":"c"})");
}

TEST_CASE("anchors, aliases and merge keys") {
  auto doc = yaml(R"(
base: &base
  action: make
  timeout: 10
list: &l [1, 2]
copy: *l
derived:
  <<: *base
  timeout: 20
  extra: x
multi:
  <<: [{a: 1, b: 1}, {b: 2, c: 2}]
)");
  CHECK(doc["copy"] == ll::json::array({1, 2}));
  CHECK(doc["derived"].dump() == R"({"action":"make","timeout":20,"extra":"x"})");
  CHECK(doc["multi"].dump() == R"({"b":1,"c":2,"a":1})");
}

TEST_CASE("an empty document is null; several documents are an error") {
  CHECK(yaml("").is_null());
  CHECK(yaml("# just a comment\n").is_null());
  auto e = yaml_error("a: 1\n---\nb: 2\n");
  CHECK(e.code == ll::errc::parse_error);
  CHECK(e.message.find("single document") != std::string::npos);
}

TEST_CASE("syntax errors carry file, line and column and never throw") {
  auto e = yaml_error("name: x\nstates:\n  a: {action: [1, 2\n  b: 3\n");
  CHECK(e.code == ll::errc::parse_error);
  CHECK(e.message.rfind("t.yaml:", 0) == 0);
  CHECK(e.path == "t.yaml");
  REQUIRE(e.details.size() == 1);
  CHECK(e.details[0].code == "parse-error");

  auto tab = yaml_error("a:\n\t- b\n");
  CHECK(tab.message.find("t.yaml:2:") == 0);

  for (std::string_view bad : {"[", "{", "a: 'x", "a: \"x", "- a\nb: c", "*nope", "&a", "? : :", "a: b: c",
                               "\x01\x02\xff", "!<!> x", "%YAML 9.9\n---\na", "a: !!binary |\n  ***"}) {
    auto r = ll::yaml_to_json(bad, "fuzz.yaml");
    (void)r;  // any outcome but a crash or an exception is fine
  }
}

TEST_CASE("the three common YAML mistakes are explained with file:line:col and a fix") {
  // `: ` in an unquoted value: yaml-cpp says "illegal map value".
  auto e = yaml_error("name: x\nstates:\n  a:\n    action: echo said: hi\n");
  CHECK(e.message ==
        "t.yaml:4:13: the value of \"action\" contains \": \", which YAML reads as another key: "
        "quote this value or use a block scalar (>-) (YAML parser: illegal map value)");
  // A tab in the indentation.
  e = yaml_error("name: x\nstates:\n  a:\n\taction: echo hi\n    next: b\n");
  CHECK(e.message.rfind("t.yaml:4:1: tabs cannot indent YAML", 0) == 0);
  // A key indented one space too far, or too little.
  e = yaml_error("name: x\nstates:\n  a:\n    action: echo hi\n     next: b\n");
  CHECK(e.message.rfind("t.yaml:5:6: this key does not line up with the keys above it: expected this "
                        "key at column 5 (like \"action\")", 0) == 0);
  e = yaml_error("name: x\nstates:\n  a:\n    action: echo hi\n   next: b\n");
  CHECK(e.message.find("t.yaml:5:4: ") == 0);
  CHECK(e.message.find("expected this key at column 5 (like \"action\") or column 3 (like \"a\")") !=
        std::string::npos);
  // Other errors keep yaml-cpp's words.
  CHECK(yaml_error("a: [1, 2\n").message.find("(YAML parser:") == std::string::npos);
}

TEST_CASE("characters YAML does not allow are refused with their position (PyYAML's Reader)") {
  // A NUL read silently would change an action (yaml-cpp turned `a\0nb` into `a\nb`).
  auto nul = yaml_error(std::string("name: t\naction: echo a\0nid\n", 27));
  CHECK(nul.message ==
        "t.yaml:2:15: unacceptable character #x0000: special characters are not allowed");
  CHECK(nul.details.at(0).code == "parse-error");
  for (const char* bad : {"a: \x01", "a: b\x7f", "a: \xC2\x80", "a: \xC2\x9F", "a: \xEF\xBF\xBE",
                          "a: 'in quotes \x1b[2J'", "# comment \x0c\na: 1"}) {
    CAPTURE(bad);
    CHECK(yaml_error(bad).message.find("unacceptable character #x") != std::string::npos);
  }
  CHECK(yaml_error("a: 1\nb: x\xC2\x9Fy").message.find("t.yaml:2:5: unacceptable character #x009f") == 0);
  // What YAML allows: tab, CR LF, NEL, no-break space, other Unicode, a byte order mark.
  CHECK(yaml("a: \"x\ty\"\r\nb: \xC2\x85\xC2\xA0\xE2\x82\xAC")["a"] == "x\ty");
  CHECK(yaml("\xEF\xBB\xBF" "a: 1")["a"] == 1);
}

TEST_CASE("an unterminated quoted scalar at the end of the stream is an error, as in PyYAML") {
  for (const char* bad : {"a: \"echo hi", "a: 'echo hi", "a: \"x\\\"", "a: 'it''s",
                          "\"k"}) {
    // yaml-cpp refuses it without a final newline ("illegal EOF in scalar"), but with one it
    // ended the scalar at the end of the stream.
    const std::string text = std::string(bad) + "\n";
    CAPTURE(text);
    auto e = yaml_error(text);
    CHECK(e.code == ll::errc::parse_error);
    CHECK(to_string(e).find("found unexpected end of stream") != std::string::npos);
    CHECK_FALSE(yaml_error(bad).message.empty());
  }
  CHECK(yaml("a: \"x\\\"y\"")["a"] == "x\"y");
  CHECK(yaml("a: 'it''s'")["a"] == "it's");
  CHECK(yaml("a: \"\"\nb: ''")["b"] == "");
  CHECK(yaml("\xEF\xBB\xBF" "a: \"x\"")["a"] == "x");
}

TEST_CASE("an empty entry in a flow sequence is an error, as in PyYAML") {
  for (const char* bad : {"k: [a, , b]\n", "k: [a,,b]\n", "k: [ , b]\n"}) {
    CAPTURE(std::string(bad));
    auto e = yaml_error(bad);
    CHECK(to_string(e).find("expected the node content, but found ','") != std::string::npos);
  }
  // What YAML allows: a trailing comma, explicit nulls, an empty value in a flow mapping, an
  // empty block entry, an anchored empty node.
  CHECK(yaml("k: [a, ]\n")["k"] == ll::json::array({"a"}));
  CHECK(yaml("k: [~, null]\n")["k"] == ll::json::array({nullptr, nullptr}));
  CHECK(yaml("k: {a: }\n")["k"]["a"].is_null());
  CHECK(yaml("k:\n- \n- b\n")["k"] == ll::json::array({nullptr, "b"}));
  CHECK(yaml("k: [&x , b]\n")["k"] == ll::json::array({nullptr, "b"}));
}

TEST_CASE("a tab outside quoted and block scalars and comments is an error, as in PyYAML") {
  // PyYAML's scanner skips only spaces between tokens; yaml-cpp took all of these, and read
  // `name: t<TAB>u` as the name "t\tu".
  struct bad_case {
    const char* text;
    const char* where;
  };
  for (const bad_case& c : {bad_case{"a:\tb\n", "t.yaml:1:3:"}, bad_case{"a: 1\t\n", "t.yaml:1:5:"},
                            bad_case{"a: b\tc\n", "t.yaml:1:5:"}, bad_case{"a: 1\t# c\n", "t.yaml:1:5:"},
                            bad_case{"k: [1,\t2]\n", "t.yaml:1:7:"}, bad_case{"k: {a: 1,\tb: 2}\n", "t.yaml:1:10:"},
                            bad_case{"a: |\t\n  x\n", "t.yaml:1:5:"},
                            bad_case{"a: \"x\"\nb: \xC3\xA9\t\n", "t.yaml:2:5:"}}) {
    CAPTURE(std::string(c.text));
    auto e = yaml_error(c.text);
    CHECK(e.code == ll::errc::parse_error);
    CHECK(e.message.rfind(c.where, 0) == 0);
    CHECK(e.message.find("found a tab character that cannot start any token") != std::string::npos);
  }
  // Where tabs belong: quoted scalars (also over several lines), block scalars, comments.
  CHECK(yaml("a: \"x\ty\"\nb: 'p\tq'\n")["b"] == "p\tq");
  CHECK(yaml("a: \"x\n\ty\"\n")["a"] == "x y");
  CHECK(yaml("a: |\n  make\tall\n  \tb\n  c\nb: 1 # x\ty\n# \t\n")["a"] == "make\tall\n\tb\nc\n");
  CHECK(yaml("a: >-\n  x\t\n\nb: \"#\"# c\n")["a"] == "x\t");
  CHECK(yaml_error("a: |\n  x\n\ty\n").message.rfind("t.yaml:3:1:", 0) == 0);  // not indented: not content
  CHECK(yaml_error("a: \"#\"\t# c\n").message.rfind("t.yaml:1:7:", 0) == 0);
  CHECK(yaml("a: b#c\n")["a"] == "b#c");
}

TEST_CASE("an anchor defined twice and a plain = value are errors, as in PyYAML") {
  auto twice = yaml_error("a: &x 1\nb: !!str &x 2\nc: *x\n");
  REQUIRE(twice.details.size() == 1);
  CHECK(twice.details[0].code == "yaml-anchor");
  CHECK(twice.details[0].message ==
        "found duplicate anchor 'x': it is defined first at line 1, column 4 and again (line 2, column 4)");
  CHECK(yaml_error("- &a [1]\n- &a {b: 1}\n").details.at(0).code == "yaml-anchor");
  CHECK(yaml("a: &x 1\nb: &y 2\nc: *x\nd: *y\n")["d"] == 2);

  // PyYAML resolves a plain `=` to tag:yaml.org,2002:value, which safe_load cannot build.
  auto eq = yaml_error("a: =\n");
  REQUIRE(eq.details.size() == 1);
  CHECK(eq.details[0].path == "a");
  CHECK(eq.details[0].message.find("tag:yaml.org,2002:value") != std::string::npos);
  CHECK(yaml_error("a: [=]\n").details.at(0).path == "a[0]");
  CHECK(yaml("a: '='\nb: ==\n=: 1\n").dump() == R"({"a":"=","b":"==","=":1})");
}

TEST_CASE("a block mapping key needs its ':' and a scalar value its indentation, as in PyYAML") {
  // yaml-cpp read a word without ':' as a key with a null value, and a quoted scalar on the
  // next line at the key's column as the key's value.
  for (const char* bad : {"a:\nb\n", "x:\n  a: 1\n  oops\n", "a:\n\"b\"\n", "x:\n  a:\n  'b'\n",
                          "context:\n  k: v\n  stray\n"}) {
    CAPTURE(std::string(bad));
    auto e = yaml_error(bad);
    REQUIRE_FALSE(e.details.empty());
    CHECK(e.details[0].code == "parse-error");
    CHECK(e.details[0].message.find("could not find expected ':'") != std::string::npos);
  }
  // What YAML allows: explicit keys, flow mappings without values, spaces before ':', a
  // block sequence at the key's indentation, a continued plain scalar.
  CHECK(yaml("? a\n").dump() == R"({"a":null})");
  CHECK(yaml("? a\n: 1\n").dump() == R"({"a":1})");
  CHECK(yaml("? &x k\n: v\n").dump() == R"({"k":"v"})");
  CHECK(yaml("- ? b\n  : 2\n").dump() == R"([{"b":2}])");
  CHECK(yaml("{a, b: 1}\n").dump() == R"({"a":null,"b":1})");
  CHECK(yaml("a  : 1\n'q' : 2\n").dump() == R"({"a":1,"q":2})");
  CHECK(yaml("a:\n- 1\n").dump() == R"({"a":[1]})");
  CHECK(yaml("a: 1\n b\n").dump() == R"({"a":"1 b"})");
  CHECK(yaml("a:\n  'x'\n").dump() == R"({"a":"x"})");
  // An anchored key is a scalar an alias can name (PyYAML: {'a': 1, 'b': 'a'}).
  CHECK(yaml("&k a: 1\nb: *k\n").dump() == R"({"a":1,"b":"a"})");
}

TEST_CASE("duplicate keys, complex keys and unknown tags are diagnostics with positions") {
  ll::yaml_source_map map;
  auto dup = yaml_error("a: 1\nb:\n  c: 1\n  c: 2\n", &map);
  REQUIRE(dup.details.size() == 1);
  CHECK(dup.details[0].code == "duplicate-key");
  CHECK(dup.details[0].path == "b.c");
  CHECK(dup.details[0].message.find("line 4, column 3") != std::string::npos);

  auto complex = yaml_error("? [a]\n: v\n");
  CHECK(complex.details[0].code == "complex-key");

  auto tag = yaml_error("a: !custom x\nb: !!binary aGk=\nc: !!int abc\n");
  REQUIRE(tag.details.size() == 3);
  CHECK(tag.details[0].path == "a");
  CHECK(tag.details[0].code == "yaml-tag");
  CHECK(tag.details[1].path == "b");
  CHECK(tag.details[2].message.find("not a valid !!int") != std::string::npos);

  auto merge = yaml_error("a:\n  <<: 3\n");
  CHECK(merge.details[0].code == "yaml-merge");
}

TEST_CASE("deep nesting and alias bombs are refused, not crashed on") {
  const std::string deep_flow(100000, '[');
  auto e = yaml_error(deep_flow);
  CHECK(e.code == ll::errc::parse_error);

  std::string deep_block;
  for (int i = 0; i < 400; ++i) deep_block += std::string(static_cast<std::size_t>(i) * 2, ' ') + "k:\n";
  auto b = yaml_error(deep_block);
  CHECK(b.details.front().code == "too-deep");

  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'k'; ++c, ++prev)
    bomb += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}]\n", c, prev);
  auto big = yaml_error(bomb);
  CHECK(big.details.front().code == "yaml-too-large");
}

TEST_CASE("alias expansion counts bytes: a long string aliased many times is refused, with its line and column") {
  // A 1 MiB string, aliased 1,000 times: a 1 MiB file that would expand to 1 GiB.
  std::string text = "big: &s " + std::string(std::size_t{1} << 20, 'x') + "\nlist:\n";
  for (int i = 0; i < 1000; ++i) text += "  - *s\n";
  auto bomb = yaml_error(text);
  REQUIRE(bomb.details.size() == 1);
  CHECK(bomb.details.front().code == "yaml-too-large");
  CHECK(bomb.details.front().message.find("more than 67108864 bytes of text (after alias expansion)") != std::string::npos);
  // The string and the keys "big" and "list", then 63 aliases: past 64 MiB at line 2 + 63.
  CHECK(bomb.details.front().message.find("(line 65, column 5)") != std::string::npos);
  CHECK(bomb.details.front().path == "list[62]");
  // Aliased keys count too; a limit given by the host is used.
  ll::yaml_limits small;
  small.max_bytes = 100;
  auto keys = ll::yaml_to_json("a: &k " + std::string(40, 'k') + "\nm:\n  *k : 1\nn:\n  *k : 2\n", "t.yaml", nullptr, small);
  REQUIRE_FALSE(keys.has_value());
  CHECK(keys.error().details.front().code == "yaml-too-large");
  CHECK(ll::yaml_to_json("a: &k " + std::string(40, 'k') + "\nm:\n  *k : 1\n", "t.yaml", nullptr, small).has_value());
}

TEST_CASE("a large key map: every key's position, duplicates found, refused at the cap's crossing") {
  std::string text = "map:\n";
  for (int i = 0; i < 5000; ++i) text += fmt::format("  key_{}: value {}\n", i, i);
  ll::yaml_source_map map;
  auto doc = ll::yaml_to_json(text, "keys.yaml", &map);
  REQUIRE(doc.has_value());
  CHECK((*doc)["map"].size() == 5000);
  CHECK(map.size() == 5002);  // the root, `map` and its keys
  for (int i : {0, 15, 16, 17, 999, 4999}) {
    const auto at = map.find(fmt::format("map.key_{}", i));
    REQUIRE(at.has_value());
    CHECK(at->line == i + 2);
    CHECK(at->column == 3);
  }
  CHECK_FALSE(map.find("map.key_5000").has_value());
  CHECK(map.locate("map.key_5000.x")->line == 1);  // the nearest recorded ancestor

  // A key repeated far into a large mapping (its keys found by hash) is a duplicate.
  auto dup = yaml_error(text + "  key_17: again\n");
  REQUIRE(dup.details.size() == 1);
  CHECK(dup.details.front().code == "duplicate-key");
  CHECK(dup.details.front().path == "map.key_17");
  CHECK(dup.details.front().message.find("(line 5002, column 3)") != std::string::npos);

  // Refused where the value cap is crossed: the text after it is never read (the syntax
  // error at its end is not reached).
  ll::yaml_limits small;
  small.max_nodes = 1000;
  auto capped = ll::yaml_to_json(text + "bad: [unterminated\n", "keys.yaml", nullptr, small);
  REQUIRE_FALSE(capped.has_value());
  REQUIRE(capped.error().details.size() == 1);
  CHECK(capped.error().details.front().code == "yaml-too-large");
  CHECK(capped.error().details.front().message.find("more than 1000 values") != std::string::npos);
  CHECK(capped.error().details.front().path == "map.key_998");
}

TEST_CASE("source map: paths to positions") {
  ll::yaml_source_map map;
  auto doc = ll::yaml_to_json("name: x\nstates:\n  fix:\n    evaluate:\n      operator: eqq\nscope:\n  - src\n  - lib\n",
                              "loop.yaml", &map);
  REQUIRE(doc.has_value());
  CHECK(map.file_name() == "loop.yaml");
  auto at = map.locate("states.fix.evaluate.operator");
  REQUIRE(at.has_value());
  CHECK(*at == ll::source_location{"loop.yaml", 5, 7});
  CHECK(map.locate("scope[1]") == ll::source_location{"loop.yaml", 8, 5});
  // A missing member points at its nearest present ancestor.
  CHECK(map.locate("states.fix.evaluate.target") == ll::source_location{"loop.yaml", 4, 5});
  CHECK(map.locate("") == ll::source_location{"loop.yaml", 1, 1});

  ll::diagnostic d{ll::severity::error, "states.fix.evaluate.operator", "unknown operator", "x"};
  CHECK(ll::format_diagnostic(d, &map) ==
        "loop.yaml:5:7: error: states.fix.evaluate.operator: unknown operator");
  CHECK(ll::format_diagnostic(d, nullptr) == "error: states.fix.evaluate.operator: unknown operator");
}

TEST_CASE("YAML and JSON files load to the same loop") {
  auto from_yaml = ll::load_loop_file(fixtures / "valid_loop.yaml");
  auto from_json = ll::load_loop_file(fixtures / "valid_loop.json");
  if (!from_yaml) FAIL_CHECK(ll::to_string(from_yaml.error()));
  REQUIRE(from_yaml.has_value());
  REQUIRE(from_json.has_value());
  CHECK(*from_yaml == *from_json);
  CHECK(from_yaml->name == "fix-tests");
  CHECK(from_yaml->context["verbose"] == true);
  CHECK(from_yaml->states.size() == 3);
}

TEST_CASE("schema diagnostics are the same as for JSON, with positions") {
  ll::yaml_source_map ymap, jmap;
  auto y = ll::load_loop_file(fixtures / "bad_operator.yaml", nullptr, &ymap);
  auto j = ll::load_loop_file(fixtures / "bad_operator.json", nullptr, &jmap);
  REQUIRE_FALSE(y.has_value());
  REQUIRE_FALSE(j.has_value());
  CHECK(y.error().code == ll::errc::invalid_loop);
  CHECK(y.error().details == j.error().details);
  REQUIRE_FALSE(y.error().details.empty());
  const auto& d = y.error().details.front();
  CHECK(d.path == "states.count.evaluate.operator");
  const std::string yfile = (fixtures / "bad_operator.yaml").string();
  CHECK(ll::format_diagnostic(d, &ymap).rfind(yfile + ":8:7: error: states.count.evaluate.operator: ", 0) == 0);
  CHECK(y.error().message.rfind(yfile + ":8:7: ", 0) == 0);
  // JSON files get positions as well.
  const std::string jfile = (fixtures / "bad_operator.json").string();
  CHECK(ll::format_diagnostic(d, &jmap).rfind(jfile + ":9:9: ", 0) == 0);
}

TEST_CASE("JSON documents take their positions from the one JSON parse") {
  const std::string text =
      "{\n  \"name\": \"x\",\n  \"scope\": [1, {\"a\\u0062\": true}],\r\n  \"s\": {}, \"t\": []\n}\n";
  ll::source_map map, ymap;
  auto doc = ll::parse_json_document(text, "t.json", &map);
  REQUIRE(doc.has_value());
  CHECK(map.locate("") == ll::source_location{"t.json", 1, 1});
  CHECK(map.locate("name") == ll::source_location{"t.json", 2, 3});
  CHECK(map.locate("scope[0]") == ll::source_location{"t.json", 3, 13});
  CHECK(map.locate("scope[1]") == ll::source_location{"t.json", 3, 16});
  CHECK(map.locate("scope[1].ab") == ll::source_location{"t.json", 3, 17});
  CHECK(map.locate("t") == ll::source_location{"t.json", 4, 12});
  // The positions a YAML reader gives the same text (JSON is YAML).
  REQUIRE(ll::yaml_to_json(text, "t.json", &ymap).has_value());
  CHECK(map.size() == ymap.size());
  for (const char* path : {"", "name", "scope", "scope[0]", "scope[1]", "scope[1].ab", "s", "t"})
    CHECK(map.locate(path) == ymap.locate(path));
  // A text the JSON reader refuses has no positions.
  CHECK_FALSE(ll::parse_json_document(R"({"a": 1, "a": 2})", "d.json", &map).has_value());
  CHECK(map.size() == 0);
}

TEST_CASE("paradigm specs in YAML compile") {
  auto loop = ll::load_loop_file(fixtures / "goal_spec.yaml");
  if (!loop) FAIL_CHECK(ll::to_string(loop.error()));
  REQUIRE(loop.has_value());
  CHECK(loop->name == "lint-clean");
  CHECK(loop->states.size() >= 2);
}

TEST_CASE("file errors") {
  auto missing = ll::load_loop_file(fixtures / "does-not-exist.yaml");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ll::errc::io_error);

  auto malformed = ll::load_loop_file(fixtures / "malformed.yaml");
  REQUIRE_FALSE(malformed.has_value());
  CHECK(malformed.error().code == ll::errc::parse_error);
  CHECK(malformed.error().message.find("malformed.yaml:") != std::string::npos);

  auto not_loop = ll::load_loop_yaml("- just\n- a list\n", "list.yaml");
  REQUIRE_FALSE(not_loop.has_value());
}

TEST_CASE("only regular files of at most max_document_file_bytes are read") {
  const fs::path dir = fs::temp_directory_path() / ("ll_yaml_files_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto refused = [](const fs::path& p) {
    auto r = ll::read_text_file(p);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ll::errc::io_error);
    CHECK(r.error().path == p.string());
    return r.error().message;
  };
  CHECK(refused(dir) == "is a directory");
  CHECK(refused(dir / "missing.yaml").rfind("cannot open file", 0) == 0);
  // A FIFO would block open() until a writer comes, then end whenever it likes.
  REQUIRE(::mkfifo((dir / "fifo.yaml").c_str(), 0600) == 0);
  CHECK(refused(dir / "fifo.yaml") == "not a regular file");
  CHECK(refused("/dev/zero") == "not a regular file");  // would never end
  // Over the limit: refused from its size, before anything is read (a sparse file).
  {
    std::ofstream big(dir / "big.yaml");
  }
  fs::resize_file(dir / "big.yaml", ll::max_document_file_bytes + 1);
  CHECK(refused(dir / "big.yaml") ==
        "file is larger than 64 MiB (" + std::to_string(ll::max_document_file_bytes + 1) + " bytes)");
  auto big = ll::load_loop_file(dir / "big.yaml");
  REQUIRE_FALSE(big.has_value());
  CHECK(big.error().code == ll::errc::io_error);
  // Files whose size is not known in advance (procfs says 0) are read to their end.
  auto status = ll::read_text_file("/proc/self/status");
  REQUIRE(status.has_value());
  CHECK(status->find("Name:") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a compiled paradigm's findings carry the spec's file, line and column") {
  // What validate() finds in the loop a spec compiles to is placed in the spec.
  auto goal = ll::load_loop_yaml("paradigm: goal\ngoal: g\ntools:\n  - check\n  - \"fix ${\"\n"
                                 "evaluator:\n  type: output_contains\n",
                                 "g.yaml");
  REQUIRE_FALSE(goal.has_value());
  CHECK(goal.error().message.rfind("g.yaml:6:1: ", 0) == 0);
  ll::yaml_source_map map;
  auto inv = ll::load_loop_yaml("paradigm: invariants\nname: inv\nconstraints:\n  - name: a\n"
                                "    check: \"true\"\n    fix: \"true\"\n    evaluator:\n"
                                "      type: output_numeric\n      target: 1\n",
                                "i.yaml", nullptr, &map);
  REQUIRE_FALSE(inv.has_value());
  REQUIRE(inv.error().details.size() == 1);
  CHECK(ll::format_diagnostic(inv.error().details[0], &map) ==
        "i.yaml:7:5: error: constraints[0].evaluator: Evaluator type 'output_numeric' requires "
        "'operator' field");
}
