// little_loops — tests: the seed-004 feedback record
// SPDX-License-Identifier: MIT
#include <little_loops/evaluators.hpp>

#include <doctest/doctest.h>

namespace ll = little_loops;

TEST_SUITE("feedback") {
  TEST_CASE("record shape") {
    ll::prev_record p;
    p.verdict = "success";
    p.details = {{"exit_code", 0}};
    auto rec = ll::feedback_record(p);
    CHECK(rec["success"] == true);
    CHECK(rec.contains("scriptOutput"));
  }
}
