// little_loops — what a sub-loop state passes to its child and gets back
// SPDX-License-Identifier: MIT
#pragma once

// Part of the executor (detail/subloop_frames.hpp runs the frames). A sub-loop state
// (`loop:`) finds its child, builds the context the child starts with, bounds its time, and
// when the child ends turns its outcome into the state's verdict and `captured.<state>`
// record (design §6.5; the reference's executor.py `_execute_sub_loop`).

#include <little_loops/child_loops.hpp>
#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/detail/run_records.hpp>
#include <little_loops/error.hpp>
#include <little_loops/execution_result.hpp>
#include <little_loops/executor_options.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/json.hpp>
#include <little_loops/results.hpp>
#include <little_loops/schema.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// How a child ended, as its parent sees it.
struct child_end {
  termination how = termination::terminal;
  bool failure = false;          ///< ended on a failure terminal
  std::string final_state;
  std::optional<error> failed;   ///< why it ended `error`
  json output;                   ///< the terminal's rendered `output:` (null: none)
};

LITTLE_LOOPS_INLINE expected<json, error> render_value(const json& value, const interpolation_context& ctx);
LITTLE_LOOPS_INLINE expected<json, error> render_table(const ordered_table<std::string, json>& table,
                                          const interpolation_context& ctx);
LITTLE_LOOPS_INLINE expected<child_loop, error> find_child(const state_config& cfg, const interpolation_context& ctx,
                                              const executor_options& options, std::size_t depth,
                                              std::string_view referrer);
LITTLE_LOOPS_INLINE expected<json, error> child_context(const state_config& cfg, const child_loop& child,
                                           const interpolation_context& ctx, const json& injected);
LITTLE_LOOPS_INLINE std::optional<std::int64_t> child_timeout_ms(std::optional<double> own, std::optional<double> state,
                                                    std::optional<std::int64_t> parent_left);
LITTLE_LOOPS_INLINE bool routes_verdict(const compiled_state& st, std::string_view verdict);
LITTLE_LOOPS_INLINE std::string_view subloop_verdict(const compiled_state& st, const child_end& end);
LITTLE_LOOPS_INLINE json subloop_record(const state_config& cfg, const child_end& end, const captured_map& child);
#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// `value` with every string in it rendered against `ctx` (keys stay as written).
LITTLE_LOOPS_INLINE expected<json, error> render_value(const json& value, const interpolation_context& ctx) {
  if (value.is_string()) {
    auto text = interpolate(value.get_ref<const std::string&>(), ctx);
    if (!text) return unexpected(std::move(text.error()));
    return json(std::move(*text));
  }
  if (!value.is_object() && !value.is_array()) return value;
  json out = value;
  for (auto it = out.begin(); it != out.end(); ++it) {
    auto v = render_value(it.value(), ctx);
    if (!v) return unexpected(std::move(v.error()));
    it.value() = std::move(*v);
  }
  return out;
}

/// The values of a `with:` or `output:` table, rendered.
LITTLE_LOOPS_INLINE expected<json, error> render_table(const ordered_table<std::string, json>& table,
                                          const interpolation_context& ctx) {
  json out = json::object();
  for (const auto& [key, value] : table) {
    auto v = render_value(value, ctx);
    if (!v) return unexpected(std::move(v.error()));
    out[key] = std::move(*v);
  }
  return out;
}

/// The child a sub-loop state names: its name rendered, found through the host's resolver,
/// within the depth limit (`depth`: how many loops would then run). The error is the
/// state's `error` verdict, its message naming the child.
LITTLE_LOOPS_INLINE expected<child_loop, error> find_child(const state_config& cfg, const interpolation_context& ctx,
                                              const executor_options& options, std::size_t depth,
                                              std::string_view referrer) {
  auto name = interpolate(*cfg.loop, ctx);
  if (!name)
    return unexpected(error{errc::missing_variable, "sub-loop name: " + name.error().message});
  if (depth > options.max_subloop_depth)
    return unexpected(error{errc::invalid_loop,
                            fmt::format("sub-loop '{}' would run {} loops deep (max_subloop_depth {})",
                                        *name, depth, options.max_subloop_depth)});
  if (options.child_loops == nullptr)
    return unexpected(error{errc::invalid_loop,
                            fmt::format("sub-loop '{}': the host gave no child loop resolver", *name)});
  auto child = options.child_loops->load(*name, referrer);
  if (!child)
    return unexpected(error{child.error().code,
                            fmt::format("sub-loop '{}': {}", *name, child.error().message)});
  return child;
}

/// The context a child starts with. `with:` → the child's `context:`, the rendered bindings
/// over it, then the defaults of its unbound parameters (a required one unbound is an
/// error); `context_passthrough` → the parent's context and its captures (a capture as its
/// output, a sub-loop record as it is) under the child's own `context:`, which wins;
/// neither → the child's `context:`. The host's injected keys then fill what is missing.
LITTLE_LOOPS_INLINE expected<json, error> child_context(const state_config& cfg, const child_loop& child,
                                           const interpolation_context& ctx, const json& injected) {
  json context = child.loop->loop().context;
  if (!cfg.with.empty()) {
    auto bound = render_table(cfg.with, ctx);
    if (!bound) return unexpected(std::move(bound.error()));
    for (auto it = bound->begin(); it != bound->end(); ++it) context[it.key()] = std::move(it.value());
    for (auto it = child.parameters.begin(); it != child.parameters.end(); ++it) {
      if (bound->contains(it.key()) || !it.value().is_object()) continue;
      const auto dflt = it.value().find("default");
      if (dflt != it.value().end() && !dflt->is_null()) {
        context[it.key()] = *dflt;
      } else if (it.value().value("required", false) && !injected.contains(it.key())) {
        return unexpected(error{errc::missing_variable,
                                fmt::format("sub-loop requires parameter '{}' but it is not bound in 'with'",
                                            it.key())});
      }
    }
  } else if (cfg.context_passthrough) {
    json merged = ctx.context != nullptr && ctx.context->is_object() ? *ctx.context : json::object();
    if (ctx.captured != nullptr)
      for (const auto& [name, rec] : *ctx.captured)
        merged[name] = rec.subloop.is_null() ? json(rec.output) : rec.subloop;
    for (auto it = context.begin(); it != context.end(); ++it) merged[it.key()] = it.value();
    context = std::move(merged);
  }
  inject_missing(context, injected);
  return context;
}

/// The child's time limit (ms): the smallest of its own `timeout`, the calling state's
/// `timeout` and the time the parent has left (at least 1 ms); nullopt when none is set.
LITTLE_LOOPS_INLINE std::optional<std::int64_t> child_timeout_ms(std::optional<double> own, std::optional<double> state,
                                                    std::optional<std::int64_t> parent_left) {
  std::optional<std::int64_t> limit;
  const auto take = [&limit](std::int64_t ms) { limit = limit ? std::min(*limit, ms) : ms; };
  if (own && *own > 0) take(static_cast<std::int64_t>(*own * 1000.0));
  if (state && *state > 0) take(static_cast<std::int64_t>(*state * 1000.0));
  if (parent_left) take(std::max<std::int64_t>(1, *parent_left));
  return limit;
}

/// Whether `st` routes `verdict` itself (a shorthand, a route-table key or `_error`).
LITTLE_LOOPS_INLINE bool routes_verdict(const compiled_state& st, std::string_view verdict) {
  const auto named = [verdict](const auto& entry) { return entry.first == verdict; };
  if (std::any_of(st.on.begin(), st.on.end(), named)) return true;
  if (std::any_of(st.routes.begin(), st.routes.end(), named)) return true;
  return verdict == "error" && st.route_error.has_value();
}

/// The calling state's verdict for how its child ended (design §6.5): a terminal → `yes`; a
/// failure terminal → `no`; `error` → `error` where the state routes it, else `no`; the
/// child's time or step cap → `timeout` where the state routes it, else `no`.
LITTLE_LOOPS_INLINE std::string_view subloop_verdict(const compiled_state& st, const child_end& end) {
  switch (end.how) {
    case termination::terminal: return end.failure ? "no" : "yes";
    case termination::error: return routes_verdict(st, "error") ? "error" : "no";
    case termination::timeout:
    case termination::max_iterations: return routes_verdict(st, "timeout") ? "timeout" : "no";
    default: return "no";
  }
}

/// `captured.<state>` of a sub-loop state: the child's captures (with `with:` or
/// `context_passthrough`), then `terminated_by`, `final_state`, `failure_terminal`,
/// `error` and the terminal's `output`.
LITTLE_LOOPS_INLINE json subloop_record(const state_config& cfg, const child_end& end, const captured_map& child) {
  json rec = json::object();
  if (!cfg.with.empty() || cfg.context_passthrough)
    for (const auto& [name, c] : child) {
      if (!c.subloop.is_null()) {
        rec[name] = c.subloop;
        continue;
      }
      json_object_writer w;
      write_captured_record(w, c);
      rec[name] = w.take();
    }
  rec["terminated_by"] = std::string(to_string(end.how));
  rec["final_state"] = end.final_state;
  if (end.failure) rec["failure_terminal"] = true;
  if (end.failed) rec["error"] = end.failed->message;
  if (!end.output.is_null()) rec["output"] = end.output;
  return rec;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
