// little_loops — ll-loop: finding, reading, compiling and validating loop files
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/compiled_loop.hpp>
#include <little_loops/error.hpp>
#include <little_loops/executor_options.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/compose.hpp>
#include <little_loops/yaml/file_resolver.hpp>
#include <little_loops/yaml_loader.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ll_loop {

namespace ll = little_loops;
namespace fs = std::filesystem;

/// The host's search path for loops and fragment libraries: LL_LOOP_PATH, colon-separated.
std::vector<fs::path> loop_search_path();

/// Where a loop named on the command line lives: the path itself when it exists, else (relative
/// to the cwd; a name may hold "/", as `sub/x`) `.loops/<name>.fsm.yaml`, `.loops/<name>.yaml`,
/// `.loops/<name>.yml`, `.loops/<name>.fsm.json`, `.loops/<name>.json`. A compiled loop
/// comes before its spec, as in the Python original's resolve_loop_path (`.fsm.yaml`, then
/// `.yaml`): `ll-loop compile .loops/g.yaml` writes `.loops/g.fsm.yaml`, which then wins.
/// Then the same names in each directory of LL_LOOP_PATH. `tried` receives every
/// candidate looked at.
std::optional<fs::path> resolve_loop_path(std::string_view name_or_path,
                                          std::vector<std::string>* tried = nullptr);

/// True when the document is a paradigm spec: `paradigm:` other than `fsm`, and no
/// `initial` (a loop compiled earlier keeps its `paradigm` as provenance).
bool is_paradigm_document(const ll::json& doc);

/// A loop ready to run: parsed (or compiled from a paradigm), changed by the verb, validated
/// once and compiled.
struct loaded_loop {
  std::shared_ptr<const ll::compiled_loop> compiled;
  fs::path path;                ///< absolute path of the file (journaled, for `resume`)
  fs::path shown_path;          ///< the path as typed, or as resolved from a name (messages)
  ll::json document;            ///< the document as read (before composition)
  ll::json parameters = ll::json::object();  ///< the loop's declared `parameters:`
  std::string paradigm;         ///< "" for a hand-written loop
  ll::diagnostics diagnostics;  ///< validation findings (warnings when the load succeeded)
  ll::source_map positions;  ///< file:line:col of every value (for messages)

  /// The loop definition.
  [[nodiscard]] const ll::fsm_loop& loop() const { return compiled->loop(); }

  /// `file:line:col: warning: path: message` for a finding of this loop.
  [[nodiscard]] std::string describe(const ll::diagnostic& d) const {
    return ll::format_diagnostic(d, &positions);
  }
};

/// The children that sub-loop states run (executor_options::child_loops), found as loops and
/// fragment libraries are (the calling loop's directory, `.loops/`, LL_LOOP_PATH) and loaded
/// once per run.
class child_loops {
 public:
  child_loops() : resolver_(loop_search_path()), library_(resolver_) {}
  child_loops(const child_loops&) = delete;
  child_loops& operator=(const child_loops&) = delete;
  /// Sets `options.child_loops` to this, and `options.loop_id` to `loop`'s file.
  void give_to(ll::executor_options& options, const fs::path& loop) {
    options.child_loops = &library_;
    options.loop_id = loop.string();
  }

 private:
  ll::file_resolver resolver_;
  ll::loop_library library_;
};

/// Why a load failed: the message for the user, and every diagnostic.
struct load_failure {
  enum class kind { not_found, unreadable, invalid } what = kind::invalid;
  std::string message;
  ll::diagnostics diagnostics;
  std::vector<std::string> lines;  ///< each diagnostic with its file:line:col
  std::vector<std::optional<ll::source_location>> locations;  ///< each diagnostic's position
  fs::path path;
  std::string paradigm;            ///< the document's paradigm when it is a spec ("" else)
};

/// What `path` is when it exists but is not a regular file ("a directory", "a FIFO", ...,
/// "a dangling symbolic link (to T)", "a symbolic link that cannot be followed (why)",
/// "a path that cannot be looked at (why)"); "" when it is a regular file or not there.
std::string non_regular_kind(const fs::path& path);

/// What a verb changes in the loop before its one validation (`--max-iterations`, `--no-llm`,
/// an input, `test`'s one step): validation judges the loop that runs.
using loop_adjustment = std::function<void(ll::fsm_loop&)>;

/// Resolves, reads and compiles (paradigms) a loop, merges `context_overrides` into its
/// context and applies `adjust`, then validates it, once, and compiles it. A finding that
/// the overrides cause is placed (file:line:col) as any other.
ll::expected<loaded_loop, load_failure> load_loop(std::string_view name_or_path,
                                                  const ll::json& context_overrides = {},
                                                  const loop_adjustment& adjust = {});

/// Loads a loop from an already resolved path.
ll::expected<loaded_loop, load_failure> load_loop_file(const fs::path& path,
                                                       const ll::json& context_overrides = {},
                                                       const loop_adjustment& adjust = {});

/// How the first line of an invalid-loop report reads.
enum class failure_wording {
  validation_error,  ///< `Validation error: <message>` (run, resume, simulate, show)
  is_invalid,        ///< `<name> is invalid: <message>` (validate)
};

/// Prints a load failure (stderr): the not-found / unreadable message, or for an invalid
/// loop the first line in `wording` followed by one line per diagnostic.
void report_load_failure(const load_failure& failure, std::string_view shown_name,
                         failure_wording wording = failure_wording::validation_error);

/// A path for messages: relative to the cwd when the file lies under it (as the user would
/// type it) and the relative form names the same file, else unchanged.
std::string display_path(const fs::path& path);

/// Parses `K=V` words into a JSON object, as the original does: split at the first "=", key
/// and value stripped of surrounding whitespace, values stay strings, the last of a key wins
/// (a dotted `K` is one key: `${context.a.b}` does not reach it). Error: the offending word
/// (no "=", or an empty key).
ll::expected<ll::json, std::string> parse_context_overrides(const std::vector<std::string>& kvs);

/// The loop document back as YAML text (block style, key order kept).
std::string to_yaml_text(const ll::json& doc);

}  // namespace ll_loop
