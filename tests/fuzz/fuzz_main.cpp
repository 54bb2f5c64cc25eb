// little_loops — libFuzzer driver over the targets of fuzz_targets.hpp.
//
// LL_FUZZ_TARGET=<name> fuzzes one target (loop_json, loop_yaml, paradigm, template,
// json_path, judge_reply, contains, snapshot) with the whole input; unset, the first byte of
// each input picks the target. See tests/fuzz/README.md.
// SPDX-License-Identifier: MIT
#include "alloc_meter.hpp"
#include "fuzz_targets.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {
const little_loops_fuzz::target* chosen = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("LL_FUZZ_TARGET");
  if (name == nullptr || *name == '\0') return 0;
  for (const auto& t : little_loops_fuzz::targets)
    if (t.name == name) chosen = &t;
  if (chosen == nullptr) {
    std::fprintf(stderr, "LL_FUZZ_TARGET: unknown target \"%s\"\n", name);
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const little_loops_fuzz::target* t = chosen;
  if (t == nullptr) {
    if (input.empty()) return 0;
    t = &little_loops_fuzz::targets[static_cast<unsigned char>(input.front()) %
                                    little_loops_fuzz::targets.size()];
    input.remove_prefix(1);
  }
  little_loops_fuzz::run_within_memory(*t, input);
  return 0;
}
