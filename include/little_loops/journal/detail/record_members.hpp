// little_loops — journal: the members of a journal_record, listed once for its JSON, its text and its reader
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// A record's members are listed once, in record_members(V&, Record&), in the order they
// are written, for three visitors with the same interface (counter, name, string,
// integer, optional_integer, object, snapshot, optional_object):
//  - record_json_builder builds the JSON object (journal_record::to_json);
//  - record_text_writer appends the same object's text (journal_record::to_text) without
//    building it;
//  - record_json_reader reads a state file's object back (journal_record::from_json).
// The members before record_snapshot_key are the record's head, which record_head_reader
// reads without the snapshot and what follows it.

/// The member that ends a record's head.
inline constexpr std::string_view record_snapshot_key = "snapshot";

/// Whether a string member must be present (see record_json_reader).
enum class member_presence { optional, required };

/// Visits the members of `r` (a journal_record, const for the writers) in their order.
template <class V, class Record>
void record_members(V& v, Record& r) {
  v.counter("seq", r.seq);              // first, so that it is cheap to find (written when not 0)
  v.name("name", "loop_name", r.name);  // `loop_name`: the original's key, written too
  v.string("status", r.status, member_presence::required);
  v.integer("pid", r.pid);
  v.string("loop_path", r.loop_path);
  v.string("started_at", r.started_at);
  v.string("updated_at", r.updated_at);
  v.integer("iteration", r.iteration);
  v.string("current_state", r.current_state);
  v.optional_integer("accumulated_ms", r.accumulated_ms);
  v.object("extra", r.extra);
  v.snapshot(record_snapshot_key, r.snapshot);
  v.optional_object("captured", r.captured);  // written when not null
}

/// Builds a record's JSON object member by member.
class record_json_builder {
 public:
  void counter(std::string_view key, std::uint64_t v) {
    if (v != 0) j_[std::string(key)] = v;
  }
  void name(std::string_view key, std::string_view alias, const std::string& v) {
    j_[std::string(key)] = v;
    j_[std::string(alias)] = v;
  }
  void string(std::string_view key, const std::string& v, member_presence = member_presence::optional) {
    j_[std::string(key)] = v;
  }
  template <class Int>
  void integer(std::string_view key, Int v) {
    j_[std::string(key)] = v;
  }
  void optional_integer(std::string_view key, const std::optional<std::int64_t>& v) {
    if (v) j_[std::string(key)] = *v;
  }
  void object(std::string_view key, const json& v) { j_[std::string(key)] = v; }
  void snapshot(std::string_view key, const json& v) { j_[std::string(key)] = v; }
  void optional_object(std::string_view key, const json& v) {
    if (!v.is_null()) j_[std::string(key)] = v;
  }
  json take() { return std::move(j_); }

 private:
  json j_ = json::object();
};

/// Appends a record's text (its JSON object on one line, as the library's one-line dump
/// writes it, and a newline) member by member; `SnapshotText` appends the snapshot's text
/// (`void(std::string&)`), so that a typed snapshot is written without building its JSON.
template <class SnapshotText>
class record_text_writer {
 public:
  record_text_writer(std::string& out, SnapshotText snapshot_text)
      : out_(out), snapshot_text_(std::move(snapshot_text)) {
    out_ += '{';
  }
  void counter(std::string_view key, std::uint64_t v) {
    if (v == 0) return;
    member(key);
    append_json_integer(out_, v);
  }
  void name(std::string_view key, std::string_view alias, const std::string& v) {
    string(key, v);
    string(alias, v);
  }
  void string(std::string_view key, const std::string& v, member_presence = member_presence::optional) {
    member(key);
    append_json_string(out_, v);
  }
  template <class Int>
  void integer(std::string_view key, Int v) {
    member(key);
    append_json_integer(out_, v);
  }
  void optional_integer(std::string_view key, const std::optional<std::int64_t>& v) {
    if (v) integer(key, *v);
  }
  void object(std::string_view key, const json& v) {
    member(key);
    append_json_text(out_, v);
  }
  void snapshot(std::string_view key, const json&) {
    member(key);
    snapshot_text_(out_);
  }
  void optional_object(std::string_view key, const json& v) {
    if (!v.is_null()) object(key, v);
  }
  void finish() { out_.append("}\n", 2); }

 private:
  // The keys are fixed ASCII names: written as they are.
  void member(std::string_view key) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += '"';
    out_ += key;
    out_ += "\":";
  }
  std::string& out_;
  SnapshotText snapshot_text_;
  bool first_ = true;
};

/// Reads a record's members from a state file's JSON object: `name` and `status` are
/// required, the rest optional; a member of the wrong type is an error (errc::invalid_snapshot
/// with the key as its path), except `seq`, `extra`, `captured`, which are then left out.
/// The original's state file (its LoopState: `loop_name` instead of `name`) is read too;
/// its own `accumulated_ms` is not ours (journal_record::from_json keeps it in `extra`).
class record_json_reader {
 public:
  explicit record_json_reader(const json& j)
      : j_(j), original_(!j.contains("name") && j.contains("loop_name")) {}

  /// True when `j` is the original's state file.
  [[nodiscard]] bool original() const noexcept { return original_; }
  /// The first member that could not be read.
  std::optional<little_loops::error>& failure() noexcept { return failure_; }

  void counter(std::string_view key, std::uint64_t& out) {
    if (const json* v = find(key); v != nullptr && v->is_number_unsigned()) out = v->get<std::uint64_t>();
  }
  void name(std::string_view key, std::string_view alias, std::string& out) {
    string(original_ ? alias : key, out, member_presence::required);
  }
  void string(std::string_view key, std::string& out, member_presence presence = member_presence::optional) {
    const json* v = find(key);
    if (v == nullptr || v->is_null()) {
      if (presence == member_presence::required) fail(key, "a string");
    } else if (!v->is_string()) {
      fail(key, "a string");
    } else {
      out = v->get<std::string>();
    }
  }
  template <class Int>
  void integer(std::string_view key, Int& out) {
    const json* v = find(key);
    if (v == nullptr || v->is_null()) return;
    if (!v->is_number_integer()) return fail(key, "an integer");
    out = v->get<Int>();
  }
  void optional_integer(std::string_view key, std::optional<std::int64_t>& out) {
    if (original_) return;  // the original's own, kept with its other keys
    std::int64_t value = 0;
    const json* v = find(key);
    if (v == nullptr || v->is_null()) return;
    integer(key, value);
    if (!failure_) out = value;
  }
  void object(std::string_view key, json& out) {
    if (const json* v = find(key); v != nullptr && v->is_object()) out = *v;
  }
  void snapshot(std::string_view key, json& out) {
    if (const json* v = find(key)) out = *v;
  }
  void optional_object(std::string_view key, json& out) { object(key, out); }

 private:
  const json* find(std::string_view key) const {
    const auto it = j_.find(std::string(key));
    return it == j_.end() ? nullptr : &*it;
  }
  void fail(std::string_view key, std::string_view expected) {
    if (failure_) return;  // the first one is reported
    failure_ = little_loops::error{
        errc::invalid_snapshot,
        "expected " + std::string(expected) + " at \"" + std::string(key) + "\"", std::string(key)};
  }
  const json& j_;
  bool original_;
  std::optional<little_loops::error> failure_;
};

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
