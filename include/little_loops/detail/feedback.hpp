// little_loops — the seed-004 evaluator → director feedback record built from `prev`
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>

#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

LITTLE_LOOPS_INLINE void append_feedback_value(std::string& out, const json& v);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Compact, deterministic text of a JSON scalar for feedback sentences (strings raw,
// floats as Python prints them).
LITTLE_LOOPS_INLINE void append_feedback_value(std::string& out, const json& v) {
  if (v.is_string()) {
    out += v.get_ref<const std::string&>();
  } else if (v.is_number_float()) {
    append_py_float(out, v.get<double>());
  } else if (v.is_null()) {
    out += "none";
  } else {
    out += v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

inline std::string_view operator_symbol(std::string_view op) noexcept {
  if (op == "eq") return "==";
  if (op == "ne") return "!=";
  if (op == "lt") return "<";
  if (op == "le") return "<=";
  if (op == "gt") return ">";
  if (op == "ge") return ">=";
  return op;
}

inline const json* find_key(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

LITTLE_LOOPS_INLINE std::string feedback_text(std::string_view verdict, const json& details);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// The human-readable `feedback` sentence for an evaluation (see feedback_record).
LITTLE_LOOPS_INLINE std::string feedback_text(std::string_view verdict, const json& details) {
  std::string s;
  if (const json* e = find_key(details, "error"); e && e->is_string()) {
    s = e->get<std::string>();
    return s;
  }
  if (const json* r = find_key(details, "reason");
      r && r->is_string() && !r->get_ref<const std::string&>().empty()) {
    s = r->get<std::string>();
    return s;
  }
  const json* matched = find_key(details, "matched");
  const json* pattern = find_key(details, "pattern");
  if (matched && pattern && matched->is_boolean()) {
    s = "pattern '";
    append_feedback_value(s, *pattern);
    s += matched->get<bool>() ? "' found in output" : "' not found in output";
    const json* neg = find_key(details, "negate");
    if (neg && neg->is_boolean() && neg->get<bool>()) s += " (negated)";
    return s;
  }
  const json* current = find_key(details, "current");
  if (current) {
    s = "value ";
    append_feedback_value(s, *current);
    if (verdict == "target") {
      s += " reached the target ";
    } else {
      s += verdict == "progress" ? " made progress towards " : " stalled short of ";
      s += "the target ";
    }
    if (const json* t = find_key(details, "target")) append_feedback_value(s, *t);
    if (const json* p = find_key(details, "previous"); p && !p->is_null()) {
      s += " (previous ";
      append_feedback_value(s, *p);
      s += ')';
    }
    return s;
  }
  const json* value = find_key(details, "value");
  const json* op = find_key(details, "operator");
  const json* target = find_key(details, "target");
  if (value && target) {
    s = "value ";
    if (const json* path = find_key(details, "path"); path && path->is_string()) {
      s += "at ";
      s += path->get<std::string>();
      s += ' ';
    }
    append_feedback_value(s, *value);
    s += ' ';
    s += op && op->is_string() ? operator_symbol(op->get<std::string>()) : std::string_view{"=="};
    s += ' ';
    append_feedback_value(s, *target);
    s += verdict == "success" ? ": condition met" : ": condition not met";
    return s;
  }
  if (const json* ec = find_key(details, "exit_code"); ec && ec->is_number()) {
    s = "command exited with code ";
    append_feedback_value(s, *ec);
    return s;
  }
  s = "verdict: ";
  s += verdict;
  return s;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_INLINE json feedback_record(const prev_record& prev);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief The seed-004 feedback record of an evaluation:
/// `{success, feedback, details, scriptOutput{stdout, stderr, exitCode}}`; scriptOutput only
/// when the state ran an action.
///
/// `success` ("whether the evaluation passed", seed 004) is true for the passing verdicts:
/// `success` (the deterministic evaluators and the default judge schema), `target`
/// (convergence), and a judge's `pass` (seed 003's verdicts) or `yes`; `_uncertain` ones and
/// all others are false; `feedback` is `details.error`
/// when present, else the judge's `details.reason`, else a sentence derived from the
/// deterministic evaluator's details (e.g. `value 3 < 5: condition met`). The executor exposes
/// it as `${prev.evaluation}`. `details` is the evaluation's details; a judge's `metrics`,
/// `violations` and `suggestions` from its reply (`details.raw`) are also put at its top, as
/// seed 004's record has them (`${prev.evaluation.details.violations}`).
LITTLE_LOOPS_INLINE json feedback_record(const prev_record& prev) {
  json rec = json::object();
  const std::string_view v = prev.verdict;
  rec["success"] = v == "success" || v == "target" || v == "pass" || v == "yes";
  prev.details.visit([&](const json& details) {
    rec["feedback"] = detail::feedback_text(prev.verdict, details);
    json shown = details.is_object() ? details : json::object();
    // A judge's own `metrics`, `violations` and `suggestions` (kept in its reply, `raw`)
    // are the record's structured details (seed 004 §1).
    if (const json* raw = detail::find_key(details, "raw"); raw != nullptr && raw->is_object())
      for (const char* key : {"metrics", "violations", "suggestions"})
        if (const json* v = detail::find_key(*raw, key); v != nullptr && !shown.contains(key))
          shown[key] = *v;
    rec["details"] = std::move(shown);
  });
  if (prev.ran_action) {  // seed 004: "present when script execution is involved"
    json script = json::object();
    script["stdout"] = prev.output;
    script["stderr"] = prev.stderr_output;
    script["exitCode"] = prev.exit_code;
    rec["scriptOutput"] = std::move(script);
  }
  return rec;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END
