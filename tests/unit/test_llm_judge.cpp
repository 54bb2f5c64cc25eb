// little_loops — tests: the LLM judge (seed 003 behaviour)
// SPDX-License-Identifier: MIT
#include <little_loops/evaluators.hpp>

#include <doctest/doctest.h>

namespace ll = little_loops;

TEST_SUITE("llm_judge") {
  TEST_CASE("parse bare reply") {
    auto r = ll::parse_judge_reply(R"({"verdict":"success","confidence":0.9,"reason":"ok"})");
    CHECK(r.error.empty());
    CHECK(r.object["verdict"] == "success");
  }
}
