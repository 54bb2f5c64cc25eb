// little_loops — parsing `${namespace.path}` templates into literal runs and variables
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/json_path.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/results.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

inline constexpr std::array<std::string_view, 7> namespace_names{
    "context", "captured", "prev", "result", "state", "loop", "env"};
inline constexpr std::array<std::string_view, 2> template_state_keys{"name", "iteration"};
inline constexpr std::array<std::string_view, 5> template_loop_keys{
    "name", "started_at", "elapsed_ms", "elapsed", "max_iterations"};
inline constexpr std::array<std::string_view, 7> template_prev_keys{
    "state", "output", "stderr", "exit_code", "verdict", "details", "evaluation"};
inline constexpr std::array<std::string_view, 7> template_captured_keys{
    "output", "stderr", "exit_code", "duration_ms", "verdict", "failure_type", "timeout_kind"};
inline constexpr std::array<std::string_view, 2> template_result_keys{"verdict", "details"};

// Bash parameter-expansion operators that are never valid inside `${ns.path}`.
inline constexpr std::array<std::string_view, 8> bash_operators{":-", ":+", ":=", ":?",
                                                                "##", "%%", "[@]", "[*]"};

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
  // The fixed field a state/loop/prev/result reference names (path[0]) or a captured one
  // (path[1]): its index in the namespace's key table, found once here so rendering
  // compares no strings; no_key when it names none.
  std::size_t key = no_key;
  static constexpr std::size_t no_key = static_cast<std::size_t>(-1);
};

// The index of `name` in a key table (template_part::no_key when absent); constexpr, so a
// renderer can switch on key_index(table, "name").
template <std::size_t N>
constexpr std::size_t key_index(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return i;
  return template_part::no_key;
}

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// The key table of a namespace's fixed fields, and which path segment names the field.
inline void resolve_fixed_key(template_part& part) {
  const auto& path = part.path;
  switch (part.ns) {
    case template_namespace::state:
      if (path.size() == 1) part.key = key_index(template_state_keys, path[0].key);
      break;
    case template_namespace::loop:
      if (path.size() == 1) part.key = key_index(template_loop_keys, path[0].key);
      break;
    case template_namespace::prev: part.key = key_index(template_prev_keys, path[0].key); break;
    case template_namespace::result: part.key = key_index(template_result_keys, path[0].key); break;
    case template_namespace::captured:
      if (path.size() > 1) part.key = key_index(template_captured_keys, path[1].key);
      break;
    default: break;
  }
}

inline std::optional<template_namespace> parse_namespace(std::string_view s) noexcept {
  for (std::size_t i = 0; i < namespace_names.size(); ++i)
    if (namespace_names[i] == s) return static_cast<template_namespace>(i);
  return std::nullopt;
}

template <std::size_t N>
inline bool contains_name(const std::array<std::string_view, N>& names, std::string_view s) {
  return std::find(names.begin(), names.end(), s) != names.end();
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

// Removes a `:shell` suffix from `body` (see parse_variable for where it may stand).
inline void take_shell_suffix(std::string& body, template_part& part) {
  if (auto pos = body.find(":shell:default="); pos != std::string::npos) {
    body.erase(pos, 6);
    part.shell = true;
  } else if (body.ends_with(":shell?")) {
    body.erase(body.size() - 7, 6);
    part.shell = true;
  } else if (body.ends_with(":shell")) {
    body.resize(body.size() - 6);
    part.shell = true;
  }
}

// An unknown `state.`/`loop.` key never resolves: without a fallback the template is
// malformed; with `?` or `:default=` it renders the fallback, as in the original.
inline std::optional<std::string> check_fixed_keys(const template_part& part, std::string_view rest,
                                                   std::string_view expr) {
  if (part.optional || part.default_value.has_value()) return std::nullopt;
  const bool one_key = part.path.size() == 1;
  if (part.ns == template_namespace::state && !(one_key && contains_name(template_state_keys, part.path[0].key)))
    return fmt::format("Unknown state property: {} in ${{{}}} (known: {})", rest, expr,
                       join_names(template_state_keys));
  if (part.ns == template_namespace::loop && !(one_key && contains_name(template_loop_keys, part.path[0].key)))
    return fmt::format("Unknown loop property: {} in ${{{}}} (known: {})", rest, expr,
                       join_names(template_loop_keys));
  return std::nullopt;
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
  take_shell_suffix(body, part);
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
  if (var.ends_with("?")) {
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
  // The dot after the namespace is taken: `${context..a}` and `${prev..}` have an empty
  // segment (the original looks the key "" up and fails).
  auto path = parse_member_path(rest);
  if (!path) return fmt::format("empty path segment in ${{{}}}", expr);
  part.path = std::move(*path);
  resolve_fixed_key(part);
  return check_fixed_keys(part, rest, expr);
}

#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// A template text parsed once: its parts and how many of them are variables.
struct parsed_template {
  std::vector<template_part> parts;
  std::size_t variables = 0;
};

// Parsed templates by their text (template_table's store). std::less<> finds a
// std::string_view without building a string.
using parsed_templates = std::map<std::string, parsed_template, std::less<>>;

LITTLE_LOOPS_INLINE expected<std::size_t, error> parse_template(std::string_view text,
                                                                std::vector<template_part>& parts);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Parses `text` into `parts` (literal runs and variables, in order); returns the number of
// variables, or errc::template_syntax (see compile_template).
LITTLE_LOOPS_INLINE expected<std::size_t, error> parse_template(std::string_view text, std::vector<template_part>& parts) {
  std::string literal;
  std::size_t variables = 0;
  auto flush = [&] {
    if (!literal.empty()) {
      template_part p;
      p.text = std::move(literal);
      parts.push_back(std::move(p));
      literal.clear();
    }
  };
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '$' && text.compare(i, 3, "$${") == 0) {
      literal += "${";
      i += 3;
      continue;
    }
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      std::size_t close = text.find('}', i + 2);
      if (close == std::string_view::npos)
        return unexpected(template_error(text, fmt::format("unterminated ${{ at offset {}", i)));
      template_part part;
      part.is_variable = true;
      part.offset = i;
      part.length = close + 1 - i;
      if (auto msg = parse_variable(text.substr(i + 2, close - i - 2), part))
        return unexpected(template_error(text, std::move(*msg)));
      flush();
      parts.push_back(std::move(part));
      ++variables;
      i = close + 1;
      continue;
    }
    literal += text[i++];
  }
  flush();
  return variables;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
