"""What the session's next model request carries: the projection (fixed on the first request, late
tools appended, switched once from inline to deferral in auto mode) and the reminders prepended to
a user message (announcements of deferred tools, server notes, discovery recommendations).

A mixin of :class:`~.session.Session`, kept apart so the conversation loop stays readable; it
reads the session's state and records through ``_record``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..models import ToolSpec
from ..settings.layers import Settings
from ..tokens import ModeDecision
from .events import AnnouncementSent, ToolSearchSwitched
from .modes import (
    decide,
    fitted_projection,
    limit_warning,
    may_switch,
    rebuilt_notice,
    session_limit,
    switch_notice,
    switched_projection,
)
from .native import NativeChoice, choose, is_native_refusal, portable_history, remember_refusal
from .prefetch import Prefetcher
from .projection import DEFAULT_STRATEGY, INLINE, NATIVE, Projection
from .providers import ModelRequest, Provider
from .reminders import (
    HistoryState,
    delta_announcement,
    discovery_reminder,
    full_announcement,
    rebuild_state,
    unlisted_announcement,
)
from .server_notes import server_notes

if TYPE_CHECKING:
    from ..engine.facade import Engine


class RequestBuilder:
    """Builds the session's requests (see the module docstring).

    Relies on the session's ``engine``, ``settings``, ``provider``, ``strategy``, ``max_tokens``,
    ``messages``, ``projection``, ``mode_decision``, ``prefetch``, ``turn``, ``_loaded``, ``emit``
    and ``_record``.
    """

    engine: Engine
    settings: Settings
    provider: Provider
    strategy: str
    max_tokens: int
    messages: list[dict[str, Any]]
    projection: Projection | None
    mode_decision: ModeDecision | None
    prefetch: Prefetcher
    turn: int
    _loaded: set[str]
    native_choice: NativeChoice | None
    emit: Callable[[Any], None]
    _record: Callable[[dict[str, Any]], None]

    def build_request(self, extra_user_text: str | None = None) -> ModelRequest:
        """The next request (fixing the projection on first use; stub mode appends new stubs).

        Args:
            extra_user_text: preview only: a user message (with its reminders) appended to a copy
                of the history, as the first request for that message would carry it.
        """
        self._sync_projection()
        assert self.projection is not None
        messages = self.messages
        if extra_user_text is not None:
            blocks = [*self._reminders(consume=False), {"type": "text", "text": extra_user_text}]
            messages = [*messages, {"role": "user", "content": blocks}]
        return ModelRequest(
            self.provider.model or "", self.projection.system, self.projection.tools, messages, self.max_tokens
        )

    def _sync_projection(self) -> None:
        """Fix the projection on first use; later, append late tools and, in auto mode, switch
        from inline to deferral once if the inline schemas (with the last known sizes of servers
        still connecting) now cross the threshold, so no request ever exceeds it. The provider's
        tool limit works the same way (:mod:`.modes`): no request carries more tools than it,
        even after the provider or ``provider.maxTools`` changed or a session resumed."""
        catalog = self.engine.catalog
        if self.projection is None:
            self.mode_decision = self._decide_mode()
            self.native_choice = self._choose_native()
            self.projection = fitted_projection(
                catalog, self.strategy, self.mode_decision, native=self.native_choice.native
            )
            self._record_projection()
            self._warn_limit()
            return
        limit = session_limit(self.provider, self.settings)
        over = limit.max_tools is not None and len(self.projection.tools) > limit.max_tools
        decision = self._decide_mode() if over or may_switch(self.projection, self.settings, limit) else None
        if decision is not None and (decision.defer or over):
            notice = rebuilt_notice(len(self.projection.tools), limit, decision) if over else switch_notice(decision)
            self.native_choice = self._choose_native()
            self.projection = switched_projection(
                self.projection, self.messages, catalog, self.strategy, decision, native=self.native_choice.native
            )
            self.mode_decision = decision
            self._record({"type": "event", "name": "tool_search_switched", "turn": self.turn, "notice": notice})
            self._record_projection()
            self.emit(ToolSearchSwitched(notice, decision.reason, self.turn))
            self._warn_limit()
            return
        catalog.freeze()
        appended = self.projection.sync(catalog)
        if appended:
            self._record({"type": "tools_appended", "tools": appended})

    def _record_projection(self) -> None:
        assert self.projection is not None and self.mode_decision is not None
        native = self.native_choice
        self._record(
            {
                "type": "projection",
                **self.projection.to_json(),
                "mode": {
                    "mode": self.mode_decision.mode,
                    "defer": self.mode_decision.defer,
                    "reason": self.mode_decision.reason,
                },
                "native": {"native": native.native, "reason": native.reason} if native else None,
            }
        )

    def _warn_limit(self) -> None:
        assert self.projection is not None and self.mode_decision is not None
        warning = limit_warning(self.mode_decision, self.projection, self.engine.catalog)
        if warning is not None:
            self.engine.warn(warning, "provider limit")

    def request_body(self, extra_user_text: str | None = None) -> dict[str, Any]:
        """The exact wire body the provider would send for :meth:`build_request`."""
        return self.provider.body(self.build_request(extra_user_text))

    def _decide_mode(self) -> ModeDecision:
        return decide(self.engine, self.settings, self.provider, self.strategy)

    def fall_back_to_portable(self, status: int | None, message: str) -> bool:
        """After the endpoint refused a native request: if ``message`` (HTTP ``status``) names a
        native field, remember it for this base URL, re-project on the portable path (tools the
        history called keep their definitions; ``tool_reference`` results become text) and say
        so once. True if the request should be sent again."""
        if self.projection is None or self.projection.strategy != NATIVE or not is_native_refusal(status, message):
            return False
        base_url = self.provider.base_url
        remember_refusal(base_url, message)
        self.native_choice = NativeChoice(
            False, f"{base_url or self.provider.name} refused native tool search ({message[:120]}): portable path"
        )
        self.messages[:] = portable_history(self.messages)
        plain = Projection(
            self.projection.strategy,
            self.projection.system,
            [{k: v for k, v in d.items() if k != "defer_loading"} for d in self.projection.tools],
        )
        assert self.mode_decision is not None
        self.projection = switched_projection(
            plain, self.messages, self.engine.catalog, self.strategy, self.mode_decision
        )
        notice = (
            "The endpoint refused provider-native tool search, so this session uses ToolSearch + "
            "ExecuteTool from now on (one prompt-cache miss; remembered for this endpoint)."
        )
        self._record(
            {"type": "event", "name": "native_fallback", "turn": self.turn, "notice": notice, "error": message[:300]}
        )
        self._record_projection()
        self.emit(ToolSearchSwitched(notice, self.native_choice.reason, self.turn))
        return True

    def _choose_native(self) -> NativeChoice:
        return choose(
            str(self.settings["toolSearch.native"]), self.provider.name, self.provider.model, self.provider.base_url
        )

    @property
    def call_wording(self) -> str:
        """How reminders say to call a loaded deferred tool: ``stub`` (directly by name, also
        native) or ``execute-proxy`` (through ExecuteTool)."""
        directly = self.projection is not None and self.projection.strategy in ("stub", NATIVE)
        return "stub" if directly else DEFAULT_STRATEGY  # the default is the ExecuteTool proxy

    def _history_state(self) -> HistoryState:
        stub = self.projection if self.projection is not None and self.projection.strategy == "stub" else None
        return rebuild_state(self.messages, stub.initial_deferred if stub else None)

    def _is_deferred(self, tool: ToolSpec) -> bool:
        if self.projection is not None:
            return tool.name not in self.projection.full_names
        return self.engine.catalog.is_deferred(tool)

    def _reminders(self, *, consume: bool) -> list[dict[str, Any]]:
        """Reminder text blocks for the next user message: announcements, server notes
        (instructions, servers still connecting), then recommendations."""
        self._sync_projection()  # may switch to deferral: then this message carries the announcement
        assert self.projection is not None
        inline = self.projection.strategy == INLINE
        notes = server_notes(self.engine, self.settings, self.messages, inline=inline)
        if inline:  # nothing is deferred: no announcements, no discovery reminders
            return [{"type": "text", "text": t} for t in notes]
        state = self._history_state()
        current = self.projection.deferred(self.engine.catalog)
        texts: list[str] = []
        budget = int(self.settings["toolSearch.announceBudget"])
        if not state.full_sent:
            texts.append(full_announcement(current, self.call_wording, budget))
            if consume:
                self.emit(AnnouncementSent(tuple(t.name for t in current), (), True))
        else:
            unlisted = {t.name for t in self.projection.unlisted(self.engine.catalog)}
            added = [t for t in current if not state.covers(t.name) and t.name not in unlisted]
            beyond = [t for t in current if not state.covers(t.name) and t.name in unlisted]
            removed = state.gone({t.name for t in current})
            if added or removed:
                texts.append(delta_announcement(added, removed, budget))
            if beyond:  # stub mode, past the tool limit: no stubs, reached through ExecuteTool
                texts.append(unlisted_announcement(beyond, self.projection.max_tools, budget))
            if consume and (added or removed or beyond):
                self.emit(AnnouncementSent(tuple(t.name for t in [*added, *beyond]), tuple(removed), False))
        texts.extend(notes)
        recs = self.prefetch.take() if consume else list(self.prefetch.pending)
        recs = [
            r
            for r in recs
            if r.name not in state.discovered
            and r.name not in self._loaded
            and r.name not in state.recommended
            and self.engine.catalog.get(r.name) is not None
        ]
        if recs:
            texts.append(discovery_reminder([(r.name, r.description) for r in recs], self.call_wording))
        return [{"type": "text", "text": t} for t in texts]
