# Interpolation and evaluators: template rendering, output_contains over 10 MB, output_json on 1 MB.
little_loops_add_benchmark(bench_eval FILES bench_eval.cpp)
