# Schema and validation: load + validate of 20- and 200-state loops, parse, validate, to_json.
little_loops_add_benchmark(bench_core FILES bench_core.cpp)
