// little_loops — the two dialects (seed, current) and the current dialect's keys
// SPDX-License-Identifier: MIT
#include "executor_test_support.hpp"

#include <algorithm>

using namespace executor_test;

namespace {

// Scripted verdicts in order (the last repeats); counts its calls.
struct verdicts {
  std::vector<std::string> script;
  std::size_t calls = 0;
  ll::expected<ll::evaluation_result, ll::error> evaluate(const ll::evaluation_request&) {
    ll::evaluation_result r;
    r.verdict = script[std::min(calls, script.size() - 1)];
    ++calls;
    return r;
  }
};

// `{"name": "t", <head>"initial": "a", "states": {<states>}}`
std::string doc(std::string_view states, std::string_view head = "") {
  return "{\"name\": \"t\", " + std::string(head) + "\"initial\": \"a\", \"states\": {" +
         std::string(states) + "}}";
}

template <class Eval = ll::default_evaluator>
ll::execution_result run(const std::string& text, ll::scripted_runner& runner, Eval&& eval = Eval{},
                         ll::recording_event_sink* sink = nullptr, ll::executor_options options = {}) {
  ll::recording_event_sink local;
  auto ex = ll::make_executor(compiled(text), runner, std::forward<Eval>(eval), sink ? *sink : local,
                              std::move(options));
  REQUIRE(ex.has_value());
  ex->run();
  return ex->result();
}

ll::execution_result run_exit(const std::string& text, int code, std::string output = {}) {
  ll::scripted_runner runner;
  runner.otherwise(exit_with(code, std::move(output)));
  return run(text, runner);
}

ll::loop_dialect dialect(const std::string& text) { return ll::dialect_of(loop_from(text)); }

// The codes of the findings of loading `text` (errors and warnings).
std::vector<std::string> codes(const std::string& text) {
  ll::diagnostics warnings;
  auto r = ll::load_loop_text(text, &warnings);
  const ll::diagnostics& found = r ? warnings : r.error().details;
  std::vector<std::string> out;
  for (const auto& d : found) out.push_back(d.code);
  return out;
}

// Every recorded event as JSON text, one per line.
std::string dump(const ll::recording_event_sink& sink) {
  std::string out;
  for (const auto& e : sink.events) out += e.dump() + "\n";
  return out;
}

bool has(const std::vector<std::string>& v, std::string_view code) {
  return std::find(v.begin(), v.end(), code) != v.end();
}

std::string first_error(const std::string& text) {
  auto r = ll::load_loop_text(text);
  REQUIRE_FALSE(r.has_value());
  for (const auto& d : r.error().details)
    if (d.level == ll::severity::error) return d.code + ": " + d.message;
  return {};
}

constexpr std::string_view done = R"("done": {"terminal": true}, "bad": {"terminal": true})";

}  // namespace

TEST_SUITE("dialect") {
  TEST_CASE("inference: max_steps, on_yes, on_no, route yes/no make a loop current") {
    const std::string tail = std::string(", ") + std::string(done);
    CHECK(dialect(doc(R"("a": {"action": "x", "next": "done"})" + tail, R"("max_steps": 5, )")) ==
          ll::loop_dialect::current);
    CHECK(dialect(doc(R"("a": {"action": "x", "on_yes": "done"})" + tail)) == ll::loop_dialect::current);
    CHECK(dialect(doc(R"("a": {"action": "x", "on_no": "done"})" + tail)) == ll::loop_dialect::current);
    CHECK(dialect(doc(R"("a": {"action": "x", "route": {"yes": "done"}})" + tail)) ==
          ll::loop_dialect::current);
    CHECK(dialect(doc(R"("a": {"action": "x", "route": {"no": "done"}})" + tail)) ==
          ll::loop_dialect::current);
    CHECK(dialect(doc(R"("a": {"action": "x", "on_success": "done"})" + tail)) ==
          ll::loop_dialect::seed);
    CHECK(dialect(doc(R"("a": {"action": "x", "on_yes": "done"})" + tail, R"("dialect": "seed", )")) ==
          ll::loop_dialect::seed);
    CHECK(dialect(doc(R"("a": {"action": "x", "on_success": "done"})" + tail,
                      R"("dialect": "current", )")) == ll::loop_dialect::current);
    CHECK(first_error(doc(R"("a": {"action": "x", "next": "done"})" + tail, R"("dialect": "curent", )")) ==
          "unknown-value: unknown dialect \"curent\" (did you mean \"current\"?); expected one of: "
          "seed, current");
  }

  TEST_CASE("paradigm compilers emit seed loops") {
    auto loop = ll::compile_paradigm(ll::json::parse(
        R"({"paradigm": "goal", "name": "g", "goal": "x", "tools": ["true", "true"]})"));
    REQUIRE(loop.has_value());
    CHECK(ll::dialect_of(*loop) == ll::loop_dialect::seed);
  }

  TEST_CASE("deterministic verdicts: success/failure in seed, yes/no in current") {
    // The evaluate event keeps the evaluator's own word, and so does captured.X.verdict.
    for (const auto& [head, yes, no] : {std::tuple{"", "success", "failure"},
                                        std::tuple{R"("dialect": "current", )", "yes", "no"}}) {
      const std::string text = doc(R"("a": {"action": "x", "capture": "c", "route": {"_": "done"}}, )" +
                                       std::string(done),
                                   head);
      for (const auto& [code, word] : {std::pair{0, yes}, std::pair{1, no}, std::pair{2, "error"}}) {
        const std::string shown_head = head;  // Clang 14 cannot capture a structured binding
        const int shown_code = code;
        CAPTURE(shown_head);
        CAPTURE(shown_code);
        const auto r = run_exit(text, code);
        CHECK(r.captured.at("c").verdict == word);
      }
      const std::string contains =
          doc(R"("a": {"action": "x", "capture": "c", "evaluate": {"type": "output_contains", "pattern": "ok"},
                "route": {"_": "done"}}, )" + std::string(done), head);
      CHECK(run_exit(contains, 0, "ok").captured.at("c").verdict == yes);
      CHECK(run_exit(contains, 0, "nope").captured.at("c").verdict == no);
      const std::string numeric =
          doc(R"("a": {"action": "x", "capture": "c", "evaluate": {"type": "output_numeric", "operator": "gt", "target": 1},
                "route": {"_": "done"}}, )" + std::string(done), head);
      CHECK(run_exit(numeric, 0, "2").captured.at("c").verdict == yes);
      CHECK(run_exit(numeric, 0, "0").captured.at("c").verdict == no);
    }
  }

  TEST_CASE("a state with neither action nor evaluate says yes in current, success in seed") {
    ll::scripted_runner runner;
    CHECK(run(doc(R"("a": {"on_success": "done", "on_yes": "bad"}, )" + std::string(done),
                  R"("dialect": "seed", )"),
              runner)
              .final_state == "done");
    CHECK(run(doc(R"("a": {"on_success": "bad", "on_yes": "done"}, )" + std::string(done)), runner)
              .final_state == "done");
  }

  TEST_CASE("twins route alike after the exact key, in both dialects") {
    const std::string tail = std::string(", ") + std::string(done);
    // a current loop's on_success takes a yes
    CHECK(run_exit(doc(R"("a": {"action": "x", "on_success": "done", "on_no": "bad"})" + tail), 0)
              .final_state == "done");
    // a seed loop's on_yes takes a success
    CHECK(run_exit(doc(R"("a": {"action": "x", "on_yes": "done", "on_no": "bad"})" + tail,
                       R"("dialect": "seed", )"),
                   0)
              .final_state == "done");
    // route key failure takes a no, before _
    CHECK(run_exit(doc(R"("a": {"action": "x", "route": {"failure": "done", "_": "bad"}})" + tail,
                       R"("dialect": "current", )"),
                   1)
              .final_state == "done");
    // the exact key wins over the twin
    CHECK(run_exit(doc(R"("a": {"action": "x", "on_yes": "done", "on_success": "bad"})" + tail), 0)
              .final_state == "done");
    CHECK(has(codes(doc(R"("a": {"action": "x", "on_yes": "done", "on_success": "bad"})" + tail)),
              "twin-shorthands"));
    CHECK(run_exit(doc(R"("a": {"action": "x", "on_yes": "bad", "on_success": "done"})" + tail,
                       R"("dialect": "seed", )"),
                   0)
              .final_state == "done");
  }

  TEST_CASE("an unrouted no takes the error route in current, and is unrouted in seed") {
    const std::string tail = std::string(", ") + std::string(done);
    CHECK(run_exit(doc(R"("a": {"action": "x", "on_yes": "bad", "on_error": "done"})" + tail), 1)
              .final_state == "done");
    CHECK(run_exit(doc(R"("a": {"action": "x", "route": {"yes": "bad", "_error": "done"}})" + tail), 1)
              .final_state == "done");
    const auto seed = run_exit(
        doc(R"("a": {"action": "x", "on_success": "bad", "on_error": "done"})" + tail), 1);
    CHECK(seed.terminated_by == ll::termination::error);
    CHECK(seed.error->message == "No valid transition from state \"a\" for verdict \"failure\"");
    // partial is not a no: unrouted in both
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    for (const char* head : {"", R"("dialect": "current", )"}) {
      const auto r = run(doc(R"("a": {"action": "x", "on_success": "bad", "on_error": "done"})" + tail, head),
                         runner, verdicts{{"partial"}});
      CHECK(r.terminated_by == ll::termination::error);
    }
  }

  TEST_CASE("on_partial and on_blocked route judge verdicts in both dialects") {
    const std::string tail = std::string(", ") + std::string(done);
    for (const char* head : {"", R"("dialect": "current", )"}) {
      ll::scripted_runner runner;
      runner.otherwise(exit_with(0));
      const std::string text =
          doc(R"("a": {"action": "x", "on_partial": "done", "on_blocked": "bad"})" + tail, head);
      CHECK(run(text, runner, verdicts{{"partial"}}).final_state == "done");
      CHECK(run(text, runner, verdicts{{"blocked"}}).final_state == "bad");
    }
  }

  TEST_CASE("_error before _ for the error verdict, in both dialects") {
    const std::string tail = std::string(", ") + std::string(done);
    for (const char* head : {"", R"("dialect": "current", )"})
      CHECK(run_exit(doc(R"("a": {"action": "x", "route": {"_": "bad", "_error": "done"}})" + tail, head), 2)
                .final_state == "done");
  }

  TEST_CASE("blind evaluators: a non-zero exit is error in current, evaluated in seed") {
    const std::string tail = std::string(", ") + std::string(done);
    const std::string states =
        R"("a": {"action": "x", "capture": "c", "evaluate": {"type": "output_contains", "pattern": "ok"},
                 "route": {"_": "done"}})" + tail;
    CHECK(run_exit(doc(states, R"("dialect": "current", )"), 1, "ok").captured.at("c").verdict == "error");
    CHECK(run_exit(doc(states), 1, "ok").captured.at("c").verdict == "success");
    // exit_code is not blind
    const std::string exit_states =
        R"("a": {"action": "x", "capture": "c", "evaluate": {"type": "exit_code"}, "route": {"_": "done"}})" + tail;
    CHECK(run_exit(doc(exit_states, R"("dialect": "current", )"), 1).captured.at("c").verdict == "no");
    // the details say why
    ll::recording_event_sink sink;
    ll::scripted_runner runner;
    runner.otherwise(exit_with(3, "5"));
    run(doc(R"("a": {"action": "x", "evaluate": {"type": "output_numeric", "operator": "eq", "target": 5},
                "route": {"_": "done"}})" + tail, R"("dialect": "current", )"),
        runner, ll::default_evaluator{}, &sink);
    const std::string events = dump(sink);
    CHECK(events.find("action exited with code 3") != std::string::npos);
  }

  TEST_CASE("failure terminals by name in current; as written in seed") {
    const std::string states =
        R"("a": {"action": "x", "on_yes": "failed", "on_no": "error"}, "failed": {"terminal": true},
           "error": {"terminal": true, "failure": false})";
    CHECK(run_exit(doc(states), 0).failure);
    CHECK_FALSE(run_exit(doc(states), 1).failure);
    CHECK_FALSE(run_exit(doc(states, R"("dialect": "seed", )"), 0).failure);
  }

  TEST_CASE("max_steps alone is max_iterations; on_max_steps is on_max_iterations") {
    const std::string states = R"("a": {"action": "x", "next": "a"}, "sum": {"terminal": true}, "done": {"terminal": true})";
    const auto steps = run_exit(doc(states, R"("max_steps": 3, "on_max_steps": "sum", )"), 0);
    const auto iters = run_exit(doc(states, R"("max_iterations": 3, "on_max_iterations": "sum", )"), 0);
    CHECK(steps.iterations == 3);
    CHECK(steps.iterations == iters.iterations);
    CHECK(steps.final_state == "sum");
    CHECK(steps.terminated_by == iters.terminated_by);
    CHECK(has(codes(doc(states, R"("max_steps": 3, "on_max_steps": "sum", "on_max_iterations": "sum", )")),
              "duplicate-field"));
    CHECK(has(codes(doc(states, R"("dialect": "seed", "max_steps": 3, "max_iterations": 2, )")),
              "dialect-conflict"));
    // written back, the loop keeps its spelling and its dialect
    ll::json out;
    ll::to_json(out, loop_from(doc(states, R"("max_steps": 3, "on_max_steps": "sum", )")));
    CHECK(out["max_steps"] == 3);
    CHECK(out["on_max_steps"] == "sum");
  }

  TEST_CASE("with max_steps, max_iterations caps full passes (maintain restarts)") {
    const std::string states =
        R"("a": {"action": "x", "next": "done"}, "done": {"terminal": true}, "sum": {"action": "s", "next": "done"})";
    const auto r = run_exit(doc(states, R"("maintain": true, "max_steps": 50, "max_iterations": 3, "on_max_iterations": "sum", )"), 0);
    CHECK(r.terminated_by == ll::termination::max_iterations);
    // 4 passes of `a` (the first plus 3 restarts), the handler once
    CHECK(r.iterations == 4 + 3 + 1);
    // without maintain the pass cap never fires: the terminal ends the run
    CHECK(run_exit(doc(states, R"("max_steps": 50, "max_iterations": 1, )"), 0).terminated_by ==
          ll::termination::terminal);
    CHECK(has(codes(doc(states, R"("max_steps": 5, "max_iterations": 0, )")), "max-iterations-range"));
  }

  TEST_CASE("the cannot_judge hold: two re-entries, then the error route") {
    const std::string tail = std::string(", ") + std::string(done);
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    verdicts three{{"cannot_judge"}};
    ll::recording_event_sink sink;
    auto r = run(doc(R"("a": {"action": "x", "on_yes": "bad", "on_error": "done"})" + tail), runner,
                 three, &sink);
    CHECK(r.final_state == "done");
    CHECK(three.calls == 3);
    CHECK(dump(sink).find("cannot_judge_hold") != std::string::npos);
    // a route table: _error, never _
    CHECK(run(doc(R"("a": {"action": "x", "route": {"yes": "bad", "_": "bad", "_error": "done"}})" + tail),
              runner, verdicts{{"cannot_judge"}})
              .final_state == "done");
    // neither: unrouted
    CHECK(run(doc(R"("a": {"action": "x", "on_yes": "bad"})" + tail), runner, verdicts{{"cannot_judge"}})
              .terminated_by == ll::termination::error);
    // a yes after two holds resets the count
    verdicts reset{{"cannot_judge", "cannot_judge", "no", "cannot_judge", "cannot_judge", "yes"}};
    CHECK(run(doc(R"("a": {"action": "x", "on_yes": "done", "on_no": "a", "on_error": "bad"})" + tail),
              runner, reset)
              .final_state == "done");
    CHECK(reset.calls == 6);
    // declared: routes at once; cannot_judge_uncertain needs its own key
    CHECK(run(doc(R"("a": {"action": "x", "on_cannot_judge": "done"})" + tail), runner,
              verdicts{{"cannot_judge"}})
              .final_state == "done");
    verdicts uncertain{{"cannot_judge_uncertain"}};
    CHECK(run(doc(R"("a": {"action": "x", "on_cannot_judge": "bad", "on_error": "done"})" + tail), runner,
              uncertain)
              .final_state == "done");
    CHECK(uncertain.calls == 3);
    // in seed too
    CHECK(run(doc(R"("a": {"action": "x", "on_success": "bad", "on_error": "done"})" + tail), runner,
              verdicts{{"cannot_judge"}})
              .final_state == "done");
  }

  TEST_CASE("max_retries counts direct self re-entries; on_retry_exhausted takes over") {
    const std::string tail = std::string(", ") + std::string(done);
    for (const char* head : {"", R"("dialect": "current", )"}) {
      ll::scripted_runner runner;
      runner.otherwise(exit_with(1));
      ll::recording_event_sink sink;
      auto r = run(doc(R"("a": {"action": "x", "on_failure": "$current", "max_retries": 2,
                                "on_retry_exhausted": "done"})" + tail, head),
                   runner, ll::default_evaluator{}, &sink);
      CHECK(r.final_state == "done");
      CHECK(r.iterations == 3);  // no step for the redirect
      CHECK(dump(sink).find("retry_exhausted") != std::string::npos);
    }
    // a -> b -> a never exhausts
    ll::scripted_runner runner;
    runner.on_action("x", std::vector<ll::scripted_response>{exit_with(1), exit_with(1), exit_with(1), exit_with(0)});
    runner.otherwise(exit_with(0));
    auto r = run(doc(R"("a": {"action": "x", "on_failure": "b", "on_success": "done", "max_retries": 1,
                              "on_retry_exhausted": "bad"}, "b": {"action": "y", "next": "a"})" + tail),
                 runner);
    CHECK(r.final_state == "done");
    // the hold counts as a re-entry
    ll::scripted_runner ok;
    ok.otherwise(exit_with(0));
    verdicts cj{{"cannot_judge"}};
    CHECK(run(doc(R"("a": {"action": "x", "on_yes": "bad", "on_error": "bad", "max_retries": 1,
                          "on_retry_exhausted": "done"})" + tail),
              ok, cj)
              .final_state == "done");
    CHECK(cj.calls == 2);
    // validation pairs
    CHECK(has(codes(doc(R"("a": {"action": "x", "next": "done", "max_retries": 0, "on_retry_exhausted": "done"})" + tail)),
              "max-retries-range"));
    CHECK(has(codes(doc(R"("a": {"action": "x", "next": "done", "max_retries": 2})" + tail)), "retry-pairing"));
    CHECK(has(codes(doc(R"("a": {"action": "x", "next": "done", "on_retry_exhausted": "done"})" + tail)),
              "retry-pairing"));
  }

  TEST_CASE("resume keeps the retry streak and the hold count (snapshot counters)") {
    const std::string tail = std::string(", ") + std::string(done);
    const std::string text = doc(R"("a": {"action": "x", "on_failure": "$current", "max_retries": 2,
                                          "on_retry_exhausted": "done"})" + tail);
    ll::scripted_runner runner;
    runner.otherwise(exit_with(1));
    auto first = ll::make_executor(compiled(text), runner);
    REQUIRE(first.has_value());
    CHECK(first->step());
    CHECK(first->step());  // a ran twice: one retry so far
    const ll::snapshot saved = first->snapshot();
    REQUIRE(saved.counters.is_object());
    auto text_form = ll::snapshot_from_json_text(ll::to_json(saved).dump());
    REQUIRE(text_form.has_value());
    CHECK(*text_form == saved);
    auto second = ll::make_executor(compiled(text), runner);
    REQUIRE(second.has_value());
    REQUIRE(second->resume(*text_form).has_value());
    const auto& r = second->run();
    CHECK(r.final_state == "done");
    CHECK(r.iterations == 3);  // one more run of a, then on_retry_exhausted
    // a seed loop without these keys writes no counters
    ll::scripted_runner ok;
    ok.otherwise(exit_with(0));
    auto plain = ll::make_executor(compiled(doc(R"("a": {"action": "x", "next": "done"})" + tail)), ok);
    REQUIRE(plain.has_value());
    CHECK(plain->step());
    CHECK(plain->snapshot().counters.is_null());
    CHECK(ll::to_json(plain->snapshot()).dump().find("counters") == std::string::npos);
  }

  TEST_CASE("retryable_exit_codes: other codes go to on_retry_exhausted, else on_error") {
    const std::string tail = std::string(", ") + std::string(done) + R"(, "retry": {"terminal": true})";
    const std::string next_state = doc(R"("a": {"action": "x", "next": "done", "on_error": "retry",
        "retryable_exit_codes": [124], "max_retries": 3, "on_retry_exhausted": "bad"})" + tail);
    CHECK(run_exit(next_state, 0).final_state == "done");
    CHECK(run_exit(next_state, 3).final_state == "bad");
    ll::scripted_runner timeout;
    timeout.otherwise(ll::scripted_response::timeout());
    CHECK(run(next_state, timeout).final_state == "retry");
    const std::string without_exhausted = doc(R"("a": {"action": "x", "next": "done", "on_error": "retry",
        "retryable_exit_codes": [124]})" + tail);
    CHECK(run_exit(without_exhausted, 3).final_state == "retry");
    // evaluated state: an error with exit 3 goes to on_retry_exhausted
    const std::string evaluated = doc(R"("a": {"action": "x", "on_yes": "done", "on_error": "retry",
        "retryable_exit_codes": [124], "max_retries": 3, "on_retry_exhausted": "bad"})" + tail);
    CHECK(run_exit(evaluated, 3).final_state == "bad");
    CHECK(has(codes(doc(R"("a": {"action": "x", "next": "done", "retryable_exit_codes": [124]})" + tail)),
              "retry-pairing"));
    CHECK(has(codes(doc(R"("a": {"action": "x", "next": "done", "on_error": "done", "retryable_exit_codes": [true]})" + tail)),
              "out-of-range"));
  }

  TEST_CASE("evaluate.source and action-less decision states") {
    const std::string tail = std::string(", ") + std::string(done);
    const std::string text = doc(R"("a": {"action": "x", "capture": "gate", "next": "b"},
        "b": {"evaluate": {"type": "classify", "source": "${captured.gate.output}"},
              "route": {"PASS": "done", "_": "bad"}})" + tail);
    CHECK(run_exit(text, 0, "noise\nPASS\n").final_state == "done");
    CHECK(run_exit(text, 0, "FAIL").final_state == "bad");
    // unrenderable source: error
    const std::string broken = doc(R"("a": {"evaluate": {"type": "classify", "source": "${captured.nope.output}"},
        "route": {"_": "bad", "_error": "done"}})" + tail);
    CHECK(run_exit(broken, 0).final_state == "done");
  }

  TEST_CASE("classify: line first/last/N, blank lines skipped, CRLF, trimmed, out of range") {
    CHECK(ll::evaluate_classify("a\n\n  \nB  \n", nullptr).verdict == "B");
    CHECK(ll::evaluate_classify("a\r\nb\r\n", ll::json("first")).verdict == "a");
    CHECK(ll::evaluate_classify("a\nb\nc", ll::json(1)).verdict == "b");
    CHECK(ll::evaluate_classify("a\nb\nc", ll::json(-1)).verdict == "c");
    const auto out = ll::evaluate_classify("a", ll::json(5));
    CHECK(out.verdict.empty());
    CHECK(const_cast<ll::evaluation_details&>(out.details).materialize()["error"] == "index out of range");
    CHECK(ll::evaluate_classify("", nullptr).verdict.empty());
    CHECK(ll::evaluate_classify(" Mixed Case \n", nullptr).verdict == "Mixed Case");
    const std::string tail = std::string(", ") + std::string(done);
    CHECK(has(codes(doc(R"("a": {"action": "x", "evaluate": {"type": "classify", "line": "2"}, "route": {"_": "done"}})" + tail)),
              "unknown-value"));
    CHECK(has(codes(doc(R"("a": {"action": "x", "evaluate": {"type": "classify", "line": true}, "route": {"_": "done"}})" + tail)),
              "wrong-type"));
    const std::string no_default = doc(R"("a": {"action": "x", "evaluate": {"type": "classify"}, "route": {"X": "done"}})" + tail);
    CHECK(has(codes(no_default), "classify-no-default"));
    CHECK_FALSE(has(codes(doc(R"("a": {"action": "x", "evaluate": {"type": "classify"}, "route": {"X": "done"}})" + tail,
                              R"("partial_route_ok": true, )")),
                    "classify-no-default"));
    // an empty token goes to _; current + non-zero exit is error
    const std::string routed = doc(R"("a": {"action": "x", "evaluate": {"type": "classify"},
        "route": {"X": "bad", "_": "done", "_error": "bad"}})" + tail);
    CHECK(run_exit(routed, 0, "").final_state == "done");
    CHECK(run_exit(doc(R"("a": {"action": "x", "evaluate": {"type": "classify"},
        "route": {"X": "bad", "_": "bad", "_error": "done"}})" + tail, R"("dialect": "current", )"), 1, "X")
              .final_state == "done");
  }

  TEST_CASE("capture: failure_type and timeout_kind") {
    const std::string text = doc(R"("a": {"action": "x", "capture": "c", "route": {"_": "done"}}, )" + std::string(done));
    CHECK(run_exit(text, 0).captured.at("c").failure_type.empty());
    CHECK(run_exit(text, 1, "HTTP 429 too many").captured.at("c").failure_type == "transient");
    CHECK(run_exit(text, 1, "401 unauthorized").captured.at("c").failure_type == "non_recoverable");
    CHECK(run_exit(text, 1, "assertion failed").captured.at("c").failure_type == "real");
    ll::scripted_runner timeout;
    timeout.otherwise(ll::scripted_response::timeout());
    const auto r = run(text, timeout);
    CHECK(r.captured.at("c").failure_type == "transient");
    CHECK(r.captured.at("c").timeout_kind == "wall");
    const std::string rendered = doc(R"("a": {"action": "x", "capture": "c", "next": "b"},
        "b": {"action": "echo ${captured.c.failure_type}/${captured.c.timeout_kind}", "next": "done"}, )" + std::string(done));
    ll::scripted_runner runner;
    runner.on_action("x", exit_with(1, "boom"));
    runner.otherwise(exit_with(0));
    std::vector<std::string> texts;
    runner.on_call([&](const ll::action_request& req) { texts.emplace_back(req.text); });
    run(rendered, runner);
    REQUIRE(texts.size() == 2);
    CHECK(texts[1] == "echo real/");
  }

  TEST_CASE("injected context sets absent keys only, and survives a resume") {
    const std::string text = doc(R"("a": {"action": "${context.run_dir}|${context.mine}", "next": "done"}, )" +
                                     std::string(done),
                                 R"("context": {"mine": "loop"}, )");
    ll::scripted_runner runner;
    runner.otherwise(exit_with(0));
    std::string seen;
    runner.on_call([&](const ll::action_request& req) { seen = req.text; });
    ll::executor_options options;
    options.injected_context = {{"run_dir", "/r/"}, {"mine", "host"}};
    run(text, runner, ll::default_evaluator{}, nullptr, options);
    CHECK(seen == "/r/|loop");
  }

  TEST_CASE("metadata is kept; lint flags silence our lint of the same meaning") {
    const std::string tail = std::string(", ") + std::string(done);
    const std::string text = doc(R"("a": {"action": "x", "description": "does a", "next": "done"})" + tail,
                                 R"("category": "demo", "visibility": "internal", "labels": ["l1"], )");
    const auto loop = loop_from(text);
    CHECK(loop.category == "demo");
    CHECK(loop.visibility == "internal");
    CHECK(loop.labels == std::vector<std::string>{"l1"});
    CHECK(loop.states.at("a").description == "does a");
    ll::json out;
    ll::to_json(out, loop);
    CHECK(ll::parse_loop(out).value() == loop);
    CHECK(has(codes(doc(R"("a": {"action": "x", "next": "done"})" + tail, R"("visibility": "secret", )")),
              "unknown-visibility"));
    const std::string capture_ref = R"("a": {"action": "echo ${captured.nope.output}", "next": "done"})" + tail;
    CHECK(has(codes(doc(capture_ref)), "template-unknown-capture"));
    CHECK_FALSE(has(codes(doc(capture_ref, R"("capture_reachability_ok": true, )")), "template-unknown-capture"));
    CHECK(loop_from(doc(R"("a": {"action": "x", "next": "done"})" + tail, R"("shell_pid_ok": true, )"))
              .lint_flags.at("shell_pid_ok"));
    // a flag never silences an error
    CHECK(has(codes(doc(R"("a": {"action": "echo ${context.x:-y}", "next": "done"})" + tail,
                        R"("bash_default_ok": true, )")),
              "template-bash-operator"));
    CHECK(has(codes(doc(R"("a": {"action": "x", "next": "done"})" + tail, R"("input_key": "topic", )")),
              "input-key-unguarded"));
  }

  TEST_CASE("plugin keys are errors naming the plugin; with_ gets a did-you-mean") {
    const std::string tail = std::string(", ") + std::string(done);
    CHECK(first_error(doc(R"("a": {"action": "x", "next": "done", "host_guard": true})" + tail)) ==
          "plugin-key: key \"host_guard\" belongs to the little-loops plugin (host guards); this "
          "engine does not provide it");
    for (const char* key : {"default_idle_timeout", "prompt_size_guard", "pairs"})
      CHECK(first_error(doc(R"("a": {"action": "x", "next": "done", ")" + std::string(key) + R"(": 1})" + tail))
                .starts_with("plugin-key"));
    CHECK(first_error(doc(R"("a": {"action": "x", "next": "done"})" + tail, R"("host_guard": true, )"))
              .starts_with("plugin-key"));
    CHECK(first_error(doc(R"("a": {"action": "x", "next": "done", "with_": {}})" + tail)) ==
          "unknown-key: unknown key \"with_\" (did you mean \"with\"?)");
    CHECK(first_error(doc(R"("a": {"action": "x", "evaluate": {"type": "exit_code", "command": "x"}, "next": "done"})" + tail))
              .starts_with("unknown-key"));
  }

  TEST_CASE("output_numeric key, output_contains error_patterns, default_timeout") {
    const std::string tail = std::string(", ") + std::string(done);
    const std::string keyed = doc(R"("a": {"action": "x", "capture": "c",
        "evaluate": {"type": "output_numeric", "key": "score", "operator": "ge", "target": 3},
        "route": {"_": "done"}})" + tail);
    CHECK(run_exit(keyed, 0, "score=1\nscore = 4").captured.at("c").verdict == "success");
    CHECK(run_exit(keyed, 0, "nothing").captured.at("c").verdict == "error");
    const std::string patterns = doc(R"("a": {"action": "x", "capture": "c",
        "evaluate": {"type": "output_contains", "pattern": "OK", "error_patterns": ["Traceback"]},
        "route": {"_": "done"}})" + tail);
    CHECK(run_exit(patterns, 0, "Traceback: x").captured.at("c").verdict == "error");
    CHECK(run_exit(patterns, 0, "nope").captured.at("c").verdict == "failure");
    const auto c = compiled(doc(R"("a": {"action": "x", "next": "done"})" + tail, R"("default_timeout": 7, )"));
    CHECK(c->state(*c->find("a")).timeout == std::chrono::milliseconds(7000));
  }
}
