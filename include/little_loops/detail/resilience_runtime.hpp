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
#include <little_loops/results.hpp>
#include <little_loops/json.hpp>
#include <little_loops/resilience.hpp>
#include <little_loops/detail/resilience_policy.hpp>
#include <little_loops/detail/routing.hpp>
#include <little_loops/detail/stall_memory.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <random>
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
};

class resilience_memory {
 public:
  using random_source = std::function<double()>;  ///< uniform in [0, 1)

  stall_memory stalls;  ///< diff_stall and action_stall

  /// The wait a retry (or a catch after a wait) asks for, taken before the next state runs,
  /// so that a snapshot saved between two attempts holds it; 0 when none.
  double take_pending_wait() noexcept { return std::exchange(pending_wait_, 0.0); }
  void wait_before_next(double seconds) noexcept { pending_wait_ = seconds; }

  void clear() {
    pending_wait_ = 0;
    stalls.clear();
    records_.clear();
    edges_.clear();
    window_.clear();
    recurrent_.clear();
    message_.clear();
  }

  // ---- retry: and catch: ----

  /// Decides after `state` (of `loop`) failed with `error_class` (empty: it did not fail,
  /// which ends its streak) and exit code `code`.
  resilience_decision after_result(const compiled_loop& loop, std::size_t state,
                                   std::string_view error_class, int code,
                                   const random_source& random) {
    const std::string& name = loop.state(state).name;
    resilience_decision d;
    if (error_class.empty()) {
      records_.erase(name);
      return d;
    }
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

  // ---- max_edge_revisits ----

  /// A run ended by `max_edge_revisits`: what to report and the error it ends with.
  struct cycle {
    resilience_event event;
    std::string target;
    little_loops::error error;
  };

  /// Counts the edge from → to; past the loop's cap (edge_revisit_cap()), the cycle that
  /// ends the run.
  std::optional<cycle> take_edge(const compiled_loop& loop, std::string_view from,
                                 std::string_view to) {
    const auto cap = edge_revisit_cap(loop.loop(), loop.dialect());
    if (!cap) return std::nullopt;
    const int count = ++edges_[std::string(from) + "->" + std::string(to)];
    if (count <= *cap) return std::nullopt;
    message_ = fmt::format("Cycle detected: edge {}->{} traversed {} times (limit: {})", from, to,
                           count, *cap);
    cycle c{resilience_event{}, std::string(to),
            little_loops::error{errc::cap_reached, message_, "max_edge_revisits"}};
    c.event.kind = "cycle_detected";
    c.event.attempt = count;
    c.event.message = message_;
    return c;
  }

  // ---- circuit.repeated_failure ----

  /// Records one transition's (state, exit code, verdict); the decision when the circuit trips.
  resilience_decision record_transition(const repeated_failure_config& rf, std::string_view state,
                                        int exit_code, std::string_view verdict) {
    resilience_decision d;
    const std::string key = fmt::format("{}\x1f{}\x1f{}", state, exit_code, verdict);
    window_.push_back(key);
    while (window_.size() > static_cast<std::size_t>(rf.window)) window_.pop_front();
    const bool consecutive = window_.size() == static_cast<std::size_t>(rf.window) &&
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

  // ---- snapshot ----

  /// The memory for snapshot::counters["resilience"] (null when there is none).
  [[nodiscard]] json to_json() const {
    json stall = stalls.to_json();
    if (records_.empty() && edges_.empty() && window_.empty() && recurrent_.empty() &&
        stall.is_null() && pending_wait_ == 0)
      return nullptr;
    json out = json::object();
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
    if (!edges_.empty()) out["edges"] = edges_;
    if (!window_.empty()) out["window"] = window_;
    if (!recurrent_.empty()) out["recurrent"] = recurrent_;
    return out;
  }

  /// Restores to_json()'s memory (ill-typed members are skipped).
  void restore(const json& j) {
    clear();
    if (!j.is_object()) return;
    if (const auto st = j.find("stall"); st != j.end()) stalls.restore(*st);
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
    const auto table = [&j](const char* key, std::map<std::string, int>& to) {
      if (const auto m = j.find(key); m != j.end() && m->is_object())
        for (auto it = m->begin(); it != m->end(); ++it)
          if (it->is_number_integer()) to[it.key()] = it->get<int>();
    };
    table("edges", edges_);
    table("recurrent", recurrent_);
    if (const auto w = j.find("window"); w != j.end() && w->is_array())
      for (const auto& k : *w)
        if (k.is_string()) window_.push_back(k.get<std::string>());
  }

 private:
  const policy_set& policies(const compiled_loop& loop, std::size_t state) {
    if (sets_.size() != loop.states().size()) sets_.assign(loop.states().size(), std::nullopt);
    auto& slot = sets_[state];
    if (!slot) slot = effective_policies(*loop.state(state).config, loop.dialect());
    return *slot;
  }

  // A uniform number in [0, 1): the host's source, else an engine seeded once per executor.
  double uniform(const random_source& random) {
    if (random) return std::clamp(random(), 0.0, 1.0);
    if (!engine_) engine_.emplace(std::random_device{}());
    return std::uniform_real_distribution<double>(0.0, 1.0)(*engine_);
  }

  double next_delay(const retry_policy& p, int attempts, const random_source& random) {
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

  static void fill(resilience_decision& d, const retry_record& rec, std::string_view kind) {
    d.event.kind = kind;
    d.event.attempt = rec.total;
    d.event.delay_ms = static_cast<std::int64_t>(d.delay * 1000.0);
    d.event.waited_ms = static_cast<std::int64_t>(rec.waited * 1000.0);
  }

  // No retry is left: the catch entry for the class (or `any`), else the ordinary routes.
  resilience_decision give_up(const policy_set& set, const std::string& name,
                              std::string_view error_class, retry_record& rec,
                              resilience_decision& d) {
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

  std::map<std::string, retry_record> records_;
  std::map<std::string, int> edges_;
  std::deque<std::string> window_;
  std::map<std::string, int> recurrent_;
  std::vector<std::optional<policy_set>> sets_;
  std::string message_;
  std::optional<std::mt19937_64> engine_;
  double pending_wait_ = 0;
};

/// The circuit, then `retry:`/`catch:`, after `state` gave `verdict` (design §6.6). `action`
/// is null when no action ran (nothing to retry); `error_class` is its class (empty: no
/// failure).
inline resilience_decision decide_resilience(resilience_memory& memory, const compiled_loop& loop,
                                             std::size_t state, const action_result* action,
                                             std::string_view verdict,
                                             const executor_options& options) {
  const std::string error_class = !action                    ? std::string()
                                  : options.error_classifier ? options.error_classifier(*action)
                                                             : default_error_class(*action);
  const int code = action ? (action->timed_out ? 124 : action->exit_code) : 0;
  if (const auto& rf = loop.loop().resilience.repeated_failure) {
    auto d = memory.record_transition(*rf, loop.state(state).name, code, verdict);
    if (d.what != resilience_decision::kind::none) return d;
  }
  if (!action) return {};
  auto d = memory.after_result(loop, state, error_class, code, options.random_source);
  d.error_class = error_class;  // the event views it
  memory.wait_before_next(d.delay);
  return d;
}

/// `event` with its time, state, target and error class (views).
inline resilience_event stamped(resilience_event event, event_time ts, std::string_view state,
                                std::string_view target, std::string_view error_class = {}) {
  event.ts = ts;
  event.state = state;
  event.target = target;
  event.error_class = error_class;
  return event;
}

/// Where a decision goes: the retry or catch target, the circuit's recovery state, or for a
/// tripped circuit an error that ends the run (errc::cap_reached); an empty outcome
/// (nullopt) leaves the ordinary routes to decide. Sets `reason` for the route event.
inline std::optional<route_outcome> resilience_route(const resilience_decision& d,
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

/// Seconds as a clock duration.
inline std::chrono::nanoseconds seconds_to_ns(double seconds) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
}

/// The wait after `st`: its own `backoff`, else the loop's.
inline double backoff_after(const compiled_state& st, const fsm_loop& loop) {
  if (st.config != nullptr && st.config->resilience.backoff) return *st.config->resilience.backoff;
  return loop.backoff.value_or(0);
}

/// snapshot::counters with the resilience memory under `resilience` (null when both are).
inline json with_resilience(json counters, json resilience) {
  if (resilience.is_null()) return counters;
  if (!counters.is_object()) counters = json::object();
  counters["resilience"] = std::move(resilience);
  return counters;
}

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
