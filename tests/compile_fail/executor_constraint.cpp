// little_loops — compile-fail: naming fsm_executor directly with a non-runner fails on ActionRunner
// SPDX-License-Identifier: MIT
// expected error: ActionRunner
#include <little_loops/fsm.hpp>

struct not_a_runner {};

int main() {
  little_loops::fsm_executor<not_a_runner>* p = nullptr;
  return p == nullptr ? 0 : 1;
}
