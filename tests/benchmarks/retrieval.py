"""Retrieval benchmark: every configuration tried, on the tune and holdout splits of both sets.

Two parts:

1. **Sweep** — raw signals (BM25F, field TF-IDF, dense cosine, keyword points, scikit-learn
   TF-IDF) are computed once per query (and per sub-query for multi-query) through the real
   :class:`ToolIndex`, then every fusion configuration is ranked from them in numpy. Configurations
   are chosen on the *tune* split only; the holdout split (a fixed 30% of each dev file by hash)
   is reported next to it.
2. **Profiles** — the shipped profiles (``default``, ``bm25f``, ``hybrid``) and the baselines
   (rank-bm25 BM25 and scikit-learn TF-IDF over ``name + description``, as in
   ``bench-data/run_baselines.py``) run end to end through :func:`toolscout.core.search.evaluation.evaluate`.

Run: ``.venv/bin/python tests/benchmarks/retrieval.py`` (prints Markdown) or via ``run_all.py``.
"""

from __future__ import annotations

import math
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import DATASETS, Dataset, load_dataset

from toolscout.core.search.evaluation import EvalQuery, evaluate, query_metrics
from toolscout.core.search.index import ToolIndex
from toolscout.core.search.lexical import minmax
from toolscout.core.search.multiquery import split_subqueries

KS = (1, 3, 5, 10)
SIGNALS = ("bm25f", "field_tfidf", "dense", "keyword", "sk_tfidf")
Raw = dict[str, np.ndarray]


def _maxnorm(x: np.ndarray) -> np.ndarray:
    hi = float(x.max()) if len(x) else 0.0
    return x / hi if hi > 0 else np.zeros_like(x)


def linear(weights: dict[str, float], norms: dict[str, str] | None = None) -> Callable[[Raw], np.ndarray]:
    """``Σ w_s · norm_s(raw_s)`` with min-max by default (``max``/``raw`` selectable)."""
    fns = {"minmax": minmax, "max": _maxnorm, "raw": lambda x: np.clip(x, 0, 1)}
    norms = norms or {}
    default = {"bm25f": "max", "field_tfidf": "max"}  # as the shipped profiles
    return lambda raw: sum(w * fns[norms.get(s, default.get(s, "minmax"))](raw[s]) for s, w in weights.items())


def rrf(signals: tuple[str, ...], k: int = 60) -> Callable[[Raw], np.ndarray]:
    """Reciprocal rank fusion ``Σ 1 / (k + rank_s)`` (documents scoring 0 get no share)."""

    def fuse(raw: Raw) -> np.ndarray:
        out = np.zeros(len(raw[signals[0]]))
        for s in signals:
            x = raw[s]
            order = np.argsort(-x, kind="stable")
            ranks = np.empty(len(x))
            ranks[order] = np.arange(1, len(x) + 1)
            out += np.where(x > 0, 1.0 / (k + ranks), 0.0)
        return out

    return fuse


def multi(base: Callable[[Raw], np.ndarray], beta: float, agg: str = "mean") -> Callable[[Raw, list[Raw]], np.ndarray]:
    """Multi-query: ``(1 − β) · base(whole) + β · agg(base(sub) for sub-tasks)``."""

    def fuse(raw: Raw, subs: list[Raw]) -> np.ndarray:
        whole = base(raw)
        if not subs:
            return whole
        parts = np.vstack([base(s) for s in subs])
        pooled = parts.mean(axis=0) if agg == "mean" else parts.max(axis=0)
        return (1 - beta) * whole + beta * pooled

    return fuse


def _configs() -> list[tuple[str, str, Callable]]:
    """(group, label, fuse) for the sweep; multi-query fusers take ``(raw, subs)``."""
    c: list[tuple[str, str, Callable]] = [
        ("lexical", "BM25F alone (k1 1.5, b 0.3, research weights)", linear({"bm25f": 1})),
        ("lexical", "field TF-IDF alone (sublinear, stemmed)", linear({"field_tfidf": 1})),
        ("lexical", "min-max 0.5 BM25F + 0.5 field TF-IDF", linear({"bm25f": 0.5, "field_tfidf": 0.5})),
        ("lexical", "min-max 0.3 BM25F + 0.7 field TF-IDF", linear({"bm25f": 0.3, "field_tfidf": 0.7})),
        ("lexical", "min-max 0.7 BM25F + 0.3 field TF-IDF", linear({"bm25f": 0.7, "field_tfidf": 0.3})),
        ("lexical", "RRF(60) BM25F + field TF-IDF", rrf(("bm25f", "field_tfidf"))),
        ("seed", "keyword only (12/6/4/2, max-norm)", linear({"keyword": 1}, {"keyword": "max"})),
        ("seed", "scikit-learn TF-IDF name 3 / hint 2.5 / desc 1 alone", linear({"sk_tfidf": 1}, {"sk_tfidf": "raw"})),
        (
            "seed",
            "hybrid 0.4 keyword + 0.6 TF-IDF (seed formula)",
            linear({"keyword": 0.4, "sk_tfidf": 0.6}, {"keyword": "max", "sk_tfidf": "raw"}),
        ),
        (
            "seed",
            "hybrid 0.2 keyword + 0.8 TF-IDF",
            linear({"keyword": 0.2, "sk_tfidf": 0.8}, {"keyword": "max", "sk_tfidf": "raw"}),
        ),
        ("dense", "MiniLM int8 alone", linear({"dense": 1})),
    ]
    for w in (0.2, 0.3, 0.4, 0.5):
        c.append(("dense", f"min-max {w:.1f} BM25F + {1 - w:.1f} MiniLM", linear({"bm25f": w, "dense": 1 - w})))
    c += [
        (
            "dense",
            "min-max 0.15 BM25F + 0.15 field TF-IDF + 0.7 MiniLM",
            linear({"bm25f": 0.15, "field_tfidf": 0.15, "dense": 0.7}),
        ),
        ("dense", "min-max 0.3 field TF-IDF + 0.7 MiniLM", linear({"field_tfidf": 0.3, "dense": 0.7})),
        ("dense", "RRF(60) BM25F + MiniLM", rrf(("bm25f", "dense"))),
    ]
    base = linear({"bm25f": 0.3, "dense": 0.7})
    for beta in (0.2, 0.35, 0.5):
        for agg in ("mean", "max"):
            c.append(("multi", f"0.3 BM25F + 0.7 MiniLM, multi-query β {beta} {agg}", multi(base, beta, agg)))
    lex = linear({"bm25f": 0.5, "field_tfidf": 0.5})
    c.append(("multi", "0.5 BM25F + 0.5 TF-IDF, multi-query β 0.35 mean", multi(lex, 0.35, "mean")))
    return c


def collect(ds: Dataset, queries: list[EvalQuery]) -> tuple[ToolIndex, list[Raw], list[list[Raw]]]:
    """Raw signals of every query and of its sub-queries, from one real index."""
    index = ToolIndex(ds.tools, "default", server_descriptions=ds.server_descriptions, multi_query=False)
    texts = [q.query for q in queries]
    sigs = index.signals(texts, SIGNALS)
    subs_text = [split_subqueries(t) for t in texts]
    flat = [s for subs in subs_text for s in subs]
    flat_sigs = iter(index.signals(flat, SIGNALS)) if flat else iter(())
    subs = [[next(flat_sigs).raw for _ in st] for st in subs_text]
    return index, [s.raw for s in sigs], subs


def _metrics(order_names: list[list[str]], queries: list[EvalQuery]) -> dict[str, float]:
    acc = {f"R@{k}": 0.0 for k in KS} | {"nDCG@10": 0.0, "MRR": 0.0}
    for ranked, q in zip(order_names, queries, strict=True):
        rec, ndcg, rr = query_metrics(ranked, q.relevant, KS)
        for k in KS:
            acc[f"R@{k}"] += rec[k]
        acc["nDCG@10"] += ndcg
        acc["MRR"] += rr
    n = max(1, len(queries))
    return {k: 100.0 * v / n for k, v in acc.items()}


def _rank(scores: np.ndarray, names: list[str], name_rank: np.ndarray, depth: int = 10) -> list[str]:
    keep = np.flatnonzero(scores > 1e-12)
    order = np.lexsort((name_rank[keep], -np.round(scores[keep], 12)))[:depth]
    return [names[int(keep[j])] for j in order]


def sweep(ds: Dataset) -> list[dict]:
    """Every configuration on tune and holdout; rows of ``{group, config, split, metrics}``."""
    queries = ds.all_queries
    hold = {id(q) for q in ds.holdout}
    index, raws, subs = collect(ds, queries)
    m = index.store.matrices()
    rows = []
    for group, label, fuse in _configs():
        takes_subs = group == "multi"
        ranked = []
        for raw, sub in zip(raws, subs, strict=True):
            scores = fuse(raw, sub) if takes_subs else fuse(raw)
            ranked.append(_rank(scores, m.names, m.name_rank))
        for split in ("tune", "holdout"):
            idx = [i for i, q in enumerate(queries) if (id(q) in hold) == (split == "holdout")]
            rows.append(
                {
                    "dataset": ds.name,
                    "group": group,
                    "config": label,
                    "split": split,
                    **_metrics([ranked[i] for i in idx], [queries[i] for i in idx]),
                }
            )
    return rows


# -- baselines (bench-data/run_baselines.py, same tokenizer and document) ------------------------
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_TOKEN = re.compile(r"[^\W_]+")


def _base_tok(text: str) -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    text = _CAMEL.sub(" ", text or "")
    return [t for t in _TOKEN.findall(text.lower()) if t not in ENGLISH_STOP_WORDS]


def baselines(ds: Dataset) -> list[dict]:
    """rank-bm25 BM25Okapi and scikit-learn TF-IDF over ``name + description`` (stable tie-break)."""
    from rank_bm25 import BM25Okapi
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import linear_kernel

    names = [t.name for t in ds.tools]
    docs = [f"{t.name} {t.description}" for t in ds.tools]
    rows = []
    for split, qs in (("tune", ds.tune), ("holdout", ds.holdout)):
        start = time.perf_counter()
        bm = BM25Okapi([_base_tok(d) for d in docs])
        build = (time.perf_counter() - start) * 1000
        lat, ranked = [], []
        for q in qs:
            t0 = time.perf_counter()
            s = bm.get_scores(_base_tok(q.query))
            ranked.append([names[i] for i in np.argsort(-s, kind="stable")[:10]])
            lat.append((time.perf_counter() - t0) * 1000)
        rows.append(
            {
                "dataset": ds.name,
                "config": "BM25 (rank-bm25, name + description)",
                "split": split,
                **_metrics(ranked, qs),
                "p50": float(np.percentile(lat, 50)),
                "p99": float(np.percentile(lat, 99)),
                "build": build,
            }
        )
        vec = TfidfVectorizer(tokenizer=_base_tok, lowercase=False, token_pattern=None)
        start = time.perf_counter()
        d = vec.fit_transform(docs)
        build = (time.perf_counter() - start) * 1000
        lat, ranked = [], []
        for q in qs:
            t0 = time.perf_counter()
            s = linear_kernel(vec.transform([q.query]), d).ravel()
            ranked.append([names[i] for i in np.argsort(-s, kind="stable")[:10]])
            lat.append((time.perf_counter() - t0) * 1000)
        rows.append(
            {
                "dataset": ds.name,
                "config": "TF-IDF (scikit-learn, name + description)",
                "split": split,
                **_metrics(ranked, qs),
                "p50": float(np.percentile(lat, 50)),
                "p99": float(np.percentile(lat, 99)),
                "build": build,
            }
        )
    return rows


def profiles(ds: Dataset, names: tuple[str, ...] = ("default", "bm25f", "hybrid")) -> list[dict]:
    """The shipped profiles end to end through ``evaluate`` (one index per profile and split)."""
    rows = []
    for prof in names:
        for split, qs in (("tune", ds.tune), ("holdout", ds.holdout)):
            rep = evaluate(ds.tools, qs, KS, prof, server_descriptions=ds.server_descriptions)
            j = rep.to_json()
            rows.append(
                {
                    "dataset": ds.name,
                    "config": f"profile {prof}" + ("" if rep.profile == prof else f" (ran {rep.profile})"),
                    "split": split,
                    **{f"R@{k}": 100 * j["recall"][str(k)] for k in KS},
                    "nDCG@10": 100 * j["ndcg@10"],
                    "MRR": 100 * j["mrr"],
                    "p50": j["latency_ms"]["p50"],
                    "p99": j["latency_ms"]["p99"],
                    "build": j["index_build_ms"],
                }
            )
    return rows


COLS = [*(f"R@{k}" for k in KS), "nDCG@10", "MRR"]


def table(rows: list[dict], extra: tuple[str, ...] = ()) -> str:
    """Markdown table: one line per (dataset, config), tune and holdout side by side."""
    keyed: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows:
        keyed.setdefault((r["dataset"], r["config"]), {})[r["split"]] = r
    head = "| dataset | configuration | " + " | ".join(f"{c} tune | {c} hold" for c in COLS)
    head += "".join(f" | {e}" for e in extra) + " |"
    sep = "|---|---|" + "---:|" * (2 * len(COLS) + len(extra))
    lines = [head, sep]
    for (dsn, cfg), by in keyed.items():
        t, h = by.get("tune", {}), by.get("holdout", {})
        cells = " | ".join(f"{t.get(c, math.nan):.1f} | {h.get(c, math.nan):.1f}" for c in COLS)
        ex = "".join(f" | {t.get(e, math.nan):.2f}" for e in extra)
        lines.append(f"| {dsn} | {cfg} | {cells}{ex} |")
    return "\n".join(lines)


#: Targets (issue 6): points over the BASELINES.md BM25 numbers on the full dev split.
TARGETS = {
    "metatool": (12.0, {"R@5": 55.31, "nDCG@10": 49.57}),
    "livemcpbench": (8.0, {"R@5": 36.66, "nDCG@10": 33.97}),
}

NOTES = """Reading the tables: *tune* is the ~70% of each dev file used to choose configurations, *hold* the
fixed ~30% (by hash of the query id) that was only looked at after the choice. livemcpbench has 51 + 16
queries: one query moves a number by 2-6 points there, so only large differences mean anything.

Choices (made on *tune*, mean nDCG@10 over the two sets):

- `default` = min-max 0.3 BM25F + 0.7 MiniLM. 0.2 is better on metatool and worse on livemcpbench, 0.4+
  worse on both; a third TF-IDF signal changes nothing; RRF loses 4-5 points (it throws away how sure the
  embedding is).
- Multi-query (Toolshed-style split of long task texts into sub-tasks, fused with the whole query) gains
  0.4-1.6 nDCG@10 on livemcpbench *tune* (about one query), nothing on metatool (short queries rarely
  split) and nothing or a loss on livemcpbench *holdout*: not enabled (`ToolIndex(multi_query=True)` keeps
  it available). It also costs one extra encode per sub-task.
- `bm25f` = 0.7 BM25F + 0.3 field TF-IDF: the best lexical mean on *tune*, but every lexical fusion is
  within 0.5 points of BM25F alone.
- The seed `hybrid` formula (keyword 12/6/4/2 max-normalised x 0.4 + scikit-learn TF-IDF x 0.6) stays below
  BM25F on both sets, as the research predicted; the keyword score alone is the weakest signal here.
"""


def _all_dev(rows: list[dict], dataset: str, config: str) -> dict[str, float]:
    """Query-weighted mean of the tune and holdout rows = the number over the whole dev file."""
    parts = [r for r in rows if r["dataset"] == dataset and r["config"] == config]
    sizes = {r["split"]: r["_n"] for r in parts}
    total = sum(sizes.values()) or 1
    return {c: sum(r[c] * r["_n"] for r in parts) / total for c in COLS}


def targets(prof_rows: list[dict]) -> str:
    """Target check of the ``default`` profile against BM25 on the whole dev split."""
    lines = [
        "| dataset | metric | BM25 (BASELINES.md) | target | default profile (all dev) | met |",
        "|---|---|---:|---:|---:|---|",
    ]
    for ds, (gain, base) in TARGETS.items():
        cfg = next(
            (r["config"] for r in prof_rows if r["dataset"] == ds and r["config"].startswith("profile default")), None
        )
        if cfg is None:
            continue
        got = _all_dev(prof_rows, ds, cfg)
        for metric, b in base.items():
            lines.append(
                f"| {ds} | {metric} | {b:.1f} | {b + gain:.1f} | {got[metric]:.1f} | {'yes' if got[metric] >= b + gain else 'NO'} |"
            )
    return "\n".join(lines)


def run() -> str:
    """The retrieval section of the report (Markdown)."""
    out = ["## Retrieval", ""]
    prof_rows, sweep_rows = [], []
    for name in DATASETS:
        ds = load_dataset(name)
        out.append(f"- {name}: {len(ds.tools)} tools, {len(ds.tune)} tune + {len(ds.holdout)} holdout queries")
        n = {"tune": len(ds.tune), "holdout": len(ds.holdout)}
        new = baselines(ds) + profiles(ds)
        for r in new:
            r["_n"] = n[r["split"]]
        prof_rows += new
        sweep_rows += sweep(ds)
    out += [
        "",
        "### Target check (issue 6)",
        "",
        targets(prof_rows),
        "",
        "### Shipped profiles and baselines (end to end through `evaluate`; latency ms, build ms)",
        "",
        table(prof_rows, ("p50", "p99", "build")),
        "",
        "### Every configuration tried (signals computed once, fused in numpy; chosen on *tune* only)",
        "",
        table(sweep_rows),
        "",
        NOTES,
    ]
    return "\n".join(out)


if __name__ == "__main__":
    print(run())
