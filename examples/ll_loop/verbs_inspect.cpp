// little_loops — ll-loop: validate, compile, show
// SPDX-License-Identifier: MIT
#include "display.hpp"
#include "loading.hpp"
#include "verbs.hpp"

#include <little_loops/interpolation.hpp>
#include <little_loops/json_schema.hpp>
#include <little_loops/paradigms.hpp>
#include <little_loops/render.hpp>
#include <little_loops/validation.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <fstream>

namespace ll_loop {

namespace {

// Each diagnostic as JSON, with `file`, `line` and `column` where its path is placed.
ll::json diagnostics_json(const ll::diagnostics& list, const ll::source_map* positions,
                          const std::vector<std::optional<ll::source_location>>* located = nullptr) {
  ll::json out = ll::json::array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& d = list[i];
    ll::json item = {{"level", std::string(ll::to_string(d.level))},
                     {"path", d.path},
                     {"message", d.message},
                     {"code", d.code}};
    std::optional<ll::source_location> at;
    if (located != nullptr && i < located->size()) at = (*located)[i];
    else if (positions != nullptr) at = positions->locate(d.path);
    if (at) {
      item["file"] = at->file;
      item["line"] = at->line;
      item["column"] = at->column;
    }
    out.push_back(std::move(item));
  }
  return out;
}

void print_warnings(const ll::diagnostics& list) {
  for (const auto& d : list)
    if (d.level == ll::severity::warning)
      say_warning(d.path.empty() ? d.message : fmt::format("{}: {}", d.path, d.message));
}

std::string state_list(const ll::fsm_loop& loop) {
  std::string out;
  for (const auto& [name, state] : loop.states) out += fmt::format("{}{}", out.empty() ? "" : ", ", name);
  return out;
}

bool write_text_file(const fs::path& path, const std::string& text, std::string& why) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    why = "cannot open for writing";
    return false;
  }
  out << text;
  out.flush();
  if (!out) {
    why = "write failed";
    return false;
  }
  return true;
}

/// The dialect, metadata, inputs and lint flags of `show`, one line each when set.
std::string show_metadata(const ll::fsm_loop& loop, const style& s) {
  std::string text = fmt::format("{} {}{}\n", s.bold("Dialect:"), ll::to_string(ll::dialect_of(loop)),
                                 loop.dialect ? "" : " (inferred)");
  if (!loop.category.empty()) text += fmt::format("{} {}\n", s.bold("Category:"), loop.category);
  if (loop.visibility) text += fmt::format("{} {}\n", s.bold("Visibility:"), *loop.visibility);
  if (!loop.labels.empty())
    text += fmt::format("{} {}\n", s.bold("Labels:"), fmt::join(loop.labels, ", "));
  if (loop.input_key != "input" || !loop.required_inputs.empty())
    text += fmt::format("{} {}{}\n", s.bold("Input:"), loop.input_key,
                        loop.required_inputs.empty()
                            ? std::string()
                            : fmt::format(" (required: {})", fmt::join(loop.required_inputs, ", ")));
  if (loop.singleton) text += fmt::format("{} yes\n", s.bold("Singleton:"));
  std::vector<std::string> flags;
  for (const auto& [flag, on] : loop.lint_flags) flags.push_back(fmt::format("{}={}", flag, on));
  if (!flags.empty()) text += fmt::format("{} {}\n", s.bold("Lint flags:"), fmt::join(flags, ", "));
  return text;
}

/// One line per state whose action goes to the prompt command (an LLM agent) instead of
/// the shell: `fix: slash command /ll:fix`. A templated action without `action_type` is
/// decided once rendered: rendered with the loop's own context when it reads nothing else,
/// else marked as one that may be a slash command.
std::vector<std::string> llm_action_notes(const ll::fsm_loop& loop) {
  std::vector<std::string> notes;
  for (const auto& [name, state] : loop.states) {
    if (!state.action || state.action->empty()) continue;
    const std::string shown = one_line(*state.action, 60);
    if (ll::runs_prompt_action(state)) {
      const bool slash = state.action_type ? *state.action_type == ll::action_kind::slash_command
                                           : true;
      notes.push_back(fmt::format("{}: {} {}", name, slash ? "slash command" : "prompt", shown));
      continue;
    }
    const bool may_render_slash = !state.action_type && (state.action->starts_with("${") ||
                                                         (state.action->starts_with("/") &&
                                                          state.action->find("${") != std::string::npos));
    if (!may_render_slash) continue;
    ll::interpolation_context ctx;
    ctx.context = &loop.context;
    const auto rendered = ll::interpolate(*state.action, ctx);
    if (!rendered)
      notes.push_back(fmt::format("{}: slash command if it renders to /name or /ns:name: {}", name, shown));
    else if (ll::is_slash_command_text(*rendered))
      notes.push_back(fmt::format("{}: slash command {} (from {})", name, one_line(*rendered, 60), shown));
  }
  return notes;
}

}  // namespace

int verb_validate(const parsed_args& args) {
  const std::string name = args.positional(0);
  const bool as_json = args.has("json");
  auto loaded = load_loop(name);
  // The Python original announces the compile before it happens, so it precedes a
  // compile error too; the path is the one typed (or resolved from a name), not absolute.
  const auto announce = [](const std::string& paradigm, const fs::path& shown) {
    if (!paradigm.empty()) say(fmt::format("Compiling paradigm file for validation: {}", shown.string()));
  };
  if (!loaded) {
    const load_failure& f = loaded.error();
    if (as_json) {
      ll::json out = {{"valid", false},
                      {"loop", name},
                      {"error", f.message},
                      {"diagnostics", diagnostics_json(f.diagnostics, nullptr, &f.locations)}};
      fmt::print("{}\n", json_text(out, 2));
      if (f.what == load_failure::kind::not_found) say_error(f.message);
      return exit_failed;
    }
    announce(f.paradigm, f.path);
    report_load_failure(f, name, failure_wording::is_invalid);
    return exit_failed;
  }
  const ll::fsm_loop& loop = loaded->loop();
  if (as_json) {
    ll::json states = ll::json::array();
    for (const auto& [state_name, state] : loop.states) states.push_back(state_name);
    ll::json out = {{"valid", true},
                    {"loop", name},
                    {"name", loop.name},
                    {"path", loaded->path.string()},
                    {"paradigm", loaded->paradigm.empty() ? "fsm" : loaded->paradigm},
                    {"initial", loop.initial},
                    {"states", states},
                    {"max_iterations", loop.max_iterations},
                    {"dialect", ll::to_string(ll::dialect_of(loop))},
                    {"dialect_inferred", !loop.dialect.has_value()},
                    {"llm_actions", llm_action_notes(loop)},
                    {"policies", ll::render_policies_json(loop)},
                    {"guards", ll::render_guards_json(loop)},
                    {"host", ll::render_host_settings_json(loop)},
                    {"diagnostics", diagnostics_json(loaded->diagnostics, &loaded->positions)}};
    out.update(ll::render_plugin_states_json(loop));  // throttle (and learning states)
    fmt::print("{}\n", json_text(out, 2));
    return exit_ok;
  }
  announce(loaded->paradigm, loaded->shown_path);
  const style s = style::for_stream(stdout);
  say(fmt::format("{} {} is valid", s.green("\u2713"), name));
  say(fmt::format("  States: {}", state_list(loop)));
  say(fmt::format("  Initial: {}", loop.initial));
  say(fmt::format("  Dialect: {}{}", ll::to_string(ll::dialect_of(loop)),
                  loop.dialect ? "" : " (inferred)"));
  say(fmt::format("  Max iterations: {}", loop.max_iterations));
  // Every action that an LLM agent runs (the prompt command), so that none runs unnoticed.
  for (const auto& note : llm_action_notes(loop))
    say(fmt::format("  {} LLM action (prompt command; --no-llm skips it): {}", s.yellow("\u2691"), note));
  // Warnings follow, on stdout, as the original's validate prints them.
  for (const auto& d : loaded->diagnostics)
    if (d.level == ll::severity::warning)
      say(fmt::format("  {} [WARNING] {}", s.yellow("\u26a0"),
                      d.path.empty() ? d.message : fmt::format("{}: {}", d.path, d.message)));
  return exit_ok;
}

int verb_compile(const parsed_args& args) {
  const fs::path input{args.positional(0)};
  if (const auto o = args.value("output"); o && o->empty()) {  // not a silent default name
    print_usage_line(args);
    std::fprintf(stderr, "ll-loop compile: error: argument -o/--output: expected a file name or '-'\n");
    return exit_usage;
  }
  std::error_code ec;
  if (!fs::is_regular_file(input, ec)) {
    const std::string what = non_regular_kind(input);
    say_error(what.empty() ? fmt::format("Input file not found: {}", input.string())
                           : fmt::format("Input is {}, not a file: {}", what, input.string()));
    return exit_failed;
  }
  ll::source_map positions;
  auto doc = ll::read_document(input, &positions);
  if (!doc) {
    // The original's words: a syntax error is a "YAML parse error" (its yaml.safe_load reads
    // JSON too); anything else a "Compilation error". The message is file:line:col: ….
    const bool syntax = doc.error().code == ll::errc::parse_error;
    say_error(fmt::format("{}: {}", syntax ? "YAML parse error" : "Compilation error",
                          doc.error().message));
    return exit_failed;
  }
  ll::diagnostics warnings;
  auto loop = ll::compile_paradigm(*doc, &warnings);
  if (!loop) {
    const ll::error e = ll::annotate_error(std::move(loop.error()), positions);
    say_error(fmt::format("Compilation error: {}", e.message));  // file:line:col: …
    // each diagnostic with its position, unless the message already is the only one
    if (!(e.details.size() == 1 && !e.details[0].message.empty() &&
          e.message.find(e.details[0].message) != std::string::npos))
      for (const auto& d : e.details)
        std::fprintf(stderr, "  %s\n", ll::format_diagnostic(d, &positions).c_str());
    return exit_failed;
  }
  print_warnings(warnings);
  ll::json out;
  ll::to_json(out, *loop);

  std::string target = args.value("output").value_or("");
  if (target.empty()) {
    // foo.yaml → foo.fsm.yaml, foo.json → foo.fsm.json (the Python original's naming)
    fs::path p = input;
    const std::string ext = p.extension().string();
    p.replace_extension();
    target = p.string() + (ext == ".json" ? ".fsm.json" : ".fsm.yaml");
  }
  const bool json_out = target != "-" && fs::path(target).extension() == ".json";
  const std::string text = json_out ? json_text(out, 2) + "\n" : to_yaml_text(out);
  if (target == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return exit_ok;
  }
  std::string why;
  if (!write_text_file(target, text, why)) {
    say_error(fmt::format("cannot write {}: {}", target, why));
    return exit_failed;
  }
  const style s = style::for_stream(stdout);
  say(fmt::format("{} Compiled to: {}", s.green("\u2713"), target));
  return exit_ok;
}

int verb_show(const parsed_args& args) {
  const std::string name = args.positional(0);
  auto loaded = load_loop(name);
  if (!loaded) {
    report_load_failure(loaded.error(), name);
    return exit_failed;
  }
  const ll::fsm_loop& loop = loaded->loop();
  const std::string format = args.value("format").value_or("text");
  if (format == "dot") {
    fmt::print("{}", ll::render_dot(loop));
  } else if (format == "mermaid") {
    fmt::print("{}", ll::render_mermaid(loop));
  } else if (format == "json") {
    ll::json out;
    ll::to_json(out, loop);
    fmt::print("{}\n", json_text(out, 2));
  } else {
    const style s = style::for_stream(stdout);
    std::string text = fmt::format("{} {}\n", s.bold("Loop:"), loop.name);
    if (loop.description) text += fmt::format("{} {}\n", s.bold("Description:"), *loop.description);
    text += fmt::format("{} {}\n", s.bold("Source:"), loaded->path.string());
    if (!loaded->paradigm.empty())
      text += fmt::format("{} {}\n", s.bold("Paradigm:"), loaded->paradigm);
    text += show_metadata(loop, s);
    if (loop.context.is_object() && !loop.context.empty()) {
      text += fmt::format("{}\n", s.bold("Context:"));
      for (auto it = loop.context.begin(); it != loop.context.end(); ++it)
        text += fmt::format("  {} = {}\n", it.key(),
                            it.value().is_string() ? it.value().get<std::string>()
                                                   : json_text(it.value()));
    }
    // What running it claims and does on a handoff (see `run --help`): the scope as written
    // (templates unresolved) or the whole working directory.
    text += fmt::format("{} {}\n", s.bold("Scope:"),
                        loop.scope.empty() ? std::string(". (default: the working directory)")
                                           : fmt::format("{}", fmt::join(loop.scope, ", ")));
    if (loop.on_handoff != ll::handoff_policy::pause)
      text += fmt::format("{} {}\n", s.bold("On handoff:"), ll::to_string(loop.on_handoff));
    if (const auto notes = llm_action_notes(loop); !notes.empty()) {
      text += fmt::format("{}\n", s.bold("LLM actions (run by the prompt command; --no-llm skips them):"));
      for (const auto& note : notes) text += fmt::format("  {}\n", note);
    }
    const std::string preview = ll::render_preview(loop);
    text += "\n" + preview;
    if (!preview.empty() && preview.back() != '\n') text += '\n';
    text += fmt::format("\n{} ll-loop run {}\n", s.bold("Run:"), name);
    // The loop's own text (description, context, actions) shown, not obeyed, by the terminal.
    const std::string safe = terminal_safe(text, true, s.enabled);
    std::fwrite(safe.data(), 1, safe.size(), stdout);
  }
  return exit_ok;
}

int verb_schema(const parsed_args&) {
  fmt::print("{}\n", json_text(ll::loop_json_schema(), 2));
  return exit_ok;
}

}  // namespace ll_loop
