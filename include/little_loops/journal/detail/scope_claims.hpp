// little_loops — journal: reading scope claims from lock files
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/journal/detail/posix_files.hpp>
#include <little_loops/journal/detail/record_files.hpp>
#include <little_loops/journal/scope.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

/// Claims larger than this are refused when made and skipped when read.
inline constexpr std::size_t max_scope_claim_bytes = std::size_t{1} << 20;

/// A lock file's claim; nullopt when the file is empty (no claim, or a run that has not
/// claimed yet), unreadable, too large, or not a claim.
inline std::optional<scope_claim> read_scope_claim(const std::filesystem::path& file) {
  auto fd = open_journal_file(file);
  if (!fd || *fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(*fd, &st) != 0 || st.st_size == 0 ||
      static_cast<std::size_t>(st.st_size) > max_scope_claim_bytes) {
    ::close(*fd);
    return std::nullopt;
  }
  const json j = parse_journal_json(read_journal_text(*fd));
  if (!j.is_object()) return std::nullopt;
  const auto name = j.find("loop_name");
  const auto pid = j.find("pid");
  const auto scope = j.find("scope");
  if (name == j.end() || !name->is_string() || pid == j.end() || !pid->is_number_integer() ||
      scope == j.end())
    return std::nullopt;
  scope_claim claim;
  claim.loop_name = name->get<std::string>();
  claim.pid = pid->get<long>();
  if (scope->is_string()) {
    claim.scope.push_back(normalize_scope_path(scope->get<std::string>()));
  } else if (scope->is_array()) {
    for (const auto& p : *scope)
      if (p.is_string()) claim.scope.push_back(normalize_scope_path(p.get<std::string>()));
  } else {
    return std::nullopt;
  }
  if (const auto at = j.find("started_at"); at != j.end() && at->is_string())
    claim.started_at = at->get<std::string>();
  claim.file = file;
  return claim;
}

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END
