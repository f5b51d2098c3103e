"""The live-scoring view shows why a keyword-stuffed tool does not win (issue 28 item 6).

Harness test (:func:`tui_harness_panels.scoring_app`, the side panel's size) over the real GitHub
catalog and a stuffed impostor server (``tests/fixtures/stuffed_catalogs``): typing a GitHub
query ranks the real tool first, and the impostor's row, explained with the keys, says which
repeated terms were capped.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import tui_scenarios as sc
from tui_harness_panels import scoring_app

from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.facade import Engine
from toolscout.tui.widgets.ranking_table import RankingTable

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CATALOGS = [FIXTURES / "readme_catalogs" / "github.json", FIXTURES / "stuffed_catalogs" / "helpful-tools.json"]


async def test_the_stuffed_tool_ranks_below_and_its_explanation_says_what_was_capped() -> None:
    settings = sc.make_settings(**{"toolSearch.ranker": "bm25f"})
    engine = Engine(settings, catalog_paths=CATALOGS, builtins=builtin_tools(), core_names=core_tool_names())
    async with scoring_app(engine=engine, size=(120, 40)) as pilot:
        app = pilot.app
        app.query_one("#scoring-query").focus()
        await sc.type_text(pilot, "create a github issue")
        await sc.settle(pilot)
        rows = app.screen.query_one("#scoring-table", RankingTable).row_keys
        assert rows[0] == "mcp__github__create_issue", rows
        down = rows.index("mcp__helpful-tools__do_task")
        await pilot.press("enter", *["down"] * down, "enter", "end")  # the table, the impostor's row, its detail
        await sc.settle(pilot)
        detail = app.focused
        assert detail.id == "scoring-detail"
        async with asyncio.timeout(10):  # End scrolls with an animation
            while not detail.is_vertical_scroll_end:
                await pilot.pause()
        await pilot.pause()
        text = " ".join(sc.screen_text(app).split())
        assert "capped: 'github': repeated terms capped (×15 in description" in text, text
        assert "description and parameter text capped at one mention in the name" in text
