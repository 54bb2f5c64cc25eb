#!/usr/bin/env python3
# little_loops — e2e: what an action leaves behind (setsid) dies with the run where cgroups allow
# SPDX-License-Identifier: MIT
import os
import time
from pathlib import Path

from harness import Skip, Workdir, expect, expect_exit, expect_in, ll, main, pids_with_marker, write

# An action that starts a process in a session of its own (out of its process group) and exits.
ESCAPE = """\
name: escape
initial: start
states:
  start:
    action: setsid sleep {seconds} > /dev/null 2>&1 < /dev/null & sleep 0.2; echo started
    timeout: 20
    on_success: done
    on_error: failed
  done:
    terminal: true
  failed:
    terminal: true
    failure: true
"""


def delegated_cgroup() -> str | None:
    """Our cgroup v2 directory when it is writable (as the runner finds it), else None."""
    try:
        group = next((line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines()
                      if line.startswith("0::")), None)
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    if not group:
        return None
    for line in mounts:
        head, sep, tail = line.partition(" - ")
        if not sep or not tail.startswith("cgroup2 "):
            continue
        fields = head.split()
        root, mount_point = fields[3], fields[4].replace("\\040", " ")
        if root != "/" and not (group == root or group.startswith(root + "/")):
            continue
        below = group if root == "/" else group[len(root):]
        path = mount_point + ("" if below == "/" else below)
        if os.access(path, os.W_OK) and os.access(path + "/cgroup.procs", os.W_OK):
            return path
        return None
    return None


def test_help_names_the_containment():
    r = ll("run", "--help")
    expect_exit(r, 0)
    expect_in("Containment: cgroup" if delegated_cgroup() else "Containment: process group", r.out, r)


def owner_alive(name):
    """Whether the process that made the cgroup `little_loops-<pid>-<n>` still exists."""
    try:
        os.kill(int(name.split("-")[1]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True


def test_setsid_process_dies_with_the_run():
    if not delegated_cgroup():
        raise Skip("no delegated cgroup v2 group here: actions are contained by process groups")
    with Workdir() as wd:
        loop = write(wd / "escape.yaml", ESCAPE.format(seconds="300.4242"))
        r = ll("run", loop, cwd=wd, timeout=20)
        expect_exit(r, 0)
        deadline = time.monotonic() + 3
        while pids_with_marker("sleep 300.4242") and time.monotonic() < deadline:
            time.sleep(0.05)
        expect(not pids_with_marker("sleep 300.4242"), "the setsid process of the run survived it", r)
        # Cgroups of live processes belong to runs going on beside this one, and one that
        # still holds processes is a crashed run's, left for its resume; the run removes its
        # own and sweeps the empty ones of runs killed before their cleanup.
        leftovers = [p.name for p in Path(delegated_cgroup()).iterdir()
                     if p.name.startswith("little_loops-") and not owner_alive(p.name)
                     and not (p / "cgroup.procs").read_text().strip()]
        expect(not leftovers, f"the action cgroups were not removed: {leftovers}", r)


def test_without_cgroups_background_jobs_still_die():
    # Runs everywhere: an ordinary background job goes with the action's process group,
    # whichever containment is in use.
    with Workdir() as wd:
        loop = write(wd / "bg.yaml", ESCAPE.replace("setsid sleep {seconds}", "sleep 300.4343"))
        r = ll("run", loop, cwd=wd, timeout=20)
        expect_exit(r, 0)
        deadline = time.monotonic() + 3
        while pids_with_marker("sleep 300.4343") and time.monotonic() < deadline:
            time.sleep(0.05)
        expect(not pids_with_marker("sleep 300.4343"), "the background job survived the run", r)


if __name__ == "__main__":
    main()
