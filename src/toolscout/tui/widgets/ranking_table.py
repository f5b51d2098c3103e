"""A fast table of ranked rows for live scoring, drawn with Textual's Line API.

Why not :class:`~textual.widgets.DataTable`: in Textual 8.2 every DataTable change (``add_row``,
``update_cell``, ``clear``) bumps one update counter that is part of every render-cache key, so
after each keystroke every visible cell is rendered again through Rich's padding pipeline —
measured at 20–50 ms for the scoring panel at 120×36, most of the live-scoring latency budget.
Here each row is rendered once into a :class:`~textual.strip.Strip` and kept while its cells stay
the same (the same tool with the same numbers keeps its strip from one keystroke to the next),
and each cell's segments are kept while its text and width stay the same (a re-ranked row
mostly changes its numbers, not its tool name or matched terms); the cursor and zebra stripes
are applied when a line is painted, with the CSS styles worked out once per paint rather than
once per line (``rich_style`` walks every ancestor). At 120×36 a keystroke's frame (query box,
table, status) paints in ~6 ms.

Column widths only grow while the columns stay the same, and a new row count changes the
scrollable height without a layout pass unless a scrollbar has to appear or go, so typing does
not reflow the screen. Columns given a ``min_width`` give up cells (right to left) so the table
fits its view: their cells are cut with an ellipsis instead of running past the view's edge,
where no scrollbar shows they go on; a line that still does not fit (every such column at its
minimum) ends in an ellipsis at the edge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

#: Cells between columns (one space either side of every cell, as DataTable draws them).
CELL_PADDING = 1
#: Rendered cells kept (a full table is ~150 cells; cleared whole when full).
CELL_CACHE_SIZE = 2_000

_RowSignature = tuple[tuple[str, tuple[object, ...], str], ...]


@dataclass(frozen=True)
class _LineStyles:
    """What painting a line needs from CSS, worked out once per paint."""

    base: Style
    header: Style
    even: Style
    odd: Style
    even_cursor: Style
    odd_cursor: Style
    width: int


@dataclass(frozen=True)
class Column:
    """One column: ``key`` identifies it, ``title`` heads it, ``width`` fixes it (None: as wide
    as the widest cell shown since the columns were set); ``min_width``: a column that may be
    narrowed down to this many cells (its cells cut with an ellipsis) for the table to fit its view."""

    key: str
    title: str
    width: int | None = None
    min_width: int | None = None


def _in_view(strip: Strip, left: int, width: int, style: Style) -> Strip:
    """``strip`` cropped (or padded with ``style``) to the ``width`` cells from ``left``; a line
    whose text goes on past the right edge ends in an ellipsis there (no scrollbar shows it)."""
    right = left + width
    if width > 1 and strip.cell_length > right and strip.crop(right, strip.cell_length).text.strip():
        return Strip.join([strip.crop(left, right - 1), Strip([Segment("…", style)], 1)])
    return strip.crop_extend(left, right, style)


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
        "ranking-table--header",
        "ranking-table--cursor",
        "ranking-table--odd-row",
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
        #: Each column's width as its cells ask (fixed, or the widest cell shown).
        self._natural: list[int] = []
        #: The widths drawn: ``_natural`` narrowed to fit the view (:meth:`_fit`).
        self._widths: list[int] = []
        self._keys: list[str] = []
        self._cells: list[tuple[Text, ...]] = []
        self._signatures: list[_RowSignature] = []
        self._strips: dict[_RowSignature, Strip] = {}
        self._header: Strip | None = None
        self._cell_segments: dict[tuple[object, ...], list[Segment]] = {}
        self._paint_styles: _LineStyles | None = None

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
        self._natural = [c.width if c.width is not None else Text(c.title).cell_len for c in self._columns]
        self._widths = []
        self._fit()
        self._header = None
        self.set_rows([])

    def set_rows(self, rows: Sequence[tuple[str, Sequence[Text]]]) -> None:
        """Replace the rows with ``(key, cells)`` pairs; the cursor returns to the first row.

        Rows whose cells are unchanged keep their rendered strip; auto-width columns widen to
        fit new cells but never narrow (a stable width keeps the layout still while typing),
        then columns with a ``min_width`` narrow for the table to fit its view.
        """
        self._keys = [key for key, _ in rows]
        self._cells = [tuple(cells) for _, cells in rows]
        self._signatures = [_signature(cells) for cells in self._cells]
        for cells in self._cells:
            for i, (column, cell) in enumerate(zip(self._columns, cells, strict=False)):
                if column.width is None and cell.cell_len > self._natural[i]:
                    self._natural[i] = cell.cell_len
        if self._fit():
            self._strips.clear()
            self._header = None
        else:  # keep only the strips still shown (the cache never outgrows one result)
            wanted = set(self._signatures)
            self._strips = {sig: strip for sig, strip in self._strips.items() if sig in wanted}
        self.set_reactive(RankingTable.cursor_row, 0)
        self._set_virtual_size(Size(self._table_width(), len(self._keys) + 1))
        if self.scroll_offset.y:  # scrolling repaints the scrollbars too: only when needed
            self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    def _table_width(self, widths: Sequence[int] | None = None) -> int:
        """Cells a row takes with ``widths`` (default: the drawn ones), padding included."""
        widths = self._widths if widths is None else widths
        return sum(widths) + 2 * CELL_PADDING * len(widths)

    def _fit(self) -> bool:
        """Work out the drawn widths: the natural ones, with columns that have a ``min_width``
        narrowed, the rightmost first, until the table fits its view (the view less a
        vertical scrollbar's column, kept whether one shows or not, so the widths do not change
        as it comes and goes). True when the drawn widths changed (rendered rows are stale)."""
        widths = list(self._natural)
        view = self.container_size.width - self.styles.scrollbar_size_vertical
        excess = self._table_width(widths) - view if view > 0 else 0
        for i in reversed(range(len(widths))):
            floor = self._columns[i].min_width
            if excess <= 0:
                break
            if floor is not None and widths[i] > floor:
                cut = min(excess, widths[i] - floor)
                widths[i] -= cut
                excess -= cut
        changed = widths != self._widths
        self._widths = widths
        return changed

    def on_resize(self, event: events.Resize) -> None:
        if self._fit():
            self._strips.clear()
            self._header = None
            self._set_virtual_size(Size(self._table_width(), len(self._keys) + 1))
            self.refresh()

    def _set_virtual_size(self, size: Size) -> None:
        """Set the scrollable size; lay the screen out again only when a scrollbar may change.

        Why: ``virtual_size`` is a layout reactive and a layout reflows every widget on the
        screen (5–10 ms with the catalog mounted), but the table's own box does not depend on its
        rows. While the scrollable size stays on the same side of the visible size in both
        directions (as Textual decides scrollbars: with and without the other one's gutter),
        no scrollbar appears or goes, and only the thumbs have to follow the new size.
        """
        old = self.virtual_size
        if size == old:
            return
        width, height = self.container_size
        v_bar, h_bar = self.styles.scrollbar_size_vertical, self.styles.scrollbar_size_horizontal

        def side(new: int, before: int, visible: int, gutter: int) -> bool:
            return (new > visible) == (before > visible) and (new > visible - gutter) == (before > visible - gutter)

        if not (
            width > 0
            and height > 0
            and size.width >= old.width  # a narrower table could leave the view scrolled too far right
            and side(size.width, old.width, width, v_bar)
            and side(size.height, old.height, height, h_bar)
        ):
            self.virtual_size = size
            return
        self.set_reactive(RankingTable.virtual_size, size)
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.window_virtual_size = size.height
        if self.show_horizontal_scrollbar:
            self.horizontal_scrollbar.window_virtual_size = size.width

    # -- painting ------------------------------------------------------------------------------
    def _render_cell(self, cell: Text, width: int) -> list[Segment]:
        """``cell`` cut or padded to ``width`` cells, as segments (cached: while typing, most
        cells of a re-ranked row — tool name, matched terms, rank — are the same as before)."""
        key = (width, cell.plain, tuple(cell.spans), str(cell.style))
        segments = self._cell_segments.get(key)
        if segments is None:
            shown = cell.copy()
            shown.truncate(width, overflow="ellipsis", pad=True)
            line = Text(end="")  # appended, the cell's own style becomes a span that renders
            line.append_text(shown)
            segments = list(line.render(self.app.console))
            if len(self._cell_segments) >= CELL_CACHE_SIZE:
                self._cell_segments.clear()
            self._cell_segments[key] = segments
        return segments

    def _render_cells(self, cells: Sequence[Text]) -> Strip:
        pad = Segment(" " * CELL_PADDING)
        segments: list[Segment] = []
        for width, cell in zip(self._widths, cells, strict=False):
            segments.append(pad)
            segments.extend(self._render_cell(cell, width))
            segments.append(pad)
        return Strip(segments)

    def _row_strip(self, index: int) -> Strip:
        signature = self._signatures[index]
        strip = self._strips.get(signature)
        if strip is None:
            strip = self._strips[signature] = self._render_cells(self._cells[index])
        return strip

    def _line_styles(self) -> _LineStyles:
        base = self.rich_style
        odd = base + self.get_component_rich_style("ranking-table--odd-row")
        cursor = self.get_component_rich_style("ranking-table--cursor", partial=True)
        return _LineStyles(
            base=base,
            header=base + self.get_component_rich_style("ranking-table--header"),
            even=base,
            odd=odd,
            even_cursor=base + cursor,
            odd_cursor=odd + cursor,
            width=self.scrollable_content_region.width,
        )

    def render_lines(self, crop: Region) -> list[Strip]:
        # The styles walk every ancestor's CSS: worked out once per paint, not once per line.
        self._paint_styles = self._line_styles()
        try:
            return super().render_lines(crop)
        finally:
            self._paint_styles = None

    def render_line(self, y: int) -> Strip:
        styles = self._paint_styles or self._line_styles()
        scroll_x, scroll_y = self.scroll_offset
        width = styles.width
        if y == 0:
            if self._header is None:
                self._header = self._render_cells([Text(c.title) for c in self._columns])
            return _in_view(self._header.apply_style(styles.header), scroll_x, width, styles.header)
        index = scroll_y + y - 1
        if not 0 <= index < len(self._keys):
            return Strip.blank(width, styles.base)
        if index == self.cursor_row:
            style = styles.odd_cursor if index % 2 else styles.even_cursor
        else:
            style = styles.odd if index % 2 else styles.even
        return _in_view(self._row_strip(index).apply_style(style), scroll_x, width, style)

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
