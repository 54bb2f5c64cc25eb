// little_loops — routing over a compiled state: resolution order, $current, interpolated targets
// SPDX-License-Identifier: MIT
#include <little_loops/detail/routing.hpp>

#include "executor_test_support.hpp"

#include <optional>
#include <string>
#include <string_view>

using namespace executor_test;

namespace {

// One routing decision from state `from` of `loop` for `verdict`, with no action failure.
struct router {
  explicit router(std::string_view text) : loop(compiled(text)) {}

  std::shared_ptr<const ll::compiled_loop> loop;
  ll::json context = ll::json::object();
  ll::evaluation_result result;
  ll::evaluation_details details;
  std::string text;

  ll::detail::route_query query(std::string_view from, std::string_view verdict) {
    const auto at = loop->find(from);
    REQUIRE(at.has_value());
    ctx.context = &context;
    result.verdict = std::string(verdict);
    ctx.result = &result;
    return ll::detail::route_query{.loop = loop.get(),
                                   .current = *at,
                                   .verdict = verdict,
                                   .failed_action = verdict == "error",
                                   .details = &details,
                                   .context = &ctx,
                                   .text = &text};
  }

  // The name of the state routed to, or the failure's message prefixed by "!".
  std::string name(const ll::detail::route_outcome& r) const {
    if (!r) return "!" + r.error().error.message;
    return loop->state(*r).name;
  }

  std::string route(std::string_view from, std::string_view verdict) {
    return name(ll::detail::route(query(from, verdict)));
  }

  ll::interpolation_context ctx;
};

constexpr std::string_view table_loop = R"({
  "name": "t", "initial": "a",
  "states": {
    "a": {"action": "x", "route": {"success": "exact", "error": "exact_error", "_": "dflt",
                                   "_error": "err"}, "on_success": "short"},
    "b": {"action": "x", "route": {"_error": "err", "_": "dflt"}, "on_blocked": "short"},
    "c": {"action": "x", "on_blocked": "short", "on_error": "err"},
    "exact": {"terminal": true}, "exact_error": {"terminal": true}, "dflt": {"terminal": true},
    "err": {"terminal": true}, "short": {"terminal": true}}})";

}  // namespace

TEST_SUITE("routing") {
  TEST_CASE("route table: the exact key comes first, also for `error`") {
    router r(table_loop);
    CHECK(r.route("a", "success") == "exact");
    CHECK(r.route("a", "error") == "exact_error");
  }

  TEST_CASE("`_error` takes the error verdict before `_` takes any verdict") {
    router r(table_loop);
    CHECK(r.route("b", "error") == "err");
    CHECK(r.route("b", "failure") == "dflt");
  }

  TEST_CASE("`_` comes before the on_<verdict> shorthands") {
    router r(table_loop);
    CHECK(r.route("b", "blocked") == "dflt");
    CHECK(r.route("a", "blocked") == "dflt");
  }

  TEST_CASE("on_<verdict> routes any verdict") {
    router r(table_loop);
    CHECK(r.route("c", "blocked") == "short");
    CHECK(r.route("c", "error") == "err");
  }

  TEST_CASE("no valid transition names the state, the verdict and an error's cause") {
    router r(table_loop);
    CHECK(r.route("c", "failure") ==
          R"(!No valid transition from state "c" for verdict "failure")");
    r.details = ll::json{{"error", "action timed out"}};
    const auto q = r.query("exact", "error");
    const auto out = ll::detail::route(q);
    REQUIRE_FALSE(out.has_value());
    CHECK(out.error().error.code == ll::errc::no_transition);
    CHECK(out.error().error.path == "states.exact");
    CHECK_FALSE(out.error().unrenderable);
    CHECK(r.name(out) ==
          R"(!No valid transition from state "exact" for verdict "error": action timed out)");
  }

  TEST_CASE("maintain: an unrouted verdict goes to on_maintain, else the initial state") {
    router r(R"({
      "name": "t", "initial": "a", "maintain": true,
      "states": {"a": {"action": "x", "on_success": "b"},
                 "b": {"action": "x", "on_success": "done", "on_maintain": "b"},
                 "done": {"terminal": true}}})");
    CHECK(r.route("a", "success") == "b");
    CHECK(r.route("a", "failure") == "a");
    CHECK(r.route("b", "failure") == "b");
  }

  TEST_CASE("next: the happy path, on_error for a failed action") {
    router r(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "next": "ok", "on_error": "recover"},
                 "b": {"action": "x", "next": "ok"},
                 "ok": {"terminal": true}, "recover": {"terminal": true}}})");
    auto q = r.query("a", "success");
    CHECK(r.name(ll::detail::route(q)) == "ok");
    q.failed_action = true;
    CHECK(r.name(ll::detail::route(q)) == "recover");
    SUBCASE("a failed action without on_error still takes next") {
      auto qb = r.query("b", "failure");
      qb.failed_action = true;
      CHECK(r.name(ll::detail::route(qb)) == "ok");
    }
    SUBCASE("an action that could not run goes to on_error, else is unrouted") {
      auto qa = r.query("a", "error");
      qa.unrunnable = true;
      CHECK(r.name(ll::detail::route(qa)) == "recover");
      auto qb = r.query("b", "error");
      qb.unrunnable = true;
      CHECK(r.name(ll::detail::route(qb)) ==
            R"(!No valid transition from state "b" for verdict "error")");
    }
  }

  TEST_CASE("$current re-enters the routed state") {
    router r(R"({
      "name": "t", "initial": "poll",
      "states": {"poll": {"action": "x", "on_failure": "$current", "on_success": "done"},
                 "spin": {"action": "x", "next": "$current"}, "done": {"terminal": true}}})");
    CHECK(r.route("poll", "failure") == "poll");
    CHECK(r.route("spin", "success") == "spin");
  }

  TEST_CASE("interpolated targets render at routing time and are checked") {
    router r(R"({
      "name": "t", "initial": "a", "context": {"where": "b"},
      "states": {"a": {"action": "x", "on_success": "${context.where}"},
                 "v": {"action": "x", "route": {"_": "to_${result.verdict}"}},
                 "b": {"terminal": true}, "to_failure": {"terminal": true}}})");
    r.context = ll::json{{"where", "b"}};
    CHECK(r.route("a", "success") == "b");
    CHECK(r.text == "b");
    CHECK(r.route("v", "failure") == "to_failure");
    r.context = ll::json{{"where", "$current"}};
    CHECK(r.route("a", "success") == "a");
    SUBCASE("a rendered name that is not a state is an unknown_state error") {
      r.context = ll::json{{"where", "nowhere"}};
      const auto out = ll::detail::route(r.query("a", "success"));
      REQUIRE_FALSE(out.has_value());
      CHECK(out.error().error.code == ll::errc::unknown_state);
      CHECK_FALSE(out.error().unrenderable);
      CHECK(r.name(out).find(R"(resolved to "nowhere")") != std::string::npos);
    }
    SUBCASE("a target that cannot be rendered is marked unrenderable") {
      r.context = ll::json::object();
      const auto out = ll::detail::route(r.query("a", "success"));
      REQUIRE_FALSE(out.has_value());
      CHECK(out.error().unrenderable);
      CHECK(r.name(out).find(R"(route target "${context.where}" of state "a")") !=
            std::string::npos);
    }
  }

  TEST_CASE("take_static: states and $current resolve, unknown names fail when taken") {
    auto loop = ll::load_loop_text(R"({
      "name": "t", "initial": "a",
      "states": {"a": {"action": "x", "on_success": "done"}, "done": {"terminal": true}}})");
    REQUIRE(loop.has_value());
    loop->maintain = true;
    loop->states["a"].on_maintain = "ghost";
    auto c = ll::compile_loop(*loop);
    REQUIRE(c.has_value());
    const auto a = *(*c)->find("a");
    const ll::compiled_state& st = (*c)->state(a);
    const auto done = ll::detail::take_static(st, st.on.front().second, a);
    REQUIRE(done.has_value());
    CHECK((*c)->state(*done).name == "done");
    ll::compiled_target current;
    current.type = ll::compiled_target::kind::current;
    CHECK(ll::detail::take_static(st, current, a) == a);
    const auto ghost = ll::detail::take_static(st, st.maintain_target, a);
    REQUIRE_FALSE(ghost.has_value());
    CHECK(ghost.error().code == ll::errc::unknown_state);
    CHECK(ghost.error().message.find(R"(route target "ghost" of state "a" is not a state)") !=
          std::string::npos);
  }
}
