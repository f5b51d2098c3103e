"""Search cannot be hijacked by keyword stuffing (issue 28 item 6).

As an attacker would try it: the real GitHub server's tools (``readme_catalogs/github.json``, a
real ``tools/list`` dump) beside an impostor server whose descriptions, parameters and server
description repeat GitHub's keywords (``stuffed_catalogs/helpful-tools.json``). For GitHub queries
a real GitHub tool still ranks first beside the impostor, in every ranking profile, through the
engine's search (what ToolSearch and ``toolscout search`` run); the score explanation names what
was capped.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from toolscout.core.engine.facade import Engine
from toolscout.core.search.dense import dense_available
from toolscout.core.settings.layers import Settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
GITHUB = FIXTURES / "readme_catalogs" / "github.json"
IMPOSTOR = FIXTURES / "stuffed_catalogs" / "helpful-tools.json"
QUERIES = [
    "create a github issue",
    "open an issue on github",
    "list github issues",
    "github pull request",
    "search github repositories",
    "merge a pull request on github",
    "create a github repository",
]
PROFILES = [
    "bm25f",
    pytest.param(
        "default",
        marks=pytest.mark.skipif(not dense_available(), reason="the dense extra (onnxruntime, model) is not installed"),
    ),
    "hybrid",
]


async def _tops(profile: str, *catalogs: Path) -> dict[str, tuple[str, Engine]]:
    engine = Engine(
        Settings().with_overrides({"toolSearch.ranker": profile, "toolSearch.enabled": "true"}),
        catalog_paths=list(catalogs),
    )
    await engine.start()
    try:
        ready = await asyncio.to_thread(engine.wait_ranker_ready, 120)  # the default profile's vectors
        assert ready or profile != "default"
        assert engine.active_ranker == profile
        return {q: engine.search_tools(q, 5).hits for q in QUERIES}  # type: ignore[misc]
    finally:
        await engine.stop()


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_stuffed_server_does_not_outrank_the_real_tools(profile: str) -> None:
    """Beside the impostor a real GitHub tool ranks first for every query, and the one that
    ranks first without it is still in the top 3 (the impostor's text changes the collection's
    statistics a little, so two real tools may swap)."""
    clean = await _tops(profile, GITHUB)
    attacked = await _tops(profile, GITHUB, IMPOSTOR)
    hijacked = {q: [h.tool.name for h in attacked[q][:3]] for q in QUERIES if attacked[q][0].tool.server != "github"}
    assert not hijacked, hijacked  # query → what ranks first beside the impostor
    pushed = {
        q: (clean[q][0].tool.name, [h.tool.name for h in attacked[q][:3]])
        for q in QUERIES
        if clean[q][0].tool.name not in [h.tool.name for h in attacked[q][:3]]
    }
    assert not pushed, pushed
    assert clean["create a github issue"][0].tool.name == "mcp__github__create_issue"
    assert attacked["create a github issue"][0].tool.name == "mcp__github__create_issue"


async def test_the_explanation_says_what_was_capped() -> None:
    hits = (await _tops("bm25f", GITHUB, IMPOSTOR))["create a github issue"]
    stuffed = next(h for h in hits if h.tool.name == "mcp__helpful-tools__do_task")
    notes = " ".join(stuffed.notes)
    assert "'github': repeated terms capped (×15 in description" in notes, stuffed.notes
    assert "description and parameter text capped at one mention in the name" in notes
    from toolscout.core.search.render import explain

    assert "capped: 'github': repeated terms capped" in explain(stuffed)  # the live-scoring view's text
    real = hits[0]
    assert real.tool.name == "mcp__github__create_issue" and not real.notes  # a real tool is not capped


def test_body_text_adds_at_most_one_name_mention() -> None:
    from toolscout.core.search.lexical import BM25F_WEIGHTS
    from toolscout.core.search.stuffing import MAX_BODY_TF

    assert BM25F_WEIGHTS["name"] == MAX_BODY_TF
