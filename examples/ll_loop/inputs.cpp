// little_loops — ll-loop: positional input, required inputs and host-injected context
// SPDX-License-Identifier: MIT
#include "inputs.hpp"

#include "display.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <system_error>
#include <vector>

namespace ll = little_loops;
namespace fs = std::filesystem;

namespace ll_loop {

std::vector<std::string> apply_positional_input(ll::fsm_loop& loop, const std::string& input,
                                                const ll::json& overrides) {
  const ll::json parsed = ll::json::parse(input, nullptr, false);
  std::vector<std::string> dropped;
  bool matched = false;
  if (!parsed.is_discarded() && parsed.is_object()) {
    for (auto it = parsed.begin(); it != parsed.end(); ++it) {
      if (!loop.context.contains(it.key())) {
        dropped.push_back(it.key());
        continue;
      }
      matched = true;
      if (!overrides.contains(it.key())) loop.context[it.key()] = it.value();
    }
  }
  if (matched) return dropped;
  if (!overrides.contains(loop.input_key)) loop.context[loop.input_key] = input;
  return {};
}

void warn_dropped_input_keys(const std::vector<std::string>& dropped) {
  if (!dropped.empty())
    say_warning(fmt::format("input keys not in the loop's context were ignored: {}",
                            fmt::join(dropped, ", ")));
}

bool check_required_inputs(const ll::fsm_loop& loop, std::string_view verb, std::string_view shown_name) {
  for (const auto& key : loop.required_inputs) {
    const auto it = loop.context.find(key);
    const bool missing = it == loop.context.end() || it->is_null() ||
                         (it->is_boolean() && !it->get<bool>()) ||
                         (it->is_number() && it->get<double>() == 0) ||
                         (it->is_string() && it->get_ref<const std::string&>().empty()) ||
                         (it->is_structured() && it->empty());
    if (!missing) continue;
    say_error(fmt::format("loop '{}' requires input '{}' but none was provided. Pass it via: "
                          "ll-loop {} {} <value>",
                          loop.name, key, verb, shown_name));
    return false;
  }
  return true;
}

ll::json injected_context(const ll::fsm_loop& loop, const std::string& run_dir) {
  ll::json out = ll::json::object();
  if (!run_dir.empty()) out["run_dir"] = run_dir;
  if (const auto it = loop.context.find("input"); it != loop.context.end() && it->is_string())
    out["input_hash"] = sha256_hex(it->get_ref<const std::string&>()).substr(0, 12);
  out["max_steps"] = loop.max_iterations;
  if (loop.max_passes) out["max_iterations"] = *loop.max_passes;
  return out;
}

std::string make_run_dir(const ll::fsm_loop& loop, bool simulate) {
  const fs::path runs = fs::absolute(fs::path(".loops") / "runs");
  std::string base = loop.name + "-simulate";
  if (!simulate) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    std::array<char, 32> stamp{};
    std::strftime(stamp.data(), stamp.size(), "%Y%m%dT%H%M%S", &local);
    base = loop.name + "-" + stamp.data();
  }
  std::error_code ec;
  fs::create_directories(runs, ec);
  fs::path dir = runs / base;
  for (int n = 2; !simulate && fs::exists(dir, ec); ++n) dir = runs / fmt::format("{}-{}", base, n);
  fs::create_directories(dir, ec);
  if (ec) {
    say_warning(fmt::format("cannot create the run directory {}: {}", dir.string(), ec.message()));
    return {};
  }
  return dir.string() + "/";
}

namespace {

constexpr std::array<std::uint32_t, 64> sha256_k{
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void sha256_block(std::array<std::uint32_t, 8>& h, const unsigned char* block) {
  std::array<std::uint32_t, 64> w{};
  for (int i = 0; i < 16; ++i)
    w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
           (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::array<std::uint32_t, 8> v = h;
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
    const std::uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
    const std::uint32_t t1 = v[7] + s1 + ch + sha256_k[i] + w[i];
    const std::uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
    const std::uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
    v = {t1 + s0 + maj, v[0], v[1], v[2], v[3] + t1, v[4], v[5], v[6]};
  }
  for (int i = 0; i < 8; ++i) h[i] += v[i];
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  std::array<std::uint32_t, 8> h{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::vector<unsigned char> msg(data.begin(), data.end());
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  msg.push_back(0x80);
  while (msg.size() % 64 != 56) msg.push_back(0);
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<unsigned char>(bits >> (8 * i)));
  for (std::size_t off = 0; off < msg.size(); off += 64) sha256_block(h, msg.data() + off);
  std::string out;
  for (const std::uint32_t word : h) out += fmt::format("{:08x}", word);
  return out;
}

}  // namespace ll_loop
