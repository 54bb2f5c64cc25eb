// little_loops — the position of every value of an accepted JSON text, by document path
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/json_scan.hpp>
#include <little_loops/detail/strings.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

// A JSON text that parse_json_text() accepted, walked once without building values: the
// root and every list item are reported at their value, every object member at its key
// (`add(path, line, column)`, 1-based, columns in bytes, as a YAML reader marks them).
// Nothing is checked: `text` is known to be well-formed.
class json_position_indexer {
 public:
  explicit json_position_indexer(std::string_view text) : text_(text) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = line_start_ = 3;
  }

  template <class Add>
  void run(Add&& add) {
    skip_blanks();
    add(std::string(), line_, column());
    enter(std::string());
    while (!stack_.empty()) {
      skip_blanks();
      const char c = at();
      if (c == '}' || c == ']') {
        ++pos_;
        stack_.pop_back();
        continue;
      }
      if (c == ',') {
        ++pos_;
        skip_blanks();
      }
      frame& top = stack_.back();
      std::string path;
      if (top.object) {
        const int line = line_, col = column();
        path = member_path(top.path, string_token());
        add(path, line, col);
        skip_blanks();
        ++pos_;  // ':'
        skip_blanks();
      } else {
        path = index_path(top.path, top.items++);
        add(path, line_, column());
      }
      enter(std::move(path));
    }
  }

 private:
  struct frame {
    bool object = false;
    std::string path;
    std::size_t items = 0;
  };

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;
  int line_ = 1;
  std::vector<frame> stack_;

  char at() const noexcept { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  int column() const noexcept { return static_cast<int>(pos_ - line_start_) + 1; }

  void skip_blanks() noexcept {
    for (; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
    }
  }

  // The string token at pos_, decoded; pos_ moves past it.
  std::string string_token() {
    const std::size_t start = pos_++;
    bool escaped = false;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\') {
        escaped = true;
        ++pos_;
      }
      ++pos_;
    }
    ++pos_;
    const std::string_view raw = text_.substr(start + 1, pos_ - start - 2);
    if (!escaped) return std::string(raw);
    std::string out;
    decode_json_string(raw, out);
    return out;
  }

  // The value at pos_: a container is opened (run() reads its members), a scalar skipped.
  void enter(std::string path) {
    const char c = at();
    if (c == '{' || c == '[') {
      stack_.push_back(frame{c == '{', std::move(path), 0});
      ++pos_;
      return;
    }
    if (c == '"') {
      (void)string_token();
      return;
    }
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' && text_[pos_] != ']' &&
           text_[pos_] != ' ' && text_[pos_] != '\t' && text_[pos_] != '\r' && text_[pos_] != '\n')
      ++pos_;
  }
};

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END
