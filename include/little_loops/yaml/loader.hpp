// little_loops — YAML loader: YAML text → little_loops::json with positions; YAML and JSON files → loops
// SPDX-License-Identifier: MIT
#pragma once

// Opt-in adapter (CMake target little_loops::yaml, needs yaml-cpp); fsm.hpp never includes it.
// A load runs in stages, each once: parse (text → document with the position of each value:
// yaml_to_json(), parse_json_document(), parse_document(); read_document() for a file), load
// (document → validated fsm_loop: compile_paradigm(), which compiles a paradigm spec and
// reads a loop document with load_loop(), validating once), then compile (compile_loop(),
// make_executor()). load_loop_yaml() and load_loop_file() are the first two together; they
// read one document: a loop built from others (`from:`, `import:`, ...) is loaded with
// load_loop_path() of <little_loops/yaml/file_resolver.hpp>, which composes it first.

#include <little_loops/config.hpp>
#include <little_loops/document.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/paradigms.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/yaml/detail/event_builder.hpp>
#include <little_loops/yaml/detail/syntax_hints.hpp>
#include <little_loops/yaml/limits.hpp>

#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <exception>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The position map filled by the YAML reader (the same type as for JSON).
using yaml_source_map = source_map;

/// kept; plain scalars resolved by YAML 1.1 rules (`true/false/yes/no/on/off` → bool, ints
/// incl. `0x`, `0o`-style `017`, `0b`, `_` separators and base 60, floats with a dot,
/// `~`/`null`/empty → null; timestamps stay strings); quoted and block scalars are strings;
/// anchors/aliases expanded; `<<` merge keys applied. Mapping keys are always their source
/// text (`yes:` is the key "yes"). Duplicate keys, non-scalar keys, tags other than the
/// standard `!!str/!!int/!!float/!!bool/!!null/!!map/!!seq`, several documents, and nesting
/// or size beyond `limits` are errc::parse_error with one diagnostic each (path, code,
/// "(line L, column C)" in the message). Syntax errors give `file:line:col: message`.
/// Never throws. An empty document is `null`. Positions go to `*map` when given.
inline expected<json, error> yaml_to_json(std::string_view text, std::string_view file_name = "<yaml>",
                                          source_map* map = nullptr,
                                          const yaml_limits& limits = {}) {
  if (map != nullptr) {
    map->clear();
    map->set_file_name(std::string(file_name));
  }
  const bool utf8 = detail::is_valid_utf8(text);
  if (utf8) {
    if (const auto bad = detail::find_unacceptable_char(text)) {
      const auto [line, column] = detail::line_and_column(text, bad->offset);
      std::string message = fmt::format(
          "{}:{}:{}: unacceptable character #x{:04x}: special characters are not allowed",
          file_name, line, column, static_cast<std::uint32_t>(bad->code));
      return unexpected(detail::yaml_error(std::move(message), file_name));
    }
  }
  // yaml-cpp's positions are byte offsets of the text unless it starts with a byte order mark.
  const bool bom = text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0;
  detail::yaml_json_builder builder(map, limits, utf8, utf8 && !bom ? text : std::string_view{});
  try {
    std::istringstream stream{std::string(text)};
    YAML::Parser parser(stream);
    if (parser.HandleNextDocument(builder)) {
      detail::yaml_json_builder extra(nullptr, limits);
      if (parser.HandleNextDocument(extra)) {
        std::string message = fmt::format("{}: expected a single document in the stream, found more",
                                          file_name);
        return unexpected(detail::yaml_error(std::move(message), file_name));
      }
    }
  } catch (const detail::yaml_abort&) {
    // diagnostics recorded by the builder
  } catch (const YAML::Exception& e) {
    const std::string what = e.msg.empty() ? std::string("invalid YAML") : e.msg;
    const auto line = static_cast<std::size_t>(e.mark.line + 1);
    const auto column = static_cast<std::size_t>(e.mark.column + 1);
    std::string message = fmt::format("{}:{}:{}: {}", file_name, line, column, what);
    if (const auto hint = detail::explain_yaml_error(text, e.mark.line < 0 ? 0 : line, column, what))
      message = fmt::format("{}:{}:{}: {} (YAML parser: {})", file_name, hint->line, hint->column,
                            hint->message, what);
    return unexpected(detail::yaml_error(std::move(message), file_name));
  } catch (const std::exception& e) {
    return unexpected(detail::yaml_error(fmt::format("{}: {}", file_name, e.what()), file_name));
  }
  if (!builder.found.empty()) {
    const auto& first = builder.found.front();
    std::string message = fmt::format("{}: invalid YAML: {}{}{}", file_name, first.path,
                                      first.path.empty() ? "" : ": ", first.message);
    return unexpected(error{errc::parse_error, std::move(message), std::string(file_name),
                            std::move(builder.found)});
  }
  if (utf8 && !bom) {
    if (const auto tab = detail::find_stray_tab(text, builder.verbatim_ranges())) {
      const auto [line, column] = detail::line_and_column(text, *tab);
      std::string message = fmt::format(
          "{}:{}:{}: found a tab character that cannot start any token (YAML takes tabs only "
          "inside quoted or block scalars and comments: indent and separate with spaces)",
          file_name, line, column);
      return unexpected(detail::yaml_error(std::move(message), file_name));
    }
  }
  if (!builder.have_root) return json(nullptr);
  return std::move(builder.root);
}


/// Parses document text in `format`: YAML by yaml_to_json(), JSON by parse_json_document();
/// positions go to `*map` when given.
inline expected<json, error> parse_document(std::string_view text, document_format format,
                                            std::string_view file_name, source_map* map = nullptr) {
  if (format == document_format::yaml) return yaml_to_json(text, file_name, map);
  return parse_json_document(text, file_name, map);
}

/// Reads a YAML or JSON document file (read_text_file(), detect_document_format(),
/// parse_document()).
inline expected<json, error> read_document(const std::filesystem::path& path,
                                           source_map* map = nullptr) {
  auto text = read_text_file(path);
  if (!text) return unexpected(std::move(text.error()));
  return parse_document(*text, detect_document_format(path, *text), path.string(), map);
}

namespace detail {

// compile_paradigm() of a parsed document; an error's message gets its position.
inline expected<fsm_loop, error> load_parsed(expected<json, error> doc, const source_map& positions,
                                             diagnostics* warnings) {
  if (!doc) return unexpected(std::move(doc.error()));
  auto loop = compile_paradigm(*doc, warnings);
  if (!loop) return unexpected(annotate_error(std::move(loop.error()), positions));
  return loop;
}

}  // namespace detail

/// YAML text → loop: yaml_to_json, then compile_paradigm() (a `paradigm:` spec is
/// compiled; a plain loop is parsed strictly and validated). Errors carry the diagnostics
/// of the JSON path unchanged in error::details; error::message starts with
/// `file:line:col:` of the first error. Validation warnings go to `*warnings`.
inline expected<fsm_loop, error> load_loop_yaml(std::string_view text,
                                                std::string_view file_name = "<yaml>",
                                                diagnostics* warnings = nullptr,
                                                source_map* map = nullptr) {
  source_map local;
  source_map& positions = map != nullptr ? *map : local;
  return detail::load_parsed(yaml_to_json(text, file_name, &positions), positions, warnings);
}

/// Loads a loop or paradigm spec from a `.yaml`, `.yml` or `.json` file (see
/// load_loop_yaml; JSON files get positions too). `*map` receives the positions so callers
/// can print every diagnostic with format_diagnostic().
inline expected<fsm_loop, error> load_loop_file(const std::filesystem::path& path,
                                                diagnostics* warnings = nullptr,
                                                source_map* map = nullptr) {
  source_map local;
  source_map& positions = map != nullptr ? *map : local;
  return detail::load_parsed(read_document(path, &positions), positions, warnings);
}

LITTLE_LOOPS_NAMESPACE_END
