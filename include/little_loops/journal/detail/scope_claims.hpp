// little_loops — journal: reading scope claims from lock files
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/journal/record.hpp>
#include <little_loops/journal/detail/posix_files.hpp>
#include <little_loops/journal/detail/record_files.hpp>
#include <little_loops/journal/scope.hpp>

#include <fmt/format.h>

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
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
  if (const auto single = j.find("singleton"); single != j.end() && single->is_boolean())
    claim.singleton = single->get<bool>();
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

/// The scope's paths normalised (normalize_scope_path(); none: the working directory).
/// errc::invalid_loop for a path with a NUL byte, or that is not UTF-8 (a claim is JSON
/// text: such bytes would not read back as written).
inline expected<std::vector<std::string>, little_loops::error> normalized_scope(const std::vector<std::string>& scope) {
  std::vector<std::string> paths;
  for (const auto& p : scope) {
    if (p.find('\0') != std::string::npos)
      return unexpected(little_loops::error{errc::invalid_loop, "a scope path holds a NUL byte", "scope"});
    if (!is_valid_utf8(p))
      return unexpected(little_loops::error{errc::invalid_loop, "a scope path is not valid UTF-8", "scope"});
    paths.push_back(normalize_scope_path(p));
  }
  if (paths.empty()) paths.push_back(normalize_scope_path("."));
  return paths;
}

/// Takes the flock() of `DIR/.acquire.lock` (open as `fd`), under which claims are made
/// one at a time, each in a few file reads: a holder that keeps it for ten seconds is
/// stuck, not busy (errc::io_error then).
inline expected<void, little_loops::error> wait_for_claims_lock(int fd, const std::filesystem::path& acquire) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return {};
    if (errno != EWOULDBLOCK && errno != EINTR) return unexpected(journal_io_error(acquire, "cannot lock", errno));
    if (std::chrono::steady_clock::now() >= give_up)
      return unexpected(little_loops::error{errc::io_error, "another process has held the scope claims' lock for 10 s", acquire.string()});
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// Writes the claim of loop `name` on `paths` into its lock file (open as `lock_fd`).
inline expected<void, little_loops::error> write_scope_claim(int lock_fd, const std::filesystem::path& lock,
                                                             const std::string& name,
                                                             const std::vector<std::string>& paths,
                                                             bool singleton = false) {
  json claim{{"loop_name", name}, {"scope", paths}, {"pid", static_cast<long>(::getpid())}, {"started_at", journal_now()}};
  if (singleton) claim["singleton"] = true;  // only then, as the original writes it
  const std::string text = claim.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > max_scope_claim_bytes)
    return unexpected(little_loops::error{
        errc::invalid_loop,
        fmt::format("the scope is too large to claim ({} bytes of paths; at most {})", text.size(), max_scope_claim_bytes),
        "scope"});
  if (::ftruncate(lock_fd, 0) != 0 || ::pwrite(lock_fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    return unexpected(journal_io_error(lock, "cannot write the scope claim", errno));
  return {};
}

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END
