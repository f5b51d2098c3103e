"""Picking a tool in the app (kept out of app.py): load it for the model, or fill in its
arguments and run it by hand."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App

from ..core.models import ToolSpec
from ..core.session.events import Recommendation
from . import messages as m
from .screens.argument_form import ArgumentFormScreen

if TYPE_CHECKING:
    from ..core.engine import Engine
    from ..core.permissions import AskAnswer
    from ..core.session.session import Session
    from .screens.main import MainScreen


class ToolPicks(App[int]):
    """Mixin for :class:`~toolscout.tui.app.ToolscoutApp` (which sets the attributes below)."""

    engine: Engine
    session: Session | None
    main_screen: MainScreen
    offline: bool
    if TYPE_CHECKING:
        async def ask_permission(self, tool: ToolSpec, params: dict[str, Any]) -> AskAnswer: ...

    def use_recommendation(self, rec: Recommendation) -> None:
        """The person picked a recommended tool (:meth:`use_tool`)."""
        self.use_tool(rec.name)

    def use_tool(self, name: str) -> None:
        """The person picked a tool (the recommendation bar, a search hit in the chat).

        With a model, the tool's full definition is loaded into the conversation (a ToolSearch
        ``select:`` recorded by the session), so the model has it with the next message.
        Offline (or with no session), :meth:`run_by_hand`.
        """
        tool = self.engine.tool(name)
        if tool is None:
            self.notify(f"{name} is no longer in the catalog", severity="error", markup=False)
            return
        if self.offline or self.session is None:
            self.run_by_hand(tool)
            return
        self._load_tool(tool.name)
        self.main_screen.action_focus_prompt()

    def run_by_hand(self, tool: ToolSpec) -> None:
        """Open ``tool``'s argument form; run it with what the person fills in (as if the model
        had called it: permission prompt, validation, transcript)."""
        self.push_screen(ArgumentFormScreen(tool), lambda args: self._run_picked(tool, args))

    def action_run_tool(self) -> None:
        """Ctrl+P → Run tool…: every tool by name; picking one opens its argument form."""
        from textual.command import CommandPalette

        from .commands import PLACEHOLDER, RunToolProvider

        self.push_screen(CommandPalette(providers=[RunToolProvider], placeholder=PLACEHOLDER))

    @work(group="turn", exclusive=True)
    async def _load_tool(self, name: str) -> None:
        if self.session is None:
            self.notify("this session cannot load tools on request", severity="warning", markup=False)
            return
        try:
            await self.session.load_tools([name])
        except RuntimeError as exc:  # a turn is running
            self.notify(str(exc), severity="warning", markup=False)
            return
        self.notify(f"{name} is loaded for your next message", title="tool added", markup=False)

    def _run_picked(self, tool: ToolSpec, arguments: dict[str, Any] | None) -> None:
        if arguments is None:
            self.main_screen.action_focus_prompt()
            return
        self._run_tool(tool.name, arguments)

    @work(group="turn", exclusive=True)
    async def _run_tool(self, name: str, arguments: dict[str, Any]) -> None:
        self.main_screen.busy = True
        try:
            if self.session is not None:
                await self.session.run_tool(name, arguments)
            else:
                self.main_screen.post_message(m.ToolCallStarted(f"manual-{name}", name, arguments))
                result = await self.engine.call_tool(name, arguments, asker=self.ask_permission)
                self.main_screen.post_message(m.ToolCallFinished(f"manual-{name}", result))
        finally:
            self.main_screen.busy = False
            self.main_screen.action_focus_prompt()
