"""mcp.serverPriority's renicing of directly started servers (:mod:`toolscout.core.mcp.priority`),
in a separate process so that this test's own children and scheduling group are not touched."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import json, os, subprocess
from toolscout.core.mcp.priority import lower_new_children
def group(pid):
    words = open(f"/proc/{pid}/autogroup").read().split()
    return words[-1] if words else None  # empty in the root autogroup or a cpu cgroup
app_before = group(os.getpid())
leader = subprocess.Popen(["sleep", "30"], start_new_session=True)
member = subprocess.Popen(["sleep", "30"])
lowered = lower_new_children()
again = lower_new_children()
print(json.dumps({"lowered": sorted(lowered), "again": again, "pids": sorted([leader.pid, member.pid]),
                  "nice": [os.getpriority(os.PRIO_PROCESS, p.pid) for p in (leader, member)],
                  "leader_group": group(leader.pid), "app_group": [app_before, group(os.getpid())]}))
for p in (leader, member):
    p.kill(); p.wait()
"""


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="needs Linux /proc/PID/autogroup")
def test_a_child_in_the_apps_own_session_is_reniced_but_the_apps_group_is_not():
    """Each new child gets nice 15 once; only a child leading its own session (a server the SDK
    started) has its scheduling group niced: a child still in the app's session shares the app's
    group, and niced, that group would put the app behind its own servers. Where the kernel shows
    no autogroup the file reads empty: a process in a cpu cgroup, or one in the root autogroup
    (never in a new session since boot, as the app was on CI). There only the nice is checked, or,
    for the app, that its reading did not change."""
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(out.stdout)
    assert seen["lowered"] == seen["pids"] and seen["again"] == []
    assert seen["nice"] == [15, 15]
    if seen["leader_group"] is not None:  # the kernel reports the server's group
        assert seen["leader_group"] == "15"
    before, after = seen["app_group"]
    assert after == before and after != "15"  # the app's own group keeps its priority
