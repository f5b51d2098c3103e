"""Live search scoring: type a query, watch the ranking, read why a tool scored what it did.

The query goes through the same engine call the model's ToolSearch uses
(:meth:`Engine.search_tools`), so ``select:``, ``discover:`` and ``+term`` behave identically.

Latency (keystroke → re-ranked table, target < 50 ms; ``tests/benchmarks/ui_responsiveness.py``):
each keystroke starts an exclusive worker that ranks at once (no debounce: the search takes
2–15 ms); a newer keystroke cancels a worker that has not started ranking, so the table never
shows the answer to a stale query. While searches are fast, the echo of the key is held back
(:meth:`ScoringPanel._hold_frame`) so that it and the ranked table go out in one frame instead
of two frames 17–33 ms apart. Typing does not lay out the screen (a whole-screen reflow,
5–15 ms): the query box is a :class:`~.query_input.QueryInput`, the table a
:class:`~.ranking_table.RankingTable` (its frame paints in ~6 ms, where DataTable re-rendered every
cell), and the status line and the explanation are updated without a layout unless their height
changes (or a scrollbar comes or goes). The explanation of the highlighted row is filled in
*after* the table is painted, so the table is never waiting for it.
:class:`ScoringPanel.Rendered` is posted once the table has been painted for a query.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.css.scalar import Unit
from textual.message import Message
from textual.widgets import Input, Static

from toolscout.core.search.fields import schema_params
from toolscout.core.search.results import ScoredTool, SearchResult

from ..text import clean, first_line, highlight_terms
from .query_input import QueryInput
from .ranking_table import Column, RankingTable

if TYPE_CHECKING:
    from toolscout.core.engine.facade import Engine

#: Rows shown in the table.
MAX_ROWS = 25
#: The echo of a keystroke waits for its ranking only while the last search took less than
#: this (s): two frames at Textual's 60 fps, what painting the echo on its own costs the table.
HOLD_ECHO_S = 2 / 60
#: ``ToolSearch.status`` contains this while tool vectors are still being encoded.
RANKER_PENDING = "encoding"
#: Cells the matched column keeps when the table is narrowed to fit the panel.
MATCHED_MIN = len("matched")
#: Short column titles for field names the index reports.
FIELD_TITLES = {
    "name": "name",
    "hint": "hint",
    "server": "server",
    "server_description": "server desc",
    "description": "desc",
    "param_names": "params",
    "param_descriptions": "param desc",
}


def result_status(result: SearchResult, ranker: str = "") -> Text:
    """One or two lines about the whole result: query mode, ranker, hit count and every warning.

    Args:
        ranker: ``ToolSearch.status`` (``default``, ``bm25f (encoding 120 tools for default)``);
            labelled, so the query mode (``keyword``, ``select``) does not read as the ranker.
    """
    out = Text()
    out.append("mode ", style="dim")
    out.append(f"{result.mode}", style="bold")
    if ranker:
        out.append(" · ranker ", style="dim")
        out.append(clean(ranker, single_line=True), style="bold")
    out.append(f" · {len(result.hits)} hit{'s' if len(result.hits) != 1 else ''}", style="dim")
    if result.no_good_match:
        out.append(" · no good match", style="bold yellow")
    if result.unmatched_terms:
        out.append(" · unmatched: ", style="yellow")
        out.append(", ".join(clean(t, single_line=True) for t in result.unmatched_terms), style="yellow")
    if result.missing:
        out.append(" · not found: " + ", ".join(clean(t, single_line=True) for t in result.missing), style="yellow")
        for name, close in result.suggestions.items():
            if close:
                out.append(f" ({clean(name, single_line=True)} → did you mean {', '.join(close[:3])}?)", style="dim")
    if result.already_loaded:
        out.append(" · already loaded: " + ", ".join(result.already_loaded), style="dim")
    if result.pending_servers:
        out.append(" · still connecting: " + ", ".join(result.pending_servers), style="dim")
    for error in result.errors:
        out.append(f"\n! {clean(error, single_line=True)}", style="red")
    return out


def matched_summary(hit: ScoredTool) -> Text:
    """``field: term, term · field: term`` for the table's matched column."""
    out = Text()
    for i, (field, terms) in enumerate(hit.matched.items()):
        if i:
            out.append(" · ", style="dim")
        out.append(f"{FIELD_TITLES.get(field, field)}: ", style="dim")
        out.append(", ".join(clean(t, single_line=True) for t in terms), style="bold")
    return out


def hit_detail(hit: ScoredTool, explanation: str) -> Group:
    """The detail view of one hit: fields with matched terms highlighted, then the explanation."""
    tool = hit.tool
    matched = hit.matched
    rows: list[Text] = []
    title = Text()
    title.append_text(highlight_terms(tool.name, matched.get("name", []), "bold reverse"))
    title.append(f"  {hit.score:.3f}", style="bold")
    parts = ", ".join(f"{k} {v:.3f}" for k, v in hit.components.items())
    if parts:
        title.append(f"  ({parts})", style="dim")
    rows.append(title)
    if tool.description:
        desc = Text("description  ", style="dim")
        desc.append_text(
            highlight_terms(first_line(tool.description, 400), matched.get("description", []), "bold reverse")
        )
        rows.append(desc)
    names, _ = schema_params(tool.input_schema)
    if names:
        params = Text("params       ", style="dim")
        params.append_text(highlight_terms(", ".join(names[:20]), matched.get("param_names", []), "bold reverse"))
        rows.append(params)
    rows.append(Text(""))
    rows.append(Text(clean(explanation)))
    return Group(*rows)


#: Score parts that get no column of their own (``exact_name``: the rest of a named tool's 1.0).
UNRANKED_PARTS = frozenset({"exact_name"})


class ScoringPanel(Vertical):
    """Query input, ranked table and the explanation of the highlighted row.

    Args:
        engine: used for :meth:`Engine.search_tools` (the explanation comes from the search package).

    Attributes:
        clock: seconds on a monotonic clock (``time.perf_counter``) timing each search, which
            decides whether the next keystroke's echo waits for its ranking; tests replace it.
    """

    clock = staticmethod(time.perf_counter)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "next_stop", "Next", show=False, id="scoring.next"),
    ]

    class TabbedOut(Message):
        """Tab from the panel's last stop (the explanation): the screen takes the focus on to the
        tools the person can pick (the recommendation bar, a search's hits), never to the chat,
        where typing would end up in the prompt."""

    @dataclass
    class Scored(Message):
        """A query was ranked (coalesced: only the newest matters)."""

        query: str
        result: SearchResult

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, ScoringPanel.Scored)

    @dataclass
    class Rendered(Message):
        """The table has been painted with the ranking of ``query`` (``rows`` rows)."""

        query: str
        rows: int

    def __init__(self, engine: Engine, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._engine = engine
        self.result: SearchResult | None = None
        self._components: list[str] = []
        #: Height (lines) each Static was last given by :meth:`_update_static`.
        self._static_heights: dict[Static, int] = {}
        self._explained: tuple[int, str] | None = None
        self._frame_hold: ExitStack | None = None
        #: The table shown was ranked while the fused ranking was still pending.
        self._ranked_pending = False
        self._last_search_s = 0.0

    def compose(self) -> ComposeResult:
        yield QueryInput(
            placeholder="query, e.g. create issue · select:name · discover:topic · +term",
            id="scoring-query",
            before_change=self._hold_if_fast,
        )
        yield Static(Text("type to rank the deferred tools", style="dim"), id="scoring-status")
        yield RankingTable(id="scoring-table")
        with VerticalScroll(id="scoring-detail"):
            yield Static(id="scoring-explain")

    def on_mount(self) -> None:
        self._set_columns(list(self._engine.ranker_components))

    @property
    def query_text(self) -> str:
        """The query as typed."""
        return self.query_one("#scoring-query", Input).value

    def set_query(self, query: str) -> None:
        """Type ``query`` into the input (ranking follows)."""
        self.query_one("#scoring-query", Input).value = query

    def rescore(self) -> None:
        """Rank the current query again (the catalog or the settings changed)."""
        if self.query_text.strip():
            self._score(self.query_text)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "scoring-query":
            event.stop()
            self._score(event.value)

    def _hold_if_fast(self) -> None:
        """Take the frame hold as the query changes (called by the query box before the new text
        can be painted) while searches are fast (:data:`HOLD_ECHO_S`)."""
        if self._last_search_s < HOLD_ECHO_S and self.is_mounted:
            self._hold_frame()

    def action_next_stop(self) -> None:
        """Tab: query → table → explanation, then out of the panel (:class:`TabbedOut`)."""
        if self.screen.focused is self.query_one("#scoring-detail"):
            self.post_message(self.TabbedOut())
        else:
            self.screen.focus_next()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "scoring-query":
            event.stop()
            self.query_one(RankingTable).focus()

    @work(exclusive=True, group="scoring")
    async def _score(self, query: str) -> None:
        try:
            # One turn of the loop, no timer: keystrokes already queued (a held key, a fast typist)
            # arrive first and cancel this worker, so only the newest query is ranked.
            await asyncio.sleep(0)
            if not query.strip():
                self.post_message(self.Scored(query, SearchResult(query, "keyword")))
                return
            start = self.clock()
            result = self._engine.search_tools(query, MAX_ROWS)
            self._last_search_s = self.clock() - start
            self.post_message(self.Scored(query, result))
        except asyncio.CancelledError:
            raise  # a newer keystroke's worker took over the held frame
        except BaseException:
            self._release_frame()
            raise

    def on_scoring_panel_scored(self, event: Scored) -> None:
        event.stop()
        if event.query != self.query_text:
            return  # a stale answer that slipped through (the newest query's answer releases the frame)
        try:
            self.show_result(event.result)
        finally:
            self._release_frame()

    def on_unmount(self) -> None:
        self._release_frame()

    def _hold_frame(self) -> None:
        """Hold screen updates until the ranking of the query just typed is in the table.

        Why: Textual paints at most once a frame, and after painting the echo of a keystroke on
        its own its screen timer waits 1–2 frames (17–33 ms) before the next paint, so a table
        ranked 10 ms later reached the screen 20–35 ms after the key. Held, the echo and the
        ranked table are painted together in the first frame after the search. Only taken while
        searches are fast (:data:`HOLD_ECHO_S`), so a slow search never delays the echo more
        than painting it separately would delay the table.
        """
        if self._frame_hold is None:
            hold = ExitStack()
            hold.enter_context(self.app.batch_update())
            self._frame_hold = hold

    def _release_frame(self) -> None:
        """End :meth:`_hold_frame` (no-op when not held)."""
        hold, self._frame_hold = self._frame_hold, None
        if hold is not None:
            hold.close()

    def _set_columns(self, components: list[str]) -> None:
        columns = [Column("rank", "#", 2), Column("total", "total", 5)]
        columns += [Column(f"c:{name}", name[:8], max(len(name[:8]), 5)) for name in components]
        # The matched terms give up cells (cut with an ellipsis) for the table to fit the panel,
        # tool names never (the detail below shows every matched term of the highlighted row).
        columns += [Column("tool", "tool"), Column("matched", "matched", min_width=MATCHED_MIN)]
        self.query_one(RankingTable).set_columns(columns)
        self._components = components

    def show_result(self, result: SearchResult) -> None:
        """Fill the table and the status line from ``result``; the explanation follows a frame later."""
        self.result = result
        components: list[str] = []
        for hit in result.hits:
            for name in hit.components:
                # a named tool's lift to 1.0 is no signal: its total says it, the detail explains it
                if name not in components and name not in UNRANKED_PARTS:
                    components.append(name)
        if components and components != self._components:
            self._set_columns(components)
        rows: list[tuple[str, list[Text]]] = []
        for rank, hit in enumerate(result.hits, 1):
            cells = [Text(str(rank), style="dim"), Text(f"{hit.score:.3f}", style="bold")]
            cells += [Text(f"{hit.components.get(c, 0.0):.3f}") for c in self._components]
            cells.append(highlight_terms(hit.tool.name, hit.matched.get("name", []), "bold underline"))
            cells.append(matched_summary(hit))
            rows.append((hit.tool.name, cells))
        self.query_one(RankingTable).set_rows(rows)
        if not result.query.strip():
            self._set_status(Text("type to rank the deferred tools", style="dim"))
        else:
            ranker = self._ranker_status()
            self._set_status(result_status(result, ranker))
            self._ranked_pending = RANKER_PENDING in ranker
        self._explained = None
        self.call_after_refresh(self._after_render, result)

    def _after_render(self, result: SearchResult) -> None:
        if result is not self.result:
            return  # a newer result is on its way to the screen
        self.post_message(self.Rendered(result.query, len(result.hits)))
        self._explain(self.query_one(RankingTable).cursor_row)

    def ranker_changed(self) -> None:
        """The engine's ranking settled (``RankerReady``): a table ranked while tool vectors were
        still being encoded (lexically) is ranked again."""
        if self._ranked_pending:
            self._ranked_pending = False
            self.rescore()
        elif not self.query_text.strip() and list(self._engine.ranker_components) != self._components:
            self._set_columns(list(self._engine.ranker_components))  # the empty table's columns too

    def _ranker_status(self) -> str:
        return self._engine.ranker_status

    def _set_status(self, text: Text) -> None:
        """Show ``text`` in the status line."""
        self._update_static(self.query_one("#scoring-status", Static), text)

    def _update_static(self, static: Static, content: RenderableType) -> None:
        """``static.update(content)``, laying the screen out again only when its height changes.

        Why: a layout reflows every widget on the screen (5–15 ms with the catalog mounted);
        while typing, the status and the explanation of the top hit mostly keep their height.
        The height is the content's line count at the static's width, but never less than a
        ``min-height`` in cells.
        """
        width = static.content_region.width
        if width <= 0:
            static.update(content)
            self._static_heights.pop(static, None)
            return
        console = self.app.console
        lines = len(console.render_lines(content, console.options.update_width(width), pad=False))
        floor = static.styles.min_height
        if floor is not None and floor.unit is Unit.CELLS:
            lines = max(lines, int(floor.value))
        static.update(content, layout=lines != self._static_heights.get(static))
        self._static_heights[static] = lines

    def on_ranking_table_row_highlighted(self, event: RankingTable.RowHighlighted) -> None:
        event.stop()
        self._explain(event.cursor_row)

    def on_ranking_table_row_selected(self, event: RankingTable.RowSelected) -> None:
        event.stop()
        self._explain(event.cursor_row)
        self.query_one("#scoring-detail").focus()

    def _explain(self, row: int) -> None:
        explain = self.query_one("#scoring-explain", Static)
        if self.result is None or not (0 <= row < len(self.result.hits)):
            self._explained = None
            self._update_static(explain, "")
            return
        hit = self.result.hits[row]
        if self._explained == (row, hit.tool.name):
            return
        self._explained = (row, hit.tool.name)
        try:
            text = self._engine.explain(hit)
        except Exception as exc:
            text = f"(no explanation: {exc})"
        self._update_static(explain, hit_detail(hit, text))
