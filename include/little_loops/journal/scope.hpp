// little_loops — journal: a loop's scope (the paths it works on) and how two scopes overlap
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/interpolation.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// A running loop's claim (see above).
struct scope_claim {
  std::string loop_name;
  std::vector<std::string> scope;  ///< absolute, normalised paths
  long pid = 0;
  std::string started_at;
  std::filesystem::path file;  ///< the lock file it was read from
  bool singleton = false;      ///< the loop is `singleton: true` (absent in the file: false)
};

/// The scope entries with every `${context.KEY}` replaced by the text of the context's
/// top-level value KEY (the text a template gives it); an unknown KEY is left as written
/// (the original's resolve_scope).
inline std::vector<std::string> resolve_scope(const std::vector<std::string>& scope,
                                              const json& context) {
  std::vector<std::string> out;
  out.reserve(scope.size());
  constexpr std::string_view open = "${context.";
  for (const std::string& entry : scope) {
    std::string text;
    std::size_t at = 0;
    for (;;) {
      const std::size_t start = entry.find(open, at);
      const std::size_t close = start == std::string::npos ? start : entry.find('}', start + open.size());
      if (start == std::string::npos || close == std::string::npos) {
        text.append(entry, at, std::string::npos);
        break;
      }
      const std::string key = entry.substr(start + open.size(), close - start - open.size());
      text.append(entry, at, start - at);
      const auto it = context.is_object() && !key.empty() ? context.find(key) : context.end();
      if (it != context.end())
        detail::append_json_value(text, *it);
      else
        text.append(entry, start, close + 1 - start);
      at = close + 1;
    }
    out.push_back(std::move(text));
  }
  return out;
}

/// `path` made absolute (against the working directory), with the symlinks of the part
/// that exists resolved and `.`/`..` removed, without a trailing `/` (Python's
/// `Path.resolve()`, not strict). An empty path is the working directory.
inline std::string normalize_scope_path(std::string_view path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(path.empty() ? std::string_view(".") : path), ec);
  if (ec) p = fs::path(path);
  fs::path resolved = fs::weakly_canonical(p, ec);
  if (ec) resolved = p.lexically_normal();
  std::string out = resolved.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

/// True when two normalised paths are the same or one contains the other (whole path
/// components: `/a/b` contains `/a/b/c`, not `/a/bc`).
inline bool scope_paths_overlap(std::string_view a, std::string_view b) noexcept {
  if (a.size() > b.size()) std::swap(a, b);
  if (b.compare(0, a.size(), a) != 0) return false;
  return a.size() == b.size() || a == "/" || b[a.size()] == '/';
}

/// True when some path of `a` overlaps some path of `b` (scope_paths_overlap()).
inline bool scopes_overlap(const std::vector<std::string>& a, const std::vector<std::string>& b) noexcept {
  for (const auto& x : a)
    for (const auto& y : b)
      if (scope_paths_overlap(x, y)) return true;
  return false;
}

LITTLE_LOOPS_NAMESPACE_END
