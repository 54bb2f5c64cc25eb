// little_loops — tests: template compilation and rendering
// SPDX-License-Identifier: MIT
#include <little_loops/interpolation.hpp>

#include <doctest/doctest.h>

#include <map>
#include <string>

namespace ll = little_loops;

namespace {

std::string render_ok(std::string_view text, const ll::interpolation_context& ctx) {
  auto r = ll::interpolate(text, ctx);
  REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.error().message));
  return *r;
}

ll::error render_err(std::string_view text, const ll::interpolation_context& ctx) {
  auto r = ll::interpolate(text, ctx);
  REQUIRE_FALSE(r.has_value());
  return r.error();
}

std::optional<std::string> fake_env(std::string_view name, void* user) {
  auto* vars = static_cast<std::map<std::string, std::string>*>(user);
  auto it = vars->find(std::string(name));
  if (it == vars->end()) return std::nullopt;
  return it->second;
}

struct fixture {
  ll::json context = ll::json::parse(R"({
    "name": "world", "n": 3, "pi": 3.5, "whole": 3.0, "big": 1e16, "small": 0.00001,
    "yes": true, "no": false, "nothing": null,
    "items": [{"name": "a"}, {"name": "b"}],
    "obj": {"k": [1, 2], "s": "x"},
    "quote": "it's"
  })");
  ll::captured_map captured;
  ll::prev_record prev;
  ll::evaluation_result result;
  std::map<std::string, std::string> env{{"HOME_DIR", "/home/u"}};
  ll::interpolation_context ctx;

  fixture() {
    ll::captured_record c;
    c.output = "out text";
    c.stderr_output = "err text";
    c.exit_code = 2;
    c.duration_ms = 15;
    c.verdict = "failure";
    captured["lint"] = c;
    prev.state = "check";
    prev.output = "5 failures";
    prev.exit_code = 1;
    prev.verdict = "failure";
    prev.details = {{"exit_code", 1}};
    result.verdict = "success";
    result.details = {{"value", 3.0}, {"nested", {{"x", 1}}}};
    ctx.context = &context;
    ctx.captured = &captured;
    ctx.prev = &prev;
    ctx.result = &result;
    ctx.state_name = "fix";
    ctx.iteration = 4;
    ctx.loop_name = "demo";
    ctx.started_at = "2026-01-01T00:00:00Z";
    ctx.elapsed_ms = 135000;
    ctx.max_iterations = 20;
    ctx.env = &fake_env;
    ctx.env_user = &env;
  }
};

}  // namespace

TEST_SUITE("interpolation") {
  TEST_CASE("namespaces") {
    fixture f;
    CHECK(render_ok("hello ${context.name}", f.ctx) == "hello world");
    CHECK(render_ok("${state.name}#${state.iteration}", f.ctx) == "fix#4");
    CHECK(render_ok("${loop.name} ${loop.started_at} ${loop.elapsed_ms} ${loop.elapsed}",
                    f.ctx) == "demo 2026-01-01T00:00:00Z 135000 2m 15s");
    // Seed 004 §7: the director sees the iteration and its maximum.
    CHECK(render_ok("attempt ${state.iteration} of ${loop.max_iterations}", f.ctx) ==
          "attempt 4 of 20");
    CHECK(render_ok("${captured.lint.output}|${captured.lint.stderr}|${captured.lint.exit_code}"
                    "|${captured.lint.duration_ms}|${captured.lint.verdict}",
                    f.ctx) == "out text|err text|2|15|failure");
    CHECK(render_ok("${prev.state} ${prev.output} ${prev.exit_code} ${prev.verdict}", f.ctx) ==
          "check 5 failures 1 failure");
    CHECK(render_ok("${prev.details.exit_code}", f.ctx) == "1");
    CHECK(render_ok("${prev.details}", f.ctx) == R"({"exit_code":1})");
    CHECK(render_ok("${result.verdict} ${result.details.value} ${result.details.nested.x}",
                    f.ctx) == "success 3.0 1");
    CHECK(render_ok("${env.HOME_DIR}", f.ctx) == "/home/u");
    CHECK(render_ok("${prev.evaluation.success}", f.ctx) == "false");
    CHECK(render_ok("${prev.evaluation.scriptOutput.exitCode}", f.ctx) == "1");
  }

  TEST_CASE("a context key is found among keys that differ from it in one byte") {
    // Keys of every length up to past the word-compare cut-off, each beside twins that
    // differ in its first, middle or last byte: only the key itself matches.
    for (std::size_t n = 1; n <= 20; ++n) {
      const std::string key(n, 'k');
      ll::json context = ll::json::object();
      for (const std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
        std::string twin = key;
        twin[at] = 'q';
        context[twin] = "twin";
      }
      context[key + "k"] = "longer";
      context[key] = "key";
      ll::interpolation_context ctx;
      ctx.context = &context;
      CHECK_MESSAGE(render_ok("${context." + key + "}", ctx) == "key", n);
      const std::string missing(n, 'm');
      CHECK(render_err("${context." + missing + "}", ctx).code == ll::errc::missing_variable);
    }
  }

  TEST_CASE("captured record as a whole renders as JSON") {
    fixture f;
    CHECK(render_ok("${captured.lint}", f.ctx) ==
          R"({"output":"out text","stderr":"err text","exit_code":2,"duration_ms":15,"verdict":"failure"})");
  }

  TEST_CASE("loop.elapsed formats like the original") {
    fixture f;
    auto elapsed = [&](std::int64_t ms) {
      f.ctx.elapsed_ms = ms;
      return render_ok("${loop.elapsed}", f.ctx);
    };
    CHECK(elapsed(0) == "0ms");
    CHECK(elapsed(500) == "500ms");
    CHECK(elapsed(999) == "999ms");
    CHECK(elapsed(1000) == "1s");
    CHECK(elapsed(30500) == "30s");
    CHECK(elapsed(120000) == "2m");
    CHECK(elapsed(135000) == "2m 15s");
    CHECK(elapsed(3725000) == "62m 5s");  // no hours unit, as in the original
  }

  TEST_CASE("value formatting") {
    fixture f;
    CHECK(render_ok("${context.n}", f.ctx) == "3");
    CHECK(render_ok("${context.pi}", f.ctx) == "3.5");
    CHECK(render_ok("${context.whole}", f.ctx) == "3.0");
    CHECK(render_ok("${context.big}", f.ctx) == "1e+16");
    CHECK(render_ok("${context.small}", f.ctx) == "1e-05");
    CHECK(render_ok("${context.yes}/${context.no}", f.ctx) == "true/false");
    CHECK(render_ok("[${context.nothing}]", f.ctx) == "[]");
    CHECK(render_ok("${context.obj}", f.ctx) == R"({"k":[1,2],"s":"x"})");
    CHECK(render_ok("${context.obj.k}", f.ctx) == "[1,2]");
  }

  TEST_CASE("python float repr") {
    using ll::detail::py_float_string;
    CHECK(py_float_string(0.0) == "0.0");
    CHECK(py_float_string(-0.0) == "-0.0");
    CHECK(py_float_string(1.0) == "1.0");
    CHECK(py_float_string(0.1) == "0.1");
    CHECK(py_float_string(1e15) == "1000000000000000.0");
    CHECK(py_float_string(1e16) == "1e+16");
    CHECK(py_float_string(1.5e16) == "1.5e+16");
    CHECK(py_float_string(0.0001) == "0.0001");
    CHECK(py_float_string(0.00015) == "0.00015");
    CHECK(py_float_string(1.5e-7) == "1.5e-07");
    CHECK(py_float_string(1e100) == "1e+100");
    CHECK(py_float_string(123456.789) == "123456.789");
    CHECK(py_float_string(-2.5) == "-2.5");
  }

  TEST_CASE("array indices in paths") {
    fixture f;
    CHECK(render_ok("${context.items.0.name}", f.ctx) == "a");
    CHECK(render_ok("${context.items[1].name}", f.ctx) == "b");
    CHECK(render_ok("${context.obj.k.1}", f.ctx) == "2");
    auto e = render_err("${context.items.5.name}", f.ctx);
    CHECK(e.code == ll::errc::missing_variable);
    CHECK(e.message.find("indices 0..1") != std::string::npos);
  }

  TEST_CASE("escapes") {
    fixture f;
    CHECK(render_ok("$${context.name}", f.ctx) == "${context.name}");
    CHECK(render_ok("echo $${HOME:-x}", f.ctx) == "echo ${HOME:-x}");
    CHECK(render_ok("$$${context.name}", f.ctx) == "$${context.name}");
    CHECK(render_ok("cost: $5 and $$ and $", f.ctx) == "cost: $5 and $$ and $");
    CHECK(render_ok("${context.name}$${x}${context.n}", f.ctx) == "world${x}3");
    auto t = ll::compile_template("a $${b} c");
    REQUIRE(t);
    CHECK(t->is_literal());
    CHECK(t->literal() == "a ${b} c");
    CHECK(t->source() == "a $${b} c");
  }

  TEST_CASE("malformed templates") {
    for (const char* bad : {"echo ${context.x", "${", "a ${}", "${nonamespace}",
                            "${foo.bar}", "${state.nope}", "${loop.nope}", "${context.}",
                            "${context.a..b}", "${context.x?:default=1}",
                            // only a "." after the namespace: no segment at all (the fuzzer's
                            // first find: rendering it read past an empty path)
                            "${prev..}", "${context..}", "${result..?}", "${captured..:default=x}",
                            // an empty first segment: not the same as ${context.a}
                            "${context..a}", "${prev..output}", "${captured..x.output?}"}) {
      CAPTURE(bad);
      auto t = ll::compile_template(bad);
      REQUIRE_FALSE(t.has_value());
      CHECK(t.error().code == ll::errc::template_syntax);
      CHECK(t.error().message.find(bad) != std::string::npos);
    }
    auto t = ll::compile_template("${foo.bar}");
    CHECK(t.error().message.find("Unknown namespace: foo in ${foo.bar} (known: context,") !=
          std::string::npos);
    // The original's words, then the hint.
    CHECK(ll::compile_template("${varname}").error().message.find(
              ": Invalid variable: ${varname} (expected namespace.path); write $${varname}") !=
          std::string::npos);
  }

  TEST_CASE("bash operators are rejected with a $${ hint") {
    for (const char* bad : {"${context.x:-fallback}", "${context.x:+set}", "${context.x##*/}",
                            "${context.x%%.*}", "${context.arr[@]}"}) {
      CAPTURE(bad);
      auto t = ll::compile_template(bad);
      REQUIRE_FALSE(t.has_value());
      CHECK(t.error().message.find("$${") != std::string::npos);
      CHECK(t.error().message.find("bash operator") != std::string::npos);
    }
    auto t = ll::compile_template("${HOME}");
    REQUIRE_FALSE(t.has_value());
    CHECK(t.error().message.find("$${HOME}") != std::string::npos);
  }

  TEST_CASE("missing values name template, variable and available keys") {
    fixture f;
    auto e = render_err("echo ${context.nme}", f.ctx);
    CHECK(e.code == ll::errc::missing_variable);
    CHECK(e.message.find("${context.nme}") != std::string::npos);
    CHECK(e.message.find("echo ${context.nme}") != std::string::npos);
    CHECK(e.message.find("available: name, n, pi") != std::string::npos);
    auto e2 = render_err("${captured.nope.output}", f.ctx);
    CHECK(e2.message.find("available: lint") != std::string::npos);
    auto e3 = render_err("${captured.lint.nope}", f.ctx);
    CHECK(e3.message.find("output, stderr, exit_code") != std::string::npos);
    auto e4 = render_err("${prev.output.deeper}", f.ctx);
    CHECK(e4.code == ll::errc::missing_variable);
    auto e5 = render_err("${env.NOPE_NOT_SET}", f.ctx);
    CHECK(e5.message.find("NOPE_NOT_SET") != std::string::npos);
    ll::interpolation_context empty;
    CHECK(render_err("${prev.output}", empty).message.find("No previous state result available") !=
          std::string::npos);
    CHECK(render_err("${result.verdict}", empty).message.find("No evaluation result available") !=
          std::string::npos);
  }

  TEST_CASE("suffixes: ?, :default=, :shell") {
    fixture f;
    CHECK(render_ok("[${context.missing?}]", f.ctx) == "[]");
    CHECK(render_ok("[${context.name?}]", f.ctx) == "[world]");
    CHECK(render_ok("${context.missing:default=fallback value}", f.ctx) == "fallback value");
    CHECK(render_ok("${context.name:default=x}", f.ctx) == "world");
    CHECK(render_ok("${context.missing:default=}", f.ctx).empty());
    CHECK(render_ok("${context.missing:default=a?b:-c}", f.ctx) == "a?b:-c");
    CHECK(render_ok("${context.nothing:default=x}", f.ctx).empty());  // present null → ""
    CHECK(render_ok("echo ${context.quote:shell}", f.ctx) == R"(echo 'it'"'"'s')");
    CHECK(render_ok("echo ${context.name:shell}", f.ctx) == "echo world");
    CHECK(render_ok("${context.missing?:shell}", f.ctx) == "''");
    CHECK(render_ok("${context.missing:shell?}", f.ctx) == "''");
    CHECK(render_ok("${context.missing:shell:default=it's}", f.ctx) == R"('it'"'"'s')");
    CHECK(render_ok("${prev.output:shell}", f.ctx) == "'5 failures'");
    ll::interpolation_context empty;
    CHECK(render_ok("[${prev.output?}]", empty) == "[]");
    CHECK(render_ok("${env.NOT_SET_ANYWHERE_42:default=d}", empty) == "d");
    CHECK(render_ok("${state.iteration}", empty) == "1");  // the original's default: 1-based
  }

  TEST_CASE(":shell quotes exactly like Python's shlex.quote") {
    // Expected values are python3 -c "import shlex; print(shlex.quote(v))".
    ll::json context = ll::json::object();
    ll::interpolation_context ctx;
    ctx.context = &context;
    auto quoted = [&](ll::json v) {
      context["v"] = std::move(v);
      return render_ok("${context.v:shell}", ctx);
    };
    CHECK(quoted("") == "''");
    CHECK(quoted(nullptr) == "''");
    CHECK(quoted("world") == "world");
    CHECK(quoted("abc-1.2/x") == "abc-1.2/x");
    CHECK(quoted("abc-1.2/x:y=z@%+,") == "abc-1.2/x:y=z@%+,");
    CHECK(quoted("A_b") == "A_b");
    CHECK(quoted("-n") == "-n");
    CHECK(quoted(3) == "3");
    CHECK(quoted(3.5) == "3.5");
    CHECK(quoted(true) == "true");
    CHECK(quoted("it's") == R"('it'"'"'s')");
    CHECK(quoted("''") == R"(''"'"''"'"'')");
    CHECK(quoted("\xC3\xA9") == "'\xC3\xA9'");  // é: shlex's safe set is ASCII-only
    CHECK(quoted("h\xC3\xA9llo") == "'h\xC3\xA9llo'");
    CHECK(quoted("a\nb") == "'a\nb'");
    CHECK(quoted("a\tb") == "'a\tb'");
    CHECK(quoted("a b") == "'a b'");
    CHECK(quoted("$HOME") == "'$HOME'");
    CHECK(quoted("`id`") == "'`id`'");
    CHECK(quoted("x;rm -rf /") == "'x;rm -rf /'");
    CHECK(quoted("\"q\"") == "'\"q\"'");
    CHECK(quoted("~") == "'~'");
    CHECK(quoted("*") == "'*'");
    CHECK(quoted(ll::json::array({1, 2})) == "'[1,2]'");
    // In place after earlier output, several in one template.
    context["q"] = "it's";
    context["w"] = "world";
    CHECK(render_ok("a ${context.w:shell}x${context.q:shell} ${context.q:shell}", ctx) ==
          R"(a worldx'it'"'"'s' 'it'"'"'s')");
  }

  TEST_CASE(":shell after a default value is a suffix, as in the original") {
    fixture f;
    CHECK(render_ok("${context.missing:default=v:shell}", f.ctx) == "v");
    CHECK(render_ok("${context.missing:default=y?:shell}", f.ctx) == "'y?'");
    CHECK(render_ok("${context.missing:default=it's:shell}", f.ctx) == R"('it'"'"'s')");
    CHECK(render_ok("${context.missing:default=:shell}", f.ctx) == "''");
    CHECK(render_ok("${context.quote:default=v:shell}", f.ctx) == R"('it'"'"'s')");
    CHECK(render_ok("${context.name:default=v:shell}", f.ctx) == "world");
    // `:shell` inside the default text (not at the end) stays literal.
    CHECK(render_ok("${context.missing:default=a:shell b}", f.ctx) == "a:shell b");
    // The other positions keep working.
    CHECK(render_ok("${context.missing:shell:default=y?}", f.ctx) == "'y?'");
    CHECK(render_ok("${context.missing?:shell}", f.ctx) == "''");
    CHECK(render_ok("${context.name:shell?}", f.ctx) == "world");
    std::vector<ll::detail::template_part> parts;
    REQUIRE(ll::detail::parse_template("${context.missing:default=v:shell}", parts));
    CHECK(parts[0].shell);
    CHECK(parts[0].default_value == std::optional<std::string>("v"));
    for (const char* bad : {"${context.x?:shell:default=f}", "${context.x:shell?:default=f}"}) {
      CAPTURE(bad);
      auto b = ll::compile_template(bad);
      REQUIRE_FALSE(b.has_value());
      CHECK(b.error().message.find("Ambiguous suffix: ") != std::string::npos);
      CHECK(b.error().message.find("mutually exclusive") != std::string::npos);
    }
  }

  TEST_CASE("unknown state./loop. keys resolve to their fallback") {
    fixture f;
    CHECK(render_ok("${state.unknown:default=dn}", f.ctx) == "dn");
    CHECK(render_ok("${loop.unknown:default=n/a}", f.ctx) == "n/a");
    CHECK(render_ok("[${state.unknown?}]", f.ctx) == "[]");
    CHECK(render_ok("[${loop.unknown?}]", f.ctx) == "[]");
    CHECK(render_ok("${state.name.x:default=d}", f.ctx) == "d");
    CHECK(render_ok("${loop.elapsed.x?}", f.ctx).empty());
    CHECK(render_ok("${state.unknown:default=a b:shell}", f.ctx) == "'a b'");
    // Known keys still resolve through a fallback.
    CHECK(render_ok("${state.iteration:default=0} ${loop.elapsed?}", f.ctx) == "4 2m 15s");
    // Without a fallback they stay load-time errors, in the original's words.
    auto s = ll::compile_template("${state.unknown}");
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == ll::errc::template_syntax);
    CHECK(s.error().message.find("Unknown state property: unknown in ${state.unknown} "
                                 "(known: name, iteration)") != std::string::npos);
    auto l = ll::compile_template("${loop.unknown:shell}");
    REQUIRE_FALSE(l.has_value());
    CHECK(l.error().message.find("Unknown loop property: unknown") != std::string::npos);
  }

  TEST_CASE("error messages use the original's wording") {
    fixture f;
    ll::json nested = ll::json::parse(R"({"a": {"b": 1}})");
    ll::interpolation_context c;
    c.context = &nested;
    auto e = render_err("${context.a.c}", c);
    CHECK(e.code == ll::errc::missing_variable);
    CHECK(e.message.find("Path 'a.c' not found in context (available: b)") != std::string::npos);
    CHECK(e.message.find("${context.a.c}") != std::string::npos);
    CHECK(render_err("${context.missing}", f.ctx)
              .message.find("Path 'missing' not found in context (available: name,") !=
          std::string::npos);
    CHECK(render_err("${captured.lint.nope}", f.ctx)
              .message.find("Path 'lint.nope' not found in captured (available: output,") !=
          std::string::npos);
    CHECK(render_err("${captured.missing.output}", f.ctx)
              .message.find("Path 'missing' not found in captured (available: lint)") !=
          std::string::npos);
    CHECK(render_err("${captured.lint.output.x.y}", f.ctx)
              .message.find("Path 'lint.output.x' not found in captured") != std::string::npos);
    CHECK(render_err("${prev.nope}", f.ctx).message.find("Path 'nope' not found in prev") !=
          std::string::npos);
    CHECK(render_err("${prev.details.nope}", f.ctx)
              .message.find("Path 'details.nope' not found in prev (available: exit_code)") !=
          std::string::npos);
    CHECK(render_err("${result.confidence}", f.ctx)
              .message.find("Path 'confidence' not found in result") != std::string::npos);
    CHECK(render_err("${result.details.nope}", f.ctx)
              .message.find("Path 'details.nope' not found in result") != std::string::npos);
    ll::interpolation_context empty;
    CHECK(render_err("${captured.missing}", empty)
              .message.find("Path 'missing' not found in captured") != std::string::npos);
    CHECK(render_err("${context.x}", empty).message.find("Path 'x' not found in context") !=
          std::string::npos);
    auto ns = ll::compile_template("${bad.x}");
    REQUIRE_FALSE(ns.has_value());
    CHECK(ns.error().message.find("Unknown namespace: bad") != std::string::npos);
    auto amb = ll::compile_template("${context.x?:default=f}");
    REQUIRE_FALSE(amb.has_value());
    CHECK(amb.error().message.find("Ambiguous suffix: ${context.x?:default=f} (:default=... "
                                   "and ? are mutually exclusive)") != std::string::npos);
  }

  TEST_CASE("$${ inside a default value renders ${") {
    fixture f;
    CHECK(render_ok("${context.missing:default=$${x}}", f.ctx) == "${x}");
    // The first `}` ends the variable, so the default is `${HOME:-x` and the `}` follows it.
    CHECK(render_ok("echo ${context.missing:default=$${HOME:-x}}", f.ctx) == "echo ${HOME:-x}");
    CHECK(render_ok("${context.missing:default=$$${x}}", f.ctx) == "$${x}");
    CHECK(render_ok("${context.missing:default=$${x:shell}}", f.ctx) == "'${x'}");
    CHECK(render_ok("${context.missing:default={x}", f.ctx) == "{x");
  }

  TEST_CASE("render_to appends and reuses the compiled form") {
    fixture f;
    auto t = ll::compile_template("n=${context.n}, s=${state.name}");
    REQUIRE(t);
    CHECK_FALSE(t->is_literal());
    CHECK(t->variable_count() == 2);
    std::string out = "> ";
    REQUIRE(ll::render_to(*t, f.ctx, out));
    CHECK(out == "> n=3, s=fix");
    f.ctx.state_name = "other";
    out.clear();
    REQUIRE(ll::render_to(*t, f.ctx, out));
    CHECK(out == "n=3, s=other");
  }

  TEST_CASE("has_template") {
    CHECK(ll::has_template("a ${b.c}"));
    CHECK_FALSE(ll::has_template("a $${b.c}"));
    CHECK_FALSE(ll::has_template("plain $ text"));
  }
}

#include <little_loops/validation.hpp>

namespace {

ll::fsm_loop loop_from(const char* text) {
  auto l = ll::parse_loop_text(text);
  REQUIRE_MESSAGE(l.has_value(), (l ? std::string() : ll::to_string(l.error())));
  return *l;
}

ll::diagnostics template_findings(const ll::fsm_loop& loop) {
  ll::diagnostics out;
  ll::validate_templates(loop, out);
  return out;
}

const ll::diagnostic* find_code(const ll::diagnostics& d, std::string_view code) {
  for (const auto& x : d)
    if (x.code == code) return &x;
  return nullptr;
}

}  // namespace

TEST_SUITE("template validation") {
  TEST_CASE("clean loop has no template findings") {
    auto loop = loop_from(R"({"name": "ok", "initial": "a", "context": {"f": "x"},
      "states": {
        "a": {"action": "echo ${context.f:shell} '${context.f}' \"${context.f}\" $${HOME}",
              "capture": "out", "next": "b"},
        "b": {"action": "cat ${captured.out.output:shell}", "evaluate": {"type":
              "output_contains", "pattern": "${context.f}"}, "on_success": "done",
              "on_failure": "a"},
        "done": {"terminal": true}}})");
    CHECK(template_findings(loop).empty());
  }

  TEST_CASE("each rule") {
    auto loop = loop_from(R"({"name": "bad", "initial": "a",
      "states": {
        "a": {"action": "rm -rf ${context.dir}", "next": "${foo.bar}"},
        "b": {"action": "echo ${HOME:-/tmp}", "on_success": "${state.nope}",
              "on_failure": "a"},
        "c": {"action": "echo ${captured.nothing.output:shell}",
              "route": {"success": "${context.x", "_": "a"}},
        "d": {"action": "/review ${context.dir}", "evaluate": {"type": "output_numeric",
              "operator": "lt", "target": "${loop.nope}"}, "next": "done"},
        "done": {"terminal": true}}})");
    auto d = template_findings(loop);
    const auto* unquoted = find_code(d, "template-unquoted-context");
    REQUIRE(unquoted);
    CHECK(unquoted->level == ll::severity::warning);
    CHECK(unquoted->path == "states.a.action");
    CHECK(unquoted->message.find("${context.dir:shell}") != std::string::npos);
    const auto* ns = find_code(d, "template-unknown-namespace");
    REQUIRE(ns);
    CHECK(ns->path == "states.a.next");
    const auto* bash = find_code(d, "template-bash-operator");
    REQUIRE(bash);
    CHECK(bash->path == "states.b.action");
    CHECK(bash->message.find("$${") != std::string::npos);
    const auto* key = find_code(d, "template-unknown-key");
    REQUIRE(key);
    CHECK(key->path == "states.b.on_success");
    const auto* cap = find_code(d, "template-unknown-capture");
    REQUIRE(cap);
    CHECK(cap->path == "states.c.action");
    CHECK(cap->level == ll::severity::warning);  // as the original: it fails only if it runs
    const auto* syn = find_code(d, "template-syntax");
    REQUIRE(syn);
    CHECK(syn->path == "states.c.route.success");
    bool target_key = false;
    int unquoted_count = 0;
    for (const auto& x : d) {
      target_key = target_key || x.path == "states.d.evaluate.target";
      unquoted_count += x.code == "template-unquoted-context";
    }
    CHECK(target_key);
    CHECK(unquoted_count == 1);  // the prompt action in d is not shell
  }

  TEST_CASE("a key prev, result or a capture never has is a warning with a hint") {
    auto loop = loop_from(R"({"name": "k", "initial": "a",
      "states": {
        "a": {"action": "echo ${prev.outptu} ${prev.details.anything} ${prev.output?}",
              "capture": "c", "on_success": "b"},
        "b": {"action": "echo ${captured.c.exitcode} ${captured.c.output}",
              "route": {"success": "${result.verdcit}"}},
        "done": {"terminal": true}}})");
    auto d = template_findings(loop);
    std::vector<std::string> keys;
    for (const auto& x : d)
      if (x.code == "template-unknown-key") {
        CHECK(x.level == ll::severity::warning);  // it fails only if the state runs
        keys.push_back(x.path + ": " + x.message);
      }
    CHECK(keys == std::vector<std::string>{
        R"(states.a.action: ${prev.outptu} reads the key "outptu", which prev never has (it has state, output, stderr, exit_code, verdict, details, evaluation) (did you mean "output"?))",
        R"(states.b.action: ${captured.c.exitcode} reads the key "exitcode", which a capture never has (it has output, stderr, exit_code, duration_ms, verdict, failure_type, timeout_kind) (did you mean "exit_code"?))",
        R"(states.b.route.success: ${result.verdcit} reads the key "verdcit", which result never has (it has verdict, details) (did you mean "verdict"?))"});
  }

  TEST_CASE("captured references with ? or :default= need no capturing state") {
    // Design §3.8: `?` and `:default=` are first-class fallbacks for a capture not made yet.
    auto loop = loop_from(R"({"name": "c", "initial": "a",
      "states": {
        "a": {"action": "echo ${captured.x.output?} ${captured.x.output:default=none}",
              "on_success": "b"},
        "b": {"action": "echo ${captured.y.output:default=none} ${captured.z.exit_code}",
              "capture": "y", "on_success": "done"},
        "done": {"terminal": true}}})");
    auto d = template_findings(loop);
    int unknown = 0;
    for (const auto& x : d)
      if (x.code == "template-unknown-capture") {
        ++unknown;
        CHECK(x.path == "states.b.action");
        CHECK(x.message.find("captured.z") != std::string::npos);
      }
    CHECK(unknown == 1);  // only the plain ${captured.z.exit_code}
  }

  TEST_CASE("an action that is one ${context.X} is a command kept in the context: no quoting warning") {
    // The convergence paradigm's `measure` runs `${context.metric_cmd}`; quoting it with
    // :shell would make the whole command one word.
    auto loop = loop_from(R"({"name": "m", "initial": "a", "context": {"cmd": "wc -l f"},
      "states": {
        "a": {"action": "${context.cmd}", "next": "b"},
        "b": {"action": "${context.cmd} | sort", "next": "done"},
        "done": {"terminal": true}}})");
    int unquoted = 0;
    for (const auto& x : template_findings(loop))
      if (x.code == "template-unquoted-context") {
        ++unquoted;
        CHECK(x.path == "states.b.action");
      }
    CHECK(unquoted == 1);
  }

  TEST_CASE("fallbacks on unknown state./loop. keys and :shell after a default are clean") {
    auto loop = loop_from(R"({"name": "f", "initial": "a",
      "states": {
        "a": {"action": "echo ${state.unknown:default=dn} ${loop.unknown?} ${context.d:default=v:shell}",
              "next": "done"},
        "done": {"terminal": true}}})");
    CHECK(template_findings(loop).empty());
    auto bad = loop_from(R"({"name": "f", "initial": "a",
      "states": {"a": {"action": "echo ${state.unknown}", "next": "done"},
                 "done": {"terminal": true}}})");
    auto d = template_findings(bad);
    const auto* key = find_code(d, "template-unknown-key");
    REQUIRE(key);
    CHECK(key->message.find("Unknown state property: unknown") != std::string::npos);
  }

  TEST_CASE("validate() runs the template rules") {
    auto loop = loop_from(R"({"name": "v", "initial": "a",
      "states": {"a": {"action": "echo ${nope.x}", "next": "done"},
                 "done": {"terminal": true}}})");
    auto d = ll::validate(loop);
    CHECK(find_code(d, "template-unknown-namespace") != nullptr);
  }
}

TEST_CASE("rendering stops at the size limit: errc::template_too_large naming the template and the limit") {
  ll::captured_map captured;
  ll::captured_record big;
  big.output = std::string(std::size_t{1} << 20, 'x');  // 1 MiB, rendered 1,000 times
  captured["big"] = big;
  ll::interpolation_context ctx;
  ctx.captured = &captured;
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "${captured.big.output} ";
  auto tpl = ll::compile_template(text);
  REQUIRE(tpl.has_value());
  ctx.size_limit = std::size_t{4} << 20;
  std::string out;
  auto r = ll::render_to(*tpl, ctx, out);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ll::errc::template_too_large);
  CHECK(r.error().message.find("renders to more than 4194304 bytes") != std::string::npos);
  CHECK(r.error().message.find("${captured.big.output} ${captured.big") != std::string::npos);
  CHECK(out.size() <= ctx.size_limit + big.output.size() + 1);  // stopped as it crossed the limit
  // At the limit exactly: rendered.
  ctx.size_limit = 3 * ((std::size_t{1} << 20) + 1);
  auto three = ll::compile_template("${captured.big.output} ${captured.big.output} ${captured.big.output} ");
  REQUIRE(three.has_value());
  auto ok = ll::render(*three, ctx);
  REQUIRE(ok.has_value());
  CHECK(ok->size() == ctx.size_limit);
  ctx.size_limit -= 1;
  CHECK(ll::render(*three, ctx).error().code == ll::errc::template_too_large);
}
