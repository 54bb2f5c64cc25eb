// little_loops — helpers shared by the paradigm and rendering tests
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/fsm.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace paradigm_test {

using little_loops::json;

/// Parses a JSON literal used as a test spec (the literals are valid JSON).
inline json spec(const char* text) { return json::parse(text); }

inline std::string fixture_path(const std::string& relative) {
  return std::string(LITTLE_LOOPS_FIXTURES_DIR).append("/paradigms/").append(relative);
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Compares `actual` with the golden file `golden/<name>`; with LITTLE_LOOPS_UPDATE_GOLDEN=1
/// in the environment the file is rewritten instead.
inline void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = fixture_path("golden/" + name);
  if (const char* update = std::getenv("LITTLE_LOOPS_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream probe(path);
  INFO("golden file " << path);
  REQUIRE(probe.good());
  CHECK(read_text(path) == actual);
}

/// The messages of all diagnostics of an error, one per line (for INFO output).
inline std::string messages(const little_loops::error& e) {
  std::string out = little_loops::to_string(e) + "\n";
  for (const auto& d : e.details) out += "  " + little_loops::to_string(d) + "\n";
  return out;
}

/// The loop `compile` (a paradigm compiler) makes of `s`; fails the test, printing the
/// diagnostics, when the spec is refused.
template <class Compile>
little_loops::fsm_loop compile_ok(Compile compile, const json& s) {
  auto loop = compile(s);
  INFO((loop ? std::string() : messages(loop.error())));
  REQUIRE(loop.has_value());
  return *loop;
}

/// The error `compile` reports for `s`; fails the test unless the spec is refused as invalid.
template <class Compile>
little_loops::error compile_err(Compile compile, const json& s) {
  auto loop = compile(s);
  REQUIRE_FALSE(loop.has_value());
  CHECK(loop.error().code == little_loops::errc::invalid_spec);
  return loop.error();
}

/// True when some diagnostic has exactly this path and a message containing `text`.
inline bool has_diagnostic(const little_loops::error& e, const std::string& path,
                           const std::string& text) {
  for (const auto& d : e.details)
    if (d.path == path && d.message.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace paradigm_test
