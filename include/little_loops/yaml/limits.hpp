// little_loops — limits of the YAML reader
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <cstddef>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Limits that keep hostile documents from exhausting the stack or memory.
struct yaml_limits {
  std::size_t max_depth = 256;        ///< nesting of mappings/sequences
  std::size_t max_nodes = 1'000'000;  ///< values after alias expansion ("billion laughs")
  /// Bytes of scalars and keys after alias expansion: an alias of a long string counts its
  /// length, not one value. 64 MiB: the largest file the loader reads.
  std::size_t max_bytes = std::size_t{64} << 20;
};

LITTLE_LOOPS_NAMESPACE_END
