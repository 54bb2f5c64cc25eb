// little_loops — tests of the journal (journal.hpp)
// SPDX-License-Identifier: MIT
#include <little_loops/journal.hpp>

#include <little_loops/fsm.hpp>
#include <little_loops/scripted_runner.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>

namespace ll = little_loops;
namespace fs = std::filesystem;

namespace {

struct temp_dir {
  fs::path path;
  explicit temp_dir(const char* tag) {
    path = fs::temp_directory_path() / (std::string("ll_journal_") + tag + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

ll::fsm_loop counting_loop() {
  auto loop = ll::parse_loop_text(R"({
    "name": "counter",
    "initial": "a",
    "states": {
      "a": {"action": "step-a", "capture": "first", "next": "b"},
      "b": {"action": "step-b", "on_success": "done", "on_failure": "a"},
      "done": {"terminal": true}
    }
  })");
  REQUIRE(loop.has_value());
  return *loop;
}

}  // namespace

TEST_CASE("file names are per loop and file-system safe") {
  auto p = ll::journal_paths_for("/tmp/j", "fix tests/../x");
  CHECK(p.state == fs::path("/tmp/j/fix_tests_.._x.state.json"));
  CHECK(p.events == fs::path("/tmp/j/fix_tests_.._x.events.jsonl"));
  CHECK(p.stop == fs::path("/tmp/j/fix_tests_.._x.stop"));
  CHECK(ll::journal_paths_for("d", ".hidden").state == fs::path("d/_.hidden.state.json"));
  CHECK(ll::default_journal_dir == ".loops/.running");
}

TEST_CASE("loop names that share journal files: each loop sees only its own runs") {
  // `a/b`, `a b` and `a_b` all map to the files `a_b.*`.
  temp_dir dir("collide");
  {
    ll::loop_journal journal(dir.path, "a/b");
    REQUIRE(journal.open(true).has_value());
    journal.append_event(ll::json{{"event", "loop_start"}, {"ts", "2026-01-01T00:00:00.000000+00:00"}});
    ll::journal_record r;
    r.status = "completed";
    REQUIRE(journal.save(r).has_value());
  }
  auto own = ll::load_journal(dir.path, "a/b");
  REQUIRE(own.has_value());
  REQUIRE(own->has_value());
  CHECK((*own)->name == "a/b");
  for (const char* other : {"a_b", "a b"}) {
    CAPTURE(other);
    auto read = ll::load_journal(dir.path, other);
    REQUIRE(read.has_value());
    CHECK_FALSE(read->has_value());
    auto summary = ll::load_journal_summary(dir.path, other);
    REQUIRE(summary.has_value());
    CHECK_FALSE(summary->has_value());
    CHECK(ll::journal_name_collision(dir.path, other) == std::optional<std::string>("a/b"));
    CHECK_FALSE(ll::request_stop(dir.path, other).has_value());  // never stops another loop
  }
  CHECK_FALSE(ll::journal_name_collision(dir.path, "a/b").has_value());
  CHECK_FALSE(ll::journal_name_collision(dir.path, "elsewhere").has_value());
  const auto listed = ll::list_journals(dir.path);  // listed under its own name
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].name == "a/b");

  // Another loop does not take the files over: its journal does not open (a fresh open
  // would empty the event log), and the lock is not kept.
  const auto events_before = fs::file_size(ll::journal_paths_for(dir.path, "a/b").events);
  {
    ll::loop_journal intruder(dir.path, "a_b");
    auto opened = intruder.open(true);
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().message.find("hold the runs of loop \"a/b\", not of \"a_b\"") !=
          std::string::npos);
    CHECK(opened.error().path == ll::journal_paths_for(dir.path, "a_b").state.string());
    ll::loop_journal owner(dir.path, "a/b");  // while the intruder still exists
    CHECK(owner.open(false).has_value());
  }
  CHECK(fs::file_size(ll::journal_paths_for(dir.path, "a/b").events) >= events_before);
  CHECK(events_before > 0);
  auto still = ll::load_journal(dir.path, "a/b");
  REQUIRE(still.has_value());
  REQUIRE(still->has_value());
  CHECK((*still)->status == "completed");
}

TEST_CASE("a recorded pid is alive only if that process could have written the record") {
  using ll::detail::journal_epoch_seconds;
  CHECK(journal_epoch_seconds("1970-01-01T00:00:00+00:00") == 0.0);
  CHECK(journal_epoch_seconds("2026-11-24T08:28:15.437460+00:00") == 1795508895.0);
  CHECK(journal_epoch_seconds("2000-02-29T23:59:59+00:00") == 951868799.0);
  CHECK(journal_epoch_seconds("2100-03-01T00:00:00+00:00") == 4107542400.0);
  CHECK_FALSE(journal_epoch_seconds("yesterday").has_value());
  CHECK_FALSE(journal_epoch_seconds("2026-13-01T00:00:00+00:00").has_value());
  // This process wrote a record now: alive. A record from before it started was written by
  // another process that had the pid (reused after a crash or a reboot): not alive, so never
  // signalled. A pid beyond pid_t (a corrupted record: kill(-1) would signal everything) never.
  CHECK(ll::journal_process_alive(::getpid()));
  CHECK(ll::journal_process_alive(::getpid(), ll::journal_now()));
  CHECK_FALSE(ll::journal_process_alive(::getpid(), "2000-01-01T00:00:00+00:00"));
  CHECK(ll::journal_process_alive(::getpid(), "not a timestamp"));  // cannot tell: trusted
  CHECK_FALSE(ll::journal_process_alive(4294967295L));
  CHECK_FALSE(ll::journal_process_alive(-1));
  CHECK_FALSE(ll::journal_process_alive(0));
}

TEST_CASE("atomic writes: the old or the new file, never a partial one") {
  temp_dir dir("atomic");
  const fs::path file = dir.path / "x.state.json";
  REQUIRE(ll::write_file_atomic(file, "{\"v\": 1}\n").has_value());
  CHECK(slurp(file) == "{\"v\": 1}\n");

  // A reader running concurrently with many rewrites only ever sees whole documents.
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  const std::string a_line = std::string(2000, 'a').append("\n");
  const std::string b_line = std::string(3000, 'b').append("\n");
  std::thread reader([&] {
    while (!done.load()) {
      const std::string text = slurp(file);
      if (text != a_line && text != b_line &&
          text != "{\"v\": 1}\n")
        ++torn;
    }
  });
  for (int i = 0; i < 200; ++i)
    REQUIRE(ll::write_file_atomic(file, i % 2 ? std::string(2000, 'a') + "\n" : std::string(3000, 'b') + "\n",
                                  i % 10 == 0)
                .has_value());
  done = true;
  reader.join();
  CHECK(torn.load() == 0);

  // No temp files are left behind.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 1);

  // Writing into a directory that does not exist fails cleanly.
  auto bad = ll::write_file_atomic(dir.path / "missing" / "f.json", "x");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ll::errc::io_error);
}

TEST_CASE("a crash mid-write leaves the previous state readable (temp file ignored)") {
  temp_dir dir("crash");
  ll::loop_journal journal(dir.path, "crashy");
  REQUIRE(journal.open(true).has_value());
  ll::journal_record rec;
  rec.status = "running";
  rec.current_state = "b";
  rec.iteration = 3;
  rec.snapshot = ll::json{{"k", 1}};
  REQUIRE(journal.save(rec).has_value());
  // Simulate a writer killed between creating its temp file and renaming it.
  {
    std::ofstream partial(dir.path / ".crashy.state.json.tmp.99999.0");
    partial << "{\"name\": \"crashy\", \"status\": \"comp";
  }
  auto loaded = ll::load_journal(dir.path, "crashy");
  REQUIRE(loaded.has_value());
  REQUIRE(loaded->has_value());
  CHECK((*loaded)->current_state == "b");
  CHECK((*loaded)->iteration == 3);
  CHECK((*loaded)->snapshot == ll::json{{"k", 1}});
  CHECK(ll::list_journals(dir.path).size() == 1);

  // A real child process killed with SIGKILL while rewriting the state in a loop.
  const pid_t child = ::fork();  // test only: the library never forks
  if (child == 0) {
    ll::loop_journal j(dir.path, "crashy");
    ll::journal_record r = rec;
    r.pid = 0;  // save() records this (child) process
    for (int i = 0;; ++i) {
      r.iteration = i;
      r.extra = ll::json{{"pad", std::string(static_cast<std::size_t>(i % 50) * 100, 'x')}};
      (void)j.save(r);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  auto after = ll::load_journal(dir.path, "crashy");
  REQUIRE(after.has_value());
  REQUIRE(after->has_value());
  CHECK((*after)->name == "crashy");
  // The dead writer's pid is in the record: a reader reports the run as interrupted.
  CHECK((*after)->status == "interrupted");
  CHECK((*after)->stale);
}

TEST_CASE("record text: to_json() on one line; to_text(snapshot) as with snapshot = to_json(snapshot)") {
  ll::journal_record r;
  r.name = "n\"a\xff";
  r.status = "running";
  r.pid = 42;
  r.loop_path = "/p/\n";
  r.started_at = "s";
  r.updated_at = "u";
  r.iteration = -7;
  r.current_state = "st";
  r.extra = {{"context", {{"k", "v\x01"}}}, {"no_llm", true}, {"output_limit", 10}};
  ll::snapshot snap;
  snap.loop_name = "n";
  snap.digest = "0123456789abcdef";
  snap.current_state = "st";
  snap.iteration = 3;
  snap.context = ll::json{{"dir", "src"}};
  snap.captured["c"] = ll::captured_record{"o\"", "e", 1, 2, "failure", "", "", {}};
  snap.started_at = "2026-01-01T00:00:00.000000+00:00";
  r.snapshot = ll::to_json(snap);
  const std::string expected = r.to_json().dump(-1, ' ', false, ll::json::error_handler_t::replace) + "\n";
  CHECK(r.to_text() == expected);
  ll::journal_record other = r;
  other.snapshot = nullptr;
  CHECK(other.to_text(snap) == expected);
  r.snapshot = nullptr;
  CHECK(r.to_text() == r.to_json().dump(-1, ' ', false, ll::json::error_handler_t::replace) + "\n");

  // A snapshot_view of the same members writes the same record.
  const std::vector<std::pair<std::string_view, double>> conv;
  ll::snapshot_view view;
  view.loop_name = snap.loop_name;
  view.digest = snap.digest;
  view.current_state = snap.current_state;
  view.iteration = snap.iteration;
  view.context = &snap.context;
  view.captured = &snap.captured;
  view.convergence = conv;
  view.started_at = snap.started_at;
  CHECK(other.to_text(view) == expected);
}

TEST_CASE("save(record, executor.snapshot_view()) writes what save(record, snapshot()) writes") {
  temp_dir dir("view");
  ll::scripted_runner runner;
  runner.by_index({ll::scripted_response::exit(0, "A1"), ll::scripted_response::exit(1, "x\"y")});
  ll::manual_clock clock;  // elapsed_ms is the same for both
  ll::executor_options options;
  options.clock = &clock;
  auto ex = ll::make_executor(counting_loop(), runner, ll::default_evaluator{}, ll::null_event_sink{}, options);
  REQUIRE(ex.has_value());
  for (int step = 0; step < 3; ++step) {
    clock.advance(std::chrono::milliseconds(40));
    CAPTURE(step);
    if (step > 0) REQUIRE(ex->step());
    const ll::snapshot copy = ex->snapshot();
    std::string texts[2];
    for (int k = 0; k < 2; ++k) {
      ll::loop_journal journal(dir.path, k == 0 ? "copy" : "view");
      journal.sync = ll::journal_sync::none;
      REQUIRE(journal.open(true).has_value());
      ll::journal_record rec;
      rec.pid = 7;
      rec.started_at = "2026-01-01T00:00:00+00:00";  // (before the first step, a save fills in its own time)
      rec.updated_at = "fixed";
      const auto saved = k == 0 ? journal.save(rec, copy) : journal.save(rec, ex->snapshot_view());
      REQUIRE(saved.has_value());
      auto loaded = ll::load_journal(dir.path, k == 0 ? "copy" : "view");
      REQUIRE(loaded.has_value());
      REQUIRE(loaded->has_value());
      ll::journal_record back = **loaded;
      back.name.clear();     // the journal's name differs on purpose
      back.updated_at.clear();  // the save's own time
      back.stale = false;
      texts[k] = back.to_text();
    }
    CHECK(texts[0] == texts[1]);
  }
}

TEST_CASE("records round-trip; malformed state files are errors, not crashes") {
  temp_dir dir("roundtrip");
  ll::loop_journal journal(dir.path, "rt");
  REQUIRE(journal.open(true).has_value());
  ll::journal_record rec;
  rec.status = "interrupted";
  rec.loop_path = "/work/loops/rt.yaml";
  rec.iteration = 7;
  rec.current_state = "fix";
  rec.snapshot = ll::json{{"current_state", "fix"}};
  rec.extra = ll::json{{"context", {{"k", "v"}}}};
  REQUIRE(journal.save(rec).has_value());
  CHECK(rec.pid == ::getpid());
  CHECK_FALSE(rec.updated_at.empty());
  auto back = ll::load_journal(dir.path, "rt");
  REQUIRE(back.has_value());
  REQUIRE(back->has_value());
  CHECK((*back)->to_json() == rec.to_json());

  auto none = ll::load_journal(dir.path, "absent");
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());

  std::ofstream(ll::journal_paths_for(dir.path, "junk").state) << "{not json";
  auto junk = ll::load_journal(dir.path, "junk");
  REQUIRE_FALSE(junk.has_value());
  CHECK(junk.error().code == ll::errc::invalid_snapshot);
  std::ofstream(ll::journal_paths_for(dir.path, "typed").state) << R"({"name": 3, "status": "x"})";
  CHECK_FALSE(ll::load_journal(dir.path, "typed").has_value());
  CHECK(ll::list_journals(dir.path).size() == 1);  // the bad ones are skipped
  std::vector<ll::error> skipped;
  CHECK(ll::list_journals(dir.path, &skipped).size() == 1);
  REQUIRE(skipped.size() == 2);  // and said, in file-name order
  CHECK(skipped[0].path == ll::journal_paths_for(dir.path, "junk").state.string());
  CHECK(skipped[1].path == ll::journal_paths_for(dir.path, "typed").state.string());
  CAPTURE(skipped[1].message);
  CHECK(skipped[1].message.find("\"name\"") != std::string::npos);  // the field it refused
}

TEST_CASE("journal files that are not regular, deeply nested or garbled: a diagnostic, never a hang or crash") {
  temp_dir dir("hostile");
  const auto state = [&](const char* name) { return ll::journal_paths_for(dir.path, name).state; };
  fs::create_directory(state("dir"));
  REQUIRE(::mkfifo(state("fifo").c_str(), 0600) == 0);  // opening it for reading would block
  for (const char* name : {"dir", "fifo"}) {
    CAPTURE(name);
    auto r = ll::load_journal(dir.path, name);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ll::errc::io_error);
    CHECK(r.error().message == "not a regular file");
  }
  std::ofstream(state("deep")) << std::string(200000, '[') << std::string(200000, ']');
  auto deep = ll::load_journal(dir.path, "deep");
  REQUIRE_FALSE(deep.has_value());
  CHECK(deep.error().code == ll::errc::invalid_snapshot);
  std::vector<ll::error> skipped;
  CHECK(ll::list_journals(dir.path, &skipped).empty());
  CHECK(skipped.size() == 3);

  // Event logs: lines that are not events (garbage, an `event` or `ts` that is not a string,
  // deep nesting) are skipped wherever they are, and the tail still finds the events.
  {
    std::ofstream ev(ll::journal_paths_for(dir.path, "ev").events);
    ev << R"({"event": "first", "ts": "2026-01-01T00:00:00+00:00"})" << "\n";
    for (int i = 0; i < 500; ++i) ev << "garbage line " << i << "\n";
    ev << R"({"event": 5})" << "\n" << R"({"event": "x", "ts": 5})" << "\n"
       << R"({"event": null, "ts": null})" << "\n" << std::string(100000, '{') << "\n"
       << R"({"event": "last"})" << "\n";
  }
  ll::skipped_event_lines lines_skipped;
  auto events = ll::read_journal_events(dir.path, "ev", 2, &lines_skipped);
  REQUIRE(events.size() == 2);
  CHECK(events[0]["event"] == "first");
  CHECK(events[1]["event"] == "last");
  // Every line passed over is counted, with where the first and last are.
  CHECK(lines_skipped.count == 504);
  CHECK(lines_skipped.first_lines == std::vector<std::size_t>{2, 3, 4, 5, 6});
  CHECK(lines_skipped.last_line == 505);
  CHECK_FALSE(lines_skipped.torn_end);
  fs::create_directory(ll::journal_paths_for(dir.path, "evdir").events);
  CHECK(ll::read_journal_events(dir.path, "evdir").empty());
}

TEST_CASE("one writer per loop: a second open journal of the same loop is refused until the first closes") {
  temp_dir dir("lock");
  std::optional<ll::loop_journal> first(std::in_place, dir.path, "solo");
  REQUIRE(first->open(true).has_value());
  first->append_event(ll::json{{"event", "mine"}});
  {
    ll::loop_journal second(dir.path, "solo");
    auto refused = second.open(true);  // would truncate the first one's log
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == ll::errc::io_error);
    CHECK(refused.error().message.find("already running") != std::string::npos);
    ll::loop_journal other(dir.path, "another-loop");
    CHECK(other.open(true).has_value());  // other loops are not held up
  }
  first.reset();
  CHECK(ll::read_journal_events(dir.path, "solo").size() == 1);
  ll::loop_journal next(dir.path, "solo");
  CHECK(next.open(false).has_value());
}

TEST_CASE("event log: appended lines, history tail, torn last line skipped") {
  temp_dir dir("events");
  {
    ll::loop_journal journal(dir.path, "ev");
    REQUIRE(journal.open(true).has_value());
    for (int i = 0; i < 100; ++i) journal.append_event(ll::json{{"event", "tick"}, {"n", i}});
  }
  {
    std::ofstream torn(ll::journal_paths_for(dir.path, "ev").events, std::ios::app);
    torn << "{\"event\": \"cut";
  }
  ll::skipped_event_lines skipped;
  auto all = ll::read_journal_events(dir.path, "ev", 0, &skipped);
  REQUIRE(all.size() == 100);
  CHECK(skipped.count == 0);  // the torn end is no line, and is reported on its own
  CHECK(skipped.torn_end);
  CHECK(all.front()["n"] == 0);
  auto tail = ll::read_journal_events(dir.path, "ev", 5);
  REQUIRE(tail.size() == 5);
  CHECK(tail.front()["n"] == 95);
  CHECK(tail.back()["n"] == 99);

  // Reopening for a resume appends; a fresh run truncates.
  {
    ll::loop_journal journal(dir.path, "ev");
    REQUIRE(journal.open(false).has_value());
    journal.append_event(ll::json{{"event", "resumed"}});
  }
  CHECK(ll::read_journal_events(dir.path, "ev", 1).front()["event"] == "resumed");
  {
    ll::loop_journal journal(dir.path, "ev");
    REQUIRE(journal.open(true).has_value());
  }
  CHECK(ll::read_journal_events(dir.path, "ev").empty());
  CHECK(ll::read_journal_events(dir.path, "never-ran").empty());
}

TEST_CASE("journal files never take a standard descriptor a host has closed") {
  temp_dir dir("stdfd");
  const int saved_stdin = ::dup(0);
  REQUIRE(saved_stdin >= 0);
  ::close(0);  // as `prog <&-`: the next open() would get descriptor 0
  {
    ll::loop_journal journal(dir.path, "fd");
    journal.sync = ll::journal_sync::background;  // keeps the checkpoint log open too
    const bool opened = journal.open(true).has_value();
    ll::journal_record record;
    record.status = std::string(ll::journal_status::running);
    const bool saved = journal.save(record).has_value();
    journal.append_event(ll::json{{"event", "tick"}});
    const bool flushed = journal.flush().has_value();  // starts the background thread
    // What a host writes to its closed descriptor must not land in a journal file.
    const bool fd0_free = ::write(0, "host output\n", 12) < 0 && errno == EBADF;
    CHECK(flushed);
    CHECK(journal.flush().has_value());
    ::dup2(saved_stdin, 0);  // restore before any REQUIRE can leave the test
    ::close(saved_stdin);
    CHECK(opened);
    CHECK(saved);
    CHECK(fd0_free);
  }
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CAPTURE(entry.path().string());
    CHECK(text.find("host output") == std::string::npos);
  }
  CHECK(ll::read_journal_events(dir.path, "fd").size() == 1);
}

TEST_CASE("stop requests: stop file, and SIGTERM only for a live running owner") {
  temp_dir dir("stop");
  ll::loop_journal journal(dir.path, "st");
  REQUIRE(journal.open(true).has_value());
  CHECK_FALSE(journal.stop_requested());
  CHECK_FALSE(ll::request_stop(dir.path, "nobody").has_value());

  ll::journal_record rec;
  rec.status = "running";
  REQUIRE(journal.save(rec).has_value());  // pid = this process: never signalled
  auto out = ll::request_stop(dir.path, "st");
  REQUIRE(out.has_value());
  CHECK(out->stop_file_written);
  CHECK_FALSE(out->signalled);
  CHECK(journal.stop_requested());
  journal.clear_stop_request();
  CHECK_FALSE(journal.stop_requested());

  // A live owner gets SIGTERM.
  const pid_t child = ::fork();  // test only
  if (child == 0) {
    ::signal(SIGTERM, SIG_DFL);  // not the test framework's crash handler
    ::pause();
    ::_exit(0);
  }
  rec.pid = child;
  REQUIRE(journal.save(rec).has_value());
  auto sent = ll::request_stop(dir.path, "st");
  REQUIRE(sent.has_value());
  CHECK(sent->signalled);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
}

TEST_CASE("run_journaled: snapshot at every boundary, events, final status, exact resume") {
  temp_dir dir("run");
  ll::loop_journal journal(dir.path, "counter");
  journal.sync = ll::journal_sync::none;
  REQUIRE(journal.open(true).has_value());

  ll::scripted_runner runner;
  runner.by_index({ll::scripted_response::exit(0, "A1"), ll::scripted_response::exit(1),
                   ll::scripted_response::exit(0, "A2"), ll::scripted_response::exit(0)});
  using sink_t = ll::journal_event_sink<>;
  auto ex = ll::fsm_executor<ll::scripted_runner&, ll::default_evaluator, sink_t>::create(
      counting_loop(), runner, ll::default_evaluator{}, sink_t(journal));
  REQUIRE(ex.has_value());

  // Two states run, then a stop (as Ctrl-C would): run_journaled journals the boundary.
  ll::journal_record rec;
  rec.loop_path = "/loops/counter.json";
  ex->step();
  ex->step();
  ex->request_stop();
  const auto& first = ll::run_journaled(*ex, journal, rec);
  CHECK(first.terminated_by == ll::termination::cancelled);
  auto saved = ll::load_journal(dir.path, "counter");
  REQUIRE(saved.has_value());
  REQUIRE(saved->has_value());
  const ll::journal_record& r = **saved;
  CHECK(r.status == "interrupted");
  CHECK(r.loop_path == "/loops/counter.json");
  CHECK(r.iteration == 2);
  CHECK(r.current_state == "a");
  REQUIRE(r.snapshot.is_object());
  auto snap = ll::snapshot_from_json(r.snapshot);
  REQUIRE(snap.has_value());
  CHECK(snap->current_state == "a");
  CHECK(snap->captured.at("first").output == "A1");
  // The run's time, in the record's head too (the original's accumulated_ms).
  CHECK(r.accumulated_ms == first.duration_ms);

  auto events = ll::read_journal_events(dir.path, "counter");
  REQUIRE_FALSE(events.empty());
  CHECK(events.front()["event"] == "loop_start");
  CHECK(events.back()["event"] == "loop_complete");

  // Resume in a fresh executor from the journaled snapshot: nothing runs twice.
  REQUIRE(journal.open(false).has_value());
  auto ex2 = ll::fsm_executor<ll::scripted_runner&, ll::default_evaluator, sink_t>::create(
      counting_loop(), runner, ll::default_evaluator{}, sink_t(journal));
  REQUIRE(ex2.has_value());
  REQUIRE(ex2->resume(*snap).has_value());
  ll::journal_record rec2 = r;
  const auto& second = ll::run_journaled(*ex2, journal, rec2);
  CHECK(second.terminated_by == ll::termination::terminal);
  CHECK(second.final_state == "done");
  CHECK(second.iterations == 4);
  CHECK(runner.calls().size() == 4);
  auto done = ll::load_journal(dir.path, "counter");
  REQUIRE(done.has_value());
  CHECK((*done)->status == "completed");
  CHECK((*done)->snapshot.is_null());
  CHECK((*done)->started_at == r.started_at);
  CHECK((*done)->accumulated_ms == second.duration_ms);  // across the resume
  // The original's LoopState keys: loop_name, and the captured values at the end.
  std::ifstream state_file(ll::journal_paths_for(dir.path, "counter").state);
  const ll::json state = ll::json::parse(state_file);
  CHECK(state["loop_name"] == "counter");
  CHECK(state["captured"]["first"]["output"] == "A2");  // `first` captured again on the resumed run
  CHECK((*done)->captured == state["captured"]);
  CHECK(ll::read_journal_events(dir.path, "counter", 1).front()["event"] == "loop_complete");
}

TEST_CASE("final statuses and what can be resumed are the original's") {
  auto status_of = [](ll::termination t, bool failure = false) {
    ll::execution_result r;
    r.terminated_by = t;
    r.failure = failure;
    return std::string(ll::journal_status_for(r));
  };
  CHECK(status_of(ll::termination::terminal) == "completed");
  CHECK(status_of(ll::termination::terminal, true) == "failed");
  CHECK(status_of(ll::termination::max_iterations) == "interrupted");
  CHECK(status_of(ll::termination::cancelled) == "interrupted");
  CHECK(status_of(ll::termination::handoff) == "awaiting_continuation");
  CHECK(status_of(ll::termination::timeout) == "failed");
  {  // on_handoff: spawn keeps the run resumable; terminate ends it
    ll::execution_result r;
    r.terminated_by = ll::termination::handoff;
    r.on_handoff = ll::handoff_policy::spawn;
    CHECK(ll::journal_status_for(r) == "awaiting_continuation");
    r.on_handoff = ll::handoff_policy::terminate;
    CHECK(ll::journal_status_for(r) == "terminated");
    CHECK_FALSE(ll::journal_resumable("terminated"));
  }
  CHECK(status_of(ll::termination::error) == "failed");
  for (const char* s : {"running", "interrupted", "awaiting_continuation", "max_iterations"})
    CHECK(ll::journal_resumable(s));
  for (const char* s : {"completed", "failed", "timed_out", "error", "anything"})
    CHECK_FALSE(ll::journal_resumable(s));
}

TEST_CASE("the original's state file (LoopState) is read: loop_name, no pid, its fields kept") {
  const ll::json original = ll::json::parse(R"({"loop_name": "loop-a", "current_state": "check",
      "iteration": 3, "captured": {"x": {"output": "hi"}}, "prev_result": null,
      "last_result": null, "started_at": "2026-01-15T10:00:00Z",
      "updated_at": "2026-01-15T10:05:00Z", "status": "running"})");
  auto r = ll::journal_record::from_json(original);
  REQUIRE(r.has_value());
  CHECK(r->name == "loop-a");
  CHECK(r->pid == 0);
  CHECK(r->snapshot.is_null());
  CHECK(r->current_state == "check");
  CHECK(r->iteration == 3);
  CHECK(r->extra["original"]["captured"]["x"]["output"] == "hi");
  CHECK(r->extra["original"].contains("prev_result"));
  // Our own records are not mistaken for it, and a record needs a name either way.
  CHECK_FALSE(ll::journal_record::from_json(ll::json{{"name", "n"}, {"status", "running"}})
                  ->extra.contains("original"));
  CHECK_FALSE(ll::journal_record::from_json(ll::json{{"status", "running"}}).has_value());
}

TEST_CASE("run_journaled stops at the next boundary when a stop file appears") {
  temp_dir dir("stopfile");
  ll::loop_journal journal(dir.path, "counter");
  journal.sync = ll::journal_sync::none;
  REQUIRE(journal.open(true).has_value());
  ll::scripted_runner runner;
  runner.otherwise(ll::scripted_response::exit(1));  // b fails forever: a <-> b
  auto ex = ll::fsm_executor<ll::scripted_runner&, ll::default_evaluator, ll::null_event_sink>::create(
      counting_loop(), runner);
  REQUIRE(ex.has_value());
  ll::journal_record rec;
  rec.status = "running";
  REQUIRE(journal.save(rec).has_value());
  REQUIRE(ll::request_stop(dir.path, "counter").has_value());
  REQUIRE(journal.open(false).has_value());  // open() clears a stale stop request...
  REQUIRE(ll::request_stop(dir.path, "counter").has_value());  // ...so ask again
  const auto& result = ll::run_journaled(*ex, journal, rec);
  CHECK(result.terminated_by == ll::termination::cancelled);
  CHECK(result.iterations == 1);
  CHECK_FALSE(journal.stop_requested());
  CHECK(ll::load_journal(dir.path, "counter").value()->status == "interrupted");
}

TEST_CASE("run_journaled: no step starts after a boundary that could not be journaled") {
  for (const ll::journal_sync sync : {ll::journal_sync::none, ll::journal_sync::every_save, ll::journal_sync::background}) {
    CAPTURE(static_cast<int>(sync));
    temp_dir dir("unjournaled");
    ll::loop_journal journal(dir.path, "counter");
    journal.sync = sync;
    journal.sync_interval = std::chrono::milliseconds(0);
    REQUIRE(journal.open(true).has_value());
    const fs::path state = journal.paths().state;
    const fs::path log0 = journal.paths().checkpoints[0];
    const fs::path log1 = journal.paths().checkpoints[1];
    ll::scripted_runner runner;
    runner.otherwise(ll::scripted_response::exit(1));  // b fails forever: a <-> b
    // The third action takes the journal away: the state file and the checkpoint logs
    // become directories, which no write can replace.
    runner.on_call([&](const ll::action_request&) {
      // (time for the background thread to meet the failure)
      if (runner.calls().size() > 2) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (runner.calls().size() != 2) return;
      for (const auto& p : {state, log0, log1}) {
        std::error_code ec;
        fs::remove(p, ec);
        fs::create_directories(p / "x");
      }
    });
    auto ex = ll::fsm_executor<ll::scripted_runner&, ll::default_evaluator, ll::null_event_sink>::create(
        counting_loop(), runner);
    REQUIRE(ex.has_value());
    ll::journal_record rec;
    std::vector<ll::error> failures;
    ll::journaled_run_hooks hooks;
    hooks.write_failed = [&](const ll::error& e) { failures.push_back(e); };
    const auto& result = ll::run_journaled(*ex, journal, rec, {}, hooks);
    // Background: the checkpoint log (open before) still takes the next boundary; the
    // state file's failure is met by the thread, and seen at the boundary after.
    CHECK(runner.calls().size() >= 3);
    CHECK(runner.calls().size() <= (sync == ll::journal_sync::background ? 5U : 3U));
    CHECK(result.terminated_by == ll::termination::cancelled);
    REQUIRE_FALSE(failures.empty());
    (void)journal.close();
  }
}

TEST_CASE("run_journaled: a first boundary that cannot be journaled runs nothing") {
  temp_dir dir("unjournaled0");
  ll::loop_journal journal(dir.path, "counter");
  journal.sync = ll::journal_sync::every_save;
  REQUIRE(journal.open(true).has_value());
  fs::create_directories(journal.paths().state / "x");
  ll::scripted_runner runner;
  auto ex = ll::fsm_executor<ll::scripted_runner&, ll::default_evaluator, ll::null_event_sink>::create(
      counting_loop(), runner);
  REQUIRE(ex.has_value());
  ll::journal_record rec;
  std::optional<ll::error> failure;
  bool started = false;
  ll::journaled_run_hooks hooks;
  hooks.started = [&] { started = true; };
  hooks.write_failed = [&](const ll::error& e) { failure = e; };
  const auto& result = ll::run_journaled(*ex, journal, rec, {}, hooks);
  CHECK(runner.calls().empty());
  CHECK_FALSE(started);
  CHECK(result.terminated_by == ll::termination::cancelled);
  REQUIRE(failure.has_value());
  CHECK(failure->path == journal.paths().state.string());
}

// ---------------------------------------------------------------------------------------
// journal_sync::background: checkpoint logs on the calling thread, state file on a thread.

namespace {

std::size_t file_size_or_zero(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : static_cast<std::size_t>(n);
}

}  // namespace

TEST_CASE("background sync: the state file catches up, flush waits, final every_save tidies up") {
  temp_dir dir("bg");
  const auto paths = ll::journal_paths_for(dir.path, "bg");
  CHECK(paths.checkpoints[0] == dir.path / "bg.state.0.jsonl");
  CHECK(paths.checkpoints[1] == dir.path / "bg.state.1.jsonl");
  {
    ll::loop_journal journal(dir.path, "bg");
    journal.sync = ll::journal_sync::background;
    REQUIRE(journal.open(true).has_value());
    ll::journal_record rec;
    rec.status = "running";
    for (int i = 1; i <= 50; ++i) {
      rec.iteration = i;
      rec.snapshot = ll::json{{"i", i}};
      REQUIRE(journal.save(rec).has_value());
      // Readers see every save at once (from the log), before the thread has written it.
      auto now = ll::load_journal(dir.path, "bg");
      REQUIRE(now.has_value());
      REQUIRE(now->has_value());
      CHECK((*now)->iteration == i);
    }
    REQUIRE(journal.flush().has_value());
    // After flush() the state file itself holds the last record.
    const auto state = ll::json::parse(slurp(paths.state));
    CHECK(state["iteration"] == 50);
    CHECK(state["snapshot"]["i"] == 50);
    CHECK(fs::exists(paths.checkpoints[0]));

    // The final save with every_save: durable state file, logs removed.
    journal.sync = ll::journal_sync::every_save;
    rec.status = "completed";
    rec.iteration = 51;
    REQUIRE(journal.save(rec).has_value());
    CHECK_FALSE(fs::exists(paths.checkpoints[0]));
    CHECK_FALSE(fs::exists(paths.checkpoints[1]));
    CHECK(ll::json::parse(slurp(paths.state))["status"] == "completed");
  }
  auto done = ll::load_journal(dir.path, "bg");
  REQUIRE(done.has_value());
  CHECK((*done)->status == "completed");
  CHECK((*done)->iteration == 51);
  CHECK(ll::list_journals(dir.path).size() == 1);
}

TEST_CASE("background sync: the state file is written at most once per sync_interval; flush() and the destructor do not wait for it") {
  temp_dir dir("bgint");
  const auto paths = ll::journal_paths_for(dir.path, "iv");
  const auto state_iteration = [&]() -> long long {
    const auto parsed = ll::json::parse(slurp(paths.state), nullptr, false);
    return parsed.is_object() && parsed.contains("iteration") ? parsed["iteration"].get<long long>() : -1;
  };
  const auto started = std::chrono::steady_clock::now();
  {
    ll::loop_journal journal(dir.path, "iv");
    journal.sync = ll::journal_sync::background;
    journal.sync_interval = std::chrono::hours(1);
    REQUIRE(journal.open(true).has_value());
    ll::journal_record rec;
    rec.status = "running";
    rec.iteration = 1;  // a fresh run's first record is held back (see open())
    REQUIRE(journal.save(rec).has_value());
    rec.iteration = 2;  // the first one handed to the thread is written at once
    REQUIRE(journal.save(rec).has_value());
    for (int i = 0; i < 1000 && state_iteration() != 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(state_iteration() == 2);

    for (int i = 3; i <= 20; ++i) {
      rec.iteration = i;
      REQUIRE(journal.save(rec).has_value());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(state_iteration() == 2);                                 // the interval is not over
    CHECK((*ll::load_journal(dir.path, "iv"))->iteration == 20);  // readers see the log

    REQUIRE(journal.flush().has_value());
    CHECK(state_iteration() == 20);
    rec.iteration = 21;
    REQUIRE(journal.save(rec).has_value());
  }
  CHECK(state_iteration() == 21);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::minutes(1));
}

TEST_CASE("background sync: saves within the interval reach the state file when it ends, unflushed; a save after a quiet spell is written at once") {
  using clock = std::chrono::steady_clock;
  using std::chrono::milliseconds;
  temp_dir dir("bgwake");
  const auto paths = ll::journal_paths_for(dir.path, "wk");
  const auto state_iteration = [&]() -> long long {
    const auto parsed = ll::json::parse(slurp(paths.state), nullptr, false);
    return parsed.is_object() && parsed.contains("iteration") ? parsed["iteration"].get<long long>() : -1;
  };
  const auto wait_for = [&](long long iteration) {
    for (int i = 0; i < 2000 && state_iteration() != iteration; ++i) std::this_thread::sleep_for(milliseconds(5));
    return state_iteration() == iteration;
  };
  const auto interval = milliseconds(1000);
  ll::loop_journal journal(dir.path, "wk");
  journal.sync = ll::journal_sync::background;
  journal.sync_interval = interval;
  REQUIRE(journal.open(true).has_value());
  ll::journal_record rec;
  rec.status = "running";
  rec.iteration = 1;  // held back (a fresh run's first record)
  REQUIRE(journal.save(rec).has_value());
  rec.iteration = 2;
  REQUIRE(journal.save(rec).has_value());
  REQUIRE(wait_for(2));
  const auto written = clock::now();

  for (int i = 3; i <= 10; ++i) {  // a burst inside the interval: no write until it ends
    rec.iteration = i;
    REQUIRE(journal.save(rec).has_value());
  }
  if (clock::now() - written < interval / 2) CHECK(state_iteration() == 2);
  REQUIRE(wait_for(10));  // no flush(): the thread takes the newest record at the interval's end
  CHECK(clock::now() - written >= interval - milliseconds(100));

  std::this_thread::sleep_for(interval + milliseconds(200));  // a quiet spell: the thread sleeps
  const auto saved = clock::now();
  rec.iteration = 11;
  REQUIRE(journal.save(rec).has_value());
  REQUIRE(wait_for(11));
  CHECK(clock::now() - saved < interval - milliseconds(200));  // woken by the save, not a timer
}

TEST_CASE("background sync: a killed process loses nothing save() returned from") {
  temp_dir dir("bgkill");
  const pid_t child = ::fork();  // test only: the child saves, then dies by SIGKILL
  if (child == 0) {
    ll::loop_journal journal(dir.path, "victim");
    journal.sync = ll::journal_sync::background;
    journal.checkpoint_log_limit = 300;  // switch logs often while dying
    if (!journal.open(true)) ::_exit(3);
    ll::journal_record rec;
    rec.status = "running";
    for (int i = 1; i <= 200; ++i) {
      rec.iteration = i;
      rec.current_state = fmt::format("s{}", i);
      if (!journal.save(rec)) ::_exit(4);
      // Actions take time: let the thread sync now and then (so the logs get switched).
      if (i % 20 == 0 && !journal.flush()) ::_exit(6);
    }
    ::raise(SIGKILL);  // no flush, no destructor
    ::_exit(5);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  auto loaded = ll::load_journal(dir.path, "victim");
  REQUIRE(loaded.has_value());
  REQUIRE(loaded->has_value());
  const ll::journal_record& r = **loaded;
  CHECK(r.iteration == 200);
  CHECK(r.current_state == "s200");
  CHECK(r.status == "interrupted");  // `running` with a dead pid
  CHECK(r.stale);
  const auto paths = ll::journal_paths_for(dir.path, "victim");
  // The logs were switched and emptied along the way: together they hold far fewer than
  // the 200 records (at most the limit plus the ~20 saves between syncs, each).
  ll::journal_record sample;
  sample.name = "victim";
  sample.status = "running";
  sample.pid = child;
  sample.iteration = 200;
  sample.current_state = "s200";
  sample.started_at = sample.updated_at = r.updated_at;
  const std::size_t one_record = sample.to_text().size();
  CHECK(file_size_or_zero(paths.checkpoints[0]) + file_size_or_zero(paths.checkpoints[1]) <
        60 * one_record);
}

TEST_CASE("background sync: logs stay bounded; torn or garbage log tails are skipped") {
  temp_dir dir("bglog");
  const auto paths = ll::journal_paths_for(dir.path, "lg");
  ll::loop_journal journal(dir.path, "lg");
  journal.sync = ll::journal_sync::background;
  journal.checkpoint_log_limit = 1000;
  REQUIRE(journal.open(true).has_value());
  ll::journal_record rec;
  rec.status = "running";
  std::size_t largest = 0, record_size = 0;
  for (int i = 1; i <= 300; ++i) {
    rec.iteration = i;
    REQUIRE(journal.save(rec).has_value());
    record_size = std::max(record_size, rec.to_text().size());
    if (i % 10 == 0) REQUIRE(journal.flush().has_value());  // let the thread catch up
    largest = std::max({largest, file_size_or_zero(paths.checkpoints[0]),
                        file_size_or_zero(paths.checkpoints[1])});
  }
  // The limit plus what arrives before the thread has synced (at most 10 saves here).
  CHECK(largest <= 1000 + 11 * record_size);
  CHECK(largest >= 1000);
  CHECK((*ll::load_journal(dir.path, "lg"))->iteration == 300);

  // A save cut short by a crash, and bytes a machine crash left behind, are skipped.
  for (const auto& log : paths.checkpoints) {
    std::ofstream out(log, std::ios::app | std::ios::binary);
    out << "{\"name\":\"lg\",\"status\":\"running\",\"iteration\":9999,\"updated_at\":\"9";
  }
  {
    std::ofstream out(paths.checkpoints[0], std::ios::app | std::ios::binary);
    out << "\n" << std::string(64, '\0') << "\n";
  }
  auto loaded = ll::load_journal(dir.path, "lg");
  REQUIRE(loaded.has_value());
  CHECK((*loaded)->iteration == 300);
}

TEST_CASE("readers take the newest whole record of the state file and the logs") {
  temp_dir dir("newest");
  const auto paths = ll::journal_paths_for(dir.path, "nw");
  auto line = [](int iteration, const char* updated) {
    ll::journal_record r;
    r.name = "nw";
    r.status = "interrupted";
    r.iteration = iteration;
    r.updated_at = updated;
    return r.to_text();
  };
  REQUIRE(ll::write_file_atomic(paths.state, line(5, "2026-01-01T00:00:05.000000+00:00")).has_value());
  {
    std::ofstream out(paths.checkpoints[1], std::ios::binary);
    out << line(6, "2026-01-01T00:00:06.000000+00:00") << line(7, "2026-01-01T00:00:07.000000+00:00");
  }
  {
    std::ofstream out(paths.checkpoints[0], std::ios::binary);
    out << line(4, "2026-01-01T00:00:04.000000+00:00");
  }
  CHECK((*ll::load_journal(dir.path, "nw"))->iteration == 7);
  // A state file a machine crash left empty does not hide the logs.
  { std::ofstream out(paths.state, std::ios::binary | std::ios::trunc); }
  CHECK((*ll::load_journal(dir.path, "nw"))->iteration == 7);
  // Only logs (the state file not written yet): still listed.
  fs::remove(paths.state);
  CHECK(ll::list_journals(dir.path).size() == 1);
  // A newer state file wins over the logs.
  REQUIRE(ll::write_file_atomic(paths.state, line(8, "2026-01-01T00:00:08.000000+00:00")).has_value());
  CHECK((*ll::load_journal(dir.path, "nw"))->iteration == 8);
}

TEST_CASE("records are numbered: the newest is the highest number, whatever the clock said") {
  temp_dir dir("seq");
  const auto paths = ll::journal_paths_for(dir.path, "sq");
  auto line = [](std::uint64_t seq, int iteration, const char* updated) {
    ll::journal_record r;
    r.seq = seq;
    r.name = "sq";
    r.status = "interrupted";
    r.iteration = iteration;
    r.updated_at = updated;
    return r.to_text();
  };
  CHECK(line(7, 1, "x").rfind("{\"seq\":7,\"name\":", 0) == 0);  // first: read from the file's head
  CHECK(line(0, 1, "x").rfind("{\"name\":", 0) == 0);          // unnumbered: as before
  // The clock stepped back between saves 5 and 6: number 6 is still the newest.
  REQUIRE(ll::write_file_atomic(paths.state, line(5, 5, "2026-01-01T00:00:09.000000+00:00")).has_value());
  {
    std::ofstream out(paths.checkpoints[0], std::ios::binary);
    out << line(6, 6, "2026-01-01T00:00:01.000000+00:00");
  }
  CHECK((*ll::load_journal(dir.path, "sq"))->iteration == 6);
  {
    std::ofstream out(paths.checkpoints[1], std::ios::binary);
    out << line(4, 4, "2026-01-01T00:00:10.000000+00:00");
  }
  CHECK((*ll::load_journal(dir.path, "sq"))->iteration == 6);
  // An unnumbered record (older versions, the original) is compared by time.
  {
    std::ofstream out(paths.checkpoints[1], std::ios::binary);
    out << line(0, 9, "2026-01-01T00:00:02.000000+00:00");
  }
  CHECK((*ll::load_journal(dir.path, "sq"))->iteration == 9);
  fs::remove(paths.checkpoints[1]);

  // A resumed journal numbers on from the newest record on disk (the logs' included)...
  {
    ll::loop_journal j(dir.path, "sq");
    j.sync = ll::journal_sync::background;
    REQUIRE(j.open(false).has_value());
    ll::journal_record r;
    r.status = "running";
    r.iteration = 7;
    REQUIRE(j.save(r).has_value());
    CHECK(r.seq == 7);
  }
  CHECK((*ll::load_journal(dir.path, "sq"))->iteration == 7);
  // ... and a fresh run from the state file of the run before (its first record, still
  // only in a log, must outrank that file).
  REQUIRE(ll::write_file_atomic(paths.state, line(40, 40, "2026-01-01T00:00:09.000000+00:00")).has_value());
  {
    ll::loop_journal j(dir.path, "sq");
    j.sync = ll::journal_sync::background;
    REQUIRE(j.open(true).has_value());
    ll::journal_record r;
    r.status = "running";
    r.iteration = 1;
    REQUIRE(j.save(r).has_value());
    CHECK(r.seq == 41);
    CHECK((*ll::load_journal(dir.path, "sq"))->iteration == 1);
    r.iteration = 2;
    REQUIRE(j.save(r).has_value());
    CHECK(r.seq == 42);
  }
  const auto last = *ll::load_journal(dir.path, "sq");
  CHECK(last->iteration == 2);
  CHECK(last->seq == 42);
  // A state file whose head is not a number is read as unnumbered.
  for (const char* head : {"{\"seq\":-3,\"name\":\"sq\"}", "{\"seq\":99999999999999999999999,\"name\":\"sq\"}",
                           "{\"seq\":12", "garbage"}) {
    { std::ofstream(paths.state, std::ios::binary | std::ios::trunc) << head; }
    ll::loop_journal j(dir.path, "sq");
    REQUIRE(j.open(true).has_value());
    ll::journal_record r;
    r.status = "running";
    REQUIRE(j.save(r).has_value());
    CHECK(r.seq == 1);
  }
}

TEST_CASE("load_journal_summary: the record's head (run settings included), without its snapshot or captured outputs") {
  temp_dir dir("summary");
  const auto paths = ll::journal_paths_for(dir.path, "sm");
  ll::journal_record full;
  full.seq = 9;
  full.name = "sm";
  full.status = "completed";
  full.pid = 42;
  full.loop_path = std::string(100000, 'p');  // a head longer than one read
  full.started_at = "2026-01-01T00:00:00.000000+00:00";
  full.updated_at = "2026-01-01T00:00:01.000000+00:00";
  full.iteration = 3;
  full.current_state = "done";
  full.snapshot = ll::json{{"big", std::string(3 << 20, 'x')}};
  full.captured = ll::json{{"c", {{"output", std::string(1 << 20, 'y')}}}};
  full.extra = ll::json{{"k", "v"}, {"nested", {{"a", {1, {{"b", nullptr}}, "snapshot"}}}}, {"snapshot", 2}};
  full.accumulated_ms = 1234;
  REQUIRE(ll::write_file_atomic(paths.state, full.to_text()).has_value());
  auto summary = ll::load_journal_summary(dir.path, "sm");
  REQUIRE(summary.has_value());
  REQUIRE(summary->has_value());
  const auto& r = **summary;
  CHECK(r.seq == 9);
  CHECK(r.name == "sm");
  CHECK(r.status == "completed");
  CHECK(r.pid == 42);
  CHECK(r.loop_path == full.loop_path);
  CHECK(r.started_at == full.started_at);
  CHECK(r.updated_at == full.updated_at);
  CHECK(r.iteration == 3);
  CHECK(r.current_state == "done");
  CHECK(r.snapshot.is_null());
  CHECK(r.captured.is_null());
  CHECK(r.extra == full.extra);  // nested values, and keys named "snapshot" inside it
  CHECK(r.accumulated_ms == 1234);
  CHECK((*ll::load_journal(dir.path, "sm"))->captured == full.captured);  // the whole record
  CHECK((*ll::load_journal(dir.path, "sm"))->accumulated_ms == 1234);
  const auto listed = ll::list_journals(dir.path, nullptr, true);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].status == "completed");
  CHECK(listed[0].captured.is_null());
  CHECK(ll::list_journals(dir.path)[0].captured == full.captured);

  // A running record of a gone process is interrupted and stale, as with load_journal.
  full.status = "running";
  full.pid = 0x7ffffff0;
  REQUIRE(ll::write_file_atomic(paths.state, full.to_text()).has_value());
  CHECK((*ll::load_journal_summary(dir.path, "sm"))->status == "interrupted");
  CHECK((*ll::load_journal_summary(dir.path, "sm"))->stale);
  // The newest record of a checkpoint log counts, also by its head.
  full.seq = 10;
  full.iteration = 4;
  { std::ofstream(paths.checkpoints[0], std::ios::binary) << full.to_text(); }
  CHECK((*ll::load_journal_summary(dir.path, "sm"))->iteration == 4);
  fs::remove(paths.checkpoints[0]);
  // The original's state file (no snapshot member; captured before status) is read whole.
  { std::ofstream(paths.state, std::ios::binary | std::ios::trunc) << R"({"loop_name": "sm", "current_state": "fix", "iteration": 2, "captured": {"a": "b"}, "status": "awaiting_continuation"})"; }
  auto original = ll::load_journal_summary(dir.path, "sm");
  REQUIRE(original.has_value());
  REQUIRE(original->has_value());
  CHECK((*original)->status == "awaiting_continuation");
  CHECK((*original)->current_state == "fix");
  // Garbage: the same error as load_journal's.
  { std::ofstream(paths.state, std::ios::binary | std::ios::trunc) << "{\"name\": \"sm\", \"status\""; }
  CHECK_FALSE(ll::load_journal_summary(dir.path, "sm").has_value());
  CHECK_FALSE(ll::load_journal(dir.path, "sm").has_value());
  // A record of an older layout (extra after the snapshot): no extra and no accumulated_ms
  // in its summary, both when read whole.
  { std::ofstream(paths.state, std::ios::binary | std::ios::trunc) << R"({"name": "sm", "status": "completed", "snapshot": {"elapsed_ms": 5}, "extra": {"k": "v"}})"; }
  CHECK((*ll::load_journal_summary(dir.path, "sm"))->extra == ll::json::object());
  CHECK_FALSE((*ll::load_journal_summary(dir.path, "sm"))->accumulated_ms);
  CHECK((*ll::load_journal(dir.path, "sm"))->extra == ll::json{{"k", "v"}});
  // A head whose fields have the wrong types is read whole, and refused as load_journal does.
  { std::ofstream(paths.state, std::ios::binary | std::ios::trunc) << R"({"name": "sm", "status": 5, "snapshot": null})"; }
  CHECK_FALSE(ll::load_journal_summary(dir.path, "sm").has_value());
  { std::ofstream(paths.state, std::ios::binary | std::ios::trunc) << R"({"name": "sm", "status": "completed", "accumulated_ms": "5", "snapshot": null})"; }
  CHECK_FALSE(ll::load_journal_summary(dir.path, "sm").has_value());
  CHECK(ll::load_journal(dir.path, "sm").error().path == "accumulated_ms");
  CHECK(ll::load_journal_summary(dir.path, "nothing-here")->has_value() == false);
}

TEST_CASE("event lines are buffered until an action starts, a save or the end") {
  temp_dir dir("evbuf");
  ll::loop_journal journal(dir.path, "eb");
  REQUIRE(journal.open(true).has_value());
  ll::journal_event_sink<> sink(journal);
  const auto ts = std::chrono::system_clock::now();
  sink.on_event(ll::state_enter_event{ts, "a", 1});
  CHECK(ll::read_journal_events(dir.path, "eb").empty());
  sink.on_event(ll::action_start_event{ts, "a", "true", false});
  auto events = ll::read_journal_events(dir.path, "eb");
  REQUIRE(events.size() == 2);  // written before the action runs
  CHECK(events[1]["event"] == "action_start");
  sink.on_event(ll::route_event{ts, "a", "b", ""});
  CHECK(ll::read_journal_events(dir.path, "eb").size() == 2);
  ll::journal_record rec;
  rec.status = "running";
  REQUIRE(journal.save(rec).has_value());  // a save writes them first
  CHECK(ll::read_journal_events(dir.path, "eb").size() == 3);
}

TEST_CASE("background sync: a save's events go out with the next action start, before the thread gets the record") {
  temp_dir dir("evbg");
  const auto paths = ll::journal_paths_for(dir.path, "eg");
  ll::loop_journal journal(dir.path, "eg");
  journal.sync = ll::journal_sync::background;
  journal.sync_interval = std::chrono::milliseconds(0);
  REQUIRE(journal.open(true).has_value());
  ll::journal_event_sink<> sink(journal);
  const auto ts = std::chrono::system_clock::now();
  ll::journal_record rec;
  rec.status = "running";
  rec.iteration = 0;
  REQUIRE(journal.save(rec).has_value());  // a fresh run's first record: held back
  for (int i = 1; i <= 3; ++i) {
    sink.on_event(ll::state_enter_event{ts, "a", i});
    sink.on_event(ll::action_start_event{ts, "a", "true", false});
    CHECK(ll::read_journal_events(dir.path, "eg").size() == static_cast<std::size_t>(4 * i - 2));
    sink.on_event(ll::evaluate_event{ts, "a", "exit_code", "success", nullptr});
    sink.on_event(ll::route_event{ts, "a", "a", ""});
    rec.iteration = i;
    REQUIRE(journal.save(rec).has_value());
    // The record is in the checkpoint log at once (readers see it) ...
    CHECK((*ll::load_journal(dir.path, "eg"))->iteration == i);
    // ... its events are not written yet, and the thread has not been given the record.
    CHECK(ll::read_journal_events(dir.path, "eg").size() == static_cast<std::size_t>(4 * i - 2));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (fs::exists(paths.state)) CHECK(ll::json::parse(slurp(paths.state))["iteration"] != i);
  }
  journal.flush_events();  // as the next action_start does: events, then the hand-over
  CHECK(ll::read_journal_events(dir.path, "eg").size() == 12);
  REQUIRE(journal.flush().has_value());
  CHECK(ll::json::parse(slurp(paths.state))["iteration"] == 3);

  // A host that saves again before any flush_events(): that save writes the events itself
  // and hands its record over (a record never waits for more than one save).
  sink.on_event(ll::route_event{ts, "a", "b", ""});
  rec.iteration = 4;
  REQUIRE(journal.save(rec).has_value());
  CHECK(ll::read_journal_events(dir.path, "eg").size() == 12);
  sink.on_event(ll::route_event{ts, "b", "c", ""});
  rec.iteration = 5;
  REQUIRE(journal.save(rec).has_value());
  CHECK(ll::read_journal_events(dir.path, "eg").size() == 14);
  long long state_iteration = -1;
  for (int i = 0; i < 1000 && state_iteration != 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto parsed = ll::json::parse(slurp(paths.state), nullptr, false);
    if (parsed.is_object() && parsed.contains("iteration")) state_iteration = parsed["iteration"].get<long long>();
  }
  CHECK(state_iteration == 5);
}

TEST_CASE("run_journaled: a handoff with on_handoff: terminate is journaled as terminated, without a snapshot") {
  temp_dir dir("terminate");
  for (const char* policy : {"pause", "terminate"}) {
    auto loop = ll::parse_loop_text(fmt::format(R"({{"name": "h", "initial": "a", "on_handoff": "{}",
      "states": {{"a": {{"action": "x", "next": "done"}}, "done": {{"terminal": true}}}}}})", policy));
    REQUIRE(loop.has_value());
    ll::scripted_runner runner;
    runner.by_index({ll::scripted_response::exit(0, "CONTEXT_HANDOFF: go on")});
    ll::loop_journal journal(dir.path, "h");
    REQUIRE(journal.open(true).has_value());
    using sink_t = ll::journal_event_sink<>;
    auto ex = ll::fsm_executor<ll::scripted_runner&, ll::default_evaluator, sink_t>::create(
        *loop, runner, ll::default_evaluator{}, sink_t(journal));
    REQUIRE(ex.has_value());
    ll::journal_record record;
    const auto& result = ll::run_journaled(*ex, journal, record);
    CHECK(result.terminated_by == ll::termination::handoff);
    CHECK(result.snapshot.has_value());  // the executor's; the journal decides what it keeps
    auto saved = ll::load_journal(dir.path, "h");
    REQUIRE(saved.has_value());
    REQUIRE(saved->has_value());
    if (std::string(policy) == "terminate") {
      CHECK((*saved)->status == "terminated");
      CHECK((*saved)->snapshot.is_null());
    } else {
      CHECK((*saved)->status == "awaiting_continuation");
      CHECK((*saved)->snapshot.is_object());
    }
  }
  {  // A timeout is not resumable either, but keeps its snapshot (where it stopped).
    auto loop = ll::parse_loop_text(R"({"name": "h", "initial": "a", "timeout": 0.01,
      "states": {"a": {"action": "x", "next": "b"}, "b": {"action": "y", "next": "done"}, "done": {"terminal": true}}})");
    REQUIRE(loop.has_value());
    struct slow_runner {  // each action takes 20 ms: the loop's 10 ms are up after the first
      ll::expected<ll::action_result, ll::error> run(const ll::action_request&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return ll::action_result{};
      }
    } runner;
    ll::loop_journal journal(dir.path, "h");
    REQUIRE(journal.open(true).has_value());
    using sink_t = ll::journal_event_sink<>;
    auto ex = ll::fsm_executor<slow_runner&, ll::default_evaluator, sink_t>::create(
        *loop, runner, ll::default_evaluator{}, sink_t(journal));
    REQUIRE(ex.has_value());
    ll::journal_record record;
    const auto& result = ll::run_journaled(*ex, journal, record);
    CHECK(result.terminated_by == ll::termination::timeout);
    REQUIRE(result.snapshot.has_value());
    auto saved = ll::load_journal(dir.path, "h");
    REQUIRE(saved.has_value());
    REQUIRE(saved->has_value());
    CHECK((*saved)->status == "failed");
    CHECK((*saved)->snapshot.is_object());
  }
}

TEST_CASE("scope: ${context.KEY} is filled in from the context; unknown keys stay as written") {
  const ll::json ctx = {{"dir", "/work/x"}, {"n", 3}, {"f", 1.5}, {"a.b", "dotted"}, {"flag", true}};
  CHECK(ll::resolve_scope({"${context.dir}/src", "plain", "${context.n}-${context.f}",
                           "${context.a.b}", "${context.missing}/y", "${context.}", "${context.dir",
                           "${context.flag}"},
                          ctx) ==
        std::vector<std::string>{"/work/x/src", "plain", "3-1.5", "dotted", "${context.missing}/y",
                                 "${context.}", "${context.dir", "true"});
  // An empty key stays as written and the rest of the entry is still filled in.
  CHECK(ll::resolve_scope({"${context.}/${context.dir}"}, ctx) == std::vector<std::string>{"${context.}//work/x"});
  CHECK(ll::resolve_scope({"${context.dir}"}, ll::json()) == std::vector<std::string>{"${context.dir}"});
}

TEST_CASE("scope: paths are made absolute and normal; overlap is by whole components") {
  temp_dir dir("scope_paths");
  const std::string cwd = fs::current_path().string();
  CHECK(ll::normalize_scope_path(".") == cwd);
  CHECK(ll::normalize_scope_path("") == cwd);
  CHECK(ll::normalize_scope_path("/a/b/../c/./d/") == "/a/c/d");
  CHECK(ll::normalize_scope_path("/") == "/");
  fs::create_directories(dir.path / "real");
  fs::create_symlink(dir.path / "real", dir.path / "link");
  const std::string real = fs::canonical(dir.path / "real").string();
  CHECK(ll::normalize_scope_path((dir.path / "link").string()) == real);
  CHECK(ll::normalize_scope_path((dir.path / "link/not/yet").string()) == real + "/not/yet");

  CHECK(ll::scope_paths_overlap("/a/b", "/a/b"));
  CHECK(ll::scope_paths_overlap("/a/b", "/a/b/c"));
  CHECK(ll::scope_paths_overlap("/a/b/c", "/a/b"));
  CHECK(ll::scope_paths_overlap("/", "/anything"));
  CHECK_FALSE(ll::scope_paths_overlap("/a/b", "/a/bc"));
  CHECK_FALSE(ll::scope_paths_overlap("/a/bc", "/a/b"));
  CHECK_FALSE(ll::scope_paths_overlap("/a/b", "/a/c"));
  CHECK(ll::scopes_overlap({"/x", "/a"}, {"/b", "/a/z"}));
  CHECK_FALSE(ll::scopes_overlap({"/x", "/a"}, {"/b", "/ab"}));
}

TEST_CASE("scope claims: a singleton loop conflicts with its own running instance whatever the scope") {
  temp_dir dir("scope_singleton");
  const std::string base = fs::canonical(dir.path).string();
  {
    std::ofstream(dir.path / "elsewhere.lock")
        << ll::json{{"loop_name", "solo"}, {"scope", {base + "/a"}}, {"pid", static_cast<long>(::getpid())},
                    {"started_at", ll::journal_now()}, {"singleton", true}}
               .dump();
  }
  const std::vector<std::string> disjoint{base + "/b"};
  const auto conflict = ll::find_scope_conflict(dir.path, disjoint, {}, "solo", true);
  REQUIRE(conflict.has_value());
  CHECK(conflict->singleton);
  CHECK_FALSE(ll::find_scope_conflict(dir.path, disjoint, {}, "solo", false).has_value());
  CHECK_FALSE(ll::find_scope_conflict(dir.path, disjoint, {}, "other", true).has_value());
  // the claim records `singleton` only when true
  ll::loop_journal mine(dir.path, "mine");
  REQUIRE(mine.claim_scope({base + "/c"}, true).has_value());
  CHECK(ll::json::parse(slurp(dir.path / "mine.lock"))["singleton"] == true);
  mine.release_scope();
  REQUIRE(mine.claim_scope({base + "/c"}).has_value());
  CHECK_FALSE(ll::json::parse(slurp(dir.path / "mine.lock")).contains("singleton"));
}

TEST_CASE("scope claims: overlapping scopes are refused while the claim's run lives; released on close") {
  temp_dir dir("scope_claims");
  const std::string base = fs::canonical(dir.path).string();
  std::optional<ll::loop_journal> first(std::in_place, dir.path, "first");
  auto claimed = first->claim_scope({base + "/src"});
  REQUIRE(claimed.has_value());
  CHECK_FALSE(claimed->has_value());
  // The claim is the original's lock file: {"loop_name","scope","pid","started_at"}.
  const ll::json written = ll::json::parse(slurp(dir.path / "first.lock"));
  CHECK(written["loop_name"] == "first");
  CHECK(written["scope"] == ll::json::array({base + "/src"}));
  CHECK(written["pid"] == static_cast<long>(::getpid()));
  CHECK(written["started_at"].is_string());
  REQUIRE(first->open(true).has_value());  // the lock claim_scope took is open()'s

  {
    ll::loop_journal inner(dir.path, "inner");
    auto refused = inner.claim_scope({base + "/src/lib"});  // inside first's
    REQUIRE(refused.has_value());
    REQUIRE(refused->has_value());
    CHECK((*refused)->loop_name == "first");
    CHECK((*refused)->scope == std::vector<std::string>{base + "/src"});
    CHECK((*refused)->file == dir.path / "first.lock");
    CHECK(slurp(dir.path / "inner.lock").empty());  // nothing written
    ll::loop_journal outer(dir.path, "outer");
    auto whole = outer.claim_scope({});  // empty: the working directory
    REQUIRE(whole.has_value());
    if (ll::scope_paths_overlap(fs::current_path().string(), base + "/src"))
      CHECK(whole->has_value());
    else
      CHECK_FALSE(whole->has_value());
    ll::loop_journal beside(dir.path, "beside");
    auto disjoint = beside.claim_scope({base + "/docs", base + "/srcs"});
    REQUIRE(disjoint.has_value());
    CHECK_FALSE(disjoint->has_value());
    CHECK(ll::list_scope_claims(dir.path).size() == (whole->has_value() ? 2U : 3U));
    // The same loop again: its journal is locked.
    ll::loop_journal again(dir.path, "first");
    auto locked = again.claim_scope({base + "/other"});
    REQUIRE_FALSE(locked.has_value());
    CHECK(locked.error().message.find("already running") != std::string::npos);
  }
  first.reset();  // closing releases the claim
  CHECK(slurp(dir.path / "first.lock").empty());
  ll::loop_journal inner(dir.path, "inner");
  auto now_free = inner.claim_scope({base + "/src/lib"});
  REQUIRE(now_free.has_value());
  CHECK_FALSE(now_free->has_value());
  inner.release_scope();
  CHECK(slurp(dir.path / "inner.lock").empty());
  CHECK(ll::list_scope_claims(dir.path).empty());
  // A path the file system cannot name is an error, not a claim on a shorter path.
  auto nul = inner.claim_scope({base + std::string("/a\0b", 4)});
  REQUIRE_FALSE(nul.has_value());
  CHECK(nul.error().code == ll::errc::invalid_loop);
  CHECK(nul.error().message.find("NUL") != std::string::npos);
  // Bytes that are not UTF-8 would not read back as written: refused too.
  auto bad = inner.claim_scope({base + "/\xff"});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("UTF-8") != std::string::npos);
  // So is a claim too large for the readers (they skip files over 1 MiB).
  auto huge = inner.claim_scope(std::vector<std::string>(2000, base + "/" + std::string(600, 'd')));
  REQUIRE_FALSE(huge.has_value());
  CHECK(huge.error().message.find("too large") != std::string::npos);
  CHECK(slurp(dir.path / "inner.lock").empty());
}

TEST_CASE("the logs it appends to: never written through a symlink or another name, never a FIFO") {
  temp_dir dir("appendlogs");
  const auto paths = ll::journal_paths_for(dir.path, "ev");
  std::ofstream(dir.path / "precious.txt") << "precious data";
  for (const bool fresh : {true, false}) {
    CAPTURE(fresh);
    // The event log as a link (a repository can ship one): refused, the target untouched.
    fs::create_symlink(dir.path / "precious.txt", paths.events);
    {
      ll::loop_journal j(dir.path, "ev");
      auto opened = j.open(fresh);
      REQUIRE_FALSE(opened.has_value());
      CHECK(opened.error().message == "cannot open the event log: it is a symbolic link");
      CHECK(opened.error().path == paths.events.string());
    }
    CHECK(slurp(dir.path / "precious.txt") == "precious data");
    fs::remove(paths.events);
    // Another name of a file: refused before it is emptied.
    fs::create_hard_link(dir.path / "precious.txt", paths.events);
    {
      ll::loop_journal j(dir.path, "ev");
      auto opened = j.open(fresh);
      REQUIRE_FALSE(opened.has_value());
      CHECK(opened.error().message == "cannot open the event log: it is not a regular file with one name");
    }
    CHECK(slurp(dir.path / "precious.txt") == "precious data");
    fs::remove(paths.events);
    // A FIFO: an error at once, not a wait for a reader.
    REQUIRE(::mkfifo(paths.events.c_str(), 0600) == 0);
    {
      ll::loop_journal j(dir.path, "ev");
      CHECK_FALSE(j.open(fresh).has_value());
    }
    fs::remove(paths.events);
  }
  // A refused open keeps no lock: the journal opens once the log is a plain file again.
  ll::loop_journal j(dir.path, "ev");
  REQUIRE(j.open(true).has_value());
  // A checkpoint log as a link: the background save that would append to it fails, and the
  // target is untouched.
  fs::create_symlink(dir.path / "precious.txt", paths.checkpoints[0]);
  j.sync = ll::journal_sync::background;
  ll::journal_record r;
  r.status = "running";
  auto saved = j.save(r);
  REQUIRE_FALSE(saved.has_value());
  CHECK(saved.error().message == "cannot open the checkpoint log: it is a symbolic link");
  CHECK(slurp(dir.path / "precious.txt") == "precious data");
}

TEST_CASE("the lock file: never followed through a symlink or written through another name; a dead run's claim is emptied") {
  temp_dir dir("lockfile");
  const auto paths = ll::journal_paths_for(dir.path, "lk");
  {
    std::ofstream(dir.path / "precious.txt") << "precious data";
    fs::create_symlink(dir.path / "precious.txt", paths.lock);
    ll::loop_journal j(dir.path, "lk");
    auto opened = j.open(true);
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().message.find("symbolic link") != std::string::npos);
    REQUIRE_FALSE(j.claim_scope({"/x"}).has_value());
    CHECK(slurp(dir.path / "precious.txt") == "precious data");
    fs::remove(paths.lock);
  }
  {
    std::ofstream(dir.path / "other.txt") << "other data";
    fs::create_hard_link(dir.path / "other.txt", paths.lock);
    ll::loop_journal j(dir.path, "lk");
    auto opened = j.open(true);
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().message.find("one name") != std::string::npos);
    CHECK(slurp(dir.path / "other.txt") == "other data");
    fs::remove(paths.lock);
  }
  // A claim left by a run that died: whoever gets the lock empties it.
  std::ofstream(paths.lock) << R"({"loop_name": "lk", "scope": ["/"], "pid": 1, "started_at": "2001-01-01T00:00:00+00:00"})";
  ll::loop_journal j(dir.path, "lk");
  REQUIRE(j.open(true).has_value());
  CHECK(slurp(paths.lock).empty());
  // A lock file removed under a run (the original's stale-lock cleanup) is noticed before a
  // claim is written into a file no other run can see.
  fs::remove(paths.lock);
  auto claimed = j.claim_scope({"/x"});
  REQUIRE_FALSE(claimed.has_value());
  CHECK(claimed.error().message.find("removed") != std::string::npos);
  // close() releases the lock: another journal of the loop opens.
  REQUIRE(j.close().has_value());
  ll::loop_journal next(dir.path, "lk");
  CHECK(next.open(false).has_value());
  // Nor is the claims' lock (.acquire.lock) followed: a dangling link creates nothing.
  fs::remove(dir.path / ".acquire.lock");
  fs::create_symlink(dir.path / "nowhere", dir.path / ".acquire.lock");
  ll::loop_journal k(dir.path, "k2");
  REQUIRE_FALSE(k.claim_scope({"/y"}).has_value());
  CHECK_FALSE(fs::exists(dir.path / "nowhere"));
  REQUIRE(ll::append_journal_event(dir.path, "other", ll::json{{"event", "x"}, {"ts", "t"}}).has_value());
  CHECK(slurp(ll::journal_paths_for(dir.path, "other").events) == "{\"event\":\"x\",\"ts\":\"t\"}\n");
}

TEST_CASE("scope claims: stale and malformed lock files are ignored, never removed") {
  temp_dir dir("scope_stale");
  const std::string base = fs::canonical(dir.path).string();
  auto write = [&](const char* file, const std::string& text) { std::ofstream(dir.path / file) << text; };
  // A process that is gone.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  ::waitpid(child, nullptr, 0);
  write("dead.lock", fmt::format(R"({{"loop_name": "dead", "scope": ["{}"], "pid": {}, "started_at": "{}"}})",
                                 base, child, ll::journal_now()));
  // A live pid that started after the claim was written: pid reuse, not the claim's run.
  write("reused.lock", fmt::format(R"({{"loop_name": "reused", "scope": ["{}"], "pid": {}, "started_at": "2001-01-01T00:00:00+00:00"}})",
                                   base, ::getpid()));
  write("garbage.lock", "{not json");
  write("wrong.lock", R"({"loop_name": 5, "scope": ["/"], "pid": 1})");
  write("huge.lock", std::string(2 << 20, ' '));
  fs::create_directory(dir.path / "adir.lock");
  // The original's single-string scope, live (this process).
  write("orig.lock", fmt::format(R"({{"loop_name": "orig", "scope": "{}/keep", "pid": {}, "started_at": "{}"}})",
                                 base, ::getpid(), ll::journal_now()));
  const auto claims = ll::list_scope_claims(dir.path);
  REQUIRE(claims.size() == 1);
  CHECK(claims[0].loop_name == "orig");
  CHECK(claims[0].scope == std::vector<std::string>{base + "/keep"});
  ll::loop_journal j(dir.path, "mine");
  auto claimed = j.claim_scope({base});
  REQUIRE(claimed.has_value());
  REQUIRE(claimed->has_value());
  CHECK((*claimed)->loop_name == "orig");
  auto beside = j.claim_scope({base + "/other"});
  REQUIRE(beside.has_value());
  CHECK_FALSE(beside->has_value());
  for (const char* f : {"dead.lock", "reused.lock", "garbage.lock", "wrong.lock", "huge.lock"})
    CHECK(fs::exists(dir.path / f));
}

TEST_CASE("scope claims: two runs claiming at once never both get overlapping scopes") {
  temp_dir dir("scope_race");
  const std::string base = fs::canonical(dir.path).string();
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> granted{0};
    std::vector<std::thread> threads;
    std::vector<std::unique_ptr<ll::loop_journal>> journals;
    for (int i = 0; i < 4; ++i)
      journals.push_back(std::make_unique<ll::loop_journal>(dir.path, fmt::format("r{}_{}", round, i)));
    for (int i = 0; i < 4; ++i)
      threads.emplace_back([&, i] {
        auto c = journals[static_cast<std::size_t>(i)]->claim_scope({base + (i % 2 ? "/a" : "/a/b")});
        if (c && !c->has_value()) ++granted;
      });
    for (auto& t : threads) t.join();
    CHECK(granted.load() == 1);
  }
}
