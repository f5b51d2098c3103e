"""The UI's one owner of the engine and the session: :class:`SessionController`.

It starts and stops the engine, builds a new session for "new conversation", carries out what
the screens ask for (a turn, an interrupt, loading or running a tool, a setting) and turns core
events into the past-tense messages of :mod:`toolscout.tui.messages` (through
:class:`~toolscout.tui.bridge.Bridge`), posted to one target: the main screen.

Why one object: the app and the main screen used to share this role and call each other; now
requests go up as messages (the app hands them here), facts come down as messages, and what the
session knows (loaded tools, tool calls, cache figures) is read from the session, never kept
again in the UI. The controller imports no screen module: the app hands it the permission prompt
(:func:`toolscout.tui.screens.permission.ask`), so no screen it could open imports it back.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump

from toolscout.core.engine import events as core_events
from toolscout.core.engine.context import ContextReport
from toolscout.core.models import ServerState, ToolSpec
from toolscout.core.policy.permissions import AskAnswer, Asker
from toolscout.core.session.projection import INLINE
from toolscout.core.session.providers.limits import tool_limit
from toolscout.core.settings.layers import (
    SettingNotAppliedError,
    Settings,
    UnsavedSettingError,
    change_user_setting,
)
from toolscout.core.settings.provider_registry import OFFLINE

from . import messages as m
from .bridge import Bridge
from .text import tildify
from .widgets.usage import CacheStats

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine
    from toolscout.core.session.session import Session
    from toolscout.core.tokens import ModeDecision, ToolLimit

log = logging.getLogger(__name__)

#: Builds the app's session given the permission asker it must use (the controller's prompt).
SessionFactory = Callable[[Asker], "Session"]
#: Shows the permission prompt over the app for a tool and its arguments and waits for the
#: answer (:func:`toolscout.tui.screens.permission.ask`, which the app passes in).
PermissionPrompt = Callable[[App[Any], "Engine", ToolSpec, dict[str, Any]], Awaitable[AskAnswer]]

#: Seconds the app waits for the engine (or a replaced session) to shut down.
STOP_TIMEOUT_S = 5.0
#: ``Settings.sources`` value of a setting changed for this session only (``/toolsearch on``).
SESSION_SOURCE = "this session (/toolsearch on)"
#: What the chat says when tool search is switched on before the first request.
TOOL_SEARCH_ON = (
    "Tool search is on for this session (not saved; F5 → Tool search keeps it): deferred tools "
    "are announced by name and found with ToolSearch."
)


class SessionController:
    """Owns ``engine`` and ``session`` for the app; reports to the main screen by messages.

    Args:
        app: runs the controller's workers, notifications and the permission prompt.
        settings: resolved settings (replaced by changes from the settings screen).
        engine: the core engine; started by :meth:`connect` unless ``start_engine`` is False.
        session: a session built by the caller, with its own asker (tests), or None (then only
            slash commands work, unless ``new_session`` builds one).
        new_session: builds the session here, given :meth:`ask_permission` as its asker (the
            CLI's way: permission prompts go through the modal); the controller then runs with
            the settings that session was built with (an offline fallback, offline tool search).
        start_engine: False when the caller has already started the engine.
        prompt: shows the permission prompt (the app passes
            :func:`~toolscout.tui.screens.permission.ask`); None: every tool that asks is refused,
            as a session with no asker refuses them.

    Raises:
        Whatever ``new_session`` raises (``ProviderError``, ``SessionNotFound``), before the app runs.
    """

    def __init__(
        self,
        app: App[Any],
        settings: Settings,
        engine: Engine,
        session: Session | None = None,
        *,
        new_session: SessionFactory | None = None,
        start_engine: bool = True,
        prompt: PermissionPrompt | None = None,
    ) -> None:
        self.app = app
        self._prompt = prompt
        self.engine = engine
        if new_session is not None:
            session = new_session(self.ask_permission)
            settings = session.settings
        self.settings = settings
        self.session = session
        self.start_engine = start_engine
        self._target: MessagePump | None = None
        self._bridge: Bridge | None = None
        #: ``session.strategy`` as changed in the settings screen (applies to the next conversation).
        self._strategy_setting: str | None = None
        self._heap_frozen = False
        self._unsubscribe: Callable[[], Any] | None = None

    # -- lifetime ----------------------------------------------------------------------------
    def post(self, message: Message) -> None:
        """Post ``message`` to the target (dropped before :meth:`connect`)."""
        if self._target is not None:
            self._target.post_message(message)

    def connect(self, target: MessagePump) -> None:
        """Start reporting to ``target`` (the main screen, mounted): subscribe to the engine and
        session, and start the engine after the first paint (loading catalogs can index, and
        embed, thousands of tools on this loop)."""
        self._target = target
        self._bridge = Bridge(target, self.engine, self.session)
        self._bridge.connect()
        self._unsubscribe = self.engine.subscribe(self._on_engine_event)
        if self.start_engine:
            self.app.call_after_refresh(lambda: self.app.run_worker(self._start(), group="engine", exit_on_error=False))

    async def _start(self) -> None:
        try:
            await self.engine.start()
        except Exception as exc:
            log.exception("engine start failed")
            self.post(m.ErrorReported(f"starting the engine failed: {exc}"))
        finally:
            self._freeze_startup_heap()
            self.post(m.EngineStarted())

    def _freeze_startup_heap(self) -> None:
        """Keep what start-up built (catalog, search index, widgets) out of full garbage
        collections from now on; :meth:`stop` hands it back.

        Why: with ~1,000 tools the heap holds ~175,000 tracked objects, and a full collection
        walks all of them: ~90 ms with the app frozen, a few times a minute while typing in live
        scoring (the long tail of keystroke → table latency). Frozen objects are still freed by
        reference counting; only cycles among them wait for the unfreeze.
        """
        if not self._heap_frozen:
            gc.freeze()
            self._heap_frozen = True

    def _on_engine_event(self, event: object) -> None:
        if isinstance(event, core_events.CatalogChanged):
            self.refreeze_heap()

    def refreeze_heap(self) -> None:
        """While servers connect, also keep what each catalog change built (their tools, search
        terms, tree nodes) out of later collections: with the real 47 servers, collections
        walking that growing heap stopped every thread for 3.7 s in all (up to 0.57 s at once)
        during the connect. Only while servers connect, so that cycles made later (a
        ``list_changed`` storm replacing subtrees) are still collected."""
        if self._heap_frozen and self.engine.pending_servers():
            gc.freeze()

    async def stop(self) -> None:
        """Stop reporting, close the session and (if it started it) stop the engine, each
        within :data:`STOP_TIMEOUT_S`."""
        if self._heap_frozen:
            gc.unfreeze()
            self._heap_frozen = False
        if self._bridge is not None:
            self._bridge.disconnect()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self.session is not None:
            try:
                await asyncio.wait_for(self.session.close(), STOP_TIMEOUT_S)
            except (TimeoutError, Exception):
                log.warning("session did not close cleanly", exc_info=True)
        if self.start_engine:
            try:
                await asyncio.wait_for(self.engine.stop(), STOP_TIMEOUT_S)
            except (TimeoutError, Exception):
                log.warning("engine did not stop cleanly", exc_info=True)

    # -- facts (read from the session; nothing here is a second ledger) ---------------------
    @property
    def provider_name(self) -> str:
        """The session's provider (``anthropic``, ``openai``, ``offline``) or the setting."""
        if self.session is not None:
            return self.session.provider.name
        return str(self.settings["provider.name"])

    @property
    def model_name(self) -> str:
        """The model the session talks to, or the setting ('' when unset)."""
        model = (self.session.provider.model if self.session is not None else None) or self.settings["provider.model"]
        return "" if model in (None, "offline") else str(model)

    @property
    def offline(self) -> bool:
        """True when no model runs: the person picks tools and fills in their arguments."""
        return self.provider_name == OFFLINE

    @property
    def loaded_tools(self) -> set[str]:
        """Deferred tools loaded in this conversation (empty with no session)."""
        return self.session.loaded_tools if self.session is not None else set()

    @property
    def tool_calls(self) -> dict[str, int]:
        """Tool name → calls in this conversation (empty with no session)."""
        return self.session.tool_calls if self.session is not None else {}

    def cache_stats(self) -> CacheStats:
        """The session's prompt-cache figures so far (tokens, requests), from its usage log."""
        log_ = self.session.usage_log if self.session is not None else []
        if not log_:
            return CacheStats()
        return CacheStats(
            sum(u.input_tokens for u in log_),
            sum(u.cache_read_tokens for u in log_),
            sum(u.cache_creation_tokens for u in log_),
            sum(u.output_tokens for u in log_),
            len(log_),
            log_[-1].hit_ratio,
        )

    def mode_decision(self, report: ContextReport | None = None) -> ModeDecision | None:
        """The session's mode decision once its first request is built, else ``report``'s (the
        verdict F4 shows as "deferral on/off"); None when neither is known."""
        decision = self.session.mode_decision if self.session is not None else None
        return decision if decision is not None or report is None else report.decision

    def context_report(self, loaded: set[str] | None = None, calls: dict[str, int] | None = None) -> ContextReport:
        """The token report for this conversation (``loaded``/``calls`` default to the session's;
        pass copies when computing in a thread). Counts every schema: slow, run it off the loop."""
        provider = self.session.provider if self.session is not None else None
        return self.engine.context_report(
            loaded_names=self.loaded_tools if loaded is None else loaded,
            usage_counts=self.tool_calls if calls is None else calls,
            model=self.model_name or None,
            tool_limit=self.tool_limit(),
            provider=provider.name if provider and provider.name != "offline" else None,
            base_url=provider.base_url if provider else None,
        )

    def tool_limit(self) -> ToolLimit | None:
        """The most tools one request to the session's provider may carry (None: no session)."""
        if self.session is None:
            return None
        return tool_limit(self.session.provider.name, self.session.settings)

    # -- settings ----------------------------------------------------------------------------
    def apply_setting(self, key: str, value: Any) -> Settings:
        """Validate and persist one setting (:func:`~toolscout.core.settings.layers.change_user_setting`),
        then apply it to the session and engine, whose ``SettingsChanged`` updates the widgets.

        Raises:
            UnsavedSettingError: the user file could not be parsed and was left as is; the
                change is applied for this session only. SettingNotAppliedError: saved, but the
                session could not take it (a provider that cannot be created: it keeps the one it
                has). ValueError: invalid value or managed key. OSError: the file cannot be written.
        """
        try:
            self.settings = change_user_setting(self.settings, key, value)
        except UnsavedSettingError as exc:
            self.settings = exc.settings
            self._apply_settings("setting not saved")
            self.app.notify(str(exc), title="setting not saved", severity="warning", markup=False)
            raise
        if key == "session.strategy":
            self._strategy_setting = str(self.settings[key])
        problems = self._apply_settings(None)  # the settings screen shows them beside the field
        if problems:
            why = "; ".join(p.rstrip(".") for p in problems)
            raise SettingNotAppliedError(
                f"saved, but not applied: {why}; still using {self.provider_name}", self.settings
            )
        return self.settings

    def folder_trusted(self, settings: Settings) -> None:
        """The project folder was just approved: run with ``settings`` (its grants applied, this
        run's overrides kept) in the session and engine alike, and say so in the chat."""
        self.settings = settings
        self._apply_settings("folder trusted")
        self.post(
            m.NoticeReported(
                "This folder is now trusted: its project servers start and its permissions.allow rules apply.",
                "folder trust",
            )
        )

    def _apply_settings(self, problem_title: str | None) -> list[str]:
        """Run the session (or, without one, the engine) with :attr:`settings`; what it could not
        apply is returned, and also notified under ``problem_title`` unless that is None."""
        if self.session is None:
            self.engine.apply_settings(self.settings)
            return []
        problems = self.session.apply_settings(self.settings)
        if problem_title is not None:
            for problem in problems:
                self.app.notify(problem, title=problem_title, severity="warning", markup=False)
        return problems

    def switch_tool_search_on(self) -> None:
        """Tool search on for this session (not saved: F5 saves it), through the core's settings
        entry point (:meth:`Session.apply_settings <toolscout.core.session.session.Session.apply_settings>`):
        before the first request nothing is inline yet; after an inline one, the session switches to
        deferral at once and announces it (the one prompt-cache break it already knows)."""
        if self.settings["toolSearch.enabled"] == "true":
            self.post(
                m.NoticeReported("Tool search is already on: deferred tools are found with ToolSearch.", "/toolsearch")
            )
            return
        projection = self.session.projection if self.session is not None else None
        switching = projection is not None and projection.strategy == INLINE
        self.settings = self.settings.with_overrides({"toolSearch.enabled": "true"}, source=SESSION_SOURCE)
        self._apply_settings("tool search")
        if not switching:  # a switch after the first request announces itself (ToolSearchSwitched)
            self.post(m.NoticeReported(TOOL_SEARCH_ON, "/toolsearch"))

    # -- servers -----------------------------------------------------------------------------
    def reconnect_server(self, name: str) -> None:
        """Reconnect MCP server ``name`` (``/mcp reconnect NAME``, the palette) in a worker; the chat
        says it started and how it ended (connected with its tool count, or why not)."""
        self.app.run_worker(self._reconnect(name), group="reconnect", exit_on_error=False)

    async def _reconnect(self, name: str) -> None:
        if name not in self.engine.server_names:
            known = ", ".join(self.engine.server_names) or "none is configured"
            self.post(m.ErrorReported(f"/mcp reconnect: there is no server {name!r} (servers: {known})"))
            return
        self.post(m.NoticeReported(f"Reconnecting {name}…", "/mcp"))
        try:
            status = await self.engine.reconnect(name, wait=True)
        except (KeyError, RuntimeError) as exc:  # an invalid or unapproved entry
            self.post(m.ErrorReported(f"{name} was not reconnected: {exc}"))
            return
        if status.state is ServerState.CONNECTED:
            self.post(m.NoticeReported(f"{name} reconnected: {status.tool_count} tools", "/mcp"))
        else:
            self.post(
                m.ErrorReported(f"{name} did not reconnect ({status.state.value}): {status.error or 'no reason given'}")
            )

    def login_server(self, name: str) -> None:
        """Log in to remote MCP server ``name`` (``/mcp login NAME``, the palette) in a worker: the
        browser opens on the login page (the chat shows its URL), then the server reconnects with
        the new login. Only ever on the person's request: connecting never logs in."""
        self.app.run_worker(self._login(name), group="login", exclusive=True, exit_on_error=False)

    async def _login(self, name: str) -> None:
        from toolscout.core.mcp.login import LoginError, log_in

        config = self.engine.server_config(name)
        if config is None or not self.engine.can_reconnect(name):
            why = "there is no such server" if config is None else "its entry is invalid or not approved"
            self.post(m.ErrorReported(f"/mcp login: {name} cannot log in: {why}"))
            return
        try:
            status = await log_in(config, notify=lambda line: self.post(m.NoticeReported(line, "/mcp login")))
        except LoginError as exc:
            self.post(m.ErrorReported(str(exc)))
            return
        if status.state is not ServerState.CONNECTED:
            self.post(m.ErrorReported(f"not logged in to {name}: {status.error or status.state.value}"))
            return
        await self._reconnect(name)

    # -- the conversation --------------------------------------------------------------------
    def send(self, text: str) -> None:
        """Start a turn with ``text`` in a worker (group ``turn``); its events come back as messages."""
        if self.session is not None:
            self.app.run_worker(self._run_turn(self.session, text), group="turn", exclusive=True)

    async def _run_turn(self, session: Session, text: str) -> None:
        try:
            await session.send(text)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("turn failed")
            self.post(m.ErrorReported(f"turn failed: {exc}"))
            self.post(m.TurnEnded(cancelled=False))

    def interrupt(self) -> None:
        """Ask the session to stop the running turn or tool call (nothing runs: nothing happens)."""
        if self.session is not None:
            self.session.cancel()

    def new_conversation(self) -> None:
        """``/clear``: start a fresh conversation over the same engine; the screen hears
        :class:`~toolscout.tui.messages.ConversationStarted`.

        A new :class:`~toolscout.core.session.session.Session` replaces the current one (same
        provider, strategy and transcript setting); the old one is closed, and its transcript
        stays on disk so ``toolscout --resume ID`` can continue it. Tools loaded, usage counts,
        cache figures and recommendations start from zero (they live in the session). Refused
        while a turn runs.
        """
        old = self.session
        if old is not None and old.busy:
            self.app.notify(
                "A turn is running: wait for it, or press Esc to interrupt it, then /clear.",
                severity="warning",
                markup=False,
            )
            return
        if old is None:
            self.post(m.ConversationStarted("Chat cleared (there is no session to restart)."))
            return
        from toolscout.core.session.session import (
            Session,  # the session module loads the providers: on demand
        )

        new = Session(
            self.engine,
            settings=self.settings,
            provider=old.provider,
            strategy=self._strategy_setting or old.strategy,
            persist=old.store is not None,
            max_tokens=old.max_tokens,
            asker=self.ask_permission,
        )
        if self._bridge is not None:
            self._bridge.disconnect()
        self.session = new
        if self._target is not None:
            self._bridge = Bridge(self._target, self.engine, new)
            self._bridge.connect()
        self.app.run_worker(self._close(old), group="close-session", exit_on_error=False)
        saved = old.store.path if old.store is not None and old.store.path.exists() else None
        text = f"Started a new conversation (session {new.id}); the earlier messages are not part of it."
        if saved is not None:
            text += (
                f"\nThe previous one is saved in {tildify(str(saved))}; continue it with toolscout --resume {old.id}"
            )
        self.post(m.ConversationStarted(text))

    async def _close(self, session: Session) -> None:
        try:
            await asyncio.wait_for(session.close(), STOP_TIMEOUT_S)
        except (TimeoutError, Exception):
            log.warning("previous session did not close cleanly", exc_info=True)

    # -- tools the person picked ---------------------------------------------------------------
    def load_tool(self, name: str) -> None:
        """Load ``name`` for the model's next message (a ToolSearch ``select:`` the session
        records), in a worker (group ``tool``); a running turn refuses it with a notice."""
        self.app.run_worker(self._load_tool(name), group="tool", exclusive=True)

    async def _load_tool(self, name: str) -> None:
        if self.session is None:
            self.app.notify("this session cannot load tools on request", severity="warning", markup=False)
            return
        try:
            await self.session.load_tools([name])
        except RuntimeError as exc:  # a turn is running
            self.app.notify(str(exc), severity="warning", markup=False)
            return
        self.app.notify(f"{name} is loaded for your next message", title="tool added", markup=False)

    def run_tool(self, name: str, arguments: dict[str, Any]) -> None:
        """Run ``name`` with ``arguments`` as if the model had called it (permission prompt,
        validation, transcript), in a worker (group ``tool``); the screen is busy meanwhile
        (:class:`~toolscout.tui.messages.BusyChanged`)."""
        self.app.run_worker(self._run_tool(name, arguments), group="tool", exclusive=True)

    async def _run_tool(self, name: str, arguments: dict[str, Any]) -> None:
        self.post(m.BusyChanged(True))
        try:
            if self.session is not None:
                await self.session.run_tool(name, arguments)
            else:
                self.post(m.ToolCallStarted(f"manual-{name}", name, arguments))
                result = await self.engine.call_tool(
                    name, arguments, asker=self.ask_permission, call_id=f"manual-{name}"
                )
                self.post(m.ToolCallFinished(f"manual-{name}", result))
        finally:
            self.post(m.BusyChanged(False))

    # -- the permission prompt ---------------------------------------------------------------
    async def ask_permission(self, tool: ToolSpec, params: dict[str, Any]) -> AskAnswer:
        """The permission asker the session and engine call: shows the prompt and waits
        (:func:`~toolscout.tui.screens.permission.ask`); ``"deny"`` with no prompt.

        Returns:
            ``"allow_once"``, ``"always"`` or ``"deny"``.
        """
        if self._prompt is None:
            return "deny"
        return await self._prompt(self.app, self.engine, tool, params)
