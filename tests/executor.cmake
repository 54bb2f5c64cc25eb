# Executor area: concepts, events, executor, snapshot, scripted runner (issue 4).
little_loops_add_suite(test_executor FILES
  unit/test_executor.cpp
  unit/test_executor_routing.cpp
  unit/test_routing.cpp
  unit/test_executor_limits.cpp
  unit/test_executor_signals.cpp
  unit/test_dialect.cpp
  unit/test_events.cpp
  unit/test_concepts.cpp
  unit/test_snapshot.cpp
  unit/test_scripted_runner.cpp
  unit/test_subloops.cpp
  unit/test_resilience_run.cpp
  unit/test_plugin_states.cpp
  unit/test_guards.cpp
  unit/test_host_requests.cpp)

# Compile-fail tests (style.md §3.11): each file violates one concept; the test builds it and
# passes only when the compiler output matches the file's `// expected error: <regex>` line.
file(GLOB _ll_compile_fail CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/compile_fail/*.cpp")
foreach(_src IN LISTS _ll_compile_fail)
  get_filename_component(_name "${_src}" NAME_WE)
  file(STRINGS "${_src}" _expect REGEX "^// expected error: ")
  string(REGEX REPLACE "^// expected error: " "" _expect "${_expect}")
  set(_target "compile_fail_${_name}")
  add_executable(${_target} EXCLUDE_FROM_ALL "${_src}")
  target_link_libraries(${_target} PRIVATE little_loops)
  target_compile_features(${_target} PRIVATE cxx_std_${LITTLE_LOOPS_TEST_CXX_STANDARD})
  set_target_properties(${_target} PROPERTIES CXX_EXTENSIONS OFF)
  add_test(NAME ${_target}
    COMMAND "${CMAKE_COMMAND}" --build "${CMAKE_BINARY_DIR}" --target ${_target})
  # Runs a build in this build tree: one at a time (two ninja runs must not share a tree).
  set_tests_properties(${_target} PROPERTIES PASS_REGULAR_EXPRESSION "${_expect}"
    RESOURCE_LOCK little_loops_build_tree)
endforeach()
