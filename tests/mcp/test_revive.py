"""The gateway's reconnect of a crashed stdio server (``toolscout.core.gateway.revive``), over a real
stdio fixture server killed by its pid: the next call reconnects it once and runs; a failed
reconnect says the server is down (never "reconnect it", which a gateway client cannot do); no
storm: one attempt at a time, none within the backoff. Attempts are counted in the engine's event
log (each is one ``connecting`` state); the backoff runs on an injected clock."""

from __future__ import annotations

import asyncio
import os
import signal

from mcp_helpers import EventLog, allow, running, stdio

from toolscout.core.engine.events import ServerStateChanged
from toolscout.core.gateway.revive import RETRY_AFTER_S, Reviver
from toolscout.core.models import ServerState, ToolErrorKind

ECHO = "mcp__weird__echo"


def attempts(events: EventLog, start: int) -> int:
    """Reconnect attempts of ``weird`` since event ``start``: each starts with ``connecting``."""
    return sum(
        1
        for e in events.events[start:]
        if isinstance(e, ServerStateChanged) and e.status.name == "weird" and e.status.state is ServerState.CONNECTING
    )


async def crash(engine, events: EventLog) -> int:
    """Kill ``weird``'s process; returns the event mark once it is reported disconnected."""
    pid = int((await engine.call_tool("mcp__weird__pid", {}, asker=allow)).text())
    mark = len(events.events)
    os.kill(pid, signal.SIGKILL)
    await events.wait_state("weird", ServerState.DISCONNECTED, start=mark)
    return len(events.events)


async def test_a_call_reconnects_a_crashed_server_once_then_runs(events: EventLog, tmp_path) -> None:
    switch = tmp_path / "refuse"
    async with running([stdio("weird", "revivable", "weird", str(switch))], events) as engine:
        reviver = Reviver(engine)
        mark = await crash(engine, events)
        # two calls at once: one attempt, and both run once it has connected
        first, second = await asyncio.gather(reviver.before_call(ECHO), reviver.before_call(ECHO))
        assert first is None and second is None
        assert attempts(events, mark) == 1
        assert engine.server_config("weird") is not None
        assert (await engine.call_tool(ECHO, {"text": "back"}, asker=allow)).text() == "back"
        assert await reviver.before_call(ECHO) is None and attempts(events, mark) == 1  # up: nothing to do


async def test_a_failed_reconnect_says_the_server_is_down_and_backs_off(events: EventLog, tmp_path, fake_clock) -> None:
    switch = tmp_path / "refuse"
    async with running([stdio("weird", "revivable", "weird", str(switch))], events) as engine:
        reviver = Reviver(engine, clock=fake_clock)
        mark = await crash(engine, events)
        switch.touch()  # from now on the server dies on start-up
        failed = await reviver.before_call(ECHO)
        assert failed is not None and failed.error_kind is ToolErrorKind.SERVER_FAILED
        text = failed.text()
        assert "Server weird is down" in text and "the gateway tried to reconnect it" in text
        assert "refusing to start" in text and "reconnect it to" not in text.lower()
        assert attempts(events, mark) == 1

        fake_clock.advance(RETRY_AFTER_S / 2)  # within the backoff: answered at once, no attempt
        again = await reviver.before_call(ECHO)
        assert again is not None and "attempt to reconnect it 15 s ago failed" in again.text()
        assert "15 s more" in again.text()

        switch.unlink()
        fake_clock.advance(RETRY_AFTER_S / 2)  # the backoff is over: the next call tries again
        assert await reviver.before_call(ECHO) is None
        # the attempts, in event order: the first, none in the backoff, the one after it
        assert attempts(events, mark) == 2
        assert (await engine.call_tool(ECHO, {"text": "up"}, asker=allow)).text() == "up"


async def test_a_call_right_after_a_crash_waits_for_the_close_then_reconnects(events: EventLog, tmp_path) -> None:
    """The crash is seen by the call it cut off; the next call comes at once, before the
    disconnect has reached the engine (its status still says connected): it must reconnect."""
    async with running([stdio("weird", "mortal", "weird")], events) as engine:
        reviver = Reviver(engine)
        for _ in range(3):
            mark = len(events.events)
            died = await engine.call_tool("mcp__weird__die", {}, asker=allow)
            assert "closed the connection during mcp__weird__die" in died.text()
            assert await reviver.before_call(ECHO) is None
            assert engine.pool.status("weird").state is ServerState.CONNECTED
            assert attempts(events, mark) == 1
            assert (await engine.call_tool(ECHO, {"text": "back"}, asker=allow)).text() == "back"


async def test_a_call_during_a_reconnect_joins_it(events: EventLog, tmp_path) -> None:
    """A call that arrives while the gateway's reconnect is still connecting (held at its gate)
    waits for that attempt, rather than being told the server is still connecting."""
    gate = tmp_path / "gate"
    gate.touch()
    async with running([stdio("weird", "mortal", "weird", str(gate))], events) as engine:
        reviver = Reviver(engine)
        gate.unlink()  # the reconnect will wait at the gate
        mark = len(events.events)
        await engine.call_tool("mcp__weird__die", {}, asker=allow)
        await events.wait_state("weird", ServerState.DISCONNECTED, start=mark)
        mark = len(events.events)
        first = asyncio.ensure_future(reviver.before_call(ECHO))
        await events.wait_state("weird", ServerState.CONNECTING, start=mark)

        async def second() -> ServerState:
            assert await reviver.before_call(ECHO) is None
            return engine.pool.status("weird").state  # as it was when the call was let through

        joined = asyncio.ensure_future(second())
        gate.touch()
        assert await first is None
        assert await joined is ServerState.CONNECTED
        assert attempts(events, mark) == 1


async def test_a_server_gone_between_lookup_and_send_is_reconnected_first(events: EventLog, tmp_path) -> None:
    """The server dies while the permission question is open: the permitted call is not sent to
    the dead connection nor refused; the executor's ``revive`` hook reconnects, then sends it once."""
    async with running([stdio("weird", "revivable", "weird", str(tmp_path / "refuse"))], events) as engine:
        reviver = Reviver(engine)
        engine.executor.revive = reviver.before_call
        marks: list[int] = []

        async def crash_then_allow(tool, params) -> str:
            marks.append(await crash(engine, events))
            return "allow_once"

        result = await engine.call_tool(ECHO, {"text": "sent once"}, asker=crash_then_allow)
        assert not result.is_error, result.text()
        assert result.text() == "sent once" and attempts(events, marks[0]) == 1
