// little_loops — tests for error.hpp: stable ids, formatting, diagnostics
// SPDX-License-Identifier: MIT
#include <little_loops/error.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

namespace ll = little_loops;

TEST_CASE("error ids are stable and greppable") {
  CHECK(ll::error_id(ll::errc::parse_error) == "LL-E101");
  CHECK(ll::error_id(ll::errc::invalid_loop) == "LL-E102");
  CHECK(ll::error_id(ll::errc::invalid_spec) == "LL-E103");
  CHECK(ll::error_id(ll::errc::template_syntax) == "LL-E201");
  CHECK(ll::error_id(ll::errc::evaluation_failed) == "LL-E301");
  CHECK(ll::error_id(ll::errc::no_transition) == "LL-E401");
  CHECK(ll::error_id(ll::errc::io_error) == "LL-E501");
  CHECK(ll::error_id(ll::errc::ok) == "LL-E000");
  static_assert(static_cast<int>(ll::errc::invalid_loop) == 102);
  static_assert(static_cast<int>(ll::errc::snapshot_mismatch) == 404);
}

TEST_CASE("errors format with id, path and message") {
  const ll::error plain{ll::errc::parse_error, "invalid JSON"};
  CHECK(ll::to_string(plain) == "LL-E101: invalid JSON");
  const ll::error located{ll::errc::invalid_loop, "bad", "states.x"};
  CHECK(ll::to_string(located) == "LL-E102 at states.x: bad");
  CHECK(fmt::format("{}", located) == "LL-E102 at states.x: bad");
  CHECK(fmt::format("[{:>30}]", plain) == "[" + std::string(9, ' ') + "LL-E101: invalid JSON]");

  const ll::error defaulted;
  CHECK(defaulted.code == ll::errc::ok);
  CHECK(defaulted.details.empty());
}

TEST_CASE("diagnostics format with severity and path") {
  const ll::diagnostic d{ll::severity::error, "states.fix.evaluate.operator",
                         "unknown operator \"eqq\"", "unknown-value"};
  CHECK(ll::to_string(d) == "error: states.fix.evaluate.operator: unknown operator \"eqq\"");
  CHECK(fmt::format("{}", d) == ll::to_string(d));
  const ll::diagnostic root{ll::severity::warning, "", "no description", "x"};
  CHECK(ll::to_string(root) == "warning: no description");
  CHECK(ll::to_string(ll::severity::warning) == "warning");
  CHECK(ll::to_string(ll::severity::error) == "error");
}

TEST_CASE("has_errors ignores warnings") {
  ll::diagnostics list;
  CHECK_FALSE(ll::has_errors(list));
  list.push_back({ll::severity::warning, "a", "w", "w"});
  CHECK_FALSE(ll::has_errors(list));
  list.push_back({ll::severity::error, "b", "e", "e"});
  CHECK(ll::has_errors(list));

  const ll::error e{ll::errc::invalid_loop, "bad", {}, list};
  CHECK(e.details == list);
}
