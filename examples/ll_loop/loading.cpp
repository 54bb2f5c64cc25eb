// little_loops — ll-loop: finding, reading, compiling and validating loop files
// SPDX-License-Identifier: MIT
#include "loading.hpp"

#include "display.hpp"

#include <little_loops/paradigms.hpp>
#include <little_loops/validation.hpp>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <system_error>

namespace ll_loop {

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
  return std::nullopt;
}

ll::expected<ll::json, ll::error> read_document(const fs::path& path, ll::yaml_source_map* map) {
  return ll::load_document_file(path, map);
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
                                                       const ll::json& context_overrides) {
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
    for (const auto& d : f.diagnostics) f.lines.push_back(ll::format_diagnostic(d, &out.positions));
    f.path = path;
    f.paradigm = out.paradigm;
    return ll::unexpected(std::move(f));
  };

  auto doc = read_document(path, &out.positions);
  if (!doc)
    return fail(std::move(doc.error()), doc.error().code == ll::errc::io_error
                                            ? load_failure::kind::unreadable
                                            : load_failure::kind::invalid);
  out.document = std::move(*doc);
  if (is_paradigm_document(out.document)) {
    const auto& p = out.document["paradigm"];
    out.paradigm = p.is_string() ? p.get<std::string>() : std::string("?");
  }
  // compile_paradigm: paradigm specs are compiled, plain loops parsed strictly; both validated.
  auto parsed = ll::compile_paradigm(out.document);
  if (!parsed) return fail(ll::annotate_error(std::move(parsed.error()), out.positions),
                           load_failure::kind::invalid);
  out.loop = std::move(*parsed);
  if (context_overrides.is_object())
    for (auto it = context_overrides.begin(); it != context_overrides.end(); ++it)
      out.loop.context[it.key()] = it.value();

  out.diagnostics = ll::validate(out.loop);
  if (ll::has_errors(out.diagnostics)) {
    std::size_t errors = 0;
    for (const auto& d : out.diagnostics)
      if (d.level == ll::severity::error) ++errors;
    return fail(ll::error{ll::errc::invalid_loop,
                          fmt::format("{} validation error{}", errors, errors == 1 ? "" : "s"),
                          {}, out.diagnostics},
                load_failure::kind::invalid);
  }
  return out;
}

ll::expected<loaded_loop, load_failure> load_loop(std::string_view name_or_path,
                                                  const ll::json& context_overrides) {
  auto path = resolve_loop_path(name_or_path);
  if (!path) {
    load_failure f;
    f.what = load_failure::kind::not_found;
    f.message = fmt::format("Loop not found: {}", name_or_path);
    return ll::unexpected(std::move(f));
  }
  return load_loop_file(*path, context_overrides);
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

std::string display_path(const fs::path& path) {
  if (!path.is_absolute()) return path.string();
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec) return path.string();
  const fs::path rel = path.lexically_normal().lexically_proximate(cwd);
  if (rel.empty() || rel.is_absolute() || *rel.begin() == "..") return path.string();
  // lexically_normal folds `dir/..`, which a symlinked `dir` makes wrong: keep the
  // relative form only when it names the same file.
  if (!fs::equivalent(rel, path, ec) || ec) return path.string();
  return rel.string();
}

namespace {

void emit_yaml(YAML::Emitter& out, const ll::json& value) {
  switch (value.type()) {
    case ll::json::value_t::object:
      out << YAML::BeginMap;
      for (auto it = value.begin(); it != value.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
        emit_yaml(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case ll::json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& item : value) emit_yaml(out, item);
      out << YAML::EndSeq;
      break;
    case ll::json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      if (s.find('\n') != std::string::npos) out << YAML::Literal;
      else out << YAML::DoubleQuoted;
      out << s;
      break;
    }
    case ll::json::value_t::boolean:
      out << value.get<bool>();
      break;
    case ll::json::value_t::number_integer:
      out << value.get<std::int64_t>();
      break;
    case ll::json::value_t::number_unsigned:
      out << value.get<std::uint64_t>();
      break;
    case ll::json::value_t::number_float:
      out << value.dump();
      break;
    default:
      out << YAML::Null;
      break;
  }
}

}  // namespace

std::string to_yaml_text(const ll::json& doc) {
  YAML::Emitter out;
  out.SetIndent(2);
  emit_yaml(out, doc);
  std::string text = out.c_str();
  text.push_back('\n');
  return text;
}

}  // namespace ll_loop
