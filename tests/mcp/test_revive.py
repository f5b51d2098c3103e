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

from toolscout.core.events import ServerStateChanged
from toolscout.core.gateway.revive import RETRY_AFTER_S, Reviver
from toolscout.core.models import ServerState, ToolErrorKind

ECHO = "mcp__weird__echo"


def attempts(events: EventLog, start: int) -> int:
    """Reconnect attempts of ``weird`` since event ``start``: each starts with ``connecting``."""
    return sum(1 for e in events.events[start:] if isinstance(e, ServerStateChanged)
               and e.status.name == "weird" and e.status.state is ServerState.CONNECTING)


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


async def test_a_failed_reconnect_says_the_server_is_down_and_backs_off(events: EventLog, tmp_path,
                                                                        fake_clock) -> None:
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
