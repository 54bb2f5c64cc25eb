// little_loops — ll-loop: the verbs (one function per verb) and their exit codes
// SPDX-License-Identifier: MIT
#pragma once

#include "args.hpp"

#include <filesystem>
#include <string>

namespace ll_loop {

/// Exit codes of ll-loop.
/// `run`/`resume`: 0 = the loop reached a success terminal, 2 = a failure terminal
/// (`failure: true`), 1 = anything else (limit, timeout, error, interruption, handoff).
/// Other verbs: 0 = ok, 1 = failed (invalid loop, not found, …).
/// Usage errors (unknown option, missing argument) exit with 2, like argparse; a
/// `--context` without "=" exits with 1, as in the original (which checks it after parsing).
inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;
inline constexpr int exit_failure_terminal = 2;
inline constexpr int exit_usage = 2;
/// `run`, `resume`: a state boundary could not be journaled, so the run stopped there.
inline constexpr int exit_journal_failed = 3;
inline constexpr int exit_bad_context = 1;

int verb_run(const parsed_args& args);
int verb_resume(const parsed_args& args);
int verb_list(const parsed_args& args);
int verb_validate(const parsed_args& args);
int verb_compile(const parsed_args& args);
int verb_show(const parsed_args& args);
int verb_schema(const parsed_args& args);
int verb_simulate(const parsed_args& args);
int verb_test(const parsed_args& args);
int verb_status(const parsed_args& args);
int verb_history(const parsed_args& args);
int verb_stop(const parsed_args& args);

/// For a message saying `name` has no journal: ` (its journal files hold loop "OTHER")` when
/// the files `name` maps to hold another loop's runs (ll::journal_name_collision), else "".
std::string collision_note(const std::filesystem::path& dir, const std::string& name);

/// The name `name`'s runs are journaled under. One rule for every verb that reads the
/// journal (status, history, stop, resume): `name` itself when it has a journal, else, when
/// `name` is a loop (a file, or a name in .loops/) whose inner `name:` differs, that inner
/// name, under which `run` journaled it; else `name`.
std::string journal_name_of(const std::filesystem::path& dir, const std::string& name);

}  // namespace ll_loop
