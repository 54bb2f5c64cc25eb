// little_loops — ll-loop: a small command-line parser with per-verb help
// SPDX-License-Identifier: MIT
#include "args.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace ll_loop {

std::optional<std::string> parsed_args::value(std::string_view name) const {
  auto it = values.find(name);
  if (it == values.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> parsed_args::all(std::string_view name) const {
  auto it = values.find(name);
  if (it == values.end()) return {};
  return it->second;
}

std::string parsed_args::positional(std::size_t i) const {
  return i < positionals.size() ? positionals[i] : std::string{};
}

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

const option_spec* find_long(const verb_spec& spec, std::string_view name) {
  for (const auto& o : spec.options)
    if (o.long_name == name) return &o;
  return nullptr;
}

const option_spec* find_short(const verb_spec& spec, char c) {
  for (const auto& o : spec.options)
    if (o.short_name != 0 && o.short_name == c) return &o;
  return nullptr;
}

bool is_optional_positional(std::string_view p) { return !p.empty() && p.front() == '['; }

}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (auto c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(c);
    }
  }
  if (best.empty() && word.size() >= 2) {
    for (auto c : candidates)
      if (c.substr(0, word.size()) == word) return std::string(c);
  }
  return best;
}

std::optional<long long> parse_count(std::string_view text) {
  long long v = 0;
  if (text.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

namespace {

/// An option word resolved against a verb: the option, a value given in the same word
/// (`--name=VALUE`, `-xVALUE`) and the spelling error messages show; or a usage error.
struct option_word {
  const option_spec* option = nullptr;
  std::optional<std::string> inline_value;
  std::string shown;
  std::string error;
};

option_word resolve_long_option(const verb_spec& spec, const std::string& word) {
  option_word out;
  out.shown = word;
  std::string_view body = std::string_view(word).substr(2);
  if (auto eq = body.find('='); eq != std::string_view::npos) {
    out.inline_value = std::string(body.substr(eq + 1));
    body = body.substr(0, eq);
    out.shown = fmt::format("--{}", body);
  }
  out.option = find_long(spec, body);
  if (out.option != nullptr) return out;
  std::vector<std::string_view> names;
  for (const auto& o : spec.options) names.push_back(o.long_name);
  names.emplace_back("help");
  const std::string hint = closest_match(body, names);
  out.error = hint.empty() ? fmt::format("unrecognized argument: {}", out.shown)
                           : fmt::format("unrecognized argument: {} (did you mean --{}?)",
                                         out.shown, hint);
  return out;
}

/// `-x` or `-xVALUE`.
option_word resolve_short_option(const verb_spec& spec, const std::string& word) {
  option_word out;
  out.option = find_short(spec, word[1]);
  if (out.option == nullptr) {
    out.error = fmt::format("unrecognized argument: {}", word);
    return out;
  }
  out.shown = word.substr(0, 2);
  if (word.size() > 2) {
    if (out.option->value_name.empty()) {
      out.error = fmt::format("unrecognized argument: {}", word);
      return out;
    }
    out.inline_value = word.substr(2);
  }
  return out;
}

/// Records `value` for `o` (replacing an earlier one unless `o` is repeatable); returns a
/// usage error when `o` has choices and `value` is not one of them, else "".
std::string store_value(parsed_args& out, const option_spec& o, std::string value) {
  if (!o.choices.empty() &&
      std::find(o.choices.begin(), o.choices.end(), value) == o.choices.end()) {
    std::string list;
    for (auto c : o.choices) list += fmt::format("{}'{}'", list.empty() ? "" : ", ", c);
    return fmt::format("argument --{}: invalid choice: '{}' (choose from {})", o.long_name,
                       value, list);
  }
  auto& slot = out.values[std::string(o.long_name)];
  if (!o.repeatable) slot.clear();
  slot.push_back(std::move(value));
  return {};
}

/// Takes the option word `argv[i]` (and its value, advancing `i` past a separate value word)
/// into `out`; returns a usage error or "".
std::string take_option(const verb_spec& spec, const std::vector<std::string>& argv,
                        std::size_t& i, parsed_args& out) {
  const std::string& word = argv[i];
  option_word w = word.rfind("--", 0) == 0 ? resolve_long_option(spec, word)
                                           : resolve_short_option(spec, word);
  if (!w.error.empty()) return w.error;
  const option_spec& opt = *w.option;
  if (opt.value_name.empty()) {
    if (w.inline_value)
      return fmt::format("argument {}: ignored explicit argument '{}'", w.shown, *w.inline_value);
    out.values[std::string(opt.long_name)].emplace_back();
    return {};
  }
  if (w.inline_value) return store_value(out, opt, std::move(*w.inline_value));
  if (i + 1 >= argv.size())
    return fmt::format("argument {}: expected one argument ({})", w.shown, opt.value_name);
  return store_value(out, opt, argv[++i]);
}

/// The usage error for too few or too many positionals, or "".
std::string check_positionals(const verb_spec& spec, const std::vector<std::string>& given) {
  std::size_t required = 0;
  for (auto p : spec.positionals)
    if (!is_optional_positional(p)) ++required;
  if (given.size() < required) {
    std::string missing;
    for (std::size_t k = given.size(); k < spec.positionals.size(); ++k) {
      if (is_optional_positional(spec.positionals[k])) continue;
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", spec.positionals[k]);
    }
    return fmt::format("the following arguments are required: {}", missing);
  }
  if (given.size() > spec.positionals.size()) {
    std::string extra;
    for (std::size_t k = spec.positionals.size(); k < given.size(); ++k)
      extra += fmt::format("{}{}", extra.empty() ? "" : " ", given[k]);
    return fmt::format("unrecognized arguments: {}", extra);
  }
  return {};
}

}  // namespace

parse_outcome parse_verb_args(const verb_spec& spec, const std::vector<std::string>& argv) {
  parsed_args out;
  out.verb = std::string(spec.name);
  out.usage = usage_line(spec);
  bool options_done = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (options_done || word == "-" || word.empty() || word[0] != '-') {
      out.positionals.push_back(word);
    } else if (word == "--") {
      options_done = true;
    } else if (word == "-h" || word == "--help") {
      out.help = true;
    } else if (auto err = take_option(spec, argv, i, out); !err.empty()) {
      return {std::nullopt, std::move(err)};
    }
  }
  if (out.help) return {std::move(out), {}};
  if (auto err = check_positionals(spec, out.positionals); !err.empty())
    return {std::nullopt, std::move(err)};
  return {std::move(out), {}};
}

void print_usage_line(const parsed_args& args) {
  if (!args.usage.empty()) std::fprintf(stderr, "%s\n", args.usage.c_str());
}

std::string usage_line(const verb_spec& spec) {
  std::string line = fmt::format("usage: ll-loop {}", spec.name);
  for (auto p : spec.positionals) line += fmt::format(" {}", p);
  for (const auto& o : spec.options) {
    std::string body = fmt::format("--{}", o.long_name);
    if (!o.value_name.empty()) body += fmt::format(" {}", o.value_name);
    line += fmt::format(" [{}]{}", body, o.repeatable ? "..." : "");
  }
  return line;
}

std::string verb_help(const verb_spec& spec) {
  std::string text = fmt::format("{}\n\n{}\n", usage_line(spec), spec.summary);
  if (!spec.details.empty()) text += fmt::format("\n{}\n", spec.details);
  text += "\noptions:\n";
  std::vector<std::pair<std::string, std::string>> rows;
  rows.emplace_back("-h, --help", "show this help message and exit");
  for (const auto& o : spec.options) {
    std::string left = o.short_name != 0 ? fmt::format("-{}, --{}", o.short_name, o.long_name)
                                         : fmt::format("--{}", o.long_name);
    if (!o.value_name.empty()) left += fmt::format(" {}", o.value_name);
    std::string right(o.help);
    if (!o.choices.empty()) {
      std::string list;
      for (auto c : o.choices) list += fmt::format("{}{}", list.empty() ? "" : "|", c);
      right += fmt::format(" ({})", list);
    }
    rows.emplace_back(std::move(left), std::move(right));
  }
  std::size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.first.size());
  for (const auto& r : rows) text += fmt::format("  {:<{}}  {}\n", r.first, width, r.second);
  return text;
}

std::optional<std::vector<std::string>> split_command_words(std::string_view text, std::string& error) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // a word has started (possibly empty: '' is an empty argument)
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 == text.size()) {
        error = "trailing backslash";
        return std::nullopt;
      }
      const char next = text[++i];
      if (next != '\n') word += next;  // backslash-newline joins lines
    } else if (c == '\'') {
      const auto end = text.find('\'', i + 1);
      if (end == std::string_view::npos) {
        error = "unterminated single quote";
        return std::nullopt;
      }
      word.append(text.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      bool closed = false;
      for (++i; i < text.size(); ++i) {
        const char d = text[i];
        if (d == '"') {
          closed = true;
          break;
        }
        if (d == '\\' && i + 1 < text.size()) {
          const char next = text[i + 1];
          if (next == '"' || next == '\\' || next == '$' || next == '`' || next == '\n') {
            ++i;
            if (next != '\n') word += next;
            continue;
          }
        }
        word += d;
      }
      if (!closed) {
        error = "unterminated double quote";
        return std::nullopt;
      }
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

}  // namespace ll_loop
