little_loops_add_suite(test_smoke FILES unit/test_smoke.cpp)
