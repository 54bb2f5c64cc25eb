# Adapters (opt-in headers): POSIX process runner, command judge, journal, YAML loader.
find_package(Threads REQUIRED)
little_loops_add_suite(test_adapters
  FILES unit/test_posix_process_runner.cpp
  LIBS little_loops::posix Threads::Threads)
