// little_loops — benchmarks for loading and validating loops (design §4: 200 states ≤ 5 ms)
// SPDX-License-Identifier: MIT
#include <little_loops/paradigms.hpp>
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

/// One state whose route table has `n` verdicts, written as text: loading must stay linear
/// in the document (items/s flat from 1,000 to 16,000 keys). nlohmann's own parser and
/// `map[key] = value` are quadratic for an ordered object; the loader appends instead.
std::string wide_route_loop(int n) {
  std::string text = R"({"name": "wide", "initial": "a", "states": {"a": {"action": "x", "route": {)";
  for (int i = 0; i < n; ++i) text += (i == 0 ? "\"v" : ", \"v") + std::to_string(i) + "\": \"done\"";
  text += R"(}}, "done": {"terminal": true}}})";
  return text;
}

void bm_load_wide_route(benchmark::State& state) {
  const std::string text = wide_route_loop(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto loop = ll::load_loop_text(text);
    if (!loop) state.SkipWithError("load failed");
    ll::json back = *loop;  // serialised too (the digest of a compiled loop does it)
    benchmark::DoNotOptimize(back);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(bm_load_wide_route)->Arg(1000)->Arg(4000)->Arg(16000)->Unit(benchmark::kMillisecond);

/// `n` states, each with a target naming no state and a 200-byte name: every finding is
/// reported, and "did you mean" is looked up for at most 64 of them, so the time grows
/// linearly with `n` (items/s does not fall; it took 18 s for 3,000 states with 2,000-byte
/// names when every finding searched every name).
void bm_validate_dangling(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::string text = R"({"name": "dangling", "initial": "s0", "states": {)";
  const std::string pad(200, 'x');
  for (int i = 0; i < n; ++i)
    text += "\"s" + std::to_string(i) + pad + "\": {\"action\": \"x\", \"next\": \"t" + std::to_string(i) + pad + "\"}, ";
  text += R"("done": {"terminal": true}}})";
  for (auto _ : state) {
    auto loop = ll::load_loop_text(text);
    if (loop) state.SkipWithError("should not load");
    benchmark::DoNotOptimize(loop);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(bm_validate_dangling)->Arg(500)->Arg(2000)->Arg(8000)->Unit(benchmark::kMillisecond);

/// An invariants spec with `n` constraints compiled to its 2n + 1 states: linear in `n`
/// (duplicate names found by hash, states appended; both were quadratic).
void bm_compile_invariants(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::string text = R"({"paradigm": "invariants", "name": "many", "constraints": [)";
  for (int i = 0; i < n; ++i)
    text += (i == 0 ? "" : ", ") + std::string(R"({"name": "c)") + std::to_string(i) +
            R"(", "check": "test -f f", "fix": "touch f"})";
  text += "]}";
  for (auto _ : state) {
    auto loop = ll::compile_paradigm_text(text);
    if (!loop) state.SkipWithError("compile failed");
    benchmark::DoNotOptimize(loop);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(bm_compile_invariants)->Arg(500)->Arg(2000)->Arg(8000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
