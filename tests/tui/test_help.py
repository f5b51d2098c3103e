"""``/help`` reads cleanly in the chat at 80 and 120 columns: headings, then one row per command
or key with its description in one aligned column, wrapped at word boundaries and continued under
itself (found by the new-user try: a hard-wrapped text wrapped again, lines broken mid-phrase).

Journey (full app): ``/help`` typed in the prompt, as a person does; the help entry's lines as
painted, at the chat's width (the whole width at 80 columns, beside the side panel at 120).
"""

from __future__ import annotations

import pytest
import tui_scenarios as sc
from textual.geometry import Region

from toolscout.tui.widgets.chat import NoticeEntry


def painted_lines(entry: NoticeEntry) -> list[str]:
    """The entry's lines as painted, inside its border and padding (one cell each side)."""
    strips = entry.render_lines(Region(0, 0, entry.size.width, entry.size.height))
    return [strip.text[2:-2].rstrip() for strip in strips[1:-1]]


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


@pytest.mark.parametrize("size", [(80, 30), (120, 36)], ids=["80x30", "120x36"])
async def test_help_rows_wrap_under_their_description_column(size: tuple[int, int]) -> None:
    app = sc.make_app()
    async with app.run_test(size=size) as pilot:
        await sc.settle(pilot)
        await sc.ask(pilot, "/help")
        await sc.chat_at_end(pilot)
        entry = next(e for e in app.screen.chat.children if isinstance(e, NoticeEntry) and e.border_title == "help")
        lines = [line for line in painted_lines(entry) if line.strip()]
        assert len(lines) > 10
        headings = [line for line in lines if indent(line) == 0]
        assert headings and all(line.endswith(":") for line in headings), headings  # no sentence cut in two
        rows = [line for line in lines if indent(line) == 2]
        assert any(line.lstrip().startswith("/context ") for line in rows)
        assert any(line.lstrip().startswith("Esc ") for line in rows)
        # every row's description starts in one column, and every wrapped line continues there
        columns = {len(line) - len(line[2:].split("  ", 1)[1].lstrip()) for line in rows}
        assert len(columns) == 1, rows
        column = columns.pop()
        continued = [line for line in lines if indent(line) not in (0, 2)]
        assert all(indent(line) == column for line in continued), (column, continued)
        assert not any(line.endswith("…") for line in lines)
