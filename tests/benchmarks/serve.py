"""Benchmark of ``toolscout serve`` (the MCP gateway), in one run:

1. tokens of the served ``tools/list`` vs the upstream total, over the 47 catalogs of
   ``../shared/bench-data/catalogs`` (all together, through the protocol; and per catalog, with
   the same functions the gateway uses to build its list);
2. search latency through the gateway (``search_tools`` round trips over stdio and over
   streamable HTTP, p50/p99), with the catalogs loaded as searchable file servers;
3. overhead per call: ``call_tool`` through the gateway vs ``tools/call`` on the same upstream
   server directly, for the real servers of ``/work/realservers/work`` that answer a read-only call
   without setup (time, everything, memory, filesystem) when installed, else ``mcp-server-time``.

Tokens: cl100k_base (tiktoken) over the compact JSON of the tool list as the client receives it
(``name``, ``description``, ``inputSchema``, ``annotations``). Run from the repo:
``python tests/benchmarks/serve.py [--queries 200] [--calls 100] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from common import BENCH, REPO, SRC, machine_info
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from toolscout.core.catalog.loaders import load_catalog
from toolscout.core.gateway.served import announcement, call_tool, search_tool
from toolscout.core.serialize import dumps
from toolscout.core.tokens import default_counter

#: bench-data (``TOOLSCOUT_TEST_SHARED`` points at ``shared/`` when running from a worktree).
BENCH_DIR = (
    Path(os.environ["TOOLSCOUT_TEST_SHARED"]) / "bench-data" if os.environ.get("TOOLSCOUT_TEST_SHARED") else BENCH
)
CATALOGS = BENCH_DIR / "catalogs"
REAL_ROOT = Path("/work/realservers/work")
#: Real servers with a read-only call that needs no account, network or setup.
REAL_CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "time": ("get_current_time", {"timezone": "UTC"}),
    "everything": ("echo", {"message": "benchmark"}),
    "memory": ("read_graph", {}),
    "filesystem": ("list_allowed_directories", {}),
}


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(SRC), out.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return out


def gateway_params(*args: str) -> StdioServerParameters:
    # a folder of its own: in the temp dir itself, the configs written under it would be that
    # folder's project config, waiting for its approval (toolscout.core.policy.trust_files)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolscout", "serve", *args],
        env=env(),
        cwd=tempfile.mkdtemp(prefix="toolscout-gateway-"),
    )


def list_tokens(tools: list[Any]) -> int:
    """Tokens of a tools/list as the client receives it."""
    counter = default_counter()
    return counter.count(dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]))


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def stats_ms(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(pct(values, 50) * 1000, 2),
        "p99_ms": round(pct(values, 99) * 1000, 2),
        "mean_ms": round(statistics.fmean(values) * 1000, 2),
    }


async def timed(n: int, call: Callable[[int], Awaitable[Any]], warm: int = 3) -> list[float]:
    for i in range(warm):
        await call(i)
    out = []
    for i in range(n):
        start = time.perf_counter()
        await call(i)
        out.append(time.perf_counter() - start)
    return out


# -- 1. tokens -------------------------------------------------------------------------------
def catalog_files() -> list[Path]:
    """The 47 catalog files (``index.json`` and ``servers.json`` are the manifest, not catalogs)."""
    return sorted(p for p in CATALOGS.glob("*.json") if p.name not in ("index.json", "servers.json"))


def per_catalog_tokens() -> list[dict[str, Any]]:
    """Upstream tools/list tokens vs the gateway's list, for each catalog on its own."""
    counter = default_counter()
    rows = []
    for path in catalog_files():
        loaded = load_catalog(path)
        for group in loaded.servers:
            if group.name is None or not group.tools:
                continue
            upstream = counter.count(
                dumps(
                    [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in group.tools]
                )
            )
            from toolscout.core.catalog.registry import ToolCatalog

            catalog = ToolCatalog()
            catalog.set_server_tools(group.name, group.tools)
            served = counter.count(
                dumps([search_tool(announcement(catalog.tools(), [], counter=counter)), call_tool()])
            )
            rows.append(
                {"catalog": group.name, "tools": len(group.tools), "upstream_tokens": upstream, "served_tokens": served}
            )
    return rows


async def protocol_tokens_and_search(queries: list[str], *, http: bool) -> dict[str, Any]:
    """Through one gateway over all catalogs: tools/list tokens, upstream tokens, search latency."""
    args = ["--catalog", str(CATALOGS), "--no-default-servers"]
    if not http:
        async with Client(
            stdio_client(gateway_params(*args), errlog=subprocess.DEVNULL),
            mode="legacy",  # type: ignore[arg-type]
            read_timeout_seconds=600,
        ) as client:
            return await _measure(client, queries)
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolscout", "serve", "--http", "127.0.0.1:0", *args],
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        url = ""
        while not url:
            line = proc.stderr.readline()
            if not line:
                raise RuntimeError("gateway exited before listening")
            if "listening on " in line:
                url = line.rsplit("listening on ", 1)[1].strip()
        async with Client(url, mode="legacy") as client:
            return await _measure(client, queries)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def _measure(client: Client, queries: list[str]) -> dict[str, Any]:
    tools = (await client.list_tools()).tools
    context = json.loads((await client.read_resource("toolscout://context")).contents[0].text)

    async def search(i: int) -> Any:
        return await client.call_tool("search_tools", {"query": queries[i % len(queries)]})

    for _ in range(2):  # the first searches load the index and the dense model
        await search(0)
    latencies = await timed(len(queries), search)
    return {
        "served_tools": [t.name for t in tools],
        "served_tokens": list_tokens(tools),
        "upstream_tokens": context["gateway"]["upstream_tokens"],
        "upstream_tools": sum(r["tools"] for r in context["servers"]),
        "search": stats_ms(latencies),
    }


# -- 3. per-call overhead ---------------------------------------------------------------------
def real_servers() -> dict[str, dict[str, Any]]:
    """mcpServers entries of the real servers used for calls (installed ones, else mcp-server-time)."""
    if REAL_ROOT.is_dir():
        out = Path(tempfile.mkdtemp()) / "real.mcp.json"
        subprocess.run(
            [sys.executable, str(CATALOGS / "write_mcp_json.py"), "--root", str(REAL_ROOT), "--out", str(out)],
            check=True,
            capture_output=True,
        )
        entries = json.loads(out.read_text())["mcpServers"]
        picked = {k: v for k, v in entries.items() if k in REAL_CALLS}
        if picked:
            return picked
    return {"time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}


def params_of(entry: dict[str, Any]) -> StdioServerParameters:
    return StdioServerParameters(
        command=entry["command"],
        args=list(entry.get("args", [])),
        env={**os.environ, **entry.get("env", {})},
        cwd=entry.get("cwd"),
    )


async def call_overhead(n: int) -> dict[str, Any]:
    servers = real_servers()
    results: dict[str, Any] = {}
    for name, entry in servers.items():
        tool, args = REAL_CALLS[name]
        async with Client(stdio_client(params_of(entry), errlog=subprocess.DEVNULL), mode="legacy") as direct:  # type: ignore[arg-type]
            direct_s = await timed(n, lambda _i, c=direct, t=tool, a=args: c.call_tool(t, a))
        results[name] = {"tool": tool, "direct": stats_ms(direct_s)}
    cfg = Path(tempfile.mkdtemp()) / "gateway.mcp.json"
    cfg.write_text(json.dumps({"mcpServers": servers}))
    allowed = ",".join(servers)
    async with Client(
        stdio_client(
            gateway_params(
                "--mcp-config",
                str(cfg),
                "--allowed-tools",
                allowed,  # type: ignore[arg-type]
                "--wait-servers",
                "120",
            ),
            errlog=subprocess.DEVNULL,
        ),
        mode="legacy",
        read_timeout_seconds=300,
    ) as gateway:
        await gateway.list_tools()
        for name in servers:
            tool, args = REAL_CALLS[name]
            call = {"name": f"mcp__{name.replace('-', '_')}__{tool}", "arguments": args}
            first = await gateway.call_tool("call_tool", call)
            if first.is_error:
                results[name]["gateway_error"] = first.content[0].text[:200]
                continue
            via = await timed(n, lambda _i, call=call: gateway.call_tool("call_tool", call))
            results[name]["gateway"] = stats_ms(via)
            results[name]["overhead_p50_ms"] = round(
                results[name]["gateway"]["p50_ms"] - results[name]["direct"]["p50_ms"], 2
            )
    return results


def load_queries(n: int) -> list[str]:
    queries = [json.loads(line)["query"] for line in (BENCH_DIR / "livemcpbench" / "queries.jsonl").open()][: n // 2]
    names = [t.name for g in load_catalog(CATALOGS).servers for t in g.tools][::17][: n - len(queries)]
    return queries + [f"select:{name}" for name in names]


async def main(args: argparse.Namespace) -> dict[str, Any]:
    queries = load_queries(args.queries)
    # Tool vectors encoded (or found in the user cache) before anything is timed.
    subprocess.run(
        [sys.executable, "-m", "toolscout", "index", "--catalog", str(CATALOGS)],
        env=env(),
        check=True,
        capture_output=True,
    )
    report: dict[str, Any] = {"machine": machine_info(), "catalogs": len(catalog_files())}
    report["per_catalog"] = per_catalog_tokens()
    report["stdio"] = await protocol_tokens_and_search(queries, http=False)
    report["http"] = await protocol_tokens_and_search(queries, http=True)
    report["calls"] = await call_overhead(args.calls)
    return report


def render(r: dict[str, Any]) -> str:
    s, h = r["stdio"], r["http"]
    lines = [
        f"toolscout serve benchmark: {r['catalogs']} catalogs ({r['machine']['cores']} cores, "
        f"Python {r['machine']['python']})",
        "",
        f"tools/list over all catalogs: {s['upstream_tools']:,} upstream tools = {s['upstream_tokens']:,} tokens; "
        f"served {len(s['served_tools'])} tools = {s['served_tokens']:,} tokens "
        f"({s['served_tokens'] / s['upstream_tokens']:.1%} of upstream)",
        "",
        "| catalog | tools | upstream tokens | served tokens |",
        "|---|---:|---:|---:|",
    ]
    for row in r["per_catalog"]:
        lines.append(f"| {row['catalog']} | {row['tools']} | {row['upstream_tokens']:,} | {row['served_tokens']:,} |")
    up = sum(x["upstream_tokens"] for x in r["per_catalog"])
    served = sum(x["served_tokens"] for x in r["per_catalog"])
    lines += [
        "",
        f"per-catalog sum: upstream {up:,}, served {served:,}",
        "",
        f"search latency over stdio: p50 {s['search']['p50_ms']} ms, p99 {s['search']['p99_ms']} ms "
        f"({s['search']['n']} queries)",
        f"search latency over HTTP:  p50 {h['search']['p50_ms']} ms, p99 {h['search']['p99_ms']} ms",
        "",
        "| server (tool) | direct p50 / p99 ms | via gateway p50 / p99 ms | overhead p50 ms |",
        "|---|---:|---:|---:|",
    ]
    for name, c in r["calls"].items():
        via = c.get("gateway")
        lines.append(
            f"| {name} ({c['tool']}) | {c['direct']['p50_ms']} / {c['direct']['p99_ms']} | "
            + (
                f"{via['p50_ms']} / {via['p99_ms']} | {c['overhead_p50_ms']} |"
                if via
                else f"error: {c.get('gateway_error')} | - |"
            )
        )
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    ns = parser.parse_args()
    os.chdir(REPO)
    result = anyio.run(main, ns)
    print(json.dumps(result, indent=2) if ns.json else render(result))
