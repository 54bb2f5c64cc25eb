// little_loops — fuzz targets: the parsers that read untrusted text (design §5), each with the
// invariants it must keep on any input. Used by the libFuzzer driver (fuzz_main.cpp) and by the
// corpus replay in the unit tests (test_fuzz_replay.cpp).
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/fsm.hpp>
#include <little_loops/yaml_loader.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace little_loops_fuzz {

namespace ll = little_loops;

/// An input broke an invariant (libFuzzer reports the uncaught exception as a crash).
struct invariant_broken : std::logic_error {
  using std::logic_error::logic_error;
};

inline void require(bool ok, std::string_view what) {
  if (!ok) throw invariant_broken(std::string(what));
}

/// Splits "first line\nrest" (no newline: all of it is the first part).
inline std::pair<std::string_view, std::string_view> split_first_line(std::string_view data) {
  const auto nl = data.find('\n');
  if (nl == std::string_view::npos) return {data, {}};
  return {data.substr(0, nl), data.substr(nl + 1)};
}

/// A loop that loaded must compile, and must read back equal from its own JSON.
inline void check_loaded_loop(const ll::fsm_loop& loop) {
  auto compiled = ll::compile_loop(loop);
  require(compiled.has_value(), "a validated loop failed to compile");
  const ll::json doc = loop;
  auto again = ll::load_loop(doc);
  require(again.has_value(), "a loop's own JSON does not load");
  require(*again == loop, "a loop's own JSON loads as a different loop");
}

/// Loop documents as JSON text (parse_loop_text + validate).
inline void loop_json(std::string_view text) {
  auto loop = ll::load_loop_text(text);
  if (!loop) {
    require(!loop.error().message.empty(), "a rejected loop has no message");
    return;
  }
  check_loaded_loop(*loop);
}

/// Loop documents as YAML (yaml-cpp → the JSON model → the same parser).
inline void loop_yaml(std::string_view text) {
  auto loop = ll::load_loop_yaml(text, "fuzz.yaml");
  if (!loop) {
    require(loop.error().message.rfind("fuzz.yaml", 0) == 0,
            "a YAML diagnostic does not start with the file name");
    return;
  }
  check_loaded_loop(*loop);
}

/// Paradigm specs: what compiles goes through the same validator and compiler.
inline void paradigm(std::string_view text) {
  auto loop = ll::compile_paradigm_text(text);
  if (!loop) {
    require(!loop.error().message.empty(), "a rejected spec has no message");
    return;
  }
  check_loaded_loop(*loop);
}

/// `${…}` templates: compile, then render against data of every namespace.
inline void template_text(std::string_view text) {
  auto tpl = ll::compile_template(text);
  if (!tpl) {
    require(tpl.error().code == ll::errc::template_syntax, "a template error of another kind");
    require(!tpl.error().message.empty(), "a template error without a message");
    return;
  }
  static const ll::json context = ll::json::parse(
      R"({"dir": "src", "n": 3, "quote": "it's \"x\"", "list": [1, {"k": null}], "t": true,
          "nested": {"a": {"b": [10, 20]}}, "empty": {}})");
  ll::captured_map captured;
  captured["tests"] = ll::captured_record{"out\n2", "err", 1, 12, "failure", "", "", {}};
  ll::prev_record prev;
  prev.state = "check";
  prev.output = "42";
  prev.verdict = "failure";
  prev.details = ll::json{{"exit_code", 1}};
  ll::evaluation_result result{"success", ll::json{{"value", 7}}};
  ll::interpolation_context ctx;
  ctx.context = &context;
  ctx.captured = &captured;
  ctx.prev = &prev;
  ctx.result = &result;
  ctx.state_name = "check";
  ctx.iteration = 4;
  ctx.loop_name = "fuzz";
  ctx.started_at = "2026-01-01T00:00:00+00:00";
  ctx.elapsed_ms = 1500;
  ctx.env = [](std::string_view name, void*) -> std::optional<std::string> {
    if (name == "HOME") return std::string("/home/fuzz");
    return std::nullopt;
  };
  auto rendered = ll::render(*tpl, ctx);
  if (!rendered) require(!rendered.error().message.empty(), "a render error without a message");
  // Rendering is deterministic.
  auto twice = ll::render(*tpl, ctx);
  require(rendered.has_value() == twice.has_value() && (!rendered || *rendered == *twice),
          "two renders of one template differ");
}

/// output_json's path extraction (a streaming scanner) against a full parse of the same
/// document by the library's json (insertion order, as the scanner keeps it) and a lookup in it. Input: the path, a newline, the document.
inline void json_path(std::string_view data) {
  const auto [path, doc] = split_first_line(data);
  const auto segs = ll::detail::parse_json_path(path);
  ll::detail::output_document value;
  std::string message;
  const auto got = ll::detail::extract_json_path(doc, segs, value, message);
  if (got == ll::detail::json_extract::invalid) require(!message.empty(), "invalid JSON without a message");

  // The comparison step takes any extracted value.
  const auto verdict = ll::evaluate_output_json(doc, path, ll::comparison_op::eq, ll::json(1)).verdict;
  require(verdict == "success" || verdict == "failure" || verdict == "error", "unexpected verdict");

  // Where nlohmann accepts the document (strict RFC 8259: no NaN/Infinity, valid UTF-8, no
  // lone surrogates), the scanner must accept it and find the same value. Nesting deeper
  // than the scanner's limit is refused on purpose.
  // nlohmann stops at a NUL byte as at the end of the input, and skips a leading UTF-8 BOM;
  // Python's json.loads and the scanner refuse both ("Extra data", "Unexpected UTF-8 BOM").
  if (doc.find('\0') != std::string_view::npos || doc.substr(0, 3) == "\xEF\xBB\xBF") return;
  const auto reference = ll::json::parse(doc.begin(), doc.end(), nullptr, false);
  if (reference.is_discarded()) return;
  std::size_t depth = 0, deepest = 0;
  for (char c : doc) {
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  if (deepest >= ll::detail::max_output_depth / 2) return;
  require(got != ll::detail::json_extract::invalid, "the scanner refused a document nlohmann parsed");
  const auto looked = ll::detail::lookup_json_path(reference, segs);
  require((looked.value != nullptr) == (got == ll::detail::json_extract::found),
          "the scanner and the DOM lookup disagree on whether the path exists");
  if (looked.value != nullptr) require(*looked.value == value, "the scanner found another value");
}

/// The LLM judge's reply parser and verdict.
inline void judge_reply(std::string_view raw) {
  for (const bool suffix : {false, true}) {
    const auto r = ll::judge_verdict(raw, 0.5, suffix);
    require(!r.verdict.empty(), "an empty judge verdict");
    require(r.details.to_json().is_object(), "judge details are not an object");
  }
}

/// output_contains: a pattern (Python `re` syntax, or literal), a newline, the text.
inline void contains(std::string_view data) {
  const auto [pattern, text] = split_first_line(data);
  const auto plain = ll::evaluate_output_contains(text, pattern, false).verdict;
  const auto negated = ll::evaluate_output_contains(text, pattern, true).verdict;
  require(plain == "success" || plain == "failure", "output_contains verdict");
  require(plain != negated, "negate does not flip the verdict");
  if (ll::detail::is_literal_pattern(pattern))
    require((plain == "success") == (text.find(pattern) != std::string_view::npos),
            "a literal pattern is not a substring search");
}

/// Snapshots read strictly; what reads writes back the same.
inline void snapshot_text(std::string_view text) {
  auto snap = ll::snapshot_from_json_text(text);
  if (!snap) {
    require(!snap.error().message.empty(), "a rejected snapshot has no message");
    return;
  }
  auto again = ll::snapshot_from_json(ll::to_json(*snap));
  require(again.has_value(), "a snapshot's own JSON does not read");
  require(*again == *snap, "a snapshot's own JSON reads differently");
}

/// Resume is exact (design §13) for any loop: a loop document is run to its end with a
/// scripted runner (results chosen from the input's bytes), then, at every state boundary,
/// snapshotted to JSON, resumed in a fresh executor and run again; the resumed run must make
/// the same calls and end the same way.
inline void executor_resume(std::string_view text) {
  auto loop = ll::load_loop_text(text);
  if (!loop) return;
  loop->max_iterations = std::min(loop->max_iterations, 24);
  std::vector<ll::scripted_response> script;
  static const char* const outputs[] = {"", "1", "3.5", "ok PASSED", "FAILED", "{\"n\": 2}",
                                        "10", "CONTEXT_HANDOFF: next", "LOOP_STOP: now"};
  for (std::size_t k = 0; k < 40; ++k) {
    const auto b = static_cast<unsigned char>(text.empty() ? 0 : text[(k * 7) % text.size()]);
    script.push_back(ll::scripted_response::exit(b % 3 == 0 ? 1 : 0,
                                                 outputs[(b / 3) % std::size(outputs)]));
  }
  auto compiled = ll::compile_loop(*loop);
  require(compiled.has_value(), "a validated loop failed to compile");
  struct run_record {
    ll::execution_result result;
    std::vector<std::string> calls;
  };
  auto run_from = [&](std::size_t skip, const ll::snapshot* from) -> run_record {
    ll::scripted_runner runner;
    runner.by_index(std::vector<ll::scripted_response>(script.begin() + static_cast<std::ptrdiff_t>(
                                                           std::min(skip, script.size())),
                                                       script.end()));
    ll::manual_clock clock;
    ll::executor_options options;
    options.clock = &clock;
    auto ex = ll::make_executor(*compiled, runner, ll::default_evaluator{}, ll::null_event_sink{}, options);
    require(ex.has_value(), "no executor for a compiled loop");
    if (from != nullptr) require(ex->resume(*from).has_value(), "a snapshot of this loop does not resume");
    run_record r{ex->run(), {}};
    for (const auto& c : runner.calls()) r.calls.push_back(c.text);
    return r;
  };
  const run_record whole = run_from(0, nullptr);
  for (std::int64_t stop_after = 0; stop_after <= std::min<std::int64_t>(whole.result.iterations, 6); ++stop_after) {
    ll::scripted_runner runner;
    runner.by_index(script);
    ll::manual_clock clock;
    ll::executor_options options;
    options.clock = &clock;
    auto ex = ll::make_executor(*compiled, runner, ll::default_evaluator{}, ll::null_event_sink{}, options);
    require(ex.has_value(), "no executor for a compiled loop");
    bool more = true;
    for (std::int64_t k = 0; k < stop_after && more; ++k) more = ex->step();
    if (!more) break;
    auto snap = ll::snapshot_from_json(ll::to_json(ex->snapshot()));
    require(snap.has_value(), "a snapshot's JSON does not read back");
    const run_record rest = run_from(runner.call_count(), &*snap);
    std::vector<std::string> calls;
    for (const auto& c : runner.calls()) calls.push_back(c.text);
    calls.insert(calls.end(), rest.calls.begin(), rest.calls.end());
    require(calls == whole.calls, "the resumed run made other calls");
    require(rest.result.final_state == whole.result.final_state, "the resumed run ended elsewhere");
    require(rest.result.iterations == whole.result.iterations, "the resumed run counted other iterations");
    require(rest.result.terminated_by == whole.result.terminated_by, "the resumed run ended otherwise");
    require(rest.result.captured == whole.result.captured, "the resumed run captured other values");
  }
}

struct target {
  std::string_view name;
  void (*run)(std::string_view);
};

inline constexpr std::array<target, 9> targets{{
    {"loop_json", loop_json},
    {"loop_yaml", loop_yaml},
    {"paradigm", paradigm},
    {"template", template_text},
    {"json_path", json_path},
    {"judge_reply", judge_reply},
    {"contains", contains},
    {"snapshot", snapshot_text},
    {"executor_resume", executor_resume},
}};

}  // namespace little_loops_fuzz
