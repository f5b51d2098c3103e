"""Live search scoring: typing re-ranks; columns follow the result's component names; the panel
says when the table has been painted."""

from __future__ import annotations

import tui_scenarios as sc

from toolscout.tui.widgets.ranking_table import RankingTable
from toolscout.tui.widgets.scoring import ScoringPanel

SIZE = (140, 40)


def ranked(app) -> list[str]:
    return app.screen.query_one("#scoring-table", RankingTable).row_keys


async def test_typing_updates_the_ranking() -> None:
    app = sc.make_app(session=None)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        assert app.focused.id == "scoring-query"
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
    app = sc.make_app(session=None, settings=sc.make_settings(**{"toolSearch.ranker": "bm25f"}))
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        panel = app.screen.query_one(ScoringPanel)
        panel.set_query("list files in a directory")
        await sc.settle(pilot)
        hit = panel.result.hits[0]
        labels = [c.title for c in app.screen.query_one("#scoring-table", RankingTable).columns]
        for component in hit.components:
            assert component[:8] in labels
        assert "tfidf" not in hit.components or "tfidf" in labels


async def test_query_syntax_is_the_models(monkeypatch) -> None:
    app = sc.make_app(session=None)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
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
    app = sc.make_app(session=None)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press("f3")
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
    app = sc.make_app(session=None)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await sc.settle(pilot)
        await pilot.press("f3")
        await sc.type_text(pilot, "create issue")
        await sc.settle(pilot)
        rendered = [m for m in messages if isinstance(m, ScoringPanel.Rendered)]
        assert rendered and rendered[-1].query == "create issue"
        assert rendered[-1].rows == len(ranked(app)) > 0
        assert "mcp__github__create_issue" in sc.screen_text(app)  # painted, not only filled


async def test_unchanged_rows_keep_their_rendered_line() -> None:
    app = sc.make_app(session=None)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        panel = app.screen.query_one(ScoringPanel)
        table = app.screen.query_one("#scoring-table", RankingTable)
        panel.set_query("create issue")
        await sc.settle(pilot)
        first = table._row_strip(0)
        panel.set_query("create issue ")  # same ranking: the row is not rendered again
        await sc.settle(pilot)
        assert table._row_strip(0) is first


async def test_table_cursor_keys_and_click_explain_rows() -> None:
    app = sc.make_app(session=None)
    async with app.run_test(size=SIZE) as pilot:
        await sc.settle(pilot)
        await pilot.press("f3")
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
