// little_loops — a JSON Schema (draft 2020-12) for loop files, made from the loader's key tables
// SPDX-License-Identifier: MIT
#pragma once

// The schema is generated, not written by hand: its keys are the tables the loop reader
// accepts (detail/loop_reader.hpp) and its enums the names the reader parses
// (detail/schema_enums.hpp), so a key the reader learns appears here without an edit.
// Editors use it to complete and check keys (`# yaml-language-server: $schema=…`); the
// loader stays the judge of what is valid (values, cross-references, templates).

#include <little_loops/config.hpp>
#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>
#include <little_loops/detail/schema_enums.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions read the key tables
#  include <little_loops/detail/foreign_keys.hpp>
#  include <little_loops/detail/loop_reader.hpp>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <string>
#include <string_view>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// The JSON Schema of a value whose enum names are `Enum`'s.
template <class Enum>
json enum_schema() {
  json names = json::array();
  for (const auto name : enum_info<Enum>::names) names.push_back(std::string(name));
  return json{{"enum", std::move(names)}};
}

LITTLE_LOOPS_INLINE json typed(std::string_view type);
LITTLE_LOOPS_INLINE json string_or_number();
LITTLE_LOOPS_INLINE json key_value_schema(std::string_view key);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE json typed(std::string_view type) { return json{{"type", std::string(type)}}; }

LITTLE_LOOPS_INLINE json string_or_number() { return json{{"type", json::array({"string", "number"})}}; }

/// What a key's value looks like, where the reader reads one shape; {} (anything) for a key
/// this table does not know yet, so a new key is at least completed by editors.
LITTLE_LOOPS_INLINE json key_value_schema(std::string_view key) {
  static const std::pair<std::string_view, std::string_view> kinds[] = {
      {"name", "string"},          {"description", "string"},   {"initial", "string"},
      {"action", "string"},        {"next", "string"},          {"capture", "string"},
      {"on_maintain", "string"},   {"on_retry_exhausted", "string"},
      {"on_max_iterations", "string"}, {"on_max_steps", "string"}, {"input_key", "string"},
      {"category", "string"},      {"visibility", "string"},    {"model", "string"},
      {"prompt", "string"},        {"pattern", "string"},       {"path", "string"},
      {"source", "string"},        {"previous", "string"},      {"uncertain_suffix", "string"},
      {"line", "string"},          {"key", "string"},           {"paradigm", "string"},
      {"terminal", "boolean"},     {"failure", "boolean"},      {"maintain", "boolean"},
      {"negate", "boolean"},       {"enabled", "boolean"},      {"singleton", "boolean"},
      {"max_iterations", "integer"}, {"max_steps", "integer"}, {"max_retries", "integer"},
      {"max_tokens", "integer"},   {"timeout", "number"},       {"backoff", "number"},
      {"default_timeout", "number"}, {"min_confidence", "number"},
      {"context", "object"},       {"schema", "object"},        {"labels", "array"},
      {"required_inputs", "array"}, {"retryable_exit_codes", "array"},
      {"error_patterns", "array"}, {"scope", "array"},
      {"retry", "array"},          {"catch", "object"},         {"circuit", "object"},
      {"max_edge_revisits", "integer"}, {"max_rate_limit_retries", "integer"},
      {"on_rate_limit_exhausted", "string"}, {"rate_limit_backoff_base_seconds", "number"},
      {"rate_limit_max_wait_seconds", "number"}, {"rate_limit_long_wait_ladder", "array"},
      {"max_stall", "integer"},    {"history_file", "string"},  {"epsilon", "number"},
      {"track", "array"},          {"max_repeat", "integer"},
      {"loop", "string"},          {"with", "object"},          {"output", "object"},
      {"context_passthrough", "boolean"}, {"agent", "string"},  {"params", "object"},
      {"suppress_catalog", "boolean"}, {"suppress_claude_md", "boolean"},
      {"worktree", "string"}};
  if (key == "type") return enum_schema<evaluator_type>();
  if (key == "operator") return enum_schema<comparison_op>();
  if (key == "direction") return enum_schema<convergence_direction>();
  if (key == "action_type") return enum_schema<action_kind>();
  if (key == "on_handoff") return enum_schema<handoff_policy>();
  if (key == "dialect") return enum_schema<loop_dialect>();
  if (key == "tamper_guard")
    return json{{"enum", json(std::vector<std::string>(tamper_guard_values.begin(), tamper_guard_values.end()))}};
  if (key == "prepatch_check")
    return json{{"enum", json(std::vector<std::string>(prepatch_check_values.begin(), prepatch_check_values.end()))}};
  if (key == "session_mode") return enum_schema<session_mode>();
  if (key == "target" || key == "tolerance") return string_or_number();
  if (key.starts_with("on_")) return typed("string");
  for (const auto& [name, kind] : kinds)
    if (name == key) return typed(kind);
  return json::object();
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// An object schema whose properties are `keys`, each described by key_value_schema().
template <class Keys>
json object_of(const Keys& keys) {
  json properties = json::object();
  for (const auto key : keys) properties[std::string(key)] = key_value_schema(key);
  return json{{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
}

}  // namespace detail

LITTLE_LOOPS_INLINE json loop_json_schema();
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// @brief The JSON Schema of a loop file, in either dialect: the loop, state, route,
/// evaluate and llm keys the reader accepts, the enums it parses, `on_<verdict>` shorthands,
/// the accepted lint flags, the composition, the resilience and the host keys. A paradigm spec (`paradigm:`) is only
/// checked to be an object. `ll-loop schema` prints it; docs/loop.schema.json is this, committed.
LITTLE_LOOPS_INLINE json loop_json_schema() {
  json state = detail::object_of(detail::state_keys);
  for (const auto key : detail::state_resilience_keys) state["properties"][std::string(key)] = detail::key_value_schema(key);
  json evaluate = detail::object_of(detail::evaluate_keys);
  for (const auto key : detail::stall_keys) evaluate["properties"][std::string(key)] = detail::key_value_schema(key);
  state["patternProperties"] = {{"^on_.+$", detail::typed("string")}};
  state["properties"]["evaluate"] = {{"$ref", "#/$defs/evaluate"}};
  state["properties"]["route"] = {{"$ref", "#/$defs/route"}};
  state["properties"]["type"] = {{"enum", json::array({"learning"})}};
  json throttle = detail::object_of(detail::throttle_keys);
  for (auto& [key, value] : throttle["properties"].items()) value = {{"type", "integer"}, {"minimum", 1}};
  state["properties"]["throttle"] = std::move(throttle);
  json learning = detail::object_of(detail::learning_keys);
  learning["properties"]["targets"] = {{"type", "array"}, {"items", detail::typed("string")}};
  learning["properties"]["targets_csv"] = detail::typed("string");
  learning["properties"]["max_retries"] = {{"type", "integer"}, {"minimum", 0}};
  learning["properties"]["max_retries_expr"] = detail::typed("string");
  state["properties"]["learning"] = std::move(learning);
  json route = {{"type", "object"},
                {"description", "verdict: state; \"_\" is the default, \"_error\" the error route"},
                {"additionalProperties", detail::typed("string")}};
  json loop = detail::object_of(detail::loop_keys);
  for (const auto key : detail::lint_flag_keys) loop["properties"][std::string(key)] = detail::typed("boolean");
  for (const auto key : detail::composition_keys) loop["properties"][std::string(key)] = json::object();
  for (const auto key : detail::loop_resilience_keys) loop["properties"][std::string(key)] = detail::key_value_schema(key);
  const json profile = detail::object_of(detail::pruning_profile_keys);
  for (const auto key : detail::host_keys)
    state["properties"][std::string(key)] = key == "pruning_profile" ? profile : detail::key_value_schema(key);
  loop["properties"]["pruning_profile"] = profile;
  loop["properties"]["session_mode"] = detail::key_value_schema("session_mode");
  loop["properties"]["states"] = {{"type", "object"},
                                  {"additionalProperties", {{"$ref", "#/$defs/state"}}}};
  loop["properties"]["llm"] = {{"$ref", "#/$defs/llm"}};
  return json{
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"title", "little_loops loop file"},
      {"description",
       "A loop (FSM) in either dialect, or a paradigm spec. Generated by `ll-loop schema` from "
       "the loader's key tables; `ll-loop validate` checks everything else."},
      {"type", "object"},
      {"if", {{"required", json::array({"paradigm"})}}},
      {"then", {{"properties", {{"paradigm", detail::typed("string")}}}}},
      {"else", {{"$ref", "#/$defs/loop"}}},
      {"$defs",
       {{"loop", std::move(loop)},
        {"state", std::move(state)},
        {"route", std::move(route)},
        {"evaluate", std::move(evaluate)},
        {"llm", detail::object_of(detail::llm_keys)}}}};
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

LITTLE_LOOPS_NAMESPACE_END
