// little_loops — tests of composition (compose.hpp) and the file resolver (yaml/file_resolver.hpp)
// SPDX-License-Identifier: MIT
#include <little_loops/compose.hpp>
#include <little_loops/yaml_loader.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ll = little_loops;
namespace fs = std::filesystem;

namespace {

// A source written in YAML, its positions naming `file`.
ll::loop_source source(std::string_view text, std::string file = "top.yaml") {
  ll::loop_source s;
  auto doc = ll::yaml_to_json(text, file, &s.positions);
  REQUIRE_MESSAGE(doc.has_value(), (doc ? "" : doc.error().message));
  s.document = std::move(*doc);
  s.id = std::move(file);
  return s;
}

// A resolver holding the given documents, each written in YAML under its name.
struct library {
  ll::memory_resolver resolver;
  library& add(std::string name, std::string_view text) {
    ll::loop_source s = source(text, name);
    resolver.add(std::move(name), std::move(s.document), std::move(s.positions));
    return *this;
  }
};

ll::json compose_ok(std::string_view text, library& lib, ll::source_map* map = nullptr) {
  auto out = ll::compose_loop(source(text), lib.resolver, map);
  REQUIRE_MESSAGE(out.has_value(), (out ? "" : out.error().message));
  return out->document;
}

ll::error compose_error(std::string_view text, library& lib, ll::source_map* map = nullptr) {
  auto out = ll::compose_loop(source(text), lib.resolver, map);
  REQUIRE_FALSE(out.has_value());
  return out.error();
}

bool has_finding(const ll::error& e, std::string_view path, std::string_view part) {
  for (const auto& d : e.details)
    if (d.path == path && d.message.find(part) != std::string::npos) return true;
  return false;
}

constexpr std::string_view base_loop = R"(name: base
description: parent
initial: a
context: {x: 1, deep: {k: 1, keep: 2}}
labels: [one, two]
states:
  a:
    action: echo a
    evaluate: {type: output_contains, pattern: ok}
    next: b
  b: {terminal: true}
)";

}  // namespace

TEST_CASE("compose: a document without composition keys is returned unchanged") {
  library lib;
  const std::string text = "name: x\ninitial: a\nstates:\n  a: {terminal: true}\n";
  ll::source_map map;
  const ll::json out = compose_ok(text, lib, &map);
  CHECK(out == source(text).document);
  CHECK(map.find("states.a")->line == 4);
}

TEST_CASE("compose merge: mappings merge at every depth, other values replace") {
  const ll::json base = ll::json::parse(R"({"a":{"b":{"c":1,"d":2},"e":[1,2]},"s":{"t":1},"n":3,"k":1})");
  const ll::json over = ll::json::parse(R"({"a":{"b":{"c":9,"z":0},"e":[3]},"s":5,"n":{"m":1},"k":null,"new":1})");
  ll::source_map none, out;
  const ll::json merged = ll::detail::deep_merge({base, none, ""}, {over, none, ""}, out, "");
  CHECK(merged == ll::json::parse(
                      R"({"a":{"b":{"c":9,"d":2,"z":0},"e":[3]},"s":5,"n":{"m":1},"k":null,"new":1})"));
  CHECK(merged.begin().key() == "a");             // base keys first, in base order
  CHECK(std::prev(merged.end()).key() == "new");  // then the new override keys
  CHECK(merged["a"]["b"].begin().key() == "c");
  // inputs unchanged: merging again gives the same
  CHECK(ll::detail::deep_merge({base, none, ""}, {over, none, ""}, out, "") == merged);
}

TEST_CASE("compose from: the child inherits everything and wins where it writes") {
  library lib;
  lib.add("base", base_loop);
  const ll::json out = compose_ok(R"(from: base
name: child
context: {deep: {k: 5}}
labels: [three]
states:
  a:
    evaluate: {pattern: good}
)",
                                  lib);
  CHECK_FALSE(out.contains("from"));
  CHECK(out["name"] == "child");
  CHECK(out["description"] == "parent");
  CHECK(out["initial"] == "a");
  CHECK(out["context"] == ll::json::parse(R"({"x":1,"deep":{"k":5,"keep":2}})"));
  CHECK(out["labels"] == ll::json::parse(R"(["three"])"));  // lists are replaced whole
  CHECK(out["states"]["a"]["evaluate"] == ll::json::parse(R"({"type":"output_contains","pattern":"good"})"));
  CHECK(out["states"]["a"]["action"] == "echo a");
  CHECK(out["states"].contains("b"));
}

TEST_CASE("compose from: a chain merges the deepest parent first; a template parent needs no states") {
  library lib;
  lib.add("lib/root", "name: root\ncontext: {a: root, b: root, c: root}\n");
  lib.add("lib/mid", "from: lib/root\nname: mid\ncontext: {b: mid}\n");
  const ll::json out = compose_ok(
      "from: lib/mid\ncontext: {c: top}\ninitial: s\nstates:\n  s: {terminal: true}\n", lib);
  CHECK(out["name"] == "mid");
  CHECK(out["context"] == ll::json::parse(R"({"a":"root","b":"mid","c":"top"})"));
}

TEST_CASE("compose from: a child's import replaces the parent's, else the parent's is used") {
  library lib;
  lib.add("libA.yaml", "fragments:\n  f: {action: from-a}\n");
  lib.add("libB.yaml", "fragments:\n  f: {action: from-b}\n");
  lib.add("parent", "import: [libA.yaml]\nname: p\ninitial: s\nstates:\n  s: {fragment: f, terminal: true}\n");
  CHECK(compose_ok("from: parent\n", lib)["states"]["s"]["action"] == "from-a");
  CHECK(compose_ok("from: parent\nimport: [libB.yaml]\n", lib)["states"]["s"]["action"] == "from-b");
}

TEST_CASE("compose from: cycles, wrong types and missing parents are errors at `from`") {
  library lib;
  lib.add("a", "from: b\nname: a\n");
  lib.add("b", "from: a\nname: b\n");
  lib.add("self", "from: self\n");
  lib.add("list", "- 1\n");
  ll::source_map map;
  const ll::error cyc = compose_error("from: a\n", lib, &map);
  CHECK(cyc.message.find("Circular `from:` chain: top.yaml -> a -> b -> a") != std::string::npos);
  CHECK(map.locate("from")->file == "b");  // the `from:` that closes the cycle, in its own file
  CHECK(compose_error("from: self\n", lib).message.find("self -> self") != std::string::npos);
  CHECK(has_finding(compose_error("from: 3\n", lib), "from", "`from:` must be a string, got integer"));
  const ll::error missing = compose_error("name: x\nfrom: nowhere\n", lib, &map);
  CHECK(missing.code == ll::errc::reference_not_found);
  CHECK(missing.message.find("top.yaml:2:1:") == 0);
  CHECK(missing.message.find("Loop not found: nowhere") != std::string::npos);
  CHECK(has_finding(compose_error("from: list\n", lib), "from", "Parent loop 'list' is not a mapping"));
}

TEST_CASE("compose from: a value inherited from a parent keeps the parent's file and line") {
  library lib;
  lib.add("base", base_loop);
  ll::source_map map;
  ll::diagnostics warnings;
  auto loop = ll::load_composed_loop(source("from: base\nname: child\nstates:\n  b: {bogus: 1}\n"),
                                     lib.resolver, &warnings, &map);
  REQUIRE_FALSE(loop.has_value());
  CHECK(map.locate("states.a.evaluate.pattern")->file == "base");
  CHECK(map.locate("states.a.evaluate.pattern")->line == 9);
  CHECK(map.locate("states.b.bogus")->file == "top.yaml");
  CHECK_MESSAGE(loop.error().message.find("top.yaml:4:7:") == 0, loop.error().message);
  // an error in what the parent gave is at the parent's line
  auto parent_error = ll::load_composed_loop(
      source("from: unknown_key_parent\nname: child\n"),
      library().add("unknown_key_parent", "initial: a\nlabelz: [x]\nstates:\n  a: {terminal: true}\n")
          .resolver);
  REQUIRE_FALSE(parent_error.has_value());
  CHECK_MESSAGE(parent_error.error().message.find("unknown_key_parent:2:1:") == 0,
                parent_error.error().message);
  auto bad_parent = ll::load_composed_loop(
      source("from: broken\nname: c\n"),
      library().add("broken", "initial: a\nstates:\n  a:\n    action: x\n    nxt: a\n").resolver);
  REQUIRE_FALSE(bad_parent.has_value());
  CHECK(bad_parent.error().message.find("broken:5:5:") == 0);
}

TEST_CASE("compose flow: entries become states") {
  library lib;
  const ll::json out = compose_ok(R"(name: f
initial: a
flow: [a, "b?c:a", c]
state_defs:
  a: {action: echo a}
  c: {action: echo c, terminal: false, next: a}
)",
                                  lib);
  CHECK_FALSE(out.contains("flow"));
  CHECK_FALSE(out.contains("state_defs"));
  ll::source_map map;
  (void)compose_ok("name: f\ninitial: a\nflow:\n  - a\n  - \"b?a:b\"\nstate_defs:\n  a: {action: x}\n", lib, &map);
  CHECK(map.locate("states.b.on_yes")->line == 5);  // generated: the flow entry's position
  CHECK(map.locate("states.a.next")->line == 4);
  CHECK(map.locate("states.a.action")->line == 7);  // from state_defs
  CHECK(out["states"]["a"] == ll::json::parse(R"({"next":"b","action":"echo a"})"));
  CHECK(out["states"]["b"] == ll::json::parse(R"({"on_yes":"c","on_no":"a"})"));
  CHECK(out["states"]["c"] == ll::json::parse(R"({"terminal":false,"action":"echo c","next":"a"})"));
  const ll::json last = compose_ok("name: f\ninitial: a\nflow: [a, \"b?a:b\"]\n", lib);
  CHECK(last["states"]["b"] == ll::json::parse(R"({"on_yes":"a","on_no":"b","terminal":true})"));
}

TEST_CASE("compose flow: malformed lists and entries are errors at the entry") {
  library lib;
  CHECK(has_finding(compose_error("flow: [a, \"b?c\"]\n", lib), "flow[1]", "Malformed ternary in flow entry 'b?c'"));
  CHECK(has_finding(compose_error("flow: [\"b?:c\"]\n", lib), "flow[0]", "must be non-empty"));
  CHECK(has_finding(compose_error("flow: [\"b?c:\"]\n", lib), "flow[0]", "must be non-empty"));
  CHECK(has_finding(compose_error("flow: a\n", lib), "flow", "'flow:' must be a list, got string"));
  CHECK(has_finding(compose_error("flow: []\n", lib), "flow", "at least one state"));
  CHECK(has_finding(compose_error("flow: [a, 3]\n", lib), "flow[1]", "entry 2 must be a string"));
  CHECK(has_finding(compose_error("flow: [a, a]\n", lib), "flow[1]", "twice"));
  CHECK(has_finding(compose_error("flow: [a]\nstate_defs: {zz: {}}\n", lib), "state_defs.zz",
                    "names no 'flow:' entry"));
  CHECK(has_finding(compose_error("state_defs: {a: {}}\n", lib), "state_defs", "needs a 'flow:'"));
  ll::source_map map;
  CHECK(has_finding(compose_error("flow: [a]\nstates: {a: {}}\n", lib, &map), "flow", "mutually exclusive"));
  CHECK(map.locate("flow")->line == 1);
}

TEST_CASE("compose flow: a child's flow replaces inherited states; state_defs may use fragments") {
  library lib;
  lib.add("base", base_loop);
  lib.add("lib.yaml", "fragments:\n  sh: {action_type: shell, evaluate: {type: exit_code}}\n");
  const ll::json out = compose_ok(
      "from: base\nimport: [lib.yaml]\ninitial: x\nflow: [x, y]\nstate_defs:\n  x: {fragment: sh, action: ls}\n",
      lib);
  CHECK(out["states"].size() == 2);
  CHECK(out["states"]["x"] == ll::json::parse(
                                  R"({"action_type":"shell","evaluate":{"type":"exit_code"},"next":"y","action":"ls"})"));
}

TEST_CASE("compose fragments: precedence of libraries, local fragments and the state") {
  library lib;
  lib.add("one.yaml", R"(fragments:
  f: {description: d, action: one, evaluate: {type: output_numeric, operator: lt, target: 3}}
  g: {action: g-one, timeout: 5}
)");
  lib.add("two.yaml", "fragments:\n  g: {action: g-two}\n");
  const ll::json out = compose_ok(R"(name: x
import: [one.yaml, two.yaml]
fragments:
  h: {action: local}
initial: s
states:
  s: {fragment: f, evaluate: {target: 9}}
  t: {fragment: g}
  u: {fragment: h}
)",
                                  lib);
  CHECK_FALSE(out.contains("import"));
  CHECK_FALSE(out.contains("fragments"));
  CHECK(out["states"]["s"] == ll::json::parse(
                                  R"({"action":"one","evaluate":{"type":"output_numeric","operator":"lt","target":9}})"));
  CHECK(out["states"]["t"] == ll::json::parse(R"({"action":"g-two"})"));  // the later library, whole
  CHECK(out["states"]["u"] == ll::json::parse(R"({"action":"local"})"));
  const ll::json local = compose_ok(
      "import: [one.yaml]\nfragments:\n  g: {action: mine}\nstates:\n  s: {fragment: g}\n", lib);
  CHECK(local["states"]["s"] == ll::json::parse(R"({"action":"mine"})"));
}

TEST_CASE("compose fragments: bad names, libraries and nesting are errors") {
  library lib;
  lib.add("one.yaml", "fragments:\n  b: {action: x}\n  a: {action: y}\n");
  lib.add("list.yaml", "- 1\n");
  lib.add("odd.yaml", "fragments: {}\nstates: {}\n");
  lib.add("nest.yaml", "fragments:\n  n: {fragment: b}\n");
  CHECK(has_finding(compose_error("import: [one.yaml]\nstates:\n  s: {fragment: zz}\n", lib),
                    "states.s.fragment", "State 's': fragment 'zz' not found. Available fragments: a, b"));
  CHECK(has_finding(compose_error("states:\n  s: {fragment: zz}\n", lib), "states.s.fragment",
                    "Available fragments: (none)"));
  const ll::error missing = compose_error("import: [none.yaml]\n", lib);
  CHECK(missing.code == ll::errc::reference_not_found);
  CHECK(has_finding(missing, "import[0]", "Fragment library not found: none.yaml"));
  CHECK(has_finding(compose_error("import: [list.yaml]\n", lib), "import[0]", "is not a mapping"));
  CHECK(has_finding(compose_error("import: [odd.yaml]\n", lib), "states", "unknown key"));
  CHECK(has_finding(compose_error("import: [nest.yaml]\n", lib), "fragments.n.fragment", "do not nest"));
  CHECK(has_finding(compose_error("import: one.yaml\n", lib), "import", "must be a list"));
  CHECK(has_finding(
      compose_error("import: [one.yaml]\nstates:\n  s: {fragment: b, loop: c, with: {k: 1}}\n", lib),
      "states.s.with", "cannot bind 'with:'"));
}

TEST_CASE("compose fragments: positions of fragment fields name the library") {
  library lib;
  lib.add("lib/common.yaml", "fragments:\n  f:\n    action: x\n    evaluate: {type: nope}\n");
  ll::source_map map;
  ll::diagnostics warnings;
  auto loop = ll::load_composed_loop(
      source("name: x\nimport: [lib/common.yaml]\ninitial: s\nstates:\n  s: {fragment: f, terminal: true}\n"),
      lib.resolver, &warnings, &map);
  REQUIRE_FALSE(loop.has_value());
  CHECK(map.locate("states.s.evaluate.type")->file == "lib/common.yaml");
  CHECK(loop.error().message.find("lib/common.yaml:4:16:") == 0);
  CHECK(map.locate("states.s.terminal")->file == "top.yaml");
}

TEST_CASE("compose parameters: declarations are checked") {
  library lib;
  const auto bad = [&](std::string_view spec, std::string_view path, std::string_view part) {
    CHECK(has_finding(compose_error(std::string("parameters:\n  p: ") + std::string(spec) + "\n", lib),
                      path, part));
  };
  bad("{type: text}", "parameters.p.type", "Unknown parameter type \"text\"");
  bad("{type: enum}", "parameters.p", "requires a 'values' list");
  bad("{type: string, required: true, default: a}", "parameters.p", "cannot be both");
  bad("{required: true}", "parameters.p", "needs a 'type'");
  bad("{type: string, help: x}", "parameters.p.help", "unknown key");
  auto ok = ll::compose_loop(source("parameters:\n  p: {type: enum, values: [a, b], default: a}\n"), lib.resolver);
  REQUIRE(ok.has_value());
  CHECK(ok->parameters["p"]["values"].size() == 2);
  CHECK_FALSE(ok->document.contains("parameters"));
}

TEST_CASE("compose parameters: with bindings fill ${param.*} at load") {
  library lib;
  lib.add("lib.yaml", R"(fragments:
  counter:
    parameters:
      key: {type: string, required: true}
      max: {type: integer, default: 3}
      run_dir: {type: path, required: true}
    action: 'f=${param.key} dir=${param.run_dir} $${literal}'
    evaluate: {type: output_numeric, operator: lt, target: "${param.max}"}
  free:
    with: {note: fragment-default}
    action: 'echo ${param.note} ${param.when} ${param.obj.k}'
)");
  const ll::json out = compose_ok(R"(import: [lib.yaml]
states:
  a: {fragment: counter, with: {key: "${context.k}"}}
  b: {fragment: counter, with: {key: fixed, max: 7}}
  c: {fragment: free, with: {note: hi, when: "${captured.t.output}", obj: {k: 1}}}
  d: {fragment: free, with: {when: now, obj: {k: [5]}}}
)",
                                  lib);
  CHECK(out["states"]["a"]["action"] == "f=${context.k} dir=${context.run_dir} $${literal}");
  CHECK(out["states"]["a"]["evaluate"]["target"] == "3");
  CHECK_FALSE(out["states"]["a"].contains("with"));
  CHECK_FALSE(out["states"]["a"].contains("parameters"));
  CHECK(out["states"]["b"]["evaluate"]["target"] == "7");
  CHECK(out["states"]["b"]["action"].get<std::string>().starts_with("f=fixed "));
  CHECK(out["states"]["c"]["action"] == "echo hi ${captured.t.output} 1");
  CHECK(out["states"]["d"]["action"] == "echo fragment-default now [5]");  // the fragment's with: is a default
}

TEST_CASE("compose parameters: bindings are checked against the fragment's declarations") {
  library lib;
  lib.add("lib.yaml", R"(fragments:
  f:
    parameters:
      n: {type: integer, required: true}
      run_dir: {type: path, required: true}
    action: 'echo ${param.n}'
  plain: {action: 'echo ${param.x}'}
)");
  const auto err = [&](std::string_view state) {
    return compose_error(std::string("import: [lib.yaml]\nstates:\n  s: ") + std::string(state) + "\n", lib);
  };
  CHECK(has_finding(err("{fragment: f, with: {n: 1, m: 2}}"), "states.s.with.m",
                    "'with.m' is not a declared parameter of fragment 'f'. Declared: n, run_dir"));
  CHECK(has_finding(err("{fragment: f}"), "states.s.with", "Required parameter 'n' of fragment 'f'"));
  CHECK(has_finding(err("{fragment: f, with: {n: true}}"), "states.s.with.n",
                    "Parameter 'n': expected integer, got boolean"));
  CHECK(has_finding(err("{fragment: plain}"), "states.s.action", "parameter 'x' is neither bound"));
  CHECK(has_finding(err("{action: 'echo ${param.y}'}"), "states.s.action", "parameter 'y'"));
  // a templated binding is not type-checked; run_dir is the host's when unbound
  auto ok = ll::compose_loop(source("import: [lib.yaml]\nstates:\n  s: {fragment: f, with: {n: '${context.n}'}}\n"),
                             lib.resolver);
  CHECK(ok.has_value());
}

TEST_CASE("compose parameters: paths and suffixes fold onto a one-reference binding") {
  const ll::json values = ll::json::parse(R"({"a":"${context.x}","b":"text ${context.y}","n":3,"s":"lit"})");
  CHECK(ll::detail::fold_parameters("${param.a.k:shell}", values).value() == "${context.x.k:shell}");
  CHECK(ll::detail::fold_parameters("${param.b}!", values).value() == "text ${context.y}!");
  CHECK(ll::detail::fold_parameters("n=${param.n} ${context.z}", values).value() == "n=3 ${context.z}");
  CHECK_FALSE(ll::detail::fold_parameters("${param.b.k}", values).has_value());
  CHECK_FALSE(ll::detail::fold_parameters("${param.s:shell}", values).has_value());
  CHECK(ll::detail::fold_parameters("${param.loop_name}", values).value() == "${loop.name}");
  CHECK(ll::detail::literal_template_text(ll::json("a${b}")) == "a$${b}");
}

TEST_CASE("file_resolver: the referrer's directory, then .loops/, then the host path") {
  const fs::path root = fs::temp_directory_path() / ("ll_compose_" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const char* dir : {"proj/sub", "proj/.loops/lib", "host/lib"}) fs::create_directories(root / dir);
  const auto write = [&](const char* file, const char* text) { std::ofstream(root / file) << text; };
  write("proj/sub/top.yaml", "from: parent\n");
  write("proj/sub/parent.yaml", "name: near\n");
  write("proj/.loops/parent.yaml", "name: project\n");
  write("proj/.loops/other.fsm.yaml", "name: compiled\n");
  write("proj/.loops/other.yaml", "name: spec\n");
  write("host/lib/common.yaml", "fragments: {}\n");
  write("host/far.json", "{\"name\": \"far\"}");
  ll::file_resolver resolver({root / "host"}, root / "proj/.loops");
  const std::string referrer = (root / "proj/sub/top.yaml").string();
  CHECK(resolver.resolve(ll::reference_kind::parent, "parent", referrer)->document["name"] == "near");
  CHECK(resolver.resolve(ll::reference_kind::parent, "parent", "")->document["name"] == "project");
  CHECK(resolver.resolve(ll::reference_kind::parent, "other", referrer)->document["name"] == "compiled");
  CHECK(resolver.resolve(ll::reference_kind::parent, "far", referrer)->document["name"] == "far");
  CHECK(resolver.resolve(ll::reference_kind::library, "lib/common.yaml", referrer).has_value());
  CHECK_FALSE(resolver.resolve(ll::reference_kind::library, "lib/common", referrer).has_value());
  const auto missing = resolver.resolve(ll::reference_kind::parent, "nope", referrer);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ll::errc::reference_not_found);
  CHECK(missing.error().message.find((root / "host").string()) != std::string::npos);
  auto loop = ll::read_loop_source(root / "proj/sub/top.yaml");
  REQUIRE(loop.has_value());
  auto composed = ll::compose_loop(std::move(*loop), resolver);
  REQUIRE(composed.has_value());
  CHECK(composed->document["name"] == "near");
  CHECK(composed->sources.size() == 1);
  CHECK(ll::split_search_path(":a::b:").size() == 2);
  fs::remove_all(root);
}

TEST_CASE("compose: a sub-loop name without a template must resolve at load") {
  library lib;
  lib.add("child", "name: child\ninitial: s\nstates:\n  s: {terminal: true}\n");
  lib.add("lib.yaml", "fragments:\n  run: {loop: nowhere}\n");
  ll::source_map map;
  const ll::error missing = compose_error("name: p\nstates:\n  a: {loop: ghost}\n  b: {loop: child}\n", lib, &map);
  CHECK(missing.code == ll::errc::composition_failed);
  CHECK(has_finding(missing, "states.a.loop", "Loop reference 'ghost' does not resolve to any file"));
  CHECK(missing.details.size() == 1);
  CHECK(map.locate("states.a.loop")->line == 3);
  CHECK(compose_ok("states:\n  a: {loop: '${context.which}'}\n  b: {loop: child}\n", lib)["states"]["a"]["loop"] ==
        "${context.which}");
  // a name that came from a fragment is checked too
  CHECK(has_finding(compose_error("import: [lib.yaml]\nstates:\n  a: {fragment: run}\n", lib),
                    "states.a.loop", "'nowhere'"));
}

TEST_CASE("compose: an invalid static child is a warning naming its file; the parent loads") {
  library lib;
  lib.add("bad.yaml", "name: bad\ninitial: s\nstates:\n  s:\n    action: echo\n    on_yes: nowhere\n"
                      "    on_no: s\n  d: {terminal: true}\n");
  lib.add("mid.yaml", "name: mid\ninitial: s\nstates:\n  s: {loop: bad.yaml, on_yes: d, on_no: d}\n"
                      "  d: {terminal: true}\n");
  auto out = ll::compose_loop(source("name: p\ninitial: a\nstates:\n  a: {loop: mid.yaml, on_yes: d, on_no: d}\n"
                                     "  b: {loop: bad.yaml, on_yes: d, on_no: d}\n  d: {terminal: true}\n"),
                              lib.resolver);
  REQUIRE(out.has_value());
  REQUIRE(out->warnings.size() == 2);
  for (const auto& w : out->warnings) {
    CHECK(w.level == ll::severity::warning);
    CHECK(w.code == "invalid-child");
  }
  // the child's own finding, with its file, line and column
  const auto& direct = out->warnings[0].path == "states.b.loop" ? out->warnings[0] : out->warnings[1];
  const auto& nested = out->warnings[0].path == "states.b.loop" ? out->warnings[1] : out->warnings[0];
  CHECK(direct.path == "states.b.loop");
  INFO(direct.message);
  CHECK(direct.message.find("child loop 'bad.yaml' is invalid: bad.yaml:6:5") != std::string::npos);
  CHECK(direct.message.find("takes its error route") != std::string::npos);
  // a grandchild that cannot run is named through the child that runs it
  CHECK(nested.path == "states.a.loop");
  INFO(nested.message);
  CHECK(nested.message.find("child loop 'mid.yaml' runs one that cannot run: child loop 'bad.yaml' is invalid") !=
        std::string::npos);
}

TEST_CASE("compose: a static cycle of sub-loops ends the check") {
  library lib;
  lib.add("a.yaml", "name: a\ninitial: s\nstates:\n  s: {loop: b.yaml, on_yes: d, on_no: d}\n"
                    "  d: {terminal: true}\n");
  lib.add("b.yaml", "name: b\ninitial: s\nstates:\n  s: {loop: a.yaml, on_yes: d, on_no: d}\n"
                    "  d: {terminal: true}\n");
  ll::loop_source top = source("name: a\ninitial: s\nstates:\n  s: {loop: b.yaml, on_yes: d, on_no: d}\n"
                               "  d: {terminal: true}\n", "a.yaml");
  auto out = ll::compose_loop(std::move(top), lib.resolver);
  CHECK(out.has_value());
}

TEST_CASE("compose: with: is checked against the child's parameters") {
  library lib;
  lib.add("child.yaml", "name: child\ninitial: s\nparameters:\n  issue: {type: string, required: true}\n"
                        "  depth: {type: integer, default: 1}\nstates:\n  s: {terminal: true}\n");
  const ll::error e = compose_error(
      "name: p\ninitial: a\nstates:\n  a:\n    loop: child.yaml\n    with: {depth: 'x', extra: 1}\n"
      "    on_yes: d\n    on_no: d\n  d: {terminal: true}\n", lib);
  CHECK(has_finding(e, "states.a.with.extra", "'with.extra' is not a declared parameter of loop 'child.yaml'. Declared: depth, issue"));
  CHECK(has_finding(e, "states.a.with", "Required parameter 'issue' of loop 'child.yaml' is not bound in 'with'"));
  CHECK(has_finding(e, "states.a.with.depth", "Parameter 'depth': expected integer"));
  // a template is known only at run time; no with: means no check (as the reference)
  compose_ok("name: p\ninitial: a\nstates:\n  a:\n    loop: child.yaml\n"
             "    with: {issue: x, depth: '${context.d}'}\n    on_yes: d\n  d: {terminal: true}\n", lib);
  compose_ok("name: p\ninitial: a\nstates:\n  a: {loop: child.yaml, on_yes: d}\n  d: {terminal: true}\n", lib);
}
