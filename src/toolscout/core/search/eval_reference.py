"""``toolscout eval``'s measurement: the profile under test next to the lexical profile in the
same run, and the encoding throughput of its build (:mod:`.evaluation` has the metrics)."""

from __future__ import annotations

import time

from ..models import ToolSpec
from .dense import default_cache_path, load_encoder
from .evaluation import EncodingStats, EvalQuery, EvalReport, evaluate
from .index import ToolIndex


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
