// little_loops — ll-loop: status, history, stop (reading and signalling journaled runs)
// SPDX-License-Identifier: MIT
#include "display.hpp"
#include "runs.hpp"
#include "verbs.hpp"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include <unistd.h>

namespace ll_loop {

namespace {

fs::path journal_dir_of(const parsed_args& args) {
  return fs::path(args.value("journal-dir").value_or(default_journal_dir));
}

/// A run whose process died without writing its end (kill -9, crash, reboot) is shown as
/// interrupted: `resume` continues it from its last state boundary.
bool is_stale(const run_record& r) { return r.status == "running" && !process_alive(r.pid); }

ll::json status_json(const run_record& r, const fs::path& dir) {
  ll::json j = r.to_json();
  const bool stale = is_stale(r);
  if (stale) j["status"] = "interrupted";
  j["stale"] = stale;
  j["pid_alive"] = process_alive(r.pid);
  const run_paths p = paths_of(dir, r.name);
  j["state_file"] = p.state.string();
  j["events_file"] = p.events.string();
  return j;
}

}  // namespace

int verb_status(const parsed_args& args) {
  const fs::path dir = journal_dir_of(args);
  const bool as_json = args.has("json");
  if (args.positionals.empty()) {
    auto records = list_records(dir);
    if (as_json) {
      ll::json out = ll::json::array();
      for (const auto& r : records) out.push_back(status_json(r, dir));
      fmt::print("{}\n", out.dump(2));
      return exit_ok;
    }
    if (records.empty()) {
      say(fmt::format("No loops in {}", dir.string()));
      return exit_ok;
    }
    const style s = style::for_stream(stdout);
    for (const auto& r : records) {
      const std::string status = is_stale(r) ? "interrupted" : r.status;
      say(fmt::format("  {:<24} {:<22} {} (iteration {})", s.bold(r.name), status,
                      r.current_state, r.iteration));
    }
    return exit_ok;
  }
  const std::string name = args.positional(0);
  std::string why;
  auto record = load_record(dir, name, &why);
  if (!record) {
    say_error(why.empty() ? fmt::format("No state found for: {}", name) : why);
    return exit_failed;
  }
  if (as_json) {
    fmt::print("{}\n", status_json(*record, dir).dump(2));
    return exit_ok;
  }
  const bool stale = is_stale(*record);
  say(fmt::format("Loop: {}", record->name));
  say(fmt::format("Status: {}", stale ? "interrupted" : record->status));
  say(fmt::format("Current state: {}", record->current_state));
  say(fmt::format("Iteration: {}", record->iteration));
  say(fmt::format("Started: {}", record->started_at));
  say(fmt::format("Updated: {}", record->updated_at));
  if (record->pid > 0) {
    if (process_alive(record->pid))
      say(fmt::format("PID: {} ({})", record->pid, record->status == "running" ? "running" : "alive"));
    else if (record->status == "running")
      say(fmt::format("PID: {} (not running - stale state; resume with: ll-loop resume {})",
                      record->pid, record->name));
  }
  say(fmt::format("Loop file: {}", record->loop_path));
  const run_paths p = paths_of(dir, record->name);
  std::error_code ec;
  if (fs::exists(p.events, ec))
    say(fmt::format("Events: {}  ({} events)", p.events.string(), read_events(p.events, 0).size()));
  if (auto it = record->extra.find("error"); it != record->extra.end() && it->is_string())
    say(fmt::format("Error: {}", it->get<std::string>()));
  if (auto it = record->extra.find("continuation"); it != record->extra.end() && it->is_string())
    say(fmt::format("Continuation context: {}", one_line(it->get<std::string>(), 200)));
  return exit_ok;
}

int verb_history(const parsed_args& args) {
  const fs::path dir = journal_dir_of(args);
  const std::string name = args.positional(0);
  std::size_t tail = 50;
  if (auto v = args.value("tail")) {
    auto n = parse_count(*v);
    if (!n) {
      std::fprintf(stderr, "ll-loop history: error: argument --tail: invalid value: '%s'\n",
                   v->c_str());
      return exit_usage;
    }
    tail = static_cast<std::size_t>(*n);
    if (tail == 0) return exit_ok;
  }
  auto events = read_events(paths_of(dir, name).events, tail);
  if (events.empty()) {
    say(fmt::format("No history for: {}", name));
    return exit_ok;
  }
  const style s = style::for_stream(stdout);
  for (const auto& e : events) {
    std::string ts = e.value("ts", std::string{});
    if (ts.size() > 19) ts.resize(19);
    const std::string kind = e.value("event", std::string{"?"});
    ll::json details = ll::json::object();
    for (auto it = e.begin(); it != e.end(); ++it)
      if (it.key() != "event" && it.key() != "ts") details[it.key()] = it.value();
    say(fmt::format("{} {}: {}", s.dim(ts), s.bold(kind),
                    details.dump(-1, ' ', false, ll::json::error_handler_t::replace)));
  }
  return exit_ok;
}

int verb_stop(const parsed_args& args) {
  const fs::path dir = journal_dir_of(args);
  const std::string name = args.positional(0);
  std::string why;
  auto record = load_record(dir, name, &why);
  if (!record) {
    say_error(why.empty() ? fmt::format("No state found for: {}", name) : why);
    return exit_failed;
  }
  if (record->status != "running") {
    say_error(fmt::format("Loop not running: {} (status: {})", name, record->status));
    return exit_failed;
  }
  const run_paths p = paths_of(dir, record->name);
  const style s = style::for_stream(stdout);
  if (!process_alive(record->pid)) {
    record->status = "interrupted";
    record->updated_at = now_iso();
    if (auto err = save_record(dir, *record)) {
      say_error(*err);
      return exit_failed;
    }
    say(fmt::format("{} Marked {} as interrupted (its process {} was gone)", s.green("\u2713"),
                    name, record->pid));
    return exit_ok;
  }
  // Ask politely: a stop-request file (seen between states) and SIGTERM (stops the running
  // action's process group at once). The run journals itself as interrupted.
  {
    std::ofstream(p.stop) << ::getpid() << "\n";
  }
  ::kill(static_cast<pid_t>(record->pid), SIGTERM);
  say(fmt::format("Stopping {} (pid {})...", name, record->pid));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (process_alive(record->pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (process_alive(record->pid)) {
    say_error(fmt::format("{} (pid {}) did not stop within 15 s", name, record->pid));
    return exit_failed;
  }
  auto after = load_record(dir, name, &why);
  if (after && after->status == "running") {
    after->status = "interrupted";
    after->updated_at = now_iso();
    save_record(dir, *after);
  }
  say(fmt::format("{} Marked {} as interrupted", s.green("\u2713"), name));
  return exit_ok;
}

}  // namespace ll_loop
