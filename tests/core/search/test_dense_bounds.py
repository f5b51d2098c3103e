"""The dense signal's two guards: stuffed tools get no more meaning-credit than the best honest
tool, and the templated default reads a confidence the template does not shift."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from toolscout.core.search.dense import dense_available
from toolscout.core.search.evaluation import load_tools
from toolscout.core.search.index import ToolIndex
from toolscout.core.search.profiles import DENSE_MARGIN, make_profile
from toolscout.core.search.query_template import TOOLNESS_PERCENTILE, template_excess
from toolscout.core.search.render import explain
from toolscout.core.search.stuffing import STUFFED_SHARE, bound_stuffed_dense, stuffed_share


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


def test_the_default_gate_reads_the_lead_over_the_median_and_as_typed_the_best_cosine() -> None:
    templated, as_typed = make_profile("default"), make_profile("default-as-typed")
    lifted = np.array([0.62, 0.40, 0.38, 0.36, 0.35])  # every cosine raised by a shared template
    plain = lifted - 0.05
    lo, hi = DENSE_MARGIN
    assert templated.dense_confidence(lifted) == pytest.approx((0.62 - 0.38 - lo) / (hi - lo))
    assert templated.dense_confidence(lifted) == pytest.approx(templated.dense_confidence(plain))
    assert as_typed.dense_confidence(plain) == pytest.approx((0.57 - 0.25) / (0.60 - 0.25))
    assert as_typed.dense_confidence(lifted) > as_typed.dense_confidence(plain)  # the shift shows
    assert templated.dense_confidence(np.full(5, 0.9)) == 0.0  # no tool stands out: no confidence
    assert as_typed.dense_confidence(np.full(5, 0.9)) == 1.0


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.skipif(not dense_available(), reason="the dense extra (onnxruntime, model) is not installed")
@pytest.mark.parametrize("profile", ["default", "default-as-typed"])
def test_the_explanation_says_when_the_dense_component_was_held(profile: str) -> None:
    tools, descriptions = [], {}
    for name in ("readme_catalogs/github.json", "stuffed_catalogs/helpful-tools.json"):
        more, desc, _ = load_tools(FIXTURES / name)
        tools += more
        descriptions |= desc
    hits = ToolIndex(tools, profile, server_descriptions=descriptions).rank("create a github issue", 5)
    assert hits[0].tool.name == "create_issue" and hits[0].tool.server == "github"
    soup = next(h for h in hits if h.tool.name == "do_task")
    text = explain(soup)
    assert "repeated terms capped" in text
    # with the template the soup's cosine passes the real tool's and is held; as typed it is below it
    assert ("dense held at the best unstuffed tool's" in text) == (profile == "default")
    assert soup.components["dense"] <= max(h.components["dense"] for h in hits if h.tool.server == "github") + 1e-12
    real = explain(hits[0])
    assert "dense held" not in real


def test_only_toolness_above_the_catalogs_90th_percentile_is_taken_off() -> None:
    toolness = np.linspace(0.0, 0.45, 10)  # the last tool claims to be a tool far more than the rest
    excess = template_excess(toolness)
    cut = float(np.percentile(toolness, TOOLNESS_PERCENTILE))
    assert np.count_nonzero(excess) == 1 and excess[-1] == pytest.approx(0.45 - cut)
    assert template_excess(np.zeros(0)).shape == (0,)


@pytest.mark.skipif(not dense_available(), reason="the dense extra (onnxruntime, model) is not installed")
def test_a_tool_that_claims_to_do_everything_does_not_take_the_templates_lift() -> None:
    """As an attacker: a server whose tools say they can do any task ranks no higher for real
    requests under the templated default than under the query as typed, and the explanation
    says what was taken off."""
    tools, descriptions = [], {}
    for name in ("github", "slack", "filesystem", "postgres"):
        more, desc, _ = load_tools(FIXTURES / "readme_catalogs" / f"{name}.json")
        tools += more
        descriptions |= desc
    impostor, desc, _ = load_tools(FIXTURES / "stuffed_catalogs" / "super-tools.json")
    tools += impostor
    descriptions |= desc
    requests = ["send a message to a slack channel", "read a file", "query the database", "create a github issue"]
    for profile in ("default", "default-as-typed"):
        index = ToolIndex(tools, profile, server_descriptions=descriptions)
        for text in requests:
            hits = index.rank(text, 10)
            assert hits[0].tool.server != "super-tools", (profile, text, [h.tool.name for h in hits])
    hits = ToolIndex(tools, "default", server_descriptions=descriptions).rank("query the database", 10)
    claimed = next(h for h in hits if h.tool.name == "universal_tool")
    assert "answers the bare query template" in explain(claimed)
