// little_loops — benchmarks of the adapters: process runner overhead, YAML loading, journal saves
// SPDX-License-Identifier: MIT
//
// Design §4 target: a step costs ≤ 5% over a bare posix_spawn + waitpid of the same
// command. BM_step_overhead_paired measures it in one run (ratios of blocks run in the same
// rounds); BM_runner_sh_true against BM_bare_spawn_sh_true gives the runner's absolute times
// (run with --benchmark_repetitions=15 --benchmark_enable_random_interleaving=true).
#include <little_loops/fsm.hpp>
#include <little_loops/journal.hpp>
#include <little_loops/runners/posix_process_runner.hpp>
#if LITTLE_LOOPS_BENCH_YAML
#  include <little_loops/yaml_loader.hpp>
#endif

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <random>
#include <sstream>
#include <stop_token>
#include <string>
#include <vector>

namespace ll = little_loops;

namespace {

// The baseline: what any host must do at the least to run `/bin/sh -c true`.
// The runner spawns what the bare spawns compare with: `/bin/sh -c` (its default is bash),
// held by its process group, as a bare spawn is (BM_runner_sh_true_cgroup adds a cgroup).
ll::posix_runner_options sh_options() {
  ll::posix_runner_options opts;
  opts.shell_command = {"/bin/sh", "-c"};
  opts.containment = ll::process_containment::process_group;
  return opts;
}

void BM_bare_spawn_sh_true(benchmark::State& state) {
  char sh[] = "/bin/sh", dash_c[] = "-c", cmd[] = "true";
  char* argv[] = {sh, dash_c, cmd, nullptr};
  for (auto _ : state) {
    pid_t pid;
    if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ) != 0) state.SkipWithError("spawn");
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    benchmark::DoNotOptimize(status);
  }
}
BENCHMARK(BM_bare_spawn_sh_true)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Baseline with the same plumbing a capturing host needs: stdout/stderr pipes read to EOF.
void BM_bare_spawn_pipes_sh_true(benchmark::State& state) {
  char sh[] = "/bin/sh", dash_c[] = "-c", cmd[] = "true";
  char* argv[] = {sh, dash_c, cmd, nullptr};
  for (auto _ : state) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) state.SkipWithError("pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    pid_t pid;
    if (posix_spawn(&pid, "/bin/sh", &fa, nullptr, argv, environ) != 0) state.SkipWithError("spawn");
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    char buf[256];
    while (read(out[0], buf, sizeof buf) > 0) {
    }
    while (read(err[0], buf, sizeof buf) > 0) {
    }
    close(out[0]);
    close(err[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    benchmark::DoNotOptimize(status);
  }
}
BENCHMARK(BM_bare_spawn_pipes_sh_true)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_runner_sh_true(benchmark::State& state) {
  const ll::posix_process_runner runner(sh_options());
  ll::action_request req;
  req.text = "true";
  for (auto _ : state) {
    auto r = runner.run(req);
    if (!r || r->exit_code != 0) state.SkipWithError("run failed");
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_runner_sh_true)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The same in a cgroup of its own (the default where one is delegated): the cost of making,
// killing and removing a cgroup per action.
void BM_runner_sh_true_cgroup(benchmark::State& state) {
  if (!ll::cgroup_containment_available()) {
    state.SkipWithError("no delegated cgroup v2 group here");
    return;
  }
  ll::posix_runner_options opts = sh_options();
  opts.containment = ll::process_containment::automatic;
  const ll::posix_process_runner runner(opts);
  ll::action_request req;
  req.text = "true";
  for (auto _ : state) {
    auto r = runner.run(req);
    if (!r || r->exit_code != 0) state.SkipWithError("run failed");
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_runner_sh_true_cgroup)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The same with a stop token (as the executor passes one): adds the wake-up pipe.
void BM_runner_sh_true_cancellable(benchmark::State& state) {
  const ll::posix_process_runner runner(sh_options());
  std::stop_source source;
  ll::action_request req;
  req.text = "true";
  req.stop = source.get_token();
  for (auto _ : state) {
    auto r = runner.run(req);
    if (!r || r->exit_code != 0) state.SkipWithError("run failed");
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_runner_sh_true_cancellable)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The per-step cost of `ll-loop run`'s path — executor, process runner, journal event sink,
// background journal with a save at every state boundary (snapshot + checkpoint line) — of
// the runner alone, and of the same spawn with its output captured (capturing_spawn), against
// a bare posix_spawn + waitpid of `/bin/sh -c true`, in this process and the same rounds:
// every iteration runs a block of 30 steps of each, in random order. Counters: the bare step
// in µs, and the medians (with quartiles) of the per-round overheads in % (capture_pct,
// runner_pct, loop_pct), so the machine's slow drifts in speed hit all four alike and cancel
// out; and, measured inside the loop block, the mean µs per step spent in the runner
// (step_runner_us), in the save (step_save_us) and in the rest (step_rest_us).
struct null_forward {
  void on_event(const ll::loop_event&) noexcept {}
};

// The runner of the loop block: forwards to the process runner and adds up the time spent
// in it, so that a loop step splits into the runner's part and the rest (executor, events,
// journal) as they cost in place, between two spawns (two clock reads per step, ~50 ns).
struct timed_runner {
  const ll::posix_process_runner* runner;
  double* spent_us;
  ll::expected<ll::action_result, ll::error> run(const ll::action_request& request) const {
    const auto t0 = std::chrono::steady_clock::now();
    auto result = runner->run(request);
    *spent_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    return result;
  }
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

// The least a host that captures output must do around that spawn: two fresh pipes as
// stdout and stderr, read to end-of-file, and the child reaped. With a pidfd (as the runner),
// the exit is seen there and the pipes are drained after it. The runner's own cost is what
// it adds over this; this block's own, over the bare spawn, is the price of capturing.
bool capturing_spawn(char* const* argv) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return false;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  pid_t pid;
  const bool spawned = posix_spawn(&pid, argv[0], &fa, nullptr, argv, environ) == 0;
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  close(err[1]);
  if (spawned) {
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_pipes = 2;
    char buf[4096];
    while (open_pipes > 0 && poll(fds, 2, -1) > 0) {
      for (auto& p : fds) {
        if (p.fd >= 0 && p.revents != 0 && read(p.fd, buf, sizeof buf) <= 0) {
          p.fd = -1;
          --open_pipes;
        }
      }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
  }
  close(out[0]);
  close(err[0]);
  return spawned;
}

void BM_step_overhead_paired(benchmark::State& state) {
  constexpr int block = 30;
  using clock = std::chrono::steady_clock;
  const auto dir = std::filesystem::temp_directory_path() / ("ll_bench_steps_" + std::to_string(getpid()));
  {
    auto loop = ll::load_loop_text(R"({"name": "pingpong", "initial": "a", "max_iterations": 1000000000,
      "states": {"a": {"action": "true", "next": "b"}, "b": {"action": "true", "next": "a"},
                 "stopped": {"terminal": true}}})");
    if (!loop) {
      state.SkipWithError("loop");
      return;
    }
    const ll::posix_process_runner runner(sh_options());
    ll::default_evaluator evaluator;
    ll::loop_journal journal(dir, "pingpong");
    if (!journal.open(true)) {
      state.SkipWithError("journal");
      return;
    }
    journal.sync = ll::journal_sync::background;  // as ll-loop run
    journal.sync_interval = std::chrono::milliseconds(state.range(0));
    ll::journal_event_sink<null_forward> sink(journal);
    double in_runner_us = 0, in_save_us = 0, in_steps_us = 0;
    long steps = 0;
    auto made = ll::make_executor(*loop, timed_runner{&runner, &in_runner_us}, evaluator, sink);
    if (!made) {
      state.SkipWithError("executor");
      return;
    }
    auto& ex = *made;
    ll::journal_record record;
    record.loop_path = (dir / "pingpong.yaml").string();
    record.extra = ll::json{{"context", ll::json::object()}, {"no_llm", false}};
    std::stop_source stop;
    ll::action_request req;
    req.text = "true";
    req.stop = stop.get_token();  // as the executor passes one
    char sh[] = "/bin/sh", dash_c[] = "-c", cmd[] = "true";
    char* argv[] = {sh, dash_c, cmd, nullptr};

    std::vector<double> bare_us, capture_pct, runner_pct, loop_pct;
    std::mt19937 rng(20261123);
    for (auto _ : state) {
      std::array<int, 4> order{0, 1, 2, 3};
      std::shuffle(order.begin(), order.end(), rng);
      std::array<double, 4> per_step{};
      for (const int k : order) {
        const auto t0 = clock::now();
        for (int i = 0; i < block; ++i) {
          if (k == 0) {
            pid_t pid;
            if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ) != 0) state.SkipWithError("spawn");
            int status = 0;
            while (waitpid(pid, &status, 0) < 0) {
            }
          } else if (k == 1) {
            auto r = runner.run(req);
            if (!r || r->exit_code != 0) state.SkipWithError("run failed");
          } else if (k == 3) {
            if (!capturing_spawn(argv)) state.SkipWithError("spawn");
          } else {
            const auto s0 = clock::now();
            if (!ex.step()) state.SkipWithError("the loop stopped");
            const auto s1 = clock::now();
            const ll::snapshot_view snap = ex.snapshot_view();  // as ll-loop run
            record.iteration = snap.iteration;
            record.current_state = snap.current_state;
            record.status = std::string(ll::journal_status::running);
            if (!journal.save(record, snap)) state.SkipWithError("save");
            const auto s2 = clock::now();
            in_save_us += std::chrono::duration<double, std::micro>(s2 - s1).count();
            in_steps_us += std::chrono::duration<double, std::micro>(s2 - s0).count();
            ++steps;
          }
        }
        per_step[static_cast<std::size_t>(k)] =
            std::chrono::duration<double, std::micro>(clock::now() - t0).count() / block;
      }
      bare_us.push_back(per_step[0]);
      runner_pct.push_back(100.0 * (per_step[1] / per_step[0] - 1.0));
      capture_pct.push_back(100.0 * (per_step[3] / per_step[0] - 1.0));
      loop_pct.push_back(100.0 * (per_step[2] / per_step[0] - 1.0));
    }
    state.counters["bare_us"] = percentile(bare_us, 0.5);
    state.counters["capture_pct"] = percentile(capture_pct, 0.5);
    state.counters["runner_pct"] = percentile(runner_pct, 0.5);
    state.counters["runner_pct_q1"] = percentile(runner_pct, 0.25);
    state.counters["runner_pct_q3"] = percentile(runner_pct, 0.75);
    state.counters["loop_pct"] = percentile(loop_pct, 0.5);
    state.counters["loop_pct_q1"] = percentile(loop_pct, 0.25);
    state.counters["loop_pct_q3"] = percentile(loop_pct, 0.75);
    // Where a loop step's time goes, in µs per step (means): in the runner, in the journal
    // save after it, and the rest (executor, evaluation, routing, event lines and their write).
    if (steps > 0) {
      const double n = static_cast<double>(steps);
      state.counters["step_runner_us"] = in_runner_us / n;
      state.counters["step_save_us"] = in_save_us / n;
      state.counters["step_rest_us"] = (in_steps_us - in_runner_us - in_save_us) / n;
    }
  }  // joins the journal's thread before the directory goes
  std::filesystem::remove_all(dir);
}
// sync_ms: the journal's sync_interval (100: the default; the state file and its fsyncs at most
// that often). The journal goes to TMPDIR (default /tmp): set TMPDIR=/dev/shm for tmpfs.
BENCHMARK(BM_step_overhead_paired)
    ->Arg(20)
    ->Arg(100)
    ->Arg(1000)
    ->ArgNames({"sync_ms"})
    ->Iterations(100)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_journal_save(benchmark::State& state) {
  const auto dir = std::filesystem::temp_directory_path() / ("ll_bench_journal_" + std::to_string(getpid()));
  {
    ll::loop_journal journal(dir, "bench");
    journal.sync = static_cast<ll::journal_sync>(state.range(0));
    if (!journal.open(true)) state.SkipWithError("open");
    ll::journal_record rec;
    rec.status = "running";
    rec.snapshot = ll::json{{"current_state", "check"}, {"context", {{"k", std::string(200, 'x')}}}};
    for (auto _ : state) {
      ++rec.iteration;
      if (!journal.save(rec)) state.SkipWithError("save");
    }
  }  // joins the background thread (sync = background) before the directory goes
  std::filesystem::remove_all(dir);
}
// sync: 0 every_save (fsync per save), 1 background (fsyncs on a thread), 2 none
BENCHMARK(BM_journal_save)->Arg(0)->Arg(1)->Arg(2)->ArgNames({"sync"})->UseRealTime()->Unit(benchmark::kMicrosecond);

// Reading a finished run's journal whose state file kept a 16 MiB captured output (what
// `ll-loop run` checks before it starts the loop again, and `stop`): the whole record
// (load_journal) against its head (load_journal_summary). Arg: 0 whole, 1 summary.
void BM_journal_status_after_big_capture(benchmark::State& state) {
  const auto dir = std::filesystem::temp_directory_path() / ("ll_bench_summary_" + std::to_string(getpid()));
  {
    ll::loop_journal journal(dir, "big");
    if (!journal.open(true)) state.SkipWithError("open");
    ll::journal_record rec;
    rec.status = "completed";
    rec.captured = ll::json{{"blob", {{"output", std::string(16 << 20, 'x') + "\n[truncated]\n"}}}};
    if (!journal.save(rec)) state.SkipWithError("save");
  }
  const bool summary = state.range(0) == 1;
  for (auto _ : state) {
    auto r = summary ? ll::load_journal_summary(dir, "big") : ll::load_journal(dir, "big");
    if (!r || !r->has_value() || (*r)->status != "completed") state.SkipWithError("load");
    benchmark::DoNotOptimize(r);
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_journal_status_after_big_capture)->Arg(0)->Arg(1)->ArgNames({"summary"})->Unit(benchmark::kMillisecond);

#if LITTLE_LOOPS_BENCH_YAML
std::string loop_yaml(int states) {
  std::string y = "name: big\ninitial: s0\nmax_iterations: 1000\nstates:\n";
  for (int i = 0; i < states; ++i) {
    y += "  s" + std::to_string(i) + ":\n";
    y += "    action: echo ${context.x} " + std::to_string(i) + "\n";
    y += "    evaluate:\n      type: output_numeric\n      operator: ge\n      target: 3\n";
    y += "    on_success: s" + std::to_string(i + 1) + "\n";
    y += "    on_failure: s0\n";
  }
  y += "  s" + std::to_string(states) + ":\n    terminal: true\ncontext:\n  x: 1\n";
  return y;
}

// Design §4: load + validate of a 200-state loop ≤ 5 ms. The 2,000-state run shows the cost
// per state stays flat (items/s: states loaded per second).
void BM_yaml_load_states(benchmark::State& state) {
  const std::string text = loop_yaml(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto loop = ll::load_loop_yaml(text, "big.yaml");
    if (!loop) state.SkipWithError("load failed");
    benchmark::DoNotOptimize(loop);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(text.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_yaml_load_states)->Arg(200)->Arg(2000)->Unit(benchmark::kMillisecond);

// A loop whose context is one mapping of `keys` keys, about 45 bytes a line (the 50 MB,
// 1.1 M-key file of the reliability campaign, scaled down).
std::string key_map_yaml(int keys) {
  std::string y = "name: keys\ninitial: s\nstates:\n  s:\n    terminal: true\ncontext:\n";
  y.reserve(y.size() + static_cast<std::size_t>(keys) * 46);
  for (int i = 0; i < keys; ++i) {
    const std::string n = std::to_string(1'000'000 + i).substr(1);
    y += "  key_" + n + ": value number " + n + " for the map\n";
  }
  return y;
}

// Key maps load at ≥ 20 MB/s where yaml-cpp allows it (bytes/s: of YAML text), positions
// recorded as for any loop file.
void BM_yaml_load_key_map(benchmark::State& state) {
  const std::string text = key_map_yaml(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    ll::source_map positions;
    auto loop = ll::load_loop_yaml(text, "keys.yaml", nullptr, &positions);
    if (!loop) state.SkipWithError("load failed");
    benchmark::DoNotOptimize(loop);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_yaml_load_key_map)->Arg(100'000)->Unit(benchmark::kMillisecond);

// The ceiling: yaml-cpp's event parser alone on the same text, with a handler that does
// nothing.
struct ignore_events final : YAML::EventHandler {
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};
void BM_yaml_cpp_events_only(benchmark::State& state) {
  const std::string text = key_map_yaml(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    ignore_events handler;
    while (parser.HandleNextDocument(handler)) {
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_yaml_cpp_events_only)->Arg(100'000)->Unit(benchmark::kMillisecond);
#endif

}  // namespace

BENCHMARK_MAIN();
