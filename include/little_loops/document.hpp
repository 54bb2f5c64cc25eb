// little_loops — documents: reading files, detecting YAML or JSON, positions of values
// SPDX-License-Identifier: MIT
#pragma once

// The first stage of loading: text → document (little_loops::json) with the position of
// each value, kept by the parser that read it. JSON needs nothing beyond the core; YAML
// documents come from the opt-in <little_loops/yaml_loader.hpp> (yaml-cpp).

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/json_positions.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// A position in a source file; line and column are 1-based.
struct source_location {
  std::string file;
  int line = 0;
  int column = 0;

  friend bool operator==(const source_location&, const source_location&) = default;
};

/// Where each value of a loaded document came from: document path (the dotted form used
/// by diagnostics, e.g. `states.fix.evaluate.operator`, `scope[0]`) → file, line and column.
/// For a mapping member the position is its key's; for a list item and the root, the
/// value's. A composed document (compose.hpp) holds values from several files: each
/// position names its own file; file_name() is the file the document was loaded from.
class source_map {
 public:
  /// The file name used in positions (as given to the loader).
  [[nodiscard]] const std::string& file_name() const noexcept {
    static const std::string none;
    return files_.empty() ? none : files_.front();
  }
  void set_file_name(std::string name) {
    if (files_.empty()) files_.emplace_back();
    files_.front() = std::move(name);
  }

  /// Records the (1-based) position of `path` in file_name(); the first record of a path is
  /// kept.
  void add(std::string_view path, int line, int column) {
    if (files_.empty()) files_.emplace_back();
    insert(path, 0, line, column);
  }

  /// Records the position of `path` in `at.file`; the first record of a path is kept.
  void add(std::string_view path, const source_location& at) {
    insert(path, file_index(at.file), at.line, at.column);
  }

  /// The position recorded for exactly `path`, or nullopt.
  [[nodiscard]] std::optional<source_location> find(std::string_view path) const {
    const mark* m = lookup(path);
    if (m == nullptr) return std::nullopt;
    return source_location{files_[m->file], m->line, m->column};
  }

  /// The position of `path`, or of its nearest recorded ancestor (a diagnostic about a
  /// missing key points at the object that lacks it). nullopt when nothing is recorded.
  [[nodiscard]] std::optional<source_location> locate(std::string_view path) const {
    for (;;) {
      if (const mark* m = lookup(path))
        return source_location{files_[m->file], m->line, m->column};
      if (path.empty()) return std::nullopt;
      const auto cut = path.find_last_of(".[");
      path = path.substr(0, cut == std::string_view::npos ? 0 : cut);
    }
  }

  /// Number of recorded paths.
  [[nodiscard]] std::size_t size() const noexcept { return marks_.size(); }
  void clear() noexcept {
    marks_.clear();
    paths_.clear();
    index_.clear();
    files_.resize(1);
  }

 private:
  // The paths are kept back to back in one string and found through an open-addressing
  // index: a document of a million values costs a few allocations, not two per value (a
  // map of strings was a tenth of loading a large YAML mapping, its destruction included).
  struct mark {
    std::uint32_t file;
    int line;
    int column;
    std::size_t offset, length;  // the path: paths_[offset, offset + length)
    std::size_t hash;
  };

  std::string_view path_of(const mark& m) const noexcept {
    return std::string_view(paths_).substr(m.offset, m.length);
  }

  const mark* lookup(std::string_view path) const noexcept {
    if (index_.empty()) return nullptr;
    const std::size_t hash = std::hash<std::string_view>{}(path);
    const std::size_t mask = index_.size() - 1;
    for (std::size_t i = hash & mask; index_[i] != 0; i = (i + 1) & mask) {
      const mark& m = marks_[index_[i] - 1];
      if (m.hash == hash && path_of(m) == path) return &m;
    }
    return nullptr;
  }

  void insert(std::string_view path, std::uint32_t file, int line, int column) {
    if ((marks_.size() + 1) * 2 > index_.size()) grow();
    const std::size_t hash = std::hash<std::string_view>{}(path);
    const std::size_t mask = index_.size() - 1;
    std::size_t i = hash & mask;
    for (; index_[i] != 0; i = (i + 1) & mask) {
      const mark& m = marks_[index_[i] - 1];
      if (m.hash == hash && path_of(m) == path) return;  // the first record is kept
    }
    marks_.push_back(mark{file, line, column, paths_.size(), path.size(), hash});
    paths_ += path;
    index_[i] = marks_.size();
  }

  void grow() {
    index_.assign(index_.empty() ? 64 : index_.size() * 2, 0);
    const std::size_t mask = index_.size() - 1;
    for (std::size_t n = 0; n < marks_.size(); ++n) {
      std::size_t i = marks_[n].hash & mask;
      while (index_[i] != 0) i = (i + 1) & mask;
      index_[i] = n + 1;
    }
  }

  std::uint32_t file_index(const std::string& name) {
    for (std::size_t i = 0; i < files_.size(); ++i)
      if (files_[i] == name) return static_cast<std::uint32_t>(i);
    files_.push_back(name);
    return static_cast<std::uint32_t>(files_.size() - 1);
  }

  std::vector<std::string> files_{std::string()};
  std::vector<mark> marks_;
  std::string paths_;
  std::vector<std::size_t> index_;  // 0: free; else 1 + the mark's place in marks_
};

/// `file:line:col: error: path: message` (the position of `d.path` looked up in `map`);
/// without a position, `file: error: path: message`; without a map, to_string(d).
LITTLE_LOOPS_INLINE std::string format_diagnostic(const diagnostic& d, const source_map* map);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::string format_diagnostic(const diagnostic& d, const source_map* map) {
  if (map == nullptr) return to_string(d);
  if (const auto at = map->locate(d.path))
    return fmt::format("{}:{}:{}: {}", at->file, at->line, at->column, to_string(d));
  if (map->file_name().empty()) return to_string(d);
  return fmt::format("{}: {}", map->file_name(), to_string(d));
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Prefixes `e.message` with the position of the error (its path, else its first error
/// diagnostic's path) and sets `e.path` to the file name when it was empty. Diagnostics in
/// `e.details` are left unchanged (format each with format_diagnostic()).
LITTLE_LOOPS_INLINE error annotate_error(error e, const source_map& map);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE error annotate_error(error e, const source_map& map) {
  std::optional<source_location> at;
  if (!e.path.empty()) at = map.locate(e.path);
  if (!at)
    for (const auto& d : e.details)
      if (d.level == severity::error) {
        at = map.locate(d.path);
        break;
      }
  if (at)
    e.message = fmt::format("{}:{}:{}: {}", at->file, at->line, at->column, e.message);
  else if (!map.file_name().empty())
    e.message = fmt::format("{}: {}", map.file_name(), e.message);
  return e;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// How a document file is read: by extension `.yaml`/`.yml` → YAML, `.json` → JSON; any
/// other extension is JSON when its first non-blank character is `{`, else YAML.
enum class document_format { yaml, json };

/// Guesses the format of `path` (see document_format).
LITTLE_LOOPS_INLINE document_format detect_document_format(const std::filesystem::path& path, std::string_view text);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE document_format detect_document_format(const std::filesystem::path& path, std::string_view text) {
  const std::string ext = path.extension().string();
  if (ext == ".yaml" || ext == ".yml" || ext == ".YAML" || ext == ".YML") return document_format::yaml;
  if (ext == ".json" || ext == ".JSON") return document_format::json;
  const auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{' ? document_format::json
                                                               : document_format::yaml;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// The largest document file read_text_file() reads: far above any loop (a 2,000-state loop
/// is about 100 KB), far below what would exhaust memory while parsing.
inline constexpr std::uintmax_t max_document_file_bytes = std::uintmax_t{64} << 20;

/// Reads a whole regular file. errc::io_error (path = the file) when it does not exist, is
/// not a regular file (a directory; a FIFO or device, whose reading may block or never
/// end), is larger than max_document_file_bytes, or cannot be read.
LITTLE_LOOPS_INLINE expected<std::string, error> read_text_file(const std::filesystem::path& path);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE expected<std::string, error> read_text_file(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    return unexpected(error{errc::io_error,
                            "cannot open file: " + (ec ? ec.message() : std::string("no such file")),
                            path.string()});
  }
  if (fs::is_directory(st)) return unexpected(error{errc::io_error, "is a directory", path.string()});
  if (!fs::is_regular_file(st))
    return unexpected(error{errc::io_error, "not a regular file", path.string()});
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_document_file_bytes)
    return unexpected(error{errc::io_error,
                            fmt::format("file is larger than {} MiB ({} bytes)",
                                        max_document_file_bytes >> 20, size),
                            path.string()});
  std::ifstream in(path, std::ios::binary);
  if (!in) return unexpected(error{errc::io_error, "cannot open file", path.string()});
  // The size stat() gave, then 4 KiB reads to the end (procfs reports 0; a file may grow
  // meanwhile), stopping as soon as the limit is passed.
  std::string text(ec ? std::size_t{0} : static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return unexpected(error{errc::io_error, "cannot read file", path.string()});
  text.resize(static_cast<std::size_t>(in.gcount()));
  char more[4096];
  while (in && text.size() <= max_document_file_bytes) {
    in.read(more, sizeof more);
    text.append(more, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return unexpected(error{errc::io_error, "cannot read file", path.string()});
  if (text.size() > max_document_file_bytes)
    return unexpected(error{errc::io_error,
                            fmt::format("file is larger than {} MiB", max_document_file_bytes >> 20),
                            path.string()});
  return text;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Parses JSON text with the strict JSON reader (parse_json_text). When it is accepted and
/// `map` is given, the position of every value goes to `*map`, read from the same text.
/// Errors: errc::parse_error, the message prefixed with `file_name: `, error::path the file.
LITTLE_LOOPS_INLINE expected<json, error> parse_json_document(std::string_view text, std::string_view file_name,
                                                 source_map* map = nullptr);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE expected<json, error> parse_json_document(std::string_view text, std::string_view file_name,
                                                 source_map* map) {
  if (map != nullptr) {
    map->clear();
    map->set_file_name(std::string(file_name));
  }
  auto doc = parse_json_text(text);
  if (!doc) {
    error e = std::move(doc.error());
    e.message = fmt::format("{}: {}", file_name, e.message);
    if (e.path.empty()) e.path = std::string(file_name);
    return unexpected(std::move(e));
  }
  if (map != nullptr)
    detail::json_position_indexer(text).run(
        [&](std::string path, int line, int column) { map->add(std::move(path), line, column); });
  return doc;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END
