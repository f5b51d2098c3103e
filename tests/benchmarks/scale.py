"""Latency and scale benchmark: index build, search p50/p99, incremental add, peak memory.

Catalog: the 47 real MCP ``tools/list`` dumps of ``bench-data/catalogs`` (1,673 tools, heavy
schemas), replicated under renamed servers (``<server>-r<N>``) and cut at 100 / 1,000 / 10,000
tools, so the vocabulary and schema shapes are real while the size grows (issue 6's recipe). A
fourth catalog makes every text distinct (each description and parameter description gets the
tool's own number), so no memo of repeated texts helps: the worst case for the tokenizer.
Queries: the livemcpbench dev queries (long task texts, one with an 18.7k-character base64
image) plus short model-style keyword queries. Each query is run ``PASSES`` times after one
warm-up pass.

Every row runs in a fresh Python process, so "cold build" includes first-time tokenisation and
stemming. Build = ``ToolIndex(...)`` plus the first query (which writes the postings segment).
"Warm rebuild" is a second index over the same tools in that process (what a reconnect costs).
The ``default`` profile is built as the app builds it: the index answers at once with the
lexical ``bm25f`` ranking while a worker thread encodes tool texts; "dense ready" is when every
tool has its vector, from an empty vector cache (cold) and, in another fresh process, from the
SQLite vector cache the cold run filled (what every later start of the app costs). Latencies
of ``default`` are measured after dense is ready. Memory: ``tracemalloc`` peak of a separate
build + 20 queries (Python and numpy allocations; onnxruntime's own arena is not traced).
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

from toolscout.core.catalog.loaders import load_catalog
from toolscout.core.models import ToolSpec
from toolscout.core.names import mcp_tool_name
from toolscout.core.search.evaluation import load_queries, percentile
from toolscout.core.search.index import ToolIndex

SIZES = (100, 1_000, 10_000)
PASSES = 3
KEYWORD_QUERIES = [
    "slack send message",
    "create github issue",
    "read file",
    "list kubernetes pods",
    "stripe refund",
    "notion page search",
    "take screenshot browser",
    "sql query database",
    "jira ticket transition",
    "weather forecast",
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


def distinct(tools: list[ToolSpec]) -> list[ToolSpec]:
    """``tools`` with every description and parameter description made unique (tool number appended)."""
    import copy

    out = []
    for k, t in enumerate(tools):
        schema = copy.deepcopy(t.input_schema)
        for sub in (schema.get("properties") or {}).values() if isinstance(schema, dict) else ():
            if isinstance(sub, dict) and isinstance(sub.get("description"), str):
                sub["description"] += f" v{k}"
        out.append(replace(t, description=f"{t.description or ''} v{k}", input_schema=schema))
    return out


def _catalog(n: int, variant: str) -> list[ToolSpec]:
    base, _ = base_catalog()
    tools = replicate(base, n)
    return distinct(tools) if variant == "distinct" else tools


def row(profile: str, n: int, variant: str, cache: str, incremental: bool) -> dict:
    """One table row, measured in this (fresh) process. ``cache``: vector cache file for ``default``."""
    base, _ = base_catalog()
    tools = _catalog(n, variant)
    texts = queries()
    kwargs: dict = {}
    if profile == "default":
        kwargs = {"background_dense": True, "dense_cache": Path(cache)}
    gc.collect()
    start = time.perf_counter()
    index = ToolIndex(tools, profile, **kwargs)
    index.rank("warm up", 1)
    out = {"build_ms": (time.perf_counter() - start) * 1000, "active_at_build": index.active_profile}
    if profile == "default":
        index.wait_dense()
        out["dense_ready_s"] = time.perf_counter() - start
    p50, p95, p99 = _latency(index, texts)
    out.update(p50=p50, p95=p95, p99=p99, active=index.active_profile)
    if incremental:
        out["add_ms"], out["first_ms"] = _incremental(index, base)
        if profile == "default":
            t0 = time.perf_counter()
            index.wait_dense()
            out["add_dense_ready_ms"] = (time.perf_counter() - t0) * 1000 + out["add_ms"] + out["first_ms"]
        index.close()
        start = time.perf_counter()
        again = ToolIndex(tools, profile, **kwargs)
        again.rank("warm up", 1)
        out["warm_build_ms"] = (time.perf_counter() - start) * 1000
        again.close()
        out["peak_mib"], _ = _memory(tools, profile if profile != "default" else "bm25f", texts)
    index.close()
    return out


def dense_restart(n: int, cache: str) -> dict:
    """Fresh process, vector cache already filled: time until the default profile is dense-ready."""
    tools = _catalog(n, "replicated")
    start = time.perf_counter()
    index = ToolIndex(tools, "default", background_dense=True, dense_cache=Path(cache))
    index.rank("warm up", 1)
    index.wait_dense()
    out = {"dense_ready_s": time.perf_counter() - start}
    index.close()
    return out


def _in_fresh_process(func: str, *args: object) -> dict:
    import json
    import subprocess

    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import scale; "
        f"print(json.dumps(scale.{func}(*json.loads(sys.argv[2]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).resolve().parent), json.dumps(list(args))],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{func}{args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(profiles: tuple[str, ...] = ("bm25f", "default", "hybrid"), sizes: tuple[int, ...] = SIZES) -> str:
    """The latency/scale section of the report (Markdown)."""
    import tempfile

    base, _ = base_catalog()
    texts = queries()
    lines = [
        "## Latency and scale",
        "",
        f"Catalog: {len(base):,} real MCP tools from `bench-data/catalogs`, replicated under renamed "
        f'servers; "distinct" = the same 10,000 tools with every description made unique. Queries: '
        f"{len(texts)} ({len(texts) - len(KEYWORD_QUERIES)} livemcpbench task texts + "
        f"{len(KEYWORD_QUERIES)} keyword queries), {PASSES} timed passes after a warm-up. Every row is a "
        "fresh process. Times in ms unless marked s. Targets (issue 6): p50 < 1 ms at 1k and < 5 ms at "
        "10k; build < 0.5 s at 10k; +50-tool add < 20 ms.",
        "",
        "| profile (active) | tools | cold build ms | warm rebuild ms | dense ready s (cold / from cache) "
        "| search p50 | p95 | p99 | +50-tool add ms | first query after ms | tracemalloc peak MiB |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for profile in profiles:
            plan = [(n, "replicated") for n in sizes]
            if profile == "bm25f":
                plan.append((max(sizes), "distinct"))
            for n, variant in plan:
                cache = str(Path(tmp) / f"vec-{n}.sqlite")
                last = n == max(sizes) and variant == "replicated"
                r = _in_fresh_process("row", profile, n, variant, cache, last)
                dense = "–"
                if profile == "default":
                    warm = _in_fresh_process("dense_restart", n, cache)["dense_ready_s"]
                    dense = f"{r['dense_ready_s']:.1f} / {warm:.2f}"
                add = f"{r['add_ms']:.1f}" if "add_ms" in r else ""
                first = f"{r['first_ms']:.1f}" if "first_ms" in r else ""
                if "add_dense_ready_ms" in r:
                    first += f" (dense ready {r['add_dense_ready_ms'] / 1000:.1f} s)"
                label = f"{n:,}" + (" distinct" if variant == "distinct" else "")
                warm_ms = f"{r['warm_build_ms']:,.0f}" if "warm_build_ms" in r else ""
                peak = f"{r['peak_mib']:.1f}" if "peak_mib" in r else ""
                lines.append(
                    f"| {profile} ({r['active']}) | {label} | {r['build_ms']:,.0f} | {warm_ms} | {dense} | "
                    f"{r['p50']:.2f} | {r['p95']:.2f} | {r['p99']:.2f} | {add} | {first} | {peak} |"
                )
                print(lines[-1], file=sys.stderr, flush=True)
    lines += [
        "",
        "Build of `default` is the time until the index answers (lexically); the dense column is when "
        "the fused ranking takes over. The replicated catalog repeats description texts, which a "
        "per-text memo tokenizes once; the distinct row shows the cost without that help.",
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
