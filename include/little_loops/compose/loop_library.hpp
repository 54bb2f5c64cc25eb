// little_loops — the child loops of a run, found, composed and compiled once each
// SPDX-License-Identifier: MIT
#pragma once

// Part of compose.hpp (included after load_composed_loop). A host gives an executor a
// loop_library (executor_options::child_loops) so that sub-loop states find their children
// through the same resolver, and so the same search path, that loaded the top loop.

#include <little_loops/child_loops.hpp>
#include <little_loops/compiled_loop.hpp>
#include <little_loops/compose.hpp>
#include <little_loops/compose/resolver.hpp>
#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>

#include <map>
#include <string>
#include <string_view>
#include <utility>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Loads the children of sub-loop states through a loop_resolver (reference_kind::child):
/// composed, read, validated and compiled the first time each is named, then kept for the
/// library's life (by id), so a state entered many times loads its child once.
class loop_library final : public child_loop_resolver {
 public:
  /// `resolver` must outlive the library.
  explicit loop_library(loop_resolver& resolver) : resolver_(&resolver) {}

  expected<child_loop, error> load(std::string_view name, std::string_view referrer) override {
    auto source = resolver_->resolve(reference_kind::child, name, referrer);
    if (!source) return unexpected(std::move(source.error()));
    if (const auto it = cache_.find(source->id); it != cache_.end()) return it->second;
    child_loop child;
    child.id = source->id;
    auto composed = compose_loop(std::move(*source), *resolver_);
    if (!composed) return unexpected(std::move(composed.error()));
    child.parameters = std::move(composed->parameters);
    // Read, validated and compiled, each once (compile() keeps validation's templates).
    auto draft = draft_paradigm(composed->document);
    if (!draft) return unexpected(std::move(draft.error()));
    auto validated = validate_loop(std::move(*draft));
    if (!validated) return unexpected(std::move(validated.error()));
    auto compiled = compiled_loop::compile(std::move(*validated));
    if (!compiled) return unexpected(std::move(compiled.error()));
    child.loop = std::move(*compiled);
    return cache_.emplace(child.id, std::move(child)).first->second;
  }

 private:
  loop_resolver* resolver_;
  std::map<std::string, child_loop, std::less<>> cache_;
};

LITTLE_LOOPS_NAMESPACE_END
