// little_loops — how names in a loop document (from:, import:, loop:) find their documents
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/document.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>

#include <map>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// What a name inside a loop document refers to.
enum class reference_kind {
  parent,   ///< `from: NAME`: a loop, named like a loop on the command line
  library,  ///< an `import:` entry: a fragment library, a path taken as written
  child,    ///< `loop: NAME` of a sub-loop state
};

/// A document as read, ready to compose.
struct loop_source {
  json document;         ///< the parsed document
  source_map positions;  ///< where each value is (its file_name() names the document)
  std::string id;        ///< identity (a file's absolute path): cycles, and the referrer of its names
};

/// Finds the documents that names in a loop refer to. `referrer` is the id of the document
/// that holds the name. A name that does not resolve is errc::reference_not_found, with a
/// message saying what was looked for and where; a document that cannot be read or parsed,
/// that error.
class loop_resolver {
 public:
  virtual ~loop_resolver() = default;
  virtual expected<loop_source, error> resolve(reference_kind kind, std::string_view name,
                                               std::string_view referrer) = 0;
};

/// A resolver over documents held in memory, by name (embedding and tests). A name resolves
/// to the document added under it, whatever the kind and the referrer.
class memory_resolver final : public loop_resolver {
 public:
  /// Adds (or replaces) the document `name` refers to; its positions name the file `name`.
  void add(std::string name, json document, source_map positions = {}) {
    if (positions.file_name().empty()) positions.set_file_name(name);
    documents_[name] = loop_source{std::move(document), std::move(positions), name};
  }

  expected<loop_source, error> resolve(reference_kind kind, std::string_view name,
                                       std::string_view /*referrer*/) override {
    const auto it = documents_.find(std::string(name));
    if (it != documents_.end()) return it->second;
    return unexpected(error{errc::reference_not_found,
                            std::string(kind == reference_kind::library ? "Fragment library not found: "
                                                                        : "Loop not found: ") +
                                std::string(name),
                            std::string(name)});
  }

 private:
  std::map<std::string, loop_source> documents_;
};

LITTLE_LOOPS_NAMESPACE_END
