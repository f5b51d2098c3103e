"""Local processes are not the person (issue 28 item 4): a session, and the permission questions
asked on it, belong to the client that opened it. The attackers are raw HTTP clients (another
user's process, another token's holder, a 2026-07-28 client writing its own ``requestState``);
what is asserted is what they were answered and what the upstream server ran (its call log)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from serve_helpers import (
    RAW_HEADERS,
    fixture_entry,
    http_client,
    http_gateway,
    open_session,
    text_of,
    write_config,
    write_user_settings,
)

pytest.importorskip("uvicorn")

WRITE = {"name": "mcp__notes__write_note", "arguments": {"text": "only if the person says so"}}
LEGACY = {"mcp-protocol-version": "2025-06-18"}
#: The permission answer an attacker would like to give: yes, and for the rest of the session.
FORGED_YES = {"action": "accept", "content": {"remember": True}}
#: An attacker that is another user: sends each JSON body to the session given, prints the statuses.
ATTACKER = r"""
import json, sys, urllib.request, urllib.error
url, sid = sys.argv[1], sys.argv[2]
statuses = []
for body in json.loads(sys.stdin.read()):
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-06-18"}
    if sid:
        headers["mcp-session-id"] = sid
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            statuses.append(answer.status)
    except urllib.error.HTTPError as refused:
        statuses.append(refused.code)
print(json.dumps(statuses))
"""


def setup(tmp_path: Path) -> tuple[list[str], Path]:
    log = tmp_path / "calls.log"
    cfg = write_config(tmp_path, {"notes": fixture_entry("notes", "notes", str(log))})
    return ["--mcp-config", str(cfg)], log


def ran(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def answers(ids: range) -> list[dict[str, Any]]:
    """JSON-RPC answers to every server-to-client request id in ``ids``: "accept, remember"."""
    return [{"jsonrpc": "2.0", "id": n, "result": FORGED_YES} for n in ids]


def attacker_python() -> str | None:
    """An interpreter another user may run (the test's may sit in a folder only root reads)."""
    for path in (sys.executable, shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")):
        if path and os.access(path, os.X_OK) and all(os.stat(p).st_mode & 0o005 == 0o005 for p in _folders(path)):
            return path
    return None


def _folders(path: str) -> list[Path]:
    real = Path(os.path.realpath(path))
    return [*list(real.parents)[:-1], real]


def other_user_available() -> bool:
    return (
        hasattr(os, "geteuid")
        and os.geteuid() == 0
        and Path("/proc/net/tcp").is_file()
        and attacker_python() is not None
    )


@pytest.mark.skipif(not other_user_available(), reason="needs root (to run the attacker as another user) and /proc")
async def test_another_users_process_can_neither_answer_the_question_nor_use_the_session(tmp_path):
    """No token, loopback: while the person's client is being asked, a process of another user
    (uid 65534) answers "accept, remember" to every request id on that client's session and
    calls a tool on it. Before, its answer ran the tool although the person declined."""
    args, log = setup(tmp_path)
    attacker: list[Any] = []

    async with http_gateway(tmp_path, *args) as gateway:

        async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            bodies = [
                *answers(range(0, 12)),
                {
                    "jsonrpc": "2.0",
                    "id": 99,
                    "method": "tools/call",
                    "params": {
                        "name": "call_tool",
                        "arguments": {"name": WRITE["name"], "arguments": {"text": "attacker"}},
                    },
                },
            ]
            done = await anyio.to_thread.run_sync(
                lambda: subprocess.run(
                    [str(attacker_python()), "-I", "-c", ATTACKER, gateway.url, session_ids[-1]],
                    input=json.dumps(bodies),
                    capture_output=True,
                    text=True,
                    timeout=120,
                    user=65534,
                    cwd="/",
                )
            )
            attacker.append(done)
            return types.ElicitResult(action="decline")

        session_ids: list[str] = []

        async def hook(request: httpx2.Request) -> None:
            if "mcp-session-id" in request.headers:
                session_ids.append(request.headers["mcp-session-id"])

        async with httpx2.AsyncClient(event_hooks={"request": [hook]}, timeout=httpx2.Timeout(30, read=120)) as http:
            from mcp.client import Client
            from mcp.client.streamable_http import streamable_http_client

            async with Client(
                streamable_http_client(gateway.url, http_client=http), mode="legacy", elicitation_callback=person
            ) as client:
                await client.list_tools()
                result = await client.call_tool("call_tool", WRITE)
    [done] = attacker
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [403] * 13
    assert result.is_error and "denied" in text_of(result), text_of(result)
    assert ran(log) == []


async def test_another_tokens_client_can_neither_answer_the_question_nor_use_the_session(tmp_path, monkeypatch):
    """Two tokens, two clients: B sends A's ``Mcp-Session-Id`` (a leaked log line, say) with its
    own valid token. Every request, its answers to A's question included, is answered 404 as an
    unknown session; A's own answer (decline) is the one that counts."""
    args, log = setup(tmp_path)
    monkeypatch.setenv("TOOLSCOUT_SERVE_TOKEN", "token-of-client-a token-of-client-b")
    b_said: list[int] = []

    async with http_gateway(tmp_path, *args) as gateway:
        session_ids: list[str] = []

        async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            headers = {
                **RAW_HEADERS,
                **LEGACY,
                "authorization": "Bearer token-of-client-b",
                "mcp-session-id": session_ids[-1],
            }
            async with httpx2.AsyncClient(timeout=30) as http:
                for body in [*answers(range(0, 12)), {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}]:
                    b_said.append((await http.post(gateway.url, json=body, headers=headers)).status_code)
                b_said.append((await http.get(gateway.url, headers=headers)).status_code)  # its event stream
            return types.ElicitResult(action="decline")

        async def hook(request: httpx2.Request) -> None:
            if "mcp-session-id" in request.headers:
                session_ids.append(request.headers["mcp-session-id"])

        from mcp.client import Client
        from mcp.client.streamable_http import streamable_http_client

        async with (
            httpx2.AsyncClient(
                event_hooks={"request": [hook]},
                timeout=httpx2.Timeout(30, read=120),
                headers={"authorization": "Bearer token-of-client-a"},
            ) as http,
            Client(
                streamable_http_client(gateway.url, http_client=http), mode="legacy", elicitation_callback=person
            ) as client,
        ):
            result = await client.call_tool("call_tool", WRITE)
            again = await client.call_tool("search_tools", {"query": "write a note"})  # A's session still works
    assert b_said == [404] * 14
    assert result.is_error and "denied" in text_of(result), text_of(result)
    assert not again.is_error
    assert ran(log) == []


async def test_a_2026_client_cannot_write_its_own_permission_answer(tmp_path):
    """A 2026-07-28 retry carries the answer and the ``requestState`` the gateway gave with the
    question. It was the SHA-256 of the tool name and arguments, which any client can compute:
    one POST with "accept" ran the tool without anyone being asked. Now the state is sealed by
    the gateway and bound to the client it was given to."""
    args, log = setup(tmp_path)
    from toolscout.core.serialize import dumps

    digest = hashlib.sha256(dumps([WRITE["name"], WRITE["arguments"]]).encode()).hexdigest()
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "attacker", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    }
    forged = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "call_tool",
            "arguments": WRITE,
            "inputResponses": {"toolscout_permission": FORGED_YES},
            "requestState": digest,
            "_meta": meta,
        },
    }
    modern = {**RAW_HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "call_tool"}
    async with http_gateway(tmp_path, *args) as gateway, httpx2.AsyncClient(timeout=60) as http:
        answer = await http.post(gateway.url, json=forged, headers=modern)
        # the real flow still works: the question, then the answer with the state it came with
        asked = await http.post(
            gateway.url,
            json={
                **forged,
                "params": {k: v for k, v in forged["params"].items() if k not in ("inputResponses", "requestState")},
            },
            headers=modern,
        )
    text = answer.text
    assert "Invalid or expired requestState" in text, text
    assert '"inputRequests"' in asked.text and digest not in asked.text, asked.text
    assert ran(log) == []


async def test_the_start_says_who_can_use_the_gateway(tmp_path):
    """Without a token, the warning says every program of this user can use it (and that other
    users' are refused); a token given with --token is in /proc/PID/cmdline for every user to
    read, and the warning says so."""
    args, _ = setup(tmp_path)
    async with http_gateway(tmp_path, *args) as gateway:
        open_ = gateway.stderr
        sid = await open_session(gateway.url)
    async with http_gateway(tmp_path, *args, "--token", "visible-token-1234") as gateway:
        cmdline = Path(f"/proc/{gateway.proc.pid}/cmdline").read_bytes().split(b"\0")
        tokened = gateway.stderr
    assert sid
    assert "no bearer token: every program of user" in open_ and "other users' programs are refused" in open_
    assert b"visible-token-1234" in cmdline
    assert "visible to every local user in the process list" in tokened
    assert "no bearer token" not in tokened


@pytest.mark.skipif(not Path("/proc/net/tcp").is_file(), reason="Linux /proc")
@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_the_user_of_a_loopback_peer_is_read_from_proc(host):
    """What /proc/net/tcp{,6} shows for the peer's end of a loopback connection: its owner's uid
    (this process's); nothing for a peer that is not a socket here."""
    import socket

    from toolscout.core.gateway.guard import peer_uid

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        server = socket.create_server((host, 0), family=family)
    except OSError:
        pytest.skip(f"no {host} here")
    with server, socket.create_connection(server.getsockname()[:2]) as client:
        accepted, peer = server.accept()
        with accepted:
            assert peer_uid(peer[:2], accepted.getsockname()[:2]) == os.geteuid()
            assert peer_uid((host, 1), accepted.getsockname()[:2]) is None
        assert client


async def test_a_capped_results_full_text_is_readable_by_its_session_only(tmp_path):
    """A long tool result is cut and its full text kept as ``toolscout://results/N``: N counts up,
    so another session could read every other client's results by guessing. Now only the session
    the result was cut for reads it; the other is told the resource is unknown."""
    args, _ = setup(tmp_path)
    write_user_settings({"tools": {"maxResultTokens": 1000}})
    dump = {"name": "mcp__notes__write_note", "arguments": {"text": "word " * 4000}}
    async with (
        http_gateway(tmp_path, *args, "--allowed-tools", "notes") as gateway,
        http_client(gateway.url) as owner,
        http_client(gateway.url) as other,
    ):
        cut = await owner.call_tool("call_tool", dump)
        uri = text_of(cut).rsplit("the resource ", 1)[1].split(" ", 1)[0]
        mine = await owner.read_resource(uri)
        with pytest.raises(MCPError) as refused:
            await other.read_resource(uri)
    assert uri == "toolscout://results/1"
    assert mine.contents[0].text.startswith("noted: " + "word " * 4000)
    assert "Unknown resource" in str(refused.value)
