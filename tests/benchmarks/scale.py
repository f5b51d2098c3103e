"""Latency and scale benchmark: index build, search p50/p99, incremental add, peak memory.

Catalog: the 47 real MCP ``tools/list`` dumps of ``bench-data/catalogs`` (1,673 tools, heavy
schemas), replicated under renamed servers (``<server>-r<N>``) and cut at 100 / 1,000 / 10,000
tools, so the vocabulary and schema shapes are real while the size grows. Queries: the
livemcpbench dev queries (long task texts, one with an 18.7k-character base64 image) plus short
model-style keyword queries. Each query is run ``PASSES`` times after one warm-up pass.

Build time = ``ToolIndex(...)`` plus the first query (which builds the lazy matrices). For the
``default`` profile it includes encoding every tool text (tool vectors are cached by content
hash, so replicas are encoded again: their server name differs). Memory: ``tracemalloc`` peak of
a separate build + 20 queries (Python and numpy allocations; onnxruntime's own arena is not
traced, so the growth of the process RSS over that build is reported too).
"""

from __future__ import annotations

import gc
import resource
import sys
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BENCH

from toolscout.core.evaluation import load_queries, percentile
from toolscout.core.loaders import load_catalog
from toolscout.core.models import ToolSpec
from toolscout.core.names import mcp_tool_name
from toolscout.core.search.index import ToolIndex

SIZES = (100, 1_000, 10_000)
PASSES = 3
KEYWORD_QUERIES = [
    "slack send message", "create github issue", "read file", "list kubernetes pods",
    "stripe refund", "notion page search", "take screenshot browser", "sql query database",
    "jira ticket transition", "weather forecast",
]


def base_catalog() -> tuple[list[ToolSpec], dict[str, str]]:
    """Real tools with canonical ``mcp__server__tool`` names, in file order."""
    cat = load_catalog(BENCH / "catalogs")
    tools: list[ToolSpec] = []
    instructions: dict[str, str] = {}
    for group in cat.servers:
        server = group.name or "builtin"
        for t in group.tools:
            tools.append(replace(t, name=mcp_tool_name(server, t.name), server=server, original_name=t.name))
        if group.instructions:
            instructions[server] = group.instructions
    return tools, instructions


def replicate(base: list[ToolSpec], n: int) -> list[ToolSpec]:
    """The first ``n`` tools of ``base`` repeated under renamed servers ``<server>-r<k>``."""
    out: list[ToolSpec] = []
    rep = 0
    while len(out) < n:
        for t in base:
            if len(out) >= n:
                break
            server = t.server if rep == 0 else f"{t.server}-r{rep}"
            out.append(replace(t, name=mcp_tool_name(server, t.original_name), server=server))
        rep += 1
    return out


def queries() -> list[str]:
    qs, _ = load_queries(BENCH / "livemcpbench" / "queries.jsonl")
    return [q.query for q in qs] + KEYWORD_QUERIES


def _timed_build(tools: list[ToolSpec], profile: str) -> tuple[ToolIndex, float]:
    gc.collect()
    start = time.perf_counter()
    index = ToolIndex(tools, profile, multi_query=None)
    index.rank("warm up", 1)
    return index, (time.perf_counter() - start) * 1000


def _latency(index: ToolIndex, texts: list[str]) -> tuple[float, float, float]:
    for t in texts:  # warm-up pass
        index.rank(t, 10)
    lat = []
    gc.disable()
    try:
        for _ in range(PASSES):
            for t in texts:
                start = time.perf_counter()
                index.rank(t, 10)
                lat.append((time.perf_counter() - start) * 1000)
    finally:
        gc.enable()
    return percentile(lat, 50), percentile(lat, 95), percentile(lat, 99)


def _incremental(index: ToolIndex, base: list[ToolSpec]) -> tuple[float, float]:
    server = [t for t in base if t.server == base[0].server]
    new = [
        replace(t, name=mcp_tool_name("incoming", f"{t.original_name}_{i}"), server="incoming")
        for i, t in enumerate((server * 50)[:50])
    ]
    start = time.perf_counter()
    index.add(new)
    add_ms = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    index.rank("slack send message", 10)
    first_ms = (time.perf_counter() - start) * 1000
    return add_ms, first_ms


def _memory(tools: list[ToolSpec], profile: str, texts: list[str]) -> tuple[float, float]:
    gc.collect()
    rss_before = _rss_mib()
    tracemalloc.start()
    index = ToolIndex(tools, profile)
    for t in texts[:20]:
        index.rank(t, 10)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = _rss_mib()
    del index
    return peak / 2**20, rss_after - rss_before


def _rss_mib() -> float:
    """Current resident set size (MiB), from /proc (0 where unavailable)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * resource.getpagesize() / 2**20


def run(profiles: tuple[str, ...] = ("bm25f", "default", "hybrid"), sizes: tuple[int, ...] = SIZES) -> str:
    """The latency/scale section of the report (Markdown)."""
    base, _ = base_catalog()
    texts = queries()
    lines = [
        "## Latency and scale",
        "",
        f"Catalog: {len(base):,} real MCP tools from `bench-data/catalogs`, replicated under renamed "
        f"servers. Queries: {len(texts)} ({len(texts) - len(KEYWORD_QUERIES)} livemcpbench task texts + "
        f"{len(KEYWORD_QUERIES)} keyword queries), {PASSES} timed passes after a warm-up. All times in ms.",
        "",
        "| profile (active) | tools | build ms | search p50 | p95 | p99 | +50-tool server: add ms | first query after ms | tracemalloc peak MiB | RSS growth MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for profile in profiles:
        for n in sizes:
            tools = replicate(base, n)
            index, build_ms = _timed_build(tools, profile)
            p50, p95, p99 = _latency(index, texts)
            add_ms, first_ms = _incremental(index, base) if n == max(sizes) else (float("nan"), float("nan"))
            active = index.active_profile
            del index
            peak, rss = _memory(tools, profile, texts) if n == max(sizes) else (float("nan"), float("nan"))
            lines.append(
                f"| {profile} ({active}) | {n:,} | {build_ms:,.0f} | {p50:.2f} | {p95:.2f} | {p99:.2f} | "
                f"{add_ms:.1f} | {first_ms:.1f} | {peak:.1f} | {rss:.1f} |"
            )
            print(lines[-1], file=sys.stderr, flush=True)
    lines += [
        "",
        "The machine is shared with other sessions (tests, a TUI) while this runs: latencies are "
        "noisy, compare rows of one run only. RSS growth is often ~0 because the heap reuses memory "
        "freed by the earlier rows; the tracemalloc peak is the number to read.",
        "",
        _dense_load_note(),
        "",
    ]
    return "\n".join(lines)


def _dense_load_note() -> str:
    import subprocess

    code = (
        "import time; t=time.perf_counter(); from toolscout.core.search import dense; "
        "e=dense.load_encoder(); t1=time.perf_counter(); e and e.encode(['hello world']); "
        "t2=time.perf_counter(); print(f'{(t1-t)*1000:.0f} {(t2-t1)*1000:.1f} {e is not None}')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False).stdout.split()
    if len(out) != 3 or out[2] != "True":
        return "Dense encoder: not available in this environment."
    enc = [float(x) for x in out[:2]]
    return (
        f"Dense encoder load in a fresh process (import + ONNX session + tokenizer): {enc[0]:.0f} ms; "
        f"first single-query encode: {enc[1]:.1f} ms."
    )


if __name__ == "__main__":
    print(run(*(() if len(sys.argv) < 2 else (tuple(sys.argv[1].split(",")),))))
