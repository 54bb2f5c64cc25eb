#!/usr/bin/env python3
"""Prints what one host translation unit costs to compile (never fails on a slow machine).

The host TU includes <little_loops/fsm.hpp>, loads a JSON loop and runs it; the reference TU
includes only <nlohmann/json.hpp> and parses a document. The host TU is compiled twice:
header-only (the default) and in compiled mode (-DLITTLE_LOOPS_COMPILED_LIB, as linking
little_loops::compiled sets it: the headers then declare the non-template code). Each is
compiled with `g++ -std=c++20 -O0 -c` (CXX overrides g++), alternately, --rounds times; the
medians of the CPU time (user + system of the compiler) and their ratio to the reference are
printed, then the one-time cost of the compiled library's source (src/little_loops.cpp).

With --check, the compiled mode is also checked, which can fail (not on time): the library's
source is compiled with -Wall -Wextra -Wpedantic -Werror and -Wmissing-declarations (a
function the library defines for the hosts without the declaration their headers keep), and
the compiled-mode host TU is linked against it and run. This costs one link and one run on
top of the measurement.

With --jobs N, N compilers run at once (each one's own CPU time is still what is measured,
from wait4; sharing the machine's caches makes it a little higher): CI uses 2.

    python3 tools/compile_cost.py [--rounds 3] [--include include] [--flag=-O2] [--check]
                                  [--jobs 2]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HOST = r'''#include <little_loops/fsm.hpp>
#include <cstdio>
namespace ll = little_loops;
int main() {
  auto loop = ll::load_loop_text(R"({"name": "pp", "initial": "ping", "max_iterations": 10,
    "states": {"ping": {"action": "echo ping", "on_success": "pong", "on_failure": "done"},
               "pong": {"action": "echo pong", "on_success": "ping", "on_failure": "done"},
               "done": {"terminal": true}}})");
  if (!loop) return 1;
  ll::scripted_runner runner;
  auto ex = ll::make_executor(*loop, runner);
  if (!ex) return 1;
  const auto& result = ex->run();
  std::printf("%s after %lld iterations\n", std::string(ll::to_string(result.terminated_by)).c_str(),
              static_cast<long long>(result.iterations));
}
'''

REFERENCE = r'''#include <nlohmann/json.hpp>
#include <cstdio>
int main() {
  auto doc = nlohmann::json::parse(R"({"name": "pp", "initial": "ping", "states": {}})");
  std::printf("%s\n", doc.dump().c_str());
}
'''


def compile_all(cxx, tasks, jobs):
    """Compiles each (key, source, flags, out) task, `jobs` at a time. Returns the CPU time
    (user + system of each compiler and its children, from wait4) by key, and the keys whose
    compile failed."""
    pending, running, seconds, failed = list(tasks), {}, {}, []
    while pending or running:
        while pending and len(running) < max(1, jobs):
            key, source, flags, out = pending.pop(0)
            proc = subprocess.Popen([cxx, "-std=c++20", "-O0", "-c", source, "-o", out] + flags)
            running[proc.pid] = (key, proc)
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        key, proc = running.pop(pid)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            failed.append(key)
        seconds[key] = usage.ru_utime + usage.ru_stime
    return seconds, failed


def check_compiled(cxx, host_object, library_object, tmp):
    """Links the compiled-mode host TU against the library and runs it; True when it runs."""
    exe = os.path.join(tmp, "host")
    link = subprocess.run([cxx, host_object, library_object, "-o", exe, "-lfmt", "-lre2", "-pthread"],
                          capture_output=True, text=True)
    if link.returncode != 0:
        print("compile cost: --check: the compiled-mode host TU does not link against the library:\n"
              + link.stderr, file=sys.stderr)
        return False
    run = subprocess.run([exe], capture_output=True, text=True)
    if run.returncode != 0 or "after" not in run.stdout:
        print(f"compile cost: --check: the linked host failed ({run.returncode}): {run.stdout}{run.stderr}",
              file=sys.stderr)
        return False
    print(f"compile cost: --check: the compiled-mode host links against the library and runs: "
          f"{run.stdout.strip()}")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--include", default=os.path.join(os.path.dirname(__file__), "..", "include"))
    parser.add_argument("--flag", action="append", default=[], help="extra compiler flag")
    parser.add_argument("--jobs", type=int, default=1,
                        help="compilers run at once (each one's own CPU time is measured; "
                             "1, the default, for the steadiest figures)")
    parser.add_argument("--check", action="store_true",
                        help="also build the library with -Werror -Wmissing-declarations, link the "
                             "compiled-mode host against it and run it (fails when that fails)")
    args = parser.parse_args()
    cxx = os.environ.get("CXX", "g++")
    flags = ["-I" + os.path.abspath(args.include)] + args.flag
    kinds = [("nlohmann-only TU", REFERENCE, []), ("host TU, header-only", HOST, []),
             ("host TU, compiled mode", HOST, ["-DLITTLE_LOOPS_COMPILED_LIB"])]
    library = os.path.join(os.path.abspath(args.include), "..", "src", "little_loops.cpp")
    lib_flags = flags + ["-DLITTLE_LOOPS_COMPILED_LIB", "-DLITTLE_LOOPS_BUILDING_LIB"]
    if args.check:
        missing = "-Wmissing-prototypes" if "clang" in cxx else "-Wmissing-declarations"
        lib_flags += ["-Wall", "-Wextra", "-Wpedantic", "-Werror", missing]
    with tempfile.TemporaryDirectory() as tmp:
        tasks = []
        if os.path.exists(library):  # the longest first: it overlaps the others with --jobs 2
            tasks.append(("library", library, lib_flags, os.path.join(tmp, "lib.o")))
        for index, (_, text, _) in enumerate(kinds):
            with open(os.path.join(tmp, f"tu{index}.cpp"), "w") as f:
                f.write(text)
        for round_ in range(args.rounds):  # the kinds alternate
            for index, (name, _, extra) in enumerate(kinds):
                path = os.path.join(tmp, f"tu{index}.cpp")
                tasks.append(((name, round_), path, flags + extra, f"{path}.{round_}.o"))
        seconds, failed = compile_all(cxx, tasks, args.jobs)
        if "library" in failed and args.check:
            print("compile cost: --check: the compiled library does not build", file=sys.stderr)
            return 1
        if failed:
            print(f"compile cost: these did not compile: {failed}", file=sys.stderr)
            return 1
        times = {name: [seconds[(name, r)] for r in range(args.rounds)] for name, _, _ in kinds}
        reference = statistics.median(times[kinds[0][0]])
        for name, _, _ in kinds:
            m = statistics.median(times[name])
            print(f"compile cost: {name}: {m:.2f} s CPU (median of {args.rounds}), "
                  f"{m / reference:.2f}x the nlohmann-only TU")
        if "library" not in seconds:
            return 0
        print(f"compile cost: the compiled library (built once): {seconds['library']:.2f} s CPU")
        host = os.path.join(tmp, "tu2.cpp.0.o")
        if args.check and not check_compiled(cxx, host, os.path.join(tmp, "lib.o"), tmp):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
