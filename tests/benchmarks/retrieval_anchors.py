"""Retrieval next to its anchors, and latency as a ratio measured in the same run (issue 25 item 4).

For each bench set (dev queries, all of them unless ``--sample N``): quality (R@5, nDCG@10) of
rank-bm25 BM25 over ``name + description`` (as ``bench-data/run_baselines.py``), of Claude
Code's ToolSearch as quoted in issue 25 (R@5 only; keyword-style queries in brackets), and of
the shipped ``bm25f`` and ``default`` profiles; then per-query latency p50 / p95 of each profile
and its ratio to ``bm25f``, timed query by query in the same process (interleaved, alternating
which goes first, :func:`toolscout.core.search.evaluation.evaluate` with ``reference``), and
the first-time encoding throughput of the set's tool texts (no vector cache).

``--catalogs`` also encodes every tool text of the 47 real catalogs in
``shared/bench-data/catalogs`` ``--repeat`` times (a fresh in-memory cache each time) and prints
the range of tools/s. The machine is shared: compare numbers from one run only.

Run: ``PYTHONPATH=src .venv/bin/python tests/benchmarks/retrieval_anchors.py [--sample 2000] [--catalogs]``
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BENCH, DATASETS, load_dataset
from retrieval import _base_tok

from toolscout.core.search import dense
from toolscout.core.search.evaluation import EvalQuery, evaluate, load_tools, percentile, query_metrics
from toolscout.core.search.fields import dense_text
from toolscout.core.search.index import ToolIndex
from toolscout.core.search.vector_cache import VectorCache

#: Claude Code's ToolSearch on the same queries and MCP servers, R@5 in % (issue 25; natural-
#: language queries, then keyword-style ones).
CLAUDE_CODE = {"livemcpbench": (11.6, 32.5), "metatool": (21.0, 46.4)}


def bm25_baseline(tools: list, queries: list[EvalQuery]) -> dict[str, float]:
    from rank_bm25 import BM25Okapi

    names = [t.name for t in tools]
    bm = BM25Okapi([_base_tok(f"{t.name} {t.description}") for t in tools])
    r5 = nd = 0.0
    for q in queries:
        s = bm.get_scores(_base_tok(q.query))
        ranked = [names[i] for i in np.argsort(-s, kind="stable")[:10]]
        rec, n, _ = query_metrics(ranked, q.relevant, (5,))
        r5, nd = r5 + rec[5], nd + n
    return {"R@5": 100 * r5 / len(queries), "nDCG@10": 100 * nd / len(queries)}


def catalog_texts() -> list[str]:
    texts = []
    for path in sorted((BENCH / "catalogs").glob("*.json")):
        if path.name in ("index.json", "servers.json"):
            continue
        tools, descriptions, _ = load_tools(path)
        texts += [dense_text(t, descriptions.get(t.server or "")) for t in tools]
    return texts


def encode_rate(encoder: dense.DenseEncoder, texts: list[str]) -> float:
    """Tools/s of a first-time encode of ``texts`` (nothing cached)."""
    VectorCache._memory.clear()
    start = time.perf_counter()
    dense.embed_tools(encoder, texts, VectorCache(None))
    return len(texts) / (time.perf_counter() - start)


def run(sample: int | None = 2_000, catalogs: bool = True, repeat: int = 3) -> str:
    """The tables as a Markdown section (``run_all.py`` calls it with the defaults)."""
    out = [
        "## Retrieval next to BM25 and Claude Code's ToolSearch; latency as a ratio",
        "",
        "| set | queries | BM25 R@5 | BM25 nDCG@10 | Claude Code ToolSearch R@5 (keyword queries) "
        "| bm25f R@5 | bm25f nDCG@10 | default R@5 | default nDCG@10 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lat = [
        "| set | bm25f p50 / p95 ms | default p50 / p95 ms | default ÷ bm25f (p50) | first-time encoding, tools/s |",
        "|---|---|---|---:|---:|",
    ]
    encoder = dense.load_encoder()
    for name in DATASETS:
        ds = load_dataset(name)
        qs = ds.all_queries
        if sample and len(qs) > sample:
            qs = random.Random(25).sample(qs, sample)
        base = bm25_baseline(ds.tools, qs)
        lexical = ToolIndex(ds.tools, "bm25f", server_descriptions=ds.server_descriptions)
        lex = evaluate(ds.tools, qs, profile="bm25f", index=lexical)
        rate = encode_rate(encoder, [dense_text(t, ds.server_descriptions.get(t.server or "")) for t in ds.tools])
        default = ToolIndex(ds.tools, "default", server_descriptions=ds.server_descriptions)
        rep = evaluate(ds.tools, qs, index=default, reference=lexical)
        cc = CLAUDE_CODE.get(name)
        out.append(
            f"| {name} | {len(qs)} | {base['R@5']:.1f} | {base['nDCG@10']:.1f} | "
            + (f"{cc[0]:.1f} ({cc[1]:.1f})" if cc else "–")
            + f" | {100 * lex.recall[5]:.1f} | {100 * lex.ndcg10:.1f} | "
            f"{100 * rep.recall[5]:.1f} | {100 * rep.ndcg10:.1f} |"
        )
        ref = rep.reference
        assert ref is not None
        p95 = percentile([o.latency_ms for o in rep.outcomes], 95)
        lat.append(
            f"| {name} | {ref.p50_ms:.2f} / – | {rep.latency_p50_ms:.2f} / {p95:.2f} | {ref.ratio:.1f}× | {rate:.1f} |"
        )
        print(f"{name}: done ({rep.profile})", file=sys.stderr)
    text = "\n".join([*out, "", *lat])
    if catalogs and encoder is not None:
        texts = catalog_texts()
        rates = [encode_rate(encoder, texts) for _ in range(repeat)]
        text += (
            f"\n\n47 real catalogs, {len(texts)} tool texts, first-time encoding ({repeat}×): "
            f"{min(rates):.1f}–{max(rates):.1f} tools/s (median {float(np.median(rates)):.1f}); "
            f"tool_pieces {encoder.tool_pieces}, batch pieces {dense.BATCH_PIECES}"
        )
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=None, help="at most N queries per set (seeded sample)")
    parser.add_argument("--catalogs", action="store_true", help="also time encoding the 47 real catalogs")
    parser.add_argument("--repeat", type=int, default=3, help="catalog encoding runs (default 3)")
    args = parser.parse_args()
    print(run(args.sample, args.catalogs, args.repeat))


if __name__ == "__main__":
    main()
