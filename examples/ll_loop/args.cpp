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

parse_outcome parse_verb_args(const verb_spec& spec, const std::vector<std::string>& argv) {
  parsed_args out;
  out.verb = std::string(spec.name);
  out.usage = usage_line(spec);
  bool options_done = false;

  auto store = [&](const option_spec& o, std::string value) -> std::string {
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
  };

  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (options_done || word == "-" || word.empty() || word[0] != '-') {
      out.positionals.push_back(word);
      continue;
    }
    if (word == "--") {
      options_done = true;
      continue;
    }
    if (word == "-h" || word == "--help") {
      out.help = true;
      continue;
    }
    const option_spec* opt = nullptr;
    std::optional<std::string> inline_value;
    std::string shown = word;
    if (word.rfind("--", 0) == 0) {
      std::string_view body = std::string_view(word).substr(2);
      if (auto eq = body.find('='); eq != std::string_view::npos) {
        inline_value = std::string(body.substr(eq + 1));
        body = body.substr(0, eq);
        shown = fmt::format("--{}", body);
      }
      opt = find_long(spec, body);
      if (opt == nullptr) {
        std::vector<std::string_view> names;
        for (const auto& o : spec.options) names.push_back(o.long_name);
        names.emplace_back("help");
        std::string hint = closest_match(body, names);
        return {std::nullopt,
                hint.empty() ? fmt::format("unrecognized argument: {}", shown)
                             : fmt::format("unrecognized argument: {} (did you mean --{}?)",
                                           shown, hint)};
      }
    } else {
      // -x, -xVALUE
      opt = find_short(spec, word[1]);
      if (opt == nullptr) return {std::nullopt, fmt::format("unrecognized argument: {}", word)};
      shown = word.substr(0, 2);
      if (word.size() > 2) {
        if (opt->value_name.empty())
          return {std::nullopt, fmt::format("unrecognized argument: {}", word)};
        inline_value = word.substr(2);
      }
    }
    if (opt->value_name.empty()) {
      if (inline_value)
        return {std::nullopt, fmt::format("argument {}: ignored explicit argument '{}'", shown,
                                          *inline_value)};
      out.values[std::string(opt->long_name)].emplace_back();
      continue;
    }
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else {
      if (i + 1 >= argv.size())
        return {std::nullopt,
                fmt::format("argument {}: expected one argument ({})", shown, opt->value_name)};
      value = argv[++i];
    }
    if (auto err = store(*opt, std::move(value)); !err.empty()) return {std::nullopt, err};
  }

  if (out.help) return {std::move(out), {}};

  std::size_t required = 0;
  for (auto p : spec.positionals)
    if (!is_optional_positional(p)) ++required;
  if (out.positionals.size() < required) {
    std::string missing;
    for (std::size_t k = out.positionals.size(); k < spec.positionals.size(); ++k) {
      if (is_optional_positional(spec.positionals[k])) continue;
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", spec.positionals[k]);
    }
    return {std::nullopt, fmt::format("the following arguments are required: {}", missing)};
  }
  if (out.positionals.size() > spec.positionals.size()) {
    std::string extra;
    for (std::size_t k = spec.positionals.size(); k < out.positionals.size(); ++k)
      extra += fmt::format("{}{}", extra.empty() ? "" : " ", out.positionals[k]);
    return {std::nullopt, fmt::format("unrecognized arguments: {}", extra)};
  }
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
