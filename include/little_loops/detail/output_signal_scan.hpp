// little_loops — finds the first configured output signal in an action's stdout
// SPDX-License-Identifier: MIT
#pragma once

#include <little_loops/config.hpp>
#include <little_loops/output_signal.hpp>

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

LITTLE_LOOPS_NAMESPACE_BEGIN
namespace detail {

// A signal found in an output: its kind and its payload (a view into the output).
struct found_signal {
  signal_kind kind;
  std::string_view payload;
};

LITTLE_LOOPS_INLINE std::optional<found_signal> find_output_signal(
    std::string_view out, const std::vector<output_signal>& signals);

#if LITTLE_LOOPS_DETAIL_DEFINITIONS  // header-only, or building the compiled library
LITTLE_LOOPS_INLINE std::optional<found_signal> find_output_signal(
    std::string_view out, const std::vector<output_signal>& signals) {
  constexpr std::string_view ws = " \t\r\n\f\v";
  if (out.empty()) return std::nullopt;  // markers are never empty
  for (const auto& sig : signals) {
    if (sig.marker.empty()) continue;
    std::size_t from = 0;
    while (true) {
      const auto pos = out.find(sig.marker, from);
      if (pos == std::string_view::npos) break;
      std::string_view rest = out.substr(pos + sig.marker.size());
      const auto b = rest.find_first_not_of(ws);
      std::string_view payload;
      if (b != std::string_view::npos) {
        rest.remove_prefix(b);
        payload = rest.substr(0, rest.find('\n'));
        const auto e = payload.find_last_not_of(ws);
        payload = payload.substr(0, e + 1);
      } else if (rest.find_first_not_of('\n') != std::string_view::npos) {
        // Only whitespace follows, but not only newlines (`MARKER: `, a CRLF line end): the
        // original's `MARKER\s*(.+)` still matches, with an empty (stripped) payload.
        return found_signal{sig.kind, payload};
      }
      if (!payload.empty() || !sig.payload_required) return found_signal{sig.kind, payload};
      from = pos + 1;
    }
  }
  return std::nullopt;
}
#endif  // LITTLE_LOOPS_DETAIL_DEFINITIONS

}  // namespace detail
LITTLE_LOOPS_NAMESPACE_END
