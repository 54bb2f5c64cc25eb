// little_loops — `${namespace.path}` templates: compiled once, rendered without parsing
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/feedback.hpp>
#include <little_loops/detail/json_path.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The namespaces a template variable can read (design §3.8).
enum class template_namespace { context, captured, prev, result, state, loop, env };

namespace detail {

inline constexpr std::array<std::string_view, 7> namespace_names{
    "context", "captured", "prev", "result", "state", "loop", "env"};
inline constexpr std::array<std::string_view, 2> template_state_keys{"name", "iteration"};
inline constexpr std::array<std::string_view, 5> template_loop_keys{
    "name", "started_at", "elapsed_ms", "elapsed", "max_iterations"};
inline constexpr std::array<std::string_view, 7> template_prev_keys{
    "state", "output", "stderr", "exit_code", "verdict", "details", "evaluation"};
inline constexpr std::array<std::string_view, 5> template_captured_keys{"output", "stderr", "exit_code",
                                                               "duration_ms", "verdict"};
inline constexpr std::array<std::string_view, 2> template_result_keys{"verdict", "details"};

// Bash parameter-expansion operators that are never valid inside `${ns.path}`.
inline constexpr std::array<std::string_view, 8> bash_operators{":-", ":+", ":=", ":?",
                                                                "##", "%%", "[@]", "[*]"};

template <std::size_t N>
inline std::string join_names(const std::array<std::string_view, N>& names) {
  std::string s;
  for (auto n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

// One piece of a compiled template: literal text, or a variable reference.
struct template_part {
  bool is_variable = false;
  std::string text;  // literal: the text to append; variable: `ns.path` as written
  // --- variables only ---
  template_namespace ns = template_namespace::context;
  path_segments path;                        // segments after the namespace
  std::string env_name;                      // env: the variable name
  std::optional<std::string> default_value;  // `:default=VALUE`
  bool optional = false;                     // `?`
  bool shell = false;                        // `:shell`
  std::size_t offset = 0;                    // position of `${` in the source
  std::size_t length = 0;                    // length of `${...}` in the source
};

}  // namespace detail

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
  /// The parsed parts (literal runs and variables), in order.
  [[nodiscard]] const std::vector<detail::template_part>& parts() const noexcept {
    return parts_;
  }

 private:
  friend expected<compiled_template, error> compile_template(std::string_view text);
  std::string source_;
  std::vector<detail::template_part> parts_;
  std::size_t variables_ = 0;
};

namespace detail {

inline std::optional<template_namespace> parse_namespace(std::string_view s) noexcept {
  for (std::size_t i = 0; i < namespace_names.size(); ++i)
    if (namespace_names[i] == s) return static_cast<template_namespace>(i);
  return std::nullopt;
}

inline bool ends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

template <std::size_t N>
inline bool contains_name(const std::array<std::string_view, N>& names, std::string_view s) {
  for (auto n : names)
    if (n == s) return true;
  return false;
}

inline error template_error(std::string_view source, std::string message) {
  return error{errc::template_syntax,
               fmt::format("invalid template \"{}\": {}", source, message)};
}

// `$${` inside a `:default=` value renders `${`, as everywhere else in a template.
inline std::string unescape_default(std::string_view v) {
  std::string s;
  s.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '$' && v.compare(i, 3, "$${") == 0) {
      s += "${";
      i += 2;
    } else {
      s += v[i];
    }
  }
  return s;
}

// Parses the inside of one `${...}` into `part`. Returns an error message on failure.
//
// Suffixes follow the original's parse_interpolation_suffixes: `:shell` is recognised right
// before `:default=`, at the very end (also after a default value: `:default=v:shell` quotes
// `v`) or right before a final `?`; then the text splits at the first `:default=`; otherwise
// a final `?` makes the reference optional. `?` and `:default=` together are ambiguous.
inline std::optional<std::string> parse_variable(std::string_view expr, template_part& part) {
  if (expr.empty()) return std::string("empty ${}");
  std::string body(expr);
  if (auto pos = body.find(":shell:default="); pos != std::string::npos) {
    body.erase(pos, 6);
    part.shell = true;
  } else if (ends_with(body, ":shell?")) {
    body.erase(body.size() - 7, 6);
    part.shell = true;
  } else if (ends_with(body, ":shell")) {
    body.resize(body.size() - 6);
    part.shell = true;
  }
  std::string_view var = body;
  if (auto pos = var.find(":default="); pos != std::string_view::npos) {
    part.default_value = unescape_default(var.substr(pos + 9));
    var = var.substr(0, pos);
  }
  for (auto op : bash_operators) {
    if (var.find(op) != std::string_view::npos) {
      return fmt::format("bash operator \"{}\" inside ${{{}}} is not supported; write "
                         "$${{{}}} to pass a literal ${{...}} to the shell",
                         op, expr, expr);
    }
  }
  if (ends_with(var, "?")) {
    if (part.default_value)
      return fmt::format("Ambiguous suffix: ${{{}}} (:default=... and ? are mutually exclusive)",
                         expr);
    part.optional = true;
    var.remove_suffix(1);
  }
  auto dot = var.find('.');
  if (dot == std::string_view::npos) {
    return fmt::format("Invalid variable: ${{{}}} (expected namespace.path); write $${{{}}} "
                       "for a literal ${{...}}",
                       expr, expr);
  }
  std::string_view ns_text = var.substr(0, dot);
  std::string_view rest = var.substr(dot + 1);
  auto ns = parse_namespace(ns_text);
  if (!ns) {
    return fmt::format("Unknown namespace: {} in ${{{}}} (known: {})", ns_text, expr,
                       join_names(namespace_names));
  }
  part.ns = *ns;
  part.text = std::string(var);
  if (rest.empty()) return fmt::format("empty path in ${{{}}}", expr);
  if (*ns == template_namespace::env) {
    part.env_name = std::string(rest);
    return std::nullopt;
  }
  // parse_json_path reads a leading "." as the root (output_json's `.a`), but here the dot
  // after the namespace is already taken: `${context..a}` and `${prev..}` have an empty
  // segment (the original looks the key "" up and fails).
  if (rest.front() == '.') return fmt::format("empty path segment in ${{{}}}", expr);
  part.path = parse_json_path(rest);
  if (part.path.empty()) return fmt::format("empty path segment in ${{{}}}", expr);
  for (const auto& seg : part.path)
    if (seg.key.empty()) return fmt::format("empty path segment in ${{{}}}", expr);
  // An unknown `state.`/`loop.` key never resolves: without a fallback the template is
  // malformed; with `?` or `:default=` it renders the fallback, as in the original.
  const bool fallback = part.optional || part.default_value.has_value();
  if (*ns == template_namespace::state) {
    if (!fallback &&
        (part.path.size() != 1 || !contains_name(template_state_keys, part.path[0].key)))
      return fmt::format("Unknown state property: {} in ${{{}}} (known: {})", rest, expr,
                         join_names(template_state_keys));
  } else if (*ns == template_namespace::loop) {
    if (!fallback &&
        (part.path.size() != 1 || !contains_name(template_loop_keys, part.path[0].key)))
      return fmt::format("Unknown loop property: {} in ${{{}}} (known: {})", rest, expr,
                         join_names(template_loop_keys));
  }
  return std::nullopt;
}

}  // namespace detail

/// @brief The template text that renders `text` exactly: every `${` written as `$${` (the one
/// escape, design §3.8). For generating loops: a state name used as a route target must not
/// be read as a placeholder.
inline std::string escape_template(std::string_view text) {
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
inline expected<compiled_template, error> compile_template(std::string_view text) {
  compiled_template t;
  t.source_ = std::string(text);
  std::string literal;
  std::size_t i = 0;
  auto flush = [&] {
    if (!literal.empty()) {
      detail::template_part p;
      p.text = std::move(literal);
      t.parts_.push_back(std::move(p));
      literal.clear();
    }
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == '$' && text.compare(i, 3, "$${") == 0) {
      literal += "${";
      i += 3;
      continue;
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      std::size_t close = text.find('}', i + 2);
      if (close == std::string_view::npos)
        return unexpected(detail::template_error(
            text, fmt::format("unterminated ${{ at offset {}", i)));
      detail::template_part part;
      part.is_variable = true;
      part.offset = i;
      part.length = close + 1 - i;
      if (auto msg = detail::parse_variable(text.substr(i + 2, close - i - 2), part))
        return unexpected(detail::template_error(text, std::move(*msg)));
      flush();
      t.parts_.push_back(std::move(part));
      ++t.variables_;
      i = close + 1;
      continue;
    }
    literal += c;
    ++i;
  }
  flush();
  return t;
}

namespace detail {

// Appends the deterministic text form of a JSON value (design §3.8).
template <class Json>
inline void append_json_value(std::string& out, const Json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::string:
      out += v.template get_ref<const std::string&>();
      break;
    case nlohmann::json::value_t::boolean:
      out += v.template get<bool>() ? "true" : "false";
      break;
    case nlohmann::json::value_t::number_integer:
      append_integer(out, v.template get<std::int64_t>());
      break;
    case nlohmann::json::value_t::number_unsigned:
      append_integer(out, v.template get<std::uint64_t>());
      break;
    case nlohmann::json::value_t::number_float:
      append_py_float(out, v.template get<double>());
      break;
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      break;
    default:
      out += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      break;
  }
}

// Python's shlex.quote safe set: ASCII letters, digits and `_@%+=:,./-`.
constexpr bool shell_safe_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '@' || c == '%' || c == '+' || c == '=' || c == ':' || c == ',' ||
         c == '.' || c == '/' || c == '-';
}

// Quotes out[start..] in place exactly as Python's shlex.quote: empty → `''`; only safe
// characters → unchanged; otherwise `'…'` with each `'` written as `'"'"'`.
inline void shell_quote_tail(std::string& out, std::size_t start) {
  const std::size_t end = out.size();
  if (start == end) {
    out += "''";
    return;
  }
  bool safe = true;
  std::size_t quotes = 0;
  for (std::size_t i = start; i < end; ++i) {
    safe = safe && shell_safe_char(out[i]);
    quotes += out[i] == '\'';
  }
  if (safe) return;
  out.resize(end + 2 + 4 * quotes);
  std::size_t dst = out.size();
  out[--dst] = '\'';
  for (std::size_t src = end; src > start;) {
    const char c = out[--src];
    if (c == '\'') {
      dst -= 5;
      out.replace(dst, 5, "'\"'\"'");
    } else {
      out[--dst] = c;
    }
  }
  out[--dst] = '\'';
}

inline std::string available_keys(const json& obj) {
  std::string s;
  if (obj.is_object()) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (!s.empty()) s += ", ";
      s += it.key();
    }
  } else if (obj.is_array()) {
    if (!obj.empty()) s = fmt::format("indices 0..{}", obj.size() - 1);
  }
  return s.empty() ? std::string("none") : s;
}

template <std::size_t N>
inline std::string available_names(const std::array<std::string_view, N>& names) {
  return join_names(names);
}

// Resolves `part` and appends the value; returns an error message when missing.
inline std::optional<std::string> resolve_walk(std::string& out, const json& root,
                                               const path_segments& path, std::size_t first,
                                               std::string_view where) {
  auto r = lookup_json_path(root, path, first);
  if (r.value) {
    append_json_value(out, *r.value);
    return std::nullopt;
  }
  return fmt::format("Path '{}' not found in {} (available: {})",
                     segments_text(path, r.failed_at + 1), where, available_keys(*r.parent));
}

inline json captured_as_json(const captured_record& c) {
  json j = json::object();
  j["output"] = c.output;
  j["stderr"] = c.stderr_output;
  j["exit_code"] = c.exit_code;
  j["duration_ms"] = c.duration_ms;
  j["verdict"] = c.verdict;
  return j;
}

inline std::optional<std::string> leaf_error(const path_segments& path, std::size_t leaf,
                                             std::string_view where, std::string_view kind) {
  return fmt::format("Path '{}' not found in {} ({} is {})", segments_text(path, leaf + 2), where,
                     segments_text(path, leaf + 1), kind);
}

// Appends a string field at path[leaf]; deeper segments cannot resolve.
inline std::optional<std::string> append_leaf_string(std::string& out, const path_segments& path,
                                                     std::size_t leaf, std::string_view value,
                                                     std::string_view where) {
  if (path.size() > leaf + 1) return leaf_error(path, leaf, where, "a string");
  out += value;
  return std::nullopt;
}

inline std::optional<std::string> append_leaf_int(std::string& out, const path_segments& path,
                                                  std::size_t leaf, std::int64_t value,
                                                  std::string_view where) {
  if (path.size() > leaf + 1) return leaf_error(path, leaf, where, "a number");
  append_integer(out, value);
  return std::nullopt;
}

inline std::string format_elapsed(std::int64_t ms) {
  if (ms < 1000) return fmt::format("{}ms", ms);
  std::int64_t seconds = ms / 1000;
  if (seconds < 60) return fmt::format("{}s", seconds);
  std::int64_t minutes = seconds / 60;
  std::int64_t rest = seconds % 60;
  if (rest == 0) return fmt::format("{}m", minutes);
  return fmt::format("{}m {}s", minutes, rest);
}

inline std::optional<std::string> resolve_part(std::string& out, const template_part& p,
                                               const interpolation_context& ctx) {
  const auto& path = p.path;
  switch (p.ns) {
    case template_namespace::context: {
      if (!ctx.context)
        return fmt::format("Path '{}' not found in context (available: none)",
                           segments_text(path, 1));
      return resolve_walk(out, *ctx.context, path, 0, "context");
    }
    case template_namespace::captured: {
      if (!ctx.captured || ctx.captured->empty())
        return fmt::format("Path '{}' not found in captured (available: none)",
                           segments_text(path, 1));
      auto it = ctx.captured->find(path[0].key);
      if (it == ctx.captured->end()) {
        std::string names;
        for (const auto& kv : *ctx.captured) {
          if (!names.empty()) names += ", ";
          names += kv.first;
        }
        return fmt::format("Path '{}' not found in captured (available: {})",
                           segments_text(path, 1), names);
      }
      const captured_record& c = it->second;
      if (path.size() == 1) {
        append_json_value(out, captured_as_json(c));
        return std::nullopt;
      }
      const std::string& field = path[1].key;
      constexpr std::string_view where = "captured";
      if (field == "output") return append_leaf_string(out, path, 1, c.output, where);
      if (field == "stderr") return append_leaf_string(out, path, 1, c.stderr_output, where);
      if (field == "verdict") return append_leaf_string(out, path, 1, c.verdict, where);
      if (field == "exit_code") return append_leaf_int(out, path, 1, c.exit_code, where);
      if (field == "duration_ms") return append_leaf_int(out, path, 1, c.duration_ms, where);
      return fmt::format("Path '{}' not found in captured (available: {})",
                         segments_text(path, 2), available_names(template_captured_keys));
    }
    case template_namespace::prev: {
      if (!ctx.prev) {
        // Seed 004: before any evaluation the director's `last_evaluation` is null, which
        // renders empty (a `:default=` still applies); any other prev path is missing.
        if (path.size() == 1 && path[0].key == "evaluation" && !p.default_value)
          return std::nullopt;
        return std::string("No previous state result available");
      }
      const prev_record& pr = *ctx.prev;
      const std::string& field = path[0].key;
      if (field == "state") return append_leaf_string(out, path, 0, pr.state, "prev");
      if (field == "output") return append_leaf_string(out, path, 0, pr.output, "prev");
      if (field == "stderr") return append_leaf_string(out, path, 0, pr.stderr_output, "prev");
      if (field == "verdict") return append_leaf_string(out, path, 0, pr.verdict, "prev");
      if (field == "exit_code") return append_leaf_int(out, path, 0, pr.exit_code, "prev");
      if (field == "details")
        return pr.details.visit(
            [&](const json& d) { return resolve_walk(out, d, path, 1, "prev"); });
      if (field == "evaluation") {
        // The last evaluation (seed 004): prev's own, or the one before an unevaluated state.
        const prev_record* ev = pr.evaluated ? &pr : ctx.last_evaluation;
        if (ev == nullptr) {
          if (path.size() == 1 && !p.default_value) return std::nullopt;  // null: empty
          return std::string("No evaluation available yet");
        }
        json rec = feedback_record(*ev);
        return resolve_walk(out, rec, path, 1, "prev");
      }
      return fmt::format("Path '{}' not found in prev (available: {})", segments_text(path, 1),
                         available_names(template_prev_keys));
    }
    case template_namespace::result: {
      if (!ctx.result) return std::string("No evaluation result available");
      const std::string& field = path[0].key;
      if (field == "verdict") return append_leaf_string(out, path, 0, ctx.result->verdict, "result");
      if (field == "details")
        return ctx.result->details.visit(
            [&](const json& d) { return resolve_walk(out, d, path, 1, "result"); });
      return fmt::format("Path '{}' not found in result (available: {})", segments_text(path, 1),
                         available_names(template_result_keys));
    }
    case template_namespace::state: {
      // Unknown keys compile only with a fallback (`?` / `:default=`), which replaces this.
      const std::string& k = path[0].key;
      if (path.size() == 1 && k == "name")
        out += ctx.state_name;
      else if (path.size() == 1 && k == "iteration")
        append_integer(out, ctx.iteration);
      else
        return fmt::format("Unknown state property: {}", segments_text(path, path.size()));
      return std::nullopt;
    }
    case template_namespace::loop: {
      const std::string& k = path[0].key;
      if (path.size() != 1)
        return fmt::format("Unknown loop property: {}", segments_text(path, path.size()));
      if (k == "name")
        out += ctx.loop_name;
      else if (k == "started_at")
        out += ctx.started_at;
      else if (k == "elapsed_ms")
        append_integer(out, ctx.elapsed_ms);
      else if (k == "elapsed")
        out += format_elapsed(ctx.elapsed_ms);
      else if (k == "max_iterations")
        append_integer(out, ctx.max_iterations);
      else
        return fmt::format("Unknown loop property: {}", k);
      return std::nullopt;
    }
    case template_namespace::env: {
      if (ctx.env) {
        auto v = ctx.env(p.env_name, ctx.env_user);
        if (!v) return fmt::format("Environment variable '{}' not set", p.env_name);
        out += *v;
      } else {
        const char* v = std::getenv(p.env_name.c_str());
        if (!v) return fmt::format("Environment variable '{}' not set", p.env_name);
        out += v;
      }
      return std::nullopt;
    }
  }
  return std::string("unknown namespace");
}

}  // namespace detail

/// @brief Renders `tpl` against `ctx`, appending to `out` (no parsing happens here).
/// @return errc::missing_variable naming the template, the variable and the keys available
/// where the lookup stopped, unless the variable has `?` or `:default=`. On error `out` keeps
/// whatever was appended before the failing variable.
inline expected<void, error> render_to(const compiled_template& tpl,
                                       const interpolation_context& ctx, std::string& out) {
  for (const auto& p : tpl.parts()) {
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
  return {};
}

/// @brief Renders `tpl` into a new string.
inline expected<std::string, error> render(const compiled_template& tpl,
                                           const interpolation_context& ctx) {
  if (tpl.is_literal()) return std::string(tpl.literal());
  std::string out;
  auto r = render_to(tpl, ctx, out);
  if (!r) return unexpected(std::move(r.error()));
  return out;
}

/// @brief Compiles and renders `text` in one go (convenience; parses every call).
inline expected<std::string, error> interpolate(std::string_view text,
                                                const interpolation_context& ctx) {
  auto tpl = compile_template(text);
  if (!tpl) return unexpected(std::move(tpl.error()));
  return render(*tpl, ctx);
}

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

namespace detail {

// Classifies a compile_template() failure for its diagnostic code.
inline std::string_view template_error_code(const std::string& message) {
  if (message.find("bash operator") != std::string::npos) return "template-bash-operator";
  if (message.find("Unknown namespace: ") != std::string::npos) return "template-unknown-namespace";
  if (message.find("Unknown state property: ") != std::string::npos ||
      message.find("Unknown loop property: ") != std::string::npos)
    return "template-unknown-key";
  return "template-syntax";
}

struct template_checker {
  const std::vector<std::string>* captures = nullptr;
  diagnostics* out = nullptr;

  void add(std::string path, std::string code, std::string message,
           severity level = severity::error) const {
    out->push_back(diagnostic{level, std::move(path), sanitize_utf8(message), std::move(code)});
  }

  // Compiles `text` (reporting syntax problems) and checks `${captured.X}` references. A
  // reference with a fallback (`?` or `:default=`) may read a capture that never happens, so
  // it is not checked (design §3.8).
  std::optional<compiled_template> check(std::string_view text, const std::string& path) const {
    auto t = compile_template(text);
    if (!t) {
      add(path, std::string(template_error_code(t.error().message)), t.error().message);
      return std::nullopt;
    }
    for (const auto& part : t->parts()) {
      if (!part.is_variable || part.optional || part.default_value) continue;
      check_record_key(part, path);
      if (part.ns != template_namespace::captured) continue;
      const std::string& name = part.path.front().key;
      bool known = false;
      for (const auto& c : *captures) known = known || c == name;
      if (!known) {
        std::string names;
        for (const auto& c : *captures) {
          if (!names.empty()) names += ", ";
          names += c;
        }
        // A warning, as in the original (which checks nothing at load, and later warns): the
        // reference fails only if the state runs, as the `error` verdict.
        add(path, "template-unknown-capture",
            fmt::format("${{{}}} reads captured.{}, but no state captures \"{}\" (captured: {})",
                        part.text, name, name, names.empty() ? std::string("none") : names),
            severity::warning);
      }
    }
    return std::move(*t);
  }

  // `prev`, `result` and a capture are records with fixed keys: a reference to another key
  // (a typo: `${prev.outptu}`) can never resolve. A warning, as for an unknown capture: it
  // fails only if the state runs, as the `error` verdict.
  void check_record_key(const template_part& part, const std::string& path) const {
    auto warn = [&](std::string_view key, const auto& known, std::string_view record) {
      if (contains_name(known, key)) return;
      add(path, "template-unknown-key",
          fmt::format("${{{}}} reads the key \"{}\", which {} never has (it has {}){}", part.text,
                      key, record, join_names(known), did_you_mean(key, known)),
          severity::warning);
    };
    if (part.ns == template_namespace::prev && !part.path.empty())
      warn(part.path[0].key, template_prev_keys, "prev");
    else if (part.ns == template_namespace::result && !part.path.empty())
      warn(part.path[0].key, template_result_keys, "result");
    else if (part.ns == template_namespace::captured && part.path.size() >= 2)
      warn(part.path[1].key, template_captured_keys, "a capture");
  }

  // Warns about `${context.…}` pasted into shell text outside any quotes without `:shell`.
  void check_shell_quoting(const compiled_template& t, const std::string& path) const {
    const std::string& src = t.source();
    char quote = 0;  // 0, '\'' or '"'
    std::size_t pos = 0;
    auto scan = [&](std::size_t end) {
      for (; pos < end; ++pos) {
        const char c = src[pos];
        if (quote == '\'') {
          if (c == '\'') quote = 0;
        } else if (c == '\\') {
          ++pos;
        } else if (quote == '"') {
          if (c == '"') quote = 0;
        } else if (c == '\'' || c == '"') {
          quote = c;
        }
      }
    };
    if (t.parts().size() == 1 && t.parts().front().is_variable) return;  // the whole command
    for (const auto& part : t.parts()) {
      if (!part.is_variable) continue;
      scan(part.offset);
      pos = part.offset + part.length;
      if (part.ns == template_namespace::context && !part.shell && quote == 0) {
        add(path, "template-unquoted-context",
            fmt::format("${{{}}} is pasted into the shell command unquoted; a value with "
                        "spaces or metacharacters changes the command: write ${{{}:shell}}",
                        part.text, part.text),
            severity::warning);
      }
    }
  }
};

}  // namespace detail

/// @brief Template rules of validate(): every templated field (action, next, route targets,
/// on_<verdict> targets, evaluator string fields) must compile; reports
/// malformed templates (`template-syntax`), unknown namespaces
/// (`template-unknown-namespace`), unknown `state.`/`loop.` keys (`template-unknown-key`),
/// bash operators inside `${…}` with a `$${…}` hint (`template-bash-operator`),
/// all errors; warns about `${captured.X}` where no state captures X
/// (`template-unknown-capture`; not for references with `?` or `:default=`) and about raw
/// `${context.…}` outside quotes in shell actions (`template-unquoted-context`, suggesting
/// `:shell`; not for an action that is one `${context.…}` and nothing else, a command kept in
/// the context, as the convergence paradigm's `${context.metric_cmd}`).
inline void validate_templates(const fsm_loop& loop, diagnostics& out) {
  std::vector<std::string> captures;
  for (const auto& entry : loop.states)
    if (entry.second.capture) captures.push_back(*entry.second.capture);
  detail::template_checker checker{&captures, &out};
  for (const auto& [name, state] : loop.states) {
    const std::string base = detail::member_path("states", name);
    if (state.action) {
      const std::string path = detail::join_path(base, "action");
      auto t = checker.check(*state.action, path);
      const bool shell = state.action_type ? *state.action_type == action_kind::shell
                                           : (state.action->empty() || state.action->front() != '/');
      if (t && shell) checker.check_shell_quoting(*t, path);
    }
    if (state.next) checker.check(*state.next, detail::join_path(base, "next"));
    if (state.route) {
      const std::string route = detail::join_path(base, "route");
      for (const auto& [verdict, target] : state.route->routes)
        checker.check(target, detail::member_path(route, verdict));
      if (state.route->default_target)
        checker.check(*state.route->default_target, detail::join_path(route, "_"));
      if (state.route->error_target)
        checker.check(*state.route->error_target, detail::join_path(route, "_error"));
    }
    for (const auto& [verdict, target] : state.on)
      checker.check(target, detail::member_path(base, "on_" + verdict));
    if (state.evaluate) {
      const evaluate_config& e = *state.evaluate;
      const std::string ev = detail::join_path(base, "evaluate");
      auto field = [&](const std::optional<std::string>& v, std::string_view key) {
        if (v) checker.check(*v, detail::join_path(ev, key));
      };
      auto json_field = [&](const std::optional<json>& v, std::string_view key) {
        if (v && v->is_string())
          checker.check(v->get_ref<const std::string&>(), detail::join_path(ev, key));
      };
      json_field(e.target, "target");
      json_field(e.tolerance, "tolerance");
      field(e.pattern, "pattern");
      field(e.path, "path");
      field(e.prompt, "prompt");
      field(e.source, "source");
      field(e.previous, "previous");
    }
  }
}

LITTLE_LOOPS_NAMESPACE_END
