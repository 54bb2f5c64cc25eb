// little_loops — calls describe(); links only when both TUs picked the same expected backend
// SPDX-License-Identifier: MIT
#include <little_loops/fsm.hpp>

#include <cstdio>
#include <string>

std::string describe(const little_loops::error& e);

int main() {
  const std::string text = describe(little_loops::error{little_loops::errc::invalid_loop, "x", "y"});
  std::printf("%s\n", text.c_str());
  return text.empty() ? 1 : 0;
}
