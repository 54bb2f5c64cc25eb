// little_loops — `${namespace.path}` templates: compiled once, rendered without parsing
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/template_checker.hpp>
#include <little_loops/detail/template_parser.hpp>
#include <little_loops/detail/template_renderer.hpp>
#include <little_loops/detail/utf8.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief A template parsed once: literal runs and variable references.
///
/// Build with compile_template(); render with render_to() as often as needed, without any
/// parsing. Literal-only templates can skip rendering entirely: see is_literal()/literal().
class compiled_template {
 public:
  compiled_template() = default;

  /// The template text as written.
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  /// True when the template has no variables (its rendering is literal()).
  [[nodiscard]] bool is_literal() const noexcept { return variables_ == 0; }
  /// The rendered text of a literal-only template (`$${` already unescaped).
  [[nodiscard]] std::string_view literal() const noexcept {
    return parts_.empty() ? std::string_view{} : std::string_view{parts_.front().text};
  }
  /// Number of variable references.
  [[nodiscard]] std::size_t variable_count() const noexcept { return variables_; }
 private:
  friend expected<compiled_template, error> compile_template(std::string_view text);
  friend expected<void, error> render_to(const compiled_template& tpl, const interpolation_context& ctx,
                                         std::string& out);
  friend class template_table;
  std::string source_;
  std::vector<detail::template_part> parts_;
  std::size_t variables_ = 0;
};

LITTLE_LOOPS_INLINE std::string escape_template(std::string_view text);
LITTLE_LOOPS_INLINE expected<compiled_template, error> compile_template(std::string_view text);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief The template text that renders `text` exactly: every `${` written as `$${` (the one
/// escape, design §3.8). For generating loops: a state name used as a route target must not
/// be read as a placeholder.
LITTLE_LOOPS_INLINE std::string escape_template(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') out += '$';
    out += text[i];
  }
  return out;
}

/// @brief Parses `text` into a compiled_template.
///
/// Syntax: `${ns.path}` with suffixes `?` (empty when missing), `:shell` (POSIX single-quote
/// escaping, exactly as Python's shlex.quote; may also follow a default:
/// `${x.y:default=v:shell}`) and `:default=VALUE` (used when missing); `$${` renders a
/// literal `${`, also inside a default value.
/// @return the template, or errc::template_syntax for an unterminated or empty `${`, an
/// unknown namespace, an unknown `state.`/`loop.` key without `?` or `:default=`, a missing
/// `namespace.` prefix or a bash operator inside `${...}` (the message suggests `$${...}`).
LITTLE_LOOPS_INLINE expected<compiled_template, error> compile_template(std::string_view text) {
  compiled_template t;
  t.source_ = std::string(text);
  auto variables = detail::parse_template(text, t.parts_);
  if (!variables) return unexpected(std::move(variables.error()));
  t.variables_ = *variables;
  return t;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {
LITTLE_LOOPS_INLINE error too_large(const compiled_template& tpl, std::size_t limit);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The errc::template_too_large error of `tpl` (its source cut to 80 characters).
LITTLE_LOOPS_INLINE error too_large(const compiled_template& tpl, std::size_t limit) {
  const std::string_view shown = utf8_prefix(tpl.source(), 80);
  const bool cut = shown.size() < tpl.source().size();
  return error{errc::template_too_large,
               fmt::format("template \"{}{}\" renders to more than {} bytes (its size limit)", shown,
                           cut ? "…" : "", limit)};
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS
}  // namespace detail

LITTLE_LOOPS_INLINE expected<void, error> render_to(const compiled_template& tpl,
                                       const interpolation_context& ctx, std::string& out);
LITTLE_LOOPS_INLINE expected<std::string, error> render(const compiled_template& tpl,
                                           const interpolation_context& ctx);
LITTLE_LOOPS_INLINE expected<std::string, error> interpolate(std::string_view text,
                                                const interpolation_context& ctx);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief Renders `tpl` against `ctx`, appending to `out` (no parsing happens here).
/// @return errc::missing_variable naming the template, the variable and the keys available
/// where the lookup stopped, unless the variable has `?` or `:default=`;
/// errc::template_too_large naming the template and `ctx.size_limit` when the rendering
/// grows past that limit (checked after every part: memory stays within the limit plus one
/// value). On error `out` keeps whatever was appended before the failing part.
LITTLE_LOOPS_INLINE expected<void, error> render_to(const compiled_template& tpl,
                                       const interpolation_context& ctx, std::string& out) {
  const std::size_t base = out.size();
  for (const auto& p : tpl.parts_) {
    if (out.size() - base > ctx.size_limit) return unexpected(detail::too_large(tpl, ctx.size_limit));
    if (!p.is_variable) {
      out += p.text;
      continue;
    }
    const std::size_t start = out.size();
    auto missing = detail::resolve_part(out, p, ctx);
    if (missing) {
      out.resize(start);
      if (p.default_value) {
        out += *p.default_value;
      } else if (!p.optional) {
        return unexpected(error{
            errc::missing_variable,
            fmt::format("cannot resolve ${{{}}} in template \"{}\": {}", p.text, tpl.source(),
                        *missing)});
      }
    }
    if (p.shell) detail::shell_quote_tail(out, start);
  }
  if (out.size() - base > ctx.size_limit) return unexpected(detail::too_large(tpl, ctx.size_limit));
  // Default-initialised: tl::expected's defaulted constructor makes `return {}` zero the
  // error's storage first (a third of a short rendering's time).
  expected<void, error> rendered;
  return rendered;
}

/// @brief Renders `tpl` into a new string.
LITTLE_LOOPS_INLINE expected<std::string, error> render(const compiled_template& tpl,
                                           const interpolation_context& ctx) {
  if (tpl.is_literal()) return std::string(tpl.literal());
  std::string out;
  auto r = render_to(tpl, ctx, out);
  if (!r) return unexpected(std::move(r.error()));
  return out;
}

/// @brief Compiles and renders `text` in one go (convenience; parses every call).
LITTLE_LOOPS_INLINE expected<std::string, error> interpolate(std::string_view text,
                                                const interpolation_context& ctx) {
  auto tpl = compile_template(text);
  if (!tpl) return unexpected(std::move(tpl.error()));
  return render(*tpl, ctx);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// True when `text` contains a `${` that is not the `$${` escape.
inline bool has_template(std::string_view text) noexcept {
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '$' && text[i + 1] == '$' && i + 2 < text.size() && text[i + 2] == '{') {
      i += 2;
      continue;
    }
    if (text[i] == '$' && text[i + 1] == '{') return true;
  }
  return false;
}

/// @brief The templates of one loop, parsed once: validate() parses every templated field and
/// keeps the result here, by its text, so compiling the loop (compiled_loop::compile,
/// compile_evaluator) reuses it instead of parsing the template again.
class template_table {
 public:
  /// The compiled template of `text`: the one validation kept, else compiled now.
  [[nodiscard]] expected<compiled_template, error> compile(std::string_view text) const;
  /// How many distinct template texts are kept.
  [[nodiscard]] std::size_t size() const noexcept { return parsed_.size(); }

 private:
  friend void validate_templates(const fsm_loop& loop, diagnostics& out, template_table* keep);
  detail::parsed_templates parsed_;
};

LITTLE_LOOPS_INLINE void validate_templates(const fsm_loop& loop, diagnostics& out, template_table* keep = nullptr);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE expected<compiled_template, error> template_table::compile(std::string_view text) const {
  const auto it = parsed_.find(text);
  if (it == parsed_.end()) return compile_template(text);
  compiled_template t;
  t.source_ = std::string(text);
  t.parts_ = it->second.parts;
  t.variables_ = it->second.variables;
  return t;
}

/// @brief Template rules of validate(): every templated field (action, next, route targets,
/// on_<verdict> targets, evaluator string fields) must compile; reports
/// malformed templates (`template-syntax`), unknown namespaces
/// (`template-unknown-namespace`), unknown `state.`/`loop.` keys (`template-unknown-key`),
/// bash operators inside `${…}` with a `$${…}` hint (`template-bash-operator`),
/// all errors; warns about `${captured.X}` where no state captures X
/// (`template-unknown-capture`; not for references with `?` or `:default=`), about raw
/// `${context.…}` outside quotes in shell actions (`template-unquoted-context`, suggesting
/// `:shell`; not for an action that is one `${context.…}` and nothing else, a command kept in
/// the context, as the convergence paradigm's `${context.metric_cmd}`) and about
/// `${captured.…}`, `${prev.…}`, `${result.…}` text in shell actions, quoted or not
/// (`template-unquoted-output`, suggesting `:shell`); reports `${context.X}` for an X the
/// loop does not define but close to a key it does (`template-unknown-context`, an error
/// with a did-you-mean; not with `?` or `:default=`, nor for keys the host injects).
/// With `keep`, every template that parses is kept there for compiling (see template_table).
LITTLE_LOOPS_INLINE void validate_templates(const fsm_loop& loop, diagnostics& out, template_table* keep) {
  detail::check_loop_templates(loop, out, keep != nullptr ? &keep->parsed_ : nullptr);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END
