"""Picking a tool in the app (kept out of app.py): load it for the model, or fill in its
arguments and run it by hand. The session work is the controller's; this is the UI around it
(the argument form, the Run tool… palette)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App

from toolscout.core.models import ToolSpec

from .screens.argument_form import ArgumentFormScreen

if TYPE_CHECKING:
    from .controller import SessionController
    from .screens.main import MainScreen


class ToolPicks(App[int]):
    """Mixin for :class:`~toolscout.tui.app.ToolscoutApp` (which sets the attributes below)."""

    controller: SessionController
    main_screen: MainScreen

    def use_tool(self, name: str) -> None:
        """The person picked a tool (the recommendation bar, a search hit in the chat).

        With a model, the tool's full definition is loaded into the conversation (a ToolSearch
        ``select:`` recorded by the session), so the model has it with the next message.
        Offline (or with no session), :meth:`run_by_hand`.
        """
        controller = self.controller
        tool = controller.engine.tool(name)
        if tool is None:
            self.main_screen.release_keys_for_form()  # no form: what was typed for it goes on
            self.notify(f"{name} is no longer in the catalog", severity="error", markup=False)
            return
        if controller.offline or controller.session is None:
            self.run_by_hand(tool)
            return
        controller.load_tool(tool.name)
        self.main_screen.action_focus_prompt()

    def run_by_hand(self, tool: ToolSpec) -> None:
        """Open ``tool``'s argument form; run it with what the person fills in (as if the model
        had called it: permission prompt, validation, transcript). Keys typed since the Enter
        that picked it go to the form's first field."""
        form = ArgumentFormScreen(tool, self.controller.engine.project_dir, typed=self.main_screen.take_keys_for_form())
        self.push_screen(form, lambda args: self._run_picked(tool, args))

    def action_run_tool(self) -> None:
        """Ctrl+P → Run tool…: every tool by name; picking one opens its argument form."""
        from textual.command import CommandPalette

        from .commands import PLACEHOLDER, RunToolProvider

        self.push_screen(CommandPalette(providers=[RunToolProvider], placeholder=PLACEHOLDER))

    def _run_picked(self, tool: ToolSpec, arguments: dict[str, Any] | None) -> None:
        if arguments is None:
            self.main_screen.action_focus_prompt()
            return
        self.controller.run_tool(tool.name, arguments)
