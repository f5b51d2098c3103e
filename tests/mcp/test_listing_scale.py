"""A server with tens of thousands of tools (issue 28 item 9): its listing is bounded with one
warning naming the server and the bound, and removing 20,000 tools (a quit, a disconnect) is
done within a bounded wait, with the search answering before and after."""

from __future__ import annotations

import anyio
import pytest
from mcp_helpers import running, stdio

import toolscout.core.mcp.listing as listing
from toolscout.core.models import ServerState

pytestmark = pytest.mark.anyio
HUGE = 20_000


async def test_a_listing_over_the_bound_keeps_the_first_tools_with_one_warning():
    async with running(
        [stdio("huge", "many", str(HUGE))],
        settle_s=150,  # 20,000 tools on a loaded machine
        **{"toolSearch.ranker": "bm25f", "mcp.timeout": 120},
    ) as engine:
        assert engine.pool.status("huge").tool_count == listing.MAX_LISTING_TOOLS
        assert len(engine.catalog.server_tools("huge")) == listing.MAX_LISTING_TOOLS
        bound = [w for w in engine.warnings if "bound" in w]
        assert bound == [
            f"huge: tools/list is over toolscout's bound of {listing.MAX_LISTING_TOOLS:,} tools per "
            f"server: kept the first {listing.MAX_LISTING_TOOLS:,} tools, dropped "
            f"{HUGE - listing.MAX_LISTING_TOOLS:,}"
        ]


async def test_twenty_thousand_tools_are_searched_and_removed_without_a_hang(monkeypatch):
    monkeypatch.setattr(listing, "MAX_LISTING_TOOLS", 50_000)
    async with running(
        [stdio("huge", "many", str(HUGE)), stdio("small", "many", "20")],
        settle_s=150,
        **{"toolSearch.ranker": "bm25f", "mcp.timeout": 120},
    ) as engine:
        assert len(engine.catalog.server_tools("huge")) == HUGE
        hits = engine.search.search("archive invoice record 19994").hits
        assert hits and hits[0].tool.server == "huge"
        with anyio.fail_after(60):  # was minutes: one set of every removed name per kept name
            await engine.pool.disconnect("huge")
            while engine.catalog.server_tools("huge"):
                await anyio.sleep(0.05)
        assert engine.pool.status("huge").state is not ServerState.CONNECTED
        assert len(engine.catalog.server_tools("small")) == 20
        assert all(h.tool.server == "small" for h in engine.search.search("archive invoice record").hits)
