// little_loops — snapshot: JSON round-trip, strict reading, loop digest, resume at any boundary
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace executor_test;

namespace {

constexpr std::string_view fix_loop = R"({
  "name": "fixer", "initial": "check", "context": {"dir": "src"},
  "states": {"check": {"action": "pytest ${context.dir}", "capture": "tests",
                       "on_success": "done", "on_failure": "fix"},
             "fix": {"action": "fix ${prev.exit_code}", "next": "check"},
             "done": {"terminal": true}}})";

ll::snapshot sample() {
  ll::snapshot s;
  s.loop_name = "fixer";
  s.digest = "0123456789abcdef";
  s.current_state = "fix";
  s.iteration = 3;
  s.summary_executed = true;
  s.context = ll::json{{"dir", "src"}, {"n", 2}};
  s.captured["tests"] = ll::captured_record{"out", "err", 1, 12, "failure", "", "", {}};
  ll::prev_record p;
  p.state = "check";
  p.output = "o";
  p.stderr_output = "e";
  p.exit_code = 1;
  p.verdict = "failure";
  p.details = ll::json{{"exit_code", 1}};
  s.prev = p;
  s.convergence["measure"] = 4.5;
  s.elapsed_ms = 1234;
  s.started_at = "2026-01-01T00:00:00.000000+00:00";
  return s;
}

}  // namespace

TEST_SUITE("snapshot") {
  TEST_CASE("JSON round-trip") {
    const ll::snapshot s = sample();
    const ll::json j = ll::to_json(s);
    CHECK(j["version"] == 1);
    CHECK(j["current_state"] == "fix");
    CHECK(j["captured"]["tests"]["stderr"] == "err");
    CHECK(j["prev"]["stderr"] == "e");
    auto back = ll::snapshot_from_json(j);
    REQUIRE(back.has_value());
    CHECK(*back == s);
    auto text = ll::snapshot_from_json_text(j.dump());
    REQUIRE(text.has_value());
    CHECK(*text == s);

    ll::snapshot empty_prev = s;
    empty_prev.prev.reset();
    auto again = ll::snapshot_from_json(ll::to_json(empty_prev));
    REQUIRE(again.has_value());
    CHECK_FALSE(again->prev.has_value());

    // A state that ran no action: `ran_action: false`, written only then (older snapshots,
    // without the key, read as having run one).
    CHECK_FALSE(j["prev"].contains("ran_action"));
    ll::snapshot no_action = s;
    no_action.prev->ran_action = false;
    const ll::json k = ll::to_json(no_action);
    CHECK(k["prev"]["ran_action"] == false);
    auto read = ll::snapshot_from_json(k);
    REQUIRE(read.has_value());
    CHECK_FALSE(read->prev->ran_action);
    CHECK(*read == no_action);
    ll::json bad = k;
    bad["prev"]["ran_action"] = "no";
    auto refused = ll::snapshot_from_json(bad);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().path == "prev.ran_action");

    // An unevaluated prev (`evaluated: false`, written only then) and the last evaluation
    // kept beside it (`last_evaluation`, written only when set).
    CHECK_FALSE(j.contains("last_evaluation"));
    CHECK_FALSE(j["prev"].contains("evaluated"));
    ll::snapshot kept = s;
    kept.last_evaluation = *kept.prev;
    kept.prev->state = "log";
    kept.prev->evaluated = false;
    const ll::json m = ll::to_json(kept);
    CHECK(m["prev"]["evaluated"] == false);
    CHECK(m["last_evaluation"]["state"] == "check");
    auto read_kept = ll::snapshot_from_json(m);
    REQUIRE(read_kept.has_value());
    CHECK(*read_kept == kept);
    ll::json bad_last = m;
    bad_last["last_evaluation"]["verdict"] = 1;
    auto refused_last = ll::snapshot_from_json(bad_last);
    REQUIRE_FALSE(refused_last.has_value());
    CHECK(refused_last.error().path == "last_evaluation.verdict");
    bad_last = m;
    bad_last["prev"]["evaluated"] = "no";
    REQUIRE_FALSE(ll::snapshot_from_json(bad_last).has_value());
  }

  TEST_CASE("append_json_text writes any JSON value exactly as dump(-1, ' ', false, replace)") {
    const auto dumped = [](const ll::json& v) {
      return v.dump(-1, ' ', false, ll::json::error_handler_t::replace);
    };
    const auto appended = [](const ll::json& v) {
      std::string out = "<";
      ll::detail::append_json_text(out, v);
      REQUIRE(out.front() == '<');
      return out.substr(1);
    };
    const std::string bad_utf8 = std::string("a\xff\xc3(") + "\xe2\x82\xac\x01\"\\/";
    const std::vector<ll::json> values = {
        nullptr, true, false, 0, -1, std::numeric_limits<std::int64_t>::min(),
        std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::uint64_t>::max(),
        ll::json(std::uint64_t{0}), 0.0, -0.0, 1.5, 3.0, 1e300, -2.5e-300, 0.1, "", "plain",
        bad_utf8, ll::json::array(), ll::json::object(),
        ll::json::array({1, "two", nullptr, ll::json::array({ll::json::array()}), 2.25}),
        ll::json{{"k", "v"}, {bad_utf8, {{"nested", ll::json::array({bad_utf8, -0.0})}}},
                 {"", ll::json::object()}, {"u", std::numeric_limits<std::uint64_t>::max()}},
        ll::json::binary({1, 2, 3}), ll::json::binary({255}, 7)};
    for (const ll::json& v : values) {
      INFO(dumped(v));
      CHECK(appended(v) == dumped(v));
    }
    // Key order is insertion order, as in the dump.
    ll::json ordered = ll::json::object();
    ordered["z"] = 1;
    ordered["a"] = 2;
    ordered["m"] = ll::json::object({{"y", 1}, {"b", 2}});
    CHECK(appended(ordered) == R"({"z":1,"a":2,"m":{"y":1,"b":2}})");
    CHECK(appended(ordered) == dumped(ordered));
  }

  TEST_CASE("append_json_string: the eight-bytes-at-a-time test finds every byte that needs escaping") {
    const auto plain = [](std::string_view v) {
      for (const char ch : v) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') return false;
      }
      return true;
    };
    const auto dumped = [](const std::string& v) {
      return ll::json(v).dump(-1, ' ', false, ll::json::error_handler_t::replace);
    };
    // Every byte value at every position of strings of 1 to 24 bytes, on a background of
    // the bytes next to the boundaries (0x20 and 0x7e, which borrow and carry nothing).
    for (const char background : {' ', '~', 'a'}) {
      for (std::size_t len = 1; len <= 24; ++len) {
        for (std::size_t pos = 0; pos < len; ++pos) {
          for (int b = 0; b < 256; ++b) {
            std::string v(len, background);
            v[pos] = static_cast<char>(b);
            INFO("len " << len << " pos " << pos << " byte " << b);
            REQUIRE(ll::detail::json_plain_ascii(v) == plain(v));
            if (b % 17 == 0 || b == '"' || b == '\\' || b == 0x1f || b == 0x20 || b == 0x7f || b == 0x80) {
              std::string out;
              ll::detail::append_json_string(out, v);
              REQUIRE(out == dumped(v));
            }
          }
        }
      }
    }
    CHECK(ll::detail::json_plain_ascii(""));
    // Random strings, mostly printable, some with a byte that needs escaping.
    std::mt19937 rng(2026);
    for (int i = 0; i < 20000; ++i) {
      std::string v(rng() % 40, 'x');
      for (char& c : v) c = static_cast<char>(0x20 + rng() % 0x5f);
      if (!v.empty() && rng() % 2 == 0) v[rng() % v.size()] = static_cast<char>(rng() % 256);
      INFO(dumped(v));
      REQUIRE(ll::detail::json_plain_ascii(v) == plain(v));
      std::string out;
      ll::detail::append_json_string(out, v);
      REQUIRE(out == dumped(v));
    }
  }

  TEST_CASE("append_json_string: escapes and replaces ill-formed UTF-8 exactly as nlohmann's replace handler") {
    const auto dumped = [](const std::string& v) {
      return ll::json(v).dump(-1, ' ', false, ll::json::error_handler_t::replace);
    };
    const auto appended = [](const std::string& v) {
      std::string out = "x";
      ll::detail::append_json_string(out, v);
      return out.substr(1);
    };
    // Every one- and two-byte string, and every lead byte followed by every second byte
    // and a third from the edges of the continuation range.
    for (int a = 0; a < 256; ++a) {
      const std::string one(1, static_cast<char>(a));
      REQUIRE(appended(one) == dumped(one));
      for (int b = 0; b < 256; ++b) {
        std::string two{static_cast<char>(a), static_cast<char>(b)};
        INFO(a << " " << b);
        REQUIRE(appended(two) == dumped(two));
        if (a >= 0xC0)
          for (int c : {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xE0, 0xF0, 0xFF}) {
            std::string three = two + static_cast<char>(c);
            REQUIRE(appended(three) == dumped(three));
            three += "\x80\x80z";
            REQUIRE(appended(three) == dumped(three));
          }
      }
    }
    // Random strings from the bytes that matter to UTF-8 and to escaping.
    const unsigned char pool[] = {0x00, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1F, 0x20, '"', '\\', 'a', 0x7F,
                                  0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
                                  0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
    std::mt19937 rng(20261124);
    for (int i = 0; i < 200000; ++i) {
      std::string v(rng() % 12, ' ');
      for (char& c : v) c = static_cast<char>(pool[rng() % sizeof pool]);
      INFO(dumped(v));
      REQUIRE(appended(v) == dumped(v));
    }
    // Long runs: the eight-byte scan meets escapes and sequences at every offset.
    for (int i = 0; i < 2000; ++i) {
      std::string v(rng() % 100, 'q');
      for (int k = 0; k < 4 && !v.empty(); ++k) v[rng() % v.size()] = static_cast<char>(pool[rng() % sizeof pool]);
      REQUIRE(appended(v) == dumped(v));
    }
    const std::string big = std::string(1 << 20, 'y') + "\n\xE2\x82\xAC\xFF" + std::string(1 << 20, 'z');
    CHECK(appended(big) == dumped(big));
  }

  TEST_CASE("append_snapshot_json writes exactly the text of to_json(s).dump()") {
    const auto dumped = [](const ll::snapshot& snap) {
      return ll::to_json(snap).dump(-1, ' ', false, ll::json::error_handler_t::replace);
    };
    const auto appended = [](const ll::snapshot& snap) {
      std::string out = "prefix";
      ll::append_snapshot_json(out, snap);
      REQUIRE(out.rfind("prefix", 0) == 0);
      return out.substr(6);
    };
    ll::snapshot s = sample();
    CHECK(appended(s) == dumped(s));

    // Hostile strings (quotes, controls, invalid UTF-8, non-ASCII), several captures,
    // awkward numbers, nested context, no prev, compact exit-code details.
    const std::string hostile = std::string("q\"b\\s\n\t\x01\x7f\xff\xc3(") + "\xe2\x82\xac end";
    s.loop_name = hostile;
    s.current_state = "st\"ate";
    s.started_at = hostile;
    s.context = ll::json{{"k\n", {1, 2.5, nullptr, "x\x80"}}, {"empty", ll::json::object()}};
    s.captured[hostile] = ll::captured_record{hostile, "", -1, 0, "err\"or", "", "", {}};
    s.captured["third"] = ll::captured_record{"", hostile, 255, 9007199254740993LL, "", "", "", {}};
    s.convergence["a"] = 0.1;
    s.convergence[hostile] = -0.0;
    s.convergence["big"] = 1e300;
    s.convergence["int"] = 3.0;
    s.iteration = -5;
    s.elapsed_ms = std::numeric_limits<std::int64_t>::max();
    CHECK(appended(s) == dumped(s));
    s.prev->output = hostile;
    s.prev->details = ll::json{{"nested", {{"a", hostile}}}};
    CHECK(appended(s) == dumped(s));
    s.prev->details = ll::evaluation_details::exit_code(7);
    CHECK(appended(s) == dumped(s));
    s.prev->ran_action = false;
    CHECK(appended(s) == dumped(s));
    s.last_evaluation = *s.prev;
    s.last_evaluation->output = hostile;
    s.prev->evaluated = false;
    CHECK(appended(s) == dumped(s));
    s.last_evaluation.reset();
    s.prev.reset();
    s.captured.clear();
    s.convergence.clear();
    s.context = ll::json::object();
    CHECK(appended(s) == dumped(s));
    // And the text reads back as the same snapshot.
    auto back = ll::snapshot_from_json_text(appended(sample()));
    REQUIRE(back.has_value());
    CHECK(*back == sample());
  }

  TEST_CASE("bytes that are not UTF-8 come back exactly: raw_bytes") {
    ll::snapshot s = sample();
    CHECK_FALSE(ll::to_json(s).contains("raw_bytes"));  // only when needed
    const std::string latin1 = "caf\xe9 \xff\xfe\x80 end";  // a Latin-1 file's text
    s.captured["tests"].output = latin1;
    s.captured["tests"].stderr_output = std::string("\xc3", 1);  // a sequence cut short
    s.prev->output = latin1 + "/p";
    s.prev->details = ll::json{{"lines", {"ok", std::string("\xed\xa0\x80")}}};  // a surrogate
    s.context["path~/x"] = ll::json{{"v", latin1}};
    s.context["odd"] = ll::json{{std::string("bad\xff key"), latin1}};  // a key that is not UTF-8: stays replaced
    const ll::json j = ll::to_json(s);
    REQUIRE(j.contains("raw_bytes"));
    const ll::json& raw = j["raw_bytes"];
    CHECK(raw.size() == 5);
    CHECK(raw["/captured/tests/output"] == "Y2Fm6SD//oAgZW5k");
    CHECK(raw["/captured/tests/stderr"] == "ww==");
    CHECK(raw.contains("/prev/output"));
    CHECK(raw.contains("/prev/details/lines/1"));
    CHECK(raw.contains("/context/path~0~1x/v"));
    // Written, and read back: every string as it was, but under the key that is not UTF-8.
    std::string text;
    ll::append_snapshot_json(text, s);
    CHECK(text == j.dump(-1, ' ', false, ll::json::error_handler_t::replace));
    auto back = ll::snapshot_from_json_text(text);
    REQUIRE(back.has_value());
    CHECK(back->captured["tests"].output == latin1);
    CHECK(back->captured["tests"].stderr_output == "\xc3");
    CHECK(back->prev->output == latin1 + "/p");
    CHECK(back->prev->details.to_json()["lines"][1] == std::string("\xed\xa0\x80"));
    CHECK(back->context["path~/x"]["v"] == latin1);
    CHECK(back->context["odd"]["bad\xef\xbf\xbd key"] == "caf\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end");
    s.context.erase("odd");
    back->context.erase("odd");
    CHECK(*back == s);

    // Entries are checked: each must name a string it restores, in strict base64.
    const auto refused = [&](const std::function<void(ll::json&)>& edit, std::string_view path,
                             std::string_view message) {
      ll::json bad = ll::json::parse(text);
      edit(bad);
      auto r = ll::snapshot_from_json(bad);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == ll::errc::invalid_snapshot);
      CHECK(r.error().path == path);
      CHECK(r.error().message.find(message) != std::string::npos);
    };
    refused([](ll::json& b) { b["raw_bytes"] = 5; }, "raw_bytes", "must be an object");
    refused([](ll::json& b) { b["raw_bytes"]["/captured/tests/output"] = 1; },
            "raw_bytes./captured/tests/output", "must be a string");
    refused([](ll::json& b) { b["raw_bytes"]["/captured/tests/output"] = "Y2Fm6SD//oAgZW5"; },
            "raw_bytes./captured/tests/output", "is not base64");
    refused([](ll::json& b) { b["raw_bytes"]["/captured/tests/stderr"] = "wx=="; },
            "raw_bytes./captured/tests/stderr", "is not base64");  // unused bits set
    refused([](ll::json& b) { b["raw_bytes"]["/captured/tests/stderr"] = "YQ=="; },
            "raw_bytes./captured/tests/stderr", "does not match the string it restores");
    refused([](ll::json& b) { b["raw_bytes"]["/captured/none/output"] = "ww=="; },
            "raw_bytes./captured/none/output", "names nothing in the snapshot");
    refused([](ll::json& b) { b["raw_bytes"]["captured"] = "ww=="; }, "raw_bytes.captured",
            "not a JSON Pointer");
    refused([](ll::json& b) { b["raw_bytes"]["/a~2"] = "ww=="; }, "raw_bytes./a~2", "a '~' not followed by 0 or 1");
    refused([](ll::json& b) { b["raw_bytes"]["/iteration"] = "ww=="; }, "raw_bytes./iteration",
            "names a number, not a string");
    refused([](ll::json& b) { b["raw_bytes"]["/prev/details/lines/01"] = "ww=="; },
            "raw_bytes./prev/details/lines/01", "names nothing");
    refused([](ll::json& b) { b["raw_bytes"]["/captured/tests/output"] = "Y2Fm6SD//oAgZW5k"; b["loop"] = 3; },
            "loop", "must be a string");  // the rest is read as strictly as ever
  }

  TEST_CASE("raw_bytes: a big string with a few stray bytes is kept as patches, not whole") {
    ll::snapshot s = sample();
    const std::string big = std::string(100000, 'a') + "\xff" + std::string(50000, 'b') + "\xe2\x82" +
                            "\xef\xbf\xbd" /* a real U+FFFD */ + "\x80\xc3" + "z";
    s.captured["tests"].output = big;
    const ll::json j = ll::to_json(s);
    const ll::json& patches = j["raw_bytes"]["/captured/tests/output"];
    // [offset in the written string, base64 of a run of ill-formed sequences]: the runs at
    // 100000 (\xff), 150003 (\xe2\x82) and, after the real U+FFFD, \x80 and \xc3 as one.
    CHECK(patches == ll::json::parse(R"([[100000, "/w=="], [150003, "4oI="], [150009, "gMM="]])"));
    // Dense stray bytes (binary output): the whole string, which is shorter.
    std::string binary;
    for (int i = 0; i < 3000; ++i) binary += (i % 2 != 0) ? '\xff' : 'a';
    ll::snapshot dense = s;
    dense.captured["tests"].output = binary;
    CHECK(ll::to_json(dense)["raw_bytes"]["/captured/tests/output"] == ll::detail::base64_encode(binary));
    CHECK(ll::snapshot_from_json(ll::to_json(dense)) == dense);
    std::string text;
    ll::append_snapshot_json(text, s);
    CHECK(text == j.dump(-1, ' ', false, ll::json::error_handler_t::replace));
    CHECK(text.size() < big.size() + 1000);  // not the whole string again in base64
    auto back = ll::snapshot_from_json_text(text);
    REQUIRE(back.has_value());
    CHECK(*back == s);
    // Patches are checked like whole entries.
    const auto refused = [&](ll::json bad_patches, std::string_view path, std::string_view message) {
      ll::json bad = ll::json::parse(text);
      bad["raw_bytes"]["/captured/tests/output"] = std::move(bad_patches);
      auto r = ll::snapshot_from_json(bad);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().path == path);
      CHECK(r.error().message.find(message) != std::string::npos);
    };
    const std::string at = "raw_bytes./captured/tests/output";
    refused(ll::json::parse(R"([[100001, "/w=="]])"), at + "[0]", "does not match");  // no U+FFFD there
    refused(ll::json::parse(R"([[150003, "4oI="], [100000, "/w=="]])"), at + "[1]", "does not match");  // out of order
    refused(ll::json::parse(R"([[100000, "/w=="], [100000, "/w=="]])"), at + "[1]", "does not match");  // overlapping
    refused(ll::json::parse(R"([[100000]])"), at + "[0]", "a patch is [offset, base64]");
    refused(ll::json::parse(R"([[-1, "/w=="]])"), at + "[0]", "a patch is [offset, base64]");
    refused(ll::json::parse(R"([[100000, ""]])"), at + "[0]", "is not base64 of some bytes");
    refused(ll::json::parse(R"([[999999999, "/w=="]])"), at + "[0]", "does not match");
    refused(ll::json(5), at, "must be a string (base64) or an array");
    refused(ll::json::array(), at, "an empty list of patches");
  }

  TEST_CASE("raw_bytes: strings under a key that is not UTF-8 stay replaced, and the snapshot reads") {
    // Written, the key "\xff" becomes "\u{FFFD}", which may be another key of the object:
    // nothing under such an object is pointed at, and the snapshot still reads back.
    ll::snapshot s = sample();
    s.context = ll::json::object();
    s.context["\xef\xbf\xbd"] = "caf\xe9";
    s.context["\xff"] = "x";
    s.context["other"] = ll::json{{"deep", "\xfe"}};
    s.captured[std::string("\xff")] = ll::captured_record{"\xfe", "", 0, 0, "success", "", "", {}};
    s.prev->output = "o\xfe";  // elsewhere, bytes are kept
    const ll::json j = ll::to_json(s);
    CHECK(j["raw_bytes"] == ll::json{{"/prev/output", "b/4="}});
    auto back = ll::snapshot_from_json_text(j.dump(-1, ' ', false, ll::json::error_handler_t::replace));
    REQUIRE(back.has_value());
    CHECK(back->prev->output == "o\xfe");
    CHECK(back->context["other"]["deep"] == "\xef\xbf\xbd");
  }

  TEST_CASE("base64: RFC 4648 vectors, both ways") {
    const std::pair<std::string_view, std::string_view> vectors[] = {
        {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}, {"\xff\xfe\xfd", "//79"}};
    for (const auto& [plain, coded] : vectors) {
      CHECK(ll::detail::base64_encode(plain) == coded);
      CHECK(ll::detail::base64_decode(coded) == std::optional<std::string>(std::string(plain)));
    }
    for (std::string_view bad : {"Zg", "Zg=", "Z===", "Zm9v\n", "Zm 9", "Zh==", "Zm9=", "=Zm9", "Zg==Zg=="})
      CHECK_FALSE(ll::detail::base64_decode(bad).has_value());
  }

  TEST_CASE("to_json(captured_map): the records as a snapshot writes them") {
    ll::captured_map captured;
    captured["build"] = ll::captured_record{"ok", "warn", 2, 15, "failure", "", "", {}};
    const ll::json expected = ll::json::parse(
        R"({"build": {"output": "ok", "stderr": "warn", "exit_code": 2, "duration_ms": 15, "verdict": "failure"}})");
    CHECK(ll::to_json(captured) == expected);
    ll::snapshot s;
    s.captured = ll::captured_map(captured);
    CHECK(ll::to_json(s)["captured"] == expected);
  }

  TEST_CASE("strict reading: paths in errors") {
    const ll::json good = ll::to_json(sample());
    auto expect_error = [](const ll::json& j, std::string_view path) {
      auto r = ll::snapshot_from_json(j);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == ll::errc::invalid_snapshot);
      CHECK(r.error().path == path);
    };
    SUBCASE("unknown key") {
      ll::json j = good;
      j["extra"] = 1;
      expect_error(j, "extra");
    }
    SUBCASE("missing key") {
      ll::json j = good;
      j.erase("iteration");
      expect_error(j, "iteration");
    }
    SUBCASE("wrong type") {
      ll::json j = good;
      j["iteration"] = "3";
      expect_error(j, "iteration");
    }
    SUBCASE("nested wrong type") {
      ll::json j = good;
      j["captured"]["tests"]["exit_code"] = "1";
      expect_error(j, "captured.tests.exit_code");
    }
    SUBCASE("nested unknown key") {
      ll::json j = good;
      j["prev"]["evaluation"] = 1;
      expect_error(j, "prev.evaluation");
    }
    SUBCASE("version") {
      ll::json j = good;
      j["version"] = 99;
      expect_error(j, "version");
    }
    SUBCASE("not an object") { expect_error(ll::json::array(), ""); }
    SUBCASE("not JSON") {
      auto r = ll::snapshot_from_json_text("{nope");
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == ll::errc::parse_error);
    }
  }

  TEST_CASE("loop digest: stable, 16 hex digits, changes with the definition") {
    const ll::fsm_loop a = loop_from(fix_loop);
    const ll::fsm_loop b = loop_from(fix_loop);
    const std::string da = ll::loop_digest(a);
    CHECK(da.size() == 16);
    CHECK(da.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(da == ll::loop_digest(b));
    ll::fsm_loop c = a;
    c.states.begin()->second.action = "something else";
    CHECK(ll::loop_digest(c) != da);
    ll::fsm_loop limit = a;  // a limit is not the definition: resume may raise it
    limit.max_iterations = 7;
    CHECK(ll::loop_digest(limit) == da);
    auto compiled_a = ll::compile_loop(a);
    REQUIRE(compiled_a.has_value());
    CHECK((*compiled_a)->digest() == da);
    CHECK(ll::detail::fnv1a_64("") == 14695981039346656037ULL);
    CHECK(ll::detail::fnv1a_64("a") == 0xaf63dc4c8601ec8cULL);
  }

  TEST_CASE("resume refuses a snapshot whose digest does not match the loop") {
    ll::scripted_runner runner;
    auto ex = ll::make_executor(compiled(fix_loop), runner);
    REQUIRE(ex.has_value());
    ll::snapshot s = ex->snapshot();
    s.digest = "ffffffffffffffff";
    auto r = ex->resume(s);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ll::errc::snapshot_mismatch);

    ll::snapshot other = ex->snapshot();
    other.current_state = "ghost";
    auto r2 = ex->resume(other);
    REQUIRE_FALSE(r2.has_value());
    CHECK(r2.error().code == ll::errc::snapshot_mismatch);

    // A snapshot of a changed definition is refused too.
    ll::fsm_loop changed = loop_from(fix_loop);
    changed.backoff = 9;
    ll::scripted_runner runner2;
    auto ex2 = ll::make_executor(changed, runner2);
    REQUIRE(ex2.has_value());
    auto r3 = ex2->resume(ex->snapshot());
    REQUIRE_FALSE(r3.has_value());
    CHECK(r3.error().code == ll::errc::snapshot_mismatch);
    // A new limit is not a new definition.
    ll::fsm_loop raised = loop_from(fix_loop);
    raised.max_iterations = 90;
    ll::scripted_runner runner3;
    auto ex3 = ll::make_executor(raised, runner3);
    REQUIRE(ex3.has_value());
    CHECK(ex3->resume(ex->snapshot()).has_value());
  }

  TEST_CASE("a snapshot taken at any boundary resumes exactly where it stopped") {
    auto loop = compiled(fix_loop);
    auto script = [](ll::scripted_runner& r) {
      r.by_index({exit_with(1, "1 failed\n"), exit_with(0), exit_with(1, "still\n"), exit_with(0),
                  exit_with(0, "ok\n")});
    };
    // Uninterrupted reference run.
    ll::scripted_runner ref_runner;
    script(ref_runner);
    auto ref = ll::make_executor(loop, ref_runner);
    REQUIRE(ref.has_value());
    const auto& expected_result = ref->run();

    for (int stop_after = 0; stop_after <= 4; ++stop_after) {
      CAPTURE(stop_after);
      ll::scripted_runner r1;
      script(r1);
      auto ex1 = ll::make_executor(loop, r1);
      REQUIRE(ex1.has_value());
      for (int i = 0; i < stop_after; ++i) REQUIRE(ex1->step());
      const ll::json saved = ll::to_json(ex1->snapshot());

      // Continue with a runner whose script starts where the first one stopped.
      ll::scripted_runner r2;
      std::vector<ll::scripted_response> rest;
      const std::vector<ll::scripted_response> all{exit_with(1, "1 failed\n"), exit_with(0),
                                                   exit_with(1, "still\n"), exit_with(0),
                                                   exit_with(0, "ok\n")};
      for (std::size_t k = r1.call_count(); k < all.size(); ++k) rest.push_back(all[k]);
      r2.by_index(rest);
      auto ex2 = ll::make_executor(loop, r2);
      REQUIRE(ex2.has_value());
      auto snap = ll::snapshot_from_json(saved);
      REQUIRE(snap.has_value());
      REQUIRE(ex2->resume(*snap).has_value());
      const auto& got = ex2->run();
      CHECK(got.final_state == expected_result.final_state);
      CHECK(got.iterations == expected_result.iterations);
      CHECK(got.terminated_by == expected_result.terminated_by);
      CHECK(got.captured == expected_result.captured);
      CHECK(r1.call_count() + r2.call_count() == ref_runner.call_count());
      std::vector<std::string> texts;
      for (const auto& c : r1.calls()) texts.push_back(c.text);
      for (const auto& c : r2.calls()) texts.push_back(c.text);
      std::vector<std::string> ref_texts;
      for (const auto& c : ref_runner.calls()) ref_texts.push_back(c.text);
      CHECK(texts == ref_texts);  // prev/context survived: same interpolated actions
    }
  }

  TEST_CASE("snapshot_view: the executor's state by reference, written as its snapshot") {
    // A run with context, a capture, prev, two convergence memories and a started clock:
    // at every boundary the view writes the same bytes as snapshot(), and materializes to it.
    ll::scripted_runner runner;
    runner.on_action("measure a", {exit_with(0, "10"), exit_with(0, "7")});
    runner.on_action("measure b", {exit_with(0, "5"), exit_with(0, "5")});
    auto loop = compiled(R"({
      "name": "views", "initial": "a", "context": {"dir": "src", "n": [1, 2]},
      "states": {"a": {"action": "measure a", "capture": "first",
                       "evaluate": {"type": "convergence", "target": 0},
                       "route": {"target": "done", "progress": "b", "stall": "b"}},
                 "b": {"action": "measure b",
                       "evaluate": {"type": "convergence", "target": 0},
                       "route": {"target": "done", "progress": "a", "stall": "a"}},
                 "done": {"terminal": true}}})");
    ll::manual_clock clock;
    ll::executor_options options;
    options.clock = &clock;
    auto ex = ll::make_executor(loop, runner, ll::default_evaluator{}, ll::null_event_sink{}, options);
    REQUIRE(ex.has_value());
    const auto check_boundary = [&](int step) {
      CAPTURE(step);
      const ll::snapshot copy = ex->snapshot();
      const ll::snapshot_view view = ex->snapshot_view();
      std::string from_copy, from_view;
      ll::append_snapshot_json(from_copy, copy);
      ll::append_snapshot_json(from_view, view);
      CHECK(from_view == from_copy);
      CHECK(view.materialize() == copy);
      CHECK((view.prev == nullptr) == !copy.prev.has_value());
      CHECK(view.convergence.size() == copy.convergence.size());
    };
    check_boundary(0);  // nothing ran: no prev, no convergence, no captures
    for (int step = 1; step <= 4; ++step) {
      clock.advance(std::chrono::milliseconds(250));
      REQUIRE(ex->step());
      check_boundary(step);
    }
    const ll::snapshot last = ex->snapshot();
    CHECK(last.convergence.size() == 2);
    CHECK(last.captured.count("first") == 1);
    CHECK(last.elapsed_ms == 750);  // the run's clock starts with the first step

    // A view of an empty snapshot_view (null members) writes empty objects and a null prev.
    std::string empty;
    ll::append_snapshot_json(empty, ll::snapshot_view{});
    CHECK(empty == ll::to_json(ll::snapshot{}).dump());
    CHECK(ll::snapshot_view{}.materialize() == ll::snapshot{});
  }

  TEST_CASE("convergence memories are listed in state order, whichever state converged first") {
    // "late" comes after "early" in the document but runs first; a resumed executor lists
    // the memories it was given in the same order.
    ll::scripted_runner runner;
    runner.on_action("late", {exit_with(0, "9")});
    runner.on_action("early", {exit_with(0, "4")});
    auto loop = compiled(R"({
      "name": "order", "initial": "late",
      "states": {"early": {"action": "early", "evaluate": {"type": "convergence", "target": 0},
                           "route": {"target": "done", "progress": "done", "stall": "done"}},
                 "late": {"action": "late", "evaluate": {"type": "convergence", "target": 0},
                          "route": {"target": "done", "progress": "early", "stall": "early"}},
                 "done": {"terminal": true}}})");
    auto ex = ll::make_executor(loop, runner);
    REQUIRE(ex.has_value());
    REQUIRE(ex->step());
    REQUIRE(ex->snapshot_view().convergence.size() == 1);
    CHECK(ex->snapshot_view().convergence[0].first == "late");
    REQUIRE(ex->step());
    const ll::snapshot_view view = ex->snapshot_view();
    REQUIRE(view.convergence.size() == 2);
    CHECK(view.convergence[0].first == "early");
    CHECK(view.convergence[0].second == doctest::Approx(4.0));
    CHECK(view.convergence[1].first == "late");
    const ll::snapshot s = ex->snapshot();

    ll::scripted_runner idle;
    auto resumed = ll::make_executor(loop, idle);
    REQUIRE(resumed.has_value());
    REQUIRE(resumed->resume(s).has_value());
    CHECK(resumed->snapshot() == s);
    REQUIRE(resumed->snapshot_view().convergence.size() == 2);
    CHECK(resumed->snapshot_view().convergence[0].first == "early");
    resumed->reset();
    CHECK(resumed->snapshot_view().convergence.empty());
  }

  TEST_CASE("convergence memory is kept in snapshots") {
    ll::scripted_runner runner;
    runner.on_action("measure", {exit_with(0, "10"), exit_with(0, "8"), exit_with(0, "8")});
    auto loop = compiled(R"({
      "name": "conv", "initial": "measure",
      "states": {"measure": {"action": "measure",
                             "evaluate": {"type": "convergence", "target": 0},
                             "route": {"target": "done", "progress": "measure", "stall": "stuck"}},
                 "done": {"terminal": true}, "stuck": {"terminal": true, "failure": true}}})");
    auto ex = ll::make_executor(loop, runner);
    REQUIRE(ex.has_value());
    REQUIRE(ex->step());
    const ll::snapshot s = ex->snapshot();
    REQUIRE(s.convergence.count("measure") == 1);
    CHECK(s.convergence.at("measure") == doctest::Approx(10.0));

    ll::scripted_runner runner2;
    runner2.on_action("measure", {exit_with(0, "8"), exit_with(0, "8")});
    auto ex2 = ll::make_executor(loop, runner2);
    REQUIRE(ex2.has_value());
    REQUIRE(ex2->resume(s).has_value());
    const auto& r = ex2->run();
    CHECK(r.final_state == "stuck");  // 10 -> 8 progress, 8 -> 8 stall
    CHECK(r.iterations == 3);
  }
}
