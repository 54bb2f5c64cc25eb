little_loops_add_suite(test_eval FILES
  unit/test_interpolation.cpp
  unit/test_evaluators_deterministic.cpp
  unit/test_llm_judge.cpp
  unit/test_feedback.cpp)
