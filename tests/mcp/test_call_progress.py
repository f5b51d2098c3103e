"""Progress notifications of an MCP tool call → ``ToolCallProgress`` engine events, and cancelling a
call → ``notifications/cancelled`` upstream. The upstream is the stdio fixture ``slow.py``, which
writes down the progress token it received and whether it was cancelled."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anyio
from mcp_helpers import EventLog, allow, running, stdio

from toolscout.core.engine.events import ToolCallProgress
from toolscout.core.engine.progress import CALL_INTERVAL_S, CallProgressRelay
from toolscout.core.mcp.progress import Progress

TOOL = "mcp__slow__work"


def received(log: Path) -> list[dict[str, Any]]:
    """What the upstream server wrote down, in order."""
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


async def until_logged(log: Path, event: str, timeout: float = 20.0) -> None:
    """Wait (bounded) until the server wrote down ``event``: it is another process, whose file
    has no event to wait on."""
    with anyio.fail_after(timeout):
        while not any(e["event"] == event for e in received(log)):
            await anyio.sleep(0.02)


def progress_events(events: EventLog, call_id: str) -> list[ToolCallProgress]:
    return [e for e in events.events if isinstance(e, ToolCallProgress) and e.call_id == call_id]


async def test_a_calls_progress_becomes_events_with_its_id(tmp_path: Path, events: EventLog) -> None:
    log, release = tmp_path / "slow.jsonl", tmp_path / "release"
    args = {"steps": 3, "hold": str(release), "message": "[bold]step[/] {i} of {n}"}
    async with running([stdio("slow", "slow", "slow", str(log))], events) as engine:
        async with anyio.create_task_group() as tg:
            results: list[Any] = []

            async def call() -> None:
                results.append(await engine.call_tool(TOOL, args, asker=allow, call_id="toolu_1"))

            tg.start_soon(call)
            last = await events.wait_for(lambda e: isinstance(e, ToolCallProgress) and e.progress == 3)
            release.touch()
        [result] = results
    assert not result.is_error, result.text()
    assert isinstance(last, ToolCallProgress)
    assert (last.call_id, last.tool_name, last.total, last.fraction) == ("toolu_1", TOOL, 3, 1.0)
    assert last.message == "[bold]step[/] 3 of 3"  # the server's text as it sent it
    seen = [e.progress for e in progress_events(events, "toolu_1")]
    assert seen == sorted(seen) and seen[0] >= 1
    call, done = received(log)
    assert call["event"] == "call" and call["progress_token"] is not None  # progress was asked for
    assert done == {"event": "done"}


async def test_no_id_no_progress_asked_for(tmp_path: Path, events: EventLog) -> None:
    log = tmp_path / "slow.jsonl"
    async with running([stdio("slow", "slow", "slow", str(log))], events) as engine:
        result = await engine.call_tool(TOOL, {"steps": 2}, asker=allow)
    assert not result.is_error, result.text()
    assert received(log)[0] == {"event": "call", "progress_token": None}
    assert not [e for e in events.events if isinstance(e, ToolCallProgress)]


async def test_an_unknown_total_is_indeterminate(tmp_path: Path, events: EventLog) -> None:
    log = tmp_path / "slow.jsonl"
    async with running([stdio("slow", "slow", "slow", str(log))], events) as engine:
        result = await engine.call_tool(TOOL, {"steps": 1, "known_total": False}, asker=allow, call_id="c")
    assert not result.is_error, result.text()
    # a notification sent before the result is delivered before the call returns
    [event] = progress_events(events, "c")
    assert (event.progress, event.total, event.fraction, event.message) == (1, None, None, "step 1 of 1")


async def test_a_flood_of_progress_is_throttled(tmp_path: Path, events: EventLog) -> None:
    log = tmp_path / "slow.jsonl"
    async with running([stdio("slow", "slow", "slow", str(log))], events) as engine:
        result = await engine.call_tool(TOOL, {"steps": 400}, asker=allow, call_id="flood")
    assert not result.is_error, result.text()
    seen = [e.progress for e in progress_events(events, "flood")]
    # one event per CALL_INTERVAL_S at most: 400 would mean the call took 40 s
    assert 1 <= len(seen) < 400 and seen == sorted(seen)


async def test_cancelling_a_call_cancels_it_upstream(tmp_path: Path, events: EventLog) -> None:
    log, release = tmp_path / "slow.jsonl", tmp_path / "never"
    async with running([stdio("slow", "slow", "slow", str(log))], events) as engine:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                call = engine.call_tool(TOOL, {"steps": 1, "hold": str(release)}, asker=allow, call_id="held")
                tg.start_soon(lambda: call)
                await events.wait_for(lambda e: isinstance(e, ToolCallProgress))
                scope.cancel()
        assert scope.cancelled_caught
        await until_logged(log, "cancelled")  # the server got notifications/cancelled
    assert [e["event"] for e in received(log)] == ["call", "cancelled"]


async def test_the_relay_sends_the_first_at_once_then_one_per_interval() -> None:
    now = [100.0]
    sent: list[ToolCallProgress] = []
    forwarded: list[Progress] = []
    relay = CallProgressRelay(sent.append, "id", "tool", forwarded.append, clock=lambda: now[0])  # type: ignore[arg-type]
    relay(Progress(1, 10, "a"))
    relay(Progress(2, 10, "b"))
    relay(Progress(3, 10, "c"))  # within the interval: only the newest is kept
    assert [e.progress for e in sent] == [1]
    now[0] += CALL_INTERVAL_S
    await asyncio.sleep(CALL_INTERVAL_S * 2)  # the relay's own timer (loop time) sends the newest
    assert [(e.progress, e.message) for e in sent] == [(1, "a"), (3, "c")]
    assert [p.progress for p in forwarded] == [1, 2, 3]  # the caller's own copy is not throttled
    relay(Progress(4, 10))
    relay(Progress(5, 10))
    relay.close()  # the call returned: what waits is dropped
    await asyncio.sleep(CALL_INTERVAL_S * 2)
    assert [e.progress for e in sent] == [1, 3]
