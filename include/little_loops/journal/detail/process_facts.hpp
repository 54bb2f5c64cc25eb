// little_loops — journal: what /proc says of a process (zombie, start time) and journal timestamps in seconds
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

LITTLE_LOOPS_NAMESPACE_BEGIN

namespace detail {

/// Seconds since the epoch of a journal timestamp (journal_now(): ISO 8601 in UTC,
/// `2026-11-24T08:28:15.437460+00:00`), to the second; nullopt for anything else.
inline std::optional<double> journal_epoch_seconds(std::string_view ts) noexcept {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (ts.size() < 19 || ts[4] != '-' || ts[7] != '-' || ts[10] != 'T' || ts[13] != ':' ||
      ts[16] != ':')
    return std::nullopt;
  const auto number = [&](std::size_t at, std::size_t len, int& out) {
    out = 0;
    for (std::size_t i = at; i < at + len; ++i) {
      if (ts[i] < '0' || ts[i] > '9') return false;
      out = out * 10 + (ts[i] - '0');
    }
    return true;
  };
  if (!number(0, 4, y) || !number(5, 2, mo) || !number(8, 2, d) || !number(11, 2, h) ||
      !number(14, 2, mi) || !number(17, 2, sec))
    return std::nullopt;
  using namespace std::chrono;
  const year_month_day date{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!date.ok()) return std::nullopt;
  const auto days_since_epoch = sys_days(date).time_since_epoch().count();
  return static_cast<double>(static_cast<long long>(days_since_epoch) * 86400 + h * 3600 + mi * 60 + sec);
}

/// What /proc says of a live process: zombie (exited, not reaped: gone for us) and when it
/// started, in seconds since the epoch (to the second). nullopt where /proc cannot be read.
struct process_facts {
  bool zombie = false;
  std::optional<double> started;
};

inline std::optional<process_facts> read_process_facts(long pid) noexcept {
#if defined(__linux__)
  try {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!stat || !std::getline(stat, line)) return std::nullopt;
    const auto close = line.rfind(')');  // the command may hold spaces and parentheses
    if (close == std::string::npos || close + 2 >= line.size()) return std::nullopt;
    process_facts facts;
    facts.zombie = line[close + 2] == 'Z';  // field 3: the state
    // Field 22: the start time, in clock ticks since boot.
    std::size_t at = close + 1;
    for (int field = 3; field < 22 && at != std::string::npos; ++field) at = line.find(' ', at + 1);
    if (at == std::string::npos) return facts;
    const unsigned long long ticks = std::strtoull(line.c_str() + at + 1, nullptr, 10);
    std::ifstream boot("/proc/stat");
    unsigned long long btime = 0;
    for (std::string entry; std::getline(boot, entry);)
      if (entry.rfind("btime ", 0) == 0) btime = std::strtoull(entry.c_str() + 6, nullptr, 10);
    const long hz = ::sysconf(_SC_CLK_TCK);
    if (btime != 0 && hz > 0)
      facts.started = static_cast<double>(btime) + static_cast<double>(ticks) / static_cast<double>(hz);
    return facts;
  } catch (...) {
    return std::nullopt;
  }
#else
  (void)pid;
  return std::nullopt;
#endif
}

}  // namespace detail

LITTLE_LOOPS_NAMESPACE_END
