// little_loops — where an executor finds the child loops of sub-loop states
// SPDX-License-Identifier: MIT
#pragma once

// A sub-loop state (`loop: NAME`) runs another loop inside the same executor (design §6.5).
// The executor reads no files: it asks the host's child_loop_resolver
// (executor_options::child_loops) for the child when the state runs. <little_loops/compose.hpp>
// provides loop_library, which finds children through a loop_resolver, composes and
// compiles each once.

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>

#include <memory>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

class compiled_loop;

/// A child loop ready to run.
struct child_loop {
  std::shared_ptr<const compiled_loop> loop;
  std::string id;                     ///< identity (a file's absolute path): the referrer of its own children
  json parameters = detail::empty_json_object();  ///< its `parameters:` declarations (defaults, required)
};

/// Finds the loop a sub-loop state names. `referrer` is the id of the loop holding the
/// name (executor_options::loop_id for the top loop). A name that does not resolve is
/// errc::reference_not_found; a child that does not load, its error.
class child_loop_resolver {
 public:
  virtual ~child_loop_resolver() = default;
  virtual expected<child_loop, error> load(std::string_view name, std::string_view referrer) = 0;
};

LITTLE_LOOPS_NAMESPACE_END
