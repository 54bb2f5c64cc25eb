#!/usr/bin/env python3
# little_loops — e2e: the progress display of `ll-loop run`: what it shows, and when
# SPDX-License-Identifier: MIT
"""The display is written out once per step, when the loop is about to wait: everything up to
`[i/N] state → action` is on the terminal before the action starts, the route line before a
backoff sleep, a state without an action before its evaluator runs."""
import os
import re
import subprocess
import threading

from harness import LL_LOOP, Workdir, base_env, expect, wait_for, write


def run_to_file(wd, loop, *args, env=None):
    """Runs `ll-loop run LOOP` with stdout in wd/out.txt; returns (exit code, stdout text)."""
    with open(wd / "out.txt", "w") as out:
        proc = subprocess.run([LL_LOOP, "run", str(loop), *args], cwd=wd, env=base_env(env),
                              stdout=out, stderr=subprocess.PIPE, text=True, timeout=30)
    return proc.returncode, (wd / "out.txt").read_text(), proc.stderr


def test_each_action_starts_with_its_own_line_already_shown():
    # Each action copies ll-loop's stdout as it is when the action runs.
    with Workdir() as wd:
        loop = write(wd / "seen.yaml", """\
name: seen
initial: a
states:
  a:
    action: cp out.txt seen_a.txt
    next: b
  b:
    action: cp out.txt seen_b.txt
    next: c
  c:
    terminal: true
""")
        code, out, err = run_to_file(wd, loop)
        expect(code == 0, f"exit {code}: {out}\n{err}")
        seen_a = (wd / "seen_a.txt").read_text()
        seen_b = (wd / "seen_b.txt").read_text()
        expect(seen_a.endswith("[1/50] a \u2192 cp out.txt seen_a.txt\n"),
               f"a's line is shown before a runs:\n{seen_a!r}")
        expect(re.search("\n       \u2713 done \\(\\d+ms\\)\n       \u2192 b\n"
                         "\\[2/50\\] b \u2192 cp out.txt seen_b.txt\n\\Z", seen_b),
               f"a's result, its route and b's line are shown before b runs:\n{seen_b!r}")
        expect(out.startswith(seen_b), f"nothing shown is rewritten:\n{out!r}")
        expect(re.search("\n       \u2192 c\n\nLoop completed: c \\(2 iterations, ", out),
               f"b's result, the route to the terminal and the summary follow:\n{out!r}")


def test_one_write_per_step():
    # A reader that waits in read() gets each write() as it comes (writes of a step are far
    # below PIPE_BUF, so a read never ends inside one). Before, a step took three writes:
    # `[i/N] s` (no newline), ` → true`, and `✓ done` + `→ next`.
    steps = 20
    with Workdir() as wd:
        text = ["name: chain", "initial: s0", "states:"]
        for i in range(steps):
            text += [f"  s{i}:", "    action: 'true'", f"    next: s{i + 1}"]
        text += [f"  s{steps}:", "    terminal: true", ""]
        loop = write(wd / "chain.yaml", "\n".join(text))
        proc = subprocess.Popen([LL_LOOP, "run", str(loop)], cwd=wd, env=base_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        chunks = []

        def read_all():
            while True:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    return
                chunks.append(chunk.decode())

        reader = threading.Thread(target=read_all)
        reader.start()
        proc.wait(timeout=30)
        reader.join(timeout=10)
        proc.stdout.close()
        out = "".join(chunks)
        expect(proc.returncode == 0, f"exit {proc.returncode}: {out}")
        expect(out.count("\u2713 done") == steps, f"{steps} steps shown:\n{out}")
        partial = [c for c in chunks if not c.endswith("\n")]
        expect(not partial, f"every write ends a line (a step at a time): {partial}")
        # The header (3 lines), one per step, the terminal state + the blank line + the summary.
        expect(len(chunks) <= steps + 8, f"{len(chunks)} writes for {steps} steps: {chunks}")


def test_route_is_shown_before_a_backoff_sleep():
    with Workdir() as wd:
        loop = write(wd / "slow.yaml", """\
name: slow
initial: a
backoff: 1.5
states:
  a:
    action: 'true'
    next: b
  b:
    terminal: true
""")
        with open(wd / "out.txt", "w") as out:
            proc = subprocess.Popen([LL_LOOP, "run", str(loop)], cwd=wd, env=base_env(),
                                    stdout=out, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: "\u2192 b\n" in (wd / "out.txt").read_text(), timeout=10,
                     what="the route line")
            shown = (wd / "out.txt").read_text()
            expect(proc.poll() is None and "Loop completed" not in shown,
                   f"the route is shown while the loop sleeps, before the next state:\n{shown!r}")
        finally:
            proc.wait(timeout=10)
        expect(proc.returncode == 0, f"exit {proc.returncode}")
        expect("\u2192 b\n\nLoop completed: b" in (wd / "out.txt").read_text(), "then the summary")


def test_state_without_action_is_shown_before_its_evaluator_runs():
    # The judge command copies ll-loop's stdout while it runs.
    with Workdir() as wd:
        judge = write(wd / "judge.sh", f"""\
#!/bin/sh
cat > /dev/null
cp {wd / 'out.txt'} {wd / 'seen.txt'}
echo '{{"verdict": "success", "confidence": 0.9, "reason": "fine"}}'
""")
        judge.chmod(0o755)
        loop = write(wd / "judged.yaml", """\
name: judged
initial: check
states:
  check:
    evaluate:
      type: llm_structured
      prompt: Is everything fine?
    route:
      success: done
      _: done
  done:
    terminal: true
""")
        code, out, err = run_to_file(wd, loop, "--judge-command", str(judge))
        expect(code == 0, f"exit {code}: {out}\n{err}")
        seen = (wd / "seen.txt").read_text()
        expect(seen.endswith("[1/50] check"), f"the state is shown while its judge runs:\n{seen!r}")
        expect("\u2713 success" in out, f"then the verdict:\n{out!r}")


def test_control_characters_from_the_loop_or_the_judge_are_shown_not_obeyed():
    # An action written with a real ESC (YAML "\\e"), and a judge whose reason carries an
    # OSC "set window title" sequence and a C1 CSI: printed visibly, never sent raw.
    with Workdir() as wd:
        judge = write(wd / "judge.sh", """\
#!/bin/sh
cat > /dev/null
printf '{"verdict": "failure", "confidence": 0.9, "reason": "see \\\\u001b]0;pwned\\\\u0007 and \\\\u009b2J"}'
""")
        judge.chmod(0o755)
        loop = write(wd / "esc.yaml", """\
name: "esc\\e]0;t\\a"
initial: check
max_iterations: 1
states:
  check:
    action: "echo \\e[2J"
    evaluate:
      type: llm_structured
      prompt: Fine?
    route:
      success: done
      _: done
  done:
    terminal: true
""")
        code, out, err = run_to_file(wd, loop, "--judge-command", str(judge))
        expect(code == 0, f"exit {code}: {out}\n{err}")
        expect("\x1b" not in out and "\x07" not in out and "\u009b" not in out,
               f"no control character reaches the terminal:\n{out!r}")
        expect("\u2192 echo ^[[2J\n" in out, f"the action's ESC is shown as ^[:\n{out!r}")
        expect("see ^[]0;pwned^G and \ufffd2J" in out, f"the judge's reason, made visible:\n{out!r}")
        expect(out.startswith("Running loop: esc^[]0;t^G\n"), f"messages too:\n{out!r}")
        shown = subprocess.run([LL_LOOP, "show", str(loop)], cwd=wd, env=base_env(),
                               capture_output=True, text=True, timeout=10).stdout
        expect("\x1b" not in shown and shown.startswith("Loop: esc^[]0;t^G\n"),
               f"and `show`:\n{shown!r}")


if __name__ == "__main__":
    from harness import main
    main()
