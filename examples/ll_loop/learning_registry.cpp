// little_loops — ll-loop: the learning-test registry that learning states read
// SPDX-License-Identifier: MIT
#include "learning_registry.hpp"

#include <little_loops/json.hpp>
#include <little_loops/yaml/loader.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace ll_loop {
namespace {

namespace fs = std::filesystem;
namespace ll = little_loops;

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The front matter: what lies between a first line `---` and the next line starting `---`
// (the reference's `^---\n(.*?)\n---`); nullopt when there is none.
std::optional<std::string> front_matter(const std::string& text) {
  if (text.rfind("---\n", 0) != 0) return std::nullopt;
  const std::size_t end = text.find("\n---", 4);
  if (end == std::string::npos) return std::nullopt;
  return text.substr(4, end - 4);
}

// Days from `date` (YYYY-MM-DD) to today (local time); nullopt when it is not such a date.
std::optional<long> age_in_days(const std::string& date) {
  int y = 0;
  unsigned m = 0;
  unsigned d = 0;
  char tail = 0;
  if (date.size() != 10 || std::sscanf(date.c_str(), "%4d-%2u-%2u%c", &y, &m, &d, &tail) != 3)
    return std::nullopt;
  const std::chrono::year_month_day then{std::chrono::year{y}, std::chrono::month{m}, std::chrono::day{d}};
  if (!then.ok()) return std::nullopt;
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  const std::chrono::year_month_day today{std::chrono::year{local.tm_year + 1900},
                                          std::chrono::month{static_cast<unsigned>(local.tm_mon + 1)},
                                          std::chrono::day{static_cast<unsigned>(local.tm_mday)}};
  return (std::chrono::sys_days{today} - std::chrono::sys_days{then}).count();
}

// `learning_tests.stale_after_days` when `learning_tests.enabled` is true in
// `.ll/ll-config.json` under `root`; nullopt when staleness is off (no file, not enabled).
std::optional<long> stale_after_days(const fs::path& root) {
  const auto text = read_text(root / ".ll" / "ll-config.json");
  if (!text) return std::nullopt;
  const ll::json config = ll::json::parse(*text, nullptr, false);
  if (!config.is_object()) return std::nullopt;
  const ll::json lt = config.value("learning_tests", ll::json::object());
  if (!lt.is_object() || lt.value("enabled", false) != true) return std::nullopt;
  const ll::json days = lt.value("stale_after_days", ll::json(30));
  return std::max<long>(1, days.is_number_integer() ? days.get<long>() : 30);
}

}  // namespace

ll::expected<ll::learning_status, ll::error> read_learning_record(std::string_view target,
                                                                  const fs::path& root) {
  const fs::path path = root / ".ll" / "learning-tests" / (ll::learning_slug(target) + ".md");
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return ll::learning_status::missing;
  const auto text = read_text(path);
  if (!text) return ll::unexpected(ll::error{ll::errc::io_error, fmt::format("cannot read {}", path.string())});
  const auto yaml = front_matter(*text);
  if (!yaml) return ll::learning_status::missing;
  auto data = ll::yaml_to_json(*yaml, path.string());
  if (!data) return ll::unexpected(std::move(data.error()));
  if (data->is_null()) *data = ll::json::object();
  if (!data->is_object() || !data->contains("target") || !data->contains("date"))
    return ll::unexpected(ll::error{ll::errc::parse_error,
                                    fmt::format("{}: a learning-test record needs a front matter "
                                                "mapping with `target` and `date`", path.string())});
  const ll::json status = data->value("status", ll::json("proven"));
  if (status == "stale") return ll::learning_status::stale;
  if (status == "refuted") return ll::learning_status::refuted;
  if (const auto limit = stale_after_days(root)) {
    const ll::json& date = (*data)["date"];
    const auto age = date.is_string() ? age_in_days(date.get<std::string>()) : std::nullopt;
    if (age && *age > *limit) return ll::learning_status::missing;
  }
  return ll::learning_status::proven;
}

std::function<ll::expected<ll::learning_status, ll::error>(std::string_view)> learning_registry_here() {
  return [](std::string_view target) {
    std::error_code ec;
    const fs::path root = fs::current_path(ec);
    return read_learning_record(target, ec ? fs::path(".") : root);
  };
}

}  // namespace ll_loop
