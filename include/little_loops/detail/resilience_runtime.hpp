// little_loops — the executor's resilience memory: retry attempts, edge counts, the circuit
// SPDX-License-Identifier: MIT
#pragma once

// What the executor remembers for `retry:`/`catch:`, `max_edge_revisits` and `circuit:`
// (design §6.6), and what it decides from it. Everything is kept by state name in the
// snapshot (snapshot::counters, key `resilience`), so a resumed run goes on counting. The
// executor waits and emits; this class only counts and decides.

#include <little_loops/compiled_loop.hpp>
#include <little_loops/config.hpp>
#include <little_loops/events.hpp>
#include <little_loops/executor_options.hpp>
#include <little_loops/interpolation.hpp>
#include <little_loops/results.hpp>
#include <little_loops/json.hpp>
#include <little_loops/resilience.hpp>
#include <little_loops/detail/resilience_policy.hpp>
#include <little_loops/detail/routing.hpp>
#include <little_loops/detail/stall_memory.hpp>

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // only the definitions format, search and draw
#  include <fmt/format.h>

#  include <algorithm>
#  include <cmath>
#  include <random>
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

/// A failure streak of one state: which matching retry entry it is on, the attempts of that
/// entry, all its retries, and the seconds waited.
struct retry_record {
  std::string error_class;
  int entry = 0;
  int attempts = 0;
  int total = 0;
  double waited = 0;
};

/// What the executor does after a state's verdict, before its ordinary routes.
struct resilience_decision {
  enum class kind : unsigned char { none, retry, caught, exhausted, stall_abort, stall_route };
  kind what = kind::none;
  std::string target;        ///< the state to go to (retry: the state itself)
  double delay = 0;          ///< seconds to wait first (retry)
  resilience_event event{};  ///< what to report (ts left to the executor)
  std::string error_class;   ///< the failure's class (event.error_class views it)
  /// `rate_limit_storm`: the rate-limit retries of the last states were spent this many
  /// times in a row (reported after `event`).
  std::optional<resilience_event> storm{};

  /// The events to report, in order (null entries: none).
  [[nodiscard]] std::array<const resilience_event*, 2> reported() const noexcept {
    return {event.kind.empty() ? nullptr : &event, storm ? &*storm : nullptr};
  }
};

/// The probe that fingerprints the circuit's `progress_paths` (rendered in `ctx`; those
/// equal to a rendered `exclude_paths` entry left out): one `mtime size` line per path,
/// `0 0` for a missing one; nullopt when no path is left (no fingerprint, as the reference).
LITTLE_LOOPS_INLINE std::optional<std::string> progress_probe(const repeated_failure_config& rf,
                                                              const interpolation_context& ctx);

/// Consecutive rate-limit exhaustions that make a storm (the reference's threshold).
inline constexpr int rate_limit_storm_threshold = 3;

/// The random engine of an executor's jitter, made (and seeded) on its first use; a copy
/// goes on from the same state.
class jitter_engine {
 public:
  jitter_engine() noexcept = default;
  jitter_engine(const jitter_engine& other);
  jitter_engine(jitter_engine&& other) noexcept;
  jitter_engine& operator=(const jitter_engine& other);
  jitter_engine& operator=(jitter_engine&& other) noexcept;
  ~jitter_engine();

  /// A uniform number in [0, 1).
  double uniform();

 private:
  struct state;  // the engine, defined with the definitions (<random> stays out of the header)
  std::unique_ptr<state> state_;
};

class resilience_memory {
 public:
  using random_source = std::function<double()>;  ///< uniform in [0, 1)

  stall_memory stalls;  ///< diff_stall and action_stall

  /// The wait a retry (or a catch after a wait) asks for, taken before the next state runs,
  /// so that a snapshot saved between two attempts holds it; 0 when none.
  double take_pending_wait() noexcept { return std::exchange(pending_wait_, 0.0); }
  void wait_before_next(double seconds) noexcept { pending_wait_ = seconds; }

  void clear();

  // ---- retry: and catch: ----

  /// Decides after `state` (of `loop`) failed with `error_class` (not empty) and exit code
  /// `code`; a result that did not fail goes to after_success().
  resilience_decision after_result(const compiled_loop& loop, std::size_t state,
                                   std::string_view error_class, int code,
                                   const random_source& random);

  /// Counts the rate-limit exhaustions in a row (a result of another kind than a
  /// rate limit, an API error, an infra teardown or an auth failure ends the row, as the
  /// reference); from the threshold on, `d` reports a `rate_limit_storm` too.
  void note_rate_limit(std::string_view error_class, resilience_decision& d);

  /// After `state` did not fail: its retry streak and the rate-limit row end, nothing waits.
  void after_success(const compiled_loop& loop, std::size_t state);

  // ---- max_edge_revisits ----

  /// A run ended by `max_edge_revisits`: what to report and the error it ends with.
  struct cycle {
    resilience_event event;
    std::string target;
    little_loops::error error;
  };

  /// Counts the edge from → to (state indexes of `loop`); past the loop's cap
  /// (edge_revisit_cap()), the cycle that ends the run. Allocates only for an edge's first
  /// traversal.
  std::optional<cycle> take_edge(const compiled_loop& loop, std::size_t from, std::size_t to);

  // ---- circuit.repeated_failure ----

  /// The fingerprint of the circuit's progress paths after the state that ends next (its
  /// progress_probe()'s answer): a change since that state's last one restarts the window.
  void note_progress(std::string fingerprint) { progress_ = std::move(fingerprint); }

  /// Records one transition's (state, exit code, verdict); the decision when the circuit trips.
  resilience_decision record_transition(const repeated_failure_config& rf, std::string_view state,
                                        int exit_code, std::string_view verdict);

  // ---- snapshot ----

  /// The memory for snapshot::counters["resilience"], by state name (null when there is
  /// none).
  [[nodiscard]] json to_json(const compiled_loop& loop) const;

  /// Restores to_json()'s memory (ill-typed members, and edges between states `loop` lacks,
  /// are skipped).
  void restore(const json& j, const compiled_loop& loop);

 private:
  const policy_set& policies(const compiled_loop& loop, std::size_t state);

  // A uniform number in [0, 1): the host's source, else an engine seeded once per executor.
  double uniform(const random_source& random);

  double next_delay(const retry_policy& p, int attempts, const random_source& random);

  static void fill(resilience_decision& d, const retry_record& rec, std::string_view kind);

  // No retry is left: the catch entry for the class (or `any`), else the ordinary routes.
  resilience_decision give_up(const policy_set& set, const std::string& name,
                              std::string_view error_class, retry_record& rec,
                              resilience_decision& d);

  std::map<std::string, retry_record> records_;
  std::map<std::pair<std::size_t, std::size_t>, int> edges_;  // (from, to) → traversals
  // The last transitions, oldest first. A vector (each push already costs O(window) in the
  // check that follows it) keeps the memory's moves noexcept: a sub-loop's parked frame is
  // then moved, never copied, when the frame stack grows.
  std::vector<std::string> window_;
  std::map<std::string, int> recurrent_;
  std::vector<std::optional<policy_set>> sets_;
  std::string message_;
  jitter_engine engine_;
  double pending_wait_ = 0;
  int rate_limit_exhaustions_ = 0;  // in a row (note_rate_limit)
  std::optional<std::string> progress_;  // note_progress(), for the next transition
  std::map<std::string, std::string, std::less<>> fingerprints_;  // state → last progress
};

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
struct jitter_engine::state {
  std::mt19937_64 engine;
};

LITTLE_LOOPS_INLINE jitter_engine::jitter_engine(const jitter_engine& other)
    : state_(other.state_ ? std::make_unique<state>(*other.state_) : nullptr) {}
LITTLE_LOOPS_INLINE jitter_engine::jitter_engine(jitter_engine&& other) noexcept = default;
LITTLE_LOOPS_INLINE jitter_engine& jitter_engine::operator=(const jitter_engine& other) {
  if (this != &other) state_ = other.state_ ? std::make_unique<state>(*other.state_) : nullptr;
  return *this;
}
LITTLE_LOOPS_INLINE jitter_engine& jitter_engine::operator=(jitter_engine&& other) noexcept = default;
LITTLE_LOOPS_INLINE jitter_engine::~jitter_engine() = default;

LITTLE_LOOPS_INLINE double jitter_engine::uniform() {
  if (!state_) state_ = std::make_unique<state>(state{std::mt19937_64(std::random_device{}())});
  return std::uniform_real_distribution<double>(0.0, 1.0)(state_->engine);
}

LITTLE_LOOPS_INLINE auto resilience_memory::clear() -> void {
  pending_wait_ = 0;
  progress_.reset();
  fingerprints_.clear();
  rate_limit_exhaustions_ = 0;
  stalls.clear();
  records_.clear();
  edges_.clear();
  window_.clear();
  recurrent_.clear();
  message_.clear();
}

LITTLE_LOOPS_INLINE auto resilience_memory::after_result(const compiled_loop& loop, std::size_t state, std::string_view error_class, int code, const random_source& random) -> resilience_decision {
  const std::string& name = loop.state(state).name;
  resilience_decision d;
  const policy_set& set = policies(loop, state);
  retry_record& rec = records_[name];
  if (rec.error_class != error_class) rec = retry_record{std::string(error_class)};
  std::vector<const retry_policy*> matching;
  for (const auto& p : set.retry)
    if (names_class(p, error_class) ||
        std::find(p.exit_codes.begin(), p.exit_codes.end(), code) != p.exit_codes.end())
      matching.push_back(&p);
  while (rec.entry < static_cast<int>(matching.size())) {
    const retry_policy& p = *matching[static_cast<std::size_t>(rec.entry)];
    const auto limit = attempts_of(p);
    if (limit && rec.attempts >= *limit) {
      ++rec.entry;
      rec.attempts = 0;
      continue;
    }
    d.delay = next_delay(p, rec.attempts, random);
    ++rec.attempts;
    ++rec.total;
    rec.waited += d.delay;
    const bool spent = p.max_duration && rec.waited >= *p.max_duration;
    fill(d, rec, spent ? "exhausted" : "retry");
    if (!spent) {
      d.what = resilience_decision::kind::retry;
      d.target = name;
      return d;
    }
    break;  // the reference waits out the last step of its ladder, then gives up
  }
  return give_up(set, name, error_class, rec, d);
}

LITTLE_LOOPS_INLINE auto resilience_memory::after_success(const compiled_loop& loop, std::size_t state) -> void {
  if (!records_.empty()) records_.erase(loop.state(state).name);
  rate_limit_exhaustions_ = 0;
  pending_wait_ = 0;
}

LITTLE_LOOPS_INLINE auto resilience_memory::note_rate_limit(std::string_view error_class, resilience_decision& d) -> void {
  if (error_class != "rate_limit" && error_class != "api_error" && error_class != "infra" &&
      error_class != "auth") {
    rate_limit_exhaustions_ = 0;
    return;
  }
  const bool spent = d.what == resilience_decision::kind::caught ||
                     d.what == resilience_decision::kind::exhausted;
  if (error_class != "rate_limit" || !spent) return;
  if (++rate_limit_exhaustions_ < rate_limit_storm_threshold) return;
  d.storm.emplace();
  d.storm->kind = "rate_limit_storm";
  d.storm->attempt = rate_limit_exhaustions_;
  d.storm->error_class = "rate_limit";
}

LITTLE_LOOPS_INLINE auto resilience_memory::take_edge(const compiled_loop& loop, std::size_t from, std::size_t to) -> std::optional<cycle> {
  const auto cap = edge_revisit_cap(loop.loop(), loop.dialect());
  if (!cap) return std::nullopt;
  const int count = ++edges_[{from, to}];
  if (count <= *cap) return std::nullopt;
  const std::string& to_name = loop.state(to).name;
  message_ = fmt::format("Cycle detected: edge {}->{} traversed {} times (limit: {})",
                         loop.state(from).name, to_name, count, *cap);
  cycle c{resilience_event{}, to_name,
          little_loops::error{errc::cap_reached, message_, "max_edge_revisits"}};
  c.event.kind = "cycle_detected";
  c.event.attempt = count;
  c.event.message = message_;
  return c;
}

LITTLE_LOOPS_INLINE auto resilience_memory::record_transition(const repeated_failure_config& rf, std::string_view state, int exit_code, std::string_view verdict) -> resilience_decision {
  resilience_decision d;
  if (auto fp = std::exchange(progress_, std::nullopt)) {  // the reference's reset on progress
    const auto prev = fingerprints_.find(state);
    if (prev != fingerprints_.end() && prev->second != *fp) {
      window_.clear();
      fingerprints_.clear();
    }
    fingerprints_[std::string(state)] = std::move(*fp);
  }
  const std::string key = fmt::format("{}\x1f{}\x1f{}", state, exit_code, verdict);
  window_.push_back(key);
  const auto keep = static_cast<std::size_t>(rf.window);
  if (window_.size() > keep)
    window_.erase(window_.begin(), window_.end() - static_cast<std::ptrdiff_t>(keep));
  const bool consecutive = window_.size() == keep &&
                           std::all_of(window_.begin(), window_.end(),
                                       [&](const std::string& k) { return k == key; });
  int recurrent = 0;
  if (rf.recurrent_window) recurrent = ++recurrent_[key];
  const bool tripped = consecutive || (rf.recurrent_window && recurrent >= *rf.recurrent_window);
  if (!tripped) return d;
  const int count = consecutive ? rf.window : recurrent;
  message_ = fmt::format(
      "Stall detected: state {} ended with exit code {} and verdict {} {} times{}", state,
      exit_code, verdict, count, consecutive ? " in a row" : " in all");
  window_.clear();
  d.what = rf.on_repeated_failure == "abort" ? resilience_decision::kind::stall_abort
                                             : resilience_decision::kind::stall_route;
  d.target = rf.on_repeated_failure;
  d.event.kind = "stall_detected";
  d.event.attempt = count;
  d.event.message = message_;
  return d;
}

LITTLE_LOOPS_INLINE auto resilience_memory::to_json(const compiled_loop& loop) const -> json {
  json stall = stalls.to_json();
  if (records_.empty() && edges_.empty() && window_.empty() && recurrent_.empty() &&
      stall.is_null() && pending_wait_ == 0 && rate_limit_exhaustions_ == 0 && fingerprints_.empty())
    return nullptr;
  json out = json::object();
  if (!fingerprints_.empty()) out["progress"] = fingerprints_;
  if (rate_limit_exhaustions_ > 0) out["rate_limit_exhaustions"] = rate_limit_exhaustions_;
  if (pending_wait_ > 0) out["pending_wait"] = number_json(pending_wait_);
  if (!stall.is_null()) out["stall"] = std::move(stall);
  if (!records_.empty()) {
    json r = json::object();
    for (const auto& [name, rec] : records_)
      r[name] = {{"error_class", rec.error_class}, {"entry", rec.entry},
                 {"attempts", rec.attempts},       {"total", rec.total},
                 {"waited", number_json(rec.waited)}};
    out["retries"] = std::move(r);
  }
  if (!edges_.empty()) {
    json edges = json::object();
    for (const auto& [edge, count] : edges_)
      edges[loop.state(edge.first).name + "->" + loop.state(edge.second).name] = count;
    out["edges"] = std::move(edges);
  }
  if (!window_.empty()) out["window"] = window_;
  if (!recurrent_.empty()) out["recurrent"] = recurrent_;
  return out;
}

LITTLE_LOOPS_INLINE auto resilience_memory::restore(const json& j, const compiled_loop& loop) -> void {
  clear();
  if (!j.is_object()) return;
  if (const auto st = j.find("stall"); st != j.end()) stalls.restore(*st);
  if (const auto m = j.find("progress"); m != j.end() && m->is_object())
    for (auto it = m->begin(); it != m->end(); ++it)
      if (it->is_string()) fingerprints_[it.key()] = it->get<std::string>();
  if (const auto n = j.find("rate_limit_exhaustions"); n != j.end() && n->is_number_integer())
    rate_limit_exhaustions_ = std::max(0, n->get<int>());
  if (const auto w = j.find("pending_wait"); w != j.end() && w->is_number())
    pending_wait_ = std::clamp(w->get<double>(), 0.0, max_seconds);
  if (const auto r = j.find("retries"); r != j.end() && r->is_object())
    for (auto it = r->begin(); it != r->end(); ++it) {
      const json& v = it.value();
      if (!v.is_object()) continue;
      retry_record rec;
      rec.error_class = v.value("error_class", std::string{});
      rec.entry = v.value("entry", 0);
      rec.attempts = v.value("attempts", 0);
      rec.total = v.value("total", 0);
      rec.waited = v.value("waited", 0.0);
      records_[it.key()] = std::move(rec);
    }
  if (const auto m = j.find("recurrent"); m != j.end() && m->is_object())
    for (auto it = m->begin(); it != m->end(); ++it)
      if (it->is_number_integer()) recurrent_[it.key()] = it->get<int>();
  if (const auto m = j.find("edges"); m != j.end() && m->is_object())
    for (auto it = m->begin(); it != m->end(); ++it) {
      const std::string& key = it.key();
      const std::size_t arrow = key.find("->");
      if (arrow == std::string::npos || !it->is_number_integer()) continue;
      const auto from = loop.find(key.substr(0, arrow));
      const auto to = loop.find(key.substr(arrow + 2));
      if (from && to) edges_[{*from, *to}] = it->get<int>();
    }
  if (const auto w = j.find("window"); w != j.end() && w->is_array())
    for (const auto& k : *w)
      if (k.is_string()) window_.push_back(k.get<std::string>());
}

LITTLE_LOOPS_INLINE auto resilience_memory::policies(const compiled_loop& loop, std::size_t state) -> const policy_set& {
  if (sets_.size() != loop.states().size()) sets_.assign(loop.states().size(), std::nullopt);
  auto& slot = sets_[state];
  if (!slot) slot = effective_policies(*loop.state(state).config, loop.dialect());
  return *slot;
}

LITTLE_LOOPS_INLINE auto resilience_memory::uniform(const random_source& random) -> double {
  if (random) return std::clamp(random(), 0.0, 1.0);
  return engine_.uniform();
}

LITTLE_LOOPS_INLINE auto resilience_memory::next_delay(const retry_policy& p, int attempts, const random_source& random) -> double {
  double delay = 0;
  if (!p.delays.empty())
    delay = p.delays[std::min(static_cast<std::size_t>(attempts), p.delays.size() - 1)];
  else
    delay = p.interval * std::pow(p.backoff_rate, attempts);
  if (p.max_delay) delay = std::min(delay, *p.max_delay);
  const double u = p.full_jitter || p.jitter ? uniform(random) : 0;
  if (p.full_jitter) delay *= u;
  else if (p.jitter) delay += *p.jitter * u;
  return std::min(delay, max_seconds);
}

LITTLE_LOOPS_INLINE auto resilience_memory::fill(resilience_decision& d, const retry_record& rec, std::string_view kind) -> void {
  d.event.kind = kind;
  d.event.attempt = rec.total;
  d.event.delay_ms = static_cast<std::int64_t>(d.delay * 1000.0);
  d.event.waited_ms = static_cast<std::int64_t>(rec.waited * 1000.0);
}

LITTLE_LOOPS_INLINE auto resilience_memory::give_up(const policy_set& set, const std::string& name, std::string_view error_class, retry_record& rec, resilience_decision& d) -> resilience_decision {
  const retry_record spent = rec;
  records_.erase(name);
  for (const auto& [cls, target] : set.catches) {
    if (cls != error_class && cls != "any") continue;
    d.what = resilience_decision::kind::caught;
    d.target = target;
    fill(d, spent, "catch");
    return d;
  }
  if (spent.total > 0) {
    d.what = resilience_decision::kind::exhausted;
    fill(d, spent, "exhausted");
  }
  return d;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

/// The circuit, then `retry:`/`catch:`, after `state` gave `verdict` (design §6.6). `action`
/// is null when no action ran (nothing to retry); `error_class` is its class (empty: no
/// failure). nullopt when there is nothing to decide (no action, or it did not fail and no
/// circuit watches): the common step builds no decision.
LITTLE_LOOPS_INLINE std::optional<resilience_decision> decide_resilience(
    resilience_memory& memory, const compiled_loop& loop, std::size_t state,
    const action_result* action, std::string_view verdict, const executor_options& options);

/// `event` with its time, state, target and error class (views).
LITTLE_LOOPS_INLINE resilience_event stamped(resilience_event event, event_time ts,
                                             std::string_view state, std::string_view target,
                                             std::string_view error_class = {});

/// Where a decision goes: the retry or catch target, the circuit's recovery state, or for a
/// tripped circuit an error that ends the run (errc::cap_reached); an empty outcome
/// (nullopt) leaves the ordinary routes to decide. Sets `reason` for the route event.
LITTLE_LOOPS_INLINE std::optional<route_outcome> resilience_route(const resilience_decision& d,
                                                                  const compiled_loop& loop,
                                                                  std::string_view& reason);

/// Seconds as a clock duration.
LITTLE_LOOPS_INLINE std::chrono::nanoseconds seconds_to_ns(double seconds);

/// The wait after `st`: its own `backoff`, else the loop's.
LITTLE_LOOPS_INLINE double backoff_after(const compiled_state& st, const fsm_loop& loop);

/// snapshot::counters with the resilience memory under `resilience` (null when both are).
LITTLE_LOOPS_INLINE json with_resilience(json counters, json resilience);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::optional<std::string> progress_probe(const repeated_failure_config& rf,
                                                              const interpolation_context& ctx) {
  std::vector<std::string> excluded;
  for (const auto& raw : rf.exclude_paths)
    if (auto v = interpolate(raw, ctx)) excluded.push_back(std::move(*v));
  std::string cmd;
  for (const auto& raw : rf.progress_paths) {
    auto path = interpolate(raw, ctx);
    if (!path || std::find(excluded.begin(), excluded.end(), *path) != excluded.end()) continue;
    const std::string p = shell_word(*path);
    cmd += "if [ -e " + p + " ]; then stat -c '%Y %s' -- " + p + " 2>/dev/null || stat -f '%m %z' -- " +
           p + "; else echo '0 0'; fi; ";
  }
  if (cmd.empty()) return std::nullopt;
  return cmd + "true";
}

LITTLE_LOOPS_INLINE std::optional<resilience_decision> decide_resilience(
    resilience_memory& memory, const compiled_loop& loop, std::size_t state,
    const action_result* action, std::string_view verdict, const executor_options& options) {
  const std::string error_class = !action                    ? std::string()
                                  : options.error_classifier ? options.error_classifier(*action)
                                                             : default_error_class(*action);
  const int code = action ? (action->timed_out ? 124 : action->exit_code) : 0;
  if (const auto& rf = loop.loop().resilience.repeated_failure) {
    auto d = memory.record_transition(*rf, loop.state(state).name, code, verdict);
    if (d.what != resilience_decision::kind::none) return d;
  }
  if (!action) return std::nullopt;
  if (error_class.empty()) {  // the common step: it ends the state's streak, decides nothing
    memory.after_success(loop, state);
    return std::nullopt;
  }
  auto d = memory.after_result(loop, state, error_class, code, options.random_source);
  memory.note_rate_limit(error_class, d);
  d.error_class = error_class;  // the event views it
  memory.wait_before_next(d.delay);
  return d;
}

LITTLE_LOOPS_INLINE resilience_event stamped(resilience_event event, event_time ts,
                                             std::string_view state, std::string_view target,
                                             std::string_view error_class) {
  event.ts = ts;
  event.state = state;
  event.target = target;
  event.error_class = error_class;
  return event;
}

LITTLE_LOOPS_INLINE std::optional<route_outcome> resilience_route(const resilience_decision& d,
                                                                  const compiled_loop& loop,
                                                                  std::string_view& reason) {
  using k = resilience_decision::kind;
  if (d.what == k::stall_abort)
    return route_outcome(unexpected(route_failure{little_loops::error{
        errc::cap_reached, std::string(d.event.message), "circuit.repeated_failure"}}));
  if (d.what == k::none || d.what == k::exhausted) return std::nullopt;
  reason = d.what == k::retry ? "retry" : d.what == k::caught ? "catch" : "stall_detected";
  if (const auto to = loop.find(d.target)) return route_outcome(*to);
  return route_outcome(unexpected(route_failure{little_loops::error{
      errc::unknown_state, fmt::format("\"{}\" is not a state", d.target), {}}}));
}

LITTLE_LOOPS_INLINE std::chrono::nanoseconds seconds_to_ns(double seconds) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
}

LITTLE_LOOPS_INLINE double backoff_after(const compiled_state& st, const fsm_loop& loop) {
  if (st.config != nullptr && st.config->resilience.backoff) return *st.config->resilience.backoff;
  return loop.backoff.value_or(0);
}

LITTLE_LOOPS_INLINE json with_resilience(json counters, json resilience) {
  if (resilience.is_null()) return counters;
  if (!counters.is_object()) counters = json::object();
  counters["resilience"] = std::move(resilience);
  return counters;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
