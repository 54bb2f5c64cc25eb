// little_loops — `raw_bytes`: the exact bytes of a snapshot's strings that are not UTF-8
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/base64.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/json.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format
#  include <fmt/format.h>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

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

LITTLE_LOOPS_INLINE std::string json_pointer_child(std::string_view pointer, std::string_view key);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `pointer` + "/" + `key` with `~` and `/` escaped (RFC 6901).
LITTLE_LOOPS_INLINE std::string json_pointer_child(std::string_view pointer, std::string_view key) {
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
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

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

LITTLE_LOOPS_INLINE void collect_raw_string(std::string_view value, std::string_view pointer, json& out);
LITTLE_LOOPS_INLINE void collect_raw_bytes(const json& v, const std::string& pointer, json& out);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE void collect_raw_string(std::string_view value, std::string_view pointer, json& out) {
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

LITTLE_LOOPS_INLINE void collect_raw_bytes(const json& v, const std::string& pointer, json& out) {
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
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// The writer of a record's members (detail/record_writer.hpp) that collects the record's
/// `raw_bytes` entries: those of its strings that are not UTF-8, at their JSON Pointers.
class raw_bytes_writer {
 public:
  /// Entries are added to `out` (an object); `pointer` is the record's own.
  raw_bytes_writer(json& out, std::string pointer);

  void string(std::string_view key, std::string_view value);
  void value(std::string_view key, const json& v);
  void integer(std::string_view key, std::int64_t /*value*/) { member(key); }
  void number(std::string_view key, double /*value*/) { member(key); }
  void boolean(std::string_view key, bool /*value*/) { member(key); }
  void null(std::string_view key) { member(key); }
  template <class Members>
  void object(std::string_view key, Members&& members) {
    if (!member(key)) return;
    raw_bytes_writer inner(out_, json_pointer_child(pointer_, key));
    std::forward<Members>(members)(inner);
  }

 private:
  // False from the first key that is not UTF-8 on: the object's strings then stay replaced
  // (see above), and the entries already collected for it are dropped.
  bool member(std::string_view key);

  json& out_;
  std::string pointer_;
  std::size_t mark_;
  bool dropped_ = false;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE raw_bytes_writer::raw_bytes_writer(json& out, std::string pointer)
    : out_(out), pointer_(std::move(pointer)), mark_(out.size()) {}

LITTLE_LOOPS_INLINE void raw_bytes_writer::string(std::string_view key, std::string_view value) {
  if (member(key) && !is_valid_utf8(value))
    collect_raw_string(value, json_pointer_child(pointer_, key), out_);
}

LITTLE_LOOPS_INLINE void raw_bytes_writer::value(std::string_view key, const json& v) {
  if (member(key)) collect_raw_bytes(v, json_pointer_child(pointer_, key), out_);
}

LITTLE_LOOPS_INLINE bool raw_bytes_writer::member(std::string_view key) {
  if (dropped_) return false;
  if (is_valid_utf8(key)) return true;
  dropped_ = true;
  auto& entries = out_.get_ref<json::object_t&>();
  while (entries.size() > mark_) entries.Container::pop_back();
  return false;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

// --- Reading `raw_bytes` back ---------------------------------------------------------

/// Why a `raw_bytes` entry was refused: where (`raw_bytes.POINTER`, `[K]` for a patch), and why.
struct raw_bytes_problem {
  std::string where;
  std::string message;
};

/// Names the kind of a JSON value in messages ("an object", "a string", …).
using json_kind_fn = std::string_view (*)(const json&);

LITTLE_LOOPS_INLINE std::optional<std::string> json_pointer_token(std::string_view escaped);
LITTLE_LOOPS_INLINE json* json_pointer_step(json& at, const std::string& token);
LITTLE_LOOPS_INLINE json* find_json_pointer(json& root, std::string_view pointer, std::string& message);
LITTLE_LOOPS_INLINE std::optional<raw_bytes_problem> apply_raw_patches(const json& patches, const std::string& text,
                                                          const std::string& where, std::string& bytes);
LITTLE_LOOPS_INLINE std::optional<raw_bytes_problem> restore_raw_string(json& j, const std::string& pointer,
                                                           const json& entry, json_kind_fn kind);
LITTLE_LOOPS_INLINE std::optional<raw_bytes_problem> restore_raw_bytes(json& j, const json& raw, json_kind_fn kind);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// One reference token of a JSON Pointer, unescaped; nullopt for a `~` not followed by 0 or 1.
LITTLE_LOOPS_INLINE std::optional<std::string> json_pointer_token(std::string_view escaped) {
  std::string token;
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '~') {
      token += escaped[i];
    } else if (i + 1 < escaped.size() && (escaped[i + 1] == '0' || escaped[i + 1] == '1')) {
      token += escaped[++i] == '0' ? '~' : '/';
    } else {
      return std::nullopt;
    }
  }
  return token;
}

/// The member `token` names in `at`: an object's key, or an array's index written in
/// decimal without leading zeros; null when it names nothing.
LITTLE_LOOPS_INLINE json* json_pointer_step(json& at, const std::string& token) {
  if (at.is_object()) {
    if (auto found = at.find(token); found != at.end()) return &*found;
  } else if (at.is_array() && !token.empty() && token.size() < 10 &&
             token.find_first_not_of("0123456789") == std::string::npos &&
             (token.size() == 1 || token[0] != '0')) {
    if (const std::size_t index = std::stoul(token); index < at.size()) return &at[index];
  }
  return nullptr;
}

/// The value `pointer` names in `root`; null, with `message` saying why, when it names none.
LITTLE_LOOPS_INLINE json* find_json_pointer(json& root, std::string_view pointer, std::string& message) {
  if (pointer.empty() || pointer.front() != '/') {
    message = "the key is not a JSON Pointer to a string";
    return nullptr;
  }
  json* at = &root;
  std::size_t pos = 1;
  for (;;) {
    const std::size_t slash = pointer.find('/', pos);
    const auto token = json_pointer_token(
        pointer.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos));
    if (!token) {
      message = "the key is not a JSON Pointer (a '~' not followed by 0 or 1)";
      return nullptr;
    }
    at = json_pointer_step(*at, *token);
    if (at == nullptr) {
      message = "names nothing in the snapshot";
      return nullptr;
    }
    if (slash == std::string_view::npos) return at;
    pos = slash + 1;
  }
}

/// The bytes of `text` with the patches `[[OFFSET, BASE64], …]` applied, in order, each over
/// U+FFFDs of the text; or why not (`where` names the entry).
LITTLE_LOOPS_INLINE std::optional<raw_bytes_problem> apply_raw_patches(const json& patches, const std::string& text,
                                                          const std::string& where, std::string& bytes) {
  if (patches.empty()) return raw_bytes_problem{where, "an empty list of patches"};
  std::size_t copied = 0;
  for (std::size_t k = 0; k < patches.size(); ++k) {
    const json& patch = patches[k];
    std::string at_patch = fmt::format("{}[{}]", where, k);
    if (!patch.is_array() || patch.size() != 2 || !patch[0].is_number_unsigned() || !patch[1].is_string())
      return raw_bytes_problem{std::move(at_patch), "a patch is [offset, base64]"};
    const auto offset = patch[0].get<std::uint64_t>();
    auto run = base64_decode(patch[1].get_ref<const json::string_t&>());
    if (!run || run->empty())
      return raw_bytes_problem{std::move(at_patch), "is not base64 of some bytes"};
    std::string replaced;  // what the run is written as
    append_json_string(replaced, *run);
    replaced = replaced.substr(1, replaced.size() - 2);
    if (offset < copied || offset > text.size() || text.compare(offset, replaced.size(), replaced) != 0)
      return raw_bytes_problem{std::move(at_patch), "does not match the string it restores"};
    bytes.append(text, copied, offset - copied);
    bytes += *run;
    copied = offset + replaced.size();
  }
  bytes.append(text, copied, std::string::npos);
  return std::nullopt;
}

/// Puts the bytes of the `raw_bytes` entry `pointer` → `entry` back into the string of `j`
/// it names, after checking that they are what the string replaced.
LITTLE_LOOPS_INLINE std::optional<raw_bytes_problem> restore_raw_string(json& j, const std::string& pointer,
                                                           const json& entry, json_kind_fn kind) {
  const std::string where = "raw_bytes." + pointer;
  const auto fail = [&](std::string message) { return raw_bytes_problem{where, std::move(message)}; };
  if (!entry.is_string() && !entry.is_array())
    return fail(fmt::format("must be a string (base64) or an array of [offset, base64] patches, not {}",
                            kind(entry)));
  std::optional<std::string> whole;
  if (entry.is_string()) {
    whole = base64_decode(entry.get_ref<const json::string_t&>());
    if (!whole) return fail("is not base64");
  }
  std::string message;
  json* at = find_json_pointer(j, pointer, message);
  if (at == nullptr) return fail(std::move(message));
  if (!at->is_string()) return fail(fmt::format("names {}, not a string", kind(*at)));
  const std::string& text = at->get_ref<const json::string_t&>();
  std::string bytes;
  if (whole)
    bytes = std::move(*whole);
  else if (auto problem = apply_raw_patches(entry, text, where, bytes))
    return problem;
  // The bytes must be what the string stands for: written out, they give its text.
  std::string written, stored;
  append_json_string(written, bytes);
  append_json_string(stored, text);
  if (written != stored) return fail("does not match the string it restores");
  *at = std::move(bytes);
  return std::nullopt;
}

/// Puts the bytes of a snapshot's `raw_bytes` back into (a copy of) its strings; `raw` is
/// the member, `j` the snapshot object without it.
LITTLE_LOOPS_INLINE std::optional<raw_bytes_problem> restore_raw_bytes(json& j, const json& raw, json_kind_fn kind) {
  if (!raw.is_object())
    return raw_bytes_problem{"raw_bytes", fmt::format("must be an object, not {}", kind(raw))};
  for (auto it = raw.begin(); it != raw.end(); ++it)
    if (auto problem = restore_raw_string(j, it.key(), *it, kind)) return problem;
  return std::nullopt;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
