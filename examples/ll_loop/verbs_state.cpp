// little_loops — ll-loop: status, history, stop (reading and signalling journaled runs)
// SPDX-License-Identifier: MIT
#include "display.hpp"
#include "loading.hpp"
#include "verbs.hpp"

#include <little_loops/journal.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <unistd.h>

namespace ll_loop {

namespace {

namespace ll = little_loops;
namespace fs = std::filesystem;

fs::path journal_dir_of(const parsed_args& args) {
  return fs::path(args.value("journal-dir").value_or(std::string(ll::default_journal_dir)));
}

ll::json status_json(const ll::journal_record& r, const fs::path& dir) {
  ll::json j = r.to_json();
  // The original's status keys too (LoopState.to_dict): loop_name, captured, accumulated_ms.
  j["loop_name"] = r.name;
  if (r.snapshot.is_object()) {
    if (const auto c = r.snapshot.find("captured"); c != r.snapshot.end()) j["captured"] = *c;
    if (const auto e = r.snapshot.find("elapsed_ms"); e != r.snapshot.end() && !r.accumulated_ms)
      j["accumulated_ms"] = *e;  // (a record of an older version)
  }
  if (!j.contains("captured") && r.captured.is_object()) j["captured"] = r.captured;
  j["stale"] = r.stale;
  j["pid_alive"] = ll::journal_process_alive(r.pid, r.updated_at);
  const auto p = ll::journal_paths_for(dir, r.name);
  j["state_file"] = p.state.string();
  j["events_file"] = p.events.string();
  return j;
}

}  // namespace

std::string collision_note(const fs::path& dir, const std::string& name) {
  const auto owner = ll::journal_name_collision(dir, name);
  return owner ? fmt::format(" (its journal files hold loop \"{}\")", terminal_safe(*owner)) : std::string();
}

std::string journal_name_of(const fs::path& dir, const std::string& name) {
  const auto paths = ll::journal_paths_for(dir, name);
  std::error_code ec;
  if (fs::exists(paths.state, ec) || fs::exists(paths.events, ec) || !resolve_loop_path(name)) return name;
  auto loop = load_loop(name, ll::json::object());
  return loop && !loop->loop().name.empty() ? loop->loop().name : name;
}

namespace {

/// The record of `name`, or an error message already printed. `summary`: without its
/// snapshot and captured outputs (load_journal_summary), unless the record is of an older
/// layout whose head lacks the run settings (`extra`): then whole.
std::optional<ll::journal_record> find_record(const fs::path& dir, const std::string& name,
                                              bool summary = false) {
  auto loaded = summary ? ll::load_journal_summary(dir, name) : ll::load_journal(dir, name);
  if (summary && loaded && loaded->has_value() && !(*loaded)->accumulated_ms)
    loaded = ll::load_journal(dir, name);
  if (!loaded) {
    say_error(ll::to_string(loaded.error()));
    return std::nullopt;
  }
  if (!loaded->has_value()) {
    say_error(fmt::format("No state found for: {}{}", name, collision_note(dir, name)));
    return std::nullopt;
  }
  return std::move(**loaded);
}

}  // namespace

namespace {

// The first line of a loop file's `description`, or "" (unreadable files, no description).
/// What `list` shows of a loop file: its description's first line and its metadata
/// (`category`, `visibility`, `labels`), each empty when absent or not a string.
struct list_entry {
  std::string description, category, visibility;
  std::vector<std::string> labels;
};

list_entry list_entry_of(const fs::path& path) {
  list_entry e;
  auto doc = ll::read_document(path);
  if (!doc || !doc->is_object()) return e;
  auto text = [&](const char* key) {
    const auto it = doc->find(key);
    return it != doc->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  e.description = text("description");
  if (e.description.find_first_not_of(" \t\r\n") == std::string::npos) e.description.clear();
  e.description = e.description.substr(0, e.description.find('\n'));
  e.category = text("category");
  e.visibility = text("visibility");
  if (const auto it = doc->find("labels"); it != doc->end() && it->is_array())
    for (const auto& l : *it)
      if (l.is_string()) e.labels.push_back(l.get<std::string>());
  return e;
}

std::string elapsed_text(const ll::journal_record& r) {
  std::int64_t ms = r.accumulated_ms.value_or(0);
  if (const auto it = r.snapshot.find("elapsed_ms");
      !r.accumulated_ms && r.snapshot.is_object() && it != r.snapshot.end() && it->is_number_integer())
    ms = it->get<std::int64_t>();  // (a record of an older version)
  const std::int64_t s = ms / 1000;
  return s < 60 ? fmt::format("{}s", s) : fmt::format("{}m {}s", s / 60, s % 60);
}

/// The journals of `dir`; each state file that cannot be read is a warning (stderr), not
/// silently missing from the list.
/// The journals in `dir` (none when it does not exist yet), or nullopt after an error
/// message when it cannot be read: a file, an empty path, an unreadable directory must not
/// look like "no loops".
std::optional<std::vector<ll::journal_record>> journals_in(const fs::path& dir, bool summaries = false) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  std::string problem;
  if (dir.empty())
    problem = "the path is empty";
  else if (ec && st.type() != fs::file_type::not_found)  // (not there yet: no runs)
    problem = ec.message();
  else if (fs::exists(st) && !fs::is_directory(st))
    problem = "it is not a directory";
  if (problem.empty() && fs::exists(st)) {
    const fs::directory_iterator readable(dir, ec);  // (permissions)
    if (ec) problem = ec.message();
  }
  if (!problem.empty()) {
    say_error(fmt::format("cannot read the journal directory '{}': {}", terminal_safe(dir.string()), problem));
    return std::nullopt;
  }
  std::vector<ll::error> skipped;
  auto records = ll::list_journals(dir, &skipped, summaries);
  for (const auto& e : skipped)
    say_warning(e.message.rfind(e.path, 0) == 0 ? "skipped " + e.message
                                                : fmt::format("skipped {}: {}", e.path, e.message));
  return records;
}

}  // namespace

int verb_list(const parsed_args& args) {
  const bool as_json = args.has("json");
  if (args.has("running")) {
    const fs::path dir = journal_dir_of(args);
    // The lines need each record's head only; --json shows whole records.
    auto found = journals_in(dir, !as_json);
    if (!found) return exit_failed;
    auto& records = *found;
    if (as_json) {
      ll::json out = ll::json::array();
      for (const auto& r : records) out.push_back(status_json(r, dir));
      fmt::print("{}\n", json_text(out, 2));
      return exit_ok;
    }
    for (auto& r : records)  // a record of an older version has its run time in the snapshot
      if (!r.accumulated_ms)
        if (auto whole = ll::load_journal(dir, r.name); whole && whole->has_value()) r = std::move(**whole);
    if (records.empty()) {
      say("No journaled runs");
      return exit_ok;
    }
    // Every journaled run, finished ones too: the heading says so, the columns line up.
    std::vector<std::array<std::string, 5>> rows{{"LOOP", "STATE", "ITERATION", "STATUS", "ELAPSED"}};
    for (const auto& r : records)
      rows.push_back({terminal_safe(r.name), terminal_safe(r.current_state), std::to_string(r.iteration),
                      terminal_safe(r.status), elapsed_text(r)});
    const auto cols = [](const std::string& text) { return ll::decode_utf8(text).size(); };
    std::array<std::size_t, 5> width{};
    for (const auto& row : rows)
      for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], cols(row[c]));
    say("Journaled runs (running and finished):");
    for (const auto& row : rows) {
      std::string line = " ";
      for (std::size_t c = 0; c < row.size(); ++c)
        line += " " + row[c] + (c + 1 < row.size() ? std::string(width[c] - cols(row[c]), ' ') : "");
      say(line);
    }
    return exit_ok;
  }
  // The loop files of .loops/ (what `ll-loop run NAME` finds), by name.
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(".loops", ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string ext = p.extension().string();
    if ((ext == ".yaml" || ext == ".yml" || ext == ".json") && it->is_regular_file(ec))
      files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  if (as_json) {
    ll::json out = ll::json::array();
    for (const auto& p : files) {
      const list_entry e = list_entry_of(p);
      ll::json item{{"name", p.stem().string()}, {"path", p.string()}};
      if (!e.category.empty()) item["category"] = e.category;
      if (!e.visibility.empty()) item["visibility"] = e.visibility;
      if (!e.labels.empty()) item["labels"] = e.labels;
      out.push_back(std::move(item));
    }
    fmt::print("{}\n", json_text(out, 2));
    return exit_ok;
  }
  if (files.empty()) {
    say("No loops available");
    return exit_ok;
  }
  say("Available loops:");
  for (const auto& p : files) {
    const list_entry e = list_entry_of(p);
    std::string meta;
    if (!e.category.empty()) meta += fmt::format(" [{}]", e.category);
    if (!e.visibility.empty() && e.visibility != "public") meta += fmt::format(" ({})", e.visibility);
    if (!e.labels.empty()) meta += fmt::format(" {{{}}}", fmt::join(e.labels, ", "));
    say(fmt::format("  {}{}{}{}", p.stem().string(), meta, e.description.empty() ? "" : "  ",
                    e.description));
  }
  return exit_ok;
}

int verb_status(const parsed_args& args) {
  const fs::path dir = journal_dir_of(args);
  const bool as_json = args.has("json");
  if (args.positionals.empty()) {
    // The table needs each record's head only; --json shows whole records.
    const auto found = journals_in(dir, !as_json);
    if (!found) return exit_failed;
    const auto& records = *found;
    if (as_json) {
      ll::json out = ll::json::array();
      for (const auto& r : records) out.push_back(status_json(r, dir));
      fmt::print("{}\n", json_text(out, 2));
      return exit_ok;
    }
    if (records.empty()) {
      say(fmt::format("No loops in {}", dir.string()));
      return exit_ok;
    }
    const style s = style::for_stream(stdout);
    for (const auto& r : records) {
      // One line per loop, whatever its names hold (a newline, a NUL).
      say(fmt::format("  {:<24} {:<22} {} (iteration {})", s.bold(terminal_safe(r.name)),
                      terminal_safe(r.status), terminal_safe(r.current_state), r.iteration));
    }
    return exit_ok;
  }
  const std::string name = journal_name_of(dir, args.positional(0));
  auto record = find_record(dir, name, !as_json);  // --json shows the whole record
  if (!record) return exit_failed;
  if (as_json) {
    fmt::print("{}\n", json_text(status_json(*record, dir), 2));
    return exit_ok;
  }
  say(fmt::format("Loop: {}", terminal_safe(record->name)));
  say(fmt::format("Status: {}", terminal_safe(record->status)));
  say(fmt::format("Current state: {}", terminal_safe(record->current_state)));
  say(fmt::format("Iteration: {}", record->iteration));
  say(fmt::format("Started: {}", record->started_at));
  say(fmt::format("Updated: {}", record->updated_at));
  if (record->pid > 0) {
    if (record->status == ll::journal_status::running && ll::journal_process_alive(record->pid, record->updated_at))
      say(fmt::format("PID: {} (running)", record->pid));
    else if (record->stale)
      say(fmt::format("PID: {} (not running - stale PID; resume with: ll-loop resume {})",
                      record->pid, record->name));
  }
  if (!record->loop_path.empty()) say(fmt::format("Loop file: {}", record->loop_path));
  const auto p = ll::journal_paths_for(dir, record->name);
  std::error_code ec;
  if (fs::exists(p.events, ec)) {
    ll::skipped_event_lines skipped;
    const std::size_t count = ll::read_journal_events(dir, record->name, 0, &skipped).size();
    if (skipped.unreadable) {
      say_error(fmt::format("cannot read the event log: {}", ll::to_string(*skipped.unreadable)));
      return exit_failed;
    }
    say(fmt::format("Events: {}  ({} events)", p.events.string(), count));
  }
  if (auto it = record->extra.find("error"); it != record->extra.end() && it->is_string())
    say(fmt::format("Error: {}", it->get<std::string>()));
  if (auto it = record->extra.find("continuation"); it != record->extra.end() && it->is_string())
    say(fmt::format("Continuation context: {}", one_line(it->get<std::string>(), 200)));
  return exit_ok;
}

namespace {

/// A value of an event as text: strings as they are (one line), the rest as JSON.
std::string history_value(const ll::json& v) {
  return one_line(v.is_string() ? v.get<std::string>() : json_text(v), 160);
}

/// One event of `history`: `12:00:01  action_complete  check  exit 2 (3ms)` and then its
/// other members as `key=value`; a failed action's stderr tail on the lines below.
std::string history_line(const ll::json& e, const style& s) {
  std::string ts = e.value("ts", std::string{});
  if (ts.size() > 19) ts.resize(19);
  const std::string kind = e.value("event", std::string{"?"});
  std::string line = fmt::format("{} {:<16}", s.dim(ts), s.bold(terminal_safe(kind)));
  std::string below;
  for (auto it = e.begin(); it != e.end(); ++it) {
    const std::string& key = it.key();
    if (key == "event" || key == "ts") continue;
    if (key == "stderr_preview") {
      if (it.value().is_string())
        for (const auto& l : last_lines(it.value().get_ref<const std::string&>(), 5))
          below += fmt::format("\n    stderr: {}", l);
      continue;
    }
    line += fmt::format(" {}={}", key, history_value(it.value()));
  }
  return line + below;
}

}  // namespace

int verb_history(const parsed_args& args) {
  const fs::path dir = journal_dir_of(args);
  const std::string name = journal_name_of(dir, args.positional(0));
  const bool as_json = args.has("json");
  std::size_t tail = 50;
  if (auto v = args.value("tail")) {
    auto n = parse_count(*v);
    if (!n) {
      print_usage_line(args);
      std::fprintf(stderr, "ll-loop history: error: argument --tail: invalid value: '%s'\n",
                   v->c_str());
      return exit_usage;
    }
    tail = static_cast<std::size_t>(*n);  // 0: every event, as the original's events[-0:]
  }
  if (const std::string note = collision_note(dir, name); !note.empty()) {
    say(fmt::format("No history for: {}{}", name, note));  // the events are the other loop's
    return exit_ok;
  }
  {
    // An event log that is there but cannot be read as one (a FIFO, a directory, a device)
    // is an error, not "no history".
    const fs::path log = ll::journal_paths_for(dir, name).events;
    std::error_code ec;
    const fs::file_status st = fs::status(log, ec);
    if (fs::exists(st) && !fs::is_regular_file(st)) {
      say_error(fmt::format("cannot read the event log '{}': it is not a regular file",
                            terminal_safe(log.string())));
      return exit_failed;
    }
  }
  ll::skipped_event_lines skipped;
  auto events = ll::read_journal_events(dir, name, tail, &skipped);
  // Lines that are not events are passed over, and said so (on stderr: stdout stays the
  // history).
  const auto warn_skipped = [&] {
    const std::string log = ll::journal_paths_for(dir, name).events.string();
    if (skipped.count == 1) {
      say_warning(fmt::format("line {} of the event log '{}' is not an event: skipped",
                              skipped.last_line, log));
    } else if (skipped.count > 1) {
      // "lines 3 and 900", "lines 3, 7 and 900", "lines 3, 7, 9, 12, 15, … 900"
      std::string which;
      for (std::size_t k = 0; k < skipped.first_lines.size(); ++k) {
        const bool last_listed = k + 1 == skipped.first_lines.size() && skipped.count == skipped.first_lines.size();
        which += k == 0 ? "" : last_listed ? " and " : ", ";
        which += std::to_string(skipped.first_lines[k]);
      }
      if (skipped.count > skipped.first_lines.size())
        which += fmt::format("{}{}", skipped.count == skipped.first_lines.size() + 1 ? " and " : ", … ",
                             skipped.last_line);
      say_warning(fmt::format("{} lines of the event log '{}' are not events (lines {}): skipped",
                              skipped.count, log, which));
    }
    if (skipped.torn_end)
      say_warning(fmt::format("the event log '{}' ends in an incomplete line (a write cut short, "
                              "or one in progress): skipped",
                              log));
  };
  if (skipped.unreadable) {
    say_error(fmt::format("cannot read the event log: {}", ll::to_string(*skipped.unreadable)));
    return exit_failed;
  }
  if (events.empty()) {
    warn_skipped();
    if (as_json) return exit_ok;  // no lines
    say(fmt::format("No history for: {}", name));
    return exit_ok;
  }
  warn_skipped();
  if (as_json) {
    for (const auto& e : events) fmt::print("{}\n", json_text(e));
    return exit_ok;
  }
  const style s = style::for_stream(stdout);
  for (const auto& e : events) say(history_line(e, s));
  return exit_ok;
}

int verb_stop(const parsed_args& args) {
  const fs::path dir = journal_dir_of(args);
  const std::string name = journal_name_of(dir, args.positional(0));
  auto record = find_record(dir, name, true);
  if (!record) return exit_failed;
  const style s = style::for_stream(stdout);
  // Its process died without journaling the end (kill -9, crash), or the record names no
  // process (the original's state files have no pid): just record that it is interrupted.
  const bool no_owner = record->status == ll::journal_status::running && record->pid <= 0;
  if (record->stale || no_owner) {
    // The record is written again whole: its snapshot too.
    if (record->snapshot.is_null()) {
      record = find_record(dir, name);
      if (!record) return exit_failed;
    }
    const long gone = record->pid;  // (the message names it, whatever the save writes)
    record->status = std::string(ll::journal_status::interrupted);
    ll::loop_journal journal(dir, record->name);
    if (auto saved = journal.save(*record); !saved) {
      say_error(ll::to_string(saved.error()));
      return exit_failed;
    }
    say(no_owner ? fmt::format("{} Marked {} as interrupted", s.green("\u2713"), name)
                 : fmt::format("{} Marked {} as interrupted (its process {} was gone)",
                               s.green("\u2713"), name, gone));
    return exit_ok;
  }
  if (record->status != ll::journal_status::running) {
    say_error(fmt::format("Loop not running: {} (status: {})", name, record->status));
    return exit_failed;
  }
  // A stop-request file (checked between states) and SIGTERM (stops the running action's
  // process group at once). The run journals itself as interrupted.
  auto outcome = ll::request_stop(dir, name);
  if (!outcome) {
    say_error(ll::to_string(outcome.error()));
    return exit_failed;
  }
  say(fmt::format("Stopping {} (pid {})...", name, record->pid));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (ll::journal_process_alive(record->pid, record->updated_at) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (ll::journal_process_alive(record->pid, record->updated_at)) {
    say_error(fmt::format("{} (pid {}) did not stop within 15 s", name, record->pid));
    return exit_failed;
  }
  say(fmt::format("{} Marked {} as interrupted", s.green("\u2713"), name));
  return exit_ok;
}

}  // namespace ll_loop
