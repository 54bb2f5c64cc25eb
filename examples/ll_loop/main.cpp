// little_loops — ll-loop: the command-line host that runs loops for real
// SPDX-License-Identifier: MIT
//
//   ll-loop run LOOP [--context K=V]... [--max-iterations N] [--no-llm] [--dry-run] [--quiet] [--json] [--queue]
//   ll-loop validate | compile | show | simulate | test | resume | status | history | stop ...
//   ll-loop LOOP ...            (shorthand for `ll-loop run LOOP ...`)
//
// Every verb has `--help`. See examples/loops/ for loops to try.
#include "args.hpp"
#include "display.hpp"
#include "loading.hpp"
#include "verbs.hpp"

#include <little_loops/runners/posix_process_runner.hpp>
#include <little_loops/version.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace ll_loop {
namespace {

struct verb_entry {
  verb_spec spec;
  int (*fn)(const parsed_args&);
};

// Options that several verbs share, with the same help text.
option_spec journal_dir_option() {
  return {"journal-dir", 0, "DIR", "journal directory (default .loops/.running)", false, {}};
}
option_spec shell_command_option() {
  return {"shell-command", 0, "CMD",
          "command for shell actions, the action appended (default: bash -c)", false, {}};
}
option_spec judge_command_option() {
  return {"judge-command", 0, "CMD",
          "command for the LLM judge, prompt on stdin (default: claude -p)", false, {}};
}
option_spec output_limit_option() {
  return {"output-limit", 0, "BYTES", "cap on captured output per stream (default 16 MiB)",
          false, {}};
}
option_spec no_llm_option() {
  return {"no-llm", 0, "", "run no LLM: prompt and slash-command actions are not run and "
                           "llm_structured is not asked (each gives the error verdict)", false, {}};
}
option_spec verbose_option() {
  return {"verbose", 'v', "", "show every action's output and stderr (the last 20 lines)", false, {}};
}
option_spec context_option(std::string_view help) {
  return {"context", 0, "K=V", help, true, {}};
}
option_spec quiet_option(std::string_view help) { return {"quiet", 'q', "", help, false, {}}; }

/// The run verb's help text, with the containment this machine gives its actions.
std::string_view run_details() {
  static const std::string text = std::string(
      "LOOP is a file path, or a NAME found as .loops/NAME.fsm.yaml, NAME.yaml, NAME.yml,\n"
      "NAME.fsm.json or NAME.json (the first that exists: a compiled loop before its spec).\n"
      "Paradigm files (goal, convergence, invariants, imperative) are compiled first.\n"
      "INPUT goes into the context: a JSON object sets the context keys it names that the\n"
      "loop already has; anything else is stored as context[input_key] (default `input`).\n"
      "--context wins over INPUT. Keys in `required_inputs:` must then be non-empty.\n"
      "The run gets context.run_dir (a fresh .loops/runs/<name>-<time>/), input_hash and\n"
      "max_steps unless the context already has them.\n"
      "The run ends with `Loop completed: <final state> (N iterations, duration)`, followed\n"
      "by how it ended when that was not a success terminal.\n"
      "Ctrl-C stops gracefully: the running action's processes are killed and the run\n"
      "is journaled as interrupted; `ll-loop resume NAME` continues it.\n") +
      (little_loops::cgroup_containment_available()
           ? "Containment: cgroup. Each action runs in a cgroup of its own (ours is delegated to\n"
             "us), killed at its end: processes it started with setsid die with it.\n"
           : "Containment: process group. No cgroup v2 group is delegated to ll-loop here, so\n"
             "each action runs in a process group: processes it starts with setsid outlive it.\n") +
      "A loop does not start while another running loop's `scope:` overlaps its own (no\n"
      "scope: the whole working directory); --queue waits for it instead.\n"
      "On a CONTEXT_HANDOFF: signal the loop's `on_handoff:` decides: pause (resumable),\n"
      "spawn (resumable, and the prompt command is started, detached, to resume it) or\n"
      "terminate (the run ends, not resumable).\n"
      "Exit status: 0 success terminal, 2 failure terminal, 1 otherwise.";
  return text;
}

verb_entry run_verb() {
  return {{"run",
           "Run a loop with real processes and a live progress display.",
           {"LOOP", "[INPUT]"},
           {context_option("set context variable K (repeatable; overrides the file)"),
            {"max-iterations", 'n', "N", "override the iteration limit", false, {}},
            no_llm_option(),
            {"dry-run", 0, "", "show the execution plan without running (nothing is journaled)",
             false, {}},
            quiet_option("no progress output"),
            verbose_option(),
            {"json", 0, "", "print the result as JSON (no progress output)", false, {}},
            {"queue", 0, "", "wait (up to an hour) while a running loop's scope overlaps this "
                             "one's, instead of refusing", false, {}},
            {"journal-dir", 0, "DIR", "where runs are journaled (default .loops/.running)",
             false, {}},
            shell_command_option(),
            {"prompt-command", 0, "CMD", "command for prompt actions (default: claude "
                                         "--dangerously-skip-permissions -p)", false, {}},
            judge_command_option(),
            output_limit_option()},
           run_details()},
          verb_run};
}

verb_entry resume_verb() {
  return {{"resume",
           "Resume an interrupted (or handed-off) run from its journal.",
           {"NAME"},
           {quiet_option("no progress output"),
            verbose_option(),
            {"json", 0, "", "print the result as JSON", false, {}},
            {"max-iterations", 'n', "N", "a new iteration limit (default: the run's)", false, {}},
            {"queue", 0, "", "wait while a running loop's scope overlaps this one's", false, {}},
            journal_dir_option(),
            {"shell-command", 0, "CMD", "command for shell actions", false, {}},
            {"prompt-command", 0, "CMD", "command for prompt actions", false, {}},
            {"judge-command", 0, "CMD", "command for the LLM judge", false, {}},
            {"output-limit", 0, "BYTES", "cap on captured output per stream", false, {}}},
           "NAME is the loop's name (as shown by `ll-loop status`), or the loop itself (a file\n"
           "or a .loops/ name), journaled under the name inside it. Completed actions are never\n"
           "run again. Exit status as for `run`."},
          verb_resume};
}

/// validate, compile, show: the verbs that read a loop and print it or its findings.
std::vector<verb_entry> inspect_verbs() {
  return {
      {{"validate",
        "Validate a loop definition (paradigm specs are compiled first).",
        {"LOOP"},
        {{"json", 0, "", "print {valid, name, initial, states, diagnostics, ...} as JSON", false,
          {}}},
        "Exit status: 0 valid (warnings allowed), 1 invalid or not found."},
       verb_validate},
      {{"compile",
        "Compile a paradigm spec to a full loop (FSM) document.",
        {"SPEC"},
        {{"output", 'o', "FILE", "output file ('-' for stdout; default SPEC with .fsm.yaml "
                                 "or .fsm.json)", false, {}}},
        "The output format follows the output file's extension: .json writes JSON, anything\n"
        "else YAML. A full loop document (no paradigm) is normalised."},
       verb_compile},
      {{"show",
        "Show a loop: states and transitions, or a DOT / Mermaid diagram, or JSON.",
        {"LOOP"},
        {{"format", 'f', "FMT", "output format", false, {"text", "dot", "mermaid", "json"}}},
        ""},
       verb_show},
      {{"schema",
        "Print the JSON Schema of loop files (for editors' completion and checks).",
        {},
        {},
        "The schema is made from the keys the loader accepts, in both dialects; the project\n"
        "commits it as docs/loop.schema.json. A YAML loop file names it on its first line:\n"
        "  # yaml-language-server: $schema=<path or URL of loop.schema.json>"},
       verb_schema},
  };
}

verb_entry simulate_verb() {
  return {{"simulate",
           "Trace a loop with scripted action results; no process is started.",
           {"LOOP", "[INPUT]"},
           {{"scenario", 's', "NAME", "scripted exit codes",
             false, {"all-pass", "all-fail", "all-error", "first-fail", "alternating"}},
            {"responses", 'r', "FILE", "JSON file of scripted responses (see below)", false, {}},
            {"events", 'e', "FILE", "write every event as JSON lines to FILE ('-': stdout)",
             false, {}},
            {"json", 0, "", "print {final_state, iterations, terminated_by, duration_ms, "
                            "captured, error}", false, {}},
            context_option("set context variable K (repeatable)"),
            {"max-iterations", 'n', "N", "override the iteration limit (default: the loop's, at "
                                         "most 20)", false, {}},
            quiet_option("no trace output")},
           "Scenarios (exit codes of the simulated actions, in call order):\n"
           "  all-pass     every action exits 0\n"
           "  all-fail     every action exits 1\n"
           "  all-error    every action exits 2 (the exit_code evaluator's error verdict)\n"
           "  first-fail   the first action exits 1, every later one 0\n"
           "  alternating  1, 0, 1, 0, ... (odd calls fail)\n"
           "Without --scenario or --responses every action exits 0. As in the original, a\n"
           "simulated action outputs \"[simulated output for: ACTION]\" and the trace shows each\n"
           "call (\"[SIMULATED] Would execute (shell command): ACTION\", then \"[AUTO] Result:\n"
           "...\" under a scenario). With --events - and --json, the result is the last line.\n"
           "--responses FILE: {\"by_index\": [R...], \"by_action\": {\"<action>\": R | [R...]},\n"
           "  \"default\": R} with R = {\"output\": \"\", \"stderr\": \"\", \"exit_code\": 0} (fields\n"
           "  optional). Call n (0-based) with action text A uses by_index[n] if present, else\n"
           "  by_action[A] (a list's k-th entry on A's k-th call, the last entry repeating), else\n"
           "  default, else the scenario, else exit 0 with empty output.\n"
           "Exit status: 1 when the simulated run ends in an error (as `run`), else 0."},
          verb_simulate};
}

verb_entry test_verb() {
  return {{"test",
           "Run one state of a loop for real and show what the loop would do next.",
           {"LOOP"},
           {{"state", 0, "STATE", "the state to test (default: the initial state)", false, {}},
            context_option("set context variable K (repeatable)"),
            {"exit-code", 0, "N", "exit code of a simulated prompt action (default 0)", false,
             {}},
            shell_command_option(),
            no_llm_option(),
            judge_command_option(),
            output_limit_option()},
           "Runs the state's action (shell actions for real; prompt and slash-command actions\n"
           "are simulated: output `[simulated output for: ACTION]`, exit code --exit-code),\n"
           "evaluates it with the state's evaluator and prints the verdict and the transition\n"
           "the loop would take. Nothing is journaled and the loop goes no further.\n"
           "Exit status: 0 when the state evaluates and routes without error, 1 otherwise."},
          verb_test};
}

/// list, status, history, stop: the verbs that read the journal.
std::vector<verb_entry> journal_verbs() {
  return {
      {{"list",
        "List the loops in .loops/ (or, with --running, the journaled runs).",
        {},
        {{"running", 0, "", "list journaled runs: state, iteration, status, elapsed time",
          false, {}},
         {"json", 0, "", "print a JSON array ({name, path}, or the runs' status)", false, {}},
         journal_dir_option()},
        "Each loop is listed by the name `ll-loop run NAME` takes, with the first line of its\n"
        "description."},
       verb_list},
      {{"status",
        "Show the journaled state of a run (or of every run).",
        {"[NAME]"},
        {{"json", 0, "", "print the state as JSON", false, {}}, journal_dir_option()},
        ""},
       verb_status},
      {{"history",
        "Show the events of a run.",
        {"NAME"},
        {{"tail", 'n', "N", "last N events (default 50)", false, {}},
         {"json", 0, "", "print the events as JSON lines, one object per line", false, {}},
         journal_dir_option()},
        "NAME is the loop's name, or the loop itself (a file or a .loops/ name), as for\n"
        "`status` and `resume`. A failed action's event shows its exit code and the last\n"
        "lines of its stderr."},
       verb_history},
      {{"stop",
        "Stop a running loop (it is journaled as interrupted and can be resumed).",
        {"NAME"},
        {journal_dir_option()},
        ""},
       verb_stop},
  };
}

/// Every verb, in the order of the global help; `run` first (the shorthand's verb).
const std::vector<verb_entry>& verbs() {
  static const std::vector<verb_entry> table = [] {
    std::vector<verb_entry> all = {run_verb(), resume_verb()};
    for (auto& v : inspect_verbs()) all.push_back(std::move(v));
    all.push_back(simulate_verb());
    all.push_back(test_verb());
    for (auto& v : journal_verbs()) all.push_back(std::move(v));
    return all;
  }();
  return table;
}

void print_global_help(std::FILE* out) {
  std::string text =
      "usage: ll-loop <command> [options]   (ll-loop LOOP ... is short for ll-loop run LOOP ...)\n\n"
      "Execute FSM-based automation loops.\n\ncommands:\n";
  for (const auto& v : verbs()) text += fmt::format("  {:<10}{}\n", v.spec.name, v.spec.summary);
  text +=
      "\nExamples:\n"
      "  ll-loop run examples/loops/goal_config_file.yaml   # run a loop file\n"
      "  ll-loop fix-types                 # run .loops/fix-types.fsm.yaml or .yaml\n"
      "  ll-loop run fix-types --dry-run   # show the execution plan\n"
      "  ll-loop validate fix-types        # validate a loop definition\n"
      "  ll-loop simulate fix-types --scenario first-fail\n"
      "  ll-loop test fix-types            # run the first state once, for real\n"
      "  ll-loop compile paradigm.yaml     # compile a paradigm to a loop\n"
      "  ll-loop show fix-types --format mermaid\n"
      "  ll-loop list                      # loops in .loops/\n"
      "  ll-loop status                    # journaled runs\n"
      "  ll-loop stop fix-types            # stop a running loop\n"
      "  ll-loop resume fix-types          # resume an interrupted loop\n"
      "  ll-loop history fix-types         # show execution history\n"
      "\nRun `ll-loop <command> --help` for a command's options.\n";
  std::fputs(text.c_str(), out);
}

int dispatch(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) {
    print_global_help(stdout);
    return exit_failed;
  }
  if (words[0] == "-h" || words[0] == "--help" || words[0] == "help") {
    print_global_help(stdout);
    return exit_ok;
  }
  if (words[0] == "--version") {
    fmt::print("ll-loop (little_loops) {}.{}.{}\n", LITTLE_LOOPS_VERSION_MAJOR,
               LITTLE_LOOPS_VERSION_MINOR, LITTLE_LOOPS_VERSION_PATCH);
    return exit_ok;
  }
  const verb_entry* entry = nullptr;
  for (const auto& v : verbs())
    if (v.spec.name == words[0]) entry = &v;
  if (entry == nullptr) {
    if (words[0].rfind('-', 0) == 0) {
      print_global_help(stderr);
      std::fprintf(stderr, "ll-loop: error: unrecognized argument: %s\n", words[0].c_str());
      return exit_usage;
    }
    // A word that names no loop but is close to a command is a mistyped command.
    if (!resolve_loop_path(words[0])) {
      std::vector<std::string_view> names;
      for (const auto& v : verbs()) names.push_back(v.spec.name);
      if (const std::string close = closest_match(words[0], names); !close.empty()) {
        std::fprintf(stderr, "ll-loop: error: unknown command '%s' (did you mean '%s'?)\n",
                     terminal_safe(words[0]).c_str(), close.c_str());
        return exit_usage;
      }
    }
    // `ll-loop NAME ...` is short for `ll-loop run NAME ...` (as in the Python original).
    words.insert(words.begin(), "run");
    entry = &verbs().front();
  }
  words.erase(words.begin());
  parse_outcome parsed = parse_verb_args(entry->spec, words);
  if (!parsed.args) {
    std::fprintf(stderr, "%s\nll-loop %s: error: %s\n", usage_line(entry->spec).c_str(),
                 std::string(entry->spec.name).c_str(), parsed.error.c_str());
    return exit_usage;
  }
  if (parsed.args->help) {
    std::fputs(verb_help(entry->spec).c_str(), stdout);
    return exit_ok;
  }
  return entry->fn(*parsed.args);
}

}  // namespace
}  // namespace ll_loop

int main(int argc, char** argv) {
  // A standard descriptor the caller closed (`ll-loop run LOOP >&-`) would be taken by the
  // next file opened, the journal's event log, and the display would write into it:
  // /dev/null takes its place first.
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    const int null_fd = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (null_fd >= 0 && null_fd != fd) {
      ::dup2(null_fd, fd);
      ::close(null_fd);
    }
  }
  try {
    const int status = ll_loop::dispatch(argc, argv);
    // What was printed must have been written (`ll-loop show ... > /dev/full`): a lost
    // output is a failure, as for any Unix tool.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      const int err = errno;
      ll_loop::say_error(fmt::format("cannot write to standard output: {}", std::strerror(err)));
      return status == ll_loop::exit_ok ? ll_loop::exit_failed : status;
    }
    return status;
  } catch (const std::exception& e) {
    ll_loop::say_error(fmt::format("internal error: {}", e.what()));
    return ll_loop::exit_failed;
  }
}
