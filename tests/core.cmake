# Core area: error, expected, schema (strict parsing, serialisation) and validation (issue 2).
little_loops_add_suite(test_core FILES
  unit/test_schema.cpp
  unit/test_validation.cpp
  unit/test_error.cpp
  unit/test_expected.cpp
  unit/test_text.cpp
  unit/test_resilience_schema.cpp
  unit/test_host_settings.cpp)
