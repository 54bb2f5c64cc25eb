// little_loops — finding parent loops and fragment libraries in directories
// SPDX-License-Identifier: MIT
#pragma once

// Opt-in adapter (CMake target little_loops::yaml): the loop_resolver of compose.hpp for
// hosts whose loops are files. A name is looked for in the directory of the document that
// names it, then in the project's `.loops/`, then in each directory of the host's search
// path (ll-loop: LL_LOOP_PATH), the first existing file winning. A loop name (`from:`,
// `loop:`) without an extension tries `NAME.fsm.yaml`, `NAME.yaml`, `NAME.yml`,
// `NAME.json`; a name ending in `.yaml`, `.yml` or `.json`, and every `import:` entry, is
// a path taken as written. An absolute name is only itself.

#include <little_loops/compose.hpp>
#include <little_loops/config.hpp>
#include <little_loops/document.hpp>
#include <little_loops/yaml/loader.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// `path` as messages show it: relative to the working directory when it lies below it.
inline std::string shown_path(const std::filesystem::path& path) {
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec);
  if (ec || !path.is_absolute()) return path.string();
  const auto rel = path.lexically_normal().lexically_proximate(cwd);
  if (rel.empty() || rel.is_absolute() || *rel.begin() == "..") return path.string();
  // lexically_normal folds `dir/..`, which a symlinked `dir` makes wrong
  return std::filesystem::equivalent(rel, path, ec) && !ec ? rel.string() : path.string();
}

/// Reads a YAML or JSON file as a loop_source (id: its absolute path; positions name the
/// file as shown_path() shows it).
inline expected<loop_source, error> read_loop_source(const std::filesystem::path& path) {
  loop_source source;
  auto doc = read_document(shown_path(path), &source.positions);
  if (!doc) return unexpected(std::move(doc.error()));
  source.document = std::move(*doc);
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  source.id = (ec ? path : absolute).lexically_normal().string();
  return source;
}

/// Splits a colon-separated list of directories (empty entries skipped).
inline std::vector<std::filesystem::path> split_search_path(std::string_view list) {
  std::vector<std::filesystem::path> dirs;
  while (!list.empty()) {
    const auto colon = list.find(':');
    const std::string_view dir = list.substr(0, colon);
    if (!dir.empty()) dirs.emplace_back(std::string(dir));
    list = colon == std::string_view::npos ? std::string_view{} : list.substr(colon + 1);
  }
  return dirs;
}

/// Finds documents in directories (see above).
class file_resolver final : public loop_resolver {
 public:
  /// `search_path`: the host's directories, searched after the referrer's directory and
  /// `project_loops` (relative to the working directory).
  explicit file_resolver(std::vector<std::filesystem::path> search_path = {},
                         std::filesystem::path project_loops = ".loops")
      : search_path_(std::move(search_path)), project_loops_(std::move(project_loops)) {}

  /// The directories searched for a name held by `referrer`, in order.
  [[nodiscard]] std::vector<std::filesystem::path> roots(std::string_view referrer) const {
    std::vector<std::filesystem::path> dirs;
    if (!referrer.empty()) dirs.push_back(std::filesystem::path(std::string(referrer)).parent_path());
    dirs.push_back(project_loops_);
    dirs.insert(dirs.end(), search_path_.begin(), search_path_.end());
    return dirs;
  }

  /// The files a name stands for, relative to one root.
  [[nodiscard]] static std::vector<std::string> file_names(reference_kind kind, std::string_view name) {
    const std::string ext = std::filesystem::path(std::string(name)).extension().string();
    if (kind == reference_kind::library || ext == ".yaml" || ext == ".yml" || ext == ".json")
      return {std::string(name)};
    std::vector<std::string> names;
    for (const char* suffix : {".fsm.yaml", ".yaml", ".yml", ".json"})
      names.push_back(std::string(name) + suffix);
    return names;
  }

  expected<loop_source, error> resolve(reference_kind kind, std::string_view name,
                                       std::string_view referrer) override {
    namespace fs = std::filesystem;
    const bool absolute = fs::path(std::string(name)).is_absolute();
    std::vector<fs::path> dirs = absolute ? std::vector<fs::path>{fs::path()} : roots(referrer);
    std::string looked;
    for (const auto& dir : dirs) {
      for (const auto& file : file_names(kind, name)) {
        const fs::path candidate = dir.empty() ? fs::path(file) : dir / file;
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec)) return read_loop_source(candidate);
      }
      looked += (looked.empty() ? "" : ", ") + (dir.empty() ? std::string(name) : dir.string());
    }
    return unexpected(error{errc::reference_not_found,
                            fmt::format("{} not found: {} (looked in: {})",
                                        kind == reference_kind::library ? "Fragment library" : "Loop",
                                        name, looked),
                            std::string(name)});
  }

 private:
  std::vector<std::filesystem::path> search_path_;
  std::filesystem::path project_loops_;
};

/// Reads, composes (resolving names with `resolver`), reads strictly and validates the
/// loop in `path` (see load_composed_loop()); `*positions` gets the composed positions.
inline expected<fsm_loop, error> load_loop_path(const std::filesystem::path& path,
                                                loop_resolver& resolver,
                                                diagnostics* warnings = nullptr,
                                                source_map* positions = nullptr) {
  auto source = read_loop_source(path);
  if (!source) return unexpected(std::move(source.error()));
  return load_composed_loop(std::move(*source), resolver, warnings, positions);
}

LITTLE_LOOPS_NAMESPACE_END
