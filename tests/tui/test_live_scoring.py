"""Live search scoring: typing re-ranks; columns follow the result's component names; the panel
says when the table has been painted.

Harness tests: the scoring panel alone (:func:`tui_harness_panels.scoring_app`, the side panel's
size), with the engine's ``RankerReady`` reaching it as the main screen hands it on
(:class:`tui_harness_panels.ScoringHarness`). Journey (full app): the start-up heap frozen while
the app runs, with ``RankerReady`` reaching F3's panel through the main screen on the way."""

from __future__ import annotations

import asyncio
import gc

import tui_scenarios as sc
from rich.text import Text
from tui_harness_panels import ScoringHarness, scoring_app

from toolscout.tui.widgets.ranking_table import RankingTable
from toolscout.tui.widgets.scoring import ScoringPanel

SIZE = (140, 40)


def ranked(app) -> list[str]:
    return app.screen.query_one("#scoring-table", RankingTable).row_keys


async def focus_query(pilot) -> None:
    """Put the focus in the query box (what F3 does in the app)."""
    pilot.app.query_one("#scoring-query").focus()
    await pilot.pause()


async def test_typing_updates_the_ranking() -> None:
    async with scoring_app() as pilot:
        app = pilot.app
        await focus_query(pilot)
        await sc.type_text(pilot, "create issue")
        await sc.settle(pilot)
        assert ranked(app)[0] == "mcp__github__create_issue"
        assert app.screen.query_one(ScoringPanel).result.query == "create issue"
        status = str(app.screen.query_one("#scoring-status").render())
        hits = len(app.screen.query_one(ScoringPanel).result.hits)
        assert status.startswith(f"mode keyword · ranker {app.engine.search.status} · {hits} hits")
        for _ in "create issue":
            await pilot.press("backspace")
        await sc.type_text(pilot, "send slack message")
        await sc.settle(pilot)
        assert ranked(app)[0].startswith("mcp__slack__")
        assert "mcp__github__create_issue" not in ranked(app)[:3]


async def test_columns_are_the_components_the_result_reports() -> None:
    async with scoring_app(settings=sc.make_settings(**{"toolSearch.ranker": "bm25f"})) as pilot:
        app = pilot.app
        panel = app.screen.query_one(ScoringPanel)
        panel.set_query("list files in a directory")
        await sc.settle(pilot)
        hit = panel.result.hits[0]
        labels = [c.title for c in app.screen.query_one("#scoring-table", RankingTable).columns]
        for component in hit.components:
            assert component[:8] in labels
        assert "tfidf" not in hit.components or "tfidf" in labels


async def test_the_empty_scoring_table_shows_the_rankers_columns() -> None:
    async with scoring_app(settings=sc.make_settings(**{"toolSearch.ranker": "bm25f"})) as pilot:
        app = pilot.app
        table = app.screen.query_one(RankingTable)
        before = [c.title for c in table.columns]
        assert before[2:-2] == ["bm25f", "tfidf"]  # the ranker's, not the hybrid's keyword/tfidf
        header = next(line for line in sc.screen_text(app).splitlines() if " total " in line)
        assert "bm25f" in header and "keyword" not in header
        await focus_query(pilot)
        await sc.type_text(pilot, "weather")
        await sc.settle(pilot, servers=False)
        assert table.row_count > 0 and [c.title for c in table.columns] == before


async def test_query_syntax_is_the_models(monkeypatch) -> None:
    async with scoring_app() as pilot:
        app = pilot.app
        panel = app.screen.query_one(ScoringPanel)
        panel.set_query("select:mcp__time__get_current_time,nope_tool")
        await sc.settle(pilot)
        assert panel.result.mode == "select"
        assert ranked(app) == ["mcp__time__get_current_time"]
        status = str(app.screen.query_one("#scoring-status").render())
        assert "not found: nope_tool" in status
        panel.set_query("zzzqx frobnicate")
        await sc.settle(pilot)
        assert ranked(app) == []
        status = str(app.screen.query_one("#scoring-status").render())
        assert "no good match" in status or "unmatched" in status


async def test_selecting_a_row_explains_its_score() -> None:
    async with scoring_app() as pilot:
        app = pilot.app
        await focus_query(pilot)
        await sc.type_text(pilot, "weather forecast")
        await sc.settle(pilot)
        await pilot.press("enter")  # to the table
        await pilot.press("down")
        await pilot.pause()
        second = ranked(app)[1]
        explanation = sc.screen_text(app)
        assert explanation.count(second) >= 2  # the table row and the explanation
        assert "weighted" in explanation  # the search engine's own explanation


async def test_rendered_is_posted_after_the_table_shows_the_query() -> None:
    messages: list = []
    async with scoring_app(message_hook=messages.append) as pilot:
        app = pilot.app
        await focus_query(pilot)
        await sc.type_text(pilot, "create issue")
        await sc.settle(pilot)
        rendered = [m for m in messages if isinstance(m, ScoringPanel.Rendered)]
        assert rendered and rendered[-1].query == "create issue"
        assert rendered[-1].rows == len(ranked(app)) > 0
        assert "mcp__github__create_issue" in sc.screen_text(app)  # painted, not only filled


async def test_unchanged_rows_keep_their_rendered_line() -> None:
    async with scoring_app() as pilot:
        app = pilot.app
        panel = app.screen.query_one(ScoringPanel)
        table = app.screen.query_one("#scoring-table", RankingTable)
        panel.set_query("create issue")
        await sc.settle(pilot)
        first = table._row_strip(0)
        panel.set_query("create issue ")  # same ranking: the row is not rendered again
        await sc.settle(pilot)
        assert table._row_strip(0) is first


async def test_table_cursor_keys_and_click_explain_rows() -> None:
    async with scoring_app() as pilot:
        app = pilot.app
        await focus_query(pilot)
        await sc.type_text(pilot, "create issue")
        await sc.settle(pilot)
        await pilot.press("enter", "end")  # to the table, then its last row
        await sc.settle(pilot)
        table = app.screen.query_one("#scoring-table", RankingTable)
        assert table.cursor_row == table.row_count - 1
        assert ranked(app)[-1] in sc.screen_text(app)
        await pilot.press("home")
        await pilot.click("#scoring-table", offset=(10, 3))  # header + two rows down: the third row
        await sc.settle(pilot)
        assert table.cursor_row == 2
        assert app.focused.id == "scoring-detail"  # a click selects: the explanation takes focus


async def test_a_long_matched_cell_ends_in_an_ellipsis_and_the_detail_shows_it_whole() -> None:
    """At an 80-column terminal's width (the panel takes it all) the top hit's matched terms do
    not fit: its row ends in '…' inside the panel (the matched column narrows for the table to
    fit its view, where it was cut silently at the edge), and Enter on the row, then End in the
    detail, shows every matched term."""
    async with scoring_app(size=(80, 30)) as pilot:
        app = pilot.app
        await focus_query(pilot)
        await sc.type_text(pilot, "create issue")
        await sc.settle(pilot)
        hit = app.screen.query_one(ScoringPanel).result.hits[0]
        lines = sc.screen_text(app).splitlines()
        header = next(i for i, line in enumerate(lines) if " total " in line)
        assert "matched" in lines[header]
        row = lines[header + 1].rstrip()
        assert hit.tool.name[:12] in row and row.endswith("…"), row
        await pilot.press("enter", "enter", "end")  # to the table, its row's detail, the detail's end
        await sc.settle(pilot)
        detail = app.focused
        assert detail.id == "scoring-detail"
        async with asyncio.timeout(10):  # End scrolls with an animation
            while not detail.is_vertical_scroll_end:
                await pilot.pause()
        await pilot.pause()
        text = sc.screen_text(app)
        for field, terms in hit.matched.items():
            assert f"{field}: {', '.join(terms)}" in text


# -- keystroke -> ranked table latency (tests/benchmarks/ui_responsiveness.py) -----------------


async def open_scoring(pilot) -> None:
    """Settle the app, then focus the scoring input (F3)."""
    await sc.settle(pilot)
    await pilot.press("f3")
    await sc.settle(pilot)


def layout_requests(widget, monkeypatch) -> list[bool]:
    """Record every ``widget.refresh(layout=True)`` (a whole-screen reflow) from now on."""
    calls: list[bool] = []
    real = widget.refresh

    def refresh(*regions, **kwargs):
        if kwargs.get("layout"):
            calls.append(True)
        return real(*regions, **kwargs)

    monkeypatch.setattr(widget, "refresh", refresh)
    return calls


def painted_frames(app, monkeypatch) -> list[tuple[str, str]]:
    """Record, for every screen update sent to the terminal, (query in the input, query the
    table shows)."""
    frames: list[tuple[str, str]] = []
    panel = app.screen.query_one(ScoringPanel)
    real = app._display

    def display(screen, renderable):
        if renderable is not None:
            frames.append((panel.query_text, panel.result.query if panel.result else ""))
        return real(screen, renderable)

    monkeypatch.setattr(app, "_display", display)
    return frames


async def test_typing_a_query_does_not_lay_out_the_screen(monkeypatch) -> None:
    async with scoring_app() as pilot:
        app = pilot.app
        await focus_query(pilot)
        typed = layout_requests(app.focused, monkeypatch)
        await sc.type_text(pilot, "create issue")
        await sc.settle(pilot)
        assert app.focused.value == "create issue"
        assert typed == []  # Input's virtual size grew with every character: a reflow per key


async def test_the_typed_key_and_its_ranking_reach_the_screen_in_one_frame(monkeypatch) -> None:
    """Keys typed 5 ms apart in a harness app, whose tiny screen repaints at once: no frame shows
    a query above the ranking of the one before. The query box takes the frame hold as its value
    changes (QueryInput's before_change), so no repaint can fall between a key's echo and the
    panel hearing of it (with the hold taken on Input.Changed, ~1 run in 5 had a stale frame)."""
    async with scoring_app() as pilot:
        app = pilot.app
        await focus_query(pilot)
        frames = painted_frames(app, monkeypatch)
        await sc.type_text(pilot, "create issue")
        await sc.settle(pilot)
        assert ("create issue", "create issue") in frames
        stale = [f for f in frames if f[0] != f[1]]
        assert stale == []  # no frame shows a query above the ranking of the one before


async def test_a_slow_search_lets_the_echo_go_first(monkeypatch, search_clock) -> None:
    held: list[bool] = []

    async with scoring_app() as pilot:
        app = pilot.app
        real = app.engine.search_tools

        def slow_search(query, limit=None):
            held.append(app._batch_count > 0)
            search_clock.advance(0.05)  # a search slower than two frames (a cold or huge index)
            return real(query, limit)

        await focus_query(pilot)
        monkeypatch.setattr(app.engine, "search_tools", slow_search)
        for key in "ab":
            await pilot.press(key)
            await sc.settle(pilot)
        assert held == [True, False]  # the first is held (searches were fast), the next is not
        assert app._batch_count == 0
        assert app.screen.query_one(ScoringPanel).result.query == "ab"


async def test_superseded_queries_release_the_held_frame(monkeypatch) -> None:
    async with scoring_app() as pilot:
        app = pilot.app
        panel = app.screen.query_one(ScoringPanel)
        await focus_query(pilot)
        for query in ("c", "cr", "cre", "crea"):  # each cancels the worker before it
            panel.set_query(query)
        await sc.settle(pilot)
        assert panel.result.query == "crea"
        frames = painted_frames(app, monkeypatch)
        await pilot.press("end", "t")
        await sc.settle(pilot)
        assert ("creat", "creat") in frames  # the screen still updates


async def test_the_status_keeps_its_height_while_typing(monkeypatch) -> None:
    async with scoring_app() as pilot:
        app = pilot.app
        await focus_query(pilot)
        panel = app.screen.query_one(ScoringPanel)
        status = app.screen.query_one("#scoring-status")
        panel._set_status(Text("one line"))
        await sc.settle(pilot)
        reflows = layout_requests(status, monkeypatch)
        panel._set_status(Text("word " * 20))  # two lines: within the reserved height
        await sc.settle(pilot)
        assert reflows == []
        panel._set_status(Text("word " * 40))  # taller: laid out again
        await sc.settle(pilot)
        assert reflows and status.size.height > 2


async def test_a_query_longer_than_the_box_scrolls_to_the_cursor() -> None:
    async with scoring_app() as pilot:
        app = pilot.app
        await focus_query(pilot)
        box = app.focused
        long = "list " * 14 + "zzend"
        await sc.type_text(pilot, long)
        await sc.settle(pilot)
        assert box.value == long
        assert box.scroll_x > 0
        assert "zzend" in sc.screen_text(app)
        await pilot.press("home")
        await sc.settle(pilot)
        assert box.scroll_x == 0


def encoding_until_told(monkeypatch) -> dict[str, str]:
    """Make the search report "still encoding tool vectors" (a lexical ranking meanwhile) until
    the returned dict's ``status`` is changed."""
    from toolscout.core.search.tool_search import ToolSearch

    state = {"status": "bm25f (encoding 3 tools for default)"}
    monkeypatch.setattr(ToolSearch, "status", property(lambda self: state["status"]))
    return state


def counted_searches(app, monkeypatch) -> list[str]:
    """Record every query the engine is asked to rank from now on."""
    calls: list[str] = []
    real = app.engine.search_tools
    monkeypatch.setattr(app.engine, "search_tools", lambda q, limit=None: (calls.append(q), real(q, limit))[1])
    return calls


async def ranker_ready(pilot, msgs: sc.Messages) -> None:
    """Emit the engine's ``RankerReady`` and wait (bounded) until the app handled the message it
    became, then for what that started."""
    from toolscout.core.engine.events import RankerReady
    from toolscout.tui.messages import RankerChanged

    start = len(msgs.seen)
    pilot.app.engine.emit(RankerReady("default"))
    await msgs.wait_for(pilot, lambda message: isinstance(message, RankerChanged), start=start)
    await sc.settle(pilot)


def scoring_status(app) -> str:
    return str(app.screen.query_one("#scoring-status").render())


async def test_the_ranking_refreshes_when_encoding_finishes(monkeypatch) -> None:
    """A table ranked lexically while tool vectors were encoding is ranked again, unprompted,
    when the engine says the fused ranking is ready (``RankerReady``), and only then."""
    state = encoding_until_told(monkeypatch)
    async with scoring_app(harness=ScoringHarness, message_hook=(msgs := sc.Messages())) as pilot:
        app = pilot.app
        await focus_query(pilot)
        calls = counted_searches(app, monkeypatch)
        await sc.type_text(pilot, "issue")
        await sc.settle(pilot)
        assert "encoding 3 tools" in scoring_status(app)
        typed = len(calls)
        state["status"] = "default"
        await ranker_ready(pilot, msgs)
        assert len(calls) == typed + 1 and calls[-1] == "issue"
        assert "ranker default" in scoring_status(app)
        await ranker_ready(pilot, msgs)  # the table is fused already: nothing to redo
        assert len(calls) == typed + 1


async def test_the_startup_heap_is_frozen_while_the_app_runs_and_ranker_news_reaches_f3(monkeypatch) -> None:
    """Journey (full app, no session): the heap frozen at start-up stays frozen while the app
    runs and is handed back on exit; on the way, the engine's ``RankerReady`` reaches F3's
    scoring panel through the main screen (its lexical table is ranked again)."""
    state = encoding_until_told(monkeypatch)
    app = sc.make_app(session=None)
    async with app.run_test(size=SIZE, message_hook=(msgs := sc.Messages())) as pilot:
        await open_scoring(pilot)
        assert gc.get_freeze_count() > 0
        calls = counted_searches(app, monkeypatch)
        await sc.type_text(pilot, "issue")
        await sc.settle(pilot)
        assert "encoding 3 tools" in scoring_status(app)
        typed = len(calls)
        state["status"] = "default"
        await ranker_ready(pilot, msgs)
        assert calls[typed:] == ["issue"] and "ranker default" in scoring_status(app)
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0  # handed back on exit
