// little_loops — tests for expected.hpp: the selected backend and the shared API subset
// SPDX-License-Identifier: MIT
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>

#include <doctest/doctest.h>

#include <string>
#include <type_traits>
#include <version>

namespace ll = little_loops;

// Which backend is selected is decided at compile time, by __cpp_lib_expected unless the
// user forces it with LITTLE_LOOPS_USE_STD_EXPECTED.
#if LITTLE_LOOPS_USE_STD_EXPECTED
static_assert(std::is_same_v<ll::expected<int, ll::error>, std::expected<int, ll::error>>);
static_assert(std::is_same_v<ll::unexpected<ll::error>, std::unexpected<ll::error>>);
static_assert(__cpp_lib_expected >= 202202L, "std backend needs <expected>");
inline constexpr const char* backend_name = "std";
#else
static_assert(std::is_same_v<ll::expected<int, ll::error>, tl::expected<int, ll::error>>);
static_assert(std::is_same_v<ll::unexpected<ll::error>, tl::unexpected<ll::error>>);
inline constexpr const char* backend_name = "tl";
#endif

TEST_CASE("the backend follows __cpp_lib_expected") {
  MESSAGE("expected backend: " << std::string(backend_name) << ", C++ " << __cplusplus);
#if defined(__cpp_lib_expected) && __cpp_lib_expected >= 202202L
  CHECK(LITTLE_LOOPS_USE_STD_EXPECTED == 1);
#else
  CHECK(LITTLE_LOOPS_USE_STD_EXPECTED == 0);
#endif
}

namespace {

ll::expected<int, ll::error> half(int n) {
  if (n % 2 != 0) return ll::unexpected(ll::error{ll::errc::evaluation_failed, "odd"});
  return n / 2;
}

ll::expected<void, ll::error> check_positive(int n) {
  if (n <= 0) return ll::unexpected(ll::error{ll::errc::invalid_loop, "not positive", "n"});
  return {};
}

struct point {
  int x = 0;
  int y = 0;
};

}  // namespace

TEST_CASE("the shared API subset behaves the same on both backends") {
  auto good = half(8);
  CHECK(good.has_value());
  CHECK(static_cast<bool>(good));
  CHECK(*good == 4);
  CHECK(good.value() == 4);
  CHECK(good.value_or(-1) == 4);

  auto bad = half(3);
  CHECK_FALSE(bad.has_value());
  CHECK_FALSE(static_cast<bool>(bad));
  CHECK(bad.error().code == ll::errc::evaluation_failed);
  CHECK(bad.error().message == "odd");
  CHECK(bad.value_or(-1) == -1);
  CHECK_THROWS_AS((void)bad.value(), ll::bad_expected_access<ll::error>);

  CHECK(check_positive(1).has_value());
  const auto v = check_positive(0);
  REQUIRE_FALSE(v.has_value());
  CHECK(v.error().path == "n");

  ll::expected<point, ll::error> p = point{1, 2};
  CHECK(p->y == 2);
  // unexpect + one error value (tl 1.0 cannot forward several arguments to the error).
  ll::expected<std::string, ll::error> s(ll::unexpect, ll::error{ll::errc::io_error, "disk"});
  CHECK(s.error().message == "disk");

  // unexpected(e) deduces its error type (CTAD through the using-declaration).
  ll::error e{ll::errc::no_transition, "none"};
  auto u = ll::unexpected(e);
  static_assert(std::is_same_v<decltype(u), ll::unexpected<ll::error>>);
  ll::expected<int, ll::error> from_u = u;
  CHECK(from_u.error().code == ll::errc::no_transition);
}
