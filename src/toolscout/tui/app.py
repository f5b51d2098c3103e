"""The Textual application: global keys, the command palette, and the screens.

The engine and session belong to the :class:`~toolscout.tui.controller.SessionController`; the
app builds it, hands it the main screen as the target of its messages, and passes on the
requests the screens post up (``…Requested`` messages of :mod:`toolscout.tui.messages`).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from toolscout.core.models import ServerState
from toolscout.core.settings.layers import Settings

from . import messages as m
from .controller import SessionController, SessionFactory
from .keyrouting import KeyRouting
from .panels import side_panels
from .resources import stylesheet_paths
from .screens.main import MainScreen
from .screens.permission import ask
from .screens.settings import SettingsScreen
from .tool_picks import ToolPicks

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine
    from toolscout.core.session.session import Session


def screenshot_dir() -> Path:
    """Where the palette's Screenshot is saved: the downloads folder (``~/Downloads``, or the
    XDG one) when it exists, else ``screenshots/`` in toolscout's data folder (created)."""
    import platformdirs

    from toolscout.core.dirs import data_dir

    downloads = platformdirs.user_downloads_path()
    if downloads.is_dir():
        return downloads
    folder = data_dir() / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class ToolscoutApp(ToolPicks, KeyRouting, App[int]):
    """toolscout's full-screen app. Build it with :func:`toolscout.tui.factory.make_app`.

    Args:
        settings: resolved settings (changes from the settings screen replace them).
        engine: the core engine; started on mount unless ``start_engine`` is False.
        session: a session built by the caller with its own asker, or None (then only slash
            commands work, unless ``new_session`` builds one).
        new_session: builds the session in the controller, with the app's permission prompt as
            its asker (:class:`~toolscout.tui.controller.SessionController`).
        start_engine: False when the caller has already started the engine.
    """

    TITLE = "toolscout"
    CSS_PATH: ClassVar[list[str | PurePath]] = [*stylesheet_paths()]
    # Textual declares it `ClassVar[list[...]] | None`, which is not a class variable to mypy
    # (a ClassVar cannot be part of a union): the override is typed as the instance variable it sees.
    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012
    COMMAND_PALETTE_BINDING = "ctrl+p"
    #: Textual's own ctrl+q, shown: how to leave is the first thing a newcomer looks for.
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True)]

    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        session: Session | None = None,
        *,
        new_session: SessionFactory | None = None,
        start_engine: bool = True,
    ) -> None:
        super().__init__()
        # Bound here, not in BINDINGS, because the panel keys come from the registry
        # (tui/panels.py), which may have grown since this class was made (as Textual's own
        # App.__init__ adds the palette key).
        for binding in self.key_bindings():
            self._bindings._add_binding(binding)
        self.controller = SessionController(
            self, settings, engine, session, new_session=new_session, start_engine=start_engine, prompt=ask
        )
        self.main_screen = MainScreen(self.controller)

    @staticmethod
    def key_bindings() -> list[Binding]:
        """The app's own keys, in footer order: F1 help, each side panel's key (the registered
        panels, :func:`~toolscout.tui.panels.side_panels`), F5 settings, Ctrl+B the side panel
        (Ctrl+Q, quit, is :attr:`BINDINGS`: it replaces Textual's hidden one)."""
        return [
            Binding("f1", "show_help", "Help", id="app.help"),
            *(Binding(p.key, f"show_panel('{p.name}')", p.title, id=f"app.{p.name}") for p in side_panels()),
            Binding("f5", "open_settings", "Settings", id="app.settings"),
            Binding("ctrl+b", "toggle_sidebar", "Panel", id="app.sidebar"),
        ]

    # -- what the controller owns (read-only views) ------------------------------------------
    @property
    def engine(self) -> Engine:
        """The core engine (the controller's)."""
        return self.controller.engine

    @property
    def session(self) -> Session | None:
        """The current conversation's session (the controller's; ``/clear`` replaces it)."""
        return self.controller.session

    @property
    def settings(self) -> Settings:
        """The settings now in effect (the controller's)."""
        return self.controller.settings

    # -- lifetime ----------------------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        return self.main_screen

    def on_mount(self) -> None:
        self.controller.connect(self.main_screen)
        # After the main screen's first paint, behind the engine's start (which ``connect`` put
        # there): a callback "after refresh" belongs to the screen on top when it is scheduled,
        # and one on a prompt closed before it painted would never run (the engine never started).
        self.call_after_refresh(self._ask_folder_trust)

    def _ask_folder_trust(self) -> None:
        """An unapproved project folder: its servers wait for a yes (keys typed meanwhile go to
        the prompt once it is answered)."""
        from .screens.trust import ask_folder_trust

        ask_folder_trust(
            self, self.engine, lambda: self.settings, self.controller.folder_trusted, self.main_screen.take_typed_text
        )

    async def on_unmount(self) -> None:
        await self.controller.stop()

    # -- requests from the screens -----------------------------------------------------------
    def on_turn_requested(self, message: m.TurnRequested) -> None:
        self.controller.send(message.text)

    def on_interrupt_requested(self, message: m.InterruptRequested) -> None:
        self.controller.interrupt()

    def on_new_conversation_requested(self, message: m.NewConversationRequested) -> None:
        self.controller.new_conversation()

    def on_tool_use_requested(self, message: m.ToolUseRequested) -> None:
        self.use_tool(message.name)

    def on_tool_run_requested(self, message: m.ToolRunRequested) -> None:
        self.run_by_hand(message.tool)

    def on_quit_requested(self, message: m.QuitRequested) -> None:
        self.exit()

    def on_permissions_requested(self, message: m.PermissionsRequested) -> None:
        self.action_show_permissions()

    def on_settings_requested(self, message: m.SettingsRequested) -> None:
        self.action_open_settings()

    def on_tool_search_on_requested(self, message: m.ToolSearchOnRequested) -> None:
        self.controller.switch_tool_search_on()

    def on_server_reconnect_requested(self, message: m.ServerReconnectRequested) -> None:
        self.controller.reconnect_server(message.name)

    def on_server_login_requested(self, message: m.ServerLoginRequested) -> None:
        self.controller.login_server(message.name)

    # -- actions -----------------------------------------------------------------------------
    def action_show_panel(self, name: str) -> None:
        """Show and focus side panel ``name`` (a registered one: catalog, scoring, usage, …)."""
        if self.screen is self.main_screen:
            self.main_screen.show_panel(name)

    def action_toggle_sidebar(self) -> None:
        """Show or hide the side panel."""
        if self.screen is self.main_screen:
            self.main_screen.toggle_sidebar()

    def action_show_help(self) -> None:
        """Show the help in the chat."""
        if self.screen is self.main_screen:
            self.main_screen.run_command("/help")

    def action_open_settings(self) -> None:
        """Open the settings screen."""
        if not isinstance(self.screen, SettingsScreen):
            self.push_screen(SettingsScreen(self.settings, self.controller.apply_setting))

    def action_show_permissions(self) -> None:
        """Open the permission rules (``/permissions``)."""
        from .screens.permissions import PermissionsScreen

        if not isinstance(self.screen, PermissionsScreen):
            self.push_screen(PermissionsScreen(self.engine.permission_rules, self.engine.forget_allow_rule))

    def action_interrupt_turn(self) -> None:
        """Interrupt the running turn (the palette's twin of Esc)."""
        self.controller.interrupt()

    def action_clear_chat(self) -> None:
        """Start a new conversation (``/clear``)."""
        self.controller.new_conversation()

    def action_show_context(self) -> None:
        """Show token usage in the chat (/context)."""
        self.main_screen.run_command("/context")

    def action_show_servers(self) -> None:
        """Show server states in the chat (/mcp)."""
        self.main_screen.run_command("/mcp")

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """The palette's Screenshot: saved to :func:`screenshot_dir` unless ``path`` is given
        (Textual's own default, ``~/Downloads``, fails where that folder is missing); the
        notification names the file."""
        return super().deliver_screenshot(filename, path or str(screenshot_dir()), time_format)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for panel in side_panels():
            yield SystemCommand(
                panel.command, f"{panel.summary} ({panel.key_label})", partial(self.action_show_panel, panel.name)
            )
        yield SystemCommand("Toggle side panel", "Show or hide the side panel (ctrl+b)", self.action_toggle_sidebar)
        yield SystemCommand(
            "Run tool…", "Pick any tool by name, fill in its arguments and run it", self.action_run_tool
        )
        yield SystemCommand(
            "Settings", "Recommendations, tool search, strategy, provider (F5)", self.action_open_settings
        )
        yield SystemCommand("Help", "Slash commands and keys (F1)", self.action_show_help)
        yield SystemCommand(
            "Permissions",
            "The permission rules in force and where each comes from (/permissions)",
            self.action_show_permissions,
        )
        yield SystemCommand("Context report", "Token usage in the chat (/context)", self.action_show_context)
        yield SystemCommand(
            "Tool search on",
            "Defer tools and find them with ToolSearch, this session (/toolsearch on)",
            self.controller.switch_tool_search_on,
        )
        yield SystemCommand("Servers", "MCP server states in the chat (/mcp)", self.action_show_servers)
        for status in self.engine.mcp_statuses():
            if status.needs_login and self.engine.can_reconnect(status.name):
                yield SystemCommand(
                    f"Log in to {status.name}",
                    f"It needs a login: open the login page in your browser (/mcp login {status.name})",
                    partial(self.controller.login_server, status.name),
                )
            elif status.state in (ServerState.FAILED, ServerState.DISCONNECTED) and self.engine.can_reconnect(
                status.name
            ):
                yield SystemCommand(
                    f"Reconnect server {status.name}",
                    f"It is {status.state.value}: start it again (/mcp reconnect {status.name})",
                    partial(self.controller.reconnect_server, status.name),
                )
        yield SystemCommand(
            "New conversation", "Start over; the current one stays saved (/clear)", self.action_clear_chat
        )
        yield SystemCommand("Interrupt", "Stop the running turn (Esc)", self.action_interrupt_turn)
        yield SystemCommand(
            "Focus prompt", "Put the cursor in the prompt (ctrl+l)", self.main_screen.action_focus_prompt
        )
