"""Retrieval evaluation: Recall@k, nDCG@10, MRR, latency and build time of a ranking profile.

Metric definitions follow ``shared/bench-data/run_baselines.py`` so numbers are comparable with
``BASELINES.md``: macro-averaged over queries, ``R@k = |relevant ∩ top-k| / |relevant|``,
nDCG@10 with binary gains and ideal DCG over ``min(|relevant|, 10)`` hits, MRR = mean of
``1 / rank`` of the first relevant tool (0 when none is in the ranked list). Latency is wall
time of one :meth:`ToolIndex.rank` call per query (ms); build time is index construction (ms).

Latency is only comparable within one run on one machine (a shared 2-core machine moves it by
2× and more), so ``toolscout eval`` also times the lexical ``bm25f`` profile on the same queries,
interleaved with the profile under test (query by query, alternating which goes first), and
reports the ratio of the two medians (:class:`LatencyReference`). It reports the encoding
throughput of the build too (:class:`EncodingStats`).

Input formats: tools as read by :func:`toolscout.core.catalog.loaders.load_catalog` (identity = ``name``
exactly as written; a JSONL ``server`` becomes ``ToolSpec.server`` and ``server_description``
goes to the index); queries as JSONL ``{"query": str, "relevant": [name, ...]}``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..catalog.loaders import CatalogFileError, load_catalog
from ..models import ToolSpec
from ..safe_read import MAX_LARGE_BYTES, parse_json, read_text
from .eval_stats import EncodingStats, LatencyReference, percentile, query_metrics

if TYPE_CHECKING:
    from .index import ToolIndex

DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
#: How deep rankings are inspected when explaining failures.
EXPLAIN_DEPTH = 100
#: Skipped-line warnings printed per input file before "… and N more" (a wrong file skips every line).
SHOWN_WARNINGS = 5


@dataclass(frozen=True)
class EvalQuery:
    """One labelled query: text, relevant tool names, and an optional id."""

    query: str
    relevant: tuple[str, ...]
    qid: str = ""


@dataclass
class QueryOutcome:
    """Per-query result: the ranked names (top ``max(ks, 10)``) and the metrics."""

    query: EvalQuery
    ranked: list[str]
    recall: dict[int, float]
    ndcg: float
    rr: float
    latency_ms: float


@dataclass
class EvalReport:
    """Aggregated evaluation of one profile on one query set.

    Attributes:
        n_queries, n_tools: sizes. ks: the cut-offs. recall: k → macro R@k (fraction 0..1).
        ndcg10: macro nDCG@10. mrr: mean reciprocal rank. latency_p50_ms / latency_p99_ms:
        per-query rank latency percentiles (ms). index_build_ms: index construction (ms).
        profile: the profile that ranked (after any fallback). outcomes: per-query details.
    """

    n_queries: int
    n_tools: int
    ks: tuple[int, ...]
    recall: dict[int, float]
    ndcg10: float
    mrr: float
    latency_p50_ms: float
    latency_p99_ms: float
    index_build_ms: float
    profile: str = ""
    reference: LatencyReference | None = None
    encoding: EncodingStats | None = None
    outcomes: list[QueryOutcome] = field(default_factory=list, repr=False)
    _index: ToolIndex | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON contract of ``toolscout eval --json`` (``lexical_latency_ms`` and
        ``encoding`` only when measured)."""
        out: dict[str, Any] = {
            "queries": self.n_queries,
            "tools": self.n_tools,
            "recall": {str(k): round(self.recall[k], 6) for k in self.ks},
            "ndcg@10": round(self.ndcg10, 6),
            "mrr": round(self.mrr, 6),
            "latency_ms": {"p50": round(self.latency_p50_ms, 3), "p99": round(self.latency_p99_ms, 3)},
            "index_build_ms": round(self.index_build_ms, 3),
        }
        if self.reference is not None:
            ref = self.reference
            out["lexical_latency_ms"] = {
                "profile": ref.profile,
                "p50": round(ref.p50_ms, 3),
                "p99": round(ref.p99_ms, 3),
                "ratio_p50": round(ref.ratio, 2),
            }
        if self.encoding is not None:
            enc = self.encoding
            out["encoding"] = {
                "encoded": enc.encoded,
                "cached": enc.cached,
                "seconds": round(enc.seconds, 3),
                "texts_per_s": round(enc.texts_per_s, 1),
            }
        return out

    def worst(self, n: int) -> list[dict[str, Any]]:
        """The ``n`` worst queries (lowest nDCG@10, then recall, then text), each with the rank
        (1-based, or None beyond :data:`EXPLAIN_DEPTH`) of every relevant tool and the top 5."""
        bad = sorted(
            self.outcomes,
            key=lambda o: (o.ndcg, o.recall[max(self.ks)], o.query.query),
        )[: max(0, n)]
        out = []
        for o in bad:
            ranked = o.ranked
            if self._index is not None:
                ranked = [h.tool.name for h in self._index.rank(o.query.query, EXPLAIN_DEPTH)]
            pos = {name: i + 1 for i, name in enumerate(ranked)}
            out.append(
                {
                    "qid": o.query.qid,
                    "query": o.query.query,
                    "ndcg@10": round(o.ndcg, 4),
                    "relevant": {name: pos.get(name) for name in o.query.relevant},
                    "top": ranked[:5],
                }
            )
        return out

    def to_text(self) -> str:
        """Human-readable summary (percentages)."""
        rec = "  ".join(f"R@{k} {100 * self.recall[k]:.1f}" for k in self.ks)
        text = (
            f"{self.n_queries} queries, {self.n_tools} tools, profile {self.profile}\n"
            f"{rec}  nDCG@10 {100 * self.ndcg10:.1f}  MRR {100 * self.mrr:.1f}\n"
            f"latency p50 {self.latency_p50_ms:.2f} ms, p99 {self.latency_p99_ms:.2f} ms; "
            f"index build {self.index_build_ms:.0f} ms"
        )
        if self.reference is not None:
            ref = self.reference
            text += (
                f"\n{ref.profile} (lexical) in the same run, queries interleaved: p50 {ref.p50_ms:.2f} ms, "
                f"p99 {ref.p99_ms:.2f} ms; {self.profile} p50 = {ref.ratio:.1f}× {ref.profile}"
            )
        if self.encoding is not None:
            enc = self.encoding
            text += f"\nencoding: {enc.encoded} tool texts"
            text += f" in {enc.seconds:.1f} s ({enc.texts_per_s:.1f} texts/s)" if enc.encoded else ""
            text += f", {enc.cached} from the vector cache"
        return text


def load_tools(path: str | Path) -> tuple[list[ToolSpec], dict[str, str], list[str]]:
    """Tools, server descriptions and warnings from a catalog file or directory.

    Raises:
        CatalogFileError: the path is missing or not a catalog.
    """
    cat = load_catalog(path)
    tools: list[ToolSpec] = []
    descriptions: dict[str, str] = {}
    for group in cat.servers:
        for tool in group.tools:
            tools.append(replace(tool, server=group.name) if group.name else tool)
        if group.name and group.description:
            descriptions[group.name] = group.description
    return tools, descriptions, list(cat.warnings)


def load_queries(path: str | Path) -> tuple[list[EvalQuery], list[str]]:
    """Queries from JSONL (``query``, ``relevant``, optional ``qid``); bad lines become warnings.

    Raises:
        FileNotFoundError: no such file.
        SafeReadError: not a regular file, over the size cap, unreadable or not UTF-8.
    """
    queries: list[EvalQuery] = []
    warnings: list[str] = []
    text = read_text(path, max_bytes=MAX_LARGE_BYTES)
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = parse_json(line)
        except ValueError as exc:
            warnings.append(f"{path}:{lineno}: skipped: {exc}")
            continue
        q = raw.get("query") if isinstance(raw, dict) else None
        rel = raw.get("relevant") if isinstance(raw, dict) else None
        if not isinstance(q, str) or not isinstance(rel, list) or not rel:
            warnings.append(f"{path}:{lineno}: skipped: needs 'query' and a non-empty 'relevant' list")
            continue
        qid = raw.get("qid")
        queries.append(EvalQuery(q, tuple(str(r) for r in rel), str(qid) if qid is not None else str(lineno)))
    return queries, warnings


def evaluate(
    tools: Sequence[ToolSpec],
    queries: Sequence[EvalQuery | dict[str, Any]],
    ks: Sequence[int] = DEFAULT_KS,
    profile: str = "default",
    *,
    server_descriptions: dict[str, str] | None = None,
    index: ToolIndex | None = None,
    reference: ToolIndex | None = None,
    **index_options: Any,
) -> EvalReport:
    """Rank every query with a :class:`~toolscout.core.search.index.ToolIndex` and score it.

    Args:
        tools: the catalog (identity = ``tool.name``).
        queries: :class:`EvalQuery` or dicts with ``query`` and ``relevant``.
        ks: Recall cut-offs (positive ints).
        profile: ranking profile (``default`` | ``bm25f`` | ``hybrid``).
        server_descriptions: server → description for the index.
        index: an already built index to reuse (then ``index_build_ms`` is 0).
        reference: an index of the lexical profile over the same tools, timed on every query
            next to ``index`` (alternating which goes first) for :attr:`EvalReport.reference`.
        **index_options: passed to ``ToolIndex`` (``weights``, ``multi_query`` ...).

    Returns:
        An :class:`EvalReport` (fractions in [0, 1]).
    """
    from .index import ToolIndex

    ks = tuple(sorted({int(k) for k in ks if int(k) > 0})) or DEFAULT_KS
    qs = [
        q if isinstance(q, EvalQuery) else EvalQuery(str(q["query"]), tuple(q["relevant"]), str(q.get("qid", "")))
        for q in queries
    ]
    build_ms = 0.0
    if index is None:
        start = time.perf_counter()
        index = ToolIndex(tools, profile, server_descriptions=server_descriptions, **index_options)
        index.rank("warm up", 1)  # builds the lazy matrices: part of the build, not of query 1
        build_ms = (time.perf_counter() - start) * 1000.0
    depth = max(max(ks), 10)
    outcomes: list[QueryOutcome] = []
    ref_lat: list[float] = []
    for i, q in enumerate(qs):
        if reference is not None and i % 2:
            ref_lat.append(_timed(reference, q.query, depth))
        start = time.perf_counter()
        hits = index.rank(q.query, depth)
        elapsed = (time.perf_counter() - start) * 1000.0
        if reference is not None and not i % 2:
            ref_lat.append(_timed(reference, q.query, depth))
        ranked = [h.tool.name for h in hits]
        recall, ndcg, rr = query_metrics(ranked, q.relevant, ks)
        outcomes.append(QueryOutcome(q, ranked, recall, ndcg, rr, elapsed))
    n = len(outcomes) or 1
    lat = [o.latency_ms for o in outcomes]
    ref = None
    if reference is not None:
        ref_p50 = percentile(ref_lat, 50)
        ratio = percentile(lat, 50) / ref_p50 if ref_p50 > 0 else 0.0
        ref = LatencyReference(reference.active_profile, ref_p50, percentile(ref_lat, 99), ratio)
    return EvalReport(
        n_queries=len(outcomes),
        n_tools=len(index),
        ks=ks,
        recall={k: sum(o.recall[k] for o in outcomes) / n for k in ks},
        ndcg10=sum(o.ndcg for o in outcomes) / n,
        mrr=sum(o.rr for o in outcomes) / n,
        latency_p50_ms=percentile(lat, 50),
        latency_p99_ms=percentile(lat, 99),
        index_build_ms=build_ms,
        profile=index.active_profile,
        reference=ref,
        outcomes=outcomes,
        _index=index,
    )


def _timed(index: ToolIndex, text: str, depth: int) -> float:
    start = time.perf_counter()
    index.rank(text, depth)
    return (time.perf_counter() - start) * 1000.0


def _parse_ks(value: Any) -> tuple[int, ...]:
    if value is None:
        return DEFAULT_KS
    parts = [p for p in value.replace(" ", "").split(",") if p] if isinstance(value, str) else list(value)
    try:
        ks = tuple(int(p) for p in parts)
    except (TypeError, ValueError):
        raise ValueError(f"--k takes comma-separated positive integers, e.g. 1,3,5,10 (got {value!r})") from None
    if not ks or any(k <= 0 for k in ks):
        raise ValueError("k values must be positive integers, e.g. 1,3,5,10")
    return ks


def evaluate_with_reference(
    tools: list[ToolSpec],
    queries: list[EvalQuery],
    ks: tuple[int, ...],
    profile: str,
    descriptions: dict[str, str],
    no_cache: bool,
) -> EvalReport:
    """:func:`evaluate` of ``profile`` with the lexical profile timed next to it and, for a dense
    profile, the encoding throughput of the build (``no_cache``: no vector cache, every text is
    encoded, as on a first run). The encoding time is the dense build minus a lexical build of
    the same tools (tokenising and postings), the model already loaded."""
    from .dense import default_cache_path, load_encoder
    from .index import ToolIndex

    lexical = ToolIndex(tools, "bm25f", server_descriptions=descriptions)
    lexical.rank("warm up", 1)  # imports and first-use setup: not part of the timed builds
    start = time.perf_counter()
    ToolIndex(tools, "bm25f", server_descriptions=descriptions).rank("warm up", 1)
    lexical_ms = (time.perf_counter() - start) * 1000.0
    if profile == "default":
        load_encoder()  # the model's load (~0.5 s) is not encoding
    start = time.perf_counter()
    # tool vectors come from the user's vector cache, so only the first run pays for encoding
    index = ToolIndex(
        tools, profile, server_descriptions=descriptions, dense_cache=None if no_cache else default_cache_path()
    )
    index.rank("warm up", 1)
    build_ms = (time.perf_counter() - start) * 1000.0
    report = evaluate(tools, queries, ks, profile, index=index, reference=None if profile == "bm25f" else lexical)
    report.index_build_ms = build_ms
    if "dense" in index.profile.signals and index.dense_ready:
        seconds = max(0.0, build_ms - lexical_ms) / 1000.0
        report.encoding = EncodingStats(index.encoded_texts, len(index) - index.encoded_texts, seconds)
    return report


def summarise(warnings: Sequence[str], shown: int = SHOWN_WARNINGS, what: str = "") -> list[str]:
    """The first ``shown`` of ``warnings`` and, when there are more, ``… and N more [what]``."""
    rest = len(warnings) - shown
    return [*warnings[:shown], *([f"… and {rest} more{' ' + what if what else ''}"] if rest > 0 else [])]


def run_eval_cli(args: Any, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Body of ``toolscout eval``: load, evaluate, print text or JSON.

    Args:
        args: a namespace with ``tools`` (path), ``queries`` (path), and optionally ``k``
            (``"1,3,5,10"`` or a list of ints), ``json`` (bool), ``explain_failures`` (int),
            ``ranker`` (profile name or None: ``TOOLSCOUT_RANKER`` / settings apply), ``compare``
            (a second profile: also ranked, and the per-metric paired bootstrap interval of
            ``ranker − compare`` printed, :mod:`.compare`; JSON key ``compare``).
        out, err: streams (default stdout / stderr).

    Returns:
        Exit code: 0 on success, 2 for unreadable inputs or bad arguments.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        ks = _parse_ks(getattr(args, "k", None))
        tools, descriptions, warnings = load_tools(args.tools)
        queries, qwarn = load_queries(args.queries)
    except OSError as exc:
        print(f"toolscout eval: {exc.filename or ''}: {exc.strerror or exc}", file=err)
        return 2
    except (CatalogFileError, ValueError) as exc:
        print(f"toolscout eval: {exc}", file=err)
        return 2
    for found in (warnings, qwarn):
        for line in summarise(found):
            print(f"warning: {line}", file=err)
    if not tools or not queries:
        path, skipped = (args.tools, warnings) if not tools else (args.queries, qwarn)
        why = [f"{len(skipped)} entries skipped"] if skipped else []
        if tools:
            why.append('each line must be {"query": TEXT, "relevant": [NAME, ...]}')
        note = f" ({'; '.join(why)})" if why else ""
        print(f"toolscout eval: {path}: no {'queries' if tools else 'tools'} to evaluate{note}", file=err)
        return 2
    known = {t.name for t in tools}
    unknown = sorted({r for q in queries for r in q.relevant if r not in known})
    if unknown:
        print(f"warning: {len(unknown)} relevant names are not in the tools file, e.g. {unknown[:3]}", file=err)
    profile = getattr(args, "ranker", None)
    if not profile:
        from ..settings.layers import load_settings

        profile = load_settings().get("toolSearch.ranker", "default")
    report = evaluate_with_reference(tools, queries, ks, profile, descriptions, bool(getattr(args, "no_cache", False)))
    n_fail = int(getattr(args, "explain_failures", 0) or 0)
    baseline = getattr(args, "compare", None)
    gains = None
    if baseline:
        from .compare import compare_reports
        from .dense import default_cache_path

        base = evaluate(
            tools, queries, ks, baseline, server_descriptions=descriptions, dense_cache=default_cache_path()
        )
        gains = compare_reports(report, base)
    if getattr(args, "json", False):
        data = report.to_json()
        if n_fail:
            data = {**data, "failures": report.worst(n_fail)}
        if gains is not None:
            data = {**data, "compare": {"profile": base.profile, "gains": {g.metric: g.to_json() for g in gains}}}
        print(json.dumps(data, ensure_ascii=False), file=out)
        return 0
    print(report.to_text(), file=out)
    if report.profile != profile:
        print(f"(requested profile {profile!r}; ran {report.profile!r})", file=out)
    if gains is not None:
        from .compare import gains_text

        print(gains_text(gains, report.profile, base.profile), file=out)
    for item in report.worst(n_fail):
        ranks = ", ".join(f"{name} @ {rank or f'>{EXPLAIN_DEPTH}'}" for name, rank in item["relevant"].items())
        print(f"\n- {item['query'][:200]}\n  relevant: {ranks}\n  top: {', '.join(item['top'])}", file=out)
    return 0
