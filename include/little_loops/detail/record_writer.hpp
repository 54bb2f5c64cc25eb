// little_loops — writers of a record's members: as a JSON object, or straight as its text
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// A record's members are listed once, in a function template over a writer `W` with this
// interface: string, integer, number, boolean, null, value (any JSON value) and object (a
// nested record, whose members a callable writes to the nested writer it is given). Writers:
//  - json_object_writer builds the JSON object;
//  - json_text_writer appends that object's text, the bytes of
//    `dump(-1, ' ', false, json::error_handler_t::replace)`, without building it;
//  - raw_bytes_writer (detail/raw_bytes.hpp) collects the strings that are not UTF-8.

/// Builds the record as a JSON object, member by member.
class json_object_writer {
 public:
  json_object_writer();  // an empty object
  void string(std::string_view key, std::string_view value);
  void integer(std::string_view key, std::int64_t value);
  void number(std::string_view key, double value);
  void boolean(std::string_view key, bool value);
  void null(std::string_view key);
  void value(std::string_view key, const json& v);
  template <class Members>
  void object(std::string_view key, Members&& members) {
    json_object_writer inner;
    std::forward<Members>(members)(inner);
    j_[std::string(key)] = inner.take();
  }
  /// The object built.
  json take();

 private:
  json j_;
};

/// Appends the record's JSON text, member by member: `{` now, `}` at finish().
class json_text_writer {
 public:
  explicit json_text_writer(std::string& out) : out_(out) { out_ += '{'; }

  void string(std::string_view key, std::string_view value);
  void integer(std::string_view key, std::int64_t value);
  void number(std::string_view key, double value);
  void boolean(std::string_view key, bool value);
  void null(std::string_view key);
  void value(std::string_view key, const json& v);
  template <class Members>
  void object(std::string_view key, Members&& members) {
    name(key);
    json_text_writer inner(out_);
    std::forward<Members>(members)(inner);
    replaced_ |= inner.finish();
  }
  /// Closes the object. True when a string or key in it was not valid UTF-8 (and was written
  /// with U+FFFD replacements).
  bool finish() {
    out_ += '}';
    return replaced_;
  }

 protected:
  /// Writes `"key":`, after a comma from the second member on.
  void name(std::string_view key);

  std::string& out_;

 private:
  bool first_ = true;
  bool replaced_ = false;
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library

LITTLE_LOOPS_INLINE json_object_writer::json_object_writer() : j_(json::object()) {}
LITTLE_LOOPS_INLINE void json_object_writer::string(std::string_view key, std::string_view value) {
  j_[std::string(key)] = value;
}
LITTLE_LOOPS_INLINE void json_object_writer::integer(std::string_view key, std::int64_t value) {
  j_[std::string(key)] = value;
}
LITTLE_LOOPS_INLINE void json_object_writer::number(std::string_view key, double value) {
  j_[std::string(key)] = value;
}
LITTLE_LOOPS_INLINE void json_object_writer::boolean(std::string_view key, bool value) {
  j_[std::string(key)] = value;
}
LITTLE_LOOPS_INLINE void json_object_writer::null(std::string_view key) {
  j_[std::string(key)] = nullptr;
}
LITTLE_LOOPS_INLINE void json_object_writer::value(std::string_view key, const json& v) {
  j_[std::string(key)] = v;
}
LITTLE_LOOPS_INLINE json json_object_writer::take() { return std::move(j_); }

LITTLE_LOOPS_INLINE void json_text_writer::string(std::string_view key, std::string_view value) {
  name(key);
  replaced_ |= append_json_string(out_, value);
}
LITTLE_LOOPS_INLINE void json_text_writer::integer(std::string_view key, std::int64_t value) {
  name(key);
  append_json_integer(out_, value);
}
LITTLE_LOOPS_INLINE void json_text_writer::number(std::string_view key, double value) {
  name(key);
  append_json_text(out_, json(value));
}
LITTLE_LOOPS_INLINE void json_text_writer::boolean(std::string_view key, bool value) {
  using namespace std::string_view_literals;
  name(key);
  out_ += value ? "true"sv : "false"sv;
}
LITTLE_LOOPS_INLINE void json_text_writer::null(std::string_view key) {
  using namespace std::string_view_literals;
  name(key);
  out_ += "null"sv;
}
LITTLE_LOOPS_INLINE void json_text_writer::value(std::string_view key, const json& v) {
  name(key);
  replaced_ |= append_json_text(out_, v);
}
LITTLE_LOOPS_INLINE void json_text_writer::name(std::string_view key) {
  if (!first_) out_ += ',';
  first_ = false;
  replaced_ |= append_json_string(out_, key);
  out_ += ':';
}

#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
