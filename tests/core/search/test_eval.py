"""Evaluation metrics on hand-checked examples, the JSON contract, the CLI body, real data."""

from __future__ import annotations

import io
import json
import math
from argparse import Namespace
from pathlib import Path

import pytest
from test_search_support import DENSE

from toolscout.core.models import ToolSpec
from toolscout.core.search.evaluation import (
    EvalQuery,
    evaluate,
    load_queries,
    load_tools,
    percentile,
    query_metrics,
    run_eval_cli,
)

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared"
LOG2_3 = math.log2(3)


def test_query_metrics_by_hand():
    # ranked B, A, C; relevant A and C
    recall, ndcg, rr = query_metrics(["B", "A", "C"], ["A", "C"], (1, 3))
    assert recall == {1: 0.0, 3: 1.0}
    dcg = 1 / LOG2_3 + 1 / 2  # hits at ranks 2 and 3
    idcg = 1 + 1 / LOG2_3  # two relevant tools at ranks 1 and 2
    assert math.isclose(ndcg, dcg / idcg)
    assert rr == 0.5
    assert query_metrics([], ["A"], (1,)) == ({1: 0.0}, 0.0, 0.0)


TOOLS = [ToolSpec("apple", "apple fruit"), ToolSpec("banana", "banana fruit"), ToolSpec("car", "car vehicle")]
QUERIES = [
    EvalQuery("apple", ("apple",)),  # ranked: apple          -> R@1 1, nDCG 1, RR 1
    EvalQuery("fruit", ("banana",)),  # tie, by name: apple, banana -> R@1 0, R@3 1, nDCG 1/log2(3), RR 1/2
    EvalQuery("vehicle", ("car", "apple")),  # ranked: car   -> R@1 1/2, R@3 1/2, nDCG 1/(1+1/log2(3)), RR 1
]


def test_evaluate_by_hand():
    rep = evaluate(TOOLS, QUERIES, ks=(1, 3), profile="bm25f")
    assert rep.n_queries == 3 and rep.n_tools == 3
    assert math.isclose(rep.recall[1], (1 + 0 + 0.5) / 3)
    assert math.isclose(rep.recall[3], (1 + 1 + 0.5) / 3)
    assert math.isclose(rep.ndcg10, (1 + 1 / LOG2_3 + 1 / (1 + 1 / LOG2_3)) / 3)
    assert math.isclose(rep.mrr, (1 + 0.5 + 1) / 3)
    data = rep.to_json()
    assert list(data) == ["queries", "tools", "recall", "ndcg@10", "mrr", "latency_ms", "index_build_ms"]
    assert list(data["recall"]) == ["1", "3"]
    assert set(data["latency_ms"]) == {"p50", "p99"}
    assert all(0 <= v <= 1 for v in data["recall"].values())
    worst = rep.worst(1)
    assert worst[0]["query"] == "vehicle" and worst[0]["relevant"] == {"car": 1, "apple": None}


def test_percentile():
    assert percentile([], 50) == 0.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert math.isclose(percentile(list(range(101)), 99), 99.0)


def _write(tmp_path: Path) -> tuple[Path, Path]:
    tools = tmp_path / "tools.jsonl"
    tools.write_text(
        "\n".join(
            json.dumps(d)
            for d in (
                {"name": "s::apple", "description": "apple fruit", "server": "s", "server_description": "food"},
                {"name": "s::banana", "description": "banana fruit", "server": "s"},
                {"name": "car", "description": "car vehicle"},
            )
        ),
        encoding="utf-8",
    )
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"query": "vehicle", "relevant": ["car"]}\nnot json\n{"query": "apple", "relevant": ["s::apple"]}\n',
        encoding="utf-8",
    )
    return tools, queries


def test_loaders_keep_names_and_servers(tmp_path):
    tools_path, q_path = _write(tmp_path)
    tools, desc, _ = load_tools(tools_path)
    assert [t.name for t in tools] == ["s::apple", "s::banana", "car"]
    assert tools[0].server == "s" and tools[2].server is None
    assert desc == {"s": "food"}
    queries, warnings = load_queries(q_path)
    assert len(queries) == 2 and len(warnings) == 1


def test_run_eval_cli_json_and_text(tmp_path):
    tools_path, q_path = _write(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    args = Namespace(tools=tools_path, queries=q_path, k="1,3", json=True, explain_failures=1, ranker="bm25f")
    assert run_eval_cli(args, out, err) == 0
    data = json.loads(out.getvalue())
    assert data["queries"] == 2 and data["recall"] == {"1": 1.0, "3": 1.0}
    assert len(data["failures"]) == 1
    out = io.StringIO()
    args = Namespace(tools=tools_path, queries=q_path, k=None, json=False, explain_failures=0, ranker="hybrid")
    assert run_eval_cli(args, out, io.StringIO()) == 0
    assert "R@10 100.0" in out.getvalue()
    bad = Namespace(tools=tmp_path / "none.jsonl", queries=q_path, k="1", json=False, explain_failures=0, ranker=None)
    err = io.StringIO()
    assert run_eval_cli(bad, io.StringIO(), err) == 2 and "no such file" in err.getvalue()
    assert run_eval_cli(Namespace(tools=tools_path, queries=q_path, k="0,x"), io.StringIO(), io.StringIO()) == 2


@pytest.mark.skipif(not (SHARED / "bench-data" / "livemcpbench").is_dir(), reason="../shared/bench-data not present")
def test_livemcpbench_bm25f_beats_published_bm25():
    base = SHARED / "bench-data" / "livemcpbench"
    tools, desc, _ = load_tools(base / "tools.jsonl")
    queries, _ = load_queries(base / "queries.jsonl")
    rep = evaluate(tools, queries, profile="bm25f", server_descriptions=desc)
    assert rep.n_tools == 527 and rep.n_queries == 67
    # BASELINES.md: BM25 nDCG@10 33.97; the research doc's BM25F* 37.0
    assert rep.ndcg10 > 0.35


def test_run_eval_cli_times_the_lexical_profile_in_the_same_run(tmp_path):
    tools_path, q_path = _write(tmp_path)
    out = io.StringIO()
    args = Namespace(tools=tools_path, queries=q_path, k="1,3", json=True, explain_failures=0, ranker="hybrid")
    assert run_eval_cli(args, out, io.StringIO()) == 0
    data = json.loads(out.getvalue())
    ref = data["lexical_latency_ms"]
    assert ref["profile"] == "bm25f" and set(ref) == {"profile", "p50", "p99", "ratio_p50"}
    assert ref["p50"] > 0 and ref["ratio_p50"] == pytest.approx(data["latency_ms"]["p50"] / ref["p50"], rel=0.02)
    assert "encoding" not in data  # no dense signal: nothing encoded
    out = io.StringIO()
    args = Namespace(tools=tools_path, queries=q_path, k="1,3", json=False, explain_failures=0, ranker="hybrid")
    assert run_eval_cli(args, out, io.StringIO()) == 0
    assert "bm25f (lexical) in the same run, queries interleaved" in out.getvalue()
    # the lexical profile itself has no reference to compare with
    out = io.StringIO()
    args = Namespace(tools=tools_path, queries=q_path, k="1", json=True, explain_failures=0, ranker="bm25f")
    assert run_eval_cli(args, out, io.StringIO()) == 0
    assert "lexical_latency_ms" not in json.loads(out.getvalue())


@pytest.mark.skipif(not DENSE, reason="dense extra not installed")
def test_run_eval_cli_reports_first_time_encoding_throughput(tmp_path):
    tools_path, q_path = _write(tmp_path)
    out = io.StringIO()
    args = Namespace(
        tools=tools_path, queries=q_path, k="1", json=True, explain_failures=0, ranker="default", no_cache=True
    )
    assert run_eval_cli(args, out, io.StringIO()) == 0
    data = json.loads(out.getvalue())
    if "encoding" not in data:
        pytest.skip("dense encoder unavailable")
    enc = data["encoding"]
    assert enc["encoded"] + enc["cached"] == 3 and enc["texts_per_s"] >= 0
    assert data["lexical_latency_ms"]["ratio_p50"] > 0
