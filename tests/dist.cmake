# Distribution checks (issue 7): single header freshness and smoke build, every public header
# on its own, the ABI tag, and the packaging consumers (find_package, add_subdirectory,
# FetchContent, single header). All tests carry the label `dist`.
option(LITTLE_LOOPS_TEST_DIST "Register the distribution checks (header checks, consumers)" ON)
if(NOT LITTLE_LOOPS_TEST_DIST)
  return()
endif()

set(_ll_root "${PROJECT_SOURCE_DIR}")
set(_ll_dist_bin "${CMAKE_CURRENT_BINARY_DIR}/dist")
find_package(Python3 3.6 COMPONENTS Interpreter)

# --- 1. single_include/ is what tools/amalgamate.py generates from include/ ---------------
if(Python3_Interpreter_FOUND)
  add_test(NAME single_include_fresh
           COMMAND "${Python3_EXECUTABLE}" "${_ll_root}/tools/amalgamate.py" --check
           WORKING_DIRECTORY "${_ll_root}")
  set_tests_properties(single_include_fresh PROPERTIES LABELS dist)
  # The vcpkg port and the Conan recipe can't run here: check their shape and version.
  add_test(NAME packaging_recipes
           COMMAND "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/cmake/check_packaging.py"
                   "${_ll_root}" "${PROJECT_VERSION}")
  set_tests_properties(packaging_recipes PROPERTIES LABELS dist)
else()
  message(WARNING "python3 not found: single_include_fresh and packaging_recipes are not registered")
endif()

# The dependencies a user of the single header puts next to it (no little_loops target).
set(_ll_single_deps nlohmann_json::nlohmann_json ${LITTLE_LOOPS_FMT_TARGET} re2::re2)
if(LITTLE_LOOPS_WITH_TL_EXPECTED)
  list(APPEND _ll_single_deps tl::expected)
endif()

# The dist checks are about packaging, includes, linkage and the ABI tag; the unit suites are
# what runs under the sanitizers. Skipping the instrumentation a CI build adds globally
# (CXXFLAGS=-fsanitize=...) halves their compile time; the objects still link against the
# sanitizer runtime the global LDFLAGS bring.
function(_ll_dist_no_sanitizers target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -fno-sanitize=all)
  endif()
endfunction()

# --- 2. every public header compiles on its own -------------------------------------------
# One generated TU per public header (no precompiled headers: they would hide a missing
# include). `detail/` headers are implementation, compiled through the public headers that
# include them (style.md §3.10 asks this of public headers); they are half the headers, and
# checking each alone would double this step's share of a CI run.
# Headers that include yaml-cpp need little_loops::yaml; all others get little_loops::posix
# (which adds nothing to the core but is the adapters' opt-in target).
if(NOT LITTLE_LOOPS_TEST_SINGLE_HEADER)
  file(GLOB_RECURSE _ll_public_headers CONFIGURE_DEPENDS RELATIVE "${_ll_root}/include"
       "${_ll_root}/include/little_loops/*.hpp")
  list(SORT _ll_public_headers)
  set(_ll_core_checks)
  set(_ll_yaml_checks)
  list(FILTER _ll_public_headers EXCLUDE REGEX "/detail/")
  foreach(_hdr IN LISTS _ll_public_headers)
    string(REGEX REPLACE "[/.]" "_" _stem "${_hdr}")
    set(_tu "${_ll_dist_bin}/header_checks/${_stem}.cpp")
    file(CONFIGURE OUTPUT "${_tu}" CONTENT "#include <${_hdr}>\n#include <${_hdr}>\n" @ONLY)
    file(STRINGS "${_ll_root}/include/${_hdr}" _yaml_use REGEX "#[ \t]*include[ \t]*<yaml-cpp/")
    if(_yaml_use)
      list(APPEND _ll_yaml_checks "${_tu}")
    else()
      list(APPEND _ll_core_checks "${_tu}")
    endif()
  endforeach()
  function(_ll_header_check_target name link)
    add_library(${name} OBJECT ${ARGN})
    target_link_libraries(${name} PRIVATE ${link})
    target_compile_features(${name} PRIVATE cxx_std_${LITTLE_LOOPS_TEST_CXX_STANDARD})
    set_target_properties(${name} PROPERTIES CXX_EXTENSIONS OFF)
    target_compile_options(${name} PRIVATE ${LITTLE_LOOPS_WARNINGS})
    _ll_dist_no_sanitizers(${name})
  endfunction()
  _ll_header_check_target(little_loops_header_checks little_loops_posix ${_ll_core_checks})
  if(_ll_yaml_checks AND TARGET little_loops_yaml)
    _ll_header_check_target(little_loops_header_checks_yaml little_loops_yaml ${_ll_yaml_checks})
  endif()
endif()

# --- 3. the single header alone, two TUs linked together, C++20 and C++23 ----------------
# Also compiles every generated adapter header twice (each in its own pair of TUs, so two
# adapters sharing an inlined helper would collide).
file(GLOB_RECURSE _ll_single_headers CONFIGURE_DEPENDS RELATIVE "${_ll_root}/single_include"
     "${_ll_root}/single_include/little_loops/*.hpp")
list(SORT _ll_single_headers)
set(_ll_adapter_tus)
set(_ll_adapter_includes "")
foreach(_hdr IN LISTS _ll_single_headers)
  if(_hdr STREQUAL "little_loops/fsm.hpp")
    continue()
  endif()
  file(STRINGS "${_ll_root}/single_include/${_hdr}" _yaml_use REGEX "#[ \t]*include[ \t]*<yaml-cpp/")
  if(_yaml_use)
    if(NOT TARGET little_loops_yaml)
      continue()
    endif()
  endif()
  string(APPEND _ll_adapter_includes "#include <${_hdr}>\n")
endforeach()
if(_ll_adapter_includes)
  foreach(_n 1 2)
    set(_tu "${_ll_dist_bin}/single_adapters_${_n}.cpp")
    file(CONFIGURE OUTPUT "${_tu}" CONTENT
         "// every generated adapter header, TU ${_n}\n${_ll_adapter_includes}void ll_adapters_${_n}() {}\n"
         @ONLY)
    list(APPEND _ll_adapter_tus "${_tu}")
  endforeach()
endif()
foreach(_std 20 23)
  set(_exe single_header_smoke_cxx${_std})
  add_executable(${_exe} single_include/tu1.cpp single_include/tu2.cpp ${_ll_adapter_tus})
  target_include_directories(${_exe} PRIVATE "${_ll_root}/single_include")
  target_link_libraries(${_exe} PRIVATE ${_ll_single_deps})
  if(TARGET little_loops_yaml AND _ll_adapter_tus)
    if(TARGET yaml-cpp::yaml-cpp)
      target_link_libraries(${_exe} PRIVATE yaml-cpp::yaml-cpp)
    elseif(TARGET yaml-cpp)
      target_link_libraries(${_exe} PRIVATE yaml-cpp)
    endif()
  endif()
  target_compile_features(${_exe} PRIVATE cxx_std_${_std})
  set_target_properties(${_exe} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_options(${_exe} PRIVATE ${LITTLE_LOOPS_WARNINGS})
  _ll_dist_no_sanitizers(${_exe})
  add_test(NAME ${_exe} COMMAND ${_exe})
  set_tests_properties(${_exe} PROPERTIES LABELS dist)
endforeach()

# --- 4. the ABI tag: v<major>_<minor>_tl / _std -----------------------------------------
if(NOT LITTLE_LOOPS_TEST_SINGLE_HEADER)
  set(_ll_abi_prefix "v${PROJECT_VERSION_MAJOR}_${PROJECT_VERSION_MINOR}")
  # The std backend needs <expected> (GCC 12 in C++23; not Clang 14 with libstdc++ 12).
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-std=c++2b")
  check_cxx_source_compiles("#include <version>
#if !defined(__cpp_lib_expected) || __cpp_lib_expected < 202202L
#error no std::expected
#endif
int main() { return 0; }" LITTLE_LOOPS_HAVE_STD_EXPECTED)
  unset(CMAKE_REQUIRED_FLAGS)
  set(_ll_abi_variants tl)
  if(LITTLE_LOOPS_HAVE_STD_EXPECTED)
    list(APPEND _ll_abi_variants std)
  endif()
  foreach(_backend IN LISTS _ll_abi_variants)
    set(_exe abi_tag_${_backend})
    add_executable(${_exe} cmake/abi/abi_tag.cpp)
    target_link_libraries(${_exe} PRIVATE little_loops)
    if(_backend STREQUAL "std")
      target_compile_features(${_exe} PRIVATE cxx_std_23)
      target_compile_definitions(${_exe} PRIVATE LITTLE_LOOPS_USE_STD_EXPECTED=1)
    else()
      target_compile_features(${_exe} PRIVATE cxx_std_20)
      target_compile_definitions(${_exe} PRIVATE LITTLE_LOOPS_USE_STD_EXPECTED=0)
    endif()
    target_compile_definitions(${_exe} PRIVATE LL_EXPECTED_ABI_TAG="${_ll_abi_prefix}_${_backend}")
    set_target_properties(${_exe} PROPERTIES CXX_EXTENSIONS OFF)
    target_compile_options(${_exe} PRIVATE ${LITTLE_LOOPS_WARNINGS})
    _ll_dist_no_sanitizers(${_exe})
    add_test(NAME ${_exe} COMMAND ${_exe})
    set_tests_properties(${_exe} PROPERTIES LABELS dist)
  endforeach()
  # Control: caller and definition on the same backend link and run.
  add_executable(abi_same_backend cmake/abi/abi_use.cpp cmake/abi/abi_define.cpp)
  target_link_libraries(abi_same_backend PRIVATE little_loops)
  target_compile_options(abi_same_backend PRIVATE ${LITTLE_LOOPS_WARNINGS})
  _ll_dist_no_sanitizers(abi_same_backend)
  add_test(NAME abi_same_backend COMMAND abi_same_backend)
  set_tests_properties(abi_same_backend PROPERTIES LABELS dist)
  if(LITTLE_LOOPS_HAVE_STD_EXPECTED)
    # A C++20 (tl) caller and a C++23 (std) definition must not link: the missing symbol names
    # the tl-tagged type. Built only by this test (EXCLUDE_FROM_ALL).
    add_library(abi_define_std OBJECT EXCLUDE_FROM_ALL cmake/abi/abi_define.cpp)
    target_link_libraries(abi_define_std PRIVATE little_loops)
    target_compile_features(abi_define_std PRIVATE cxx_std_23)
    target_compile_definitions(abi_define_std PRIVATE LITTLE_LOOPS_USE_STD_EXPECTED=1)
    _ll_dist_no_sanitizers(abi_define_std)
    add_executable(abi_mixed_backends EXCLUDE_FROM_ALL cmake/abi/abi_use.cpp
                   $<TARGET_OBJECTS:abi_define_std>)
    target_link_libraries(abi_mixed_backends PRIVATE little_loops)
    target_compile_features(abi_mixed_backends PRIVATE cxx_std_20)
    target_compile_definitions(abi_mixed_backends PRIVATE LITTLE_LOOPS_USE_STD_EXPECTED=0)
    _ll_dist_no_sanitizers(abi_mixed_backends)
    add_test(NAME abi_mixed_backends_fail_to_link
             COMMAND "${CMAKE_COMMAND}" --build "${CMAKE_BINARY_DIR}" --target abi_mixed_backends)
    set_tests_properties(abi_mixed_backends_fail_to_link PROPERTIES LABELS dist
      PASS_REGULAR_EXPRESSION "undefined reference to .*little_loops::${_ll_abi_prefix}_tl::error"
      RESOURCE_LOCK little_loops_build_tree)
  endif()
endif()

# --- 5. packaging consumers -----------------------------------------------------------------
set(_ll_consumer_args
  "-DSOURCE_DIR=${_ll_root}"
  "-DGENERATOR=${CMAKE_GENERATOR}"
  "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}")
if(CMAKE_CXX_COMPILER_LAUNCHER)
  list(APPEND _ll_consumer_args "-DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}")
endif()
if(CMAKE_BUILD_TYPE)
  list(APPEND _ll_consumer_args "-DBUILD_TYPE=${CMAKE_BUILD_TYPE}")
endif()
set(_ll_with_yaml OFF)
if(TARGET little_loops_yaml)
  set(_ll_with_yaml ON)
endif()
foreach(_mode find_package find_package_no_yaml find_package_compiled add_subdirectory fetch_content
              single_header)
  add_test(NAME consumer_${_mode}
           COMMAND "${CMAKE_COMMAND}" ${_ll_consumer_args} "-DMODE=${_mode}"
                   "-DWORK_DIR=${_ll_dist_bin}/consumer_${_mode}" "-DWITH_YAML=${_ll_with_yaml}"
                   -P "${CMAKE_CURRENT_SOURCE_DIR}/cmake/run_consumer.cmake")
  set_tests_properties(consumer_${_mode} PROPERTIES LABELS "dist;consumer" TIMEOUT 600)
endforeach()
