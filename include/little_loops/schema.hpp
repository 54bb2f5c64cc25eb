// little_loops — loop schema value types and their strict JSON (de)serialisation
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/json.hpp>

#include <optional>
#include <string>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN

/// Which evaluator turns an action result into a verdict (seed 000, design §3.9–3.10).
enum class evaluator_type {
  exit_code,        ///< 0 → success, 1 → failure, other → error
  output_numeric,   ///< parse stdout as a number and compare with `target`
  output_json,      ///< extract `path` from stdout JSON and compare with `target`
  output_contains,  ///< regex/substring `pattern` in stdout, optionally negated
  convergence,      ///< compare a value with `target` and the previous value
  llm_structured,   ///< ask an LLM judge (host-supplied backend)
};

/// Comparison operators of output_numeric / output_json (`operator:` in documents).
enum class comparison_op { eq, ne, lt, le, gt, ge };

/// Direction of improvement for convergence.
enum class convergence_direction { minimize, maximize };

/// How an action's text is run (`action_type:` in documents).
enum class action_kind {
  shell,          ///< a shell command
  prompt,         ///< an LLM prompt
  slash_command,  ///< a slash command for an agent CLI
};

/// What the host does on a `CONTEXT_HANDOFF:` signal (`on_handoff:` in documents).
enum class handoff_policy { pause, spawn, terminate };

/// Evaluator configuration of a state (`evaluate:`). Every string field may hold `${...}`
/// templates; `target` and `tolerance` may be numbers or template strings.
struct evaluate_config {
  evaluator_type type = evaluator_type::exit_code;
  std::optional<comparison_op> op;          ///< `operator`
  std::optional<json> target;               ///< number, string (template) or any JSON value
  std::optional<json> tolerance;            ///< number or template string (convergence)
  std::optional<std::string> pattern;       ///< output_contains
  bool negate = false;                      ///< output_contains
  std::optional<std::string> path;          ///< output_json
  std::optional<std::string> prompt;        ///< llm_structured
  std::optional<json> schema;               ///< llm_structured response schema (an object)
  double min_confidence = 0.5;              ///< llm_structured, in [0, 1]
  bool uncertain_suffix = false;            ///< llm_structured: `<verdict>_uncertain`
  std::optional<std::string> source;        ///< replaces the action output as input
  std::optional<std::string> previous;      ///< convergence: template of the previous value
  convergence_direction direction = convergence_direction::minimize;

  friend bool operator==(const evaluate_config&, const evaluate_config&) = default;
};

/// Verdict → target routing table of a state (`route:`). `_` is the default route and
/// `_error` the route for the `error` verdict.
struct route_config {
  ordered_map<std::string, std::string> routes;  ///< verdict → target, in document order
  std::optional<std::string> default_target;     ///< `_`
  std::optional<std::string> error_target;       ///< `_error`

  friend bool operator==(const route_config&, const route_config&) = default;
};

/// One state of a loop.
struct state_config {
  std::optional<std::string> action;           ///< command or prompt text (template)
  std::optional<action_kind> action_type;      ///< default: prompt when action starts with `/`... see docs
  std::optional<evaluate_config> evaluate;     ///< default evaluator when absent
  std::optional<route_config> route;
  ordered_map<std::string, std::string> on;    ///< `on_<verdict>: target` shorthands
  std::optional<std::string> next;             ///< unconditional transition (happy path)
  bool terminal = false;
  bool failure = false;                        ///< a terminal that means "failed"
  std::optional<std::string> capture;          ///< store the action result as captured.<name>
  std::optional<double> timeout;               ///< action timeout in seconds
  std::optional<std::string> on_maintain;      ///< where maintain mode goes from here

  friend bool operator==(const state_config&, const state_config&) = default;
};

/// LLM judge settings of a loop (`llm:`).
struct llm_config {
  bool enabled = true;
  std::string model = "sonnet";
  int max_tokens = 256;
  double timeout = 1800;  ///< seconds

  friend bool operator==(const llm_config&, const llm_config&) = default;
};

/// A loop: named states, where to start, limits and shared data.
struct fsm_loop {
  std::string name;
  std::optional<std::string> description;
  std::string initial;
  ordered_map<std::string, state_config> states;  ///< in document order
  json context = json::object();                   ///< user variables, `${context.*}`
  std::vector<std::string> scope;                  ///< paths the loop works on
  int max_iterations = 50;                         ///< state executions allowed
  std::optional<double> backoff;                   ///< seconds between steps
  std::optional<double> timeout;                   ///< loop deadline in seconds
  bool maintain = false;                           ///< restart after a terminal
  llm_config llm;
  handoff_policy on_handoff = handoff_policy::pause;
  std::optional<std::string> on_max_iterations;    ///< state run once when the cap is hit

  friend bool operator==(const fsm_loop&, const fsm_loop&) = default;
};

LITTLE_LOOPS_NAMESPACE_END
