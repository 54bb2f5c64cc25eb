// little_loops — rendering a parsed template's variables against an interpolation_context
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/feedback.hpp>
#include <little_loops/detail/json_path.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/record_writer.hpp>
#include <little_loops/detail/run_records.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/detail/template_parser.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format and read the environment
#  include <fmt/format.h>

#  include <cstdlib>
#  include <cstring>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// Appends the deterministic text form of a JSON value (design §3.8).
template <class Json>
inline void append_json_value(std::string& out, const Json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::string:
      out += v.template get_ref<const std::string&>();
      break;
    case nlohmann::json::value_t::boolean:
      out += *v.template get_ptr<const typename Json::boolean_t*>() ? "true" : "false";
      break;
    case nlohmann::json::value_t::number_integer:
      append_integer(out, *v.template get_ptr<const typename Json::number_integer_t*>());
      break;
    case nlohmann::json::value_t::number_unsigned:
      append_integer(out, *v.template get_ptr<const typename Json::number_unsigned_t*>());
      break;
    case nlohmann::json::value_t::number_float:
      append_py_float(out, *v.template get_ptr<const typename Json::number_float_t*>());
      break;
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      break;
    default:
      out += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      break;
  }
}

LITTLE_LOOPS_INLINE std::optional<std::string> resolve_other_part(std::string& out,
                                                                  const template_part& p,
                                                                  const interpolation_context& ctx);
LITTLE_LOOPS_INLINE void shell_quote_tail(std::string& out, std::size_t start);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Python's shlex.quote safe set: ASCII letters, digits and `_@%+=:,./-`.
constexpr bool shell_safe_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '@' || c == '%' || c == '+' || c == '=' || c == ':' || c == ',' ||
         c == '.' || c == '/' || c == '-';
}

// Quotes out[start..] in place exactly as Python's shlex.quote: empty → `''`; only safe
// characters → unchanged; otherwise `'…'` with each `'` written as `'"'"'`.
LITTLE_LOOPS_INLINE void shell_quote_tail(std::string& out, std::size_t start) {
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

// Appends the value at path[first..] in `root`; returns an error message when missing.
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

// `${captured.NAME[.FIELD]}`: the whole record as JSON, or one field.
inline std::optional<std::string> resolve_captured(std::string& out, const template_part& p,
                                                   const interpolation_context& ctx) {
  const auto& path = p.path;
  if (!ctx.captured || ctx.captured->empty())
    return fmt::format("Path '{}' not found in captured (available: none)", segments_text(path, 1));
  auto it = ctx.captured->find(path[0].key);
  if (it == ctx.captured->end()) {
    // (a vector of names, not std::views::keys: Clang 14 rejects that view of an ordered_map
    // with libstdc++ 12's ranges)
    std::vector<std::string_view> names;
    for (const auto& entry : *ctx.captured) names.push_back(entry.first);
    return fmt::format("Path '{}' not found in captured (available: {})", segments_text(path, 1),
                       join_names(names));
  }
  const captured_record& c = it->second;
  if (path.size() == 1) {
    json_text_writer w(out);
    write_captured_record(w, c);
    w.finish();
    return std::nullopt;
  }
  constexpr std::string_view where = "captured";
  if (c.subloop.is_object() && c.subloop.contains(path[1].key))  // a sub-loop state's record
    return resolve_walk(out, c.subloop, path, 1, where);
  constexpr auto& keys = template_captured_keys;
  switch (p.key) {
    case key_index(keys, "output"): return append_leaf_string(out, path, 1, c.output, where);
    case key_index(keys, "stderr"): return append_leaf_string(out, path, 1, c.stderr_output, where);
    case key_index(keys, "verdict"): return append_leaf_string(out, path, 1, c.verdict, where);
    case key_index(keys, "exit_code"): return append_leaf_int(out, path, 1, c.exit_code, where);
    case key_index(keys, "duration_ms"): return append_leaf_int(out, path, 1, c.duration_ms, where);
    case key_index(keys, "failure_type"):
      return append_leaf_string(out, path, 1, c.failure_type, where);
    case key_index(keys, "timeout_kind"):
      return append_leaf_string(out, path, 1, c.timeout_kind, where);
    default: break;
  }
  return fmt::format("Path '{}' not found in captured (available: {})", segments_text(path, 2),
                     join_names(template_captured_keys));
}

// `${prev.evaluation[.…]}`: the last evaluation (seed 004), prev's own or the one before an
// unevaluated state.
inline std::optional<std::string> resolve_prev_evaluation(std::string& out, const template_part& p,
                                                          const interpolation_context& ctx) {
  const prev_record* ev = ctx.prev->evaluated ? ctx.prev : ctx.last_evaluation;
  if (ev == nullptr) {
    if (p.path.size() == 1 && !p.default_value) return std::nullopt;  // null: empty
    return std::string("No evaluation available yet");
  }
  json rec = feedback_record(*ev);
  return resolve_walk(out, rec, p.path, 1, "prev");
}

// `${prev.FIELD[.…]}`.
inline std::optional<std::string> resolve_prev(std::string& out, const template_part& p,
                                               const interpolation_context& ctx) {
  const auto& path = p.path;
  if (!ctx.prev) {
    // Seed 004: before any evaluation the director's `last_evaluation` is null, which
    // renders empty (a `:default=` still applies); any other prev path is missing.
    if (path.size() == 1 && path[0].key == "evaluation" && !p.default_value) return std::nullopt;
    return std::string("No previous state result available");
  }
  const prev_record& pr = *ctx.prev;
  constexpr auto& keys = template_prev_keys;
  switch (p.key) {
    case key_index(keys, "state"): return append_leaf_string(out, path, 0, pr.state, "prev");
    case key_index(keys, "output"): return append_leaf_string(out, path, 0, pr.output, "prev");
    case key_index(keys, "stderr"): return append_leaf_string(out, path, 0, pr.stderr_output, "prev");
    case key_index(keys, "verdict"): return append_leaf_string(out, path, 0, pr.verdict, "prev");
    case key_index(keys, "exit_code"): return append_leaf_int(out, path, 0, pr.exit_code, "prev");
    case key_index(keys, "details"):
      return pr.details.visit([&](const json& d) { return resolve_walk(out, d, path, 1, "prev"); });
    case key_index(keys, "evaluation"): return resolve_prev_evaluation(out, p, ctx);
    default: break;
  }
  return fmt::format("Path '{}' not found in prev (available: {})", segments_text(path, 1),
                     join_names(template_prev_keys));
}

// `${result.verdict}`, `${result.details[.…]}`.
inline std::optional<std::string> resolve_result(std::string& out, const template_part& p,
                                                 const interpolation_context& ctx) {
  const auto& path = p.path;
  if (!ctx.result) return std::string("No evaluation result available");
  switch (p.key) {
    case key_index(template_result_keys, "verdict"):
      return append_leaf_string(out, path, 0, ctx.result->verdict, "result");
    case key_index(template_result_keys, "details"):
      return ctx.result->details.visit(
          [&](const json& d) { return resolve_walk(out, d, path, 1, "result"); });
    default: break;
  }
  return fmt::format("Path '{}' not found in result (available: {})", segments_text(path, 1),
                     join_names(template_result_keys));
}

// `${state.name}`, `${state.iteration}`. Unknown keys compile only with a fallback (`?` or
// `:default=`), which replaces the message.
inline std::optional<std::string> resolve_state(std::string& out, const template_part& p,
                                                const interpolation_context& ctx) {
  switch (p.key) {
    case key_index(template_state_keys, "name"): out += ctx.state_name; return std::nullopt;
    case key_index(template_state_keys, "iteration"): append_integer(out, ctx.iteration); return std::nullopt;
    default: return fmt::format("Unknown state property: {}", segments_text(p.path, p.path.size()));
  }
}

// `${loop.KEY}`.
inline std::optional<std::string> resolve_loop(std::string& out, const template_part& p,
                                               const interpolation_context& ctx) {
  constexpr auto& keys = template_loop_keys;
  switch (p.key) {
    case key_index(keys, "name"): out += ctx.loop_name; break;
    case key_index(keys, "started_at"): out += ctx.started_at; break;
    case key_index(keys, "elapsed_ms"): append_integer(out, ctx.elapsed_ms); break;
    case key_index(keys, "elapsed"): out += format_elapsed(ctx.elapsed_ms); break;
    case key_index(keys, "max_iterations"): append_integer(out, ctx.max_iterations); break;
    default:
      if (p.path.size() != 1)
        return fmt::format("Unknown loop property: {}", segments_text(p.path, p.path.size()));
      return fmt::format("Unknown loop property: {}", p.path[0].key);
  }
  return std::nullopt;
}

// `${env.NAME}`: the host's lookup, else the process environment.
inline std::optional<std::string> resolve_env(std::string& out, const std::string& name,
                                              const interpolation_context& ctx) {
  if (ctx.env) {
    auto v = ctx.env(name, ctx.env_user);
    if (!v) return fmt::format("Environment variable '{}' not set", name);
    out += *v;
  } else {
    const char* v = std::getenv(name.c_str());
    if (!v) return fmt::format("Environment variable '{}' not set", name);
    out += v;
  }
  return std::nullopt;
}

// Appends the value of a variable that append_common_variable() does not take; returns an
// error message when it is missing.
LITTLE_LOOPS_INLINE std::optional<std::string> resolve_other_part(std::string& out, const template_part& p,
                                                     const interpolation_context& ctx) {
  switch (p.ns) {
    case template_namespace::context:
      if (!ctx.context)
        return fmt::format("Path '{}' not found in context (available: none)",
                           segments_text(p.path, 1));
      return resolve_walk(out, *ctx.context, p.path, 0, "context");
    case template_namespace::captured: return resolve_captured(out, p, ctx);
    case template_namespace::prev: return resolve_prev(out, p, ctx);
    case template_namespace::result: return resolve_result(out, p, ctx);
    case template_namespace::state: return resolve_state(out, p, ctx);
    case template_namespace::loop: return resolve_loop(out, p, ctx);
    case template_namespace::env: return resolve_env(out, p.env_name, ctx);
  }
  return std::string("unknown namespace");
}

// True when the `n` bytes at `a` and `b` are equal: for up to 16 bytes (context keys) two
// overlapping word loads each, without the call memcmp() costs.
inline bool same_short_text(const char* a, const char* b, std::size_t n) noexcept {
  const auto equal_words = [&](auto word, std::size_t at) {
    decltype(word) x{};
    decltype(word) y{};
    std::memcpy(&x, a + at, sizeof word);
    std::memcpy(&y, b + at, sizeof word);
    return x == y;
  };
  if (n > 16) return std::memcmp(a, b, n) == 0;
  if (n >= 8) return equal_words(std::uint64_t{}, 0) && equal_words(std::uint64_t{}, n - 8);
  if (n >= 4) return equal_words(std::uint32_t{}, 0) && equal_words(std::uint32_t{}, n - 4);
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// The variables most templates use, appended by a function small enough to cost no more
// than its work: `${context.KEY}` of a context object that has KEY, `${state.name}` and
// `${state.iteration}`. False when `p` is another one.
inline bool append_common_variable(std::string& out, const template_part& p,
                                   const interpolation_context& ctx) {
  if (p.ns == template_namespace::context) {
    if (ctx.context == nullptr || p.path.size() != 1 || !ctx.context->is_object()) return false;
    const std::string& key = p.path[0].key;
    for (const auto& [name, value] : ctx.context->get_ref<const json::object_t&>()) {
      if (name.size() == key.size() && same_short_text(name.data(), key.data(), key.size())) {
        append_json_value(out, value);
        return true;
      }
    }
    return false;
  }
  if (p.ns != template_namespace::state) return false;
  if (p.key == key_index(template_state_keys, "name")) {
    out += ctx.state_name;
    return true;
  }
  if (p.key == key_index(template_state_keys, "iteration")) {
    append_integer(out, ctx.iteration);
    return true;
  }
  return false;
}

// Appends the value of the variable `p`; returns an error message when it is missing.
inline std::optional<std::string> resolve_part(std::string& out, const template_part& p,
                                               const interpolation_context& ctx) {
  if (append_common_variable(out, p, ctx)) return std::nullopt;
  return resolve_other_part(out, p, ctx);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
