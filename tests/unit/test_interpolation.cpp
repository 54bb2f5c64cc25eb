// little_loops — tests: template compilation and rendering
// SPDX-License-Identifier: MIT
#include <little_loops/interpolation.hpp>

#include <doctest/doctest.h>

namespace ll = little_loops;

namespace {

std::string render_ok(std::string_view text, const ll::interpolation_context& ctx) {
  auto r = ll::interpolate(text, ctx);
  REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.error().message));
  return *r;
}

}  // namespace

TEST_SUITE("interpolation") {
  TEST_CASE("basic namespaces") {
    ll::json context = {{"name", "world"}, {"n", 3}};
    ll::interpolation_context ctx;
    ctx.context = &context;
    ctx.state_name = "fix";
    ctx.iteration = 2;
    CHECK(render_ok("hello ${context.name} ${context.n} ${state.name}/${state.iteration}", ctx) ==
          "hello world 3 fix/2");
  }
}
