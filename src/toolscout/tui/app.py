"""The Textual application: owns the engine/session lifetime, global keys and the command palette.

Screens and widgets get the engine and session through their constructors and learn about
changes from the bridge's messages. Calls into the session (a turn, a tool run, a cancel) go
through the few methods here so the screens stay free of session details.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from ..core.models import ToolSpec
from ..core.permissions import AskAnswer
from ..core.session.projection import INLINE
from ..core.settings import Settings, UnsavedSettingError, change_user_setting
from . import messages as m
from .bridge import Bridge
from .keyrouting import KeyRouting
from .resources import stylesheet_paths
from .screens.main import MainScreen
from .screens.permission import PermissionDecision, PermissionScreen
from .screens.settings import SettingsScreen
from .screens.slash import HELP
from .text import tildify
from .tool_picks import ToolPicks
from .widgets.chat import ErrorEntry, NoticeEntry
from .widgets.usage import UsagePanel

if TYPE_CHECKING:
    from ..core.engine import Engine
    from ..core.session.session import Session

log = logging.getLogger(__name__)

#: Seconds the app waits for the engine to shut down on exit.
STOP_TIMEOUT_S = 5.0
#: ``Settings.sources`` value of a setting changed for this session only (``/toolsearch on``).
SESSION_SOURCE = "this session (/toolsearch on)"


class ToolscoutApp(ToolPicks, KeyRouting, App[int]):
    """toolscout's full-screen app. Build it with :func:`toolscout.tui.factory.make_app`.

    Args:
        settings: resolved settings (changes from the settings screen replace them).
        engine: the core engine; started on mount unless ``start_engine`` is False.
        session: the agent session, or None (then only slash commands work).
        start_engine: False when the caller has already started the engine.
    """

    TITLE = "toolscout"
    CSS_PATH = stylesheet_paths()
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (110, "-wide")]
    COMMAND_PALETTE_BINDING = "ctrl+p"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "show_help", "Help", id="app.help"),
        Binding("f2", "show_panel('catalog')", "Catalog", id="app.catalog"),
        Binding("f3", "show_panel('scoring')", "Scoring", id="app.scoring"),
        Binding("f4", "show_panel('usage')", "Usage", id="app.usage"),
        Binding("f5", "open_settings", "Settings", id="app.settings"),
        Binding("ctrl+b", "toggle_sidebar", "Panel", id="app.sidebar"),
    ]

    def __init__(self, settings: Settings, engine: Engine, session: Session | None = None, *,
                 start_engine: bool = True) -> None:
        super().__init__()
        self.settings = settings
        self.engine = engine
        self.session = session
        self.start_engine = start_engine
        self.main_screen = MainScreen(engine, session)
        self.bridge = Bridge(self.main_screen, engine, session)
        #: ``session.strategy`` as changed in the settings screen (applies to the next conversation).
        self._strategy_setting: str | None = None
        self._heap_frozen = False

    # -- lifetime ----------------------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        return self.main_screen

    def on_mount(self) -> None:
        self.bridge.connect()
        if self.session is not None and self.session.asker is None:
            self.session.asker = self.ask_permission  # permission prompts go through the modal
        from .screens.trust import ask_folder_trust

        # an unapproved project folder: its servers wait for a yes
        ask_folder_trust(self, self.engine, lambda: self.settings, self.folder_trusted)
        if self.start_engine:
            # Paint first: loading catalogs can index (and embed) thousands of tools on this loop.
            self.call_after_refresh(self._start)

    @work(group="engine", exit_on_error=False)
    async def _start(self) -> None:
        try:
            await self.engine.start()
        except Exception as exc:
            log.exception("engine start failed")
            self.main_screen.post_message(m.ErrorReported(f"starting the engine failed: {exc}"))
        finally:
            self._freeze_startup_heap()
            self.main_screen.post_message(m.EngineStarted())

    def _freeze_startup_heap(self) -> None:
        """Keep what start-up built (catalog, search index, widgets) out of full garbage
        collections from now on; :meth:`on_unmount` hands it back.

        Why: with ~1,000 tools the heap holds ~175,000 tracked objects, and a full collection
        walks all of them: ~90 ms with the app frozen, a few times a minute while typing in live
        scoring (the long tail of keystroke → table latency). Frozen objects are still freed by
        reference counting; only cycles among them wait for the unfreeze.
        """
        if not self._heap_frozen:
            gc.freeze()
            self._heap_frozen = True

    def refreeze_heap(self) -> None:
        """While servers connect, also keep what each catalog change built (their tools, search
        terms, tree nodes) out of later collections: with the real 47 servers, collections
        walking that growing heap stopped every thread for 3.7 s in all (up to 0.57 s at once)
        during the connect. Only while servers connect, so that cycles made later (a
        ``list_changed`` storm replacing subtrees) are still collected."""
        if self._heap_frozen and self.engine.pending_servers():
            gc.freeze()

    async def on_unmount(self) -> None:
        if self._heap_frozen:
            gc.unfreeze()
            self._heap_frozen = False
        self.bridge.disconnect()
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

    # -- what the status bar shows -----------------------------------------------------------
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
        return self.provider_name == "offline"

    # -- actions -----------------------------------------------------------------------------
    def action_show_panel(self, name: str) -> None:
        """Show and focus a side panel (catalog, scoring, usage); again hides it."""
        if self.screen is self.main_screen:
            self.main_screen.show_panel(name)

    def action_toggle_sidebar(self) -> None:
        """Show or hide the side panel."""
        if self.screen is self.main_screen:
            self.main_screen.toggle_sidebar()

    def action_show_help(self) -> None:
        """Show the help in the chat."""
        if self.screen is self.main_screen:
            self.main_screen.chat.add(NoticeEntry(HELP, title="help"))

    def action_open_settings(self) -> None:
        """Open the settings screen."""
        if not isinstance(self.screen, SettingsScreen):
            self.push_screen(SettingsScreen(self.settings, self.apply_setting))

    def action_interrupt_turn(self) -> None:
        """Interrupt the running turn (Esc)."""
        self.interrupt_turn()

    def action_clear_chat(self) -> None:
        """Start a new conversation (``/clear``)."""
        self.main_screen.run_command("/clear")

    def action_show_context(self) -> None:
        """Show token usage in the chat (/context)."""
        self.main_screen.run_command("/context")

    def action_show_servers(self) -> None:
        """Show server states in the chat (/mcp)."""
        self.main_screen.run_command("/mcp")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Catalog", "Show the deferred-tool catalog (F2)", lambda: self.action_show_panel("catalog"))
        yield SystemCommand("Live scoring", "Rank tools as you type a query (F3)",
                            lambda: self.action_show_panel("scoring"))
        yield SystemCommand("Token usage", "Tokens per server, mode decision, cache hits (F4)",
                            lambda: self.action_show_panel("usage"))
        yield SystemCommand("Toggle side panel", "Show or hide the side panel (ctrl+b)", self.action_toggle_sidebar)
        yield SystemCommand("Run tool…", "Pick any tool by name, fill in its arguments and run it",
                            self.action_run_tool)
        yield SystemCommand("Settings", "Recommendations, tool search, strategy, provider (F5)",
                            self.action_open_settings)
        yield SystemCommand("Help", "Slash commands and keys (F1)", self.action_show_help)
        yield SystemCommand("Context report", "Token usage in the chat (/context)", self.action_show_context)
        yield SystemCommand("Tool search on", "Defer tools and find them with ToolSearch, this session (/toolsearch on)",
                            self.switch_tool_search_on)
        yield SystemCommand("Servers", "MCP server states in the chat (/mcp)", self.action_show_servers)
        yield SystemCommand("New conversation", "Start over; the current one stays saved (/clear)",
                            self.action_clear_chat)
        yield SystemCommand("Interrupt", "Stop the running turn (Esc)", self.action_interrupt_turn)
        yield SystemCommand("Focus prompt", "Put the cursor in the prompt (ctrl+l)",
                            self.main_screen.action_focus_prompt)

    # -- settings ----------------------------------------------------------------------------
    def apply_setting(self, key: str, value: Any) -> Settings:
        """Validate and persist one setting (:func:`~toolscout.core.settings.change_user_setting`),
        then apply it to the session and engine, whose ``SettingsChanged`` updates the widgets.

        Raises:
            UnsavedSettingError: the user file could not be parsed and was left as is; the
                change is applied for this session only. ValueError: invalid value or managed
                key. OSError: the file cannot be written.
        """
        try:
            self.settings = change_user_setting(self.settings, key, value)
        except UnsavedSettingError as exc:
            self.settings = exc.settings
            self._apply_settings("setting not saved")
            self.notify(str(exc), title="setting not saved", severity="warning", markup=False)
            raise
        if key == "session.strategy":
            self._strategy_setting = str(self.settings[key])
        self._apply_settings("setting saved, not applied")
        return self.settings

    def folder_trusted(self, settings: Settings) -> None:
        """The project folder was just approved: run with ``settings`` (its grants applied, this
        run's overrides kept) in the session and engine alike, and say so under the chat's
        "not trusted" warning."""
        self.settings = settings
        self._apply_settings("folder trusted")
        self.main_screen.chat.add(NoticeEntry("This folder is now trusted: its project servers start and its "
                                              "permissions.allow rules apply.", title="folder trust"))

    def _apply_settings(self, problem_title: str) -> None:
        if self.session is None:
            self.engine.apply_settings(self.settings)
            return
        for problem in self.session.apply_settings(self.settings):
            self.notify(problem, title=problem_title, severity="warning", markup=False)

    def tool_search_command(self, arg: str) -> None:
        """``/toolsearch``: the tool-search verdict in the chat; ``/toolsearch on`` switches it on
        for this session (:meth:`switch_tool_search_on`)."""
        arg = arg.strip().lower()
        if arg == "on":
            self.switch_tool_search_on()
        elif arg:
            self.main_screen.chat.add(ErrorEntry("usage: /toolsearch on (F5 → Tool search sets auto, true or "
                                                 "false for good)"))
        else:
            from .widgets.welcome import mode_line

            decision = self.main_screen.mode_decision(self.main_screen.query_one(UsagePanel).report)
            source = str(self.settings.sources.get("toolSearch.enabled", ""))
            self.main_screen.chat.add(NoticeEntry(mode_line(decision, source), title="/toolsearch"))

    def switch_tool_search_on(self) -> None:
        """Tool search on for this session (not saved: F5 saves it), through the core's settings
        entry point (:meth:`Session.apply_settings <toolscout.core.session.session.Session.apply_settings>`):
        before the first request nothing is inline yet; after an inline one, the session switches to
        deferral at once and announces it (the one prompt-cache break it already knows)."""
        chat = self.main_screen.chat
        if self.settings["toolSearch.enabled"] == "true":
            chat.add(NoticeEntry("Tool search is already on: deferred tools are found with ToolSearch.",
                                 title="/toolsearch"))
            return
        projection = self.session.projection if self.session is not None else None
        switching = projection is not None and projection.strategy == INLINE
        self.settings = self.settings.with_overrides({"toolSearch.enabled": "true"}, source=SESSION_SOURCE)
        self._apply_settings("tool search")
        if not switching:  # a switch after the first request announces itself (ToolSearchSwitched)
            chat.add(NoticeEntry("Tool search is on for this session (not saved; F5 → Tool search keeps it): "
                                 "deferred tools are announced by name and found with ToolSearch.",
                                 title="/toolsearch"))

    # -- session -----------------------------------------------------------------------------
    async def run_turn(self, text: str) -> None:
        """Send ``text`` to the session and wait for the turn to end (run inside a worker)."""
        if self.session is None:
            return
        try:
            await self.session.send(text)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("turn failed")
            self.main_screen.post_message(m.ErrorReported(f"turn failed: {exc}"))
            self.main_screen.post_message(m.TurnEnded(cancelled=False))

    def interrupt_turn(self) -> None:
        """Ask the session to stop; the turn worker ends when the session returns."""
        if self.session is not None and self.main_screen.busy:
            self.session.cancel()

    def new_conversation(self) -> None:
        """``/clear``: start a fresh conversation over the same engine and say so in the chat.

        A new :class:`~toolscout.core.session.session.Session` replaces the current one (same
        provider, strategy and transcript setting); the old one is closed, and its transcript
        stays on disk so ``toolscout --resume ID`` can continue it. Tools loaded, usage counts,
        cache figures and recommendations start from zero. Refused while a turn runs.
        """
        screen = self.main_screen
        if screen.busy:
            self.notify("A turn is running: wait for it, or press Esc to interrupt it, then /clear.",
                        severity="warning", markup=False)
            return
        old = self.session
        if old is None:
            screen.start_over(None, "Chat cleared (there is no session to restart).")
            return
        from ..core.session.session import Session

        new = Session(self.engine, settings=self.settings, provider=old.provider,
                      strategy=self._strategy_setting or old.strategy, persist=old.store is not None,
                      max_tokens=old.max_tokens, asker=self.ask_permission)
        self.bridge.disconnect()
        self.session = new
        self.bridge = Bridge(screen, self.engine, new)
        self.bridge.connect()
        self._close_session(old)
        saved = old.store.path if old.store is not None and old.store.path.exists() else None
        text = f"Started a new conversation (session {new.id}); the earlier messages are not part of it."
        if saved is not None:
            text += (f"\nThe previous one is saved in {tildify(str(saved))}; continue it with "
                     f"toolscout --resume {old.id}")
        screen.start_over(new, text)

    @work(group="close-session", exit_on_error=False)
    async def _close_session(self, session: Any) -> None:
        try:
            await asyncio.wait_for(session.close(), STOP_TIMEOUT_S)
        except (TimeoutError, Exception):
            log.warning("previous session did not close cleanly", exc_info=True)

    def _rules_file_shown(self) -> str | None:
        """The file "Always allow" saves to, relative to the project when inside it."""
        path = self.engine.allow_rules_file
        if path is None:
            return None
        try:
            return str(path.relative_to(self.engine.project_dir))
        except ValueError:
            return tildify(str(path))

    async def ask_permission(self, tool: ToolSpec, params: dict[str, Any]) -> AskAnswer:
        """The permission asker the session and engine call: shows the prompt and waits.

        Args:
            tool: the real tool, never the ExecuteTool proxy (a bare name is looked up).
            params: the arguments it will be called with.

        Returns:
            ``"allow_once"``, ``"always"`` or ``"deny"``.
        """
        spec = tool if isinstance(tool, ToolSpec) else self.engine.tool(str(tool))
        name = spec.name if spec is not None else str(tool)
        shown = params if isinstance(params, dict) else {"_raw": params}
        future: asyncio.Future[PermissionDecision] = asyncio.get_running_loop().create_future()

        def done(decision: PermissionDecision | None) -> None:
            if not future.done():
                future.set_result(decision or PermissionDecision.DENY)

        trust = self.engine.folder_trust
        why = "" if trust is None or trust.approved else "this folder is not approved, so its settings are not read"
        self.push_screen(PermissionScreen(name, shown, spec, saves_to=self._rules_file_shown(),
                                          session_only_reason=why), done)
        answers: dict[PermissionDecision, AskAnswer] = {
            PermissionDecision.ALLOW_ONCE: "allow_once", PermissionDecision.ALWAYS_ALLOW: "always",
            PermissionDecision.DENY: "deny"}
        return answers[await future]
