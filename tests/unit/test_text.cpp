// little_loops — tests: text.hpp, the UTF-8 and float text helpers for hosts
// SPDX-License-Identifier: MIT
#include <little_loops/text.hpp>

#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

namespace ll = little_loops;

TEST_CASE("is_utf8 accepts well-formed UTF-8 only") {
  CHECK(ll::is_utf8(""));
  CHECK(ll::is_utf8("plain \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  CHECK_FALSE(ll::is_utf8("\x80"));              // stray continuation byte
  CHECK_FALSE(ll::is_utf8("\xC0\xAF"));          // overlong
  CHECK_FALSE(ll::is_utf8("\xED\xA0\x80"));      // surrogate
  CHECK_FALSE(ll::is_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  CHECK_FALSE(ll::is_utf8("\xE2\x82"));          // cut short
}

TEST_CASE("to_valid_utf8 replaces each byte that starts no sequence") {
  CHECK(ll::to_valid_utf8("ok \xC3\xA9") == "ok \xC3\xA9");
  CHECK(ll::to_valid_utf8("a\xFF" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(ll::to_valid_utf8("\xE2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("decode_utf8 and append_utf8 round-trip code points") {
  const std::vector<char32_t> cps = ll::decode_utf8("a\xC3\xA9\xF0\x9F\x98\x80\xFF");
  CHECK(cps == std::vector<char32_t>{U'a', 0xE9, 0x1F600, 0xFFFD});
  std::string out;
  for (const char32_t c : cps) ll::append_utf8(out, c);
  CHECK(out == "a\xC3\xA9\xF0\x9F\x98\x80\xEF\xBF\xBD");
}

TEST_CASE("utf8_char_length, utf8_char_at and utf8_boundary follow characters") {
  const std::string_view s = "a\xE2\x82\xAC\x80";
  CHECK(ll::utf8_char_length(s, 0) == 1);
  CHECK(ll::utf8_char_length(s, 1) == 3);
  CHECK(ll::utf8_char_at(s, 1, 3) == 0x20AC);
  CHECK(ll::utf8_char_length(s, 2) == 0);
  CHECK(ll::utf8_char_length(s, 4) == 0);
  const std::string_view t = "a\xE2\x82\xAC" "b";
  CHECK(ll::utf8_boundary(t, 2) == 1);  // inside the euro sign: cut before it
  CHECK(ll::utf8_boundary(t, 4) == 4);
  CHECK(ll::utf8_boundary(t, 99) == t.size());
}

TEST_CASE("python_float_repr writes floats as Python's repr") {
  CHECK(ll::python_float_repr(3.0) == "3.0");
  CHECK(ll::python_float_repr(0.1) == "0.1");
  CHECK(ll::python_float_repr(1e16) == "1e+16");
  CHECK(ll::python_float_repr(1.5e-7) == "1.5e-07");
  CHECK(ll::python_float_repr(0.0001) == "0.0001");
  CHECK(ll::python_float_repr(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(ll::python_float_repr(std::numeric_limits<double>::quiet_NaN()) == "nan");
}

TEST_CASE("python_float_repr: short decimals and the forms around their limits") {
  // Written in fixed notation directly (at most 4 fractional digits, below 1e11) ...
  CHECK(ll::python_float_repr(0.75) == "0.75");
  CHECK(ll::python_float_repr(-0.0) == "-0.0");
  CHECK(ll::python_float_repr(0.0) == "0.0");
  CHECK(ll::python_float_repr(-12.5) == "-12.5");
  CHECK(ll::python_float_repr(0.0005) == "0.0005");
  CHECK(ll::python_float_repr(99999999999.9999) == "99999999999.9999");
  CHECK(ll::python_float_repr(1e10) == "10000000000.0");
  // ... and through the shortest-digits path beyond them.
  CHECK(ll::python_float_repr(1e11) == "100000000000.0");
  CHECK(ll::python_float_repr(1e15) == "1000000000000000.0");
  CHECK(ll::python_float_repr(0.00015) == "0.00015");
  CHECK(ll::python_float_repr(0.123456789) == "0.123456789");
  CHECK(ll::python_float_repr(1e-5) == "1e-05");
  CHECK(ll::python_float_repr(-2.2250738585072014e-308) == "-2.2250738585072014e-308");
  CHECK(ll::python_float_repr(5e-324) == "5e-324");
  CHECK(ll::python_float_repr(1.7976931348623157e308) == "1.7976931348623157e+308");
}
