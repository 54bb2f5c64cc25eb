// little_loops — configuration macros and the ABI namespace
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/version.hpp>

#include <version>

/// Set to 1 to force std::expected, 0 to force tl::expected. By default the library uses
/// std::expected when the standard library provides it (`__cpp_lib_expected`), else
/// tl::expected. Only the API subset both share is used inside the library.
#ifndef LITTLE_LOOPS_USE_STD_EXPECTED
#  if defined(__cpp_lib_expected) && __cpp_lib_expected >= 202202L
#    define LITTLE_LOOPS_USE_STD_EXPECTED 1
#  else
#    define LITTLE_LOOPS_USE_STD_EXPECTED 0
#  endif
#endif

// The ABI tag encodes the version and the expected backend, so translation units that
// picked different backends fail to link instead of silently mixing types.
// (maj/min are not operands of ## here, so the version macros expand before pasting.)
#define LITTLE_LOOPS_DETAIL_CAT4(a, b, c, d) a##b##c##d
#define LITTLE_LOOPS_DETAIL_ABI_VERSION(maj, min) LITTLE_LOOPS_DETAIL_CAT4(v, maj, _, min)

#if LITTLE_LOOPS_USE_STD_EXPECTED
#  define LITTLE_LOOPS_DETAIL_ABI_BACKEND _std
#else
#  define LITTLE_LOOPS_DETAIL_ABI_BACKEND _tl
#endif

#define LITTLE_LOOPS_DETAIL_ABI_JOIN2(a, b) a##b
#define LITTLE_LOOPS_DETAIL_ABI_JOIN(a, b) LITTLE_LOOPS_DETAIL_ABI_JOIN2(a, b)

/// The inline namespace that carries the ABI tag, e.g. `v0_1_tl`.
#define LITTLE_LOOPS_ABI                                                                   \
  LITTLE_LOOPS_DETAIL_ABI_JOIN(                                                            \
      LITTLE_LOOPS_DETAIL_ABI_VERSION(LITTLE_LOOPS_VERSION_MAJOR, LITTLE_LOOPS_VERSION_MINOR), \
      LITTLE_LOOPS_DETAIL_ABI_BACKEND)

#define LITTLE_LOOPS_NAMESPACE_BEGIN                                                       \
  namespace little_loops {                                                                 \
  inline namespace LITTLE_LOOPS_ABI {
#define LITTLE_LOOPS_NAMESPACE_END                                                         \
  }                                                                                        \
  }

/// Compiled mode, in the manner of spdlog's SPDLOG_COMPILED_LIB: define
/// LITTLE_LOOPS_COMPILED_LIB (linking the `little_loops::compiled` target does) and the
/// headers carry only declarations of the non-template code — schema reading, validation,
/// paradigms, the regex translator, templates, rendering, composition, compiled loops, the
/// evaluators and the executor's core with the run state it keeps — which the library holds,
/// built once. Templates (fsm_executor over its core, the evaluators' dispatch) stay in the
/// headers.
/// Undefined (the default), the library is header-only. The library's own sources also
/// define LITTLE_LOOPS_BUILDING_LIB, which brings the definitions back, without `inline`.
#if defined(LITTLE_LOOPS_COMPILED_LIB) && !defined(LITTLE_LOOPS_BUILDING_LIB)
#  define LITTLE_LOOPS_DETAIL_DEFINITIONS 0
#else
#  define LITTLE_LOOPS_DETAIL_DEFINITIONS 1
#endif
/// `inline` header-only; empty in compiled mode, where the library defines each function
/// once. Marks the functions of the compiled code that the headers declare.
#if defined(LITTLE_LOOPS_COMPILED_LIB)
#  define LITTLE_LOOPS_INLINE
#else
#  define LITTLE_LOOPS_INLINE inline
#endif
