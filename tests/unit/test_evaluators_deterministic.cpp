// little_loops — tests: the deterministic evaluators (seed 000)
// SPDX-License-Identifier: MIT
#include <little_loops/evaluators.hpp>

#include <doctest/doctest.h>

namespace ll = little_loops;

TEST_SUITE("evaluators") {
  TEST_CASE("exit code mapping") {
    CHECK(ll::evaluate_exit_code(0).verdict == "success");
    CHECK(ll::evaluate_exit_code(1).verdict == "failure");
    CHECK(ll::evaluate_exit_code(2).verdict == "error");
    CHECK(ll::evaluate_exit_code(127).verdict == "error");
    CHECK(ll::evaluate_exit_code(127).details == ll::json{{"exit_code", 127}});
  }
}
