"""Token savings on the real MCP catalogs in ``../shared/bench-data/catalogs``.

For every catalog: tokens of the full tools array (every tool inline) vs what toolscout sends in
each strategy: execute-proxy (one announcement line per deferred tool) and stub (a compact
``[deferred]`` stub per tool). Counted with the same counter the app uses (tiktoken
cl100k_base, offline). Run: ``python tests/benchmarks/token_savings.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from toolscout.core.catalog import ToolCatalog
from toolscout.core.loaders import load_catalog
from toolscout.core.tokens import default_counter, usage_by_server

CATALOGS = Path(__file__).resolve().parents[2].parent / "shared" / "bench-data" / "catalogs"


def measure(catalog_dir: Path = CATALOGS) -> tuple[list[tuple[str, int, int, int, int]], str]:
    """Rows ``(server, tools, inline, proxy_sent, stub_sent)`` in tokens, and the counter name."""
    loaded = load_catalog(catalog_dir)
    cat = ToolCatalog()
    for group in loaded.servers:
        if group.name:
            cat.set_server_tools(group.name, group.tools, group.instructions)
    counter = default_counter()
    proxy = {r.server: r for r in usage_by_server(cat.tools(), cat.is_deferred, strategy="execute-proxy", counter=counter)}
    stub = {r.server: r for r in usage_by_server(cat.tools(), cat.is_deferred, strategy="stub", counter=counter)}
    rows = [(s, proxy[s].tools, proxy[s].tokens_inline, proxy[s].tokens_sent, stub[s].tokens_sent) for s in proxy]
    return rows, counter.name


def run() -> str:
    """Markdown section with per-server and total savings."""
    if not CATALOGS.is_dir():
        return "## Token savings\n\nskipped: ../shared/bench-data/catalogs is not present\n"
    rows, counter = measure()
    tools = sum(r[1] for r in rows)
    inline = sum(r[2] for r in rows)
    proxy = sum(r[3] for r in rows)
    stub = sum(r[4] for r in rows)
    out = [
        "## Token savings (real catalogs)",
        "",
        f"{len(rows)} catalogs, {tools:,} tools, counter `{counter}`. \"inline\" = every tool's full definition "
        "in the tools array; execute-proxy sends one name line per deferred tool (plus the fixed ToolSearch and "
        "ExecuteTool schemas, not counted per server); stub sends a `[deferred]` one-line stub per tool.",
        "",
        f"**Total: {inline:,} tokens inline → {proxy:,} execute-proxy ({100 * (1 - proxy / inline):.1f}% saved), "
        f"{stub:,} stub ({100 * (1 - stub / inline):.1f}% saved).** Target ≥ 90%.",
        "",
        "| server | tools | inline | execute-proxy | saved | stub | saved |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for server, n, full, p, s in sorted(rows, key=lambda r: -r[2]):
        out.append(f"| {server} | {n} | {full:,} | {p:,} | {100 * (1 - p / full):.1f}% | {s:,} | {100 * (1 - s / full):.1f}% |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(run())
