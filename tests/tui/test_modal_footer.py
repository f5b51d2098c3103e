"""A modal dialog's footer lists the dialog's own keys, not the main screen's under it.

Harness test (:class:`tui_harness_panels.DialogOverBarHarness`): the argument form opened over a
screen whose cursor is on a recommended tool, as Enter on that tool opens it in the app (that
journey: test_keys.py)."""

from __future__ import annotations

import anyio
import tui_scenarios as sc
from tui_harness import screen_app
from tui_harness_panels import DialogOverBarHarness, recommended

from toolscout.tui.screens.argument_form import ArgumentFormScreen
from toolscout.tui.widgets.recommendations import RecommendationItem


def footer(app) -> str:
    """The bottom row of the screen (the footer) as text."""
    return sc.screen_text(app).rstrip("\n").splitlines()[-1]


async def test_the_argument_form_footer_shows_its_own_bindings() -> None:
    def form(engine) -> ArgumentFormScreen:
        return ArgumentFormScreen(engine.tool(recommended(engine, DialogOverBarHarness.QUERY)[0].name))

    async with screen_app(form, size=(120, 36), harness=DialogOverBarHarness) as pilot:
        app = pilot.app
        with anyio.fail_after(10):  # the bar focuses its first tool once the items are mounted
            while not isinstance(app.focused, RecommendationItem):
                await pilot.pause()
        assert "Use tool" in footer(app)  # the screen under the dialog shows its own key
        app.open_dialog()
        await sc.settle(pilot)
        assert isinstance(app.screen, ArgumentFormScreen)
        text = footer(app)
        assert "Run" in text and "Cancel" in text
        assert "Use tool" not in text and "Back to prompt" not in text
