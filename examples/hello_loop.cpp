// little_loops — hello_loop: load a loop JSON file, validate it, print its states
// SPDX-License-Identifier: MIT
//
//   hello_loop examples/loops/hello.json
//
// Prints every diagnostic to stderr and exits 1 when the loop has errors; otherwise prints
// each state with its action and transitions to stdout.
#include <little_loops/fsm.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace ll = little_loops;

namespace {

void print_transitions(const ll::state_config& state) {
  if (state.next) fmt::print("    next -> {}\n", *state.next);
  if (state.route) {
    for (const auto& [verdict, target] : state.route->routes)
      fmt::print("    {} -> {}\n", verdict, target);
    if (state.route->error_target) fmt::print("    _error -> {}\n", *state.route->error_target);
    if (state.route->default_target) fmt::print("    _ -> {}\n", *state.route->default_target);
  }
  for (const auto& [verdict, target] : state.on) fmt::print("    {} -> {}\n", verdict, target);
  if (state.on_maintain) fmt::print("    (maintain) -> {}\n", *state.on_maintain);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} LOOP.json\n", argc > 0 ? argv[0] : "hello_loop");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    fmt::print(stderr, "{}: cannot open file\n", argv[1]);
    return 2;
  }
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};

  ll::diagnostics warnings;
  const auto loop = ll::load_loop_text(text, &warnings);
  if (!loop) {
    fmt::print(stderr, "{}: {}\n", argv[1], ll::to_string(loop.error()));
    for (const auto& d : loop.error().details) fmt::print(stderr, "  {} [{}]\n", d, d.code);
    return 1;
  }
  for (const auto& d : warnings) fmt::print(stderr, "{}: {} [{}]\n", argv[1], d, d.code);

  fmt::print("loop {}: {} state{}, initial \"{}\", at most {} iterations\n", loop->name,
             loop->states.size(), loop->states.size() == 1 ? "" : "s", loop->initial,
             loop->max_iterations);
  if (loop->description) fmt::print("  {}\n", *loop->description);
  for (const auto& [name, state] : loop->states) {
    if (state.terminal) {
      fmt::print("  {}: terminal{}\n", name, state.failure ? " (failure)" : "");
      continue;
    }
    fmt::print("  {}:", name);
    if (state.action) fmt::print(" action \"{}\"", *state.action);
    if (state.evaluate) fmt::print(" [evaluate: {}]", ll::to_string(state.evaluate->type));
    fmt::print("\n");
    print_transitions(state);
  }
  return 0;
}
