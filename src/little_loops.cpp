// little_loops — the compiled library: the non-template code of the headers, built once
// SPDX-License-Identifier: MIT
//
// Built with LITTLE_LOOPS_COMPILED_LIB and LITTLE_LOOPS_BUILDING_LIB (config.hpp): every
// header below then defines its compiled functions without `inline`, and the hosts that link
// little_loops::compiled see only their declarations.
#include <little_loops/fsm.hpp>
#include <little_loops/compose.hpp>

// The default evaluator, which evaluators.hpp declares `extern template` for the hosts.
template class little_loops::basic_evaluator<little_loops::no_judge_backend>;
