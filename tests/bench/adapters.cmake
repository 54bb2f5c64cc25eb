# Adapters: POSIX process runner overhead vs a bare posix_spawn + waitpid; YAML load of a
# 200-state loop; journal state saves.
find_package(Threads REQUIRED)
set(_ll_bench_adapter_libs little_loops::posix Threads::Threads)
if(TARGET little_loops_yaml)
  list(APPEND _ll_bench_adapter_libs little_loops::yaml)
endif()
little_loops_add_benchmark(bench_adapters FILES bench_adapters.cpp LIBS ${_ll_bench_adapter_libs})
if(TARGET little_loops_yaml)
  target_compile_definitions(bench_adapters PRIVATE LITTLE_LOOPS_BENCH_YAML=1)
endif()
