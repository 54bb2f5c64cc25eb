// little_loops — defines describe(const little_loops::error&) for the ABI link tests
// SPDX-License-Identifier: MIT
#include <little_loops/fsm.hpp>

#include <string>

std::string describe(const little_loops::error& e) { return little_loops::to_string(e); }
