// little_loops — rendering: seed 001 preview, DOT and Mermaid goldens, labels and escaping
// SPDX-License-Identifier: MIT
#include "test_paradigms_support.hpp"

#include <little_loops/paradigms.hpp>
#include <little_loops/render.hpp>

using namespace little_loops;
using paradigm_test::spec;

namespace {

fsm_loop compiled_fixture(const std::string& name) {
  const std::string text = paradigm_test::read_text(paradigm_test::fixture_path("specs/" + name + ".json"));
  REQUIRE_FALSE(text.empty());
  auto loop = compile_paradigm_text(text);
  INFO((loop ? std::string() : paradigm_test::messages(loop.error())));
  REQUIRE(loop.has_value());
  return *loop;
}

fsm_loop hostile_loop() {
  auto loop = parse_loop_text(paradigm_test::read_text(paradigm_test::fixture_path("specs/hostile.json")));
  INFO((loop ? std::string() : paradigm_test::messages(loop.error())));
  REQUIRE(loop.has_value());
  return *loop;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("seed 001 phase 7: the goal preview with an output_contains evaluator") {
  const auto loop = compiled_fixture("goal");
  CHECK(render_preview(loop) ==
        "States: evaluate \u2192 fix \u2192 done \u2192 failed\n"
        "Transitions:\n"
        "  evaluate: success\u2192done, failure\u2192fix, error\u2192failed\n"
        "  fix: next\u2192evaluate\n"
        "  done: [terminal]\n"
        "  failed: [terminal, failure]\n"
        "Initial: evaluate\n"
        "Max iterations: 10\n"
        "Evaluator: output_contains [pattern: \"0 errors\"]\n");
}

TEST_CASE("seed 001 phase 7: evaluator lines per type") {
  auto loop = *compile_goal(spec(R"({"goal": "g", "tools": ["pytest"], "max_iterations": 10})"));
  CHECK(render_preview(loop).find("\nEvaluator: exit_code (default)\n") != std::string::npos);
  loop = *compile_imperative(spec(R"({"name": "t", "steps": ["a", "b", "c"], "max_iterations": 20,
      "until": {"check": "v", "evaluator": {"type": "output_numeric", "operator": "eq", "target": 0}}})"));
  CHECK(render_preview(loop) ==
        "States: step_0 \u2192 step_1 \u2192 step_2 \u2192 check_done \u2192 done\n"
        "Transitions:\n"
        "  step_0: next\u2192step_1\n"
        "  step_1: next\u2192step_2\n"
        "  step_2: next\u2192check_done\n"
        "  check_done: success\u2192done, failure\u2192step_0\n"
        "  done: [terminal]\n"
        "Initial: step_0\n"
        "Max iterations: 20\n"
        "Evaluator: output_numeric [operator: eq, target: 0]\n");
  loop = compiled_fixture("convergence");
  CHECK(render_preview(loop).find("  measure: target\u2192done, progress\u2192apply, stall\u2192stalled\n") !=
        std::string::npos);
  CHECK(render_preview(loop).find("\nEvaluator: convergence [toward: 0, tolerance: 0]\n") != std::string::npos);
  loop = compiled_fixture("invariants");
  const auto preview = render_preview(loop);
  CHECK(preview.find("  all_valid: [terminal], maintain\u2192check_tests\n") != std::string::npos);
  CHECK(preview.find("Evaluators:\n"
                     "  check_tests: exit_code (default)\n"
                     "  check_types: output_contains [pattern: \"Success\"]\n"
                     "  check_lint: exit_code (default)\n") != std::string::npos);
  loop = *compile_goal(spec(R"({"goal": "g", "tools": ["c"], "evaluator": {"type": "output_json",
      "path": ".a", "operator": "ge", "target": 3, "source": "${prev.output}"}})"));
  CHECK(render_preview(loop).find("Evaluator: output_json [path: .a, operator: ge, target: 3, source: ${prev.output}]\n") !=
        std::string::npos);
  loop = *compile_goal(spec(R"({"goal": "g", "tools": ["c"], "evaluator": {"type": "output_contains",
      "pattern": "say \"hi\"", "negate": true}})"));
  CHECK(render_preview(loop).find(R"(Evaluator: output_contains [pattern: "say \"hi\"", negate: true])") !=
        std::string::npos);
  loop = *compile_goal(spec(R"({"goal": "g", "tools": ["c"], "evaluator": {"type": "llm_structured",
      "min_confidence": 0.7, "uncertain_suffix": true}})"));
  CHECK(render_preview(loop).find("Evaluator: llm_structured [min_confidence: 0.7, uncertain_suffix: true]\n") !=
        std::string::npos);
}

TEST_CASE("golden preview, DOT and Mermaid of one loop per paradigm") {
  for (const std::string name : {"goal", "convergence", "invariants", "imperative"}) {
    CAPTURE(name);
    const auto loop = compiled_fixture(name);
    paradigm_test::check_golden(name + ".preview.txt", render_preview(loop));
    paradigm_test::check_golden(name + ".dot", render_dot(loop));
    paradigm_test::check_golden(name + ".mmd", render_mermaid(loop));
  }
  const auto hostile = hostile_loop();
  paradigm_test::check_golden("hostile.preview.txt", render_preview(hostile));
  paradigm_test::check_golden("hostile.dot", render_dot(hostile));
  paradigm_test::check_golden("hostile.mmd", render_mermaid(hostile));
}

TEST_CASE("DOT and Mermaid keep every label; several verdicts to one target share an edge") {
  const auto loop = *parse_loop(spec(R"({"name": "m", "initial": "check", "states": {
      "check": {"action": "c", "on_success": "done", "on_failure": "fix", "on_error": "fix"},
      "fix": {"action": "f", "next": "check"},
      "done": {"terminal": true}}})"));
  const auto dot = render_dot(loop);
  CHECK(dot.find(R"("s0" -> "s1" [label="failure, error"];)") != std::string::npos);
  CHECK(dot.find(R"("s0" -> "s2" [label="success"];)") != std::string::npos);
  CHECK(dot.find(R"("s1" -> "s0" [label="next"];)") != std::string::npos);
  CHECK(count(dot, " -> ") == 4);  // three edges + the initial arrow
  const auto mmd = render_mermaid(loop);
  CHECK(mmd.find("    s0 --> s1 : failure, error\n") != std::string::npos);
  CHECK(mmd.find("    s0 --> s2 : success\n") != std::string::npos);
  CHECK(mmd.find("    [*] --> s0\n") != std::string::npos);
  CHECK(mmd.find("    s2 --> [*]\n") != std::string::npos);
  CHECK(render_preview(loop).find("  check: success\u2192done, failure\u2192fix, error\u2192fix\n") != std::string::npos);
}

TEST_CASE("initial, terminal and failure terminals are marked distinctly") {
  const auto loop = compiled_fixture("goal");
  const auto dot = render_dot(loop);
  CHECK(dot.find(R"("init" [shape=point)") != std::string::npos);
  CHECK(dot.find(R"("init" -> "s0";)") != std::string::npos);
  CHECK(dot.find(R"("s0" [label="evaluate", penwidth=2];)") != std::string::npos);
  CHECK(dot.find(R"("s2" [label="done", peripheries=2, style="rounded,filled", fillcolor="#d8f0d8"];)") != std::string::npos);
  CHECK(dot.find(R"("s3" [label="failed", peripheries=2, style="rounded,filled", fillcolor="#f8d0d0", color="#b00000"];)") !=
        std::string::npos);
  const auto mmd = render_mermaid(loop);
  CHECK(mmd.find("    class s0 initial\n") != std::string::npos);
  CHECK(mmd.find("    class s2 terminal\n") != std::string::npos);
  CHECK(mmd.find("    class s3 failure\n") != std::string::npos);
  CHECK(mmd.rfind("stateDiagram-v2\n", 0) == 0);
}

TEST_CASE("transitions_of: what can actually be taken, in resolution order") {
  const auto loop = *parse_loop(spec(R"({"name": "t", "initial": "a", "states": {
      "a": {"action": "x", "route": {"yes": "b", "no": "$current", "_error": "e"}, "on_error": "b", "on_maybe": "b"},
      "b": {"action": "y", "route": {"_": "e"}, "on_success": "a"},
      "e": {"terminal": true, "on_maintain": "a"}}})"));
  auto t = transitions_of("a", loop.states.at("a"));
  REQUIRE(t.size() == 4);
  CHECK(t[0].label == "yes");
  CHECK(t[1].label == "no");
  CHECK(t[1].to == "a");  // $current
  CHECK(t[2].label == "error");
  CHECK(t[2].to == "e");  // `_error` shadows on_error
  CHECK(t[3].label == "maybe");
  t = transitions_of("b", loop.states.at("b"));
  REQUIRE(t.size() == 1);  // `_` shadows every shorthand
  CHECK(t[0].label == "_");
  t = transitions_of("e", loop.states.at("e"));
  REQUIRE(t.size() == 1);
  CHECK(t[0].label == "maintain");
  // Without `maintain: true` the executor never uses on_maintain: the loop draws no such edge.
  CHECK(transitions_of(loop, "e", loop.states.at("e")).empty());
  CHECK(render_dot(loop).find("maintain") == std::string::npos);
  CHECK(transitions_of(loop).size() == 5);
}

TEST_CASE("transitions_of: in a maintain loop, verdicts without a route restart the loop") {
  const auto loop = *parse_loop(spec(R"({"name": "t", "initial": "a", "maintain": true, "states": {
      "a": {"action": "x", "on_success": "b", "on_failure": "a"},
      "b": {"action": "x", "on_success": "c", "on_failure": "a", "on_error": "a"},
      "c": {"action": "x", "evaluate": {"type": "convergence", "target": 0},
            "on_target": "d", "on_progress": "c", "on_stall": "c"},
      "d": {"action": "/ask", "on_success": "e", "on_maintain": "b"},
      "e": {"action": "x", "route": {"_": "f"}},
      "f": {"on_success": "g"},
      "g": {"action": "x", "next": "z"},
      "z": {"terminal": true, "on_maintain": "$current"}}})"));
  const auto maintain_edge = [&](const char* state) -> std::string {
    for (const auto& t : transitions_of(loop, state, loop.states.at(state)))
      if (t.label == "maintain") return t.to;
    return "";
  };
  CHECK(maintain_edge("a") == "a");  // `error` has no route: back to initial
  CHECK(maintain_edge("b").empty());   // success, failure, error: all routed
  CHECK(maintain_edge("c") == "a");  // convergence's `error` has no route
  CHECK(maintain_edge("d") == "b");  // a prompt's judge may give any verdict: its on_maintain
  CHECK(maintain_edge("e").empty());   // `_` takes every verdict
  CHECK(maintain_edge("f").empty());   // no action, no evaluate: always success
  CHECK(maintain_edge("g").empty());   // a next: state
  CHECK(maintain_edge("z") == "z");  // a terminal restarts ($current: itself)
  const auto preview = render_preview(loop);
  CHECK(preview.find("  a: success\u2192b, failure\u2192a, maintain\u2192a\n") != std::string::npos);
  CHECK(preview.find("  b: success\u2192c, failure\u2192a, error\u2192a\n") != std::string::npos);
}

TEST_CASE("transitions_of: dead routes are not drawn, live loop-level ones are") {
  const auto loop = *parse_loop(spec(R"({"name": "t", "initial": "a", "maintain": true,
      "on_max_iterations": "report",
      "states": {
        "a": {"action": "x", "next": "b", "on_error": "fix", "on_success": "zz", "on_failure": "zz"},
        "b": {"action": "y", "route": {"error": "fix", "_error": "zz", "success": "done"}},
        "fix": {"action": "f", "next": "a"},
        "zz": {"terminal": true, "failure": true},
        "report": {"action": "r", "next": "done"},
        "done": {"terminal": true}}})"));
  // A next: state takes next, or on_error when its action fails; nothing else.
  auto t = transitions_of("a", loop.states.at("a"));
  REQUIRE(t.size() == 2);
  CHECK(t[0].label == "next");
  CHECK(t[1].label == "error");
  CHECK(t[1].to == "fix");
  // An exact `error` key is checked before `_error`, which can then never fire.
  t = transitions_of("b", loop.states.at("b"));
  REQUIRE(t.size() == 2);
  CHECK(t[0].label == "error");
  CHECK(t[0].to == "fix");
  CHECK(t[1].label == "success");
  // maintain: true restarts every terminal at the initial state.
  t = transitions_of(loop, "done", loop.states.at("done"));
  REQUIRE(t.size() == 1);
  CHECK(t[0].label == "maintain");
  CHECK(t[0].to == "a");
  CHECK(transitions_of("done", loop.states.at("done")).empty());  // the state alone
  const auto preview = render_preview(loop);
  CHECK(preview.find("  a: next\u2192b, error\u2192fix\n") != std::string::npos);
  CHECK(preview.find("  done: [terminal], maintain\u2192a\n") != std::string::npos);
  CHECK(preview.find("Max iterations: 50\nOn max iterations: report\n") != std::string::npos);
  const auto dot = render_dot(loop);
  CHECK(dot.find(R"("init" -> "s4" [label="max iterations", style=dashed];)") != std::string::npos);
  CHECK(dot.find(R"(-> "s3")") == std::string::npos);  // every way to zz is dead
  const auto mmd = render_mermaid(loop);
  CHECK(mmd.find("    [*] --> s4 : max iterations\n") != std::string::npos);
  CHECK(mmd.find("    s5 --> s0 : maintain\n") != std::string::npos);
}

TEST_CASE("hostile names are escaped in every output") {
  const auto loop = hostile_loop();
  const auto dot = render_dot(loop);
  CHECK(dot.find(R"(label="start \"here\"")") != std::string::npos);
  CHECK(dot.find(R"(label="a\\b")") != std::string::npos);
  CHECK(dot.find(R"(label="line1\nline2")") != std::string::npos);
  CHECK(dot.find(R"(label="<b>&amp;amp;</b> : | `tick` )") != std::string::npos);
  CHECK(dot.find(R"(digraph "hostile \"names\" \\ {loop}" {)") == 0);
  // an interpolated target becomes a dashed note node
  CHECK(dot.find(R"([label="${context.next}", shape=note, style=dashed];)") != std::string::npos);
  // every line is one statement: names never break out of their quotes
  for (std::size_t pos = 0, next; (next = dot.find('\n', pos)) != std::string::npos; pos = next + 1) {
    const std::string line = dot.substr(pos, next - pos);
    std::size_t quotes = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\') ++i;
      else if (line[i] == '"') ++quotes;
    }
    CHECK(quotes % 2 == 0);
  }
  const auto mmd = render_mermaid(loop);
  CHECK(mmd.find("    state \"start #34;here#34;\" as s0\n") != std::string::npos);
  CHECK(mmd.find("    state \"line1<br/>line2\" as s2\n") != std::string::npos);
  CHECK(mmd.find("    state \"x -#62; y#59; #125;\" as s3\n") != std::string::npos);
  CHECK(mmd.find("    state \"#37;#37; not a comment #35;35#59; #91;*#93;\" as s4\n") != std::string::npos);
  CHECK(mmd.find("    s1 --> s3 : success, failure, error\n") != std::string::npos);
  CHECK(mmd.find("    s0 --> s0 : _\n") != std::string::npos);
  CHECK(count(mmd, "\n") == count(mmd, "    ") + 1);  // no name adds a line
  const auto preview = render_preview(loop);
  CHECK(preview.find("line1\\nline2") != std::string::npos);
  CHECK(preview.find("\\t tab") != std::string::npos);
}

TEST_CASE("rendering a loop with no states or a dangling initial does not crash") {
  fsm_loop empty;
  empty.name = "empty";
  empty.initial = "ghost";
  CHECK(render_preview(empty) == "States: \nTransitions:\nInitial: ghost\nMax iterations: 50\n");
  CHECK(render_dot(empty).find(R"("init" -> "x0";)") != std::string::npos);
  CHECK(render_dot(empty).find(R"("x0" [label="ghost", shape=note, style=dashed];)") != std::string::npos);
  CHECK(render_mermaid(empty).find("    [*] --> x0\n") != std::string::npos);
}

TEST_CASE("render: sub-loop states are marked and name their child") {
  auto loop = parse_loop_text(R"({"name": "p", "initial": "call", "states": {
      "call": {"loop": "refine", "with": {"k": 1}, "on_yes": "dyn", "on_no": "done"},
      "dyn": {"loop": "${context.which}", "on_yes": "done"},
      "done": {"terminal": true}}})");
  REQUIRE(loop.has_value());
  const std::string preview = render_preview(*loop);
  CHECK(preview.find("  call: [loop: refine], yes\u2192dyn, no\u2192done\n") != std::string::npos);
  CHECK(preview.find("  dyn: [loop: ${context.which}], yes\u2192done\n") != std::string::npos);
  const std::string dot = render_dot(*loop);
  CHECK(dot.find(R"(label="call\n[loop: refine]", shape=component)") != std::string::npos);
  const std::string mermaid = render_mermaid(*loop);
  CHECK(mermaid.find("state \"call<br/>#91;loop#58; refine#93;\" as s0") != std::string::npos);
  CHECK(mermaid.find("class s0,s1 subloop") != std::string::npos);
  // a loop without sub-loops draws no subloop class
  auto flat = parse_loop_text(R"({"name": "f", "initial": "d", "states": {"d": {"terminal": true}}})");
  REQUIRE(flat.has_value());
  CHECK(render_mermaid(*flat).find("subloop") == std::string::npos);
}
