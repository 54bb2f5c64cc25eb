# little_loops — drives one packaging consumer test (called by ctest, see tests/dist.cmake)
# SPDX-License-Identifier: MIT
#
#   cmake -DMODE=<find_package|find_package_no_yaml|find_package_compiled|add_subdirectory|
#                 fetch_content|single_header>
#         -DSOURCE_DIR=<checkout> -DWORK_DIR=<scratch dir> [-DGENERATOR=...]
#         [-DCXX_COMPILER=...] [-DLAUNCHER=...] [-DBUILD_TYPE=...] [-DWITH_YAML=ON|OFF]
#         -P run_consumer.cmake
#
# find_package: configure little_loops as the vcpkg port / Conan recipe do (no tests, no
# examples), install into WORK_DIR/prefix, check the layout (share/cmake/little_loops, no lib/),
# then build and run tests/cmake/find_package against that prefix only. find_package_compiled:
# the same with the compiled library (LITTLE_LOOPS_COMPILED=ON: lib/ holds it), linked by the
# consumer through little_loops::compiled.
cmake_minimum_required(VERSION 3.21)

foreach(var MODE SOURCE_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT WITH_YAML)
  set(WITH_YAML OFF)
endif()

# The consumers check packaging (targets, paths, versions), not memory safety: sanitizer
# options a CI run puts in CXXFLAGS/LDFLAGS would only make each consumer build twice as slow.
foreach(var CXXFLAGS LDFLAGS)
  if(DEFINED ENV{${var}})
    string(REGEX REPLACE "-f(no-)?sanitize[^ ]*" "" stripped "$ENV{${var}}")
    set(ENV{${var}} "${stripped}")
  endif()
endforeach()

set(common_args)
if(GENERATOR)
  list(APPEND common_args -G "${GENERATOR}")
endif()
if(CXX_COMPILER)
  list(APPEND common_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(LAUNCHER)
  list(APPEND common_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
if(BUILD_TYPE)
  list(APPEND common_args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer ${MODE}: ${step} failed (${rc}):\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# Configures, builds and runs the consumer project tests/cmake/<project>.
function(build_and_run_consumer project)
  set(build "${WORK_DIR}/consumer")
  run("configure consumer" ${CMAKE_COMMAND} ${common_args} ${ARGN}
      -S "${SOURCE_DIR}/tests/cmake/${project}" -B "${build}")
  run("build consumer" ${CMAKE_COMMAND} --build "${build}")
  find_program(exe consumer PATHS "${build}" "${build}/Debug" "${build}/Release"
               NO_DEFAULT_PATH NO_CACHE)
  if(NOT exe)
    message(FATAL_ERROR "consumer ${MODE}: no consumer executable in ${build}")
  endif()
  run("run consumer" "${exe}")
  message(STATUS "${last_output}")
endfunction()

# Installs little_loops into <prefix> the way the vcpkg port / Conan recipe configure it
# (with_compiled: also the compiled library).
function(install_package prefix with_yaml)
  set(with_compiled OFF)
  if(ARGC GREATER 2)
    set(with_compiled ${ARGV2})
  endif()
  set(build "${WORK_DIR}/package")
  run("configure little_loops" ${CMAKE_COMMAND} ${common_args} -S "${SOURCE_DIR}" -B "${build}"
      -DLITTLE_LOOPS_BUILD_TESTS=OFF -DLITTLE_LOOPS_BUILD_EXAMPLES=OFF
      -DLITTLE_LOOPS_BUILD_BENCHMARKS=OFF -DLITTLE_LOOPS_INSTALL=ON
      -DLITTLE_LOOPS_WITH_YAML=${with_yaml} -DLITTLE_LOOPS_COMPILED=${with_compiled}
      "-DCMAKE_INSTALL_PREFIX=${prefix}")
  run("build little_loops" ${CMAKE_COMMAND} --build "${build}")
  run("install little_loops" ${CMAKE_COMMAND} --install "${build}")
  set(cmake_dir "${prefix}/share/cmake/little_loops")
  set(expected_files
    "${prefix}/include/little_loops/fsm.hpp"
    "${prefix}/include/little_loops/version.hpp"
    "${cmake_dir}/little_loopsConfig.cmake"
    "${cmake_dir}/little_loopsConfigVersion.cmake"
    "${cmake_dir}/little_loopsTargets.cmake"
    "${cmake_dir}/Findre2.cmake"
    "${prefix}/share/doc/little_loops/LICENSE")
  if(with_yaml)
    list(APPEND expected_files "${cmake_dir}/little_loopsYamlTargets.cmake")
  endif()
  if(with_compiled)
    list(APPEND expected_files "${cmake_dir}/little_loopsCompiledTargets.cmake")
  endif()
  foreach(file IN LISTS expected_files)
    if(NOT EXISTS "${file}")
      message(FATAL_ERROR "consumer ${MODE}: the install is missing ${file}")
    endif()
  endforeach()
  if(with_compiled)
    file(GLOB_RECURSE archives "${prefix}/lib*/*little_loops.*")
    if(NOT archives)
      message(FATAL_ERROR "consumer ${MODE}: the compiled library was not installed to lib/")
    endif()
  else()
    foreach(dir lib lib64 bin)
      if(EXISTS "${prefix}/${dir}")
        file(GLOB_RECURSE stray RELATIVE "${prefix}" "${prefix}/${dir}/*")
        message(FATAL_ERROR "consumer ${MODE}: a header-only install created ${dir}/: ${stray}")
      endif()
    endforeach()
  endif()
  file(GLOB_RECURSE generated RELATIVE "${prefix}" "${prefix}/include/*.in" "${prefix}/include/*.cpp")
  if(generated)
    message(FATAL_ERROR "consumer ${MODE}: non-header files installed: ${generated}")
  endif()
endfunction()

# The version the package must satisfy (SameMinorVersion), read like the project reads it.
file(STRINGS "${SOURCE_DIR}/include/little_loops/version.hpp" version_lines
     REGEX "#define LITTLE_LOOPS_VERSION_(MAJOR|MINOR|PATCH) ")
foreach(line IN LISTS version_lines)
  if(line MATCHES "LITTLE_LOOPS_VERSION_(MAJOR|MINOR|PATCH) ([0-9]+)")
    set(v_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  endif()
endforeach()
set(version "${v_MAJOR}.${v_MINOR}")

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

if(MODE STREQUAL "find_package")
  install_package("${WORK_DIR}/prefix" ${WITH_YAML})
  # Only the prefix: the consumer must not see the source or build tree.
  build_and_run_consumer(find_package "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
                         -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DLL_CONSUMER_WITH_YAML=${WITH_YAML}
                         "-DLL_REQUIRED_VERSION=${version}")
elseif(MODE STREQUAL "find_package_no_yaml")
  # Installed without yaml: plain find_package works, COMPONENTS yaml fails with our message.
  install_package("${WORK_DIR}/prefix" OFF)
  if(EXISTS "${WORK_DIR}/prefix/share/cmake/little_loops/little_loopsYamlTargets.cmake")
    message(FATAL_ERROR "consumer ${MODE}: yaml targets installed although LITTLE_LOOPS_WITH_YAML=OFF")
  endif()
  build_and_run_consumer(find_package "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
                         -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DLL_CONSUMER_WITH_YAML=OFF)
  execute_process(COMMAND ${CMAKE_COMMAND} ${common_args}
                  -S "${SOURCE_DIR}/tests/cmake/find_package" -B "${WORK_DIR}/consumer_yaml"
                  "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
                  -DLL_CONSUMER_WITH_YAML=ON
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "installed without the yaml component")
    message(FATAL_ERROR "consumer ${MODE}: COMPONENTS yaml should fail with a clear message:\n${out}")
  endif()
  message(STATUS "COMPONENTS yaml correctly refused")
elseif(MODE STREQUAL "find_package_compiled")
  install_package("${WORK_DIR}/prefix" OFF ON)
  build_and_run_consumer(find_package "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
                         -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DLL_CONSUMER_COMPILED=ON
                         "-DLL_REQUIRED_VERSION=${version}")
elseif(MODE STREQUAL "add_subdirectory")
  build_and_run_consumer(add_subdirectory "-DLITTLE_LOOPS_SOURCE_DIR=${SOURCE_DIR}")
elseif(MODE STREQUAL "fetch_content")
  build_and_run_consumer(fetch_content "-DLITTLE_LOOPS_SOURCE_DIR=${SOURCE_DIR}"
                         -DFETCHCONTENT_FULLY_DISCONNECTED=ON -DLL_CONSUMER_WITH_YAML=${WITH_YAML})
elseif(MODE STREQUAL "single_header")
  build_and_run_consumer(single_header
                         "-DLITTLE_LOOPS_SINGLE_INCLUDE_DIR=${SOURCE_DIR}/single_include")
else()
  message(FATAL_ERROR "run_consumer.cmake: unknown MODE '${MODE}'")
endif()
