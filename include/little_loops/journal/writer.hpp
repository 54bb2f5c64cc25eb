// little_loops — journal: loop_journal, the writer of one loop's journal
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/events.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/snapshot.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/journal/detail/background_sync.hpp>
#include <little_loops/journal/detail/posix_files.hpp>
#include <little_loops/journal/detail/record_files.hpp>
#include <little_loops/journal/files.hpp>
#include <little_loops/journal/reader.hpp>
#include <little_loops/journal/record.hpp>
#include <little_loops/journal/scope_lock.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// How loop_journal::save() makes the state file survive a crash (see the file comment).
enum class journal_sync {
  every_save,  ///< temp file, fsync, rename, fsync of the directory, on the calling thread
  background,  ///< one append to a checkpoint log on the calling thread; a thread syncs
  none,        ///< temp file + rename: atomic against a crash of the process only
};

/// Appends one event line to the event log of `name` in `dir` with a single write(), for a
/// process that does not hold the loop's journal (e.g. after loop_journal::close(), about
/// what happened next). A line is never torn by other appenders (O_APPEND).
inline expected<void, little_loops::error> append_journal_event(const std::filesystem::path& dir,
                                                                std::string_view name, const json& event) {
  const auto path = journal_paths_for(dir, name).events;
  const int fd = detail::open_fd(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW).release();
  if (fd < 0) return unexpected(detail::journal_io_error(path, "cannot open event log", errno));
  const std::string line = event.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  const bool ok = detail::write_all(fd, line);
  const int err = errno;
  ::close(fd);
  if (!ok) return unexpected(detail::journal_io_error(path, "cannot write event log", err));
  return {};
}

/// The writer side of one loop's journal.
class loop_journal {
 public:
  /// A journal for loop `name` in `dir` (nothing is touched until open()).
  explicit loop_journal(std::filesystem::path dir = std::filesystem::path(default_journal_dir),
                        std::string name = {})
      : dir_(std::move(dir)), name_(std::move(name)), paths_(journal_paths_for(dir_, name_)) {}
  loop_journal(const loop_journal&) = delete;
  loop_journal& operator=(const loop_journal&) = delete;
  loop_journal(loop_journal&& other) noexcept
      : sync(other.sync),
        checkpoint_log_limit(other.checkpoint_log_limit),
        sync_interval(other.sync_interval),
        dir_(std::move(other.dir_)),
        name_(std::move(other.name_)),
        paths_(std::move(other.paths_)),
        events_fd_(std::exchange(other.events_fd_, -1)),
        lock_fd_(std::exchange(other.lock_fd_, -1)),
        scope_claimed_(std::exchange(other.scope_claimed_, false)),
        pending_events_(std::move(other.pending_events_)),
        logs_(std::exchange(other.logs_, std::array<int, 2>{-1, -1})),
        log_info_(other.log_info_),
        current_log_(other.current_log_),
        seq_(other.seq_),
        save_number_(other.save_number_),
        defer_next_sync_(other.defer_next_sync_),
        deferred_(std::move(other.deferred_)),
        submit_after_events_(other.submit_after_events_),
        deferred_failure_(std::move(other.deferred_failure_)),
        syncer_(std::move(other.syncer_)) {}
  loop_journal& operator=(loop_journal&&) = delete;
  /// Writes buffered events and waits for the background thread (journal_sync::background).
  ~loop_journal() { (void)close(); }

  /// Writes buffered events, waits for the background thread, closes the files and drops
  /// the scope claim and the lock (another process may open this loop's journal from then
  /// on, e.g. a session started to resume it). Returns flush()'s result. The journal can be
  /// opened again.
  expected<void, little_loops::error> close() noexcept {
    expected<void, little_loops::error> flushed;
    try {
      flushed = flush();
    } catch (...) {
      flushed = unexpected(little_loops::error{errc::io_error, "cannot flush the journal", paths_.state.string()});
    }
    syncer_.reset();
    close_logs();
    if (events_fd_ >= 0) ::close(events_fd_);
    events_fd_ = -1;
    release_scope();
    if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
    lock_fd_ = -1;
    return flushed;
  }

  /// How save() makes the state file survive a crash; see journal_sync and the file
  /// comment. every_save (default) fsyncs on every save; background appends to a log and
  /// syncs on a thread; none never fsyncs.
  journal_sync sync = journal_sync::every_save;

  /// journal_sync::background: a checkpoint log longer than this many bytes is emptied and
  /// the other one used, once the state file durably holds a newer record.
  std::size_t checkpoint_log_limit = std::size_t{1} << 20;

  /// journal_sync::background: the thread writes the state file at most once per interval
  /// (the newest record each time), so fast loops do not pay a state-file write and fsync
  /// per step; a step that comes after a quiet interval is written at once. flush() and
  /// a save with every_save do not wait for it. Set before the first background save.
  /// 100 ms: on a disk, each write costs three fsyncs, and at 20 ms (50 times a second in a
  /// loop of fast steps) they slowed such a loop by about 2 % more (bench_adapters,
  /// BM_step_overhead_paired); a step longer than the interval is still written at once.
  std::chrono::milliseconds sync_interval{100};

  /// Creates the directory and opens the event log for appending. `fresh` starts a new run:
  /// the event log is truncated and checkpoint logs of an earlier run are removed;
  /// otherwise (resume) the log is appended to, after terminating a line a crash cut short.
  /// Either way a leftover stop request is removed. After a fresh open, the first
  /// journal_sync::background save is appended to the log but handed to the background
  /// thread only with the next save or flush(): a record saying that nothing has run yet is
  /// not worth an fsync, which would only compete with the start of the first action.
  expected<void, little_loops::error> open(bool fresh) {
    flush_events();
    syncer_.reset();  // it holds a descriptor of the old log
    close_logs();
    const bool had_lock = lock_fd_ >= 0;
    if (auto locked = take_lock(); !locked) return locked;
    // A refused open lets the lock go again, unless it was held before (a scope claim).
    const auto refuse = [&](little_loops::error e) -> expected<void, little_loops::error> {
      if (!had_lock) {
        ::close(lock_fd_);
        lock_fd_ = -1;
      }
      return unexpected(std::move(e));
    };
    // Another loop's runs, in the files this name maps to: a fresh run would wipe them and a
    // resume would continue them.
    if (auto owner = journal_name_collision(dir_, name_))
      return refuse(little_loops::error{
          errc::io_error,
          fmt::format("these journal files hold the runs of loop \"{}\", not of \"{}\" (loop names "
                      "that differ only in characters other than letters, digits, '.', '_' and "
                      "'-' share their journal files): rename one of the loops, or remove the "
                      "files of the other",
                      *owner, name_),
          paths_.state.string()});
    if (events_fd_ >= 0) ::close(events_fd_);
    events_fd_ = detail::open_journal_for_append(paths_.events, fresh);
    if (events_fd_ < 0) return refuse(detail::journal_append_error(paths_.events, "the event log"));
    deferred_.clear();
    submit_after_events_ = false;
    defer_next_sync_ = fresh;
    // Records go on numbering from the newest on disk (a fresh run's first records must
    // outrank the state file of the run before; a resumed run's, its own).
    save_number_ = std::max(save_number_, detail::record_seq_prefix(paths_.state));
    if (fresh) {
      for (const auto& log : paths_.checkpoints) ::unlink(log.c_str());
    } else {
      for (const auto& log : paths_.checkpoints)
        if (auto record = detail::last_checkpoint(log)) save_number_ = std::max(save_number_, record->seq);
      // A crash may have cut the last line: terminate it so the next event starts clean.
      struct stat st;
      if (::fstat(events_fd_, &st) == 0 && st.st_size > 0) {
        const int rfd = detail::open_fd(paths_.events.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK).release();
        char last = '\n';
        if (rfd >= 0) {
          if (::pread(rfd, &last, 1, st.st_size - 1) != 1) last = '\n';
          ::close(rfd);
        }
        if (last != '\n') (void)detail::write_all(events_fd_, "\n");
      }
    }
    clear_stop_request();
    return {};
  }

  /// Appends one event object as a line to the log's buffer; the buffer is written (one
  /// write(), so lines never interleave) by flush_events(), save() and the destructor.
  /// Failures are ignored here (the state boundaries saved with save() are what a run
  /// depends on).
  void append_event(const json& event) noexcept {
    if (events_fd_ < 0) return;
    try {
      pending_events_ += event.dump(-1, ' ', false, json::error_handler_t::replace);
      pending_events_ += '\n';
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: drop the event
    }
  }
  /// @copydoc append_event(const json&)
  /// The line is written straight from the typed event (append_json_line: the same text,
  /// without building a JSON object).
  void append_event(const loop_event& event) noexcept {
    if (events_fd_ < 0) return;
    const std::size_t size = pending_events_.size();
    try {
      append_json_line(pending_events_, event);
    } catch (...) {  // out of memory: drop the event, keep the buffer whole
      pending_events_.resize(size);
    }
  }

  /// Writes the buffered events to the log (journal_event_sink calls it before every
  /// action starts and when the loop ends); then, with journal_sync::background, hands the
  /// record a save appended meanwhile to the background thread (the state file never gets
  /// ahead of the event log).
  void flush_events() noexcept {
    write_pending_events();
    if (submit_after_events_) {
      submit_after_events_ = false;
      try {
        if (auto submitted = submit(std::exchange(deferred_, std::string()), seq_); !submitted)
          deferred_failure_ = std::move(submitted.error());
      } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: the next save retries
      }
    }
  }

  /// Saves `record` (see `sync`); sets `record.updated_at` (and `started_at`, `pid`, `name`
  /// when empty). Buffered events are written first; journal_sync::background instead
  /// leaves them to the next flush_events() (journal_event_sink: the next action's start),
  /// which writes them and then hands this record to the thread — one write() less between
  /// two actions, and the state file never gets ahead of the event log — unless a save is
  /// already waiting for that (a host that saves without flushing): then they are written
  /// here. With journal_sync::background the result reports this save's append; failures of
  /// the background writes are reported by flush() and by the next save that is not
  /// background. That save (e.g. a host's final one, with every_save) waits for the
  /// background thread, stops it, writes the state file and, when that is durable, removes
  /// the checkpoint logs.
  expected<void, little_loops::error> save(journal_record& record) {
    return save_with(record, [&] { return record.to_text(); });
  }
  /// save(record) with `snap` as the record's snapshot (record.snapshot is neither read nor
  /// changed): the same file contents as after `record.snapshot = to_json(snap)`, written
  /// straight from the typed snapshot, without building its JSON (a save per boundary).
  expected<void, little_loops::error> save(journal_record& record, const snapshot& snap) {
    record.accumulated_ms = snap.elapsed_ms;
    return save_with(record, [&] { return record.to_text(snap); });
  }
  /// save(record, snap.materialize()) without copying the snapshot out of its owner (e.g.
  /// `journal.save(record, executor.snapshot_view())` at every boundary).
  expected<void, little_loops::error> save(journal_record& record, const snapshot_view& snap) {
    record.accumulated_ms = snap.elapsed_ms;
    return save_with(record, [&] { return record.to_text(snap); });
  }

 private:
  template <class MakeText>
  expected<void, little_loops::error> save_with(journal_record& record, MakeText make_text) {
    if (sync != journal_sync::background) flush_events();
    record.updated_at = journal_now();
    record.seq = ++save_number_;
    if (record.started_at.empty()) record.started_at = record.updated_at;
    if (record.pid == 0) record.pid = static_cast<long>(::getpid());
    if (record.name.empty()) record.name = name_;
    std::string text;
    try {
      text = make_text();
    } catch (const std::exception& e) {
      return unexpected(little_loops::error{errc::io_error, e.what(), paths_.state.string()});
    }
    if (sync == journal_sync::background) return save_background(std::move(text));

    const bool had_logs = syncer_ != nullptr || logs_[0] >= 0 || logs_[1] >= 0;
    deferred_.clear();  // superseded by this save
    defer_next_sync_ = false;
    std::optional<little_loops::error> sync_failure = std::exchange(deferred_failure_, std::nullopt);
    if (syncer_ && sync == journal_sync::every_save) {
      // The thread writes this record durably after the one it may be busy with: one fsync
      // round trip less than waiting for it and then writing here.
      syncer_->submit(text, ++seq_);
      auto flushed = syncer_->flush();
      syncer_.reset();
      if (!flushed) {  // this record or an earlier one failed there: write it here
        if (auto written = write_file_atomic(paths_.state, text, true); !written) return written;
      }
    } else {
      if (syncer_) {
        if (auto flushed = syncer_->flush(); !flushed) sync_failure = std::move(flushed.error());
        syncer_.reset();
      }
      auto written = write_file_atomic(paths_.state, text, sync == journal_sync::every_save);
      if (!written) return written;
    }
    close_logs();
    // The state file now holds the newest record (durably with every_save): the logs have
    // served their purpose. With `none` they stay (still readable, older).
    if (had_logs && sync == journal_sync::every_save)
      for (const auto& log : paths_.checkpoints) ::unlink(log.c_str());
    if (sync_failure) return unexpected(std::move(*sync_failure));
    return {};
  }

 public:
  /// Waits until every save so far is written to the state file (journal_sync::background;
  /// only writes buffered events otherwise) and reports the last failure of the background
  /// writes.
  expected<void, little_loops::error> flush() {
    flush_events();
    submit_after_events_ = false;
    if (!deferred_.empty()) {
      if (auto submitted = submit(std::exchange(deferred_, std::string()), seq_); !submitted) return submitted;
    }
    if (deferred_failure_) return unexpected(*std::exchange(deferred_failure_, std::nullopt));
    if (!syncer_) return {};
    return syncer_->flush();
  }

  /// True when request_stop() asked this loop to stop.
  [[nodiscard]] bool stop_requested() const noexcept {
    struct stat st;
    return ::stat(paths_.stop.c_str(), &st) == 0;
  }
  /// Removes a stop request.
  void clear_stop_request() const noexcept { ::unlink(paths_.stop.c_str()); }

  /// Removes the state file, the checkpoint logs and the event log (e.g. after archiving a
  /// finished run).
  void remove_files() noexcept {
    pending_events_.clear();
    deferred_.clear();
    submit_after_events_ = false;
    syncer_.reset();
    close_logs();
    ::unlink(paths_.state.c_str());
    for (const auto& log : paths_.checkpoints) ::unlink(log.c_str());
    ::unlink(paths_.events.c_str());
    ::unlink(paths_.stop.c_str());
  }

  [[nodiscard]] const journal_paths& paths() const noexcept { return paths_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }

  /// Claims the paths of `scope` (normalised here; empty: the working directory) for this
  /// run, under the journal's lock (taken here when open() has not taken it yet, with
  /// open()'s error when another process holds it): nullopt when the claim is written, or
  /// the live claim of another run that overlaps it (nothing is written then). See the
  /// scope-claim section above. Call again to wait for a conflicting run (e.g. once a
  /// second); release_scope() or the destructor drops the claim.
  /// With `singleton` (the loop's `singleton: true`), a live singleton claim of the same loop
  /// name conflicts whatever the scopes.
  expected<std::optional<scope_claim>, little_loops::error> claim_scope(const std::vector<std::string>& scope,
                                                                        bool singleton = false) {
    if (auto locked = take_lock(); !locked) return unexpected(std::move(locked.error()));
    auto paths = detail::normalized_scope(scope);
    if (!paths) return unexpected(std::move(paths.error()));
    const std::filesystem::path acquire = dir_ / ".acquire.lock";
    const int fd = detail::open_fd(acquire.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW).release();
    if (fd < 0) return unexpected(detail::journal_io_error(acquire, "cannot open lock file", errno));
    struct closer {
      int fd;
      ~closer() { ::close(fd); }  // releases the flock
    } close_acquire{fd};
    if (auto held = detail::wait_for_claims_lock(fd, acquire); !held) return unexpected(std::move(held.error()));
    if (!detail::names_open_file(paths_.lock, lock_fd_))
      return unexpected(little_loops::error{errc::io_error, "the lock file was removed while this run held it", paths_.lock.string()});
    if (auto conflict = find_scope_conflict(dir_, *paths, paths_.lock, name_, singleton)) return conflict;
    if (auto written = detail::write_scope_claim(lock_fd_, paths_.lock, name_, *paths, singleton); !written)
      return unexpected(std::move(written.error()));
    scope_claimed_ = true;
    return std::optional<scope_claim>{};
  }

  /// Drops this run's scope claim (empties the lock file; the lock itself is kept).
  void release_scope() noexcept {
    if (scope_claimed_ && lock_fd_ >= 0) (void)::ftruncate(lock_fd_, 0);
    scope_claimed_ = false;
  }

 private:
  struct log_state {
    std::size_t size = 0;          // bytes in the log
    std::uint64_t last_seq = 0;    // the newest record in it (0: only older runs' records)
  };

  // The append of save_background(), then the failure of a background write since the last
  // save: the record is in the checkpoint log (a resume finds it), but the state file cannot
  // be written, which the caller hears of at once (run_journaled stops the run).
  expected<void, little_loops::error> save_background(std::string text) {
    if (auto appended = append_background(std::move(text)); !appended) return appended;
    if (syncer_)
      if (auto failed = syncer_->take_failure()) return unexpected(std::move(*failed));
    if (deferred_failure_) return unexpected(*std::exchange(deferred_failure_, std::nullopt));
    return {};
  }

  expected<void, little_loops::error> append_background(std::string text) {
    const std::uint64_t seq = ++seq_;
    if (!open_log(current_log_))
      return unexpected(detail::journal_append_error(paths_.checkpoints[current_log_], "the checkpoint log"));
    // Switch logs when this one is long and the other one holds nothing the state file
    // does not durably hold (so emptying it can lose nothing, even in a machine crash).
    const int other = 1 - current_log_;
    const std::uint64_t durable = syncer_ ? syncer_->durable() : 0;
    if (log_info_[current_log_].size >= checkpoint_log_limit && durable > 0 && open_log(other) &&
        durable >= log_info_[other].last_seq && ::ftruncate(logs_[other], 0) == 0) {
      log_info_[other] = log_state{};
      current_log_ = other;
    }
    log_state& log = log_info_[current_log_];
    if (!detail::write_all(logs_[current_log_], text)) {
      const int err = errno;
      // A partial record (a full disk) is cut off, so the next append starts a clean line.
      (void)::ftruncate(logs_[current_log_], static_cast<off_t>(log.size));
      return unexpected(detail::journal_io_error(paths_.checkpoints[current_log_], "cannot append checkpoint", err));
    }
    log.size += text.size();
    log.last_seq = seq;
    if (defer_next_sync_) {  // the first save of a fresh run: see open()
      defer_next_sync_ = false;
      deferred_ = std::move(text);
      return {};
    }
    if (!pending_events_.empty()) {
      if (!submit_after_events_) {  // handed over once the events are written (flush_events)
        deferred_ = std::move(text);
        submit_after_events_ = true;
        return {};
      }
      write_pending_events();  // no flush since the previous save: write them now
    }
    deferred_.clear();  // superseded
    submit_after_events_ = false;
    return submit(std::move(text), seq);
  }

  void write_pending_events() noexcept {
    if (pending_events_.empty()) return;
    if (events_fd_ >= 0) (void)detail::write_all(events_fd_, pending_events_);
    pending_events_.clear();
  }

  expected<void, little_loops::error> submit(std::string text, std::uint64_t seq) {
    if (!syncer_) {
      try {
        syncer_ = std::make_unique<detail::journal_syncer>(paths_.state, events_fd_, sync_interval);
      } catch (...) {  // no thread (std::system_error): write the state file here instead
        if (events_fd_ >= 0) ::fdatasync(events_fd_);
        return write_file_atomic(paths_.state, text, true);
      }
    }
    syncer_->submit(std::move(text), seq);
    return {};
  }

  /// Opens checkpoint log `i` for appending (once); false when it cannot be opened.
  bool open_log(int i) noexcept {
    if (logs_[i] >= 0) return true;
    logs_[i] = detail::open_journal_for_append(paths_.checkpoints[i], false);
    if (logs_[i] < 0) return false;
    struct stat st;
    // Records already in it are an earlier process's (last_seq 0: older than any of ours).
    log_info_[i] = log_state{::fstat(logs_[i], &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0, 0};
    return true;
  }

  // One writer per loop: an exclusive lock on `NAME.lock`, held while this journal is open
  // (released when the process ends, however it ends). Taken before anything is touched,
  // so a second run of the same loop cannot truncate or interleave this one's files.
  expected<void, little_loops::error> take_lock() {
    if (lock_fd_ >= 0) return {};
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) return unexpected(little_loops::error{errc::io_error, "cannot create journal directory: " + ec.message(), dir_.string()});
    auto fd = detail::lock_journal_file(paths_.lock);
    // A run killed with SIGKILL may leave an action between its spawn and its exec, holding
    // a copy of the lock's descriptor until the exec closes it. While the process the claim
    // in the lock file names is gone, a busy lock is that and is waited for (at most 2 s).
    for (int waited = 0; !fd && waited < 200 && held_by_dead_process(); ++waited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      fd = detail::lock_journal_file(paths_.lock);
    }
    if (!fd) return unexpected(std::move(fd.error()));
    lock_fd_ = *fd;
    return {};
  }

  bool held_by_dead_process() const {
    const auto claim = detail::read_scope_claim(paths_.lock);
    return claim && claim->pid > 0 && ::kill(static_cast<pid_t>(claim->pid), 0) != 0 && errno == ESRCH;
  }

  void close_logs() noexcept {
    for (int& fd : logs_) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
    log_info_ = {};
    current_log_ = 0;
  }

  std::filesystem::path dir_;
  std::string name_;
  journal_paths paths_;
  int events_fd_ = -1;
  int lock_fd_ = -1;  // holds the flock() of paths_.lock while open
  bool scope_claimed_ = false;  // lock_fd_'s file holds this run's scope claim
  std::string pending_events_;
  std::array<int, 2> logs_{-1, -1};
  std::array<log_state, 2> log_info_{};
  int current_log_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t save_number_ = 0;  // the last journal_record::seq given (see open())
  bool defer_next_sync_ = false;
  std::string deferred_;  // a record not handed to the thread yet (see save_background)
  bool submit_after_events_ = false;  // hand deferred_ over when the events are written
  std::optional<little_loops::error> deferred_failure_;  // of a hand-over in flush_events()
  std::unique_ptr<detail::journal_syncer> syncer_;
};

LITTLE_LOOPS_NAMESPACE_END
