"""RankingTable: a new row count moves the scrollbar without laying the screen out again,
unless the scrollbar has to appear or go."""

from __future__ import annotations

import asyncio
import contextlib

from rich.text import Text
from textual.app import App, ComposeResult

from toolscout.tui.widgets.ranking_table import Column, RankingTable


class TableApp(App[None]):
    CSS = "RankingTable { height: 6; }"

    def compose(self) -> ComposeResult:
        yield RankingTable()


def rows(count: int) -> list[tuple[str, list[Text]]]:
    return [(f"tool_{i}", [Text(str(i)), Text(f"tool_{i}")]) for i in range(count)]


async def test_row_count_changes_lay_out_only_when_the_scrollbar_changes(monkeypatch) -> None:
    app = TableApp()
    async with app.run_test(size=(40, 10)) as pilot:
        table = app.query_one(RankingTable)
        table.set_columns([Column("rank", "#", 3), Column("tool", "tool")])
        table.set_rows(rows(12))  # 13 lines in a 6-line box: scrollbar
        await pilot.pause()
        assert table.show_vertical_scrollbar
        layouts: list[bool] = []
        real = table.refresh

        def refresh(*regions, **kwargs):
            layouts.append(bool(kwargs.get("layout")))
            return real(*regions, **kwargs)

        monkeypatch.setattr(table, "refresh", refresh)

        table.set_rows(rows(9))  # still taller than the box
        await pilot.pause()
        assert not any(layouts)
        assert table.virtual_size.height == 10
        assert table.vertical_scrollbar.window_virtual_size == 10
        table.cursor_row = 8
        await pilot.pause()
        assert table.scroll_y == table.max_scroll_y == 10 - 6

        table.set_rows(rows(2))  # fits: the scrollbar goes, which needs a layout
        await pilot.pause()
        assert any(layouts)
        assert not table.show_vertical_scrollbar
        assert table.scroll_y == 0


async def test_columns_with_a_min_width_narrow_to_the_view_and_widen_again_on_resize() -> None:
    """A row wider than the view: the columns with a ``min_width`` give up cells, the rightmost
    first, and are cut with an ellipsis inside the view (no scrollbar shows a cut at the edge);
    a wider terminal shows them whole, a narrower one cuts the next column too, and where both
    are at their minimum and the line still does not fit, it ends in an ellipsis at the edge."""
    app = TableApp()
    async with app.run_test(size=(40, 10)) as pilot:
        table = app.query_one(RankingTable)
        table.set_columns(
            [Column("rank", "#", 3), Column("tool", "tool", min_width=8), Column("matched", "matched", min_width=6)]
        )
        table.set_rows([("a", [Text("1"), Text("create_issue_tool"), Text("name: create, issue · desc: issue")])])
        await pilot.pause()

        def row() -> str:
            return table.render_line(1).text.strip()

        async def resized(width: int | None, expected: str) -> str:
            """The row once the table shows ``expected`` (at a new width), or after a bound (a
            layout or a resize can take more than one pause to reach the table under load)."""
            if width is not None:
                await pilot.resize_terminal(width, 10)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(10):
                    while row() != expected:
                        await pilot.pause()
            return row()

        first = "1    create_issue_tool  name: creat…"
        assert await resized(None, first) == first
        assert table.virtual_size.width <= 40 - 2  # the vertical scrollbar's columns (2 here) kept
        whole = "1    create_issue_tool  name: create, issue · desc: issue"
        assert await resized(80, whole) == whole
        cut = "1    create_…  nam…"  # both at their minimum, the line cut at the edge
        assert await resized(20, cut) == cut
        assert table.render_line(0).text.rstrip().endswith("…")  # and the header
