// little_loops — YAML loader umbrella: documents (document.hpp) and the YAML reader (yaml/)
// SPDX-License-Identifier: MIT
#pragma once

// Opt-in adapter (CMake target little_loops::yaml, needs yaml-cpp); fsm.hpp never includes it.

#include <little_loops/document.hpp>
#include <little_loops/yaml/limits.hpp>
#include <little_loops/yaml/loader.hpp>
#include <little_loops/yaml/file_resolver.hpp>
