// little_loops — ll-loop: finding, reading, compiling and validating loop files
// SPDX-License-Identifier: MIT
#include "loading.hpp"

#include "display.hpp"

#include <little_loops/paradigms.hpp>
#include <little_loops/validation.hpp>

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

namespace ll_loop {

std::vector<fs::path> loop_search_path() {
  const char* value = std::getenv("LL_LOOP_PATH");
  return value == nullptr ? std::vector<fs::path>{} : ll::split_search_path(value);
}

std::optional<fs::path> resolve_loop_path(std::string_view name_or_path,
                                          std::vector<std::string>* tried) {
  std::error_code ec;
  fs::path direct{std::string(name_or_path)};
  if (tried != nullptr) tried->push_back(direct.string());
  // A path that exists is the loop, unless it is a directory (a name may also be a folder
  // here): a FIFO or device is refused by the loader ("not a regular file"), not searched.
  if (const auto st = fs::status(direct, ec); !ec && fs::exists(st) && !fs::is_directory(st))
    return direct;
  // Else a name in .loops/, as in the original also one with a "/" (`sub/x` →
  // .loops/sub/x.yaml).
  for (const char* ext : {".fsm.yaml", ".yaml", ".yml", ".fsm.json", ".json"}) {
    fs::path candidate = fs::path(".loops") / (std::string(name_or_path) + ext);
    if (tried != nullptr) tried->push_back(candidate.string());
    if (fs::is_regular_file(candidate, ec)) return candidate;
  }
  // Then the host's search path (LL_LOOP_PATH), as for the names a loop holds.
  for (const auto& dir : loop_search_path())
    for (const auto& file : ll::file_resolver::file_names(ll::reference_kind::parent, name_or_path)) {
      fs::path candidate = dir / file;
      if (tried != nullptr) tried->push_back(candidate.string());
      if (fs::is_regular_file(candidate, ec)) return candidate;
    }
  return std::nullopt;
}

bool is_paradigm_document(const ll::json& doc) {
  if (!doc.is_object()) return false;
  auto it = doc.find("paradigm");
  if (it == doc.end() || doc.contains("initial")) return false;
  return !(it->is_string() && it->get<std::string>() == "fsm");
}

namespace {
std::string_view strip_ascii_space(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r\f\v";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}
}  // namespace

ll::expected<ll::json, std::string> parse_context_overrides(const std::vector<std::string>& kvs) {
  ll::json out = ll::json::object();
  for (const auto& kv : kvs) {
    // As the original: split at the first "=", strip both sides; the last of a key wins.
    const auto eq = kv.find('=');
    if (eq == std::string::npos) return ll::unexpected(kv);
    const std::string_view text = kv;
    const std::string_view key = strip_ascii_space(text.substr(0, eq));
    if (key.empty()) return ll::unexpected(kv);  // ${context.} cannot name it
    out[std::string(key)] = std::string(strip_ascii_space(text.substr(eq + 1)));
  }
  return out;
}

ll::expected<loaded_loop, load_failure> load_loop_file(const fs::path& path,
                                                       const ll::json& context_overrides,
                                                       const loop_adjustment& adjust) {
  loaded_loop out;
  std::error_code ec;
  out.path = fs::absolute(path, ec);
  if (ec) out.path = path;
  out.shown_path = path;

  auto fail = [&](ll::error e, load_failure::kind what) {
    load_failure f;
    f.what = what;
    f.message = e.message;
    f.diagnostics = std::move(e.details);
    for (const auto& d : f.diagnostics) {
      f.lines.push_back(ll::format_diagnostic(d, &out.positions));
      f.locations.push_back(out.positions.locate(d.path));
    }
    f.path = path;
    f.paradigm = out.paradigm;
    return ll::unexpected(std::move(f));
  };

  auto source = ll::read_loop_source(path);
  if (!source)
    return fail(std::move(source.error()), source.error().code == ll::errc::io_error
                                               ? load_failure::kind::unreadable
                                               : load_failure::kind::invalid);
  out.document = source->document;
  if (is_paradigm_document(out.document)) {
    const auto& p = out.document["paradigm"];
    out.paradigm = p.is_string() ? p.get<std::string>() : std::string("?");
  }
  // Composition (from:, flow:, import:, fragment:) into one document, whose positions name
  // the file each value came from; then the pipeline's stages, each once: the draft (a
  // paradigm spec compiled, a plain loop read strictly), the verb's changes (the context
  // overrides, then `adjust`), the validation (a loop with an error-level finding is
  // refused there; a spec's findings are at the spec's paths) and the compile.
  ll::file_resolver resolver(loop_search_path());
  out.positions.set_file_name(source->positions.file_name());
  auto composed = ll::compose_loop(std::move(*source), resolver, &out.positions);
  if (!composed) return fail(std::move(composed.error()), load_failure::kind::invalid);
  out.parameters = std::move(composed->parameters);
  auto draft = ll::draft_paradigm(composed->document);
  if (!draft) return fail(ll::annotate_error(std::move(draft.error()), out.positions),
                          load_failure::kind::invalid);
  if (context_overrides.is_object())
    for (auto it = context_overrides.begin(); it != context_overrides.end(); ++it)
      draft->loop().context[it.key()] = it.value();
  if (adjust) adjust(draft->loop());
  auto validated = ll::validate_loop(std::move(*draft));
  if (!validated) return fail(ll::annotate_error(std::move(validated.error()), out.positions),
                              load_failure::kind::invalid);
  out.diagnostics = std::move(composed->warnings);
  out.diagnostics.insert(out.diagnostics.end(), validated->warnings().begin(), validated->warnings().end());
  auto compiled = ll::compiled_loop::compile(std::move(*validated));
  if (!compiled) return fail(ll::annotate_error(std::move(compiled.error()), out.positions),
                             load_failure::kind::invalid);
  out.compiled = std::move(*compiled);
  return out;
}

std::string non_regular_kind(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    // A name that is there but cannot be followed or looked at says why.
    const bool missing =
        !ec || ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory;
    std::error_code lec;
    const fs::file_status link = fs::symlink_status(path, lec);
    if (!lec && fs::is_symlink(link)) {
      if (!missing) return fmt::format("a symbolic link that cannot be followed ({})", ec.message());
      std::error_code tec;
      const fs::path target = fs::read_symlink(path, tec);
      return tec ? std::string("a dangling symbolic link")
                 : fmt::format("a dangling symbolic link (to {})", target.string());
    }
    if (!missing) return fmt::format("a path that cannot be looked at ({})", ec.message());
    return {};
  }
  if (fs::is_regular_file(st)) return {};
  if (fs::is_directory(st)) return "a directory";
  if (fs::is_fifo(st)) return "a FIFO";
  if (fs::is_block_file(st) || fs::is_character_file(st)) return "a device";
  if (fs::is_socket(st)) return "a socket";
  return "not a regular file";
}

ll::expected<loaded_loop, load_failure> load_loop(std::string_view name_or_path,
                                                  const ll::json& context_overrides,
                                                  const loop_adjustment& adjust) {
  auto path = resolve_loop_path(name_or_path);
  if (!path) {
    load_failure f;
    f.what = load_failure::kind::not_found;
    f.message = fmt::format("Loop not found: {}", name_or_path);
    // It exists, but is no file to read: say what it is.
    if (const std::string what = non_regular_kind(fs::path(name_or_path)); !what.empty()) {
      f.message += fmt::format(" (it is {}, not a loop file)", what);
    } else {
      // A candidate in .loops/ that is there but unusable (a dangling or looping link, a
      // directory) is named, rather than looking as if nothing were there.
      std::vector<std::string> tried;
      (void)resolve_loop_path(name_or_path, &tried);
      for (std::size_t i = 1; i < tried.size(); ++i) {
        std::error_code ec;
        (void)fs::symlink_status(tried[i], ec);
        if (ec) continue;
        if (const std::string kind = non_regular_kind(tried[i]); !kind.empty()) {
          f.message += fmt::format(" ({} is {}, not a loop file)", tried[i], kind);
          break;
        }
      }
    }
    return ll::unexpected(std::move(f));
  }
  return load_loop_file(*path, context_overrides, adjust);
}

void report_load_failure(const load_failure& failure, std::string_view shown_name,
                         failure_wording wording) {
  switch (failure.what) {
    case load_failure::kind::not_found:
      say_error(failure.message);
      return;
    case load_failure::kind::unreadable:
      say_error(fmt::format("cannot read {}: {}", failure.path.string(), failure.message));
      return;
    case load_failure::kind::invalid:
      break;
  }
  if (wording == failure_wording::is_invalid)
    say_error(fmt::format("{} is invalid: {}", shown_name, failure.message));
  else
    say_error(fmt::format("Validation error: {}", failure.message));
  // A single diagnostic that the message already says (a syntax error, a paradigm spec's
  // missing field) is not printed again.
  if (failure.lines.size() == 1 &&
      (failure.lines[0].find(failure.message) != std::string::npos ||
       (failure.diagnostics.size() == 1 && !failure.diagnostics[0].message.empty() &&
        failure.message.find(failure.diagnostics[0].message) != std::string::npos &&
        failure.message.find(failure.diagnostics[0].path) != std::string::npos)))
    return;
  for (const auto& line : failure.lines) std::fprintf(stderr, "  %s\n", line.c_str());
}

std::string display_path(const fs::path& path) { return ll::shown_path(path); }

namespace {

// The YAML that `compile` writes, by hand: block mappings and sequences, every string
// double-quoted or, when it reads back exactly, a literal block; what PyYAML (and so
// yaml_to_json) reads back is the document written, byte for byte.

// A code point PyYAML takes raw inside a scalar: printable, and not one of YAML 1.1's line
// breaks (NEL, LS, PS), nor a byte-order mark.
bool yaml_printable(char32_t c) {
  if (c == U'\t') return true;
  if (c < 0x20 || c == 0x7F) return false;
  if (c >= 0x80 && c <= 0x9F) return false;  // C1 controls, NEL among them
  if (c == 0x2028 || c == 0x2029 || c == 0xFEFF || c == 0xFFFE || c == 0xFFFF) return false;
  return true;
}

// `text` as a YAML double-quoted scalar: everything that is not printable is escaped.
std::string yaml_quoted(std::string_view text) {
  std::string out = "\"";
  for (const char32_t c : ll::decode_utf8(text)) {
    switch (c) {
      case U'"': out += "\\\""; continue;
      case U'\\': out += "\\\\"; continue;
      case U'\n': out += "\\n"; continue;
      case U'\t': out += "\\t"; continue;
      case U'\r': out += "\\r"; continue;
      case 0: out += "\\0"; continue;
      default: break;
    }
    if (yaml_printable(c))
      ll::append_utf8(out, c);
    else if (c <= 0xFF)
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    else
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
  }
  out += '"';
  return out;
}

// A key written plain: an identifier-like word that no YAML 1.1 resolver reads as anything
// but a string (not a boolean or null, not the merge key `<<`). Anything else is quoted.
bool plain_key(std::string_view key) {
  if (key.empty() || !(std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_'))
    return false;
  for (const char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  std::string lower(key);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
    if (lower == word) return false;
  return true;
}

// A string written as a literal block (`|`) reads back exactly: it has at least two lines and
// ends with exactly one newline (the block's clip chomping), its first line is not indented
// (no indentation indicator is written), no line holds only blanks (it would read as empty),
// and every character is printable.
bool literal_block(std::string_view s) {
  if (s.size() < 2 || s.back() != '\n' || s[s.size() - 2] == '\n') return false;
  if (s.find('\n') == s.size() - 1) return false;  // one line: quoted
  if (s.front() == ' ' || s.front() == '\t' || s.front() == '\n') return false;
  if (!ll::is_utf8(s)) return false;
  for (const char32_t c : ll::decode_utf8(s))
    if (c != U'\n' && !yaml_printable(c)) return false;
  for (std::size_t begin = 0; begin < s.size();) {
    const std::size_t end = s.find('\n', begin);
    const std::string_view line = s.substr(begin, end - begin);
    if (!line.empty() && line.find_first_not_of(" \t") == std::string_view::npos) return false;
    begin = end + 1;
  }
  return true;
}

std::string yaml_number(const ll::json& value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {  // YAML's own words
    const double d = value.get<double>();
    return std::isnan(d) ? ".nan" : d < 0 ? "-.inf" : ".inf";
  }
  std::string text = value.dump();
  // PyYAML's float needs a '.': 1e+300 would read back as a string.
  if (value.is_number_float() && text.find('.') == std::string::npos) {
    const auto e = text.find_first_of("eE");
    text.insert(e == std::string::npos ? text.size() : e, ".0");
  }
  return text;
}

void emit_yaml(std::string& out, const ll::json& value, std::size_t indent);

// A value after `key:` or `- `: a scalar on the same line, a block on the next lines.
void emit_yaml_value(std::string& out, const ll::json& value, std::size_t indent) {
  const std::string pad(indent, ' ');
  if ((value.is_object() || value.is_array()) && !value.empty()) {
    out += '\n';
    emit_yaml(out, value, indent);
    return;
  }
  out += ' ';
  switch (value.type()) {
    case ll::json::value_t::object: out += "{}\n"; return;
    case ll::json::value_t::array: out += "[]\n"; return;
    case ll::json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      if (!literal_block(s)) {
        out += yaml_quoted(s);
        out += '\n';
        return;
      }
      out += "|\n";
      std::size_t begin = 0;
      while (begin < s.size()) {
        const std::size_t end = s.find('\n', begin);
        if (end > begin) out += pad;
        out.append(s, begin, end - begin + 1);
        begin = end + 1;
      }
      return;
    }
    case ll::json::value_t::boolean: out += value.get<bool>() ? "true\n" : "false\n"; return;
    case ll::json::value_t::number_integer:
    case ll::json::value_t::number_unsigned:
    case ll::json::value_t::number_float: out += yaml_number(value) + "\n"; return;
    default: out += "null\n"; return;
  }
}

// A non-empty mapping or sequence, each entry at `indent` (a sequence under a key is
// indented too).
void emit_yaml(std::string& out, const ll::json& value, std::size_t indent) {
  const std::string pad(indent, ' ');
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string key = plain_key(it.key()) ? it.key() : yaml_quoted(it.key());
      if (key.size() > 1000) {  // over YAML's 1024-character limit of a simple key
        out += pad + "? " + key + "\n" + pad + ":";
      } else {
        out += pad + key + ":";
      }
      emit_yaml_value(out, it.value(), indent + 2);
    }
    return;
  }
  for (const auto& item : value) {
    out += pad + "-";
    emit_yaml_value(out, item, indent + 2);
  }
}

}  // namespace

std::string to_yaml_text(const ll::json& doc) {
  std::string out;
  if ((doc.is_object() || doc.is_array()) && !doc.empty()) {
    emit_yaml(out, doc, 0);
  } else {
    emit_yaml_value(out, doc, 0);
    out.erase(0, 1);  // the separating space
  }
  return out;
}

}  // namespace ll_loop
