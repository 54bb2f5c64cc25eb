// little_loops — journal: reading records from a loop's state file and checkpoint logs
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/journal/detail/posix_files.hpp>
#include <little_loops/journal/detail/record_members.hpp>
#include <little_loops/journal/files.hpp>
#include <little_loops/journal/record.hpp>
#include <little_loops/journal/status.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

/// Opens a journal file for reading: -1 with errno ENOENT when it does not exist; an error
/// when it is not a regular file (a FIFO would block, a directory or a device never ends)
/// or is over max_journal_file_bytes.
inline expected<int, little_loops::error> open_journal_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    return unexpected(journal_io_error(path, "cannot open", errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uintmax_t>(st.st_size) > max_journal_file_bytes) {
    const bool regular = S_ISREG(st.st_mode);
    ::close(fd);
    return unexpected(little_loops::error{
        errc::io_error, regular ? "journal file is too large" : "not a regular file", path.string()});
  }
  return fd;
}

/// A journal line or file as JSON: nesting is bounded (a deeply nested corrupted file is
/// refused, not a stack overflow). Discarded (is_discarded()) when it is not JSON.
inline json parse_journal_json(std::string_view text) {
  auto parsed = parse_json_text(text);
  if (!parsed) return json(json::value_t::discarded);
  return std::move(*parsed);
}

/// Reads and parses one state file: nullopt when it does not exist.
inline expected<std::optional<journal_record>, little_loops::error> read_journal_file(
    const std::filesystem::path& path) {
  auto fd = open_journal_file(path);
  if (!fd) return unexpected(std::move(fd.error()));
  if (*fd < 0) return std::optional<journal_record>{};
  const json j = parse_journal_json(read_journal_text(*fd));
  if (j.is_discarded())
    return unexpected(little_loops::error{errc::invalid_snapshot, "journal state is not valid JSON",
                                          path.string()});
  auto record = journal_record::from_json(j);
  if (!record) {
    little_loops::error e = std::move(record.error());
    e.message = path.string() + ": " + e.message;
    return unexpected(std::move(e));
  }
  return std::optional<journal_record>(std::move(*record));
}

/// The `seq` a state file's record starts with (`{"seq":N,`), read from its first bytes; 0
/// when it has none or cannot be read.
inline std::uint64_t record_seq_prefix(const std::filesystem::path& path) {
  auto fd = open_journal_file(path);
  if (!fd || *fd < 0) return 0;
  char head[40];
  ssize_t n;
  do {
    n = ::read(*fd, head, sizeof head);
  } while (n < 0 && errno == EINTR);
  ::close(*fd);
  constexpr std::string_view key = "{\"seq\":";
  if (n <= static_cast<ssize_t>(key.size()) || std::string_view(head, key.size()) != key) return 0;
  std::uint64_t value = 0;
  for (ssize_t i = static_cast<ssize_t>(key.size()); i < n; ++i) {
    const char c = head[i];
    if (c == ',') return value;
    if (c < '0' || c > '9' || value > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) return 0;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return 0;
}

/// Collects the members of a record's top-level object that come before `snapshot` (the
/// record's head, see record_members(): every field but the snapshot and the final captured
/// values, `extra` included), then stops the parse, so the snapshot and the captured
/// outputs — megabytes, after a big capture — are neither read into JSON nor copied.
class record_head_reader final : public nlohmann::json_sax<json> {
 public:
  json head = json::object();
  bool reached_snapshot = false;

  bool null() override { return value(json(nullptr)); }
  bool boolean(bool v) override { return value(json(v)); }
  bool number_integer(number_integer_t v) override { return value(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return value(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return value(json(v)); }
  bool string(string_t& v) override { return value(json(std::move(v))); }
  bool binary(binary_t&) override { return value(json(nullptr)); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (open_.empty()) {
      if (k == record_snapshot_key) {
        reached_snapshot = true;
        return false;  // the head is complete
      }
      key_ = std::move(k);
    } else {
      keys_.back() = std::move(k);
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  // The record's own object is `head`; the values inside its members are built in `open_`
  // (with the key each object of it is at), innermost last.
  bool open(json container) {
    if (!started_) {
      started_ = true;
      return container.is_object();  // a record is an object
    }
    if (open_.size() >= 256) return false;  // a head is never this deep: read it whole
    open_.push_back(std::move(container));
    keys_.emplace_back();
    return true;
  }
  bool close() {
    if (open_.empty()) return true;  // the record's end (after a head without snapshot)
    json done = std::move(open_.back());
    open_.pop_back();
    keys_.pop_back();
    return value(std::move(done));
  }
  bool value(json v) {
    if (open_.empty()) {
      head[key_] = std::move(v);
    } else if (json& into = open_.back(); into.is_array()) {
      into.push_back(std::move(v));
    } else {
      into[keys_.back()] = std::move(v);
    }
    return true;
  }
  bool started_ = false;
  std::vector<json> open_;
  std::vector<std::string> keys_;
  std::string key_;
};

/// A record from its head (record_head_reader) when the text has one; nullopt otherwise
/// (not a record this journal wrote, or not JSON).
inline std::optional<journal_record> record_from_head(std::string_view text) {
  record_head_reader reader;
  (void)detail::sax_parse_json(text, reader, false);
  if (!reader.reached_snapshot) return std::nullopt;
  auto record = journal_record::from_json(reader.head);
  if (!record) return std::nullopt;
  return std::move(*record);
}

/// The newest whole record of a checkpoint log: the last line that parses (a torn or
/// garbage tail is skipped). nullopt when there is none. `head_only`: the record without
/// its snapshot, captured outputs and host data (see record_head_reader).
inline std::optional<journal_record> last_checkpoint(const std::filesystem::path& path,
                                                     bool head_only = false) {
  auto fd = open_journal_file(path);
  if (!fd || *fd < 0) return std::nullopt;
  const std::string text = read_journal_text(*fd);
  std::size_t end = text.size();
  while (end > 0) {
    const std::size_t nl = end >= 2 ? text.rfind('\n', end - 2) : std::string::npos;
    const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
    const std::string_view line(text.data() + begin, end - begin);
    if (!line.empty() && line.back() == '\n') {
      // (A line is whole when it ends in a newline: its head is as good as the record.)
      if (head_only)
        if (auto record = record_from_head(line)) return record;
      const json j = parse_journal_json(line);
      if (!j.is_discarded()) {
        if (auto record = journal_record::from_json(j)) return std::move(*record);
      }
    }
    end = begin;
  }
  return std::nullopt;
}

/// A state file's record without its snapshot, captured outputs and host data, read from
/// the head of the file (64 KiB at a time, until `snapshot` is reached); a file whose record
/// has no such head (the original's, or an older layout) is read whole.
inline expected<std::optional<journal_record>, little_loops::error> read_journal_head(
    const std::filesystem::path& path) {
  auto fd = open_journal_file(path);
  if (!fd) return unexpected(std::move(fd.error()));
  if (*fd < 0) return std::optional<journal_record>{};
  std::string text;
  char block[65536];
  for (;;) {
    const ssize_t n = ::read(*fd, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(block, static_cast<std::size_t>(n));
    if (text.size() > (std::size_t{1} << 20)) break;  // a head is never this long: read it whole
    if (auto record = record_from_head(text)) {
      ::close(*fd);
      return std::optional<journal_record>(std::move(*record));
    }
  }
  ::close(*fd);
  return read_journal_file(path);
}

// `exact`: a record whose name is not `name` (another loop's, whose name maps to the same
// files) is none; false reads the files of `name` whoever they belong to (list_journals
// passes file stems).
inline expected<std::optional<journal_record>, little_loops::error> load_journal_record(
    const std::filesystem::path& dir, std::string_view name, bool head_only, bool exact = true) {
  const auto paths = journal_paths_for(dir, name);
  auto primary = head_only ? detail::read_journal_head(paths.state) : detail::read_journal_file(paths.state);
  std::optional<journal_record> chosen;
  if (primary && primary->has_value()) chosen = std::move(**primary);
  // Numbered records (seq) are ordered by number; others by `updated_at`. Every record of
  // the state file was appended to a log first, so on a tie (two saves in the same
  // microsecond) the log's record is at least as new.
  for (const auto& log : paths.checkpoints)
    if (auto record = detail::last_checkpoint(log, head_only);
        record && (!chosen || (record->seq != 0 && chosen->seq != 0
                                   ? record->seq >= chosen->seq
                                   : record->updated_at >= chosen->updated_at)))
      chosen = std::move(*record);
  if (!chosen) {
    if (!primary) return unexpected(std::move(primary.error()));
    return std::optional<journal_record>{};
  }
  if (exact && chosen->name != name) return std::optional<journal_record>{};
  // (A record without a pid, as the original writes, cannot be checked: it stays running.)
  if (chosen->status == journal_status::running && chosen->pid > 0 &&
      !journal_process_alive(chosen->pid, chosen->updated_at)) {
    chosen->status = std::string(journal_status::interrupted);
    chosen->stale = true;
  }
  return chosen;
}

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END
