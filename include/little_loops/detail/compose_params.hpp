// little_loops — `parameters:` declarations, `with:` bindings and `${param.*}` folding
// SPDX-License-Identifier: MIT
#pragma once

// Part of compose.hpp. A parameter declaration (`type`, `required`, `default`,
// `description`, `values`) is checked where it is written: a loop's top-level
// `parameters:` and a fragment's. A fragment state's `with:` bindings are checked against
// its fragment's declarations, and every `${param.NAME}` in the expanded state is replaced
// by its binding at load, so nothing is looked up at run time and a name that nothing binds
// is a load error.

#include <little_loops/config.hpp>
#include <little_loops/error.hpp>
#include <little_loops/json.hpp>
#include <little_loops/detail/json_fields.hpp>
#include <little_loops/detail/strings.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

inline constexpr std::array<std::string_view, 6> parameter_types{"boolean", "enum",   "integer",
                                                                 "number",  "path",   "string"};
inline constexpr std::array<std::string_view, 5> parameter_keys{"type", "required", "default",
                                                                "description", "values"};

/// Names a host injects into every run: a fragment may declare them required without a
/// binding; `${param.NAME}` then reads the host's value.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 4> injected_parameters{{
    {"run_dir", "context.run_dir"},
    {"input_hash", "context.input_hash"},
    {"loop_name", "loop.name"},
    {"started_at", "loop.started_at"},
}};

/// Whether `names` holds `name`.
template <class Names>
bool is_one_of(const Names& names, std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
/// The keys of an object, sorted, comma-separated ("(none)" when there are none).
inline std::string sorted_keys(const json& object) {
  std::vector<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.push_back(it.key());
  std::sort(keys.begin(), keys.end());
  return keys.empty() ? std::string("(none)") : join_names(keys);
}

inline std::optional<std::string_view> injected_parameter(std::string_view name) {
  for (const auto& [key, target] : injected_parameters)
    if (key == name) return target;
  return std::nullopt;
}

/// Checks one declaration at `path`.
inline void check_parameter_spec(const json& spec, const std::string& path, diagnostics& out) {
  if (!expect_object(spec, path, out)) return;
  for (auto it = spec.begin(); it != spec.end(); ++it)
    if (!is_one_of(parameter_keys, it.key())) report_unknown_key(out, path, it.key(), parameter_keys);
  const auto type = spec.find("type");
  if (type == spec.end()) {
    report(out, path, "missing-key", "a parameter needs a 'type'");
  } else if (!type->is_string() || !is_one_of(parameter_types, type->get<std::string>())) {
    report(out, member_path(path, "type"), "invalid-value",
           fmt::format("Unknown parameter type {}. Must be one of: {}", type->dump(),
                       join_names(parameter_types)));
  } else if (*type == "enum") {
    const auto values = spec.find("values");
    if (values == spec.end() || !values->is_array() || values->empty())
      report(out, path, "invalid-value", "Parameter type 'enum' requires a 'values' list");
  }
  const auto required = spec.find("required");
  if (required != spec.end() && !required->is_boolean())
    report_type(out, member_path(path, "required"), "a boolean", *required);
  const auto dflt = spec.find("default");
  if (required != spec.end() && *required == true && dflt != spec.end() && !dflt->is_null())
    report(out, path, "invalid-value",
           "Parameter cannot be both 'required: true' and have a 'default' value");
}

/// Checks every declaration of a `parameters:` mapping at `path`.
inline void check_parameter_specs(const json& specs, const std::string& path, diagnostics& out) {
  if (!expect_object(specs, path, out)) return;
  for (auto it = specs.begin(); it != specs.end(); ++it)
    check_parameter_spec(it.value(), member_path(path, it.key()), out);
}

/// Whether a literal `value` fits the declared `spec` (a `path` is any string; an integer
/// is never a boolean).
inline bool parameter_value_fits(const json& spec, const json& value) {
  const std::string type = spec.value("type", std::string());
  if (type == "string" || type == "path") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "enum") {
    const json values = spec.value("values", json::array());
    return std::find(values.begin(), values.end(), value) != values.end();
  }
  return true;
}

/// Checks the `with:` bindings of a fragment state (or of a sub-loop state) against the
/// declarations of `owner` (`fragment 'x'`, `loop 'x'`) and returns the parameter values:
/// the bindings, then declared defaults for the rest. Without declarations every binding is
/// taken as written.
inline json bind_parameters(const json& specs, const json& bindings, std::string_view owner,
                            const std::string& with_path, diagnostics& out) {
  json values = bindings.is_object() ? bindings : json::object();
  if (!specs.is_object() || specs.empty()) return values;
  for (auto it = values.begin(); it != values.end(); ++it) {
    const auto spec = specs.find(it.key());
    if (spec == specs.end()) {
      report(out, member_path(with_path, it.key()), "unknown-parameter",
             fmt::format("'with.{}' is not a declared parameter of {}. Declared: {}",
                         it.key(), owner, sorted_keys(specs)));
      continue;
    }
    const json& v = it.value();
    const bool templated = v.is_string() && v.get_ref<const std::string&>().find("${") != std::string::npos;
    if (!templated && !parameter_value_fits(*spec, v))
      report(out, member_path(with_path, it.key()), "wrong-type",
             fmt::format("Parameter '{}': expected {}, got {}", it.key(),
                         spec->value("type", std::string()), describe_value(v)));
  }
  for (auto it = specs.begin(); it != specs.end(); ++it) {
    if (values.contains(it.key()) || !it.value().is_object()) continue;
    const auto dflt = it.value().find("default");
    if (dflt != it.value().end() && !dflt->is_null()) {
      values[it.key()] = *dflt;
    } else if (it.value().value("required", false) && !injected_parameter(it.key())) {
      report(out, with_path, "missing-parameter",
             fmt::format("Required parameter '{}' of {} is not bound in 'with'",
                         it.key(), owner));
      values[it.key()] = nullptr;  // reported once: its `${param.*}` folds to nothing
    }
  }
  return values;
}

/// A literal value as template text: formatted as templates format values, `${` escaped.
inline std::string literal_template_text(const json& value) {
  std::string text = value.is_string() ? value.get<std::string>()
                     : value.is_null() ? std::string()
                                       : value.dump();
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') out += '$';
    out += text[i];
  }
  return out;
}

/// The value at dotted `path` (keys, or indexes of lists) inside `value`, or null.
inline const json* member_at(const json& value, std::string_view path) {
  const json* at = &value;
  while (at != nullptr) {
    const auto dot = path.find('.');
    const std::string key(path.substr(0, dot));
    if (at->is_object()) {
      const auto it = at->find(key);
      at = it == at->end() ? nullptr : &*it;
    } else {
      const bool index = at->is_array() && !key.empty() && key.size() < 10 &&
                         key.find_first_not_of("0123456789") == std::string::npos;
      at = index && std::stoul(key) < at->size() ? &(*at)[std::stoul(key)] : nullptr;
    }
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return at;
}

/// The replacement of one `${param.EXPR}` (EXPR = `name`, then an optional `.path` and
/// suffixes such as `:default=` or `?`), or the reason it cannot be folded.
inline expected<std::string, std::string> fold_parameter(std::string_view expr, const json& values) {
  const auto name_end = expr.find_first_of(".[:?");
  const std::string name(expr.substr(0, name_end));
  const std::string_view rest = name_end == std::string_view::npos ? "" : expr.substr(name_end);
  const auto bound = values.find(name);
  if (bound == values.end()) {
    if (const auto target = injected_parameter(name)) return fmt::format("${{{}{}}}", *target, rest);
    return unexpected(fmt::format("${{param.{}}}: parameter '{}' is neither bound in 'with' nor "
                                  "declared with a default",
                                  expr, name));
  }
  if (rest.empty()) return bound->is_string() ? bound->get<std::string>() : literal_template_text(*bound);
  // A path into a literal mapping or list is looked up now.
  if (!bound->is_string() && rest.front() == '.' && rest.find_first_of(":?") == std::string_view::npos) {
    if (const json* at = member_at(*bound, rest.substr(1))) return literal_template_text(*at);
    return unexpected(fmt::format("${{param.{}}}: no '{}' in the bound value", expr, rest.substr(1)));
  }
  // A binding that is one variable reference takes the path and suffixes on.
  if (bound->is_string()) {
    const std::string& text = bound->get_ref<const std::string&>();
    if (text.starts_with("${") && text.ends_with("}") && text.find('}') == text.size() - 1 &&
        text.find_first_of(":?", 2) == std::string::npos)
      return fmt::format("{}{}}}", text.substr(0, text.size() - 1), rest);
  }
  return unexpected(fmt::format("${{param.{}}}: '{}' applies only to a parameter bound to one "
                                "${{...}} reference",
                                expr, rest));
}

/// `text` with every `${param.*}` replaced (see fold_parameter); `$${` is kept as written.
inline expected<std::string, std::string> fold_parameters(std::string_view text, const json& values) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "$${") == 0) {
      out += "$${";
      i += 3;
      continue;
    }
    const std::size_t close = text.compare(i, 2, "${") == 0 ? text.find('}', i + 2) : text.npos;
    if (close == text.npos || text.compare(i + 2, 6, "param.") != 0) {
      out += text[i++];
      continue;
    }
    auto folded = fold_parameter(text.substr(i + 8, close - i - 8), values);
    if (!folded) return unexpected(std::move(folded.error()));
    out += *folded;
    i = close + 1;
  }
  return out;
}

/// Folds `${param.*}` in every string of `value` (keys stay as written); reports at the
/// path of each string that cannot be folded.
inline void fold_parameters_in(json& value, const json& values, const std::string& path,
                               diagnostics& out) {
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text.find("${param.") == std::string::npos) return;
    if (auto folded = fold_parameters(text, values))
      value = std::move(*folded);
    else
      report(out, path, "unbound-parameter", std::move(folded.error()));
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it)
      fold_parameters_in(it.value(), values, member_path(path, it.key()), out);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      fold_parameters_in(value[i], values, index_path(path, i), out);
  }
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
