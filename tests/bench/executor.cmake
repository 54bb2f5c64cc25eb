# Executor engine overhead: transitions/s with a no-op runner, heap allocations per transition.
little_loops_add_benchmark(bench_executor FILES bench_executor.cpp)
