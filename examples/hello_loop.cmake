# hello_loop: loads and validates a loop file and prints its states (issue 2).
little_loops_add_example(hello_loop FILES hello_loop.cpp)
if(LITTLE_LOOPS_BUILD_TESTS)
  add_test(NAME example_hello_loop
           COMMAND hello_loop "${CMAKE_CURRENT_SOURCE_DIR}/loops/hello.json")
  set_tests_properties(example_hello_loop PROPERTIES
    PASS_REGULAR_EXPRESSION "loop hello: 3 states, initial \"greet\"")
  # An invalid loop must be rejected (exit code 1).
  add_test(NAME example_hello_loop_rejects_invalid
           COMMAND hello_loop "${PROJECT_SOURCE_DIR}/tests/fixtures/core/invalid_loop.json")
  set_tests_properties(example_hello_loop_rejects_invalid PROPERTIES WILL_FAIL TRUE)
endif()
