// little_loops — what the paradigm compilers share: common keys, required fields, results
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/validation.hpp>

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Name of the failure terminal a goal's check routes its `error` verdict to (an evaluator
/// that cannot decide — exit code other than 0/1, timeout, unparsable output, judge
/// failure — ends the loop as failed instead of spinning through the fix; design §15).
/// The other paradigms, as in the original, leave `error` unrouted: the run then ends with
/// terminated_by `error` and a message naming the state, the verdict and the cause.
inline constexpr std::string_view paradigm_error_state = "failed";

namespace detail {

/// Keys every paradigm spec accepts besides its own.
inline constexpr std::array<std::string_view, 10> paradigm_common_keys{
    "paradigm", "name",    "description", "max_iterations", "backoff",
    "timeout",  "context", "scope",       "llm",            "on_handoff"};

LITTLE_LOOPS_INLINE std::vector<std::string_view> paradigm_keys(std::initializer_list<std::string_view> extra);
LITTLE_LOOPS_INLINE std::string paradigm_index_path(std::string_view base, std::size_t index);
LITTLE_LOOPS_INLINE bool read_paradigm_common(std::string_view expected_paradigm, const std::string& key,
                                 const json& field, fsm_loop& loop, diagnostics& out);
LITTLE_LOOPS_INLINE bool require_paradigm_fields(const json& spec, std::string_view title,
                                    std::initializer_list<std::string_view> required,
                                    diagnostics& out);
LITTLE_LOOPS_INLINE bool read_paradigm_evaluator(const json& field, const std::string& path,
                                    std::optional<evaluate_config>& into, diagnostics& out);
LITTLE_LOOPS_INLINE std::optional<std::string> read_paradigm_text(const json& field, const std::string& path,
                                                     diagnostics& out);
LITTLE_LOOPS_INLINE std::string paradigm_excerpt(std::string_view text);
LITTLE_LOOPS_INLINE state_config paradigm_failure_terminal();
LITTLE_LOOPS_INLINE state_config paradigm_terminal();
LITTLE_LOOPS_INLINE loop_draft paradigm_draft(std::string_view title, fsm_loop loop, diagnostics found,
                                 paradigm_origins origins = {});
LITTLE_LOOPS_INLINE expected<fsm_loop, error> finish_paradigm(loop_draft draft, diagnostics* warnings);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `key` with `extra` paradigm keys appended, for "did you mean" candidates.
LITTLE_LOOPS_INLINE std::vector<std::string_view> paradigm_keys(std::initializer_list<std::string_view> extra) {
  std::vector<std::string_view> keys(paradigm_common_keys.begin(), paradigm_common_keys.end());
  keys.insert(keys.end(), extra.begin(), extra.end());
  return keys;
}

/// Path of array element `index` under `base`, in the form every diagnostic uses:
/// `constraints[0]`.
LITTLE_LOOPS_INLINE std::string paradigm_index_path(std::string_view base, std::size_t index) {
  return index_path(base, index);
}

/// Reads one of the keys every paradigm shares into `loop`. Returns false when `key` is not
/// a shared key (the caller then tries its own keys). `paradigm` is checked against
/// `expected_paradigm`; `name` is read by the caller because its default differs.
LITTLE_LOOPS_INLINE bool read_paradigm_common(std::string_view expected_paradigm, const std::string& key,
                                 const json& field, fsm_loop& loop, diagnostics& out) {
  const std::string path = member_path("", key);
  if (key == "paradigm") {
    if (auto v = read_string(field, path, out); v && *v != expected_paradigm)
      report(out, path, "wrong-paradigm",
             fmt::format("this spec says paradigm {} but was given to the {} compiler",
                         quote_excerpt(*v), expected_paradigm));
  } else if (key == "description") {
    if (auto v = read_string(field, path, out)) loop.description = std::move(*v);
  } else if (key == "max_iterations") {
    if (auto v = read_int(field, path, out)) loop.max_iterations = *v;
  } else if (key == "backoff") {
    if (auto v = read_number(field, path, out)) loop.backoff = *v;
  } else if (key == "timeout") {
    if (auto v = read_number(field, path, out)) loop.timeout = *v;
  } else if (key == "context") {
    if (expect_object(field, path, out) && check_value_tree(field, path, out)) loop.context = field;
  } else if (key == "scope") {
    if (!field.is_array()) {
      report_type(out, path, "an array of strings", field);
    } else {
      for (std::size_t i = 0; i < field.size(); ++i)
        if (auto v = read_string(field[i], paradigm_index_path(path, i), out))
          loop.scope.push_back(std::move(*v));
    }
  } else if (key == "llm") {
    loop.llm = parse_llm(field, path, out);
  } else if (key == "on_handoff") {
    if (auto v = parse_enum<handoff_policy>(field, path, out)) loop.on_handoff = *v;
  } else {
    return false;
  }
  return true;
}

/// Reports, as ONE diagnostic at the document root, every key of `required` that `spec`
/// lacks: `Goal paradigm requires: goal, tools`. Returns true when none is missing.
LITTLE_LOOPS_INLINE bool require_paradigm_fields(const json& spec, std::string_view title,
                                    std::initializer_list<std::string_view> required,
                                    diagnostics& out) {
  std::vector<std::string_view> missing;
  for (const auto key : required)
    if (!spec.contains(key)) missing.push_back(key);
  if (missing.empty()) return true;
  report(out, "", "missing-field",
         fmt::format("{} paradigm requires: {}", title, fmt::join(missing, ", ")));
  return false;
}

/// An `evaluator:` field. `null` and `{}` mean no evaluator (the state's default one), as
/// the original reads them (`if evaluator_spec:`); anything else is parsed strictly by
/// parse_evaluate_config() and kept whole. Returns false when it is invalid.
LITTLE_LOOPS_INLINE bool read_paradigm_evaluator(const json& field, const std::string& path,
                                    std::optional<evaluate_config>& into, diagnostics& out) {
  into.reset();
  if (field.is_null() || (field.is_object() && field.empty())) return true;
  into = parse_evaluate_config(field, path, out);
  return into.has_value();
}

/// A string-valued spec field that must not be empty (an action or a name).
LITTLE_LOOPS_INLINE std::optional<std::string> read_paradigm_text(const json& field, const std::string& path,
                                                     diagnostics& out) {
  auto v = read_string(field, path, out);
  if (v && v->empty()) {
    report(out, path, "empty-value", "must not be empty");
    return std::nullopt;
  }
  return v;
}

/// `text` for a message: at most 60 bytes, without surrounding quotes.
LITTLE_LOOPS_INLINE std::string paradigm_excerpt(std::string_view text) {
  const std::string quoted = quote_excerpt(text);
  return quoted.substr(1, quoted.size() - 2);
}

/// A `failure: true` terminal.
LITTLE_LOOPS_INLINE state_config paradigm_failure_terminal() {
  state_config s;
  s.terminal = true;
  s.failure = true;
  return s;
}

/// A plain terminal.
LITTLE_LOOPS_INLINE state_config paradigm_terminal() {
  state_config s;
  s.terminal = true;
  return s;
}

/// A compiler's result, before validation: the compiled loop with the spec's findings and
/// where each compiled part came from (validate_loop() judges it, in spec terms).
LITTLE_LOOPS_INLINE loop_draft paradigm_draft(std::string_view title, fsm_loop loop, diagnostics found,
                                 paradigm_origins origins) {
  return loop_draft_access::spec(title, std::move(loop), std::move(found), std::move(origins));
}

/// A compiler's result validated: the loop, or the error (errc::invalid_spec, at the spec
/// paths; see validate_loop()). Warnings are appended to `warnings` when given, those of
/// a refused spec too.
LITTLE_LOOPS_INLINE expected<fsm_loop, error> finish_paradigm(loop_draft draft, diagnostics* warnings) {
  auto validated = validate_loop(std::move(draft));
  if (!validated) {
    if (warnings != nullptr)
      for (const auto& d : validated.error().details)
        if (d.level == severity::warning) warnings->push_back(d);
    return unexpected(std::move(validated.error()));
  }
  if (warnings != nullptr)
    warnings->insert(warnings->end(), validated->warnings().begin(), validated->warnings().end());
  return std::move(*validated).release();
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
