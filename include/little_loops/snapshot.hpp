// little_loops — snapshot: the serialisable state of a run at a state boundary, and the loop digest
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/raw_bytes.hpp>
#include <little_loops/detail/record_writer.hpp>
#include <little_loops/detail/snapshot_writer.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// @brief Everything needed to continue a run later (design §3.13).
///
/// Taken at a state boundary (`fsm_executor::snapshot()`, or `execution_result::snapshot`
/// when a run pauses), serialised with `to_json` / `snapshot_from_json`, and handed to
/// `fsm_executor::resume`. `current_state` is the state that runs *next*: a completed action
/// is never re-run. `digest` identifies the loop definition; resuming against a different loop
/// is refused with `errc::snapshot_mismatch`.
struct snapshot {
  /// Version of the JSON layout (the `version` key).
  static constexpr int format_version = detail::snapshot_format_version;

  std::string loop_name;                   ///< `loop`
  std::string digest;                      ///< `digest`: loop_digest() of the loop
  std::string current_state;               ///< `current_state`: the next state to run
  std::int64_t iteration = 0;              ///< `iteration`: state executions so far
  bool summary_executed = false;           ///< `summary_executed`: on_max_iterations ran
  json context = json::object();           ///< `context`
  captured_map captured;                   ///< `captured`
  std::optional<prev_record> prev;         ///< `prev` (null before the first state ran)
  /// `last_evaluation` (written only when set): the last evaluated state, kept while `prev`
  /// is a state that was not evaluated (what `${prev.evaluation}` reads then).
  std::optional<prev_record> last_evaluation;
  ordered_map<std::string, double> convergence;  ///< `convergence`: state → previous value
  std::int64_t elapsed_ms = 0;             ///< `elapsed_ms`: run time before the snapshot
  std::string started_at;                  ///< `started_at`: ISO 8601 start of the first run
  /// `counters` (written only when set): max_retries streaks, cannot_judge holds, full
  /// passes and the throttle's visit, `{passes, entered, retries: {state: n}, holds: {state:
  /// n}, throttle: {state, calls}}`; null when none.
  json counters;
  /// `frames` (version 2, written only when set): a run inside sub-loops. The members above
  /// are the top loop's (its current state is the sub-loop state); each entry is a child
  /// below it, outermost first, the running one last: an object of the same members plus
  /// `loop_id` (the child's identity, as its resolver gives it) and `timeout_ms` (its time
  /// limit, when it has one). Null when the top loop is the running one.
  json frames;

  friend bool operator==(const snapshot&, const snapshot&) = default;
};

/// @brief A snapshot's members by reference, for writing one without copying them.
///
/// `fsm_executor::snapshot_view()` makes one of the executor's own state; it is valid until
/// the executor next changes (the next step(), resume() or reset()). `append_snapshot_json`,
/// `journal_record::to_text` and `loop_journal::save` take it as they take a snapshot and
/// write the same bytes (a journaled run saves one at every state boundary).
struct snapshot_view {
  std::string_view loop_name;
  std::string_view digest;
  std::string_view current_state;
  std::int64_t iteration = 0;
  bool summary_executed = false;
  const json* context = nullptr;           ///< null: `{}`
  const captured_map* captured = nullptr;  ///< null: `{}`
  const prev_record* prev = nullptr;       ///< null: no state has run yet
  const prev_record* last_evaluation = nullptr;  ///< see snapshot::last_evaluation
  /// State name → previous value, in the order they are written.
  std::span<const std::pair<std::string_view, double>> convergence;
  std::int64_t elapsed_ms = 0;
  std::string_view started_at;
  const json* counters = nullptr;          ///< see snapshot::counters (null: none)
  const json* frames = nullptr;            ///< see snapshot::frames (null: none)

  /// The snapshot itself (copies everything).
  [[nodiscard]] snapshot materialize() const;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE snapshot snapshot_view::materialize() const {
  snapshot s;
  s.loop_name = loop_name;
  s.digest = digest;
  s.current_state = current_state;
  s.iteration = iteration;
  s.summary_executed = summary_executed;
  if (context != nullptr) s.context = *context;
  if (captured != nullptr) s.captured = captured_map(*captured);
  if (prev != nullptr) s.prev = *prev;
  if (last_evaluation != nullptr) s.last_evaluation = *last_evaluation;
  for (const auto& [state, value] : convergence) s.convergence[std::string(state)] = value;
  s.elapsed_ms = elapsed_ms;
  s.started_at = started_at;
  if (counters != nullptr) s.counters = *counters;
  if (frames != nullptr) s.frames = *frames;
  return s;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
inline error snapshot_error(std::string path, std::string message) {
  return error{errc::invalid_snapshot, std::move(message), std::move(path)};
}

inline std::string_view snapshot_json_kind(const json& v) noexcept {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  return "null";
}

// Snapshot fields: the key must exist with the right type, read by the strict field reader
// (detail/json_fields.hpp) as written, with no UTF-8 check and no whole floats for integers.
inline expected<const json*, error> snapshot_member(const json& obj, std::string_view key,
                                                    const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) return unexpected(snapshot_error(where, "missing"));
  return &*it;
}

inline expected<std::string, error> snapshot_string(const json& obj, std::string_view key,
                                                    const std::string& path) {
  const std::string where = join_path(path, key);
  auto member = snapshot_member(obj, key, where);
  if (!member) return unexpected(member.error());
  auto text = string_field(**member, false);
  if (!text)
    return unexpected(
        snapshot_error(where, fmt::format("must be a string, not {}", snapshot_json_kind(**member))));
  return std::string(*text);
}

/// An integer that fits an `Int` (std::int64_t, or int for exit codes: "out of range").
template <class Int>
expected<Int, error> snapshot_integer(const json& obj, std::string_view key,
                                      const std::string& path) {
  const std::string where = join_path(path, key);
  auto member = snapshot_member(obj, key, where);
  if (!member) return unexpected(member.error());
  auto number = integer_field<Int>(**member, false);
  if (number) return *number;
  if (number.error() != field_fault::wrong_type)
    return unexpected(snapshot_error(where, "out of range"));
  return unexpected(
      snapshot_error(where, fmt::format("must be an integer, not {}", snapshot_json_kind(**member))));
}

inline expected<void, error> snapshot_keys(const json& obj, std::initializer_list<std::string_view> known,
                                           const std::string& path) {
  const std::string* key = first_unknown_key(obj, known);
  if (!key) return {};
  return unexpected(snapshot_error(join_path(path, *key), fmt::format("unknown key \"{}\"", *key)));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

/// @brief A stable digest of a loop definition: FNV-1a 64 of the canonical JSON
/// (`to_json(json&, const fsm_loop&)`, defaults omitted), as 16 lowercase hex digits.
/// `max_iterations` is left out: it is a limit, not the definition, so a run stopped by it
/// can be resumed with a higher one (`ll-loop resume NAME --max-iterations N`).
template <class Loop = fsm_loop>
std::string loop_digest(const Loop& loop) {
  json canonical;
  to_json(canonical, loop);
  if (canonical.is_object()) {
    canonical.erase("max_iterations");
    canonical.erase("max_steps");
  }
  return fmt::format("{:016x}",
                     detail::fnv1a_64(canonical.dump(-1, ' ', false, json::error_handler_t::replace)));
}

LITTLE_LOOPS_INLINE json to_json(const captured_map& captured);
LITTLE_LOOPS_INLINE json to_json(const snapshot& s);
LITTLE_LOOPS_INLINE void to_json(json& j, const snapshot& s);
LITTLE_LOOPS_INLINE void append_snapshot_json(std::string& out, const snapshot& s);
LITTLE_LOOPS_INLINE void append_snapshot_json(std::string& out, const snapshot_view& v);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The JSON of a run's captured records (`execution_result::captured`, a snapshot's
/// `captured`): `{NAME: {"output", "stderr", "exit_code", "duration_ms", "verdict"}, …}`.
LITTLE_LOOPS_INLINE json to_json(const captured_map& captured) { return detail::captured_to_json(captured); }

/// The snapshot's JSON: `{"version", "loop", "digest", "current_state", "iteration",
/// "summary_executed", "context", "captured", "prev", ["last_evaluation",] "convergence",
/// "elapsed_ms", "started_at"[, "raw_bytes"]}` (`last_evaluation` only when set;
/// `raw_bytes` only when a string is not valid UTF-8: see detail/raw_bytes.hpp).
LITTLE_LOOPS_INLINE json to_json(const snapshot& s) {
  detail::json_object_writer w;
  detail::write_snapshot(w, s);
  json j = w.take();
  if (json raw = detail::snapshot_raw_bytes(s); !raw.empty()) j["raw_bytes"] = std::move(raw);
  return j;
}

/// ADL hook so `json j = snap;` works.
LITTLE_LOOPS_INLINE void to_json(json& j, const snapshot& s) { j = to_json(s); }

/// Appends the snapshot's JSON text: the same bytes as
/// `to_json(s).dump(-1, ' ', false, json::error_handler_t::replace)`, written straight from
/// the typed snapshot (a journal writes one at every state boundary).
LITTLE_LOOPS_INLINE void append_snapshot_json(std::string& out, const snapshot& s) {
  detail::append_snapshot_json_of(out, s);
}
/// @copydoc append_snapshot_json(std::string&, const snapshot&)
/// The same bytes as for `v.materialize()`.
LITTLE_LOOPS_INLINE void append_snapshot_json(std::string& out, const snapshot_view& v) {
  detail::append_snapshot_json_of(out, v);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {

LITTLE_LOOPS_INLINE expected<captured_record, error> read_captured_record(const json& v, const std::string& path);
LITTLE_LOOPS_INLINE expected<prev_record, error> read_prev_record(const json& v, const std::string& path);
LITTLE_LOOPS_INLINE expected<void, error> read_snapshot_head(const json& j, snapshot& s);
LITTLE_LOOPS_INLINE expected<void, error> read_snapshot_records(const json& j, snapshot& s);
LITTLE_LOOPS_INLINE expected<void, error> read_snapshot_tail(const json& j, snapshot& s);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// A captured record read back; `path` names it in errors.
LITTLE_LOOPS_INLINE expected<captured_record, error> read_captured_record(const json& v, const std::string& path) {
  if (!v.is_object()) return unexpected(snapshot_error(path, "must be an object"));
  if (auto k = snapshot_keys(v, {"output", "stderr", "exit_code", "duration_ms", "verdict",
                                 "failure_type", "timeout_kind", "subloop"}, path); !k)
    return unexpected(k.error());
  captured_record rec;
  if (const auto sub = v.find("subloop"); sub != v.end()) {
    if (!sub->is_object()) return unexpected(snapshot_error(path + ".subloop", "must be an object"));
    rec.subloop = *sub;
  }
  auto out = snapshot_string(v, "output", path);
  if (!out) return unexpected(out.error());
  rec.output = std::move(*out);
  auto err = snapshot_string(v, "stderr", path);
  if (!err) return unexpected(err.error());
  rec.stderr_output = std::move(*err);
  auto code = snapshot_integer<int>(v, "exit_code", path);
  if (!code) return unexpected(code.error());
  rec.exit_code = *code;
  auto dur = snapshot_integer<std::int64_t>(v, "duration_ms", path);
  if (!dur) return unexpected(dur.error());
  rec.duration_ms = *dur;
  auto verdict = snapshot_string(v, "verdict", path);
  if (!verdict) return unexpected(verdict.error());
  rec.verdict = std::move(*verdict);
  for (auto [key, field] : {std::pair{"failure_type", &rec.failure_type},
                            std::pair{"timeout_kind", &rec.timeout_kind}}) {
    if (!v.contains(key)) continue;
    auto text = snapshot_string(v, key, path);
    if (!text) return unexpected(text.error());
    *field = std::move(*text);
  }
  return rec;
}

// A `prev` record (also `last_evaluation`) read back; `path` names it in errors.
LITTLE_LOOPS_INLINE expected<prev_record, error> read_prev_record(const json& v, const std::string& path) {
  if (!v.is_object()) return unexpected(snapshot_error(path, "must be an object or null"));
  if (auto k = snapshot_keys(
          v, {"state", "output", "stderr", "exit_code", "verdict", "details", "ran_action",
              "evaluated"},
          path);
      !k)
    return unexpected(k.error());
  prev_record p;
  auto st = snapshot_string(v, "state", path);
  if (!st) return unexpected(st.error());
  p.state = std::move(*st);
  auto out = snapshot_string(v, "output", path);
  if (!out) return unexpected(out.error());
  p.output = std::move(*out);
  auto err = snapshot_string(v, "stderr", path);
  if (!err) return unexpected(err.error());
  p.stderr_output = std::move(*err);
  auto code = snapshot_integer<int>(v, "exit_code", path);
  if (!code) return unexpected(code.error());
  p.exit_code = *code;
  auto verdict = snapshot_string(v, "verdict", path);
  if (!verdict) return unexpected(verdict.error());
  p.verdict = std::move(*verdict);
  auto details = v.find("details");
  if (details == v.end() || !details->is_object())
    return unexpected(snapshot_error(path + ".details", "must be an object"));
  p.details = *details;
  for (const char* flag : {"ran_action", "evaluated"}) {  // absent: true
    if (auto f = v.find(flag); f != v.end()) {
      if (!f->is_boolean())
        return unexpected(snapshot_error(path + "." + flag, "must be a boolean"));
      (std::string_view(flag) == "ran_action" ? p.ran_action : p.evaluated) = f->get<bool>();
    }
  }
  return p;
}

// `loop`, `digest`, `current_state`, `iteration`, `summary_executed` and `context`.
LITTLE_LOOPS_INLINE expected<void, error> read_snapshot_head(const json& j, snapshot& s) {
  auto name = snapshot_string(j, "loop", "");
  if (!name) return unexpected(name.error());
  s.loop_name = std::move(*name);
  auto digest = snapshot_string(j, "digest", "");
  if (!digest) return unexpected(digest.error());
  s.digest = std::move(*digest);
  auto current = snapshot_string(j, "current_state", "");
  if (!current) return unexpected(current.error());
  s.current_state = std::move(*current);
  auto iteration = snapshot_integer<std::int64_t>(j, "iteration", "");
  if (!iteration) return unexpected(iteration.error());
  if (*iteration < 0) return unexpected(snapshot_error("iteration", "must not be negative"));
  s.iteration = *iteration;
  auto summary = j.find("summary_executed");
  if (summary == j.end() || !summary->is_boolean())
    return unexpected(snapshot_error("summary_executed", "must be a boolean"));
  s.summary_executed = summary->get<bool>();
  auto context = j.find("context");
  if (context == j.end() || !context->is_object())
    return unexpected(snapshot_error("context", "must be an object"));
  s.context = *context;
  return {};
}

// `captured`, `prev` and `last_evaluation`.
LITTLE_LOOPS_INLINE expected<void, error> read_snapshot_records(const json& j, snapshot& s) {
  auto captured = j.find("captured");
  if (captured == j.end() || !captured->is_object())
    return unexpected(snapshot_error("captured", "must be an object"));
  for (auto it = captured->begin(); it != captured->end(); ++it) {
    auto rec = read_captured_record(*it, "captured." + it.key());
    if (!rec) return unexpected(std::move(rec.error()));
    s.captured[it.key()] = std::move(*rec);
  }
  auto prev = j.find("prev");
  if (prev == j.end()) return unexpected(snapshot_error("prev", "missing"));
  if (!prev->is_null()) {
    auto p = read_prev_record(*prev, "prev");
    if (!p) return unexpected(std::move(p.error()));
    s.prev = std::move(*p);
  }
  if (auto last = j.find("last_evaluation"); last != j.end() && !last->is_null()) {
    auto p = read_prev_record(*last, "last_evaluation");
    if (!p) return unexpected(std::move(p.error()));
    s.last_evaluation = std::move(*p);
  }
  return {};
}

// `convergence`, `elapsed_ms` and `started_at`.
LITTLE_LOOPS_INLINE expected<void, error> read_snapshot_tail(const json& j, snapshot& s) {
  auto conv = j.find("convergence");
  if (conv == j.end() || !conv->is_object())
    return unexpected(snapshot_error("convergence", "must be an object"));
  for (auto it = conv->begin(); it != conv->end(); ++it) {
    if (!it->is_number())
      return unexpected(snapshot_error("convergence." + it.key(), "must be a number"));
    s.convergence[it.key()] = it->get<double>();
  }
  auto elapsed = snapshot_integer<std::int64_t>(j, "elapsed_ms", "");
  if (!elapsed) return unexpected(elapsed.error());
  if (*elapsed < 0) return unexpected(snapshot_error("elapsed_ms", "must not be negative"));
  s.elapsed_ms = *elapsed;
  auto started = snapshot_string(j, "started_at", "");
  if (!started) return unexpected(started.error());
  s.started_at = std::move(*started);
  if (const auto counters = j.find("counters"); counters != j.end()) {
    if (!counters->is_object()) return unexpected(snapshot_error("counters", "must be an object"));
    s.counters = *counters;
  }
  return {};
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_INLINE expected<snapshot, error> snapshot_from_json(const json& j);
LITTLE_LOOPS_INLINE expected<snapshot, error> snapshot_from_json_text(std::string_view text);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief Read a snapshot strictly: every key required, no unknown keys, types checked.
/// Strings listed in `raw_bytes` get their exact bytes back (a checked entry per string).
/// @return the snapshot, or `errc::invalid_snapshot` with the path of the offending field.
LITTLE_LOOPS_INLINE expected<snapshot, error> snapshot_from_json(const json& j) {
  using detail::snapshot_error;
  if (!j.is_object())
    return unexpected(snapshot_error("", "a snapshot must be a JSON object"));
  if (const auto raw = j.find("raw_bytes"); raw != j.end()) {
    json restored = j;
    restored.erase("raw_bytes");
    if (auto problem = detail::restore_raw_bytes(restored, *raw, detail::snapshot_json_kind))
      return unexpected(snapshot_error(std::move(problem->where), std::move(problem->message)));
    return snapshot_from_json(restored);
  }
  if (auto k = detail::snapshot_keys(j,
                                  {"version", "loop", "digest", "current_state", "iteration",
                                   "summary_executed", "context", "captured", "prev",
                                   "last_evaluation", "convergence", "elapsed_ms",
                                   "started_at", "counters", "frames"},
                                  "");
      !k)
    return unexpected(k.error());
  auto version = detail::snapshot_integer<std::int64_t>(j, "version", "");
  if (!version) return unexpected(version.error());
  if (*version != 1 && *version != snapshot::format_version)
    return unexpected(snapshot_error(
        "version", fmt::format("unsupported snapshot version {} (this library reads 1 to {})",
                               *version, snapshot::format_version)));
  snapshot s;
  if (const auto frames = j.find("frames"); frames != j.end()) {
    if (*version < 2) return unexpected(snapshot_error("frames", "needs snapshot version 2"));
    if (!frames->is_array()) return unexpected(snapshot_error("frames", "must be an array"));
    s.frames = *frames;
  }
  for (auto read : {detail::read_snapshot_head, detail::read_snapshot_records, detail::read_snapshot_tail})
    if (auto ok = read(j, s); !ok) return unexpected(std::move(ok.error()));
  return s;
}

/// Parse snapshot text (detail::parse_json_or_discarded, then snapshot_from_json).
LITTLE_LOOPS_INLINE expected<snapshot, error> snapshot_from_json_text(std::string_view text) {
  json j = detail::parse_json_or_discarded(text);
  if (j.is_discarded())
    return unexpected(error{errc::parse_error, "snapshot text is not valid JSON"});
  return snapshot_from_json(j);
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END
