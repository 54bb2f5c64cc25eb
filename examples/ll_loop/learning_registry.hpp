// little_loops — ll-loop: the learning-test registry that learning states read
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/error.hpp>
#include <little_loops/expected.hpp>
#include <little_loops/learning.hpp>

#include <filesystem>
#include <functional>
#include <string_view>

namespace ll_loop {

/// What the registry under `root` holds for `target`, where the reference's learning_tests
/// module reads it: `.ll/learning-tests/<slug>.md` (learning_slug), its YAML front matter
/// (between a first line `---` and the next `---`); no file or no front matter: missing;
/// `status:` (default `proven`) `stale` or `refuted` as written, anything else proven. With
/// `learning_tests.enabled` in `.ll/ll-config.json`, a proven record whose `date:`
/// (YYYY-MM-DD) is more than `stale_after_days` (default 30, at least 1) days old reads as
/// missing, as the reference's staleness check. A front matter that is not YAML, not a
/// mapping, or lacks `target` or `date` is an error naming the file.
little_loops::expected<little_loops::learning_status, little_loops::error> read_learning_record(
    std::string_view target, const std::filesystem::path& root);

/// executor_options::learning_registry for `ll-loop run`, `resume` and `simulate`: the
/// registry under the working directory of the moment.
std::function<little_loops::expected<little_loops::learning_status, little_loops::error>(std::string_view)>
learning_registry_here();

}  // namespace ll_loop
