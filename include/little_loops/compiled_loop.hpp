// little_loops — compiled_loop: a validated loop with templates, evaluators and routes compiled once
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/evaluators.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/snapshot.hpp>
#include <little_loops/validation.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format
#  include <fmt/format.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// A route target compiled at load time: a state index, `$current`, a template rendered
/// at run time (and then looked up by name), or a name that is not a state.
struct compiled_target {
  /// What the target is.
  enum class kind : unsigned char {
    state,    ///< a known state: `index`
    current,  ///< `$current`: re-enter the state being executed
    dynamic,  ///< a `${...}` template: rendered and checked when taken
    unknown,  ///< names no state: taking it ends the run with errc::unknown_state
  };
  kind type = kind::state;
  std::size_t index = 0;          ///< kind::state
  compiled_template tmpl;         ///< kind::dynamic
  std::string source;             ///< the target as written
  std::string path;               ///< where it is written, e.g. `states.check.on_failure`
};

/// One state with everything the executor needs per step precomputed.
struct compiled_state {
  std::string name;
  const state_config* config = nullptr;      ///< points into compiled_loop::loop()
  bool terminal = false;
  bool failure = false;                      ///< terminal marked `failure: true`
  std::optional<compiled_template> action;   ///< the action text, parsed
  action_kind kind = action_kind::shell;     ///< effective action kind
  /// No `action_type` and a templated action: the runner gets a slash command when the
  /// rendered text is one (is_slash_command_text; the default evaluator still goes by
  /// `kind`, from the text as written, as in the seed).
  bool kind_from_rendered = false;
  std::optional<std::chrono::milliseconds> timeout;  ///< the state's `timeout:`
  std::optional<compiled_evaluator> evaluator;        ///< set when `evaluate:` is present
  std::string_view evaluator_name = "default";        ///< `evaluate` event `type`
  std::optional<compiled_target> next;
  std::vector<std::pair<std::string, compiled_target>> routes;  ///< route table, exact keys
  std::optional<compiled_target> route_default;                 ///< `_`
  std::optional<compiled_target> route_error;                   ///< `_error`
  std::vector<std::pair<std::string, compiled_target>> on;      ///< `on_<verdict>`
  std::optional<std::size_t> on_error;     ///< index into `on` of `on_error`
  compiled_target maintain_target;         ///< `on_maintain` or the initial state
  std::optional<std::string> capture;      ///< `capture:` name
  bool dynamic_targets = false;            ///< some target is a template
  std::optional<int> max_retries;          ///< direct self re-entries allowed
  std::optional<compiled_target> retry_exhausted;  ///< `on_retry_exhausted` (a state name)
  std::vector<int> retryable_exit_codes;   ///< exit codes `on_error` retries
  /// The throttle counts this state's actions (throttle.hpp): every action state in the
  /// current dialect, in the seed dialect one that writes `throttle:` or `on_throttle_hard`.
  bool throttled = false;
  bool throttle_exempt = false;                    ///< `type: learning`: never made to leave
  throttle_limits throttle;                        ///< its thresholds
  std::optional<compiled_target> throttle_hard;    ///< `on_throttle_hard` (a state name)

  /// True when the action runs as an LLM prompt (prompt or slash command).
  [[nodiscard]] bool is_prompt() const noexcept {
    return kind == action_kind::prompt || kind == action_kind::slash_command;
  }
};

/// @brief A loop compiled for execution: validated, every template and evaluator compiled,
/// every static route target resolved to a state index. Immutable and shareable between
/// executors (`std::shared_ptr<const compiled_loop>`), so many runs pay the cost once.
class compiled_loop {
 public:
  compiled_loop(const compiled_loop&) = delete;
  compiled_loop& operator=(const compiled_loop&) = delete;

  /// @brief Validate and compile `loop`.
  ///
  /// Only problems that make running impossible refuse the loop (see
  /// compile_blocking()): a loop without a terminal state is compiled (it ends by
  /// `max_iterations`, `timeout` or a stop), and a target naming an unknown state is compiled
  /// into one that ends the run with `errc::unknown_state` if it is ever taken. validate()
  /// and load_loop() still report both as errors: loading a document stays strict.
  /// @return the compiled loop, or `errc::invalid_loop` (all validation diagnostics in
  /// `details`), `errc::template_syntax`, `errc::unknown_state` (unknown `initial`), or an
  /// evaluator's compile error, each with the path of the offending field.
  static expected<std::shared_ptr<const compiled_loop>, error> compile(fsm_loop loop);

  /// @brief Compile a loop validate_loop() accepted: no second validation, and the templates
  /// validation parsed are reused.
  static expected<std::shared_ptr<const compiled_loop>, error> compile(validated_loop loop);

  /// The loop definition this was compiled from.
  [[nodiscard]] const fsm_loop& loop() const noexcept { return loop_; }
  /// The compiled states, in document order.
  [[nodiscard]] const std::vector<compiled_state>& states() const noexcept { return states_; }
  /// The state at `index`.
  [[nodiscard]] const compiled_state& state(std::size_t index) const noexcept {
    return states_[index];
  }
  /// The index of the state called `name`, if any.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const noexcept;
  /// The index of the initial state.
  [[nodiscard]] std::size_t initial() const noexcept { return initial_; }
  /// The dialect the loop runs in (dialect_of()).
  [[nodiscard]] loop_dialect dialect() const noexcept { return dialect_; }
  /// True when some state has `max_retries` (the executor then counts self re-entries).
  [[nodiscard]] bool counts_retries() const noexcept { return counts_retries_; }
  /// The full-pass cap's handler (`on_max_iterations` beside `max_steps`), if any.
  [[nodiscard]] const std::optional<compiled_target>& on_max_passes() const noexcept {
    return on_max_passes_;
  }
  /// The loop's `on_max_iterations` target, if it has one (kind::state, or kind::unknown
  /// when it names no state).
  [[nodiscard]] const std::optional<compiled_target>& on_max_iterations() const noexcept {
    return on_max_iterations_;
  }

  /// @brief True when the validation finding `d` stops a loop from being compiled: every
  /// error except `no-terminal` and `unknown-state`, which only matter if the run gets there
  /// (a loop without a terminal ends by a limit; an unknown target fails when taken).
  [[nodiscard]] static bool compile_blocking(const diagnostic& d) noexcept {
    return d.level == severity::error && d.code != "no-terminal" && d.code != "unknown-state";
  }
  /// loop_digest() of the definition (computed once).
  [[nodiscard]] const std::string& digest() const noexcept { return digest_; }

 private:
  explicit compiled_loop(fsm_loop loop) : loop_(std::move(loop)) {}

  // Building: defined where the definitions are compiled (header-only, or the library).
#if LITTLE_LOOPS_DETAIL_DEFINITIONS
  static expected<std::shared_ptr<const compiled_loop>, error> make(fsm_loop loop,
                                                                    const template_table& templates) {
    std::shared_ptr<compiled_loop> out(new compiled_loop(std::move(loop)));
    out->templates_ = &templates;
    auto built = out->build();
    out->templates_ = nullptr;
    if (!built) return unexpected(built.error());
    return std::shared_ptr<const compiled_loop>(std::move(out));
  }

  static error at(errc code, std::string path, std::string message) {
    return error{code, std::move(message), std::move(path)};
  }

  expected<std::size_t, error> lookup(std::string_view name, const std::string& path) const {
    if (auto i = find(name)) return *i;
    return unexpected(at(errc::unknown_state, path, fmt::format("unknown state \"{}\"", name)));
  }

  // A target naming a state as written (no template): kind::state, or kind::unknown.
  compiled_target static_target(std::string_view name, const std::string& source,
                                const std::string& path) const {
    compiled_target t;
    t.source = source;
    t.path = path;
    if (auto i = find(name))
      t.index = *i;
    else
      t.type = compiled_target::kind::unknown;
    return t;
  }

  expected<compiled_target, error> compile_target(const std::string& text, const std::string& path) {
    compiled_target t;
    t.source = text;
    t.path = path;
    if (text == "$current") {
      t.type = compiled_target::kind::current;
      return t;
    }
    auto tpl = templates_->compile(text);
    if (!tpl) {
      error e = tpl.error();
      e.path = path;
      return unexpected(std::move(e));
    }
    if (tpl->is_literal()) return static_target(tpl->literal(), text, path);
    t.type = compiled_target::kind::dynamic;
    t.tmpl = std::move(*tpl);
    return t;
  }

  // Every state compiled, in document order; the first error stops.
  expected<void, error> build() {
    index_states();
    auto init = lookup(loop_.initial, "initial");
    if (!init) return unexpected(init.error());
    initial_ = *init;
    if (loop_.on_max_iterations)
      on_max_iterations_ =
          static_target(*loop_.on_max_iterations, *loop_.on_max_iterations,
                        loop_.max_steps_spelling ? "on_max_steps" : "on_max_iterations");
    if (loop_.on_max_passes)
      on_max_passes_ = static_target(*loop_.on_max_passes, *loop_.on_max_passes, "on_max_iterations");
    dialect_ = dialect_of(loop_);
    digest_ = loop_digest(loop_);
    for (auto& s : states_) {
      const std::string base = "states." + s.name;
      if (auto r = build_state(s, base); !r) return r;
      if (auto r = build_routes(s, base); !r) return r;
    }
    return {};
  }

  // One compiled_state per state (names only) and the sorted name index find() searches.
  void index_states() {
    states_.reserve(loop_.states.size());
    by_name_.reserve(loop_.states.size());
    for (const auto& [name, cfg] : loop_.states) {
      compiled_state s;
      s.name = name;
      s.config = &cfg;
      states_.push_back(std::move(s));
    }
    for (std::size_t i = 0; i < states_.size(); ++i) by_name_.emplace_back(states_[i].name, i);
    std::sort(by_name_.begin(), by_name_.end());
  }

  // The state's own settings, its action template and its evaluator.
  expected<void, error> build_state(compiled_state& s, const std::string& base) {
    const state_config& cfg = *s.config;
    s.terminal = cfg.terminal;
    s.failure = cfg.failure;
    s.capture = cfg.capture;
    s.max_retries = cfg.max_retries;
    counts_retries_ = counts_retries_ || cfg.max_retries.has_value();
    if (cfg.on_retry_exhausted)
      s.retry_exhausted = static_target(*cfg.on_retry_exhausted, *cfg.on_retry_exhausted,
                                        base + ".on_retry_exhausted");
    s.retryable_exit_codes = cfg.retryable_exit_codes;
    s.throttled = dialect_ == loop_dialect::current || cfg.throttle || cfg.on_throttle_hard;
    s.throttle_exempt = cfg.type == "learning";
    s.throttle = effective_throttle(cfg.throttle);
    if (cfg.on_throttle_hard)
      s.throttle_hard = static_target(*cfg.on_throttle_hard, *cfg.on_throttle_hard,
                                      base + ".on_throttle_hard");
    // 0: the runner's default (seed 002); none: the loop's default_timeout, if any.
    const std::optional<double> timeout = cfg.timeout ? cfg.timeout : loop_.default_timeout;
    if (timeout && *timeout > 0)
      s.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*timeout * 1000.0));
    // An empty `action: ""` runs nothing, as in the seed (`if state.action:`); validation
    // warns about it (`empty-action`).
    if (cfg.action && !cfg.action->empty()) {
      auto tpl = templates_->compile(*cfg.action);
      if (!tpl) {
        error e = tpl.error();
        e.path = base + ".action";
        return unexpected(std::move(e));
      }
      s.action = std::move(*tpl);
      if (cfg.action_type) {
        s.kind = *cfg.action_type;
      } else {
        if (is_slash_command_text(*cfg.action)) s.kind = action_kind::slash_command;
        s.kind_from_rendered = !s.action->is_literal();
      }
    } else if (cfg.action_type) {
      s.kind = *cfg.action_type;
    }
    if (cfg.evaluate) {
      auto ev = compile_evaluator(*cfg.evaluate, templates_);
      if (!ev) {
        error e = ev.error();
        if (e.path.empty()) e.path = base + ".evaluate";
        else if (e.path.rfind("states.", 0) != 0) e.path = base + ".evaluate." + e.path;
        return unexpected(std::move(e));
      }
      s.evaluator.emplace(std::move(*ev));
      s.evaluator_name = to_string(cfg.evaluate->type);
    }
    return {};
  }

  // The state's targets: `next`, the route table, `on_<verdict>` and `on_maintain`.
  expected<void, error> build_routes(compiled_state& s, const std::string& base) {
    const state_config& cfg = *s.config;
    auto add = [&](std::optional<compiled_target>& slot, const std::string& text,
                   const std::string& path) -> expected<void, error> {
      auto t = compile_target(text, path);
      if (!t) return unexpected(t.error());
      if (t->type == compiled_target::kind::dynamic) s.dynamic_targets = true;
      slot = std::move(*t);
      return {};
    };
    std::optional<compiled_target> t;
    if (cfg.next) {
      if (auto r = add(s.next, *cfg.next, base + ".next"); !r) return r;
    }
    if (cfg.route) {
      for (const auto& [verdict, target] : cfg.route->routes) {
        if (auto r = add(t, target, base + ".route." + verdict); !r) return r;
        s.routes.emplace_back(verdict, std::move(*t));
      }
      if (cfg.route->default_target) {
        if (auto r = add(s.route_default, *cfg.route->default_target, base + ".route._"); !r)
          return r;
      }
      if (cfg.route->error_target) {
        if (auto r = add(s.route_error, *cfg.route->error_target, base + ".route._error"); !r)
          return r;
      }
    }
    for (const auto& [verdict, target] : cfg.on) {
      if (auto r = add(t, target, base + ".on_" + verdict); !r) return r;
      if (verdict == "error") s.on_error = s.on.size();
      s.on.emplace_back(verdict, std::move(*t));
    }
    if (cfg.on_maintain) {
      s.maintain_target = static_target(*cfg.on_maintain, *cfg.on_maintain, base + ".on_maintain");
    } else {
      s.maintain_target.index = initial_;
      s.maintain_target.source = loop_.initial;
      s.maintain_target.path = "initial";
    }
    return {};
  }
#else
  static expected<std::shared_ptr<const compiled_loop>, error> make(fsm_loop loop,
                                                                    const template_table& templates);
  static error at(errc code, std::string path, std::string message);
  expected<std::size_t, error> lookup(std::string_view name, const std::string& path) const;
  compiled_target static_target(std::string_view name, const std::string& source,
                                const std::string& path) const;
  expected<compiled_target, error> compile_target(const std::string& text, const std::string& path);
  expected<void, error> build();
  void index_states();
  expected<void, error> build_state(compiled_state& s, const std::string& base);
  expected<void, error> build_routes(compiled_state& s, const std::string& base);
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

  fsm_loop loop_;
  std::vector<compiled_state> states_;
  std::vector<std::pair<std::string_view, std::size_t>> by_name_;
  std::size_t initial_ = 0;
  std::optional<compiled_target> on_max_iterations_;
  std::optional<compiled_target> on_max_passes_;
  loop_dialect dialect_ = loop_dialect::seed;
  bool counts_retries_ = false;
  std::string digest_;
  const template_table* templates_ = nullptr;  // while build() runs: the templates validation kept
};

/// Validate and compile a loop (same as `compiled_loop::compile`).
LITTLE_LOOPS_INLINE expected<std::shared_ptr<const compiled_loop>, error> compile_loop(fsm_loop loop);

namespace detail {
/// compiled_loop::compile() of a copy of `loop`: the executors' factories call it, so that a
/// compiled-mode host does not compile the copy of every schema type.
LITTLE_LOOPS_INLINE expected<std::shared_ptr<const compiled_loop>, error> compile_copy(
    const fsm_loop& loop);
}  // namespace detail

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::optional<std::size_t> compiled_loop::find(std::string_view name) const noexcept {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [](const auto& entry, std::string_view n) { return entry.first < n; });
  if (it == by_name_.end() || it->first != name) return std::nullopt;
  return it->second;
}

LITTLE_LOOPS_INLINE expected<std::shared_ptr<const compiled_loop>, error> compiled_loop::compile(
    fsm_loop loop) {
  template_table templates;
  diagnostics found = validate(loop, &templates);
  for (const auto& d : found)
    if (compile_blocking(d)) return unexpected(detail::invalid_loop_error(std::move(found)));
  return make(std::move(loop), templates);
}

LITTLE_LOOPS_INLINE expected<std::shared_ptr<const compiled_loop>, error> compiled_loop::compile(
    validated_loop loop) {
  return make(std::move(loop.loop_), loop.templates_);
}

LITTLE_LOOPS_INLINE expected<std::shared_ptr<const compiled_loop>, error> compile_loop(fsm_loop loop) {
  return compiled_loop::compile(std::move(loop));
}

LITTLE_LOOPS_INLINE expected<std::shared_ptr<const compiled_loop>, error> detail::compile_copy(
    const fsm_loop& loop) {
  return compiled_loop::compile(loop);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END
