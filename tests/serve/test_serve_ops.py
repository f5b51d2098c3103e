"""``toolscout serve --http``'s operator surface, seen as a balancer, a scraper and an operator
see it: ``/healthz`` and ``/readyz`` (nothing revealed), ``/metrics`` (counts of what real MCP
clients sent, authenticated), ``--log-format json`` (a parseable line per request, hostile
text escaped), and the drain on SIGTERM (readiness first, in-flight calls finished, exit 0)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import signal
import socket
from pathlib import Path

import anyio
import anyio.abc
import httpx2
import mcp_types as types
import pytest
from ops_helpers import METRICS_TOKEN, TOKEN, Replica, mcp_client, refuses, sample, scrape
from serve_helpers import WAIT_S, fixture_entry, text_of, wait_until, write_config, write_user_settings

pytest.importorskip("prometheus_client")

#: A tool name a client might send: quotes, a line break and a fake second log record.
HOSTILE = 'x"}\n{"message": "request", "method": "forged'


async def _rest(stream: anyio.abc.SocketStream) -> bytes:
    """Everything ``stream`` receives until the other end closes it."""
    data = b""
    with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
        while True:
            data += await stream.receive()
    return data


async def get(url: str, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.get(url, headers=headers)


async def test_health_metrics_and_json_log_count_what_clients_sent(tmp_path: Path) -> None:
    write_user_settings({"serve": {"headerTimeout": 3}})
    cfg = write_config(tmp_path, {"notes": fixture_entry("notes", "notes", str(tmp_path / "calls.log"))})
    replica = Replica(tmp_path, "replica", "--stateless", "--mcp-config", str(cfg), "--allowed-tools", "mcp__notes")
    try:
        await replica.start()
        alive = await get(f"{replica.base}/healthz")
        assert (alive.status_code, alive.json()) == (200, {"status": "ok"})
        await replica.wait_ready()
        ready = await get(f"{replica.base}/readyz")
        assert ready.json() == {"status": "ready"}
        for answer in (alive, ready):  # no tool, server or command in what anyone may read
            assert "notes" not in answer.text and "python" not in answer.text
        assert (await get(f"{replica.base}/metrics")).status_code == 401
        assert (await get(f"{replica.base}/metrics", authorization="Bearer wrong")).status_code == 401
        for scheme in ("bearer", "BEARER"):  # the scheme is case-insensitive (RFC 9110 11.1); the token is not
            assert (await get(f"{replica.base}/metrics", authorization=f"{scheme} {TOKEN}")).status_code == 200
        assert (await get(f"{replica.base}/metrics", authorization=f"Bearer {TOKEN.upper()}")).status_code == 401
        async with httpx2.AsyncClient(timeout=10) as http:
            assert (await http.post(f"{replica.base}/readyz")).status_code == 405
        # a probe is held to the transport's deadlines like any request: half a head is cut off
        host, port = replica.address.split(":")
        async with await anyio.connect_tcp(host, int(port)) as probe:
            await probe.send(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            with anyio.fail_after(WAIT_S):
                assert await _rest(probe) == b""  # closed unanswered at serve.headerTimeout

        async with mcp_client(replica.url) as client:
            found = await client.call_tool("search_tools", {"query": "write a note"})
            assert json.loads(text_of(found))["results"][0]["name"] == "mcp__notes__write_note"
            wrote = await client.call_tool("call_tool", {"name": "mcp__notes__write_note", "arguments": {"text": "hi"}})
            assert text_of(wrote) == "noted: hi"
            hostile = await client.call_tool(HOSTILE, {})
            assert hostile.is_error
        async with mcp_client(replica.url, mode="auto") as modern:
            again = await modern.call_tool("search_tools", {"query": "delete a note"})
            assert json.loads(text_of(again))["results"][0]["name"] == "mcp__notes__delete_note"

        # a request for another Host (DNS rebinding) is refused, and the SDK's warning about it is
        # a JSON line too (it was "Invalid Host header: ..." as plain text)
        async with httpx2.AsyncClient(timeout=10) as http:
            rebound = await http.post(
                replica.url, json={}, headers={"host": "evil.example", "authorization": f"Bearer {TOKEN}"}
            )
            assert rebound.status_code == 421
        assert any("evil.example" in line.get("message", "") for line in replica.lines())

        metrics = await scrape(replica.base)
        calls = replica.requests("tools/call")
        assert sample(metrics, "toolscout_requests_total", method="tools/call", outcome="ok") == 3
        assert sample(metrics, "toolscout_requests_total", method="tools/call", outcome="tool_error") == 1
        assert sample(metrics, "toolscout_search_duration_seconds_count") == 2
        assert sample(metrics, "toolscout_call_duration_seconds_count") == 2  # write_note, the hostile name
        assert sample(metrics, "toolscout_upstream_servers", state="connected") == 1
        assert sample(metrics, "toolscout_upstream_servers", state="failed") == 0
        assert sample(metrics, "toolscout_tools") == 2
        assert sample(metrics, "toolscout_ready") == 1
        assert sample(metrics, "toolscout_in_flight_requests") == 0
        assert sample(metrics, "toolscout_index_age_seconds") >= 0
        assert ("toolscout_index_age_seconds", ()) in metrics
        every = sum(v for (name, _), v in metrics.items() if name == "toolscout_requests_total")
        assert every == len(replica.requests())  # one log line per counted request

        # the log: one JSON object per line (lines() parses each), the hostile name kept whole
        assert [c["outcome"] for c in calls] == ["ok", "ok", "tool_error", "ok"]
        assert calls[2]["tool"] == HOSTILE and not any(line.get("method") == "forged" for line in replica.lines())
        assert calls[1]["tool"] == "call_tool mcp__notes__write_note"
        assert {c["client"] for c in calls} == {hashlib.sha256(TOKEN.encode()).hexdigest()[:16]}
        assert all(c["session"] is None and c["duration_ms"] >= 0 and c["time"] for c in calls)
        assert TOKEN not in replica.log_path.read_text()
    finally:
        replica.stop()


async def test_sigterm_drains_readiness_first_then_finishes_calls_in_flight(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    cfg = write_config(tmp_path, {"gated": fixture_entry("gated", "gated")})
    replica = Replica(
        tmp_path, "replica", "--stateless", "--mcp-config", str(cfg), "--allowed-tools", "mcp__gated", "--metrics-token", METRICS_TOKEN,
        "--drain-delay", "600",
    )  # fmt: skip
    try:
        await replica.start()
        await replica.wait_ready()
        # --metrics-token: the scraper's token, not the clients'
        assert (await get(f"{replica.base}/metrics", authorization=f"Bearer {TOKEN}")).status_code == 401
        assert sample(await scrape(replica.base, METRICS_TOKEN), "toolscout_in_flight_requests") == 0
        answers: list[types.CallToolResult] = []

        async def slow_call() -> None:
            async with mcp_client(replica.url) as client:
                await client.list_tools()  # the client validates results against the listed schemas
                answers.append(
                    await client.call_tool(
                        "call_tool", {"name": "mcp__gated__wait_gate", "arguments": {"path": str(gate)}}
                    )
                )

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow_call)

            async def one_in_flight() -> bool:
                return sample(await scrape(replica.base, METRICS_TOKEN), "toolscout_in_flight_requests") == 1

            await wait_until(one_in_flight)
            replica.signal(signal.SIGTERM)

            async def draining() -> bool:
                return (await get(f"{replica.base}/readyz")).status_code == 503

            await wait_until(draining)
            assert (await get(f"{replica.base}/readyz")).json() == {"status": "draining"}
            assert (await get(f"{replica.base}/healthz")).status_code == 200
            # while the balancer moves away, requests are still served
            async with mcp_client(replica.url) as late:
                added = await late.call_tool("call_tool", {"name": "mcp__gated__add", "arguments": {"a": 2, "b": 3}})
                assert text_of(added) == "5"
            replica.signal(signal.SIGTERM)  # a second signal ends the delay: the listener closes
            await wait_until(lambda: refuses(replica.base))
            # no event says "still nothing cut": wait past sse-starlette's 0.5 s shutdown poll, which
            # used to end every answer stream (the call in flight too) as soon as uvicorn stopped
            await anyio.sleep(1.5)
            assert replica.proc.poll() is None and not answers  # the call in flight is still being served
            gate.touch()
        assert [text_of(a) for a in answers] == ["opened"]
        assert await replica.exited() == 0
        drained = [x for x in replica.lines() if x["message"] == "drained"]
        assert len(drained) == 1 and drained[0]["methods"] == {"initialize": 2, "tools/list": 2, "tools/call": 2}
    finally:
        replica.stop()


async def test_a_taken_port_is_one_json_error_line_and_exit_1(tmp_path: Path) -> None:
    with socket.socket() as taken:  # another process holds the port the operator named
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        replica = Replica(tmp_path, "replica", "--stateless", "--no-default-servers", "--http", f"127.0.0.1:{port}")
        try:
            assert await replica.exited() == 1
            lines = replica.lines()  # every line JSON: a log shipper parses the failure too
        finally:
            replica.stop()
    errors = [x for x in lines if x["level"] == "ERROR"]
    assert len(errors) == 1 and f"--http 127.0.0.1:{port}: cannot listen there" in errors[0]["text"], lines
    assert "in use" in errors[0]["text"]


@pytest.mark.parametrize(
    ("bind", "metrics_token", "says"),
    [
        ("127.0.0.1:0", "", "must be printable characters without spaces"),
        ("127.0.0.1:0", "two words", "must be printable characters without spaces"),
        ("0.0.0.0:8101", "short", "needs at least"),
    ],
)
def test_a_bad_metrics_token_is_named_as_the_metrics_token(
    bind: str, metrics_token: str, says: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolscout.cli import run as cli_run

    monkeypatch.setenv("TOOLSCOUT_SERVE_TOKEN", TOKEN)
    assert cli_run(["serve", "--http", bind, "--stateless", "--metrics-token", metrics_token]) == 2
    err = capsys.readouterr().err
    assert says in err and "--metrics-token or TOOLSCOUT_METRICS_TOKEN" in err and "--token or" not in err, err


async def test_a_call_cut_off_by_the_drain_timeout_is_logged_without_a_traceback(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"gated": fixture_entry("gated", "gated")})
    replica = Replica(
        tmp_path, "replica", "--stateless", "--mcp-config", str(cfg), "--allowed-tools", "mcp__gated",
        "--drain-delay", "0", "--drain-timeout", "1",
    )  # fmt: skip
    try:
        await replica.start()
        await replica.wait_ready()

        async def held_call() -> None:
            with contextlib.suppress(Exception):  # its answer stream ends unanswered: expected here
                async with mcp_client(replica.url) as client:
                    await client.call_tool(
                        "call_tool", {"name": "mcp__gated__wait_gate", "arguments": {"path": str(tmp_path / "never")}}
                    )

        async with anyio.create_task_group() as tg:
            tg.start_soon(held_call)

            async def one_in_flight() -> bool:
                return sample(await scrape(replica.base), "toolscout_in_flight_requests") == 1

            await wait_until(one_in_flight)
            replica.signal(signal.SIGTERM)
            assert await replica.exited() == 0
            tg.cancel_scope.cancel()
        lines = replica.lines()
        assert any("timeout graceful shutdown exceeded" in x["message"] for x in lines)  # said once, plainly
        assert not [x for x in lines if "exc_info" in x or "Exception in ASGI" in x["message"]], lines
    finally:
        replica.stop()


async def test_the_index_line_says_when_the_index_was_built(tmp_path: Path) -> None:
    from toolscout.core.engine.index_files import read_index, write_index

    out = tmp_path / "index"
    record = {"original_name": "t", "description": "d", "input_schema": {"type": "object", "properties": {}}}
    write_index(out, [{"name": "s", "kind": "file", "tools": [record]}], None, None)  # catalog only (bm25f)
    replica = Replica(tmp_path, "replica", "--stateless", "--no-default-servers", "--index", str(out))
    try:
        await replica.start()
        said = [x for x in replica.lines() if x["message"] == "index"]
    finally:
        replica.stop()
    # named for what it is; it was "created_" (logging's own "created" renamed out of the way)
    assert len(said) == 1 and said[0]["built"] == read_index(out).manifest["created"], said
    assert (said[0]["tools"], said[0]["servers"]) == (1, 1) and "created_" not in said[0]


async def test_a_metrics_token_read_from_a_secret_file_with_its_newline_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # TOOLSCOUT_METRICS_TOKEN from a mounted secret keeps the file's final newline, as
    # TOOLSCOUT_SERVE_TOKEN may (split on whitespace); the replica refused to start
    monkeypatch.setenv("TOOLSCOUT_METRICS_TOKEN", f"{METRICS_TOKEN}\n")
    replica = Replica(tmp_path, "replica", "--stateless", "--no-default-servers")
    try:
        await replica.start()
        assert sample(await scrape(replica.base, METRICS_TOKEN), "toolscout_in_flight_requests") == 0
        assert (await get(f"{replica.base}/metrics", authorization=f"Bearer {TOKEN}")).status_code == 401
    finally:
        replica.stop()
