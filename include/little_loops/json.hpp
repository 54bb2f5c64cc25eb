// little_loops — the JSON type used throughout the library
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <nlohmann/json.hpp>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The library's JSON value: key order is preserved (documents round-trip in the order they
/// were written, events serialise as `{"event", "ts", ...}`).
using json = nlohmann::ordered_json;

/// An insertion-ordered string map (a vector of pairs with a map interface).
template <class Key, class Value>
using ordered_map = nlohmann::ordered_map<Key, Value>;

LITTLE_LOOPS_NAMESPACE_END
