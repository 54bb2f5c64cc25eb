// little_loops — llm_structured: the JudgeBackend concept, prompt building, tolerant and
// fail-closed reply parsing
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/detail/numbers.hpp>
#include <little_loops/detail/strings.hpp>
#include <little_loops/evaluators/output_numeric.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <concepts>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// The default judge instruction (the original's default prompt).
inline constexpr std::string_view default_judge_prompt =
    "Evaluate whether this action succeeded based on its output.";

/// The action output handed to the judge is cut to its last this-many characters.
inline constexpr std::size_t judge_output_tail_chars = 4000;

LITTLE_LOOPS_INLINE json default_judge_schema();
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief The default verdict schema: `verdict` ∈ success/failure/blocked/partial,
/// `confidence` in [0, 1] and a short `reason`, all required.
LITTLE_LOOPS_INLINE json default_judge_schema() {
  return json::parse(R"json({
  "type": "object",
  "properties": {
    "verdict": {
      "type": "string",
      "enum": ["success", "failure", "blocked", "partial"],
      "description": "- success: The action completed its goal\n- failure: The action failed, should retry\n- blocked: Cannot proceed without external help\n- partial: Made progress but not complete"
    },
    "confidence": {
      "type": "number",
      "minimum": 0,
      "maximum": 1,
      "description": "Confidence in this verdict (0-1)"
    },
    "reason": {"type": "string", "description": "Brief explanation"}
  },
  "required": ["verdict", "confidence", "reason"]
})json");
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// What the library asks a judge backend.
struct judge_request {
  std::string_view prompt;       ///< the full user prompt (instruction + `<action_output>` block)
  std::string_view instruction;  ///< the instruction alone (the evaluator's `prompt`)
  std::string_view output_tail;  ///< the last 4000 characters of the evaluated output
  const json* schema = nullptr;  ///< the JSON schema the reply must follow
  std::string_view model;        ///< `llm.model`
  int max_tokens = 256;          ///< `llm.max_tokens`
  std::chrono::milliseconds timeout{1800000};  ///< `llm.timeout`
};

/// Kinds of judge backend failures.
enum class judge_errc {
  unavailable,  ///< no backend / backend not installed or not configured
  timeout,      ///< the backend gave up after `timeout`
  failed,       ///< the call failed (API error, non-zero exit, ...)
  malformed,    ///< the backend got a reply it could not interpret
  empty_output, ///< the call succeeded but answered nothing (an API error a CLI hid)
};

/// A typed judge backend failure.
struct judge_error {
  judge_errc kind = judge_errc::failed;
  std::string message;
};

/// @brief A host-supplied LLM judge: `j.ask(const judge_request&)` returns the raw reply text
/// (the library parses it) or a judge_error.
///
/// @code
/// struct my_judge {
///   ll::expected<std::string, ll::judge_error> ask(const ll::judge_request& r) {
///     return call_my_llm(r.prompt, *r.schema, r.model, r.timeout);
///   }
/// };
/// static_assert(ll::JudgeBackend<my_judge>);
/// @endcode
template <class Judge>
concept JudgeBackend = requires(Judge& j, const judge_request& r) {
  { j.ask(r) } -> std::same_as<expected<std::string, judge_error>>;
};

/// The "no backend configured" judge: every llm_structured evaluation yields `error`
/// ("no judge backend") — fail closed.
struct no_judge_backend {
  expected<std::string, judge_error> ask(const judge_request&) const {
    return unexpected(judge_error{judge_errc::unavailable, "no judge backend"});
  }
};

static_assert(JudgeBackend<no_judge_backend>);

LITTLE_LOOPS_INLINE std::string build_judge_prompt(std::string_view instruction, std::string_view output);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief The user prompt sent to the judge: `<instruction>\n\n<action_output>\n<tail>\n
/// </action_output>` with the output cut to its last 4000 characters.
LITTLE_LOOPS_INLINE std::string build_judge_prompt(std::string_view instruction, std::string_view output) {
  std::string_view tail = detail::utf8_suffix(output, judge_output_tail_chars);
  std::string p;
  p.reserve(instruction.size() + tail.size() + 40);
  p += instruction;
  p += "\n\n<action_output>\n";
  p += tail;
  p += "\n</action_output>";
  return p;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// Outcome of parsing a judge reply.
struct judge_reply {
  json object;        ///< the verdict object
  std::string error;  ///< non-empty: the reply was unusable (and why)
  /// The reply was a CLI envelope reporting an error (`"is_error"` set), not a bad answer.
  bool backend_error = false;
};

namespace detail {

LITTLE_LOOPS_INLINE std::optional<std::string> error_envelope_text(const json& j);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
// Finds the end (one past the matching `}`) of the object starting at `start`, skipping
// braces inside strings. Returns npos when unbalanced.
inline std::size_t match_object_end(std::string_view text, std::size_t start) noexcept {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (depth == 0) return std::string_view::npos;
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

inline bool has_verdict(const json& j) {
  if (!j.is_object()) return false;
  auto it = j.find("verdict");
  return it != j.end() && it->is_string();
}

// Python truthiness of a JSON value (the original tests `envelope.get("is_error")`).
inline bool truthy(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return false;
    case json::value_t::boolean: return j.get<bool>();
    case json::value_t::number_integer: return j.get<std::int64_t>() != 0;
    case json::value_t::number_unsigned: return j.get<std::uint64_t>() != 0;
    case json::value_t::number_float: return j.get<double>() != 0.0;
    case json::value_t::string: return !j.get_ref<const std::string&>().empty();
    case json::value_t::array:
    case json::value_t::object: return !j.empty();
    default: return true;
  }
}

/// The text of a CLI error envelope (`{"is_error": <truthy>, "result": ...}`), cut to 200
/// bytes; nullopt when `j` is not one.
LITTLE_LOOPS_INLINE std::optional<std::string> error_envelope_text(const json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto flag = j.find("is_error");
  if (flag == j.end() || !truthy(*flag)) return std::nullopt;
  std::string text;
  if (const auto res = j.find("result"); res != j.end() && !res->is_null())
    text = res->is_string() ? res->get<std::string>()
                            : res->dump(-1, ' ', false, json::error_handler_t::replace);
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  text = first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
  return sanitize_utf8(utf8_prefix(text, 200));
}

// What a reply holds: candidate objects, the first error envelope met, if any, and the
// first key the judge's answer is read from that an object of it repeats.
struct judge_candidates {
  std::vector<json> objects;
  std::optional<std::string> envelope_error;
  std::optional<std::string> repeated_key;
};

// The keys a reply is read by: in a verdict object, or in a CLI envelope.
inline bool is_judge_reply_key(std::string_view key) noexcept {
  for (std::string_view k : {"verdict", "reasons", "reason", "confidence", "is_error", "result",
                             "structured_output"})
    if (key == k) return true;
  return false;
}

// json::parse of [first, last) (discarded when invalid) that also notes in `repeated` the
// first of the reply's keys that an object in it holds twice: the parser keeps the last
// value, so `{"verdict": "fail", "verdict": "pass"}` would read as a pass. Seed 003's parser
// (serde) rejects such a reply, and a judge's answer must fail closed.
inline json parse_reply_object(std::string_view::const_iterator first,
                               std::string_view::const_iterator last,
                               std::optional<std::string>& repeated) {
  std::vector<std::vector<std::string>> open;  // the reply keys seen, per open object
  bool twice = false;
  std::string which;
  json::parser_callback_t note = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        open.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!open.empty()) open.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open.empty() && !twice && parsed.is_string()) {
          const auto& key = parsed.get_ref<const std::string&>();
          if (!is_judge_reply_key(key)) break;
          auto& seen = open.back();
          if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
            twice = true;
            which = key;
          } else {
            seen.push_back(key);
          }
        }
        break;
      default:
        break;
    }
    return true;
  };
  json j = json::parse(first, last, note, false);
  if (twice && !j.is_discarded() && !repeated) repeated = std::move(which);
  return j;
}

inline void collect_candidates(std::string_view text, judge_candidates& out, int depth);

// Takes one parsed object: an error envelope is noted; a CLI envelope (`{"result":
// "<json text>" | {...}}`, `{"structured_output": {...}}`) is unwrapped into its candidates
// (from both keys when both hold one, so a `structured_output` and a `result` that disagree
// fail closed); anything else is a candidate itself.
inline void take_object(json j, judge_candidates& out, int depth) {
  if (auto err = error_envelope_text(j)) {
    if (!out.envelope_error) out.envelope_error = std::move(*err);
    return;
  }
  if (!has_verdict(j) && depth <= 3) {
    const std::size_t before = out.objects.size();
    for (const char* key : {"structured_output", "result"}) {
      auto it = j.find(key);
      if (it == j.end()) continue;
      if (it->is_object()) {
        if (has_verdict(*it)) out.objects.push_back(*it);
      } else if (it->is_string()) {
        collect_candidates(it->get_ref<const std::string&>(), out, depth + 1);
      }
    }
    if (out.objects.size() != before) return;
  }
  out.objects.push_back(std::move(j));
}

inline void collect_candidates(std::string_view text, judge_candidates& out, int depth) {
  std::string_view trimmed = trim_py(text);
  if (trimmed.empty()) return;
  if (trimmed.front() == '{') {
    json whole = parse_reply_object(trimmed.begin(), trimmed.end(), out.repeated_key);
    if (!whole.is_discarded() && whole.is_object()) {
      take_object(std::move(whole), out, depth);
      return;
    }
  }
  // Each start that is not an object costs a scan (to its matching brace, or to the end of
  // the text when unbalanced): the bytes scanned are bounded by a budget proportional to the
  // text, so hostile replies ("{{{{...") stay linear while prose or code with many braces
  // before the answer is still searched.
  std::size_t budget = 16 * text.size() + 65536;
  std::size_t pos = 0;
  while ((pos = text.find('{', pos)) != std::string_view::npos) {
    const std::size_t end = match_object_end(text, pos);
    const std::size_t cost = (end == std::string_view::npos ? text.size() : end) - pos;
    if (cost > budget) break;
    budget -= cost;
    if (end == std::string_view::npos) {
      ++pos;
      continue;
    }
    json j = parse_reply_object(text.begin() + static_cast<std::ptrdiff_t>(pos),
                                text.begin() + static_cast<std::ptrdiff_t>(end), out.repeated_key);
    if (!j.is_discarded() && j.is_object()) {
      take_object(std::move(j), out, depth);
      pos = end;
    } else {
      ++pos;
    }
  }
}

// A verdict object's confidence as judge_verdict reads it: absent → 1.0; a number, or a
// string holding one; anything else (null included) → nullopt.
inline std::optional<double> candidate_confidence(const json& obj) {
  auto it = obj.find("confidence");
  if (it == obj.end()) return 1.0;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) return parse_number(it->get_ref<const std::string&>());
  return std::nullopt;
}

inline std::string confidence_text(const json& obj) {
  auto it = obj.find("confidence");
  return it == obj.end() ? std::string("none") : it->dump();
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_INLINE judge_reply parse_judge_reply(std::string_view raw);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief Extracts the verdict object from a judge's raw reply, tolerantly: bare JSON, JSON in
/// ``` fences, JSON after a preamble (string-aware brace matching), CLI envelopes
/// (`{"result": ...}`, `{"structured_output": ...}`). Fails closed: empty or garbage replies,
/// objects without a string `verdict`, several verdict objects that disagree (on the verdict,
/// or on the confidence: missing counts as 1.0), and a CLI
/// envelope reporting an error (`"is_error"` set; then `backend_error` is true) all give an
/// `error` text.
LITTLE_LOOPS_INLINE judge_reply parse_judge_reply(std::string_view raw) {
  judge_reply reply;
  if (detail::trim_py(raw).empty()) {
    reply.error = "empty judge reply";
    return reply;
  }
  detail::judge_candidates candidates;
  detail::collect_candidates(raw, candidates, 0);
  if (candidates.repeated_key) {
    reply.error = fmt::format("judge reply repeats the key \"{}\"", *candidates.repeated_key);
    return reply;
  }
  if (candidates.envelope_error) {
    reply.error = "judge reported an error: " + *candidates.envelope_error;
    reply.backend_error = true;
    return reply;
  }
  const json* chosen = nullptr;
  for (const auto& c : candidates.objects) {
    if (!detail::has_verdict(c)) continue;
    if (!chosen) {
      chosen = &c;
      continue;
    }
    if (c["verdict"] != (*chosen)["verdict"]) {
      reply.error = fmt::format("judge reply holds disagreeing verdicts (\"{}\" and \"{}\")",
                                (*chosen)["verdict"].get<std::string>(),
                                c["verdict"].get<std::string>());
      return reply;
    }
    // The same verdict with another confidence may be another effective verdict
    // (`_uncertain`): which one holds would depend on the order, so it is a disagreement too.
    const auto a = detail::candidate_confidence(*chosen);
    const auto b = detail::candidate_confidence(c);
    if (!a || !b || *a != *b) {
      reply.error = fmt::format(
          "judge reply holds disagreeing confidences for the verdict \"{}\" ({} and {})",
          c["verdict"].get<std::string>(), detail::confidence_text(*chosen),
          detail::confidence_text(c));
      return reply;
    }
  }
  if (!chosen) {
    reply.error = candidates.objects.empty() ? "no JSON object in judge reply"
                                             : "judge reply has no verdict";
    // A CLI envelope whose `result` is empty: the original's words.
    for (const auto& c : candidates.objects)
      if (const auto r = c.find("result");
          r != c.end() && r->is_string() && r->get_ref<const std::string&>().empty())
        reply.error = "Empty result field in Claude CLI response";
    return reply;
  }
  reply.object = *chosen;
  return reply;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

namespace detail {

LITTLE_LOOPS_INLINE evaluation_result judge_error_result(std::string message, const char* flag,
                                            std::string_view raw = {});
LITTLE_LOOPS_INLINE evaluation_result judge_malformed_result(const std::string& why, std::string_view raw);
LITTLE_LOOPS_INLINE std::string judge_reasons_shape_error(const json& obj);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE evaluation_result judge_error_result(std::string message, const char* flag,
                                            std::string_view raw) {
  evaluation_result r;
  r.verdict = "error";
  r.details = json::object();
  r.details["error"] = message;
  r.details["reason"] = std::move(message);
  if (flag) r.details[flag] = true;
  if (!raw.empty()) r.details["raw_preview"] = sanitize_utf8(utf8_prefix(raw, 300));
  return r;
}

// A reply that cannot be used: `error` keeps the original's "Failed to parse LLM response:
// <why>"; `reason` says it as seed 003 does ("judge produced malformed JSON: <why>").
LITTLE_LOOPS_INLINE evaluation_result judge_malformed_result(const std::string& why, std::string_view raw) {
  evaluation_result r = judge_error_result("Failed to parse LLM response: " + why, "malformed", raw);
  r.details["reason"] = "judge produced malformed JSON: " + why;
  return r;
}

// What is wrong with the shape of a verdict object's `reason` / `reasons`, or "" when
// nothing is: `reason` must be a string (or null: the original reads it with .get()),
// `reasons` an array of strings — absent is empty, but null is not (seed 003 reads it as a
// serde `#[serde(default)] Vec<String>`, which rejects null: the reply is malformed).
LITTLE_LOOPS_INLINE std::string judge_reasons_shape_error(const json& obj) {
  if (auto it = obj.find("reason"); it != obj.end() && !it->is_null() && !it->is_string())
    return "reason is not a string";
  if (auto it = obj.find("reasons"); it != obj.end()) {
    if (!it->is_array()) return "reasons is not an array";
    for (const auto& item : *it)
      if (!item.is_string()) return "reasons holds an item that is not a string";
  }
  return {};
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail

LITTLE_LOOPS_INLINE evaluation_result judge_verdict(std::string_view raw, double min_confidence,
                                       bool uncertain_suffix);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief Turns a judge's raw reply into a verdict: the reply's `verdict`, with
/// `<verdict>_uncertain` when `uncertain_suffix` is set and `confidence < min_confidence`.
/// Details `{"confidence", "confident", "reason", "raw"}` (`reason` is the reply's non-empty
/// one, else its `reasons` joined with "; " when it lists any, else — for the verdict `fail` —
/// "judge returned `fail` without reasons", else ""); unusable replies give `error` with `{"error", "reason",
/// "raw_preview"}` and a flag: `malformed` (`error` "Failed to parse LLM response: <why>",
/// `reason` "judge produced malformed JSON: <why>"), or `api_error` for a CLI envelope
/// reporting an error. A missing confidence counts as 1.0; a `null` one, or one that is not a
/// number (numeric strings are numbers), is malformed; so are a `reason` that is not a string
/// (or null) and a `reasons` that is not an array of strings, null included (fail closed). Verdict values are not
/// checked against the schema's enum (verdicts are free strings).
LITTLE_LOOPS_INLINE evaluation_result judge_verdict(std::string_view raw, double min_confidence,
                                       bool uncertain_suffix) {
  judge_reply reply = parse_judge_reply(raw);
  if (reply.backend_error) return detail::judge_error_result(reply.error, "api_error", raw);
  if (!reply.error.empty()) return detail::judge_malformed_result(reply.error, raw);
  const json& obj = reply.object;
  std::string verdict = obj["verdict"].get<std::string>();
  if (verdict.empty()) return detail::judge_malformed_result("empty verdict", raw);
  double confidence = 1.0;  // only when absent: a null confidence is malformed (fail closed)
  if (obj.contains("confidence")) {
    std::optional<double> c = detail::candidate_confidence(obj);
    if (!c) return detail::judge_malformed_result("confidence is not a number", raw);
    confidence = *c;
  }
  if (std::string bad = detail::judge_reasons_shape_error(obj); !bad.empty())
    return detail::judge_malformed_result(bad, raw);
  // Seed 003: a `fail` that gives no reasons says so (checked before the `_uncertain` suffix).
  const bool bare_fail = verdict == "fail";
  const bool confident = confidence >= min_confidence;
  if (uncertain_suffix && !confident) verdict += "_uncertain";
  evaluation_result r;
  r.verdict = std::move(verdict);
  r.details = json::object();
  r.details["confidence"] = confidence;
  r.details["confident"] = confident;
  // The shapes were checked above: `reason` is a string or null, `reasons` strings or null.
  std::string reason;
  if (auto it = obj.find("reason"); it != obj.end() && it->is_string())
    reason = it->get<std::string>();
  if (reason.empty()) {
    // Seed 003's judges answer `{"verdict": ..., "reasons": [...]}`: joined with "; "; the
    // default message only when the list is empty (`[""]` joins to "", as in the seed).
    bool listed = false;
    if (auto reasons = obj.find("reasons"); reasons != obj.end() && reasons->is_array())
      for (const auto& item : *reasons) {
        if (listed) reason += "; ";
        listed = true;
        reason += item.get_ref<const std::string&>();
      }
    if (!listed && bare_fail) reason = "judge returned `fail` without reasons";
  }
  r.details["reason"] = std::move(reason);
  r.details["raw"] = obj;
  return r;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// @brief Runs an llm_structured evaluation against `judge`: builds the prompt from
/// `instruction` (default prompt when empty) and the tail of `output`, asks the backend and
/// parses the reply. Every failure is the verdict `error` (fail closed): `llm.enabled: false`
/// ("LLM evaluation disabled"), no backend ("no judge backend", `missing_dependency`),
/// backend errors (`api_error`), timeouts (`error` "LLM evaluation timeout", `reason` "LLM
/// evaluation timeout: judge timed out[: <backend message>]", `timeout`), empty answers
/// (`empty_output`), malformed replies (`malformed`, `reason` "judge produced malformed
/// JSON: <why>", or "judge produced malformed output: <why>" when the backend says so). An
/// absent, null or empty `schema` means default_judge_schema().
template <JudgeBackend Judge>
evaluation_result evaluate_llm_structured(Judge& judge, std::string_view output,
                                          std::string_view instruction, const json* schema,
                                          double min_confidence, bool uncertain_suffix,
                                          const llm_config& llm) {
  if (!llm.enabled) return detail::judge_error_result("LLM evaluation disabled", "disabled");
  if (instruction.empty()) instruction = default_judge_prompt;
  static const json default_schema = default_judge_schema();
  // An absent, null or empty schema means the default one (as `schema or DEFAULT` did).
  const json& effective_schema =
      schema && !schema->is_null() && !schema->empty() ? *schema : default_schema;
  std::string prompt = build_judge_prompt(instruction, output);
  judge_request req;
  req.prompt = prompt;
  req.instruction = instruction;
  req.output_tail = detail::utf8_suffix(output, judge_output_tail_chars);
  req.schema = &effective_schema;
  req.model = llm.model;
  req.max_tokens = llm.max_tokens;
  req.timeout = std::chrono::milliseconds(
      static_cast<std::chrono::milliseconds::rep>(llm.timeout * 1000.0));
  expected<std::string, judge_error> reply = judge.ask(req);
  if (!reply) {
    const judge_error& e = reply.error();
    switch (e.kind) {
      case judge_errc::timeout: {
        // `error` is exactly the original's text; `reason` says the judge timed out (seed
        // 003) and adds the backend's words.
        evaluation_result r = detail::judge_error_result("LLM evaluation timeout", "timeout");
        std::string reason = "LLM evaluation timeout: judge timed out";
        if (!e.message.empty()) reason += ": " + e.message;
        r.details["reason"] = std::move(reason);
        return r;
      }
      case judge_errc::empty_output:
        return detail::judge_error_result(
            e.message.empty() ? std::string("judge returned empty output") : e.message,
            "empty_output");
      case judge_errc::unavailable:
        return detail::judge_error_result(
            e.message.empty() ? std::string("no judge backend") : e.message,
            "missing_dependency");
      case judge_errc::malformed: {
        evaluation_result r = detail::judge_error_result(
            "Failed to parse LLM response: " + e.message, "malformed");
        r.details["reason"] = "judge produced malformed output: " + e.message;
        return r;
      }
      case judge_errc::failed:
        break;
    }
    // `error` names the backend's failure; `reason` says it as seed 003 does.
    evaluation_result r = detail::judge_error_result("judge backend error: " + e.message, "api_error");
    r.details["reason"] = "judge unavailable: judge LLM call failed: " + e.message;
    return r;
  }
  if (detail::trim_py(*reply).empty())  // an answer of nothing: the call failed silently
    return detail::judge_error_result("judge returned empty output", "empty_output");
  return judge_verdict(*reply, min_confidence, uncertain_suffix);
}

LITTLE_LOOPS_NAMESPACE_END
