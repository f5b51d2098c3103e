"""Keys typed ahead land where the person meant them: after Enter in a form field, in the next
field (a terminal delivers a fast typist's keys in one burst, before the focus moved)."""

from __future__ import annotations

from typing import Any

import tui_scenarios as sc
from textual import events

from toolscout.core.models import ToolSpec
from toolscout.tui.screens.argument_form import ArgumentFormScreen

#: Like the time server's convert_time: a multi-line string, a one-line string, a multi-line one.
CONVERT = ToolSpec("convert_time", "Convert time between timezones", {
    "type": "object",
    "properties": {"source_timezone": {"type": "string"}, "time": {"type": "string", "maxLength": 5},
                   "target_timezone": {"type": "string"}},
    "required": ["source_timezone", "time", "target_timezone"],
})


def _burst(app: Any, keys: list[str]) -> None:
    """Deliver ``keys`` as a terminal does a fast burst: all queued before any is handled."""
    for key in keys:
        char = " " if key == "space" else (key if len(key) == 1 else None)
        event = events.Key(key, char)
        event.set_sender(app)
        app.post_message(event)


def _typed(text: str) -> list[str]:
    return ["space" if ch == " " else ch for ch in text]


async def test_keys_after_enter_in_a_form_land_in_the_next_field() -> None:
    app = sc.make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await sc.settle(pilot)
        app.push_screen(ArgumentFormScreen(CONVERT))
        await pilot.pause()
        form = app.screen
        fields = list(form.query(".field"))
        assert [type(f).__name__ for f in fields] == ["MultiLineInput", "FieldInput", "MultiLineInput"]
        _burst(app, [*_typed("Europe/London"), "enter", *_typed("10:30"), "enter", *_typed("Asia/Tokyo")])
        await sc.settle(pilot, servers=False)
        assert [form._raw(spec) for spec in form.fields] == ["Europe/London", "10:30", "Asia/Tokyo"]
        assert app.focused is fields[2]
        assert "Europe/London" in sc.screen_text(app) and "Asia/Tokyo" in sc.screen_text(app)
