// little_loops — the fuzz targets (tests/fuzz/fuzz_targets.hpp) on every seed of their corpus,
// the inputs earlier fuzzing found, and deterministic mutations of them. In the CI's
// sanitizer build this is the fuzzing every commit gets; libFuzzer goes further
// (tests/fuzz/README.md).
// SPDX-License-Identifier: MIT
#include "../fuzz/alloc_meter.hpp"
#include "../fuzz/fuzz_targets.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

// A named namespace: the suite is a unity build with the YAML loader's tests.
namespace fuzz_replay {

namespace fs = std::filesystem;
namespace fz = little_loops_fuzz;

const fs::path fixtures = LITTLE_LOOPS_FIXTURES_DIR;
const fs::path corpus = fixtures.parent_path() / "fuzz" / "corpus";
const fs::path examples = fixtures.parent_path().parent_path() / "examples" / "loops";

/// The seed directories of a target (as tests/fuzz/README.md runs libFuzzer on them).
std::vector<fs::path> seed_dirs(std::string_view target) {
  std::vector<fs::path> dirs{corpus / std::string(target)};
  if (target == "loop_json" || target == "executor_resume") {
    dirs.push_back(fixtures / "core");
    dirs.push_back(fixtures / "adapters");
  } else if (target == "loop_yaml") {
    dirs.push_back(examples);
    dirs.push_back(fixtures / "adapters");
  } else if (target == "paradigm") {
    dirs.push_back(fixtures / "paradigms" / "specs");
  }
  return dirs;
}

std::vector<std::string> read_seeds(std::string_view target) {
  std::vector<fs::path> files;
  for (const auto& dir : seed_dirs(target)) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // the same order on every machine
  std::vector<std::string> seeds;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    seeds.push_back(text.str());
  }
  return seeds;
}

/// Bytes that open or break the structures the parsers read.
constexpr std::array<std::string_view, 24> tokens{
    "${", "}", "$${", ":shell", ":default=", "?", ".", "..", "[0]", "\"", "\\", "\\u00",
    "\\ud800", "{", "[", ",", ":", "\n", "\n  ", "- ", "null", "1e999", "-0", "\xff\xfe"};

/// One to four edits of `input` (byte flips, insertions, deletions, duplications, tokens, a
/// splice with another seed); deterministic for a given generator state.
std::string mutate(std::string input, const std::vector<std::string>& seeds, std::mt19937& rng) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = input.empty() ? 0 : rng() % (input.size() + 1);
    switch (rng() % 6) {
      case 0:
        if (!input.empty()) input[std::min(at, input.size() - 1)] ^= static_cast<char>(1U << (rng() % 8));
        break;
      case 1: input.insert(at, 1, static_cast<char>(rng() % 256)); break;
      case 2:
        if (at < input.size()) input.erase(at, 1 + rng() % std::min<std::size_t>(16, input.size() - at));
        break;
      case 3:
        if (at < input.size()) {
          const std::string piece = input.substr(at, 1 + rng() % 32);
          input.insert(rng() % (input.size() + 1), piece);
        }
        break;
      case 4: input.insert(at, tokens[rng() % tokens.size()]); break;
      default: {
        const std::string& other = seeds[rng() % seeds.size()];
        const std::size_t from = other.empty() ? 0 : rng() % other.size();
        input = input.substr(0, at) + other.substr(from);
        break;
      }
    }
  }
  return input;
}

std::string shown(std::string_view input) {
  std::string out;
  for (const char c : input) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out += c;
    } else {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

void replay(const fz::target& t, int mutations) {
  const std::vector<std::string> seeds = read_seeds(t.name);
  REQUIRE(seeds.size() >= 3);
  for (const auto& seed : seeds) {
    INFO(t.name, " seed: ", shown(seed));
    CHECK_NOTHROW(fz::run_within_memory(t, seed));
  }
  std::mt19937 rng(20261123);
  for (int i = 0; i < mutations; ++i) {
    const std::string input = mutate(seeds[rng() % seeds.size()], seeds, rng);
    INFO(t.name, " mutation ", i, ": ", shown(input));
    CHECK_NOTHROW(fz::run_within_memory(t, input));
  }
}

}  // namespace fuzz_replay

TEST_SUITE("fuzz replay") {
  TEST_CASE("every target keeps its invariants on its corpus and on mutations of it") {
    for (const auto& t : little_loops_fuzz::targets) {
      CAPTURE(t.name);
      fuzz_replay::replay(t, 1500);
    }
  }

  TEST_CASE("the invariants can fail: a broken input is reported") {
    CHECK_THROWS_AS(little_loops_fuzz::require(false, "x"), little_loops_fuzz::invariant_broken);
    // An input that makes a target hold more than memory_bound() of it: an expansion bomb.
    const little_loops_fuzz::target bomb{"bomb", [](std::string_view in) {
      std::vector<char> expanded;
      expanded.reserve(little_loops_fuzz::memory_bound(in.size()) + 1);
    }};
    CHECK_THROWS_AS(little_loops_fuzz::run_within_memory(bomb, "tiny"), little_loops_fuzz::invariant_broken);
    // Inputs earlier fuzzing turned into fixes keep their outcome.
    auto tpl = little_loops::compile_template("h${prev..}");
    REQUIRE_FALSE(tpl.has_value());
    CHECK(tpl.error().message == "invalid template \"h${prev..}\": empty path segment in ${prev..}");
  }
}
