// little_loops — benchmarks for loading and validating loops (design §4: 200 states ≤ 5 ms)
// SPDX-License-Identifier: MIT
#include <little_loops/schema.hpp>
#include <little_loops/validation.hpp>

#include <benchmark/benchmark.h>

#include <string>

namespace ll = little_loops;

namespace {

/// A loop document with `n` states in a chain, each with an evaluator and three routes.
std::string chain_loop(int n) {
  ll::json states = ll::json::object();
  for (int i = 0; i < n; ++i) {
    const std::string next = i + 1 < n ? "s" + std::to_string(i + 1) : "done";
    states["s" + std::to_string(i)] = {
        {"action", "run-step " + std::to_string(i) + " ${context.target}"},
        {"evaluate", {{"type", "output_numeric"}, {"operator", "le"}, {"target", i}}},
        {"on_success", next},
        {"on_failure", "s" + std::to_string(i)},
        {"on_error", "failed"},
        {"capture", "c" + std::to_string(i)},
        {"timeout", 30}};
  }
  states["done"] = {{"terminal", true}};
  states["failed"] = {{"terminal", true}, {"failure", true}};
  ll::json doc = {{"name", "chain"}, {"initial", "s0"}, {"states", states},
                  {"context", {{"target", "src/"}}}, {"max_iterations", 1000}};
  return doc.dump();
}

void bm_load_and_validate(benchmark::State& state) {
  const std::string text = chain_loop(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto loop = ll::parse_loop_text(text);
    if (!loop) state.SkipWithError("parse failed");
    auto found = ll::validate(*loop);
    benchmark::DoNotOptimize(found);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(text.size()));
}
BENCHMARK(bm_load_and_validate)->Arg(20)->Arg(200)->Arg(2000)->Unit(benchmark::kMicrosecond);

void bm_parse_only(benchmark::State& state) {
  const std::string text = chain_loop(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto loop = ll::parse_loop_text(text);
    benchmark::DoNotOptimize(loop);
  }
}
BENCHMARK(bm_parse_only)->Arg(200)->Arg(2000)->Unit(benchmark::kMicrosecond);

void bm_validate_only(benchmark::State& state) {
  const auto loop = ll::parse_loop_text(chain_loop(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    auto found = ll::validate(*loop);
    benchmark::DoNotOptimize(found);
  }
}
BENCHMARK(bm_validate_only)->Arg(200)->Arg(2000)->Unit(benchmark::kMicrosecond);

void bm_to_json(benchmark::State& state) {
  const auto loop = ll::parse_loop_text(chain_loop(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    ll::json j = *loop;
    benchmark::DoNotOptimize(j);
  }
}
BENCHMARK(bm_to_json)->Arg(200)->Arg(2000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
