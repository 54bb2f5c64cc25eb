// little_loops — library version (CMake reads these three lines)
// SPDX-License-Identifier: MIT
#pragma once

#define LITTLE_LOOPS_VERSION_MAJOR 0
#define LITTLE_LOOPS_VERSION_MINOR 1
#define LITTLE_LOOPS_VERSION_PATCH 0

#define LITTLE_LOOPS_VERSION_STRING "0.1.0"
