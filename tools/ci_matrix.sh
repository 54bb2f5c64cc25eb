#!/usr/bin/env bash
# little_loops — the CI build matrix beyond the main job (called by .ci/run; runnable by hand)
# SPDX-License-Identifier: MIT
#
#   tools/ci_matrix.sh [job...]      jobs: fresh cxx23 clang14 single_header clang14_single_header
#                                    release_examples
#                                    (default: fresh cxx23 clang14_single_header release_examples)
#
# The main job (GCC 12, C++20 = tl::expected, Debug, ASan+UBSan, -Werror, with the dist
# checks: header standalone, single-header smoke, ABI, consumers) is the README's test command
# run by .ci/run. Every job here builds in build-ci-<job>/ and runs ctest without the `dist`
# label (the main job ran those).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=("$@")
if [ ${#jobs[@]} -eq 0 ]; then
  jobs=(fresh cxx23 clang14_single_header release_examples)
fi

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
fi
parallel="${LITTLE_LOOPS_CI_PARALLEL:-2}"

stamp() { date -u +%H:%M:%S; }

# build_and_test <job> <cmake args...>
build_and_test() {
  local job=$1 dir=build-ci-$1
  shift
  local start=$SECONDS
  echo "=== [$(stamp)] job ${job}: cmake $*"
  cmake -S . -B "${dir}" -G Ninja "${launcher[@]}" -DLITTLE_LOOPS_TEST_DIST=OFF "$@" >"${dir}.configure.log" 2>&1 \
    || { cat "${dir}.configure.log"; return 1; }
  cmake --build "${dir}" -j"${parallel}"
  ctest --test-dir "${dir}" --output-on-failure -j"${parallel}" -LE dist
  echo "=== [$(stamp)] job ${job} passed in $((SECONDS - start)) s"
}

for job in "${jobs[@]}"; do
  case "${job}" in
    fresh)
      # The committed single header must be what tools/amalgamate.py generates.
      python3 tools/amalgamate.py --check
      ;;
    cxx23)
      # GCC 12, C++23: std::expected (202202L, no monadic operations); benchmarks compiled.
      # Not Release: that doubles this job (≈ +155 s) and CI must stay under 20 minutes. GCC's
      # flow-based warnings (-Warray-bounds, ...) only run when optimising; check them with
      # `cmake -DCMAKE_BUILD_TYPE=Release` (the tests build with -Werror) after touching
      # string-heavy code.
      bench=OFF
      if [ -f tests/bench/CMakeLists.txt ]; then bench=ON; fi
      # Examples are C++20 programs (built by the main job and clang14): not rebuilt here.
      build_and_test cxx23 -DCMAKE_CXX_COMPILER=g++ -DLITTLE_LOOPS_TEST_CXX_STANDARD=23 \
        -DLITTLE_LOOPS_BUILD_EXAMPLES=OFF -DLITTLE_LOOPS_BUILD_BENCHMARKS=${bench}
      ;;
    clang14)
      # Clang 14 + libstdc++ 12, C++20: tl::expected; also guards against std::views use.
      build_and_test clang14 -DCMAKE_CXX_COMPILER=clang++-14 -DLITTLE_LOOPS_TEST_CXX_STANDARD=20
      ;;
    clang14_single_header)
      # Clang 14 + libstdc++ 12, C++20 (tl::expected) against single_include/ with header-only
      # fmt: the second compiler and the amalgamated header in one build (keeps CI < 20 min).
      build_and_test clang14_single_header -DCMAKE_CXX_COMPILER=clang++-14 \
        -DLITTLE_LOOPS_TEST_CXX_STANDARD=20 -DLITTLE_LOOPS_TEST_SINGLE_HEADER=ON \
        -DLITTLE_LOOPS_FMT_TARGET=fmt::fmt-header-only -DLITTLE_LOOPS_BUILD_EXAMPLES=OFF
      ;;
    release_examples)
      # GCC 12 -O3 (Release) with -Werror: the examples and ll-loop, as a user's Release build
      # compiles them. GCC's flow-based warnings (-Wrestrict, -Warray-bounds, ...) only run
      # when optimising, and the other jobs do not optimise. Only ll-loop, which holds most of
      # the library's code paths (the small examples build in the main job): ≈ 80 s; no
      # tests, then one loop. ll-loop is built against the compiled library here
      # (LITTLE_LOOPS_COMPILED=ON), so that mode keeps building and running; the main job
      # builds it header-only. Against the library the build is cheaper, not dearer: 134 s
      # CPU (the library included) against 176 s header-only, one job, no ccache.
      local_start=$SECONDS
      echo "=== [$(stamp)] job release_examples: Release build of the examples"
      cmake -S . -B build-ci-release_examples -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DLITTLE_LOOPS_BUILD_TESTS=OFF -DLITTLE_LOOPS_BUILD_BENCHMARKS=OFF -DLITTLE_LOOPS_COMPILED=ON \
        >build-ci-release_examples.configure.log 2>&1 \
        || { cat build-ci-release_examples.configure.log; exit 1; }
      cmake --build build-ci-release_examples -j"${parallel}" --target ll-loop
      ./build-ci-release_examples/examples/ll-loop simulate examples/loops/goal_config_file.yaml \
        --scenario first-fail --quiet --json >/dev/null
      echo "=== [$(stamp)] job release_examples passed in $((SECONDS - local_start)) s"
      ;;
    single_header)
      # The whole unit suite against single_include/, with header-only fmt (the examples and
      # the ll-loop end-to-end tests ran in the main job).
      build_and_test single_header -DCMAKE_CXX_COMPILER=g++ -DLITTLE_LOOPS_TEST_SINGLE_HEADER=ON \
        -DLITTLE_LOOPS_FMT_TARGET=fmt::fmt-header-only -DLITTLE_LOOPS_BUILD_EXAMPLES=OFF
      ;;
    *)
      echo "ci_matrix.sh: unknown job '${job}' (fresh cxx23 clang14 single_header clang14_single_header release_examples)" >&2
      exit 2
      ;;
  esac
done
echo "ci_matrix.sh: all jobs passed (${jobs[*]})"
