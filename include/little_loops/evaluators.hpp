// little_loops — evaluators: compiled evaluator configs and the default evaluator
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/json_path.hpp>
#include <little_loops/error.hpp>
#include <little_loops/evaluators/classify.hpp>
#include <little_loops/evaluators/convergence.hpp>
#include <little_loops/evaluators/exit_code.hpp>
#include <little_loops/evaluators/harbor_scorer.hpp>
#include <little_loops/evaluators/llm_judge.hpp>
#include <little_loops/evaluators/mcp_result.hpp>
#include <little_loops/evaluators/output_contains.hpp>
#include <little_loops/evaluators/output_json.hpp>
#include <little_loops/evaluators/output_numeric.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <fmt/format.h>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions use these
#  include <little_loops/detail/feedback.hpp>
#  include <little_loops/detail/json_scan.hpp>
#  include <little_loops/detail/numbers.hpp>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

// Small cache of matchers for templated patterns, keyed by the rendered pattern text.
class pattern_cache {
 public:
  std::shared_ptr<const pattern_matcher> get(const std::string& pattern);

  static constexpr std::size_t capacity = 8;

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::shared_ptr<const pattern_matcher>>> entries_;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::shared_ptr<const pattern_matcher> pattern_cache::get(const std::string& pattern) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& e : entries_)
    if (e.first == pattern) return e.second;
  auto m = std::make_shared<const pattern_matcher>(pattern);
  if (entries_.size() >= capacity) entries_.erase(entries_.begin());
  entries_.emplace_back(pattern, m);
  return m;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

/// @brief An evaluate_config prepared at load time: every templated string field compiled,
/// literal `output_contains` patterns compiled (RE2 or substring), literal JSON paths split
/// and literal numeric targets parsed. Built by compile_evaluator(); cheap to copy (shared
/// immutable parts).
struct compiled_evaluator {
  evaluate_config config;                          ///< the configuration it was built from
  std::optional<compiled_template> target;         ///< `target` when it is a string
  std::optional<compiled_template> tolerance;      ///< `tolerance` when it is a string
  std::optional<compiled_template> pattern;        ///< `pattern`
  std::optional<compiled_template> path;           ///< `path`
  std::optional<compiled_template> prompt;         ///< `prompt`
  std::optional<compiled_template> source;         ///< `source`
  std::optional<compiled_template> previous;       ///< `previous`
  std::shared_ptr<const pattern_matcher> matcher;  ///< literal pattern, compiled once
  std::shared_ptr<detail::pattern_cache> pattern_cache;  ///< templated patterns
  detail::path_segments json_path;                 ///< literal `path`, split once
};

namespace detail {

LITTLE_LOOPS_INLINE expected<void, error> compile_field(const std::optional<std::string>& text,
                                           std::optional<compiled_template>& out,
                                           std::string_view field, const template_table* kept);
LITTLE_LOOPS_INLINE expected<void, error> compile_json_field(const std::optional<json>& value,
                                                std::optional<compiled_template>& out,
                                                std::string_view field, const template_table* kept);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE expected<void, error> compile_field(const std::optional<std::string>& text,
                                           std::optional<compiled_template>& out,
                                           std::string_view field, const template_table* kept) {
  if (!text) return {};
  auto t = kept != nullptr ? kept->compile(*text) : compile_template(*text);
  if (!t) {
    error e = std::move(t.error());
    e.path = fmt::format("evaluate.{}", field);
    return unexpected(std::move(e));
  }
  out = std::move(*t);
  return {};
}

LITTLE_LOOPS_INLINE expected<void, error> compile_json_field(const std::optional<json>& value,
                                                std::optional<compiled_template>& out,
                                                std::string_view field, const template_table* kept) {
  if (!value || !value->is_string()) return {};
  return compile_field(value->get<std::string>(), out, field, kept);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_INLINE expected<compiled_evaluator, error> compile_evaluator(const evaluate_config& config,
                                                             const template_table* kept = nullptr);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief Prepares `config` for repeated evaluation (templates parsed, patterns compiled).
/// @return errc::template_syntax (path `evaluate.<field>`) when a templated field is
/// malformed. With `kept`, templates validation already parsed are taken from there.
LITTLE_LOOPS_INLINE expected<compiled_evaluator, error> compile_evaluator(const evaluate_config& config,
                                                             const template_table* kept) {
  compiled_evaluator c;
  c.config = config;
  expected<void, error> r;
  if (!(r = detail::compile_json_field(config.target, c.target, "target", kept)))
    return unexpected(std::move(r.error()));
  if (!(r = detail::compile_json_field(config.tolerance, c.tolerance, "tolerance", kept)))
    return unexpected(std::move(r.error()));
  if (!(r = detail::compile_field(config.pattern, c.pattern, "pattern", kept)))
    return unexpected(std::move(r.error()));
  if (!(r = detail::compile_field(config.path, c.path, "path", kept)))
    return unexpected(std::move(r.error()));
  if (!(r = detail::compile_field(config.prompt, c.prompt, "prompt", kept)))
    return unexpected(std::move(r.error()));
  if (!(r = detail::compile_field(config.source, c.source, "source", kept)))
    return unexpected(std::move(r.error()));
  if (!(r = detail::compile_field(config.previous, c.previous, "previous", kept)))
    return unexpected(std::move(r.error()));
  if (c.pattern) {
    if (c.pattern->is_literal())
      c.matcher = std::make_shared<const pattern_matcher>(std::string(c.pattern->literal()));
    else
      c.pattern_cache = std::make_shared<detail::pattern_cache>();
  }
  if (c.path && c.path->is_literal()) c.json_path = detail::parse_json_path(c.path->literal());
  return c;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {

LITTLE_LOOPS_INLINE expected<std::string, error> render_field(const compiled_template& t,
                                                 const interpolation_context* ctx);
LITTLE_LOOPS_INLINE evaluation_result abnormal_action_result(const action_result& a);
LITTLE_LOOPS_INLINE bool judges_own_failure(const evaluate_config* config, action_kind kind) noexcept;
LITTLE_LOOPS_INLINE bool judges_own_failure(const std::optional<compiled_evaluator>& c, action_kind kind) noexcept;
LITTLE_LOOPS_INLINE bool has_fixed_verdict(const action_result* action, bool has_evaluate,
                              bool own_failure = false) noexcept;
LITTLE_LOOPS_INLINE evaluation_result fixed_verdict(const action_result* action,
                                       loop_dialect dialect = loop_dialect::seed);
LITTLE_LOOPS_INLINE expected<std::optional<double>, std::string> resolve_number(
    const std::optional<json>& value, const std::optional<compiled_template>& tpl,
    const interpolation_context* ctx);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Renders an optional compiled template (literal fast path, no copy needed by callers that
// only read). Missing context → an empty context.
LITTLE_LOOPS_INLINE expected<std::string, error> render_field(const compiled_template& t,
                                                 const interpolation_context* ctx) {
  if (t.is_literal()) return std::string(t.literal());
  static const interpolation_context empty{};
  return render(t, ctx ? *ctx : empty);
}

// The verdict for an action that did not exit normally (design §3.4).
LITTLE_LOOPS_INLINE evaluation_result abnormal_action_result(const action_result& a) {
  evaluation_result r;
  r.verdict = "error";
  r.details = json::object();
  if (a.cancelled) {
    r.details["error"] = "action cancelled";
    r.details["cancelled"] = true;
  } else if (a.timed_out) {
    r.details["error"] = a.idle_timeout ? "action timed out (no output)" : "action timed out";
    r.details["timed_out"] = true;
    if (a.idle_timeout) r.details["idle_timeout"] = true;
  } else if (a.signal != 0) {
    r.details["error"] = fmt::format("action killed by signal {}", a.signal);
  } else {
    r.details["error"] = a.stderr_output.empty() ? std::string("action could not be started")
                                                 : "action could not be started: " + a.stderr_output;
    r.details["not_started"] = true;
  }
  if (a.signal != 0) r.details["signal"] = a.signal;
  r.details["exit_code"] = a.exit_code;
  r.details["duration_ms"] = static_cast<std::int64_t>(a.duration.count());
  return r;
}

// The verdicts no evaluator decides (design §3.4, §3.16): an action that did not end
// normally (timed out, cancelled, killed, not started) is `error` with details saying why, and
// a state with neither action nor `evaluate:` is `success` with empty details. The one place
// these rules live: basic_evaluator applies them first, and the executor applies them before
// any host Evaluator, whose verdicts cannot override them.
// mcp_result (the evaluator `config` names, or the default of an mcp_tool action) reads a
// timeout (exit 124) and a program that could not start (127) itself, as the reference's:
// for it only a cancelled or killed action has the fixed verdict.
// has_fixed_verdict(): whether they apply (`action` null: no action ran).
LITTLE_LOOPS_INLINE bool judges_own_failure(const evaluate_config* config, action_kind kind) noexcept {
  return config ? config->type == evaluator_type::mcp_result : kind == action_kind::mcp_tool;
}
LITTLE_LOOPS_INLINE bool judges_own_failure(const std::optional<compiled_evaluator>& c, action_kind kind) noexcept {
  return judges_own_failure(c ? &c->config : nullptr, kind);
}
LITTLE_LOOPS_INLINE bool has_fixed_verdict(const action_result* action, bool has_evaluate,
                              bool own_failure) noexcept {
  if (!action) return !has_evaluate;
  return own_failure ? action->cancelled || action->signal != 0 : action->abnormal();
}
// fixed_verdict(): the verdict, when has_fixed_verdict().
LITTLE_LOOPS_INLINE evaluation_result fixed_verdict(const action_result* action,
                                       loop_dialect dialect) {
  if (action) return abnormal_action_result(*action);
  return evaluation_result{dialect == loop_dialect::current ? "yes" : "success",
                           evaluation_details{}};
}

// A number from a config field: JSON number/bool, or a (templated) string that parses.
// `what` names the field in messages.
LITTLE_LOOPS_INLINE expected<std::optional<double>, std::string> resolve_number(
    const std::optional<json>& value, const std::optional<compiled_template>& tpl,
    const interpolation_context* ctx) {
  if (!value || value->is_null()) return std::optional<double>{};
  if (value->is_number()) return std::optional<double>{value->get<double>()};
  if (value->is_boolean()) return std::optional<double>{value->get<bool>() ? 1.0 : 0.0};
  if (value->is_string() && tpl) {
    auto text = render_field(*tpl, ctx);
    if (!text) return unexpected(text.error().message);
    auto n = parse_number(*text);
    if (!n) return unexpected(fmt::format("could not convert string to float: '{}'", *text));
    return std::optional<double>{*n};
  }
  return unexpected(std::string("not a number"));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// The compiled evaluator of a state without `evaluate:` whose action is of `kind`:
// llm_structured for a prompt or slash command, mcp_result for an MCP tool call, exit_code
// for a shell command.
template <evaluator_type Type>
inline const compiled_evaluator& default_compiled_evaluator() {
  static const compiled_evaluator c = [] {
    evaluate_config cfg;
    cfg.type = Type;
    auto r = compile_evaluator(cfg);
    return r ? std::move(*r) : compiled_evaluator{};
  }();
  return c;
}
LITTLE_LOOPS_INLINE const compiled_evaluator& default_evaluator_for(action_kind kind);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE const compiled_evaluator& default_evaluator_for(action_kind kind) {
  switch (kind) {
    case action_kind::prompt:
    case action_kind::slash_command: return default_compiled_evaluator<evaluator_type::llm_structured>();
    case action_kind::mcp_tool: return default_compiled_evaluator<evaluator_type::mcp_result>();
    case action_kind::shell: break;
  }
  return default_compiled_evaluator<evaluator_type::exit_code>();
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_INLINE std::optional<std::string_view> keyed_number(std::string_view input, std::string_view key);
LITTLE_LOOPS_INLINE evaluation_result run_output_numeric(const compiled_evaluator& c, std::string_view input,
                                            const interpolation_context* ctx);
LITTLE_LOOPS_INLINE evaluation_result run_output_json(const compiled_evaluator& c, std::string_view input,
                                         const interpolation_context* ctx);
LITTLE_LOOPS_INLINE evaluation_result with_error_patterns(evaluation_result r, const evaluate_config& cfg,
                                             std::string_view input);
LITTLE_LOOPS_INLINE evaluation_result search_output(const compiled_evaluator& c, std::string_view input,
                                       const interpolation_context* ctx);
LITTLE_LOOPS_INLINE evaluation_result run_output_contains(const compiled_evaluator& c, std::string_view input,
                                             const interpolation_context* ctx);
LITTLE_LOOPS_INLINE evaluation_result run_convergence(const compiled_evaluator& c, std::string_view input,
                                         const interpolation_context* ctx,
                                         std::optional<double>* memory);
LITTLE_LOOPS_INLINE evaluation_result in_dialect(evaluation_result r, loop_dialect dialect,
                                    evaluator_type type);
LITTLE_LOOPS_INLINE bool blind_to_exit(evaluator_type type) noexcept;
LITTLE_LOOPS_INLINE evaluation_result blind_result(int exit_code);
LITTLE_LOOPS_INLINE std::optional<evaluation_result> judge_cut_output(const compiled_evaluator& c, std::string_view input,
                                                         const interpolation_context* ctx,
                                                         const action_result& a);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// The text of the number after the last `KEY =` (spaces allowed around `=`) in `input`.
LITTLE_LOOPS_INLINE std::optional<std::string_view> keyed_number(std::string_view input, std::string_view key) {
  std::optional<std::string_view> found;
  for (std::size_t at = input.find(key); at != std::string_view::npos; at = input.find(key, at + 1)) {
    std::size_t i = at + key.size();
    while (i < input.size() && (input[i] == ' ' || input[i] == '\t')) ++i;
    if (i >= input.size() || input[i] != '=') continue;
    ++i;
    while (i < input.size() && (input[i] == ' ' || input[i] == '\t')) ++i;
    std::size_t end = i;
    while (end < input.size() && (std::isdigit(static_cast<unsigned char>(input[end])) ||
                                  std::string_view("+-.eE").find(input[end]) != std::string_view::npos))
      ++end;
    if (end > i && parse_number(input.substr(i, end - i))) found = input.substr(i, end - i);
  }
  return found;
}

LITTLE_LOOPS_INLINE evaluation_result run_output_numeric(const compiled_evaluator& c, std::string_view input,
                                            const interpolation_context* ctx) {
  if (c.config.key) {
    auto number = keyed_number(input, *c.config.key);
    if (!number) return error_result(fmt::format("key '{}' not found in output", *c.config.key));
    input = *number;
  }
  const comparison_op op = c.config.op.value_or(comparison_op::eq);
  if (c.config.target && c.config.target->is_number_integer())
    return evaluate_output_numeric_target(input, op, *c.config.target);
  auto target = resolve_number(c.config.target, c.target, ctx);
  if (!target) return error_result("Cannot resolve target: " + target.error());
  return evaluate_output_numeric(input, op, target->value_or(0.0));
}

LITTLE_LOOPS_INLINE evaluation_result run_output_json(const compiled_evaluator& c, std::string_view input,
                                         const interpolation_context* ctx) {
  std::string path_text;
  path_segments rendered_path;
  const path_segments* segs = &c.json_path;
  if (c.path && !c.path->is_literal()) {
    auto p = render_field(*c.path, ctx);
    if (!p) return error_result("Cannot resolve path: " + p.error().message);
    path_text = std::move(*p);
    rendered_path = parse_json_path(path_text);
    segs = &rendered_path;
  } else if (c.path) {
    path_text = std::string(c.path->literal());
  }
  json target = c.config.target.value_or(json(nullptr));
  if (c.target && c.target->is_literal()) {
    // A string target without placeholders; `$${` escapes are undone (design §3.8).
    if (c.target->literal().size() != target.get_ref<const std::string&>().size())
      target = std::string(c.target->literal());
  } else if (c.target) {
    auto t = render_field(*c.target, ctx);
    if (!t) return error_result("Cannot resolve target: " + t.error().message);
    // A templated target that renders as a JSON number or boolean compares as one (a
    // context `true` renders "true"); any other text compares as a string.
    json parsed = detail::parse_json_or_discarded(*t);
    target = (!parsed.is_discarded() && (parsed.is_number() || parsed.is_boolean()))
                 ? std::move(parsed)
                 : json(*t);
  }
  output_document value;
  std::string message;
  switch (extract_json_path_of(input, *segs, path_text, value, message)) {
    case json_extract::invalid: return error_result("Invalid JSON: " + message);
    case json_extract::not_found: return error_result(fmt::format("Path not found: {}", path_text));
    case json_extract::found: break;
  }
  return compare_json_value(value, path_text, c.config.op.value_or(comparison_op::eq),
                            target);
}

// output_contains' `error_patterns`: a non-matching result becomes `error` when the output
// holds one of them (checked in order, plain substrings).
LITTLE_LOOPS_INLINE evaluation_result with_error_patterns(evaluation_result r, const evaluate_config& cfg,
                                             std::string_view input) {
  if (cfg.error_patterns.empty() || cfg.negate || r.verdict != "failure") return r;
  for (const auto& p : cfg.error_patterns) {
    if (input.find(p) == std::string_view::npos) continue;
    r.verdict = "error";
    json d = r.details.materialize();
    d["error_pattern"] = p;
    d["error"] = fmt::format("output contains error pattern '{}'", p);
    r.details = std::move(d);
    break;
  }
  return r;
}

// The pattern search of output_contains.
LITTLE_LOOPS_INLINE evaluation_result search_output(const compiled_evaluator& c, std::string_view input,
                                       const interpolation_context* ctx) {
  if (c.matcher) {
    return contains_result(c.matcher->search(input), c.matcher->pattern(), c.config.negate);
  }
  if (c.pattern && c.pattern_cache) {
    auto p = render_field(*c.pattern, ctx);
    if (!p) return error_result("Cannot resolve pattern: " + p.error().message);
    auto m = c.pattern_cache->get(*p);
    return contains_result(m->search(input), m->pattern(), c.config.negate);
  }
  // No pattern: the empty pattern matches everything (Python `re.search("", s)`).
  return contains_result(true, "", c.config.negate);
}

LITTLE_LOOPS_INLINE evaluation_result run_output_contains(const compiled_evaluator& c, std::string_view input,
                                             const interpolation_context* ctx) {
  return with_error_patterns(search_output(c, input, ctx), c.config, input);
}

LITTLE_LOOPS_INLINE evaluation_result run_convergence(const compiled_evaluator& c, std::string_view input,
                                         const interpolation_context* ctx,
                                         std::optional<double>* memory) {
  std::optional<double> previous;
  if (c.previous) {
    // An unresolvable `previous:` means "no previous value" (design §3.16).
    auto text = render_field(*c.previous, ctx);
    if (text) previous = parse_number(*text);
  } else if (memory) {
    previous = *memory;
  }
  auto current = parse_number(input);
  if (!current) {
    std::string msg = "Cannot parse output as number: ";
    msg += sanitize_utf8(utf8_prefix(input, 100));
    return error_result(std::move(msg));
  }
  if (memory) *memory = *current;
  auto target = resolve_number(c.config.target, c.target, ctx);
  if (!target) return error_result("Cannot resolve target: " + target.error());
  auto tolerance = resolve_number(c.config.tolerance, c.tolerance, ctx);
  if (!tolerance) return error_result("Cannot resolve tolerance: " + tolerance.error());
  return evaluate_convergence(*current, previous, target->value_or(0.0), tolerance->value_or(0.0),
                              c.config.direction);
}

// The current dialect's words for the seed's deterministic verdicts: success → yes,
// failure → no (design §6.1). The judge's and classify's verdicts are their own words.
LITTLE_LOOPS_INLINE evaluation_result in_dialect(evaluation_result r, loop_dialect dialect,
                                    evaluator_type type) {
  if (dialect != loop_dialect::current || type == evaluator_type::llm_structured ||
      type == evaluator_type::classify || type == evaluator_type::mcp_result)
    return r;
  if (r.verdict == "success") r.verdict = "yes";
  else if (r.verdict == "failure") r.verdict = "no";
  return r;
}

// The current dialect's blind-evaluator rule: output_*, convergence and classify do not read
// the output of an action that exited non-zero; the verdict is `error`.
LITTLE_LOOPS_INLINE bool blind_to_exit(evaluator_type type) noexcept {
  return type != evaluator_type::exit_code && type != evaluator_type::llm_structured &&
         type != evaluator_type::harbor_scorer && type != evaluator_type::mcp_result &&
         !is_stall_evaluator(type);
}

LITTLE_LOOPS_INLINE evaluation_result blind_result(int exit_code) {
  evaluation_result r;
  r.verdict = "error";
  r.details = json{{"exit_code", exit_code},
                   {"error", fmt::format("action exited with code {}", exit_code)}};
  return r;
}

// The verdict on an output the runner cut, for the evaluators that would misjudge it
// (nullopt: evaluate as usual). output_numeric, output_json and convergence read the whole
// output: `error`, saying it was cut. output_contains: a match found stands, nothing found
// is `error` (the match may be in what was cut). exit_code does not read it. Each carries
// `output_truncated` and `output_limit` in its details.
LITTLE_LOOPS_INLINE std::optional<evaluation_result> judge_cut_output(const compiled_evaluator& c, std::string_view input,
                                                         const interpolation_context* ctx,
                                                         const action_result& a) {
  const auto note = [&](evaluation_result r) {
    r.details["output_truncated"] = true;
    r.details["output_limit"] = a.output_limit;
    return r;
  };
  const auto cut = [&] {
    return note(error_result(fmt::format("{} (the runner's output limit): {} needs the whole output",
                                         output_cut_text(a.output_limit), to_string(c.config.type))));
  };
  switch (c.config.type) {
    case evaluator_type::output_numeric:
    case evaluator_type::output_json:
    case evaluator_type::convergence:
    case evaluator_type::harbor_scorer:
    case evaluator_type::mcp_result:
    case evaluator_type::classify: return cut();
    case evaluator_type::output_contains: {
      evaluation_result r = run_output_contains(c, input, ctx);
      if (r.verdict == "error") return note(std::move(r));
      bool matched = false;
      r.details.visit([&](const json& d) { matched = d.value("matched", false); });
      return matched ? note(std::move(r)) : cut();
    }
    case evaluator_type::exit_code: return note(evaluate_exit_code(a.exit_code));
    case evaluator_type::llm_structured:
    case evaluator_type::diff_stall:
    case evaluator_type::score_stall:
    case evaluator_type::open_question_stall:
    case evaluator_type::action_stall: return std::nullopt;
  }
  return std::nullopt;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

/// @brief The library's Evaluator: runs the deterministic evaluators in-library and sends
/// `llm_structured` to the `Judge` backend.
///
/// Rules (design §3.4, §3.10, §3.16):
/// - an action that timed out, was cancelled or killed by a signal → `error` with details
///   saying why, whatever the evaluator;
/// - an output the runner cut (action_result::truncated): output_numeric, output_json,
///   convergence, and output_contains that found nothing → `error` saying it was cut (the
///   whole output was needed); details get `output_truncated` and `output_limit`;
/// - no `evaluate:` → `llm_structured` with the default prompt for prompt/slash-command
///   actions (request.kind), `exit_code` for shell actions;
/// - no action and no `evaluate:` → `success` with empty details (the executor applies
///   this rule before calling any evaluator, and emits no evaluate event then);
/// - `source:` (a template) replaces the action output as the evaluated input;
/// - in the current dialect (request.dialect), `success`/`failure` are said `yes`/`no`, and
///   a non-zero exit makes every evaluator but exit_code and llm_structured `error`;
/// - template failures in evaluator fields → `error` with the reason in details.
/// @tparam Judge a JudgeBackend; no_judge_backend makes every judge evaluation `error`.
template <class Judge>
class basic_evaluator {
  static_assert(JudgeBackend<Judge>, "basic_evaluator<Judge>: Judge must model JudgeBackend");

 public:
  /// Wraps `judge` (default-constructed when omitted).
  explicit basic_evaluator(Judge judge = {}) : judge_(std::move(judge)) {}

  /// Evaluates one state execution. Never fails for evaluator problems (they are the verdict
  /// `error`); the expected is kept for the Evaluator concept.
  expected<evaluation_result, error> evaluate(const evaluation_request& request) {
    const action_result* action = request.action;
    if (detail::has_fixed_verdict(action, request.config != nullptr,
                                  detail::judges_own_failure(request.config, request.kind)))
      return detail::fixed_verdict(action, request.dialect);

    const compiled_evaluator* compiled = request.compiled;
    if (!request.config) {
      compiled = &detail::default_evaluator_for(request.kind);
    } else if (!compiled) {
      // Not compiled by the host: compile it for this evaluation.
      auto c = compile_evaluator(*request.config);
      if (!c) return detail::error_result(c.error().message);
      evaluation_request with = request;
      with.compiled = &*c;
      return evaluate(with);
    }
    if (request.dialect == loop_dialect::current && action && action->exit_code != 0 &&
        detail::blind_to_exit(compiled->config.type))
      return detail::blind_result(action->exit_code);
    if (request.dialect == loop_dialect::seed) return evaluate_compiled(request, *compiled);
    return detail::in_dialect(evaluate_compiled(request, *compiled), request.dialect,
                              compiled->config.type);
  }

  /// The judge backend.
  [[nodiscard]] Judge& judge() noexcept { return judge_; }
  [[nodiscard]] const Judge& judge() const noexcept { return judge_; }

 private:
  // Runs `compiled` on the action output (or its `source:`), in the seed's words.
  evaluation_result evaluate_compiled(const evaluation_request& request,
                                      const compiled_evaluator& compiled_ref) {
    const compiled_evaluator* compiled = &compiled_ref;
    const action_result* action = request.action;
    const evaluate_config& cfg = compiled->config;
    const interpolation_context* ctx = request.context;

    std::string_view input = action ? std::string_view{action->output} : std::string_view{};
    std::string source_text;
    if (compiled->source) {
      auto s = detail::render_field(*compiled->source, ctx);
      if (!s) return detail::error_result("Cannot resolve source: " + s.error().message);
      source_text = std::move(*s);
      input = source_text;
    } else if (action && action->truncated) {
      if (auto judged = detail::judge_cut_output(*compiled, input, ctx, *action)) return *std::move(judged);
    }

    switch (cfg.type) {
      case evaluator_type::exit_code:
        return evaluate_exit_code(action ? action->exit_code : 0);
      case evaluator_type::output_numeric:
        return detail::run_output_numeric(*compiled, input, ctx);
      case evaluator_type::output_json:
        return detail::run_output_json(*compiled, input, ctx);
      case evaluator_type::output_contains:
        return detail::run_output_contains(*compiled, input, ctx);
      case evaluator_type::convergence:
        return detail::run_convergence(*compiled, input, ctx, request.convergence_memory);
      case evaluator_type::classify:
        return evaluate_classify(input, cfg.line.value_or(json(nullptr)));
      case evaluator_type::llm_structured:
        return ask_judge(request, *compiled, input);
      case evaluator_type::harbor_scorer:
        return evaluate_harbor_scorer(input, action ? action->exit_code : 0);
      case evaluator_type::mcp_result:
        return evaluate_mcp_result(input, action ? action->exit_code : 0);
      case evaluator_type::diff_stall:
      case evaluator_type::score_stall:
      case evaluator_type::open_question_stall:
      case evaluator_type::action_stall:
        // Their memory is the run's and what they read comes through the runner: the
        // executor judges them (detail/stall_memory.hpp) without asking an Evaluator.
        return detail::error_result(fmt::format(
            "{} is judged by the executor, which keeps its memory", to_string(cfg.type)));
    }
    return detail::error_result("unknown evaluator type");
  }

  // llm_structured: asks the judge backend about `input`, within the loop's deadline.
  evaluation_result ask_judge(const evaluation_request& request,
                              [[maybe_unused]] const compiled_evaluator& compiled,
                              [[maybe_unused]] std::string_view input) {
    static const llm_config default_llm{};
    const llm_config& llm = request.llm ? *request.llm : default_llm;
    if (!llm.enabled) return detail::judge_error_result("LLM evaluation disabled", "disabled");
    if constexpr (std::is_same_v<Judge, no_judge_backend>) {
      return detail::judge_error_result("no judge backend", "missing_dependency");
    } else {
      std::string instruction;
      if (compiled.prompt) {
        auto p = detail::render_field(*compiled.prompt, request.context);
        if (!p) return detail::error_result("Cannot resolve prompt: " + p.error().message);
        instruction = std::move(*p);
      }
      const evaluate_config& cfg = compiled.config;
      const json* schema = cfg.schema ? &*cfg.schema : nullptr;
      // The loop's deadline bounds the judge too (request.time_left).
      if (request.time_left && request.time_left->count() <= 0) {
        evaluation_result r = detail::judge_error_result("LLM evaluation timeout", "timeout");
        r.details["reason"] =
            "LLM evaluation timeout: the loop's timeout has passed (the judge was not asked)";
        return r;
      }
      llm_config bounded = llm;
      if (request.time_left)
        bounded.timeout =
            std::min(llm.timeout, static_cast<double>(request.time_left->count()) / 1000.0);
      return evaluate_llm_structured(judge_, input, instruction, schema, cfg.min_confidence,
                                     cfg.uncertain_suffix, bounded);
    }
  }

  Judge judge_;
};

/// The default evaluator: deterministic evaluators only; llm_structured yields `error`
/// ("no judge backend").
using default_evaluator = basic_evaluator<no_judge_backend>;

#if !LITTLE_LOOPS_DETAIL_DEFINITIONS
// Compiled mode: the library instantiates the default evaluator once (src/little_loops.cpp).
extern template class basic_evaluator<no_judge_backend>;
#endif

namespace detail {
/// True for the library's evaluators, whose default verdict of a shell action (no
/// `evaluate:`) is its exit code, decided at once without calling anything.
template <class T>
inline constexpr bool is_basic_evaluator = false;
template <class Judge>
inline constexpr bool is_basic_evaluator<basic_evaluator<Judge>> = true;

/// True when `Eval` decides `req` at once: the library's exit-code verdict of a shell action
/// without `evaluate:` (an executor need not read the clock again after it).
template <class Eval>
constexpr bool instant_verdict(const evaluation_request& req) noexcept {
  return is_basic_evaluator<Eval> && !req.config && req.kind == action_kind::shell;
}
}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END
