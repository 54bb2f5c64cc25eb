// little_loops — calls into host code (runner, evaluator) that turn exceptions into errors
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>

#include <exception>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// Calls `call()` (host code returning something convertible to expected<T, error>); an
// exception it throws becomes an error with `code`, saying that `who` threw and what. The
// result is declared with its type, so a host returning it exactly constructs it in place.
template <class T, class Call>
expected<T, error> call_host(Call&& call, errc code, std::string_view who) {
  try {
    return call();
  } catch (const std::exception& e) {
    return unexpected(error{code, std::string(who) + " threw: " + e.what()});
  } catch (...) {
    return unexpected(error{code, std::string(who) + " threw an exception"});
  }
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
