"""The usage prior in the live-scoring panel (issue 25 item 2): once a tool has run in the
session, the panel's table has a ``usage`` column, the tool's row carries its part, and the
detail line under the table explains it; with ``toolSearch.usagePrior = 0`` there is none."""

from __future__ import annotations

import tui_scenarios as sc
from tui_harness_panels import scoring_app

from toolscout.tui.widgets.ranking_table import RankingTable
from toolscout.tui.widgets.scoring import ScoringPanel

SIZE = (140, 40)
USED = "mcp__github__create_issue"


async def test_a_tool_run_in_the_session_shows_its_usage_part() -> None:
    settings = sc.make_settings(**{"toolSearch.ranker": "bm25f"})
    async with scoring_app(settings=settings, size=SIZE) as pilot:
        app = pilot.app
        app.engine.record_tool_use(USED)  # what the session does when a call succeeds
        panel = app.screen.query_one(ScoringPanel)
        panel.set_query("open an issue")
        await sc.settle(pilot)
        hit = next(h for h in panel.result.hits if h.tool.name == USED)
        assert hit.components["usage"] > 0
        labels = [c.title for c in app.screen.query_one("#scoring-table", RankingTable).columns]
        assert "usage" in labels
        row = next(line for line in sc.screen_text(app).splitlines() if "create_issue" in line)
        assert f"{hit.components['usage']:.3f}" in row
        assert "usage" in app.engine.explain(hit)


async def test_no_usage_column_when_the_setting_turns_it_off() -> None:
    settings = sc.make_settings(**{"toolSearch.ranker": "bm25f", "toolSearch.usagePrior": 0})
    async with scoring_app(settings=settings, size=SIZE) as pilot:
        app = pilot.app
        app.engine.record_tool_use(USED)
        panel = app.screen.query_one(ScoringPanel)
        panel.set_query("open an issue")
        await sc.settle(pilot)
        assert all("usage" not in h.components for h in panel.result.hits)
        labels = [c.title for c in app.screen.query_one("#scoring-table", RankingTable).columns]
        assert "usage" not in labels
