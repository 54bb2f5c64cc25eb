// little_loops — fuzz targets' memory invariant: the peak of live heap bytes while a target
// runs, bounded by a multiple of the input's size, so expansion bombs (an alias or a template
// that multiplies its input) are findings. Replaces the global operator new and delete:
// include it in exactly one translation unit of a program (the libFuzzer driver, the replay
// test).
// SPDX-License-Identifier: MIT
#pragma once

#include "fuzz_targets.hpp"

#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>

namespace little_loops_fuzz {

inline std::atomic<std::size_t> live_bytes{0};
inline std::atomic<std::size_t> peak_bytes{0};

inline void note_allocation(void* p) noexcept {
  if (p == nullptr) return;
  const std::size_t now = live_bytes.fetch_add(::malloc_usable_size(p), std::memory_order_relaxed) +
                          ::malloc_usable_size(p);
  std::size_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}
inline void note_release(void* p) noexcept {
  if (p != nullptr) live_bytes.fetch_sub(::malloc_usable_size(p), std::memory_order_relaxed);
}

/// The most heap a target may hold at once for an input of `n` bytes: 64 bytes per input
/// byte (a parsed document, its positions and its diagnostics), plus 256 MiB for the fixed
/// caps the loaders allow any input (a million values after alias expansion, 64 MiB of their
/// text). The alias bomb that expanded a 1 MiB file to 2.3 GB breaks it.
constexpr std::size_t memory_bound(std::size_t n) { return 64 * n + (std::size_t{256} << 20); }

/// Runs `t` on `input` and requires its peak heap to stay within memory_bound().
inline void run_within_memory(const target& t, std::string_view input) {
  const std::size_t before = live_bytes.load(std::memory_order_relaxed);
  peak_bytes.store(before, std::memory_order_relaxed);
  t.run(input);
  const std::size_t used = peak_bytes.load(std::memory_order_relaxed) - before;
  require(used <= memory_bound(input.size()),
          std::string(t.name) + ": peak heap " + std::to_string(used) + " bytes for an input of " +
              std::to_string(input.size()) + " bytes");
}

}  // namespace little_loops_fuzz

// NOLINTBEGIN(misc-new-delete-overloads): every form the program may call is replaced.
void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  little_loops_fuzz::note_allocation(p);
  return p;
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  void* p = std::malloc(n == 0 ? 1 : n);
  little_loops_fuzz::note_allocation(p);
  return p;
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return ::operator new(n, t); }
void* operator new(std::size_t n, std::align_val_t a) {
  const auto align = static_cast<std::size_t>(a);
  void* p = std::aligned_alloc(align, (n + align - 1) / align * align);
  if (p == nullptr) throw std::bad_alloc();
  little_loops_fuzz::note_allocation(p);
  return p;
}
void* operator new[](std::size_t n, std::align_val_t a) { return ::operator new(n, a); }
// Optimising GCC inlines this replacement into callers of operator new and then takes the
// free() below for a mismatched deallocation (-Wmismatched-new-delete); the pair is ours.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept {
  little_loops_fuzz::note_release(p);
  std::free(p);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
void operator delete[](void* p) noexcept { ::operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }
void operator delete(void* p, std::align_val_t) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::align_val_t) noexcept { ::operator delete(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { ::operator delete(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
// NOLINTEND(misc-new-delete-overloads)
