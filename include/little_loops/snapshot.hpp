// little_loops — snapshot: the serialisable state of a run at a state boundary, and the loop digest
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <fmt/format.h>

#include <algorithm>
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
  static constexpr int format_version = 1;

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

  /// The snapshot itself (copies everything).
  [[nodiscard]] snapshot materialize() const {
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
    return s;
  }
};

namespace detail {

inline json captured_record_to_json(const captured_record& r) {
  json j = json::object();
  j["output"] = r.output;
  j["stderr"] = r.stderr_output;
  j["exit_code"] = r.exit_code;
  j["duration_ms"] = r.duration_ms;
  j["verdict"] = r.verdict;
  return j;
}

inline json captured_to_json(const captured_map& m) {
  json j = json::object();
  for (const auto& [name, rec] : m) j[name] = captured_record_to_json(rec);
  return j;
}

inline json prev_record_to_json(const prev_record& p) {
  json j = json::object();
  j["state"] = p.state;
  j["output"] = p.output;
  j["stderr"] = p.stderr_output;
  j["exit_code"] = p.exit_code;
  j["verdict"] = p.verdict;
  j["details"] = p.details.to_json();
  if (!p.ran_action) j["ran_action"] = false;  // only then: older snapshots stay valid
  if (!p.evaluated) j["evaluated"] = false;    // likewise
  return j;
}

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

}  // namespace detail

/// @brief A stable digest of a loop definition: FNV-1a 64 of the canonical JSON
/// (`to_json(json&, const fsm_loop&)`, defaults omitted), as 16 lowercase hex digits.
/// `max_iterations` is left out: it is a limit, not the definition, so a run stopped by it
/// can be resumed with a higher one (`ll-loop resume NAME --max-iterations N`).
template <class Loop = fsm_loop>
std::string loop_digest(const Loop& loop) {
  json canonical;
  to_json(canonical, loop);
  if (canonical.is_object()) canonical.erase("max_iterations");
  return fmt::format("{:016x}",
                     detail::fnv1a_64(canonical.dump(-1, ' ', false, json::error_handler_t::replace)));
}

namespace detail {
template <class S>
json snapshot_raw_bytes(const S& s);
}  // namespace detail

/// The snapshot's JSON: `{"version", "loop", "digest", "current_state", "iteration",
/// "summary_executed", "context", "captured", "prev", ["last_evaluation",] "convergence",
/// "elapsed_ms", "started_at"[, "raw_bytes"]}` (`last_evaluation` only when set;
/// `raw_bytes` only when a string is not valid UTF-8: see detail::base64_encode's section).
inline json to_json(const snapshot& s) {
  json j = json::object();
  j["version"] = snapshot::format_version;
  j["loop"] = s.loop_name;
  j["digest"] = s.digest;
  j["current_state"] = s.current_state;
  j["iteration"] = s.iteration;
  j["summary_executed"] = s.summary_executed;
  j["context"] = s.context;
  j["captured"] = detail::captured_to_json(s.captured);
  j["prev"] = s.prev ? detail::prev_record_to_json(*s.prev) : json(nullptr);
  if (s.last_evaluation) j["last_evaluation"] = detail::prev_record_to_json(*s.last_evaluation);
  json conv = json::object();
  for (const auto& [state, value] : s.convergence) conv[state] = value;
  j["convergence"] = std::move(conv);
  j["elapsed_ms"] = s.elapsed_ms;
  j["started_at"] = s.started_at;
  if (json raw = detail::snapshot_raw_bytes(s); !raw.empty()) j["raw_bytes"] = std::move(raw);
  return j;
}

/// ADL hook so `json j = snap;` works.
inline void to_json(json& j, const snapshot& s) { j = to_json(s); }

namespace detail {

inline bool append_captured_record_json(std::string& out, const captured_record& r) {
  using namespace std::string_view_literals;
  out += "{\"output\":"sv;
  bool replaced = append_json_string(out, r.output);
  out += ",\"stderr\":"sv;
  replaced |= append_json_string(out, r.stderr_output);
  out += ",\"exit_code\":"sv;
  append_json_integer(out, r.exit_code);
  out += ",\"duration_ms\":"sv;
  append_json_integer(out, r.duration_ms);
  out += ",\"verdict\":"sv;
  replaced |= append_json_string(out, r.verdict);
  out += '}';
  return replaced;
}

inline bool append_prev_record_json(std::string& out, const prev_record& p) {
  using namespace std::string_view_literals;
  out += "{\"state\":"sv;
  bool replaced = append_json_string(out, p.state);
  out += ",\"output\":"sv;
  replaced |= append_json_string(out, p.output);
  out += ",\"stderr\":"sv;
  replaced |= append_json_string(out, p.stderr_output);
  out += ",\"exit_code\":"sv;
  append_json_integer(out, p.exit_code);
  out += ",\"verdict\":"sv;
  replaced |= append_json_string(out, p.verdict);
  out += ",\"details\":"sv;
  replaced |= append_json_text(out, p.details.to_json());
  if (!p.ran_action) out += ",\"ran_action\":false"sv;
  if (!p.evaluated) out += ",\"evaluated\":false"sv;
  out += '}';
  return replaced;
}

}  // namespace detail

namespace detail {
// --- Bytes that are not UTF-8 -----------------------------------------------------------
// JSON text holds only Unicode, so a string that is not valid UTF-8 (an action's raw output,
// a `--context` value) is written with U+FFFD in place of each ill-formed sequence. So that a
// resumed run sees the bytes the stopped one had, the snapshot then also carries
// `"raw_bytes": {POINTER: BYTES}`: for each such string value, its RFC 6901 JSON Pointer
// into the snapshot object, and either its exact bytes in base64 (RFC 4648, padded), or,
// when shorter (a big output with a few stray bytes), the patches `[[OFFSET, BASE64], …]`:
// at byte OFFSET of the string as written, the U+FFFDs of a run of ill-formed sequences
// stand for those bytes. Written only when needed; snapshot_from_json() puts the bytes
// back, after checking that each entry restores what its string replaced. Strings inside
// an object with a key that is not UTF-8 cannot be pointed at reliably (written, that key
// may equal another), and stay replaced.

inline std::string base64_encode(std::string_view bytes) {
  static constexpr char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8) | p[i + 2];
    for (int shift : {18, 12, 6, 0}) out += alphabet[(v >> shift) & 0x3F];
  }
  if (const std::size_t rest = bytes.size() - i; rest != 0) {
    std::uint32_t v = std::uint32_t{p[i]} << 16;
    if (rest == 2) v |= std::uint32_t{p[i + 1]} << 8;
    out += alphabet[(v >> 18) & 0x3F];
    out += alphabet[(v >> 12) & 0x3F];
    out += rest == 2 ? alphabet[(v >> 6) & 0x3F] : '=';
    out += '=';
  }
  return out;
}

/// Strict base64 (padded, no line breaks or spaces, zero unused bits); nullopt otherwise.
inline std::optional<std::string> base64_decode(std::string_view text) {
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const std::size_t pad = !last ? 0 : text[i + 3] != '=' ? 0 : text[i + 2] != '=' ? 1 : 2;
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      int d = 0;
      if (k < 4 - pad) {
        d = value(text[i + k]);
        if (d < 0) return std::nullopt;
      }
      v = (v << 6) | static_cast<std::uint32_t>(d);
    }
    if ((pad == 1 && (v & 0xFF) != 0) || (pad == 2 && (v & 0xFFFF) != 0)) return std::nullopt;
    out += static_cast<char>((v >> 16) & 0xFF);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(v & 0xFF);
  }
  return out;
}

/// `pointer` + "/" + `key` with `~` and `/` escaped (RFC 6901).
inline std::string json_pointer_child(std::string_view pointer, std::string_view key) {
  std::string out(pointer);
  out.reserve(out.size() + key.size() + 1);
  out += '/';
  for (const char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

// Calls `run(offset_written, bytes)` for each run of ill-formed sequences of `value`, in
// order, until it returns false.
// (`run` is also told the length of `value` read so far, up to the run's end.)
template <class Run>
void for_each_ill_formed_run(std::string_view value, Run&& run) {
  const auto* p = reinterpret_cast<const unsigned char*>(value.data());
  const std::size_t n = value.size();
  std::size_t written_at = 0, i = 0;
  while (i < n) {
    if (p[i] < 0x80) {
      ++i;
      ++written_at;
      continue;
    }
    utf8_sequence seq = utf8_sequence_at(p, i, n);
    if (seq.well_formed) {
      i += seq.length;
      written_at += seq.length;
      continue;
    }
    const std::size_t run_start = i, run_at = written_at;
    while (!seq.well_formed) {
      i += seq.length;
      written_at += 3;  // one U+FFFD
      if (i == n || p[i] < 0x80) break;
      seq = utf8_sequence_at(p, i, n);
    }
    if (!run(run_at, value.substr(run_start, i - run_start), i)) return;
  }
}

inline void collect_raw_string(std::string_view value, std::string_view pointer, json& out) {
  if (is_valid_utf8(value)) return;
  // Patches when they are shorter than the whole string in base64 (a big output with a few
  // stray bytes). They are sized first, and given up as soon as they outgrow the base64 of
  // what has been read: binary output has a run after nearly every byte, and no JSON is
  // built for a form that loses.
  const auto base64_size = [](std::size_t n) { return (n + 2) / 3 * 4; };
  std::size_t patches_size = 2;
  bool sparse = true;
  for_each_ill_formed_run(value, [&](std::size_t at, std::string_view bytes, std::size_t read) {
    std::size_t digits = 1;
    for (std::size_t v = at; v >= 10; v /= 10) ++digits;
    patches_size += base64_size(bytes.size()) + digits + 6;
    sparse = patches_size < base64_size(read) + 64;
    return sparse;
  });
  if (!sparse || patches_size >= base64_size(value.size()) + 2) {
    out[std::string(pointer)] = base64_encode(value);
    return;
  }
  json patches = json::array();
  for_each_ill_formed_run(value, [&](std::size_t at, std::string_view bytes, std::size_t) {
    patches.push_back(json::array({at, base64_encode(bytes)}));
    return true;
  });
  out[std::string(pointer)] = std::move(patches);
}

inline void collect_raw_bytes(const json& v, const std::string& pointer, json& out) {
  if (v.is_string()) {
    collect_raw_string(v.get_ref<const json::string_t&>(), pointer, out);
  } else if (v.is_array()) {
    std::size_t i = 0;
    for (const json& element : v) collect_raw_bytes(element, json_pointer_child(pointer, std::to_string(i++)), out);
  } else if (v.is_object()) {
    const auto& members = v.get_ref<const json::object_t&>();
    for (const auto& [key, value] : members)
      if (!is_valid_utf8(key)) return;  // (see above)
    for (const auto& [key, value] : members) collect_raw_bytes(value, json_pointer_child(pointer, key), out);
  }
}

inline void collect_prev_raw_bytes(const prev_record& p, const std::string& pointer, json& out) {
  collect_raw_string(p.state, pointer + "/state", out);
  collect_raw_string(p.output, pointer + "/output", out);
  collect_raw_string(p.stderr_output, pointer + "/stderr", out);
  collect_raw_string(p.verdict, pointer + "/verdict", out);
  collect_raw_bytes(p.details.to_json(), pointer + "/details", out);
}



inline const json& snapshot_member(const json& j) noexcept { return j; }
inline const json& snapshot_member(const json* j) noexcept {
  static const json empty = json::object();
  return j != nullptr ? *j : empty;
}
inline const prev_record* snapshot_ptr(const std::optional<prev_record>& p) noexcept { return p ? &*p : nullptr; }
inline const prev_record* snapshot_ptr(const prev_record* p) noexcept { return p; }
inline const captured_map& snapshot_member(const captured_map& c) noexcept { return c; }
inline const captured_map& snapshot_member(const captured_map* c) noexcept {
  static const captured_map empty;
  return c != nullptr ? *c : empty;
}

/// The `raw_bytes` member of a snapshot (empty when every string is UTF-8); `S`: snapshot or
/// snapshot_view. The members walked are those append_snapshot_json_of writes.
template <class S>
json snapshot_raw_bytes(const S& s) {
  json out = json::object();
  collect_raw_string(s.loop_name, "/loop", out);
  collect_raw_string(s.digest, "/digest", out);
  collect_raw_string(s.current_state, "/current_state", out);
  collect_raw_bytes(snapshot_member(s.context), "/context", out);
  const auto& captured = snapshot_member(s.captured);
  const bool names_ok = std::all_of(captured.begin(), captured.end(),
                                    [](const auto& entry) { return is_valid_utf8(entry.first); });
  for (const auto& [name, rec] : captured) {
    if (!names_ok) break;  // (see above)
    const std::string at = json_pointer_child("/captured", name);
    collect_raw_string(rec.output, at + "/output", out);
    collect_raw_string(rec.stderr_output, at + "/stderr", out);
    collect_raw_string(rec.verdict, at + "/verdict", out);
  }
  if (const prev_record* p = snapshot_ptr(s.prev)) collect_prev_raw_bytes(*p, "/prev", out);
  if (const prev_record* p = snapshot_ptr(s.last_evaluation))
    collect_prev_raw_bytes(*p, "/last_evaluation", out);
  collect_raw_string(s.started_at, "/started_at", out);
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
  bool replaced = false;  // a string is not UTF-8: raw_bytes then keeps its bytes
  out += "{\"version\":"sv;
  append_json_integer(out, snapshot::format_version);
  out += ",\"loop\":"sv;
  replaced |= append_json_string(out, s.loop_name);
  out += ",\"digest\":"sv;
  replaced |= append_json_string(out, s.digest);
  out += ",\"current_state\":"sv;
  replaced |= append_json_string(out, s.current_state);
  out += ",\"iteration\":"sv;
  append_json_integer(out, s.iteration);
  out += ",\"summary_executed\":"sv;
  out += s.summary_executed ? "true"sv : "false"sv;
  out += ",\"context\":"sv;
  replaced |= append_json_text(out, snapshot_member(s.context));
  out += ",\"captured\":{"sv;
  bool first = true;
  for (const auto& [name, rec] : snapshot_member(s.captured)) {
    if (!std::exchange(first, false)) out += ',';
    replaced |= append_json_string(out, name);
    out += ':';
    replaced |= append_captured_record_json(out, rec);
  }
  out += "},\"prev\":"sv;
  if (s.prev)
    replaced |= append_prev_record_json(out, *s.prev);
  else
    out += "null"sv;
  if (s.last_evaluation) {
    out += ",\"last_evaluation\":"sv;
    replaced |= append_prev_record_json(out, *s.last_evaluation);
  }
  out += ",\"convergence\":{"sv;
  first = true;
  for (const auto& [state, value] : s.convergence) {
    if (!std::exchange(first, false)) out += ',';
    replaced |= append_json_string(out, state);
    out += ':';
    append_json_text(out, json(value));
  }
  out += "},\"elapsed_ms\":"sv;
  append_json_integer(out, s.elapsed_ms);
  out += ",\"started_at\":"sv;
  replaced |= append_json_string(out, s.started_at);
  if (replaced) {
    if (const json raw = snapshot_raw_bytes(s); !raw.empty()) {
      out += ",\"raw_bytes\":"sv;
      append_json_text(out, raw);
    }
  }
  out += '}';
}

}  // namespace detail

/// Appends the snapshot's JSON text: the same bytes as
/// `to_json(s).dump(-1, ' ', false, json::error_handler_t::replace)`, written straight from
/// the typed snapshot (a journal writes one at every state boundary).
inline void append_snapshot_json(std::string& out, const snapshot& s) {
  detail::append_snapshot_json_of(out, s);
}
/// @copydoc append_snapshot_json(std::string&, const snapshot&)
/// The same bytes as for `v.materialize()`.
inline void append_snapshot_json(std::string& out, const snapshot_view& v) {
  detail::append_snapshot_json_of(out, v);
}

namespace detail {

// A `prev` record (also `last_evaluation`) read back; `path` names it in errors.
inline expected<prev_record, error> read_prev_record(const json& v, const std::string& path) {
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


// Puts the bytes of a snapshot's `raw_bytes` back into (a copy of) its strings; `raw` is
// the member, `j` the snapshot object without it.
inline expected<void, error> restore_raw_bytes(json& j, const json& raw) {
  if (!raw.is_object())
    return unexpected(snapshot_error("raw_bytes", fmt::format("must be an object, not {}",
                                                              snapshot_json_kind(raw))));
  for (auto it = raw.begin(); it != raw.end(); ++it) {
    const std::string& pointer = it.key();
    const std::string where = "raw_bytes." + pointer;
    if (!it->is_string() && !it->is_array())
      return unexpected(snapshot_error(
          where, fmt::format("must be a string (base64) or an array of [offset, base64] patches, not {}",
                             snapshot_json_kind(*it))));
    std::optional<std::string> whole;
    if (it->is_string()) {
      whole = base64_decode(it->get_ref<const json::string_t&>());
      if (!whole) return unexpected(snapshot_error(where, "is not base64"));
    }
    if (pointer.empty() || pointer.front() != '/')
      return unexpected(snapshot_error(where, "the key is not a JSON Pointer to a string"));
    json* at = &j;
    std::size_t pos = 1;
    for (;;) {
      const std::size_t slash = pointer.find('/', pos);
      const std::string_view escaped =
          std::string_view(pointer).substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
      std::string token;
      for (std::size_t i = 0; i < escaped.size(); ++i) {
        if (escaped[i] != '~') {
          token += escaped[i];
        } else if (i + 1 < escaped.size() && (escaped[i + 1] == '0' || escaped[i + 1] == '1')) {
          token += escaped[++i] == '0' ? '~' : '/';
        } else {
          return unexpected(snapshot_error(where, "the key is not a JSON Pointer (a '~' not followed by 0 or 1)"));
        }
      }
      json* next = nullptr;
      if (at->is_object()) {
        if (auto found = at->find(token); found != at->end()) next = &*found;
      } else if (at->is_array() && !token.empty() && token.size() < 10 &&
                 token.find_first_not_of("0123456789") == std::string::npos &&
                 (token.size() == 1 || token[0] != '0')) {
        if (const std::size_t index = std::stoul(token); index < at->size()) next = &(*at)[index];
      }
      if (next == nullptr)
        return unexpected(snapshot_error(where, "names nothing in the snapshot"));
      at = next;
      if (slash == std::string::npos) break;
      pos = slash + 1;
    }
    if (!at->is_string())
      return unexpected(snapshot_error(where, fmt::format("names {}, not a string",
                                                          snapshot_json_kind(*at))));
    const std::string& text = at->get_ref<const json::string_t&>();
    std::string bytes;
    if (whole) {
      bytes = std::move(*whole);
    } else {
      // Patches, in order, each over U+FFFDs of the text.
      if (it->empty()) return unexpected(snapshot_error(where, "an empty list of patches"));
      std::size_t copied = 0;
      for (std::size_t k = 0; k < it->size(); ++k) {
        const json& patch = (*it)[k];
        const std::string at_patch = fmt::format("{}[{}]", where, k);
        if (!patch.is_array() || patch.size() != 2 || !patch[0].is_number_unsigned() || !patch[1].is_string())
          return unexpected(snapshot_error(at_patch, "a patch is [offset, base64]"));
        const auto offset = patch[0].get<std::uint64_t>();
        auto run = base64_decode(patch[1].get_ref<const json::string_t&>());
        if (!run || run->empty()) return unexpected(snapshot_error(at_patch, "is not base64 of some bytes"));
        std::string replaced;  // what the run is written as
        append_json_string(replaced, *run);
        replaced = replaced.substr(1, replaced.size() - 2);
        if (offset < copied || offset > text.size() || text.compare(offset, replaced.size(), replaced) != 0)
          return unexpected(snapshot_error(at_patch, "does not match the string it restores"));
        bytes.append(text, copied, offset - copied);
        bytes += *run;
        copied = offset + replaced.size();
      }
      bytes.append(text, copied, std::string::npos);
    }
    // The bytes must be what the string stands for: written out, they give its text.
    std::string written, stored;
    append_json_string(written, bytes);
    append_json_string(stored, text);
    if (written != stored)
      return unexpected(snapshot_error(where, "does not match the string it restores"));
    *at = std::move(bytes);
  }
  return {};
}

}  // namespace detail

/// @brief Read a snapshot strictly: every key required, no unknown keys, types checked.
/// Strings listed in `raw_bytes` get their exact bytes back (a checked entry per string).
/// @return the snapshot, or `errc::invalid_snapshot` with the path of the offending field.
inline expected<snapshot, error> snapshot_from_json(const json& j) {
  using detail::snapshot_error;
  if (!j.is_object())
    return unexpected(snapshot_error("", "a snapshot must be a JSON object"));
  if (const auto raw = j.find("raw_bytes"); raw != j.end()) {
    json restored = j;
    restored.erase("raw_bytes");
    if (auto ok = detail::restore_raw_bytes(restored, *raw); !ok) return unexpected(std::move(ok.error()));
    return snapshot_from_json(restored);
  }
  if (auto k = detail::snapshot_keys(j,
                                  {"version", "loop", "digest", "current_state", "iteration",
                                   "summary_executed", "context", "captured", "prev",
                                   "last_evaluation", "convergence", "elapsed_ms",
                                   "started_at"},
                                  "");
      !k)
    return unexpected(k.error());
  auto version = detail::snapshot_integer<std::int64_t>(j, "version", "");
  if (!version) return unexpected(version.error());
  if (*version != snapshot::format_version)
    return unexpected(snapshot_error(
        "version", fmt::format("unsupported snapshot version {} (this library reads {})",
                               *version, snapshot::format_version)));
  snapshot s;
  auto name = detail::snapshot_string(j, "loop", "");
  if (!name) return unexpected(name.error());
  s.loop_name = std::move(*name);
  auto digest = detail::snapshot_string(j, "digest", "");
  if (!digest) return unexpected(digest.error());
  s.digest = std::move(*digest);
  auto current = detail::snapshot_string(j, "current_state", "");
  if (!current) return unexpected(current.error());
  s.current_state = std::move(*current);
  auto iteration = detail::snapshot_integer<std::int64_t>(j, "iteration", "");
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

  auto captured = j.find("captured");
  if (captured == j.end() || !captured->is_object())
    return unexpected(snapshot_error("captured", "must be an object"));
  for (auto it = captured->begin(); it != captured->end(); ++it) {
    const std::string path = "captured." + it.key();
    if (!it->is_object()) return unexpected(snapshot_error(path, "must be an object"));
    if (auto k = detail::snapshot_keys(*it, {"output", "stderr", "exit_code", "duration_ms", "verdict"},
                                    path);
        !k)
      return unexpected(k.error());
    captured_record rec;
    auto out = detail::snapshot_string(*it, "output", path);
    if (!out) return unexpected(out.error());
    rec.output = std::move(*out);
    auto err = detail::snapshot_string(*it, "stderr", path);
    if (!err) return unexpected(err.error());
    rec.stderr_output = std::move(*err);
    auto code = detail::snapshot_integer<int>(*it, "exit_code", path);
    if (!code) return unexpected(code.error());
    rec.exit_code = *code;
    auto dur = detail::snapshot_integer<std::int64_t>(*it, "duration_ms", path);
    if (!dur) return unexpected(dur.error());
    rec.duration_ms = *dur;
    auto verdict = detail::snapshot_string(*it, "verdict", path);
    if (!verdict) return unexpected(verdict.error());
    rec.verdict = std::move(*verdict);
    s.captured[it.key()] = std::move(rec);
  }

  auto prev = j.find("prev");
  if (prev == j.end()) return unexpected(snapshot_error("prev", "missing"));
  if (!prev->is_null()) {
    auto p = detail::read_prev_record(*prev, "prev");
    if (!p) return unexpected(std::move(p.error()));
    s.prev = std::move(*p);
  }
  if (auto last = j.find("last_evaluation"); last != j.end() && !last->is_null()) {
    auto p = detail::read_prev_record(*last, "last_evaluation");
    if (!p) return unexpected(std::move(p.error()));
    s.last_evaluation = std::move(*p);
  }

  auto conv = j.find("convergence");
  if (conv == j.end() || !conv->is_object())
    return unexpected(snapshot_error("convergence", "must be an object"));
  for (auto it = conv->begin(); it != conv->end(); ++it) {
    if (!it->is_number())
      return unexpected(snapshot_error("convergence." + it.key(), "must be a number"));
    s.convergence[it.key()] = it->get<double>();
  }
  auto elapsed = detail::snapshot_integer<std::int64_t>(j, "elapsed_ms", "");
  if (!elapsed) return unexpected(elapsed.error());
  if (*elapsed < 0) return unexpected(snapshot_error("elapsed_ms", "must not be negative"));
  s.elapsed_ms = *elapsed;
  auto started = detail::snapshot_string(j, "started_at", "");
  if (!started) return unexpected(started.error());
  s.started_at = std::move(*started);
  return s;
}

/// Parse snapshot text (`json::parse` without exceptions, then snapshot_from_json).
inline expected<snapshot, error> snapshot_from_json_text(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded())
    return unexpected(error{errc::parse_error, "snapshot text is not valid JSON"});
  return snapshot_from_json(j);
}

LITTLE_LOOPS_NAMESPACE_END
