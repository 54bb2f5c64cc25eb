// little_loops — scripted_runner: replay by call index, by action text, default; from_json
// SPDX-License-Identifier: MIT
#include <little_loops/fsm.hpp>

#include <doctest/doctest.h>

namespace ll = little_loops;

namespace {
ll::action_request req(std::string_view text) {
  ll::action_request r;
  r.state = "s";
  r.text = text;
  return r;
}
}  // namespace

TEST_SUITE("scripted_runner") {
  TEST_CASE("by action text: k-th call gets the k-th entry, the last repeats") {
    ll::scripted_runner r;
    r.on_action("t", {ll::scripted_response::exit(1), ll::scripted_response::exit(2)});
    CHECK(r.run(req("t"))->exit_code == 1);
    CHECK(r.run(req("other"))->exit_code == 0);  // default
    CHECK(r.run(req("t"))->exit_code == 2);
    CHECK(r.run(req("t"))->exit_code == 2);
    CHECK(r.call_count() == 4);
    CHECK(r.last_action() == "t");
    CHECK(r.calls()[1].text == "other");
  }

  TEST_CASE("by call index first, then by text, then the default") {
    ll::scripted_runner r;
    r.by_index({ll::scripted_response::exit(7)})
        .on_action("t", ll::scripted_response::exit(3))
        .otherwise(ll::scripted_response::exit(9, "dflt"));
    CHECK_FALSE(r.last_call_scripted());
    CHECK(r.run(req("t"))->exit_code == 7);
    CHECK(r.last_call_scripted());  // by index
    CHECK(r.run(req("t"))->exit_code == 3);
    CHECK(r.last_call_scripted());  // by text
    auto d = r.run(req("u"));
    CHECK_FALSE(r.last_call_scripted());  // the default
    CHECK(d->exit_code == 9);
    CHECK(d->output == "dflt");
    r.reset();
    CHECK(r.call_count() == 0);
    CHECK_FALSE(r.last_call_scripted());
    CHECK(r.run(req("t"))->exit_code == 7);
  }

  TEST_CASE("scripted runner errors and abnormal results") {
    ll::scripted_runner r;
    r.on_action("x", ll::scripted_response(ll::error{ll::errc::action_failed, "cannot spawn"}));
    r.on_action("slow", ll::scripted_response::timeout());
    auto e = r.run(req("x"));
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().message == "cannot spawn");
    auto t = r.run(req("slow"));
    CHECK(t->timed_out);
    CHECK(t->exit_code == 124);
    r.record(false);
    r.run(req("y"));
    CHECK(r.calls().size() == 2);
    CHECK(r.call_count() == 3);
  }

  TEST_CASE("from_json") {
    auto r = ll::scripted_runner::from_json(ll::json::parse(R"({
      "by_index": [1, {"output": "first"}],
      "by_action": {"pytest": [{"exit_code": 1, "stderr": "E"}, 0], "lint": {"timed_out": true}},
      "default": {"exit_code": 0, "output": "ok", "duration_ms": 5}})"));
    REQUIRE(r.has_value());
    CHECK(r->run(req("a"))->exit_code == 1);
    CHECK(r->run(req("a"))->output == "first");
    auto p = r->run(req("pytest"));
    CHECK(p->exit_code == 1);
    CHECK(p->stderr_output == "E");
    CHECK(r->run(req("pytest"))->exit_code == 0);
    CHECK(r->run(req("lint"))->timed_out);
    auto d = r->run(req("zzz"));
    CHECK(d->output == "ok");
    CHECK(d->duration.count() == 5);

    auto bad = ll::scripted_runner::from_json(ll::json::parse(R"({"by_action": {"x": {"exitcode": 1}}})"));
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().path == "by_action.x.exitcode");
    auto bad2 = ll::scripted_runner::from_json(ll::json::parse(R"({"by_index": {}})"));
    REQUIRE_FALSE(bad2.has_value());
    CHECK(bad2.error().path == "by_index");
    auto bad3 = ll::scripted_runner::from_json(ll::json::parse(R"({"seq": []})"));
    REQUIRE_FALSE(bad3.has_value());
    auto bad4 = ll::scripted_runner::from_json(ll::json::parse(R"({"default": {"output": 3}})"));
    REQUIRE_FALSE(bad4.has_value());
    CHECK(bad4.error().path == "default.output");

    // Numbers that do not fit are refused, never wrapped (4294967297 would be exit 1).
    for (const char* doc : {R"({"default": {"exit_code": 4294967297}})",
                            R"({"default": 99999999999})", R"({"default": {"duration_ms": -5}})",
                            R"({"default": {"signal": -1}})",
                            R"({"by_index": [{"exit_code": -2147483649}]})"}) {
      CAPTURE(doc);
      auto e = ll::scripted_runner::from_json(ll::json::parse(doc));
      REQUIRE_FALSE(e.has_value());
      CHECK(e.error().message.find("out of range") != std::string::npos);
    }
    auto range = ll::scripted_runner::from_json(ll::json::parse(R"({"default": {"exit_code": 4294967297}})"));
    CHECK(range.error().path == "default.exit_code");
    auto negative = ll::scripted_runner::from_json(ll::json::parse(R"({"default": {"exit_code": -9}})"));
    REQUIRE(negative.has_value());
    CHECK(negative->run(req("x"))->exit_code == -9);
    // An empty list answers nothing: an error, not a silent fallback.
    auto empty = ll::scripted_runner::from_json(ll::json::parse(R"({"by_action": {"t": []}})"));
    REQUIRE_FALSE(empty.has_value());
    CHECK(empty.error().path == "by_action.t");
  }

  TEST_CASE("from_json: an action's k-th entry answers its k-th call, counting by_index calls") {
    auto r = ll::scripted_runner::from_json(ll::json::parse(R"({
      "by_index": [{"exit_code": 7}],
      "by_action": {"check": [{"exit_code": 1}, {"exit_code": 2}, {"exit_code": 3}]}})"));
    REQUIRE(r.has_value());
    CHECK(r->run(req("check"))->exit_code == 7);  // call 0: by_index (check's 1st call)
    CHECK(r->run(req("check"))->exit_code == 2);  // check's 2nd call: entry 1
    CHECK(r->run(req("other"))->exit_code == 0);
    CHECK(r->run(req("check"))->exit_code == 3);
    CHECK(r->run(req("check"))->exit_code == 3);  // the last repeats
  }
}
