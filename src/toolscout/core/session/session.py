"""The agent session: conversation loop, deferred-tool reminders, prefetch, cancellation, resume.

A :class:`Session` turns one user message into a *turn*: requests to the model (system prompt and
tools array fixed by the :class:`~.projection.Projection`), tool calls run concurrently through
the engine's executor, reminders appended to user messages, until the model answers in text. In
offline mode (no model) the person drives instead: their message becomes a ToolSearch, they
pick a recommended tool and run it with :meth:`Session.run_tool`, and the transcript reads as if a
model had done it.

Invariants (checked by ``tests/session``): the serialised tools array and system prompt are
byte-identical turn to turn (stub strategy: late tools only append); every tool name a request
references is defined by its tools array (:func:`~.projection.check_request`); messages are only
ever appended, never rewritten; every ``tool_use`` gets a ``tool_result``, even on cancel or crash.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..calls.result_cap import cap_result, results_root
from ..engine.events import EventSource
from ..policy.permissions import Asker
from ..settings.layers import KEYS_BY_NAME, Settings
from ..settings.provider_registry import OFFLINE
from ..tokens import ModeDecision
from .events import (
    AssistantMessageDone,
    AssistantTextDelta,
    Recommendation,
    SessionError,
    TurnCancelled,
    TurnFinished,
    UsageReported,
    UserMessageAdded,
)
from .manual import CANCELLED_TEXT, ManualDriver
from .modes import admit_invented
from .native import NativeChoice
from .prefetch import Prefetcher, query_text
from .projection import EXECUTE_TOOL, NATIVE, Projection, check_request, normalize_tool_use
from .providers import Provider, ProviderError, create_provider
from .providers.base import DEFAULT_MAX_TOKENS
from .request_builder import RequestBuilder
from .stats import CacheMeter, usage_record
from .tools import ToolRouter
from .transcript import (
    TranscriptBusy,
    TranscriptStore,
    find_transcript,
    interrupted_results,
    load_for_resume,
    load_transcript,
    message_blocks,
    new_session_id,
    sessions_dir,
)

log = logging.getLogger(__name__)

CRASHED_TEXT = "Interrupted: the session ended before this tool call finished."
if TYPE_CHECKING:
    from ..engine.facade import Engine

T = TypeVar("T")
#: Model requests allowed in one turn before the session stops it (a runaway tool loop).
MAX_STEPS = 50
#: Settings a provider is built from: a change to one of them builds a new provider. Every
#: ``provider.*`` key (``provider.openaiStrict``, and any a new provider adds) but the context
#: window, which sizes the auto mode decision, not the provider.
PROVIDER_KEYS = tuple(
    k for k in KEYS_BY_NAME if k.startswith("provider.") and k not in ("provider.contextWindow", "provider.maxTools")
)  # read per request


class SessionNotFound(LookupError):
    """``--resume ID`` named no transcript."""


class SessionInUse(SessionNotFound):
    """``--resume ID`` named a session another toolscout has open (a :class:`SessionNotFound`,
    so every caller that refuses a bad ``--resume`` refuses this one the same way)."""


@dataclass(frozen=True)
class TurnOutcome:
    """How :meth:`Session.send` ended: final ``text``; ``cancelled``; ``error`` (for people)."""

    turn: int
    text: str = ""
    cancelled: bool = False
    error: str | None = None
    stop_reason: str | None = None


class Session(RequestBuilder, ManualDriver, EventSource):
    """One conversation with a model (or with the person, offline) over an engine's tools.

    Args:
        engine: the :class:`~toolscout.core.engine.facade.Engine` (catalog, search, executor).
        settings: defaults to ``engine.settings``.
        provider: the model provider; default from settings and environment
            (:func:`~.providers.create_provider`, may raise ``ProviderConfigError``).
        asker: ``async asker(tool, params) -> "allow_once" | "always" | "deny"`` for tools that
            need permission; None refuses them with a message naming the rule to add.
        strategy: ``execute-proxy`` or ``stub`` (default: setting ``session.strategy``).
        session_id: id of a new session (default: generated). persist: write the JSONL transcript.
        max_tokens: output cap per model request (tokens).
    """

    def __init__(
        self,
        engine: Engine,
        *,
        settings: Settings | None = None,
        provider: Provider | None = None,
        asker: Asker | None = None,
        strategy: str | None = None,
        session_id: str | None = None,
        persist: bool = True,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.engine = engine
        self.settings = settings if settings is not None else engine.settings
        self.provider: Provider = provider if provider is not None else create_provider(self.settings)
        self.strategy = strategy or self.settings["session.strategy"]
        self.id = session_id or new_session_id()
        self.max_tokens = max_tokens
        self.messages: list[dict[str, Any]] = []
        self.projection: Projection | None = None
        self.mode_decision: ModeDecision | None = None
        self.native_choice: NativeChoice | None = None
        self.store = (
            TranscriptStore(sessions_dir() / f"{self.id}.jsonl", lambda text: engine.warn(text, "transcript"))
            if persist
            else None
        )
        self._listeners = []
        self._loaded: set[str] = set()
        engine.use_project_usage()  # tools run in this project's sessions rank a little higher
        self.router = ToolRouter(engine, self.emit, asker, self._loaded, int(self.settings["toolSearch.maxResults"]))
        self.router.result_cap = lambda call_id, text: cap_result(  # before the model or transcript sees it
            text, limit=int(self.settings["tools.maxResultTokens"]), folder=results_root() / self.id, name=call_id
        )
        self.router.record_search = lambda call_id, result: self._record(
            {"type": "search", "call_id": call_id, "result": result.to_record()}
        )
        #: ToolSearch call id → its result as recorded (a resumed session's, for showing them).
        self.saved_searches: dict[str, dict[str, Any]] = {}
        self.prefetch = Prefetcher(engine, self.settings, self._is_deferred, self.emit)
        self.offline_recommendations: list[Recommendation] = []
        self.turn = 0
        self.meter = CacheMeter()
        self._load_mark = 0
        self._task: asyncio.Task[Any] | None = None
        self._meta_written = False

    def apply_settings(self, settings: Settings) -> list[str]:
        """Run with ``settings`` from the next request on: recommendations, the strategy (until
        the first request fixes the projection), a new provider when ``provider.*`` changed;
        then the engine applies its part and emits ``SettingsChanged``
        (:meth:`Engine.apply_settings`). Tool search switched on (``toolSearch.enabled`` →
        ``true``) after an inline first request switches to deferral at once, announced
        (:func:`.modes.may_switch`); during a turn, before its next request.

        Returns:
            Problems worth telling the person (a provider that cannot be created yet keeps the
            old one); the settings are applied anyway.
        """
        old, self.settings = self.settings, settings
        self.prefetch.apply_settings(settings)
        if self.projection is None:
            self.strategy = settings["session.strategy"]  # fixed once the first request is built
        problems: list[str] = []
        if any(old.get(k) != settings.get(k) for k in PROVIDER_KEYS):
            try:
                self.provider = create_provider(settings)
            except Exception as exc:  # a missing key or SDK: keep talking to the old provider
                problems.append(str(exc))
        self.engine.apply_settings(settings)
        if self.projection is not None and settings.mode == "tst" != old.mode and not self.busy:
            self._sync_projection()  # switched on: if inline so far, defer now (the one announced cache break)
        return problems

    @property
    def asker(self) -> Asker | None:
        """Asks the person about tools that need permission (None: they are refused); given
        when the session is built (``Session(..., asker=...)``), never replaced."""
        return self.router.asker

    # -- public state ---------------------------------------------------------------------
    @property
    def offline(self) -> bool:
        """True when no model is configured and the person drives."""
        return self.provider.name == OFFLINE

    @property
    def busy(self) -> bool:
        """True while a turn or a manual tool call is running."""
        return self._task is not None and not self._task.done()

    @property
    def recommendations(self) -> list[Recommendation]:
        """Tools to offer the person now: the offline search's hits, else the latest prefetch."""
        return list(self.offline_recommendations if self.offline else self.prefetch.latest)

    @property
    def loaded_tools(self) -> set[str]:
        """Deferred tools whose schemas were delivered this session (search, gate or a call)."""
        return set(self._loaded)

    @property
    def tool_calls(self) -> dict[str, int]:
        """Tool name → calls started this session (the real tool, never the ExecuteTool proxy)."""
        return dict(self.router.calls)

    @property
    def usage_log(self) -> list[UsageReported]:
        """One usage event per model request, in order."""
        return self.meter.log

    def cache_stats(self) -> dict[str, Any]:
        """Session totals: requests, prefix hits and ratio, and token sums (tokens)."""
        return self.meter.totals()

    # -- running --------------------------------------------------------------------------
    async def send(self, text: str) -> TurnOutcome:
        """Run one turn for the user's ``text`` and return how it ended (never raises for
        provider errors or cancellation via :meth:`cancel`; those are in the outcome).

        Raises:
            RuntimeError: a turn is already running.
        """
        return await self._exclusive(self._turn_body(text))

    def cancel(self) -> bool:
        """Interrupt the running turn or tool call; True if something was running."""
        if self.busy:
            assert self._task is not None
            self._task.cancel()
            return True
        return False

    async def close(self) -> None:
        """Cancel whatever runs and close the transcript."""
        self.prefetch.cancel()
        if self.cancel() and self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        if self.store is not None:
            self.store.close()

    async def _exclusive(self, body: Coroutine[Any, Any, T]) -> T:
        if self.busy:
            body.close()
            raise RuntimeError("a turn is already running; cancel it or wait for it to finish")
        task = self._task = asyncio.get_running_loop().create_task(body)
        try:
            # Shielded so that :meth:`cancel` (which cancels ``task``) ends in an outcome, while
            # cancelling the *caller* still propagates, after the turn has been wound up cleanly.
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise
        finally:
            self._task = None

    async def _turn_body(self, text: str) -> TurnOutcome:
        self.turn += 1
        turn = self.turn
        self.prefetch.cancel()
        self._record({"type": "event", "name": "turn_start", "turn": turn})
        first = not any(m["role"] == "user" for m in self.messages)
        try:
            self._append_user([{"type": "text", "text": text}])
            self.emit(UserMessageAdded(text, turn))
            if self.offline:
                answer, stop = await self._offline_search(text, turn), None
            else:
                if first and self.prefetch.on_first_message:
                    self.prefetch.start(text, turn, self._loaded)
                answer, stop = await self._model_loop(turn)
        except asyncio.CancelledError:
            self._repair(CANCELLED_TEXT)
            self._record({"type": "event", "name": "turn_cancelled", "turn": turn})
            self.emit(TurnCancelled(turn))
            return TurnOutcome(turn, cancelled=True)
        except ProviderError as exc:
            self._repair(CRASHED_TEXT)
            self.emit(SessionError(str(exc), "provider"))
            return TurnOutcome(turn, error=str(exc))
        self._record({"type": "event", "name": "turn_end", "turn": turn})
        self.emit(TurnFinished(turn, answer, stop))
        return TurnOutcome(turn, answer, stop_reason=stop)

    async def _model_loop(self, turn: int) -> tuple[str, str | None]:
        for _ in range(MAX_STEPS):
            response = await self._call_model(turn)
            names = set(self.projection.names) if self.projection else set()
            if self.projection is not None and admit_invented(self.projection, response.content, self.engine.catalog):
                self._record({"type": "tools_appended", "tools": self.projection.tools[-1:]})
                names.add(EXECUTE_TOOL)
            blocks = [normalize_tool_use(b, names, unknown_as_text=True) for b in response.content]
            if not blocks:  # APIs reject empty assistant messages in history
                blocks = [{"type": "text", "text": "(no response)"}]
            self._append({"role": "assistant", "content": blocks})
            text = "".join(b["text"] for b in blocks if b["type"] == "text")
            uses = [b for b in blocks if b["type"] == "tool_use"]
            self.emit(AssistantMessageDone(text, len(uses), turn, response.stop_reason))
            self.prefetch.start(query_text(self.messages), turn, self._loaded)
            if not uses:
                return text, response.stop_reason
            results = await self._run_tools(uses)
            if self.router.sibling_notes:  # native: beside the tool_results, never inside them
                results.append({"type": "text", "text": " ".join(self.router.sibling_notes)})
                self.router.sibling_notes.clear()
            self._append_user(results)
        return f"Stopped after {MAX_STEPS} model requests in one turn.", "max_steps"

    async def _call_model(self, turn: int) -> Any:
        request = self.build_request()
        assert self.projection is not None
        check_request(request.tools, request.messages, self.projection.max_tools)
        # The tool calls of this request's answer are judged by what it carried: a tool sent with
        # its full schema runs on a direct call, the gate only holds back tools it deferred.
        self.router.sent_full = frozenset(self.projection.full_names)
        self.meter.measure(self.projection.prefix_hash(), self.router.load_texts[self._load_mark :])
        self._load_mark = len(self.router.load_texts)
        partial: list[str] = []

        def on_text(delta: str) -> None:
            partial.append(delta)
            self.emit(AssistantTextDelta(delta, turn))

        self.router.native = self.projection.strategy == NATIVE
        # Anthropic loads by reference anywhere; OpenAI's Responses only through tool_search, so
        # there the gate's answer stays the portable one (the definition as text).
        self.router.gate_by_reference = self.router.native and self.provider.name == "anthropic"
        try:
            try:
                response = await self.provider.complete(request, on_text)
            except ProviderError as exc:
                if not self.fall_back_to_portable(exc.status, str(exc)):
                    raise
                request = self.build_request()
                check_request(request.tools, request.messages, self.projection.max_tools)
                self.router.native = False
                response = await self.provider.complete(request, on_text)
        except asyncio.CancelledError:
            if "".join(partial).strip():  # keep what the person already saw
                self._append({"role": "assistant", "content": [{"type": "text", "text": "".join(partial)}]})
            raise
        event = self.meter.report(turn, response.usage)
        self._record(usage_record(event))
        self.emit(event)
        return response

    async def _run_tools(self, uses: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Run every tool_use of one message concurrently; results keep the blocks' order."""
        tasks = [asyncio.ensure_future(self.router.run(u)) for u in uses]
        try:
            await asyncio.gather(*tasks, return_exceptions=True)
        except asyncio.CancelledError:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._append_user([self._result_of(u, t, CANCELLED_TEXT) for u, t in zip(uses, tasks, strict=True)])
            raise
        return [self._result_of(u, t, CANCELLED_TEXT) for u, t in zip(uses, tasks, strict=True)]

    @staticmethod
    def _result_of(use: dict[str, Any], task: asyncio.Future[Any], fallback: str) -> dict[str, Any]:
        if task.done() and not task.cancelled() and task.exception() is None:
            block: dict[str, Any] = task.result()[0]
            return block
        if task.done() and not task.cancelled():
            fallback = f"The call failed inside toolscout: {task.exception()!r}"
        return {"type": "tool_result", "tool_use_id": use["id"], "content": fallback, "is_error": True}

    # -- transcript -----------------------------------------------------------------------
    def _append_user(self, blocks: list[dict[str, Any]]) -> None:
        """Append a user message: tool results first, then reminders, then the person's text."""
        results = [b for b in blocks if b.get("type") == "tool_result"]
        others = [b for b in blocks if b.get("type") != "tool_result"]
        self._append({"role": "user", "content": results + self._reminders(consume=True) + others})

    def _append(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self._record({"type": "message", "message": message})

    def _repair(self, reason: str) -> None:
        missing = interrupted_results(self.messages, reason)
        if missing:
            self._append({"role": "user", "content": missing})

    def _record(self, record: dict[str, Any]) -> None:
        if self.store is None:
            return
        if not self._meta_written:
            self._meta_written = True
            self.store.append(
                {
                    "type": "meta",
                    "id": self.id,
                    "strategy": self.strategy,
                    "provider": self.provider.name,
                    "model": self.provider.model or None,
                    "cwd": str(self.engine.project_dir),
                }
            )
        self.store.append(record)

    # -- resume ---------------------------------------------------------------------------
    @classmethod
    def resume(cls, engine: Engine, session_id: str | None = None, **kwargs: Any) -> Session:
        """Continue a saved session (``session_id`` or a unique prefix; None: the most recent).

        The saved projection is reused (same bytes, so the cache keeps hitting); discovered and
        announced sets are rebuilt from history; tool calls a crash left without a result get an
        "interrupted" result appended.

        Raises:
            SessionNotFound: no transcript matches.
        """
        path = find_transcript(session_id)
        if path is None:
            raise SessionNotFound(
                f"no saved session matches {session_id!r}" if session_id else "there is no saved session to resume"
            )
        store = TranscriptStore(path, lambda text: engine.warn(text, "transcript"))
        try:
            store.claim()  # one writer per transcript, before the repair below writes to it
        except TranscriptBusy as exc:
            holder = f"another toolscout (pid {exc.pid})" if exc.pid else "another toolscout"
            raise SessionInUse(f"session {path.stem} is open in {holder}; resume it there or start a new one") from None
        except OSError:
            pass  # the first append reports it once; the session goes on unsaved
        saved = load_for_resume(path) if store.held else load_transcript(path)  # no repair of a file it cannot write
        for warning in saved.warnings:
            engine.warn(warning, "resume")
        kwargs["strategy"] = kwargs.get("strategy") or saved.meta.get("strategy")
        session = cls(engine, session_id=saved.session_id, **kwargs)
        if session.store is not None:
            session.store = store
        else:
            store.close()
        session._meta_written = True
        session.messages = list(saved.messages)
        session.saved_searches = dict(saved.searches)
        session.projection = saved.projection
        if session.projection is not None:
            session.strategy = session.projection.strategy
            engine.catalog.freeze()
        state = session._history_state()
        session._loaded.update(state.discovered)
        session.prefetch.remember([*state.recommended, *state.discovered])
        session.turn = sum(
            1
            for m in saved.messages
            if m["role"] == "user"
            and any(
                b.get("type") == "text" and not str(b.get("text", "")).startswith("<system-reminder>")
                for b in message_blocks(m)
            )
        )
        session._repair(CRASHED_TEXT)
        return session
