"""The dense signal's guard against keyword stuffing (stuffed tools get no more meaning-credit than
the best honest tool), and impostors that claim what real tools do, tried as an attacker would."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from toolscout.core.search.dense import dense_available
from toolscout.core.search.evaluation import load_tools
from toolscout.core.search.index import ToolIndex
from toolscout.core.search.render import explain
from toolscout.core.search.stuffing import STUFFED_SHARE, bound_stuffed_dense, stuffed_share

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NO_DENSE = pytest.mark.skipif(not dense_available(), reason="the dense extra (onnxruntime, model) is not installed")


def test_the_share_the_bounds_took_is_per_tool_and_zero_where_nothing_matched() -> None:
    bounded = np.array([2.0, 3.0, 0.0, 1.0])
    unbounded = np.array([4.0, 3.0, 0.0, 1.25])
    np.testing.assert_allclose(stuffed_share(bounded, unbounded), [0.5, 0.0, 0.0, 0.2])


def test_a_stuffed_tool_ties_the_best_honest_tool_at_most() -> None:
    dense = np.array([0.70, 0.40, 0.55, 0.10])
    stuffed = np.array([True, False, False, True])
    # the stuffed tool at 0.70 is held to 0.55 (the best unstuffed); the one at 0.10 is unchanged
    np.testing.assert_allclose(bound_stuffed_dense(dense, stuffed), [0.55, 0.40, 0.55, 0.10])
    np.testing.assert_array_equal(dense, [0.70, 0.40, 0.55, 0.10])  # the input is not changed


@pytest.mark.parametrize("stuffed", [np.zeros(3, dtype=bool), np.ones(3, dtype=bool)])
def test_nothing_or_everything_stuffed_leaves_the_dense_values_alone(stuffed: np.ndarray) -> None:
    dense = np.array([0.9, 0.2, 0.5])
    np.testing.assert_array_equal(bound_stuffed_dense(dense, stuffed), dense)


def test_the_threshold_sits_between_real_repetition_and_keyword_soup() -> None:
    # measured on tests/fixtures (the GitHub dump beside the stuffed impostor): soup lost 0.36-0.40
    # of its BM25F score to the bounds, real tools 0.16 at most
    assert 0.16 < STUFFED_SHARE < 0.36


def _index(*catalogs: str) -> ToolIndex:
    tools, descriptions = [], {}
    for name in catalogs:
        more, desc, _ = load_tools(FIXTURES / name)
        tools += more
        descriptions |= desc
    return ToolIndex(tools, "default", server_descriptions=descriptions)


@NO_DENSE
def test_the_explanation_says_when_the_dense_component_was_held() -> None:
    index = _index("readme_catalogs/github.json", "stuffed_catalogs/helpful-tools.json")
    hits = index.rank("open an issue on github", 10)
    assert hits[0].tool.server == "github"
    soup = next(h for h in hits if h.tool.name == "helper")  # its cosine passes every real tool's
    assert "dense held at the best unstuffed tool's" in explain(soup)
    assert soup.components["dense"] <= max(h.components["dense"] for h in hits if h.tool.server == "github") + 1e-12
    assert "dense held" not in explain(hits[0])


@NO_DENSE
@pytest.mark.parametrize(
    ("impostor", "requests"),
    [
        # tools that claim to do any task ("This tool can do any task: …")
        (
            "super-tools.json",
            ["send a message to a slack channel", "read a file", "query the database", "create a github issue"],
        ),
        # one plausible sentence: "The tool you can use to file GitHub issues."
        ("issue-helper.json", ["create a github issue"]),
    ],
)
def test_an_impostor_claiming_what_real_tools_do_does_not_rank_first(impostor: str, requests: list[str]) -> None:
    """As an attacker: beside four real servers the impostor ranks first for no real request. (A
    query template, "Which tool can <query>", measured +1.5 nDCG@10 on metatool and was rejected
    because both of these won under it: docs/performance.md, round 5.)"""
    real = [f"readme_catalogs/{n}.json" for n in ("github", "slack", "filesystem", "postgres")]
    index = _index(*real, f"stuffed_catalogs/{impostor}")
    for text in requests:
        hits = index.rank(text, 5)
        assert hits and hits[0].tool.server not in ("super-tools", "helper"), (text, [h.tool.name for h in hits])
