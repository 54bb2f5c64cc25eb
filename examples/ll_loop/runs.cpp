// little_loops — ll-loop: the on-disk record of runs (state file, event log, stop request)
// SPDX-License-Identifier: MIT
#include "runs.hpp"

#include <little_loops/events.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <system_error>

#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ll_loop {

namespace {

std::string safe_name(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');
  return out;
}

bool write_all(int fd, const char* data, std::size_t n) noexcept {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

std::string read_file(const fs::path& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  if (!ok) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string now_iso() { return ll::format_timestamp(std::chrono::system_clock::now()); }

ll::json run_record::to_json() const {
  ll::json j = ll::json::object();
  j["name"] = name;
  j["status"] = status;
  j["pid"] = pid;
  j["loop_path"] = loop_path;
  j["started_at"] = started_at;
  j["updated_at"] = updated_at;
  j["iteration"] = iteration;
  j["current_state"] = current_state;
  j["snapshot"] = snapshot;
  j["extra"] = extra;
  return j;
}

std::optional<run_record> run_record::from_json(const ll::json& j, std::string* why) {
  if (!j.is_object()) {
    if (why) *why = "state file is not a JSON object";
    return std::nullopt;
  }
  run_record r;
  auto str = [&](const char* key) -> std::string {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string{};
  };
  r.name = str("name");
  r.status = str("status");
  r.loop_path = str("loop_path");
  r.started_at = str("started_at");
  r.updated_at = str("updated_at");
  r.current_state = str("current_state");
  if (auto it = j.find("pid"); it != j.end() && it->is_number_integer()) r.pid = it->get<long>();
  if (auto it = j.find("iteration"); it != j.end() && it->is_number_integer())
    r.iteration = it->get<std::int64_t>();
  if (auto it = j.find("snapshot"); it != j.end()) r.snapshot = *it;
  if (auto it = j.find("extra"); it != j.end() && it->is_object()) r.extra = *it;
  if (r.status.empty()) {
    if (why) *why = "state file has no status";
    return std::nullopt;
  }
  return r;
}

run_paths paths_of(const fs::path& dir, const std::string& name) {
  const std::string stem = safe_name(name);
  return {dir / (stem + ".state.json"), dir / (stem + ".events.jsonl"), dir / (stem + ".stop")};
}

std::optional<std::string> save_record(const fs::path& dir, const run_record& record) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create " + dir.string() + ": " + ec.message();
  const run_paths p = paths_of(dir, record.name);
  const std::string text = record.to_json().dump(2) + "\n";
  const fs::path temp = p.state.string() + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot write " + temp.string() + ": " + std::strerror(errno);
  const bool ok = write_all(fd, text.data(), text.size()) && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok) return "cannot write " + temp.string() + ": " + std::strerror(saved);
  if (::rename(temp.c_str(), p.state.c_str()) != 0)
    return "cannot rename " + temp.string() + ": " + std::strerror(errno);
  return std::nullopt;
}

std::optional<run_record> load_record(const fs::path& dir, const std::string& name,
                                      std::string* why) {
  if (why) why->clear();
  const run_paths p = paths_of(dir, name);
  bool ok = false;
  const std::string text = read_file(p.state, ok);
  if (!ok) return std::nullopt;
  ll::json j = ll::json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    if (why) *why = p.state.string() + " is not valid JSON";
    return std::nullopt;
  }
  return run_record::from_json(j, why);
}

std::vector<run_record> list_records(const fs::path& dir) {
  std::vector<run_record> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".state.json";
    if (file.size() > suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    bool ok = false;
    ll::json j = ll::json::parse(read_file(f, ok), nullptr, false);
    if (!ok || j.is_discarded()) continue;
    if (auto r = run_record::from_json(j, nullptr)) out.push_back(std::move(*r));
  }
  return out;
}

bool process_alive(long pid) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) == 0) {
    // a zombie (exited, not yet reaped) is not alive
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (stat && std::getline(stat, line)) {
      const auto close = line.rfind(')');
      if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z')
        return false;
    }
    return true;
  }
  return errno == EPERM;
}

event_log::~event_log() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> event_log::open(const fs::path& file, bool fresh) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return "cannot create " + file.parent_path().string() + ": " + ec.message();
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (fresh ? O_TRUNC : 0),
               0644);
  if (fd_ < 0) return "cannot open " + file.string() + ": " + std::strerror(errno);
  return std::nullopt;
}

void event_log::append(const ll::json& event) noexcept {
  if (fd_ < 0) return;
  try {
    line_ = event.dump(-1, ' ', false, ll::json::error_handler_t::replace);
    line_.push_back('\n');
    write_all(fd_, line_.data(), line_.size());
  } catch (...) {  // NOLINT(bugprone-empty-catch): journaling must not stop the run
  }
}

std::vector<ll::json> read_events(const fs::path& file, std::size_t tail) {
  std::ifstream in(file, std::ios::binary);
  std::deque<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    lines.push_back(std::move(line));
    if (tail != 0 && lines.size() > tail) lines.pop_front();
  }
  std::vector<ll::json> out;
  for (const auto& l : lines) {
    ll::json j = ll::json::parse(l, nullptr, false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

}  // namespace ll_loop
