// little_loops — writing a snapshot (or a snapshot_view): its JSON object and its JSON text
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/raw_bytes.hpp>
#include <little_loops/detail/record_writer.hpp>
#include <little_loops/detail/run_records.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// Version of the snapshot's JSON layout (`snapshot::format_version`, the `version` key).
/// Version 2 adds `frames` (a run inside sub-loops); a snapshot without frames is written
/// as version 1, the same bytes as before, which every reader reads.
inline constexpr int snapshot_format_version = 2;

// A snapshot's members, from a snapshot or a snapshot_view.
inline const json& snapshot_member(const json& j) noexcept { return j; }
LITTLE_LOOPS_INLINE const json& snapshot_member(const json* j) noexcept;  // null: `{}`
inline const prev_record* snapshot_ptr(const std::optional<prev_record>& p) noexcept { return p ? &*p : nullptr; }
inline const prev_record* snapshot_ptr(const prev_record* p) noexcept { return p; }
inline const json* snapshot_counters(const json& j) noexcept { return &j; }
inline const json* snapshot_frames(const json& j) noexcept { return j.is_null() ? nullptr : &j; }
inline const json* snapshot_frames(const json* j) noexcept { return j; }
inline const json* snapshot_counters(const json* j) noexcept { return j; }
inline const captured_map& snapshot_member(const captured_map& c) noexcept { return c; }
LITTLE_LOOPS_INLINE const captured_map& snapshot_member(const captured_map* c) noexcept;

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE const json& snapshot_member(const json* j) noexcept {
  static const json empty = json::object();
  return j != nullptr ? *j : empty;
}

LITTLE_LOOPS_INLINE const captured_map& snapshot_member(const captured_map* c) noexcept {
  static const captured_map empty;
  return c != nullptr ? *c : empty;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// The snapshot's members but `raw_bytes` (`S`: snapshot or snapshot_view).
template <class W, class S>
void write_snapshot(W& w, const S& s) {
  const json* frames = snapshot_frames(s.frames);
  w.integer("version", frames != nullptr ? snapshot_format_version : 1);
  w.string("loop", s.loop_name);
  w.string("digest", s.digest);
  w.string("current_state", s.current_state);
  w.integer("iteration", s.iteration);
  w.boolean("summary_executed", s.summary_executed);
  w.value("context", snapshot_member(s.context));
  w.object("captured", [&s](auto& c) { write_captured(c, snapshot_member(s.captured)); });
  if (const prev_record* p = snapshot_ptr(s.prev))
    w.object("prev", [p](auto& r) { write_prev_record(r, *p); });
  else
    w.null("prev");
  if (const prev_record* p = snapshot_ptr(s.last_evaluation))
    w.object("last_evaluation", [p](auto& r) { write_prev_record(r, *p); });
  w.object("convergence", [&s](auto& c) {
    for (const auto& [state, value] : s.convergence) c.number(state, value);
  });
  w.integer("elapsed_ms", s.elapsed_ms);
  w.string("started_at", s.started_at);
  if (const json* c = snapshot_counters(s.counters); c != nullptr && !c->is_null()) w.value("counters", *c);
  if (frames != nullptr) w.value("frames", *frames);
}

/// The `raw_bytes` member of a snapshot (empty when every string is UTF-8).
template <class S>
json snapshot_raw_bytes(const S& s) {
  json out = json::object();
  raw_bytes_writer w(out, "");
  write_snapshot(w, s);
  return out;
}

/// The writer behind both append_snapshot_json overloads (`S`: snapshot or snapshot_view).
template <class S>
void append_snapshot_json_of(std::string& out, const S& s) {
  using namespace std::string_view_literals;
  // Big captured outputs: room for all of them at once (an escape-free guess), so the text
  // is not grown by doubling, which would hold twice their size while it copies.
  std::size_t bulk = 0;
  for (const auto& [name, rec] : snapshot_member(s.captured)) bulk += rec.output.size() + rec.stderr_output.size();
  for (const prev_record* p : {snapshot_ptr(s.prev), snapshot_ptr(s.last_evaluation)})
    if (p != nullptr) bulk += p->output.size() + p->stderr_output.size();
  if (bulk > 65536) out.reserve(out.size() + bulk + bulk / 64 + 4096);
  json_text_writer w(out);
  write_snapshot(w, s);
  // A string that is not UTF-8 was written replaced: raw_bytes then keeps its bytes.
  if (w.finish()) {
    if (const json raw = snapshot_raw_bytes(s); !raw.empty()) {
      out.pop_back();  // the closing brace
      out += ",\"raw_bytes\":"sv;
      append_json_text(out, raw);
      out += '}';
    }
  }
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
