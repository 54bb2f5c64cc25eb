# Executor examples (issue 4): custom runner, custom sinks, LLM judge backend stub.
little_loops_add_example(custom_action_runner FILES custom_action_runner.cpp)
little_loops_add_example(custom_event_sink FILES custom_event_sink.cpp)
little_loops_add_example(llm_judge_stub FILES llm_judge_stub.cpp)

# No test runs these three (they are compiled samples), so a sanitizing build (CI's global
# -fsanitize flags) would instrument them for nothing, at twice their compile time; the
# library code they use runs under the sanitizers in the unit suites and ll-loop.
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  foreach(_ll_example custom_action_runner custom_event_sink llm_judge_stub)
    target_compile_options(${_ll_example} PRIVATE -fno-sanitize=all)
  endforeach()
endif()
