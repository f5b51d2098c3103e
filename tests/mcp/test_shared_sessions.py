"""mcp.serverSessions = shared (what auto, the default, picks on Linux when the machine is not busy):
every stdio server runs in the launcher's session, apart from the app's, with its own process group;
start-up facts (environment, working directory, failures), shut-down and kills behave as for a
server the SDK starts directly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp_helpers import EventLog, allow, pid_alive, running, server_path, started_server, stdio

from toolscout.core.mcp.config import ServerConfig
from toolscout.core.mcp.shared_sessions import choose_sessions, machine_busy, supported
from toolscout.core.models import ServerState

pytestmark = pytest.mark.skipif(not supported(), reason="the shared server session is Linux only")
SHARED = {"mcp.serverSessions": "shared"}  # auto would pick separate sessions on a busy machine


async def probe(engine, server: str) -> dict:
    return json.loads((await engine.call_tool(f"mcp__{server}__probe", {}, asker=allow)).text())


def autogroup(pid: int | str) -> str | None:
    """A live process's autogroup name, or None where the kernel gives none (the file is missing,
    or empty as in some sandboxes)."""
    path = Path(f"/proc/{pid}/autogroup")
    words = path.read_text().split() if path.exists() else []
    return words[0] if words else None


async def wait_gone(pid: int, timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while pid_alive(pid):
            await anyio.sleep(0.02)


async def test_stdio_servers_share_one_session_apart_from_the_app(tmp_path):
    env = {"TOOLSCOUT_PROBE": "from-config"}
    one = ServerConfig(
        "one", "stdio", command=sys.executable, args=(server_path("probe"),), env=env, cwd=str(tmp_path), source="test"
    )
    async with running([one, stdio("two", "probe")], **SHARED) as engine:
        a, b = await probe(engine, "one"), await probe(engine, "two")
    assert a["sid"] == b["sid"] != os.getsid(0)
    assert a["pgid"] == a["pid"] and b["pgid"] == b["pid"]  # each its own group: killable alone
    assert a["ppid"] == b["ppid"] != os.getpid()  # started by the launcher
    assert (a["value"], b["value"]) == ("from-config", None)  # configured env only, as the SDK gives it
    assert Path(a["cwd"]).resolve() == tmp_path.resolve()
    if autogroup("self") is not None and a["autogroup"] is not None:  # read by the servers while alive
        assert a["autogroup"] == b["autogroup"] != autogroup("self")
    assert not pid_alive(a["pid"]) and not pid_alive(b["pid"]) and not pid_alive(a["ppid"])


async def test_separate_sessions_start_each_server_directly():
    async with running([stdio("one", "probe"), stdio("two", "probe")], **{"mcp.serverSessions": "separate"}) as engine:
        a, b = await probe(engine, "one"), await probe(engine, "two")
    assert a["sid"] == a["pid"] and b["sid"] == b["pid"]
    assert a["ppid"] == b["ppid"] == os.getpid()


async def test_low_priority_applies_to_the_server_in_the_shared_session():
    """The launcher lowers the server's process group as it starts it (no need to wait for the
    server to connect: at nice 15 on a loaded machine that can take long)."""
    async with running([stdio("probe")], settle=False, **{"mcp.serverPriority": "low"}, **SHARED):
        pid = await started_server("probe.py")
        with anyio.fail_after(10):
            while os.getpriority(os.PRIO_PROCESS, pid) != 15:
                await anyio.sleep(0.02)
        assert os.getsid(pid) != os.getsid(0)


async def test_missing_command_fails_with_the_sdk_error(events: EventLog):
    broken = ServerConfig("broken", "stdio", command="/nonexistent/toolscout-test-bin", source="test")
    async with running([broken, stdio("probe")], events, **SHARED) as engine:
        status = await events.wait_state("broken", ServerState.FAILED)
        assert "toolscout-test-bin" in status.error
        assert (await probe(engine, "probe"))["sid"] != os.getsid(0)


def _shims() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if stat[1] == str(os.getpid()) and b"launcher_shim.py" in cmdline:
            found.append(int(entry.name))
    return found


async def test_killing_the_shim_kills_the_server_and_disconnects(events: EventLog):
    """The SDK's last resort is SIGKILL to the process it started (the shim): the server goes too."""
    async with running([stdio("stubborn")], events, **SHARED) as engine:
        server, grandchild = (
            int(p) for p in (await engine.call_tool("mcp__stubborn__pids", {}, asker=allow)).text().split()
        )
        [shim] = _shims()
        mark = len(events.events)
        os.kill(shim, signal.SIGKILL)
        gone = await events.wait_state("stubborn", ServerState.DISCONNECTED, start=mark)
        assert "closed the connection" in gone.error
        await wait_gone(server)
        await wait_gone(grandchild)


APP_THAT_DIES = textwrap.dedent("""
    import asyncio, os, sys
    sys.path.insert(0, sys.argv[1])
    from mcp_helpers import make_engine, stdio, allow

    async def main():
        engine = make_engine([stdio("stubborn")], **{"mcp.serverSessions": "shared"})
        await engine.start()
        assert await engine.wait_for_servers(30)
        result = await engine.call_tool("mcp__stubborn__pids", {}, asker=allow)
        print(result.text(), flush=True)
        os._exit(0)  # no clean-up at all: as if the app crashed

    asyncio.run(main())
""")


async def test_servers_do_not_outlive_an_app_that_dies(tmp_path):
    """A server that ignores SIGTERM and its stdin closing still ends when the app dies without
    stopping it: the launcher sees the app go (its stdin closes) and kills every server's group."""
    script = tmp_path / "app.py"
    script.write_text(APP_THAT_DIES)
    env = {
        **os.environ,
        "TOOLSCOUT_CONFIG_DIR": str(tmp_path / "c"),
        "TOOLSCOUT_CACHE_DIR": str(tmp_path / "k"),
        "TOOLSCOUT_DATA_DIR": str(tmp_path / "d"),
    }
    out = subprocess.run(
        [sys.executable, str(script), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2
    for pid in pids:
        await wait_gone(pid)


def test_auto_shares_sessions_unless_the_machine_is_busy(monkeypatch):
    assert machine_busy(load=2.5, cpus=2) and not machine_busy(load=2.0, cpus=2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.0, 1.0, 1.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert choose_sessions("auto") == "shared"
    assert choose_sessions("separate") == "separate"
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 1.0, 1.0))
    assert choose_sessions("auto") == "separate"
    assert choose_sessions("shared") == "shared"


async def test_auto_on_a_busy_machine_starts_servers_directly(monkeypatch):
    monkeypatch.setattr(os, "getloadavg", lambda: (64.0, 64.0, 64.0))
    async with running([stdio("probe")]) as engine:
        info = await probe(engine, "probe")
        assert engine.pool.sessions_in_use == "separate"
    assert info["ppid"] == os.getpid() and info["sid"] == info["pid"]
