"""Connections over real stdio servers: concurrency, failures, timeouts, pagination, list_changed,
reconnect, and clean shut-down with no child process left behind."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from mcp_helpers import EventLog, allow, memory, pid_alive, running, started_server, stdio

from toolscout.core.engine.events import CatalogChanged, EngineWarning
from toolscout.core.models import ServerState, ToolErrorKind


async def test_stdio_servers_connect_concurrently_and_failures_stay_alone(events: EventLog):
    """Five servers start at once; one that never answers holds none of the others back, and
    stopping the engine ends it while it still connects (its own timeout: the next test)."""
    servers = [
        stdio("normal"),
        stdio("crash"),
        stdio("hang"),
        stdio("paged", "paginate"),
        stdio("broken", command_override := "normal"),
    ]
    servers[-1] = servers[-1].__class__("broken", "stdio", command="/nonexistent/toolscout-test-bin", source="t")
    del command_override
    async with running(servers, events, settle=False, **{"mcp.timeout": 60}) as engine:
        # 60 s: five Python servers start at once on a loaded 2-core CI machine; "hang" is never waited out
        # start() returned at once: the slow ones are still connecting
        assert {s.name for s in engine.server_statuses() if s.state is ServerState.CONNECTING} >= {"hang"}
        normal = await events.wait_state("normal", ServerState.CONNECTED)
        assert normal.instructions == "The normal server: use echo to repeat text."
        assert normal.tool_count == 6 and normal.has_resources
        assert engine.catalog.instructions["normal"] == normal.instructions
        # a hanging server does not hold the others back
        assert engine.pool.status("hang").state is ServerState.CONNECTING
        result = await engine.call_tool("mcp__hang__anything", {})
        assert result.error_kind is ToolErrorKind.SERVER_CONNECTING and "still connecting" in result.text()
        assert "hang" in engine.search_tools("anything").pending_servers

        crash = await events.wait_state("crash", ServerState.FAILED)
        assert "exited" in crash.error and "FAKE_API_KEY is not set" in crash.error
        broken = await events.wait_state("broken", ServerState.FAILED)
        assert "cannot start '/nonexistent/toolscout-test-bin'" in broken.error

        failed = await engine.call_tool("mcp__crash__x", {})
        assert failed.error_kind is ToolErrorKind.SERVER_FAILED and "FAKE_API_KEY" in failed.text()
        ok = await engine.call_tool("mcp__normal__echo", {"text": "still fine"}, asker=allow)
        assert ok.text() == "still fine" and not ok.is_error
        assert engine.pool.status("hang").state is ServerState.CONNECTING
    assert engine.pool.status("hang").state is not ServerState.CONNECTED


async def test_a_server_that_never_answers_fails_after_the_connect_timeout(events: EventLog):
    """``mcp.timeout`` bounds start-up + ``initialize``: a server that never answers fails with
    the stage it hung in and how to raise the bound (alone, so a short timeout cannot catch a
    slow-starting healthy server on a loaded machine)."""
    async with running([stdio("hang")], events, settle=False, **{"mcp.timeout": 1}):
        hang = await events.wait_state("hang", ServerState.FAILED)
    assert "no answer to initialize within 1 s" in hang.error and "mcp.timeout" in hang.error


async def test_listing_pagination_cursor_loops_and_two_thousand_tools(events: EventLog):
    servers = [stdio("paged", "paginate"), stdio("loopy", "paginate", "loop"), stdio("many")]
    async with running(servers, events) as engine:
        # an empty-string nextCursor is a cursor: all three pages are read
        names = [t.bare_name for t in engine.catalog.server_tools("paged")]
        assert sorted(names) == ["alpha", "bravo", "charlie", "delta", "echo"]
        # a repeating cursor stops the loop with a warning naming the server
        assert engine.pool.status("loopy").state is ServerState.CONNECTED
        warning = await events.wait_for(lambda e: isinstance(e, EngineWarning) and e.source == "loopy")
        assert "repeated cursor 'same'" in warning.message
        assert len(engine.catalog.server_tools("loopy")) == 2
        # 2,000 tools in one page
        assert engine.pool.status("many").tool_count == 2000
        assert len(engine.catalog.server_tools("many")) == 2000
        result = await engine.call_tool("mcp__many__archive_report_0003", {}, asker=allow)
        assert result.text() == "ran archive_report_0003"


async def test_stop_leaves_no_child_process():
    async with running([stdio("normal"), stdio("other", "normal")]) as engine:
        pids = []
        for server in ("normal", "other"):
            result = await engine.call_tool(f"mcp__{server}__pid", {}, asker=allow)
            pids.append(int(result.text()))
        assert all(pid_alive(p) for p in pids) and pids[0] != pids[1] and os.getpid() not in pids
    assert not any(pid_alive(p) for p in pids)
    assert {s.state for s in engine.server_statuses()} == {ServerState.DISCONNECTED}
    await engine.stop()  # twice is fine


async def test_stop_ends_a_server_that_ignores_stdin_close_and_sigterm():
    """Quit closes stdin, waits a short grace, then SIGTERMs and finally SIGKILLs the server's
    process group: a server that ignores both, and its grandchild, are gone after stop."""
    async with running([stdio("stubborn"), stdio("normal")]) as engine:
        result = await engine.call_tool("mcp__stubborn__pids", {}, asker=allow)
        pids = [int(p) for p in result.text().split()]
        pids.append(int((await engine.call_tool("mcp__normal__pid", {}, asker=allow)).text()))
        assert len(pids) == 3 and all(pid_alive(p) for p in pids)
    assert not any(pid_alive(p) for p in pids)
    assert {s.state for s in engine.server_statuses()} == {ServerState.DISCONNECTED}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mcp.serverPriority acts through Linux's /proc")
async def test_low_server_priority_renices_each_stdio_server_started_directly():
    """mcp.serverPriority = low with servers started directly (mcp.serverSessions = separate):
    each server process runs at nice 15 (and its session's scheduling group, where the kernel has
    them) as soon as it starts; the default leaves servers at the app's priority. (The shared
    session: tests/mcp/test_shared_sessions.py.)"""
    separate = {"mcp.serverSessions": "separate"}
    async with running([stdio("normal")], settle=False, **{"mcp.serverPriority": "low"}, **separate):
        pid = await started_server("normal.py")
        group = Path(f"/proc/{pid}/autogroup")
        has_groups = group.exists() and bool(group.read_text().split())  # some sandboxes show it empty
        assert os.getsid(pid) == pid
        # the connections' thread writes the process nice, then the group's: wait for both
        with anyio.fail_after(10):
            while os.getpriority(os.PRIO_PROCESS, pid) != 15 or (has_groups and group.read_text().split()[-1] != "15"):
                await anyio.sleep(0.02)
    async with running([stdio("other", "normal")], settle=False, **separate):
        pid = await started_server("normal.py")
        assert os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0)


async def test_server_exit_disconnects_and_reconnect_brings_tools_back(events: EventLog):
    async with running([stdio("normal")], events) as engine:
        pid = int((await engine.call_tool("mcp__normal__pid", {}, asker=allow)).text())
        mark = len(events.events)
        os.kill(pid, signal.SIGKILL)
        gone = await events.wait_state("normal", ServerState.DISCONNECTED, start=mark)
        assert "closed the connection" in gone.error
        assert engine.catalog.server_tools("normal") == []
        result = await engine.call_tool("mcp__normal__echo", {"text": "x"}, asker=allow)
        assert result.error_kind is ToolErrorKind.SERVER_FAILED and "disconnected" in result.text()

        mark = len(events.events)
        await engine.reconnect("normal")
        await events.wait_state("normal", ServerState.CONNECTED, start=mark)
        assert engine.search_tools("repeat the given text").hits[0].tool.name == "mcp__normal__echo"
        assert (await engine.call_tool("mcp__normal__echo", {"text": "back"}, asker=allow)).text() == "back"


async def test_list_changed_relists_and_bursts_coalesce(events: EventLog):
    async with running([stdio("dyn", "dynamic")], events) as engine:
        conn = engine.pool.connection("dyn")
        mark = len(events.events)
        assert not (await engine.call_tool("mcp__dyn__add_tool", {"name": "weather_lookup"}, asker=allow)).is_error
        changed = await events.wait_for(lambda e: isinstance(e, CatalogChanged) and e.delta.server == "dyn", start=mark)
        assert changed.delta.added == ("mcp__dyn__weather_lookup",)
        assert engine.search_tools("weather_lookup").hits[0].tool.name == "mcp__dyn__weather_lookup"
        ran = await engine.call_tool("mcp__dyn__weather_lookup", {"text": "paris"}, asker=allow)
        assert ran.text() == "weather_lookup:paris"

        mark = len(events.events)
        await engine.call_tool("mcp__dyn__remove_tool", {"name": "weather_lookup"}, asker=allow)
        changed = await events.wait_for(lambda e: isinstance(e, CatalogChanged) and e.delta.removed, start=mark)
        assert changed.delta.removed == ("mcp__dyn__weather_lookup",)
        gone = await engine.call_tool("mcp__dyn__weather_lookup", {}, asker=allow)
        assert gone.error_kind is ToolErrorKind.UNKNOWN_TOOL

        before = conn.relists
        mark = len(events.events)
        await engine.call_tool("mcp__dyn__burst", {"prefix": "b", "count": 8}, asker=allow)
        await events.wait_for(lambda e: isinstance(e, CatalogChanged) and "mcp__dyn__b_7" in e.delta.added, start=mark)
        assert conn.relists - before < 8  # eight notifications, fewer re-lists
        assert len([t for t in engine.catalog.server_tools("dyn") if t.bare_name.startswith("b_")]) == 8


async def test_in_memory_list_changed_and_disconnect(events: EventLog):
    async with running([memory("dyn", "dynamic")], events) as engine:
        mark = len(events.events)
        await engine.call_tool("mcp__dyn__add_tool", {"name": "extra"}, asker=allow)
        await events.wait_for(
            lambda e: isinstance(e, CatalogChanged) and e.delta.added == ("mcp__dyn__extra",), start=mark
        )
        mark = len(events.events)
        await engine.disconnect("dyn")
        removed = await events.wait_for(lambda e: isinstance(e, CatalogChanged) and e.delta.removed, start=mark)
        assert "mcp__dyn__extra" in removed.delta.removed
        assert engine.pool.status("dyn").state is ServerState.DISCONNECTED
        assert engine.catalog.server_tools("dyn") == []


async def test_call_timeout_fails_the_call_not_the_server():
    async with running([memory("normal")], **{"mcp.callTimeout": 0.5}) as engine:
        with anyio.fail_after(10):
            result = await engine.call_tool("mcp__normal__stall", {}, asker=allow)
        assert result.error_kind is ToolErrorKind.TIMEOUT and "0.5 s" in result.text()
        assert (await engine.call_tool("mcp__normal__echo", {"text": "ok"}, asker=allow)).text() == "ok"


async def test_stop_while_connecting_ends_at_once(events: EventLog):
    engine_ctx = running([stdio("hang")], events, settle=False, **{"mcp.timeout": 60})
    with anyio.fail_after(15):
        async with engine_ctx as engine:
            await events.wait_state("hang", ServerState.CONNECTING)
            assert engine.pending_servers() == ["hang"]
    assert engine.pool.status("hang").state is ServerState.DISCONNECTED
    states = [e.status.state for e in events.events if getattr(e, "status", None) and e.status.name == "hang"]
    assert states[0] is ServerState.CONNECTING and states[-1] is ServerState.DISCONNECTED
