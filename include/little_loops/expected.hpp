// little_loops — little_loops::expected: std::expected (C++23) or tl::expected (C++20)
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#if LITTLE_LOOPS_USE_STD_EXPECTED
#  include <expected>
#else
#  if defined(__has_include)
#    if !__has_include(<tl/expected.hpp>)
#      error "little_loops: needs <expected> (C++23) or tl::expected (Debian: libexpected-dev)"
#    endif
#  endif
#  include <tl/expected.hpp>
#endif

LITTLE_LOOPS_NAMESPACE_BEGIN
#if LITTLE_LOOPS_USE_STD_EXPECTED
using std::bad_expected_access;
using std::expected;
using std::unexpect;
using std::unexpect_t;
using std::unexpected;
#else
using tl::bad_expected_access;
using tl::expected;
using tl::unexpect;
using tl::unexpect_t;
using tl::unexpected;
#endif
LITTLE_LOOPS_NAMESPACE_END
