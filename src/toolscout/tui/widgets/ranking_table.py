"""A fast table of ranked rows for live scoring, drawn with Textual's Line API.

Why not :class:`~textual.widgets.DataTable`: in Textual 8.2 every DataTable change (``add_row``,
``update_cell``, ``clear``) bumps one update counter that is part of every render-cache key, so
after each keystroke every visible cell is rendered again through Rich's padding pipeline —
measured at 20–50 ms for the scoring panel at 120×36, most of the live-scoring latency budget.
Here each row is rendered once into a :class:`~textual.strip.Strip` and kept while its cells stay
the same (the same tool with the same numbers keeps its strip from one keystroke to the next);
the cursor and zebra stripes are applied when a line is painted. A refill costs about 2 ms.

Column widths only grow while the columns stay the same, and the row count is usually the
result limit, so typing does not change the table's virtual size (no layout pass per keystroke).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

#: Cells between columns (one space either side of every cell, as DataTable draws them).
CELL_PADDING = 1

_RowSignature = tuple[tuple[str, tuple[object, ...], str], ...]


@dataclass(frozen=True)
class Column:
    """One column: ``key`` identifies it, ``title`` heads it, ``width`` fixes it (None: as wide
    as the widest cell shown since the columns were set)."""

    key: str
    title: str
    width: int | None = None


def _signature(cells: Sequence[Text]) -> _RowSignature:
    """What a row's strip depends on (text, spans and base style of every cell)."""
    return tuple((cell.plain, tuple(cell.spans), str(cell.style)) for cell in cells)


class RankingTable(ScrollView, can_focus=True):
    """Rows of pre-styled cells under a fixed header, with a row cursor.

    Up/Down/PageUp/PageDown/Home/End move the cursor (:class:`RankingTable.RowHighlighted`),
    Enter or a click selects the row (:class:`RankingTable.RowSelected`); Left/Right scroll
    sideways. Cells are :class:`rich.text.Text` built by the caller from cleaned text.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move_cursor(-1)", "Up", show=False, id="ranking.up"),
        Binding("down", "move_cursor(1)", "Down", show=False, id="ranking.down"),
        Binding("pageup", "move_page(-1)", "Page up", show=False, id="ranking.page_up"),
        Binding("pagedown", "move_page(1)", "Page down", show=False, id="ranking.page_down"),
        Binding("home", "move_to_first", "First", show=False, id="ranking.first"),
        Binding("end", "move_to_last", "Last", show=False, id="ranking.last"),
        Binding("enter", "select_row", "Explain", id="ranking.select"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "ranking-table--header", "ranking-table--cursor", "ranking-table--odd-row",
    }

    DEFAULT_CSS = """
    RankingTable {
        height: auto;
        max-height: 100%;
    }
    RankingTable > .ranking-table--header { text-style: bold; }
    RankingTable > .ranking-table--cursor { text-style: reverse; }
    """

    cursor_row: reactive[int] = reactive(0)
    """Index of the highlighted row (0 when there are no rows)."""

    @dataclass
    class RowHighlighted(Message):
        """The cursor moved to row ``cursor_row`` (its key is ``row_key``)."""

        table: RankingTable
        cursor_row: int
        row_key: str

        @property
        def control(self) -> RankingTable:
            return self.table

    @dataclass
    class RowSelected(Message):
        """Row ``cursor_row`` was chosen with Enter or a click."""

        table: RankingTable
        cursor_row: int
        row_key: str

        @property
        def control(self) -> RankingTable:
            return self.table

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._columns: list[Column] = []
        self._widths: list[int] = []
        self._keys: list[str] = []
        self._cells: list[tuple[Text, ...]] = []
        self._signatures: list[_RowSignature] = []
        self._strips: dict[_RowSignature, Strip] = {}
        self._header: Strip | None = None

    # -- data ----------------------------------------------------------------------------------
    @property
    def columns(self) -> list[Column]:
        """The columns, left to right."""
        return list(self._columns)

    @property
    def row_keys(self) -> list[str]:
        """The key of every row, top to bottom."""
        return list(self._keys)

    @property
    def row_count(self) -> int:
        """Number of rows."""
        return len(self._keys)

    def row_cells(self, index: int) -> tuple[Text, ...]:
        """The cells of row ``index``.

        Raises:
            IndexError: no such row.
        """
        return self._cells[index]

    def set_columns(self, columns: Sequence[Column]) -> None:
        """Replace the columns (and drop the rows: they were built for the old columns)."""
        self._columns = list(columns)
        self._widths = [c.width if c.width is not None else Text(c.title).cell_len for c in self._columns]
        self._header = None
        self.set_rows([])

    def set_rows(self, rows: Sequence[tuple[str, Sequence[Text]]]) -> None:
        """Replace the rows with ``(key, cells)`` pairs; the cursor returns to the first row.

        Rows whose cells are unchanged keep their rendered strip; auto-width columns widen to
        fit new cells but never narrow (a stable width keeps the layout still while typing).
        """
        self._keys = [key for key, _ in rows]
        self._cells = [tuple(cells) for _, cells in rows]
        self._signatures = [_signature(cells) for cells in self._cells]
        widened = False
        for cells in self._cells:
            for i, (column, cell) in enumerate(zip(self._columns, cells, strict=False)):
                if column.width is None and cell.cell_len > self._widths[i]:
                    self._widths[i] = cell.cell_len
                    widened = True
        if widened:
            self._strips.clear()
            self._header = None
        else:  # keep only the strips still shown (the cache never outgrows one result)
            wanted = set(self._signatures)
            self._strips = {sig: strip for sig, strip in self._strips.items() if sig in wanted}
        self.set_reactive(RankingTable.cursor_row, 0)
        width = sum(self._widths) + 2 * CELL_PADDING * len(self._widths)
        self.virtual_size = Size(width, len(self._keys) + 1)  # unchanged size: no layout
        if self.scroll_offset.y:  # scrolling repaints the scrollbars too: only when needed
            self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    # -- painting ------------------------------------------------------------------------------
    def _render_cells(self, cells: Sequence[Text]) -> Strip:
        line = Text(no_wrap=True, end="")
        pad = " " * CELL_PADDING
        for width, cell in zip(self._widths, cells, strict=False):
            shown = cell.copy()
            shown.truncate(width, overflow="ellipsis", pad=True)
            line.append(pad)
            line.append_text(shown)
            line.append(pad)
        segments = list(line.render(self.app.console))
        return Strip(segments, line.cell_len)

    def _row_strip(self, index: int) -> Strip:
        signature = self._signatures[index]
        strip = self._strips.get(signature)
        if strip is None:
            strip = self._strips[signature] = self._render_cells(self._cells[index])
        return strip

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            if self._header is None:
                self._header = self._render_cells([Text(c.title) for c in self._columns])
            style = base + self.get_component_rich_style("ranking-table--header")
            return self._header.apply_style(style).crop_extend(scroll_x, scroll_x + width, style)
        index = scroll_y + y - 1
        if not 0 <= index < len(self._keys):
            return Strip.blank(width, base)
        style = base
        if index % 2:
            style += self.get_component_rich_style("ranking-table--odd-row")
        if index == self.cursor_row:
            style += self.get_component_rich_style("ranking-table--cursor", partial=True)
        return self._row_strip(index).apply_style(style).crop_extend(scroll_x, scroll_x + width, style)

    # -- cursor --------------------------------------------------------------------------------
    def validate_cursor_row(self, row: int) -> int:
        return max(0, min(row, len(self._keys) - 1))

    def watch_cursor_row(self, old: int, new: int) -> None:
        visible = max(self.scrollable_content_region.height - 1, 1)
        if new < self.scroll_y:
            self.scroll_to(y=new, animate=False)
        elif new >= self.scroll_y + visible:
            self.scroll_to(y=new - visible + 1, animate=False)
        self.refresh()
        if self._keys and old != new:
            self.post_message(self.RowHighlighted(self, new, self._keys[new]))

    def action_move_cursor(self, step: int) -> None:
        """Move the cursor ``step`` rows."""
        self.cursor_row += step

    def action_move_page(self, pages: int) -> None:
        """Move the cursor a screenful up or down."""
        self.cursor_row += pages * max(self.scrollable_content_region.height - 1, 1)

    def action_move_to_first(self) -> None:
        """Move the cursor to the first row."""
        self.cursor_row = 0

    def action_move_to_last(self) -> None:
        """Move the cursor to the last row."""
        self.cursor_row = len(self._keys) - 1

    def action_select_row(self) -> None:
        """Choose the highlighted row."""
        if self._keys:
            self.post_message(self.RowSelected(self, self.cursor_row, self._keys[self.cursor_row]))

    def on_click(self, event: events.Click) -> None:
        if event.y < 1:
            return
        index = self.scroll_offset.y + event.y - 1
        if 0 <= index < len(self._keys):
            self.cursor_row = index
            self.action_select_row()
