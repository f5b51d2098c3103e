"""``toolscout serve --http`` sheds what it cannot serve (issue 28 item 3), as an attacker meets it:
raw sockets that send nothing or one header byte at a time, readers that stop reading a huge
search answer, one client's flood of sessions. What is asserted is what a real client got, what
the attacker's sockets saw (closed by the gateway) and the gateway's memory in /proc."""

from __future__ import annotations

import contextlib
import errno
import json
import socket
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from serve_helpers import (
    RAW_HEADERS,
    WAIT_S,
    fixture_entry,
    http_client,
    http_gateway,
    open_session,
    raw_post,
    text_of,
    write_config,
    write_user_settings,
)

pytest.importorskip("uvicorn")
pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads /proc (Linux)")

WRITE = {"name": "mcp__notes__write_note", "arguments": {"text": "still served"}}


#: Linux TCP states (include/net/tcp_states.h) of a socket whose peer closed the connection.
TCP_CLOSE, TCP_CLOSE_WAIT = 7, 8


def closed_by_peer(sock: socket.socket) -> bool:
    """True once the gateway let go of its end of ``sock``, as /proc/net/tcp shows it: the
    gateway's socket is gone (aborted) or orphaned (closed by the process, the kernel still
    trying to deliver what the reader never read), or ``sock`` itself saw the close (CLOSE_WAIT,
    CLOSE). Nothing is read from ``sock``."""
    from toolscout.core.gateway.guard import peer_uid

    try:
        state = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0]
        if state in (TCP_CLOSE, TCP_CLOSE_WAIT):
            return True
        return peer_uid(sock.getpeername()[:2], sock.getsockname()[:2]) is None  # the gateway's end
    except OSError as exc:
        return exc.errno in (errno.ECONNRESET, errno.EPIPE, errno.ENOTCONN, errno.EBADF)


def peeked(sock: socket.socket) -> bytes:
    """What the gateway has sent on ``sock`` so far and the kernel holds (left unread)."""
    try:
        return sock.recv(4096, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except OSError:
        return b""


async def test_idle_and_slowloris_sockets_cannot_lock_out_a_client(tmp_path):
    """With the open-file limit of a small desktop (256 here, 1024 there), 300 sockets that
    never finish a request head locked every client out: the gateway could accept nothing more.
    Now the oldest idle ones are closed to admit new connections, and a socket sending one header
    byte at a time is cut at serve.headerTimeout however long it keeps sending."""
    log = tmp_path / "calls.log"
    cfg = write_config(tmp_path, {"notes": fixture_entry("notes", "notes", str(log))})
    write_user_settings({"serve": {"headerTimeout": 3}})
    attackers: list[socket.socket] = []
    async with http_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "notes", nofile=256) as gateway:
        try:
            for n in range(300):
                sock = socket.create_connection(gateway.address)
                sock.setblocking(False)
                if n % 2:  # half trickle a request head, one byte at a time
                    sock.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                attackers.append(sock)
            slow = attackers[1::2]

            async def trickle() -> None:
                while True:
                    for sock in slow:
                        with contextlib.suppress(OSError):
                            sock.send(b"a")
                    await anyio.sleep(0.5)

            async with anyio.create_task_group() as tg:
                tg.start_soon(trickle)
                with anyio.fail_after(WAIT_S):
                    async with http_client(gateway.url) as client:
                        result = await client.call_tool("call_tool", WRITE)
                # every trickling socket still open now is cut by the head deadline, not served
                with anyio.fail_after(WAIT_S):
                    while not all(closed_by_peer(s) for s in slow):
                        await anyio.sleep(0.2)
                tg.cancel_scope.cancel()
        finally:
            for sock in attackers:
                sock.close()
    assert text_of(result) == "noted: still served", text_of(result)
    assert log.read_text().splitlines() == ['write_note {"text": "still served"}']


async def test_a_stalled_reader_of_a_huge_search_answer_does_not_pin_memory(tmp_path):
    """One hostile server's tools carry 2 MB schemas: each search answer naming ten of them was
    over 40 MB, held whole for every client that stopped reading it. Now the answer is capped
    like a tool result (tools.maxResultTokens), the gateway's RSS stays within a bound while four
    readers stall, and their connections are dropped (what is buffered for them freed) rather than
    kept: uvicorn's keep-alive close waits for a reader that never reads."""
    cfg = write_config(tmp_path, {"huge": fixture_entry("huge_tools", "10", "2")})
    write_user_settings({"serve": {"writeTimeout": 5, "headerTimeout": 5}})
    search = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "search_tools", "arguments": {"query": "weather records", "max_results": 50}},
    }
    async with http_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "huge") as gateway:
        async with http_client(gateway.url) as client:  # connected, catalog loaded
            await client.call_tool("search_tools", {"query": "echo a short text"})
        baseline = gateway.rss_kb()
        stalled = []
        try:
            for _ in range(4):
                sid = await open_session(gateway.url)
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.connect(gateway.address)
                sock.sendall(
                    raw_post("/mcp", "127.0.0.1", search, {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"})
                )
                sock.setblocking(False)
                stalled.append(sock)
            with anyio.fail_after(WAIT_S):  # every answer is being written: it was built
                while not all(b"data: " in peeked(s) for s in stalled):
                    await anyio.sleep(0.1)
            held = gateway.rss_kb()
            assert held - baseline < 64_000, (baseline, held)  # kB: 4 stalled answers took over 500 MB
            async with http_client(gateway.url) as client:  # another client is served meanwhile
                echoed = await client.call_tool(
                    "call_tool", {"name": "mcp__huge__small_echo", "arguments": {"text": "hi"}}
                )
                found = await client.call_tool("search_tools", {"query": "weather records", "max_results": 50})
            with anyio.fail_after(WAIT_S):
                while not all(closed_by_peer(s) for s in stalled):
                    await anyio.sleep(0.2)
        finally:
            for sock in stalled:
                sock.close()
    answer = found.structured_content
    size = len(json.dumps(answer))
    assert size < 400_000, size  # 25,000 tokens of JSON, not 20 MB
    assert answer["results"] and len(answer["results"]) + len(answer.get("left_out", [])) == 10
    assert any("tools.maxResultTokens" in note for note in answer["notes"])
    assert text_of(echoed) == "echo: hi"


async def test_one_clients_sessions_never_evict_anothers(tmp_path, monkeypatch):
    """Client B opens ten times its session cap: its own least recently used sessions end (404),
    client A's session keeps its exposed tool and its remembered approval (no second question)."""
    log = tmp_path / "calls.log"
    cfg = write_config(tmp_path, {"notes": fixture_entry("notes", "notes", str(log))})
    write_user_settings({"serve": {"maxSessionsPerClient": 3}})
    token_a, token_b = "token-of-client-a", "token-of-client-b"
    monkeypatch.setenv("TOOLSCOUT_SERVE_TOKEN", f"{token_a} {token_b}")  # two clients
    asked: list[str] = []

    async def person(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"remember": True})

    async with http_gateway(tmp_path, "--mcp-config", str(cfg), "--expose", "dynamic") as gateway:
        async with http_client(gateway.url, {"authorization": f"Bearer {token_a}"}, elicit=person) as a:
            await a.call_tool("search_tools", {"query": "write a note"})
            first = await a.call_tool("mcp__notes__write_note", {"text": "one"})
            b_sessions = [await open_session(gateway.url, {"authorization": f"Bearer {token_b}"}) for _ in range(30)]
            second = await a.call_tool("mcp__notes__write_note", {"text": "two"})
        async with httpx2.AsyncClient(timeout=30) as http:
            statuses = [
                (
                    await http.post(
                        gateway.url,
                        json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                        headers={
                            **RAW_HEADERS,
                            "authorization": f"Bearer {token_b}",
                            "mcp-session-id": sid,
                            "mcp-protocol-version": "2025-06-18",
                        },
                    )
                ).status_code
                for sid in b_sessions
            ]
    assert text_of(first) == "noted: one" and text_of(second) == "noted: two", (text_of(first), text_of(second))
    assert len(asked) == 1  # remembered for A's session, which B's flood did not end
    assert statuses == [404] * 27 + [200] * 3
    assert log.read_text().splitlines() == ['write_note {"text": "one"}', 'write_note {"text": "two"}']


async def test_requests_in_flight_are_capped_per_session(tmp_path):
    """Session A has two calls waiting for the person's answer, its cap (serve.maxInFlightPerSession
    2): its third request is refused at once, saying which limit, instead of queued; session B (a
    third request of the same client, within serve.maxInFlightPerClient 3) is served meanwhile."""
    log = tmp_path / "calls.log"
    cfg = write_config(tmp_path, {"notes": fixture_entry("notes", "notes", str(log))})
    write_user_settings({"serve": {"maxInFlightPerSession": 2, "maxInFlightPerClient": 3}})
    release = anyio.Event()
    asked: list[str] = []
    results: list[types.CallToolResult] = []

    async def person(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        await release.wait()
        return types.ElicitResult(action="decline")

    async with (
        http_gateway(tmp_path, "--mcp-config", str(cfg)) as gateway,
        http_client(gateway.url, elicit=person) as a,
        http_client(gateway.url) as b,
        anyio.create_task_group() as tg,
    ):
        for text in ("one", "two"):
            tg.start_soon(
                lambda t=text: _collect(
                    results, a.call_tool("call_tool", {"name": "mcp__notes__write_note", "arguments": {"text": t}})
                )
            )
        with anyio.fail_after(WAIT_S):
            while len(asked) < 2:
                await anyio.sleep(0.05)
        with pytest.raises(MCPError) as refused:
            await a.call_tool("search_tools", {"query": "write a note"})
        other = await b.call_tool("search_tools", {"query": "write a note"})
        release.set()
    assert "2 requests of this session are being served already (serve.maxInFlightPerSession)" in str(refused.value)
    assert not other.is_error and other.structured_content["results"]
    assert [r.is_error for r in results] == [True, True] and log.exists() is False


async def _collect(into: list[types.CallToolResult], call) -> None:
    into.append(await call)


async def test_an_endless_body_and_an_unread_answer_are_cut(tmp_path):
    """A request whose body never ends is cut at serve.bodyTimeout (the head deadline no longer
    applies once the head is in); a reader that stops reading a tool result (capped, still 100 kB)
    is cut at serve.writeTimeout while the answer waits to be sent, or at the idle deadline once
    the kernel's buffers took it all (uvicorn's keep-alive close waits for a reader that never
    reads). Before, both connections were held for ever."""
    cfg = write_config(tmp_path, {"big": fixture_entry("big_output")})
    write_user_settings({"serve": {"bodyTimeout": 2, "writeTimeout": 2, "headerTimeout": 2}})
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "call_tool", "arguments": {"name": "mcp__big__dump", "arguments": {"megabytes": 2}}},
    }
    async with http_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "big") as gateway:
        sid = await open_session(gateway.url)
        endless = socket.create_connection(gateway.address)
        endless.sendall(
            raw_post("/mcp", "127.0.0.1", call, {"mcp-session-id": sid, **{"mcp-protocol-version": "2025-06-18"}})[:-40]
        )  # the head, and the body but its last 40 bytes
        unread = socket.socket()
        unread.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        unread.connect(gateway.address)
        unread.sendall(
            raw_post("/mcp", "127.0.0.1", call, {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"})
        )
        try:
            with anyio.fail_after(WAIT_S):
                while not (closed_by_peer(endless) and closed_by_peer(unread)):
                    await anyio.sleep(0.2)
            async with http_client(gateway.url) as client:
                served = await client.call_tool("call_tool", {"name": "mcp__big__dump", "arguments": {"megabytes": 1}})
        finally:
            endless.close()
            unread.close()
    assert "Result cut to 25,000 tokens" in text_of(served)
