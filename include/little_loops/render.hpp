// little_loops — rendering a loop: text preview (seed 001 phase 7), Graphviz DOT, Mermaid
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions render
#  include <little_loops/detail/host_render.hpp>
#  include <little_loops/detail/json_path.hpp>
#  include <little_loops/detail/plugin_state_render.hpp>
#  include <little_loops/detail/resilience_policy.hpp>
#  include <little_loops/detail/state_verdicts.hpp>
#  include <little_loops/detail/utf8.hpp>
#  include <fmt/format.h>
#  include <cstddef>
#  include <functional>
#  include <map>
#  include <utility>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// One possible transition of a loop, as the renderers draw it.
struct loop_transition {
  std::string from;   ///< source state
  std::string label;  ///< `next`, a verdict (`success`, `error`, `target`, …), `_` or `maintain`
  std::string to;     ///< target as written (`$current` already replaced by `from`)
};

LITTLE_LOOPS_INLINE std::vector<loop_transition> transitions_of(const std::string& name,
                                                                const state_config& state);
LITTLE_LOOPS_INLINE std::vector<loop_transition> transitions_of(const fsm_loop& loop,
                                                                const std::string& name,
                                                                const state_config& state);
LITTLE_LOOPS_INLINE std::vector<loop_transition> transitions_of(const fsm_loop& loop);
LITTLE_LOOPS_INLINE std::string render_preview(const fsm_loop& loop);
LITTLE_LOOPS_INLINE json render_host_settings_json(const fsm_loop& loop);
LITTLE_LOOPS_INLINE json render_policies_json(const fsm_loop& loop);
LITTLE_LOOPS_INLINE json render_plugin_states_json(const fsm_loop& loop);
LITTLE_LOOPS_INLINE json render_guards_json(const fsm_loop& loop);
LITTLE_LOOPS_INLINE std::string render_dot(const fsm_loop& loop);
LITTLE_LOOPS_INLINE std::string render_mermaid(const fsm_loop& loop);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The transitions of `state` (named `name`) that can actually be taken, in the order the
/// renderers list them. A `next:` state: `next`, then `on_error` (labelled `error`: a failed
/// action goes there), then `on_maintain`; its route table and other shorthands are never
/// used (validation warns) and are not drawn. Any other state: the route table in document
/// order; `_error` (labelled `error`) unless the table has an exact `error` key, which is
/// checked first; `_` (labelled `_`); the `on_<verdict>` shorthands the route table does not
/// shadow (a `_` default shadows all of them, `_error` or an `error` key shadows
/// `on_error`); `on_throttle_hard` (labelled `throttle_hard`); `on_maintain` (labelled
/// `maintain`).
LITTLE_LOOPS_INLINE std::vector<loop_transition> transitions_of(const std::string& name,
                                                   const state_config& state) {
  std::vector<loop_transition> out;
  const auto add = [&](std::string label, const std::string& target) {
    out.push_back(loop_transition{name, std::move(label), target == "$current" ? name : target});
  };
  if (state.next) {
    add("next", *state.next);
    if (const auto it = state.on.find("error"); it != state.on.end()) add("error", it->second);
  } else {
    bool has_default = false;
    bool has_error = false;
    if (state.route) {
      for (const auto& [verdict, target] : state.route->routes) add(verdict, target);
      has_error = state.route->routes.find("error") != state.route->routes.end();
      if (state.route->error_target && !has_error) {
        has_error = true;
        add("error", *state.route->error_target);
      }
      if (state.route->default_target) {
        has_default = true;
        add("_", *state.route->default_target);
      }
    }
    for (const auto& [verdict, target] : state.on) {
      if (has_default) break;
      if (verdict == "error" && has_error) continue;
      if (state.route && state.route->routes.find(verdict) != state.route->routes.end()) continue;
      add(verdict, target);
    }
  }
  if (state.on_throttle_hard) add("throttle_hard", *state.on_throttle_hard);
  if (state.on_maintain) add("maintain", *state.on_maintain);
  return out;
}

namespace detail {

// True when a verdict of `state` (not a `next:` state) can find no route (see
// unrouted_verdicts; an evaluator that can give any verdict has one unless `_` is set).
inline bool has_unrouted_verdict(const state_config& state) {
  const auto unrouted = unrouted_verdicts(state);
  return !unrouted || !unrouted->empty();
}

}  // namespace detail

/// The transitions of `state` in `loop`, as the executor takes them: as above, except that
/// `maintain` edges belong to `maintain: true` loops only (elsewhere `on_maintain` is never
/// used), where every terminal restarts at its `on_maintain` or `initial`, and so does a
/// state (other than a `next:` state) for the verdicts its routes leave out (see
/// detail::has_unrouted_verdict), instead of ending the run (labelled `maintain`).
LITTLE_LOOPS_INLINE std::vector<loop_transition> transitions_of(const fsm_loop& loop, const std::string& name,
                                                   const state_config& state) {
  auto out = transitions_of(name, state);
  std::erase_if(out, [](const loop_transition& t) { return t.label == "maintain"; });
  if (loop.maintain &&
      (state.terminal || (!state.next && detail::has_unrouted_verdict(state)))) {
    const std::string& to = state.on_maintain ? *state.on_maintain : loop.initial;
    out.push_back(loop_transition{name, "maintain", to == "$current" ? name : to});
  }
  return out;
}

/// Every transition of `loop`, state by state in document order.
LITTLE_LOOPS_INLINE std::vector<loop_transition> transitions_of(const fsm_loop& loop) {
  std::vector<loop_transition> out;
  for (const auto& [name, state] : loop.states) {
    auto part = transitions_of(loop, name, state);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

namespace detail {

/// Text for humans: control characters become visible escapes (`\n`, `\t`, `\x01`),
/// invalid UTF-8 becomes U+FFFD.
inline std::string render_visible(std::string_view text) {
  std::string out;
  for (const char32_t c : utf8_decode(text)) {
    if (c == U'\n') out += "\\n";
    else if (c == U'\r') out += "\\r";
    else if (c == U'\t') out += "\\t";
    else if (c < 0x20 || c == 0x7F) out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    else utf8_append(out, c);
  }
  return out;
}

/// A JSON value for display: strings raw, everything else as compact JSON.
inline std::string render_value(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// Resolves a whole-string `${context.a.b}` template against the loop's context for
/// display (the convergence paradigm keeps its target there); anything else is shown as is.
inline std::string render_resolved(const fsm_loop& loop, const json& value) {
  if (!value.is_string()) return render_value(value);
  const std::string& text = value.get_ref<const std::string&>();
  constexpr std::string_view prefix = "${context.";
  if (text.size() <= prefix.size() + 1 || text.compare(0, prefix.size(), prefix) != 0 ||
      text.back() != '}')
    return text;
  const auto path =
      detail::parse_member_path(std::string_view(text).substr(prefix.size(), text.size() - prefix.size() - 1),
                                /*brackets=*/false);
  if (!path) return text;
  const json* node = &loop.context;
  for (const auto& segment : *path) {  // object keys only
    if (!node->is_object()) return text;
    const auto it = node->find(segment.key);
    if (it == node->end()) return text;
    node = &*it;
  }
  return render_value(*node);
}

/// `output_contains [pattern: "0 errors"]`, `exit_code (default)`, …
inline std::string render_evaluator(const fsm_loop& loop, const state_config& s) {
  if (!s.evaluate)
    return runs_prompt_action(s) ? "llm_structured (default)" : "exit_code (default)";
  const evaluate_config& e = *s.evaluate;
  std::vector<std::string> parts;
  const auto quoted = [](const std::string& text) {
    return json(render_visible(text)).dump(-1, ' ', false, json::error_handler_t::replace);
  };
  switch (e.type) {
    case evaluator_type::output_contains:
      if (e.pattern) parts.push_back("pattern: " + quoted(*e.pattern));
      if (e.negate) parts.emplace_back("negate: true");
      break;
    case evaluator_type::output_json:
      if (e.path) parts.push_back("path: " + render_visible(*e.path));
      [[fallthrough]];
    case evaluator_type::output_numeric:
      if (e.op) parts.push_back(fmt::format("operator: {}", to_string(*e.op)));
      if (e.target) parts.push_back("target: " + render_visible(render_resolved(loop, *e.target)));
      break;
    case evaluator_type::convergence:
      parts.push_back("toward: " +
                      (e.target ? render_visible(render_resolved(loop, *e.target)) : "?"));
      parts.push_back("tolerance: " +
                      (e.tolerance ? render_visible(render_resolved(loop, *e.tolerance)) : "0"));
      if (e.direction == convergence_direction::maximize) parts.emplace_back("direction: maximize");
      break;
    case evaluator_type::llm_structured:
      if (e.min_confidence != 0.5) parts.push_back(fmt::format("min_confidence: {}", e.min_confidence));
      if (e.uncertain_suffix) parts.emplace_back("uncertain_suffix: true");
      break;
    case evaluator_type::classify:
      if (e.line) parts.push_back("line: " + render_visible(e.line->is_string() ? e.line->get<std::string>() : e.line->dump()));
      break;
    case evaluator_type::diff_stall:
    case evaluator_type::score_stall:
    case evaluator_type::open_question_stall:
    case evaluator_type::action_stall: render_stall_fields(e.stall, parts); break;
    case evaluator_type::harbor_scorer:
    case evaluator_type::mcp_result:
    case evaluator_type::exit_code: break;
  }
  if (e.source) parts.push_back("source: " + render_visible(*e.source));
  std::string out{to_string(e.type)};
  if (!parts.empty()) out += fmt::format(" [{}]", fmt::join(parts, ", "));
  return out;
}

/// `[loop: <child>]` (the name as written, a template included), with `, worktree: <branch>`
/// when the child runs in a worktree.
inline std::string subloop_mark(const state_config& s) {
  std::string mark = "[loop: " + render_visible(s.loop ? *s.loop : std::string());
  if (s.worktree) mark += ", worktree: " + render_visible(*s.worktree);
  return mark + "]";
}

/// States whose verdict decides where the loop goes: an explicit `evaluate`, or an action
/// without `next` in a non-terminal state.
inline bool render_is_check(const state_config& s) noexcept {
  if (s.terminal) return false;
  return s.evaluate.has_value() || (s.action.has_value() && !s.next.has_value());
}

/// Escapes text for a double-quoted DOT string: `"` and `\` are escaped, `&` becomes
/// `&amp;` (Graphviz decodes entities), a newline becomes the `\n` line break, other
/// control characters become spaces, invalid UTF-8 U+FFFD.
inline std::string dot_quote(std::string_view text) {
  std::string out = "\"";
  for (const char32_t c : utf8_decode(text)) {
    if (c == U'"') out += "\\\"";
    else if (c == U'\\') out += "\\\\";
    else if (c == U'&') out += "&amp;";  // Graphviz decodes HTML entities in labels
    else if (c == U'\n') out += "\\n";
    else if (c == U'\r') continue;
    else if (c < 0x20 || c == 0x7F) out += ' ';
    else utf8_append(out, c);
  }
  out += '"';
  return out;
}

/// Escapes text for Mermaid state descriptions and edge labels: characters with a meaning
/// in the grammar become entity codes (`#34;`), a newline becomes `<br/>`.
inline std::string mermaid_escape(std::string_view text) {
  std::string out;
  for (const char32_t c : utf8_decode(text)) {
    switch (c) {
      case U'"': case U'#': case U';': case U':': case U'<': case U'>': case U'&':
      case U'%': case U'{': case U'}': case U'[': case U']': case U'|': case U'\\':
      case U'`':
        out += fmt::format("#{};", static_cast<unsigned>(c));
        break;
      case U'\n': out += "<br/>"; break;
      case U'\r': break;
      default:
        if (c < 0x20 || c == 0x7F) out += ' ';
        else utf8_append(out, c);
    }
  }
  if (out.empty()) out = "#32;";  // an empty description would change the statement
  return out;
}

/// One drawn edge: every label from `from` to `to`, in first-seen order.
struct render_edge {
  std::string from;
  std::string to;
  std::vector<std::string> labels;
};

/// Merges transitions that share source and target into one edge, keeping every label.
inline std::vector<render_edge> merge_edges(const std::vector<loop_transition>& transitions) {
  std::vector<render_edge> edges;
  for (const auto& t : transitions) {
    render_edge* found = nullptr;
    for (auto& e : edges)
      if (e.from == t.from && e.to == t.to) found = &e;
    if (found == nullptr) {
      edges.push_back(render_edge{t.from, t.to, {}});
      found = &edges.back();
    }
    found->labels.push_back(t.label);
  }
  return edges;
}

/// Ids for the graph renderers: `s<index>` for states, `x<index>` for targets that name no
/// state (interpolated targets), so no state name can collide with a generated node.
struct render_ids {
  std::map<std::string, std::string, std::less<>> known;
  std::vector<std::string> dynamic_targets;

  explicit render_ids(const fsm_loop& loop) {
    std::size_t i = 0;
    for (const auto& [name, state] : loop.states) known.emplace(name, fmt::format("s{}", i++));
  }

  std::string of(const std::string& name) {
    if (const auto it = known.find(name); it != known.end()) return it->second;
    dynamic_targets.push_back(name);
    std::string id = fmt::format("x{}", dynamic_targets.size() - 1);
    known.emplace(name, id);
    return id;
  }
};


/// `Guards:` of render_preview(), one line per guarded state; empty without guards.
inline std::string render_guards(const fsm_loop& loop) {
  const json g = guards_json(loop);
  if (!g.contains("states")) return {};
  std::string out = "Guards:\n";
  for (auto it = g["states"].begin(); it != g["states"].end(); ++it) {
    std::string line;
    for (auto m = it->begin(); m != it->end(); ++m)
      line += (line.empty() ? "" : ", ") + m.key() + " " + render_visible(m->get<std::string>());
    out += "  " + render_visible(it.key()) + ": " + line + "\n";
  }
  return out;
}
}  // namespace detail

/// The compiled-loop preview of seed 001 phase 7:
/// ```
/// States: evaluate → fix → done
/// Transitions:
///   evaluate: success→done, failure→fix, error→failed
///   fix: next→evaluate
///   done: [terminal]
/// Initial: evaluate
/// Max iterations: 50
/// Evaluator: output_contains [pattern: "0 errors"]
/// ```
/// Failure terminals show `[terminal, failure]`, sub-loop states `[loop: <child>]` first;
/// in a `maintain: true` loop every terminal,
/// and every state whose routes leave verdicts out, adds `maintain→<target>` (its
/// `on_maintain`, else `initial`); a loop with
/// `on_max_iterations` gets an `On max iterations: <state>` line after `Max iterations`. With several deciding states the last line becomes an
/// `Evaluators:` block with one `<state>: <evaluator>` line each. Control characters in
/// names are shown escaped (`\n`). The policies (retry, catch, caps) and a `Guards:` block
/// (the test guards of each guarded state) close it.
LITTLE_LOOPS_INLINE std::string render_preview(const fsm_loop& loop) {
  std::string out = "States: ";
  bool first = true;
  for (const auto& [name, state] : loop.states) {
    if (!first) out += " \u2192 ";
    first = false;
    out += detail::render_visible(name);
  }
  out += "\nTransitions:\n";
  for (const auto& [name, state] : loop.states) {
    out += "  " + detail::render_visible(name) + ": ";
    std::vector<std::string> items;
    if (state.terminal) items.emplace_back(state.failure ? "[terminal, failure]" : "[terminal]");
    if (state.loop) items.push_back(detail::subloop_mark(state));
    for (const auto& t : transitions_of(loop, name, state))
      items.push_back(detail::render_visible(t.label) + "\u2192" + detail::render_visible(t.to));
    if (items.empty()) items.emplace_back("(no transitions)");
    out += fmt::format("{}\n", fmt::join(items, ", "));
  }
  for (const auto& [name, state] : loop.states)
    if (state.description)
      out += "  " + detail::render_visible(name) + " — " + detail::render_visible(*state.description) + "\n";
  out += "Initial: " + detail::render_visible(loop.initial) + "\n";
  out += fmt::format("Max iterations: {}\n", loop.max_iterations);
  if (loop.max_passes) out += fmt::format("Max full passes: {}\n", *loop.max_passes);
  if (loop.on_max_iterations)
    out += "On max iterations: " + detail::render_visible(*loop.on_max_iterations) + "\n";
  if (loop.on_max_passes)
    out += "On max full passes: " + detail::render_visible(*loop.on_max_passes) + "\n";
  std::vector<std::pair<std::string, std::string>> checks;
  for (const auto& [name, state] : loop.states)
    if (detail::render_is_check(state))
      checks.emplace_back(detail::render_visible(name), detail::render_evaluator(loop, state));
  if (checks.size() == 1) {
    out += "Evaluator: " + checks.front().second + "\n";
  } else if (!checks.empty()) {
    out += "Evaluators:\n";
    for (const auto& [name, text] : checks) out += "  " + name + ": " + text + "\n";
  }
  out += detail::render_policies(loop, dialect_of(loop));
  out += detail::plugin_states_text(loop);
  out += detail::learning_text(loop);
  out += detail::render_guards(loop);
  if (const auto host = detail::host_setting_lines(loop); !host.empty()) {
    out += "Host settings:\n";
    for (const auto& [name, items] : host)
      out += "  " + detail::render_visible(name) + ": " + detail::render_visible(items) + "\n";
  }
  return out;
}

/// What each state asks of the host, as JSON (`ll-loop validate --json`): `{states: {name:
/// {agent, pruning_profile, automation_profile, session_mode, params}}}`, each as it takes
/// effect (the state's own setting, else the loop's), states asking nothing left out.
LITTLE_LOOPS_INLINE json render_host_settings_json(const fsm_loop& loop) { return detail::host_settings_json(loop); }

/// The retry, catch, backoff, edge-cap and circuit policies `loop` runs with, as JSON
/// (`ll-loop validate --json`): `{states: {name: {retry, catch, backoff}}, max_edge_revisits,
/// circuit}`, built-in entries marked `built_in: true` (design §6.6).
LITTLE_LOOPS_INLINE json render_policies_json(const fsm_loop& loop) {
  return detail::policies_json(loop, dialect_of(loop));
}

/// The throttles and learning states of `loop`, as JSON (`ll-loop validate --json`): `{throttle:
/// {applies_to: "every_action_state" | "declared", states: {name: {normal_max, warn_max,
/// hard_max[, on_throttle_hard][, exempt]}}}, learning: {name: {targets | targets_csv,
/// max_retries | max_retries_expr}}}`: a state listed under `throttle` when the throttle
/// counts its actions, under `learning` when it is a learning state.
LITTLE_LOOPS_INLINE json render_plugin_states_json(const fsm_loop& loop) {
  const loop_dialect dialect = dialect_of(loop);
  json states = json::object();
  for (const auto& [name, state] : loop.states)
    if (detail::throttles(state, dialect)) states[name] = detail::throttle_json(state);
  json throttle = {{"applies_to", dialect == loop_dialect::current ? "every_action_state" : "declared"},
                   {"states", std::move(states)}};
  json learning = json::object();
  for (const auto& [name, state] : loop.states)
    if (state.type == "learning" && state.learning) learning[name] = detail::learning_json(*state.learning);
  return json{{"throttle", std::move(throttle)}, {"learning", std::move(learning)}};
}

/// The test guards each state with an action runs with (its own value, else the loop's), as
/// JSON (`ll-loop validate --json`): `{tamper_guard, prepatch_check}` as the loop writes them,
/// and `states: {name: {tamper_guard, prepatch_check}}`; a value a guard does not know is
/// left out (the guard is off). Empty when no guard is written.
LITTLE_LOOPS_INLINE json render_guards_json(const fsm_loop& loop) {
  return detail::guards_json(loop);
}

/// Graphviz DOT of the loop. States are boxes, sub-loop states components labelled with
/// their child (`[loop: <child>]`); the initial state is drawn bold and entered
/// from a point; terminals have a double border and a green fill, failure terminals a
/// double border and a red fill and outline; transitions between the same two states are one edge whose label lists every
/// verdict (`failure, error`); `maintain` edges are dotted; `on_max_iterations` is entered
/// from the start point by a dashed `max iterations` edge; targets that name no state
/// (interpolated) become dashed note nodes. Every name is escaped, so any state name gives
/// a graph `dot` accepts.
LITTLE_LOOPS_INLINE std::string render_dot(const fsm_loop& loop) {
  detail::render_ids ids{loop};
  std::string out = "digraph " + detail::dot_quote(loop.name) + " {\n";
  out += "  graph [rankdir=LR, labelloc=t, label=" + detail::dot_quote(loop.name) + "];\n";
  out += "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  out += "  \"init\" [shape=point, width=0.15, label=\"\"];\n";
  for (const auto& [name, state] : loop.states) {
    std::vector<std::string> attrs{
        "label=" + detail::dot_quote(state.loop ? name + "\n" + detail::subloop_mark(state) : name)};
    if (state.loop) attrs.emplace_back("shape=component, style=\"\"");
    if (state.terminal && state.failure)
      attrs.emplace_back(
          "peripheries=2, style=\"rounded,filled\", fillcolor=\"#f8d0d0\", color=\"#b00000\"");
    else if (state.terminal)
      attrs.emplace_back("peripheries=2, style=\"rounded,filled\", fillcolor=\"#d8f0d8\"");
    if (name == loop.initial) attrs.emplace_back("penwidth=2");
    out += fmt::format("  \"{}\" [{}];\n", ids.of(name), fmt::join(attrs, ", "));
  }
  const std::string initial_id = ids.of(loop.initial);
  const auto edges = detail::merge_edges(transitions_of(loop));
  std::string edge_lines;
  for (const auto& e : edges) {
    std::string attrs = "label=" + detail::dot_quote(fmt::format("{}", fmt::join(e.labels, ", ")));
    if (e.labels.size() == 1 && e.labels.front() == "maintain") attrs += ", style=dotted";
    edge_lines += fmt::format("  \"{}\" -> \"{}\" [{}];\n", ids.of(e.from),
                              ids.of(e.to), attrs);
  }
  // The executor enters on_max_iterations from wherever the cap is hit.
  if (loop.on_max_iterations)
    edge_lines += fmt::format("  \"init\" -> \"{}\" [label=\"max iterations\", style=dashed];\n",
                              ids.of(*loop.on_max_iterations));
  for (std::size_t k = 0; k < ids.dynamic_targets.size(); ++k)
    out += fmt::format("  \"x{}\" [label={}, shape=note, style=dashed];\n", k,
                       detail::dot_quote(ids.dynamic_targets[k]));
  out += fmt::format("  \"init\" -> \"{}\";\n", initial_id);
  out += edge_lines;
  out += "}\n";
  return out;
}

/// Mermaid `stateDiagram-v2` of the loop (a sub-loop state's label adds `[loop: <child>]`,
/// its class `subloop` a dashed border): `[*] -->` marks the initial state (and, labelled
/// `max iterations`, the `on_max_iterations` state), `--> [*]` every terminal; classes `initial`, `terminal` and `failure` style them distinctly;
/// transitions between the same two states are one edge whose label lists every verdict.
/// Names and labels are escaped with Mermaid entity codes (`#34;`).
LITTLE_LOOPS_INLINE std::string render_mermaid(const fsm_loop& loop) {
  detail::render_ids ids{loop};
  std::string out = "stateDiagram-v2\n";
  std::vector<std::string> initial_ids, terminal_ids, failure_ids, subloop_ids;
  for (const auto& [name, state] : loop.states) {
    const std::string id = ids.of(name);
    out += fmt::format("    state \"{}\" as {}\n",
                       detail::mermaid_escape(state.loop ? name + "\n" + detail::subloop_mark(state) : name), id);
    if (state.loop) subloop_ids.push_back(id);
    if (name == loop.initial) initial_ids.push_back(id);
    if (state.terminal) (state.failure ? failure_ids : terminal_ids).push_back(id);
  }
  const std::string initial_id = ids.of(loop.initial);
  const auto edges = detail::merge_edges(transitions_of(loop));
  std::string edge_lines;
  for (const auto& e : edges)
    edge_lines += fmt::format("    {} --> {} : {}\n", ids.of(e.from), ids.of(e.to),
                              detail::mermaid_escape(fmt::format("{}", fmt::join(e.labels, ", "))));
  if (loop.on_max_iterations)  // entered from wherever the cap is hit
    edge_lines += fmt::format("    [*] --> {} : max iterations\n", ids.of(*loop.on_max_iterations));
  for (std::size_t k = 0; k < ids.dynamic_targets.size(); ++k)
    out += fmt::format("    state \"{}\" as x{}\n", detail::mermaid_escape(ids.dynamic_targets[k]), k);
  out += fmt::format("    [*] --> {}\n", initial_id);
  out += edge_lines;
  for (const auto& [name, state] : loop.states)
    if (state.terminal) out += fmt::format("    {} --> [*]\n", ids.of(name));
  out += "    classDef initial stroke-width:3px,font-weight:bold\n";
  out += "    classDef terminal fill:#d8f0d8\n";
  out += "    classDef failure fill:#f8d0d0,stroke:#b00000,color:#b00000\n";
  if (!subloop_ids.empty()) out += "    classDef subloop stroke-dasharray:4 2\n";
  if (!initial_ids.empty()) out += fmt::format("    class {} initial\n", fmt::join(initial_ids, ","));
  if (!terminal_ids.empty()) out += fmt::format("    class {} terminal\n", fmt::join(terminal_ids, ","));
  if (!failure_ids.empty()) out += fmt::format("    class {} failure\n", fmt::join(failure_ids, ","));
  if (!subloop_ids.empty()) out += fmt::format("    class {} subloop\n", fmt::join(subloop_ids, ","));
  return out;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END
