# Adapters (opt-in headers): POSIX process runner, command judge, journal, YAML loader.
find_package(Threads REQUIRED)
little_loops_add_suite(test_adapters
  FILES unit/test_posix_process_runner.cpp unit/test_process_cgroup.cpp unit/test_command_judge.cpp
        unit/test_journal.cpp
  LIBS little_loops::posix Threads::Threads)

# The YAML loader needs yaml-cpp; its tests are a separate program so the POSIX tests build
# without it. The fuzz corpus replay (every parser of untrusted text, YAML included) is there too.
if(TARGET little_loops_yaml)
  little_loops_add_suite(test_adapters_yaml
    FILES unit/test_yaml_loader.cpp unit/test_fuzz_replay.cpp unit/test_compose.cpp
    LIBS little_loops::yaml)
endif()
