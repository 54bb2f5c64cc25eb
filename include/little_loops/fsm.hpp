// little_loops — umbrella header: every core part of the library
// SPDX-License-Identifier: MIT
#ifndef LITTLE_LOOPS_FSM_HPP
#define LITTLE_LOOPS_FSM_HPP

#include <little_loops/version.hpp>
#include <little_loops/config.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/error.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/validation.hpp>
#include <little_loops/results.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/evaluators.hpp>
#include <little_loops/events.hpp>
#include <little_loops/concepts.hpp>
#include <little_loops/snapshot.hpp>
#include <little_loops/compiled_loop.hpp>
#include <little_loops/executor.hpp>
#include <little_loops/scripted_runner.hpp>
#include <little_loops/paradigms.hpp>
#include <little_loops/render.hpp>
#include <little_loops/text.hpp>
#include <little_loops/json_schema.hpp>

#endif  // LITTLE_LOOPS_FSM_HPP
