"""A modal dialog's footer lists the dialog's own keys, not the main screen's under it."""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.screens.argument_form import ArgumentFormScreen


async def test_the_argument_form_footer_shows_its_own_bindings() -> None:
    app = sc.make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await sc.settle(pilot)
        await sc.type_text(pilot, "weather forecast")
        await pilot.press("enter")
        await sc.settle(pilot)
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ArgumentFormScreen)
        footer = sc.screen_text(app).rstrip("\n").splitlines()[-1]
        assert "Run" in footer and "Cancel" in footer
        assert "Use tool" not in footer and "Back to prompt" not in footer
