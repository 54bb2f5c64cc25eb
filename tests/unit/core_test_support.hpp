// little_loops — helpers shared by the core tests (schema, validation)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/validation.hpp>

#include <string>

namespace core_test {

namespace ll = little_loops;

/// Every diagnostic of `list` as `path: message [code]`, one per line (for INFO output).
inline std::string dump_all(const ll::diagnostics& list) {
  std::string out;
  for (const auto& d : list) out += ll::to_string(d) + " [" + d.code + "]\n";
  return out;
}

/// The diagnostic with exactly this path and code, or nullptr.
inline const ll::diagnostic* find_diagnostic(const ll::diagnostics& list, const std::string& path,
                                             const std::string& code) {
  for (const auto& d : list)
    if (d.path == path && d.code == code) return &d;
  return nullptr;
}

}  // namespace core_test
