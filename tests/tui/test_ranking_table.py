"""RankingTable: a new row count moves the scrollbar without laying the screen out again,
unless the scrollbar has to appear or go."""

from __future__ import annotations

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
