// little_loops — executor benchmark: engine overhead per transition, allocations per transition
// SPDX-License-Identifier: MIT
//
// Design §4: ≤ 1 µs per transition with a no-op runner (aim ≤ 100 ns), ≥ 100× the Python
// original's ~65,000 transitions/s. Heap allocations are counted by replacing the global
// operator new in this program; `allocs/transition` is reported as a counter.
#include <little_loops/fsm.hpp>

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <string>

namespace ll = little_loops;

// GCC pairs the replaced operator new with free() and warns; the pairing is correct here.
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<std::uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  if (void* p = std::malloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

/// The cheapest possible runner: every action succeeds instantly with no output.
struct noop_runner {
  ll::expected<ll::action_result, ll::error> run(const ll::action_request&) noexcept {
    return ll::action_result{};
  }
};

/// A sink that receives every event (so events are built and time-stamped) and counts them.
struct counting_sink {
  std::uint64_t events = 0;
  void on_event(const ll::loop_event&) noexcept { ++events; }
};

std::shared_ptr<const ll::compiled_loop> compile_or_die(const std::string& text) {
  auto loop = ll::load_loop_text(text);
  if (!loop) {
    std::fprintf(stderr, "%s\n", ll::to_string(loop.error()).c_str());
    std::abort();
  }
  auto c = ll::compile_loop(*loop);
  if (!c) {
    std::fprintf(stderr, "%s\n", ll::to_string(c.error()).c_str());
    std::abort();
  }
  return *c;
}

std::string ping_pong_loop() {
  return R"({"name": "ping_pong", "initial": "ping", "max_iterations": 2000000000,
    "states": {"ping": {"action": "ping", "on_success": "pong", "on_failure": "done"},
               "pong": {"action": "pong", "on_success": "ping", "on_failure": "done"},
               "done": {"terminal": true}}})";
}

// 20 states s0..s19, each with a route table whose matching key is not the first entry.
std::string chain_loop() {
  std::string states;
  for (int i = 0; i < 20; ++i) {
    const std::string next = "s" + std::to_string((i + 1) % 20);
    states += "\"s" + std::to_string(i) + "\": {\"action\": \"step " + std::to_string(i) +
              "\", \"route\": {\"failure\": \"done\", \"blocked\": \"done\", \"success\": \"" +
              next + "\", \"_\": \"done\", \"_error\": \"done\"}},";
  }
  return R"({"name": "chain", "initial": "s0", "max_iterations": 2000000000, "states": {)" +
         states + R"("done": {"terminal": true}}})";
}

template <class Sink>
void run_transitions(benchmark::State& state, const std::string& text) {
  auto loop = compile_or_die(text);
  Sink sink;
  auto ex = ll::make_executor(loop, noop_runner{}, ll::default_evaluator{}, sink);
  if (!ex) std::abort();
  // Warm up: buffers reach their steady-state capacity.
  for (int i = 0; i < 100; ++i) ex->step();
  const std::uint64_t before = g_allocations.load();
  for (auto _ : state) {
    if (!ex->step()) {
      ex->reset();
    }
  }
  const std::uint64_t allocs = g_allocations.load() - before;
  state.SetItemsProcessed(state.iterations());
  state.counters["allocs/transition"] =
      benchmark::Counter(static_cast<double>(allocs) / static_cast<double>(state.iterations()));
  state.counters["transitions/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_ping_pong_null_sink(benchmark::State& s) { run_transitions<ll::null_event_sink>(s, ping_pong_loop()); }
void BM_ping_pong_counting_sink(benchmark::State& s) { run_transitions<counting_sink>(s, ping_pong_loop()); }
void BM_chain20_null_sink(benchmark::State& s) { run_transitions<ll::null_event_sink>(s, chain_loop()); }
void BM_chain20_counting_sink(benchmark::State& s) { run_transitions<counting_sink>(s, chain_loop()); }

// The full run() path including construction (make_executor on a shared compiled loop) for a
// 1000-transition run.
void BM_ping_pong_run_1000(benchmark::State& state) {
  std::string text = ping_pong_loop();
  text.replace(text.find("2000000000"), 10, "1000");
  auto loop = compile_or_die(text);
  for (auto _ : state) {
    auto ex = ll::make_executor(loop, noop_runner{});
    const auto& r = ex->run();
    benchmark::DoNotOptimize(r.iterations);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}

// Sub-loops: a step of the same ping-pong three loops down (top → a → b → ping-pong), each
// caller a `loop:` state; design §6.5 asks for at most 2× a flat step.
struct stack_children final : ll::child_loop_resolver {
  std::map<std::string, ll::child_loop, std::less<>> loops;
  ll::expected<ll::child_loop, ll::error> load(std::string_view name, std::string_view) override {
    return loops.at(std::string(name));
  }
};

std::string caller_loop(const std::string& name, const std::string& child) {
  return R"({"name": ")" + name + R"(", "initial": "call", "states": {"call": {"loop": ")" + child +
         R"(", "on_yes": "done", "on_no": "done"}, "done": {"terminal": true}}})";
}

template <class Sink>
void run_nested_transitions(benchmark::State& state) {
  stack_children children;
  children.loops["leaf"] = ll::child_loop{compile_or_die(ping_pong_loop()), "leaf", ll::json::object()};
  children.loops["b"] = ll::child_loop{compile_or_die(caller_loop("b", "leaf")), "b", ll::json::object()};
  children.loops["a"] = ll::child_loop{compile_or_die(caller_loop("a", "b")), "a", ll::json::object()};
  ll::executor_options options;
  options.child_loops = &children;
  Sink sink;
  auto ex = ll::make_executor(compile_or_die(caller_loop("top", "a")), noop_runner{}, ll::default_evaluator{},
                              sink, std::move(options));
  if (!ex) std::abort();
  for (int i = 0; i < 100; ++i) ex->step();  // three calls, then the ping-pong at depth 3
  if (ex->loop().loop().name != "ping_pong") std::abort();  // the running loop is the innermost
  const std::uint64_t before = g_allocations.load();
  for (auto _ : state) ex->step();
  const std::uint64_t allocs = g_allocations.load() - before;
  state.SetItemsProcessed(state.iterations());
  state.counters["allocs/transition"] =
      benchmark::Counter(static_cast<double>(allocs) / static_cast<double>(state.iterations()));
}

void BM_ping_pong_depth3_null_sink(benchmark::State& s) { run_nested_transitions<ll::null_event_sink>(s); }
void BM_ping_pong_depth3_counting_sink(benchmark::State& s) { run_nested_transitions<counting_sink>(s); }

BENCHMARK(BM_ping_pong_null_sink);
BENCHMARK(BM_ping_pong_depth3_null_sink);
BENCHMARK(BM_ping_pong_depth3_counting_sink);
BENCHMARK(BM_ping_pong_counting_sink);
BENCHMARK(BM_chain20_null_sink);
BENCHMARK(BM_chain20_counting_sink);
BENCHMARK(BM_ping_pong_run_1000);

}  // namespace

BENCHMARK_MAIN();
