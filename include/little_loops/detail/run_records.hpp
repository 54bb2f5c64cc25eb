// little_loops — the members of a run's records (`captured.<name>`, `prev`), listed once
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/record_writer.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// Each record's members are listed once, in write_*(W&, record), for the writers of
// detail/record_writer.hpp: the JSON object, its text, and the `raw_bytes` of its strings
// that are not UTF-8 (snapshots, `${captured.<name>}`, results).

template <class W>
void write_captured_record(W& w, const captured_record& r) {
  w.string("output", r.output);
  w.string("stderr", r.stderr_output);
  w.integer("exit_code", r.exit_code);
  w.integer("duration_ms", r.duration_ms);
  w.string("verdict", r.verdict);
  // Only when set, so that records of runs without them read as before.
  if (!r.failure_type.empty()) w.string("failure_type", r.failure_type);
  if (!r.timeout_kind.empty()) w.string("timeout_kind", r.timeout_kind);
  if (!r.subloop.is_null()) w.value("subloop", r.subloop);
}

template <class W>
void write_captured(W& w, const captured_map& m) {
  // (no structured binding: Clang 14 cannot capture one in a lambda)
  for (const auto& entry : m)
    w.object(entry.first, [&entry](auto& r) { write_captured_record(r, entry.second); });
}

template <class W>
void write_prev_record(W& w, const prev_record& p) {
  w.string("state", p.state);
  w.string("output", p.output);
  w.string("stderr", p.stderr_output);
  w.integer("exit_code", p.exit_code);
  w.string("verdict", p.verdict);
  p.details.visit([&w](const json& d) { w.value("details", d); });
  if (!p.ran_action) w.boolean("ran_action", false);  // only then: older snapshots stay valid
  if (!p.evaluated) w.boolean("evaluated", false);    // likewise
}

// `{NAME: record, …}`; public as to_json(const captured_map&) (snapshot.hpp).
LITTLE_LOOPS_INLINE json captured_to_json(const captured_map& m);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE json captured_to_json(const captured_map& m) {
  json_object_writer w;
  write_captured(w, m);
  return w.take();
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
