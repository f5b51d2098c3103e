"""Engine and session events become messages; streamed text is joined and coalesced."""

from __future__ import annotations

import threading

from toolscout.core.catalog.registry import CatalogDelta
from toolscout.core.engine.events import CatalogChanged, EngineWarning, ServerStateChanged
from toolscout.core.models import ServerState, ServerStatus, ToolResult
from toolscout.core.session import events as se
from toolscout.tui import messages as m
from toolscout.tui.bridge import Bridge, SessionTranslator, translate


def test_engine_events_translate() -> None:
    status = ServerStatus("x", ServerState.FAILED, error="boom")
    assert translate(ServerStateChanged(status)) == m.ServerStatusChanged(status)
    assert translate(CatalogChanged(CatalogDelta(("a",), ("b",)))) == m.CatalogChanged(("a",), ("b",))
    assert translate(EngineWarning("bad", "cfg")) == m.WarningRaised("cfg: bad", "cfg")
    assert translate(object()) is None


def test_stream_deltas_are_joined_per_message() -> None:
    tr = SessionTranslator()
    assert tr(se.UserMessageAdded("hi", 1)) == m.TurnStarted("hi")
    first = tr(se.AssistantTextDelta("Hel", 1))
    second = tr(se.AssistantTextDelta("lo", 1))
    assert (first.text, second.text) == ("Hel", "Hello")
    assert second.can_replace(first)  # a queued older state is dropped
    done = tr(se.AssistantMessageDone("Hello", 0, 1))
    assert done.done and done.text == "Hello"
    nxt = tr(se.AssistantTextDelta("Again", 1))
    assert nxt.key != done.key and not nxt.can_replace(done)
    assert tr(se.AssistantMessageDone("", 1, 1, "tool_use")) is not None  # "Again" streamed
    assert tr(se.AssistantMessageDone("", 1, 1, "tool_use")) is None  # nothing to show


def test_session_events_translate() -> None:
    tr = SessionTranslator()
    result = ToolResult.ok("mcp__a__b", "ok")
    assert tr(se.ToolCallStarted("c1", "mcp__a__b", {"x": 1}, "ExecuteTool")) == m.ToolCallStarted(
        "c1", "mcp__a__b", {"x": 1}
    )
    assert tr(se.ToolCallFinished("c1", "mcp__a__b", {}, result)) == m.ToolCallFinished("c1", result)
    assert tr(se.TurnCancelled(1)) == m.TurnEnded(cancelled=True)
    assert tr(se.SessionError("no key")) == m.ErrorReported("no key")
    rec = se.Recommendation("mcp__a__b", "a", 0.5)
    assert tr(se.RecommendationsReady((rec,), "q", 1)) == m.RecommendationsChanged([rec])


class FakePump:
    def __init__(self) -> None:
        self.posted: list[object] = []
        self.threads: set[int] = set()

    def post_message(self, message: object) -> bool:
        self.posted.append(message)
        self.threads.add(threading.get_ident())
        return True


class FakeSource:
    def __init__(self) -> None:
        self.listeners: list = []

    def subscribe(self, listener):
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def emit(self, event) -> None:
        for listener in list(self.listeners):
            listener(event)


def test_bridge_forwards_from_any_thread_and_disconnects() -> None:
    pump, engine, session = FakePump(), FakeSource(), FakeSource()
    bridge = Bridge(pump, engine, session)  # type: ignore[arg-type]
    bridge.connect()
    worker = threading.Thread(target=engine.emit, args=(EngineWarning("w"),))
    worker.start()
    worker.join()
    session.emit(se.TurnFinished(1, "done"))
    assert pump.posted == [m.WarningRaised("w"), m.TurnEnded(cancelled=False)]
    bridge.disconnect()
    assert not engine.listeners and not session.listeners
