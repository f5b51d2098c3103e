"""Load benchmark of ``toolscout serve --http`` with hostile clients mixed in (issue 28 item 3).

One gateway (open-file limit 1024, as on a desktop) in front of the ``notes`` fixture server and
a hostile one whose ten tools carry 1 MB schemas (``huge_tools``). While ``--clients`` real SDK
clients each make ``--requests`` requests (a search, then a call, in turn), the attackers run:

- ``--idle`` sockets that never send a byte, reopened whenever the gateway closes one;
- ``--slow`` slowloris sockets sending one request-head byte every half second, reopened too;
- ``--stalled`` sessions that ask for a search naming all ten huge tools over a socket with a
  4 kB receive buffer and never read it, asked again whenever the gateway drops one.

Reported: the real clients' requests per second, p50/p95/max latency and errors, and the
gateway's resident memory (VmRSS of /proc/PID/status) sampled every half second: it should stay
flat while the stalled readers keep asking. Everything is bounded (counts, and one deadline for
the whole run). Run from the repo: ``python tests/benchmarks/serve_load.py [--json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
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

SRC_PATH = str(HERE.parents[1] / "src")
#: The run's deadline (s): the benchmark fails rather than hang.
DEADLINE_S = 600.0
SEARCH = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {"name": "search_tools", "arguments": {"query": "weather records", "max_results": 50}},
}


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


class Attackers:
    """The idle, slowloris and stalled-reader sockets, each kind kept at its count."""

    def __init__(self, address: tuple[str, int], url: str, idle: int, slow: int, stalled: int) -> None:
        self.address, self.url = address, url
        self.want = {"idle": idle, "slow": slow, "stalled": stalled}
        self.socks: dict[str, list[socket.socket]] = {k: [] for k in self.want}
        self.reopened = dict.fromkeys(self.want, 0)

    @staticmethod
    def closed(sock: socket.socket) -> bool:
        try:
            return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] in (7, 8)  # CLOSE, CLOSE_WAIT
        except OSError:
            return True

    async def open(self, kind: str) -> socket.socket:
        from serve_helpers import open_session, raw_post

        sock = socket.socket()
        if kind == "stalled":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sid = await open_session(self.url)
        sock.connect(self.address)
        if kind == "slow":
            sock.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        elif kind == "stalled":
            sock.sendall(
                raw_post("/mcp", "127.0.0.1", SEARCH, {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"})
            )
        sock.setblocking(False)
        return sock

    async def run(self, stop: list[bool]) -> None:
        while not stop:
            for kind, socks in self.socks.items():
                for sock in [s for s in socks if self.closed(s)]:
                    socks.remove(sock)
                    sock.close()
                    self.reopened[kind] += 1
                while len(socks) < self.want[kind]:
                    with contextlib.suppress(OSError):
                        socks.append(await self.open(kind))
                if kind == "slow":
                    for sock in socks:
                        with contextlib.suppress(OSError):
                            sock.send(b"a")
            await anyio.sleep(0.5)

    def close(self) -> None:
        for socks in self.socks.values():
            for sock in socks:
                sock.close()


async def legit(url: str, requests: int, latencies: list[float], errors: list[str]) -> None:
    """One real client making ``requests`` requests; a broken connection is an error, and the
    client connects again for the rest."""
    done = [0]
    while done[0] < requests:
        try:
            await _requests(url, requests, done, latencies, errors)
        except Exception as exc:  # the client's transport broke: counted, then a new client
            leaf: BaseException = exc
            while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
                leaf = leaf.exceptions[0]
            errors.append(f"client broke: {type(leaf).__name__}: {leaf}"[:200])
            done[0] += 1


async def _requests(url: str, requests: int, done: list[int], latencies: list[float], errors: list[str]) -> None:
    from serve_helpers import http_client

    async with http_client(url) as client:
        while done[0] < requests:
            n = done[0]
            done[0] += 1
            start = time.perf_counter()
            try:
                if n % 2:
                    result = await client.call_tool(
                        "call_tool", {"name": "mcp__notes__write_note", "arguments": {"text": f"load {n}"}}
                    )
                else:
                    result = await client.call_tool("search_tools", {"query": "write a note"})
                if result.is_error:
                    errors.append(str(result.content)[:200])
            except Exception as exc:  # counted, not fatal: the report says how many
                errors.append(f"{type(exc).__name__}: {exc}"[:200])
            latencies.append(time.perf_counter() - start)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    from serve_helpers import HttpGateway, fixture_entry, write_config, write_user_settings

    tmp = Path(tempfile.mkdtemp(prefix="toolscout-serve-load-"))
    os.environ["TOOLSCOUT_CONFIG_DIR"] = str(tmp / "config")
    os.environ["TOOLSCOUT_DATA_DIR"] = str(tmp / "data")
    cfg = write_config(
        tmp,
        {
            "notes": fixture_entry("notes", "notes", str(tmp / "calls.log")),
            "huge": fixture_entry("huge_tools", "10", "1"),
        },
    )
    write_user_settings({"serve": {"headerTimeout": 5, "writeTimeout": 5}})
    gateway = HttpGateway(tmp, "--mcp-config", str(cfg), "--allowed-tools", "notes", nofile=1024)
    rss: list[tuple[float, int]] = []
    latencies: list[float] = []
    errors: list[str] = []
    try:
        with anyio.fail_after(DEADLINE_S):
            await gateway.start()
            from serve_helpers import http_client

            async with http_client(gateway.url) as warm:  # servers connected, catalog loaded
                await warm.call_tool("search_tools", {"query": "weather records"})
            # the attackers run in a process of their own: in this one, their blocking connects would
            # stall the real clients (then dropped as idle by the gateway, rightly)
            attack = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--attack",
                    gateway.url,
                    "--idle",
                    str(args.idle),
                    "--slow",
                    str(args.slow),
                    "--stalled",
                    str(args.stalled),
                ],
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONPATH": SRC_PATH},
            )
            began = time.perf_counter()

            async def sample() -> None:
                while True:
                    rss.append((round(time.perf_counter() - began, 1), gateway.rss_kb()))
                    await anyio.sleep(0.5)

            async with anyio.create_task_group() as tg:
                tg.start_soon(sample)
                await anyio.sleep(3)  # the attackers are in place before the first real request
                start = time.perf_counter()
                async with anyio.create_task_group() as clients:
                    for _ in range(args.clients):
                        clients.start_soon(legit, gateway.url, args.requests, latencies, errors)
                elapsed = time.perf_counter() - start
                await anyio.sleep(3)
                tg.cancel_scope.cancel()
            attack.send_signal(signal.SIGINT)
            reopened = json.loads(attack.communicate(timeout=60)[0] or "{}")
    finally:
        gateway.stop()
    values = [kb for _, kb in rss]
    third = max(1, len(values) // 3)
    return {
        "machine": machine_info(),
        "load": {
            "clients": args.clients,
            "requests_each": args.requests,
            "idle_sockets": args.idle,
            "slowloris_sockets": args.slow,
            "stalled_readers": args.stalled,
        },
        "requests": len(latencies),
        "errors": len(errors),
        "first_errors": errors[:3],
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "latency_ms": {
            "p50": round(pct(latencies, 50) * 1000, 1),
            "p95": round(pct(latencies, 95) * 1000, 1),
            "max": round(max(latencies) * 1000, 1),
            "mean": round(statistics.fmean(latencies) * 1000, 1),
        },
        "attackers_reopened_after_the_gateway_closed_them": reopened,
        "rss_mb": {
            "first_third_mean": round(statistics.fmean(values[:third]) / 1024, 1),
            "last_third_mean": round(statistics.fmean(values[-third:]) / 1024, 1),
            "min": round(min(values) / 1024, 1),
            "max": round(max(values) / 1024, 1),
            "series": [(t, round(kb / 1024, 1)) for t, kb in rss[:: max(1, len(rss) // 20)]],
        },
    }


def report(result: dict[str, Any]) -> str:
    lat, mem, load = result["latency_ms"], result["rss_mb"], result["load"]
    lines = [
        f"load: {load}",
        f"requests: {result['requests']} ({result['errors']} errors), {result['requests_per_s']} requests/s",
        f"latency ms: p50 {lat['p50']}, p95 {lat['p95']}, max {lat['max']}",
        f"attackers reopened after being closed: {result['attackers_reopened_after_the_gateway_closed_them']}",
        f"RSS MB: first third {mem['first_third_mean']}, last third {mem['last_third_mean']}, "
        f"min {mem['min']}, max {mem['max']}",
        "RSS over time (s, MB): " + ", ".join(f"{t:g}: {mb}" for t, mb in mem["series"]),
    ]
    return "\n".join(lines)


async def attack(url: str, idle: int, slow: int, stalled: int) -> None:
    """The attackers alone (``--attack URL``), until SIGINT; then their reopen counts as JSON."""
    netloc = url.split("//", 1)[1].split("/", 1)[0]
    host, _, port = netloc.rpartition(":")
    attackers = Attackers((host, int(port)), url, idle, slow, stalled)
    stop: list[bool] = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    try:
        await attackers.run(stop)
    finally:
        attackers.close()
        print(json.dumps(attackers.reopened), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--requests", type=int, default=60, help="requests per client")
    parser.add_argument("--idle", type=int, default=300)
    parser.add_argument("--slow", type=int, default=100)
    parser.add_argument("--stalled", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--attack", metavar="URL", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.attack:
        anyio.run(attack, options.attack, options.idle, options.slow, options.stalled)
    else:
        outcome = anyio.run(main, options)
        print(json.dumps(outcome, indent=2) if options.json else report(outcome))
