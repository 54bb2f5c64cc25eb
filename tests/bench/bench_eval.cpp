// little_loops — benchmarks: template rendering, output_contains and output_json throughput
// SPDX-License-Identifier: MIT
#include <little_loops/evaluators.hpp>
#include <little_loops/interpolation.hpp>

#include <benchmark/benchmark.h>

#include <string>

namespace ll = little_loops;

namespace {

// ~10 MB of test-runner-like log lines without the searched patterns.
const std::string& big_output() {
  static const std::string text = [] {
    std::string s;
    s.reserve(10u << 20);
    std::size_t i = 0;
    while (s.size() < (10u << 20)) {
      s += "test_module_";
      s += std::to_string(i++ % 997);
      s += "::case PASSED in 0.01s (ok) [worker gw3]\n";
    }
    return s;
  }();
  return text;
}

// ~1 MB JSON report: {"summary": {...}, "tests": [{...}, ...]}.
const std::string& big_json() {
  static const std::string text = [] {
    std::string s = R"({"tests": [)";
    std::size_t i = 0;
    while (s.size() < (1u << 20)) {
      if (i) s += ',';
      s += R"({"name": "test_)" + std::to_string(i) +
           R"(", "outcome": "passed", "duration": 0.0123, "tags": ["unit", "fast"]})";
      ++i;
    }
    s += R"(], "summary": {"passed": )" + std::to_string(i) + R"(, "failed": 0}})";
    return s;
  }();
  return text;
}

void bm_render_template(benchmark::State& state) {
  ll::json context = {{"file", "src/main.cpp"}, {"count", 42}, {"ratio", 0.75}};
  ll::interpolation_context ctx;
  ctx.context = &context;
  ctx.state_name = "fix";
  ctx.iteration = 7;
  ctx.loop_name = "fix-tests";
  auto tpl = ll::compile_template(
      "Fix ${context.file} (${context.count} failures, ratio ${context.ratio}) in state "
      "${state.name}, iteration ${state.iteration}.");
  std::string out;
  out.reserve(256);
  for (auto _ : state) {
    out.clear();
    auto r = ll::render_to(*tpl, ctx, out);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}
BENCHMARK(bm_render_template);

void bm_contains(benchmark::State& state, const char* pattern) {
  const std::string& text = big_output();
  ll::pattern_matcher m{std::string(pattern)};
  for (auto _ : state) {
    bool found = m.search(text);
    benchmark::DoNotOptimize(found);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK_CAPTURE(bm_contains, literal_absent, "FAILED")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_contains, regex_absent, "[0-9]+ failures")->Unit(benchmark::kMillisecond);
// The regex runs over the whole text (its literal, "::case ", is on every line), with
// Python's Unicode \d and \w and with ASCII classes.
BENCHMARK_CAPTURE(bm_contains, regex_unicode_classes, R"(\d{3}::case \w+ in [1-9])")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_contains, regex_ascii_classes, "[0-9]{3}::case [A-Za-z0-9_]+ in [1-9]")->Unit(benchmark::kMillisecond);

void bm_contains_evaluator(benchmark::State& state) {
  const std::string& text = big_output();
  ll::evaluate_config cfg;
  cfg.type = ll::evaluator_type::output_contains;
  cfg.pattern = "[0-9]+ failures";
  auto compiled = ll::compile_evaluator(cfg);
  ll::action_result action;
  action.output = text;
  ll::default_evaluator eval;
  ll::evaluation_request req;
  req.config = &cfg;
  req.compiled = &*compiled;
  req.action = &action;
  for (auto _ : state) {
    auto r = eval.evaluate(req);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(bm_contains_evaluator)->Unit(benchmark::kMillisecond);

void bm_output_json(benchmark::State& state) {
  const std::string& text = big_json();
  for (auto _ : state) {
    auto r = ll::evaluate_output_json(text, ".summary.failed", ll::comparison_op::eq, 0);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(bm_output_json)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
