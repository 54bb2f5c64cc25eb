// little_loops — the ABI inline namespace names the version and the expected backend
// SPDX-License-Identifier: MIT
// Built once per backend; LL_EXPECTED_ABI_TAG comes from CMake (version read from
// version.hpp + the backend this TU must pick), so config.hpp's token pasting is checked
// against an independent spelling.
#include <little_loops/fsm.hpp>

#include <cstdio>
#include <cstring>
#include <typeinfo>

#define LL_STRINGIFY2(x) #x
#define LL_STRINGIFY(x) LL_STRINGIFY2(x)

int main() {
  const char* expected = LL_EXPECTED_ABI_TAG;
  const char* abi = LL_STRINGIFY(LITTLE_LOOPS_ABI);
  const char* mangled = typeid(little_loops::error).name();
  std::printf("LITTLE_LOOPS_ABI = %s, typeid(little_loops::error).name() = %s\n", abi, mangled);
  if (std::strcmp(abi, expected) != 0) {
    std::printf("FAIL: expected the ABI tag %s\n", expected);
    return 1;
  }
  if (std::strstr(mangled, expected) == nullptr) {
    std::printf("FAIL: the mangled name does not contain %s\n", expected);
    return 1;
  }
  return 0;
}
