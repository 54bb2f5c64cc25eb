// little_loops — ll-loop: positional input, required inputs and host-injected context
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/json.hpp>
#include <little_loops/schema.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ll_loop {

/// Puts the positional INPUT of `run`/`simulate` into the loop's context: a JSON object
/// whose keys the context already has sets those keys (JSON values; the other keys are
/// dropped, with a warning on stderr); anything else (other JSON, a JSON object with no
/// known key, plain text) becomes `context[input_key]` as written. Keys in `overrides`
/// (`--context`) are left alone: they win. Returns the dropped keys, for
/// warn_dropped_input_keys() once the loop has loaded.
std::vector<std::string> apply_positional_input(little_loops::fsm_loop& loop, const std::string& input,
                                                const little_loops::json& overrides);

/// The warning (stderr) for the input keys apply_positional_input() dropped, if any.
void warn_dropped_input_keys(const std::vector<std::string>& dropped);

/// False, after saying which, when a `required_inputs` key is missing or empty (absent,
/// null, false, 0, "", [] or {}).
bool check_required_inputs(const little_loops::fsm_loop& loop, std::string_view verb,
                           std::string_view shown_name);

/// The context ll-loop injects (executor_options::injected_context): `run_dir` (with a
/// trailing `/`), `input_hash` (the first 12 hex digits of the SHA-256 of a string
/// `context.input`) and `max_steps` (the step cap).
little_loops::json injected_context(const little_loops::fsm_loop& loop,
                                    const std::string& run_dir);

/// A run directory under `.loops/runs/`, created: `<name>-<YYYYMMDDTHHMMSS>` (`-2`, `-3`, …
/// when it exists), or `<name>-simulate` for simulate. Empty, after a warning, when it
/// cannot be created.
std::string make_run_dir(const little_loops::fsm_loop& loop, bool simulate);

/// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace ll_loop
