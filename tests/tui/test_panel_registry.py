"""A side panel is one widget and one registration (tui/panels.py): a throwaway panel defined in
this test, registered, gets its tab, its key in the footer, its command palette entry and its
``/help`` line in the whole app, and its key shows and focuses it, as F2/F3/F4 do theirs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import tui_scenarios as sc
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static, TabbedContent

from toolscout.tui.app import ToolscoutApp
from toolscout.tui.panels import SidePanel, register_panel, side_panels, unregister_panel
from toolscout.tui.screens.slash import help_keys

SIZE = (140, 42)


class NotesPanel(Vertical):
    """A panel of notes: a line saying how many tools the engine has, and a note field."""

    def __init__(self, engine: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.engine = engine

    def compose(self) -> ComposeResult:
        yield Static(f"notes on {len(self.engine.tools())} tools", id="notes-count")
        yield Input(placeholder="a note…", id="notes-input")


NOTES = SidePanel(
    "notes",
    "Notes",
    "f8",
    lambda engine, dom_id: NotesPanel(engine, id=dom_id),
    "#notes-input",
    "Notes",
    "Jot down notes beside the chat",
    "notes beside the chat",
)


@pytest.fixture
def notes() -> Iterator[SidePanel]:
    """The throwaway panel, registered for one test."""
    register_panel(NOTES)
    try:
        yield NOTES
    finally:
        unregister_panel(NOTES.name)


async def test_a_registered_panel_has_a_tab_a_key_a_command_and_help(notes: SidePanel) -> None:
    app = sc.make_app()
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        tabs = app.screen.query_one("#sidebar", TabbedContent)
        assert tabs.active == "tab-catalog"  # the first registered panel still opens first
        footer = {b.binding.key: b.binding.description for b in app.screen.active_bindings.values() if b.binding.show}
        assert footer["f8"] == "Notes" and footer["f2"] == "Catalog"
        commands = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert commands["Notes"] == "Jot down notes beside the chat (F8)"
        assert commands["Live scoring"] == "Rank tools as you type a query (F3)"  # the built-ins unchanged
        assert ("F8", "notes beside the chat") in help_keys()

        await pilot.press("f8")
        await pilot.pause()
        assert tabs.active == "tab-notes" and app.screen.sidebar_visible
        assert app.focused is app.screen.query_one("#notes-input")
        await pilot.press(*"hi")
        assert app.screen.query_one("#notes-input", Input).value == "hi"
        assert "Notes" in sc.screen_text(app) and "notes on " in sc.screen_text(app)
        await pilot.press("f2")  # and the built-in keys go on working beside it
        await pilot.pause()
        assert tabs.active == "tab-catalog" and app.focused.id == "catalog-filter"


def test_a_panel_name_or_key_is_taken_once() -> None:
    for taken in (
        SidePanel("catalog", "X", "f9", NOTES.make, "", "X", "x", "x"),
        SidePanel("other", "X", "f2", NOTES.make, "", "X", "x", "x"),
    ):
        with pytest.raises(ValueError, match="has that name or key"):
            register_panel(taken)
    assert [p.name for p in side_panels()] == ["catalog", "scoring", "usage"]
    assert [b.key for b in ToolscoutApp.key_bindings()] == ["f1", "f2", "f3", "f4", "f5", "ctrl+b"]
