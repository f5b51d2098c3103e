"""``toolscout serve --http`` driven by the real client over streamable HTTP: tools, search, calls
with elicitation, dynamic exposure, bearer tokens, DNS-rebinding protection, stateless mode."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from serve_helpers import (
    MODERN_META,
    HttpGateway,
    Inbox,
    fixture_entry,
    http_client,
    http_gateway,
    serve_command,
    serve_env,
    text_of,
    time_entry,
    write_config,
)

pytest.importorskip("uvicorn")

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def setup(tmp_path: Path, *, with_time: bool = False) -> tuple[Path, Path]:
    """The fixture server ``notes`` (logging its calls to the returned path) and, for the test
    that calls it, the real ``mcp-server-time`` (each upstream costs about a second of CPU)."""
    log = tmp_path / "calls.log"
    time = {"time": time_entry()} if with_time else {}
    cfg = write_config(tmp_path, {"notes": fixture_entry("notes", "notes", str(log)), **time})
    return cfg, log


async def post(url: str, headers: dict[str, str]) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(url, json=INIT, headers={**HEADERS, **headers})


async def discover(url: str) -> dict[str, Any]:
    """A 2026-07-28 ``server/discover`` POST (no session), as JSON-RPC."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}}
    async with httpx2.AsyncClient(timeout=30) as http:
        answer = await http.post(
            url, json=body, headers={**HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"}
        )
    text = answer.text
    return json.loads(text.split("data: ", 1)[1] if text.startswith("event:") else text)


async def test_search_call_and_dynamic_exposure_over_http(tmp_path):
    cfg, log = setup(tmp_path, with_time=True)
    questions: list[str] = []

    async def accept(context, params):
        questions.append(params.message)
        return types.ElicitResult(action="accept", content={"remember": False})

    inbox = Inbox()
    async with (
        http_gateway(tmp_path, "--mcp-config", str(cfg), "--expose", "dynamic", "--allowed-tools", "time") as gateway,
        http_client(gateway.url, elicit=accept, inbox=inbox) as client,
    ):
        declared = client.session.server_capabilities.tools.list_changed
        discovered = await discover(gateway.url)
        first = [t.name for t in (await client.list_tools()).tools]
        found = await client.call_tool("search_tools", {"query": "write a note"})
        await inbox.wait_for(types.ToolListChangedNotification)
        listed = [t.name for t in (await client.list_tools()).tools]
        wrote = await client.call_tool("notes__write_note", {"text": "over http"})
        now = await client.call_tool(
            "call_tool", {"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}
        )
    # the session sends tools/list_changed, so its initialize says so; a 2026-07-28 request has no
    # session (nothing would remember a longer list), so its discover result says false
    assert declared is True
    assert discovered["result"]["capabilities"]["tools"]["listChanged"] is False
    assert first == ["search_tools", "call_tool"]
    assert found.structured_content["results"][0]["name"] == "mcp__notes__write_note"
    assert listed[:3] == [*first, "notes__write_note"]  # served without the canonical mcp__ prefix
    assert text_of(wrote) == "noted: over http" and len(questions) == 1
    assert not now.is_error and '"timezone": "UTC"' in text_of(now)
    assert log.read_text().splitlines() == ['write_note {"text": "over http"}']


async def test_bearer_token_is_required_when_given(tmp_path, monkeypatch):
    cfg, log = setup(tmp_path)
    monkeypatch.setenv("TOOLSCOUT_SERVE_TOKEN", "s3cret-token")
    async with http_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "notes") as gateway:
        missing = await post(gateway.url, {})
        wrong = await post(gateway.url, {"authorization": "Bearer s3cret-tokem"})
        right = await post(gateway.url, {"authorization": "Bearer s3cret-token"})
        with pytest.raises(ExceptionGroup):  # the SDK client gives up on the 401 (MCPError in a group)
            async with http_client(gateway.url, {"authorization": "Bearer nope"}) as client:
                await client.call_tool("call_tool", {"name": "mcp__notes__write_note", "arguments": {"text": "x"}})
        async with http_client(gateway.url, {"authorization": "Bearer s3cret-token"}) as client:
            ok = await client.call_tool("call_tool", {"name": "mcp__notes__write_note", "arguments": {"text": "y"}})
    assert missing.status_code == wrong.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert right.status_code == 200
    assert text_of(ok) == "noted: y"
    assert log.read_text().splitlines() == ['write_note {"text": "y"}']  # the refused client ran nothing


def test_non_loopback_bind_needs_a_token(tmp_path):
    cfg, _ = setup(tmp_path)
    env = {k: v for k, v in serve_env().items() if k != "TOOLSCOUT_SERVE_TOKEN"}
    done = subprocess.run(
        serve_command("--http", "0.0.0.0:0", "--mcp-config", str(cfg)),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "listens beyond this machine" in done.stderr and "--token" in done.stderr
    for args, message in (
        (["--http", "127.0.0.1:http"], "the port must be a number"),
        (["--stateless"], "--stateless applies to --http only"),
        (["--http", "0", "--stateless", "--expose", "dynamic"], "cannot be combined"),
        # a port or a URL never matched a Host header: every request got 421
        (["--http", "0", "--allowed-host", "mcp.example.com:8443"], "--allowed-host mcp.example.com:8443: give"),
        (["--http", "0", "--allowed-host", "https://mcp.example.com"], "--allowed-host https://mcp.example.com: give"),
    ):
        bad = subprocess.run(serve_command(*args), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert bad.returncode == 2 and message in bad.stderr


@pytest.mark.parametrize(
    ("host", "token", "message"),
    [
        ("0.0.0.0", "short-token", "at least 16 characters (this one has 11)"),
        ("0.0.0.0", " ", "without spaces"),
        ("127.0.0.1", "", "without spaces"),  # a blank token would refuse every request
        ("127.0.0.1", "a\x1bb", "without spaces"),
    ],
)
def test_a_token_too_short_for_a_wide_bind_or_blank_is_refused(host, token, message):
    """Found by an attacker try: --token ' ' and --token a started a gateway on 0.0.0.0."""
    from toolscout.core.gateway.http import BindError, check_exposure, parse_bind

    with pytest.raises(BindError, match=re.escape(message)) as refused:
        check_exposure(parse_bind(f"{host}:8080"), token)
    assert "secrets.token_urlsafe" in str(refused.value)
    check_exposure(parse_bind(f"{host}:8080"), "x" * 16)  # long enough everywhere
    check_exposure(parse_bind("127.0.0.1:8080"), "ok")  # loopback: any sendable token


async def test_dns_rebinding_protection_stays_on(tmp_path):
    cfg, _ = setup(tmp_path)
    async with http_gateway(tmp_path, "--mcp-config", str(cfg)) as gateway:
        rebound = await post(gateway.url, {"host": "evil.example:80"})
        foreign = await post(gateway.url, {"origin": "http://evil.example"})
        local = await post(gateway.url, {})
    assert rebound.status_code == 421 and foreign.status_code == 403 and local.status_code == 200


async def test_wide_bind_with_token_still_checks_host(tmp_path):
    cfg, _ = setup(tmp_path)
    auth = {"authorization": "Bearer team-token-for-the-wide-bind"}
    wide = HttpGateway(
        tmp_path,
        "--mcp-config",
        str(cfg),
        "--token",
        "team-token-for-the-wide-bind",
        "--allowed-host",
        "Tools.Internal",  # as the operator typed it: host names are case-insensitive, clients send lowercase
        bind="0.0.0.0:0",
    )
    try:
        url = (await wide.start()).replace("0.0.0.0", "127.0.0.1")
        rebound = await post(url, {**auth, "host": "evil.example"})
        named = await post(url, {**auth, "host": "tools.internal:8080"})
        no_token = await post(url, {"host": "tools.internal:8080"})
    finally:
        wide.stop()
    assert wide.url.startswith("http://0.0.0.0:")
    assert rebound.status_code == 421 and named.status_code == 200 and no_token.status_code == 401


async def test_stateless_mode_answers_any_request(tmp_path):
    cfg, log = setup(tmp_path)
    async with http_gateway(tmp_path, "--mcp-config", str(cfg), "--stateless", "--allowed-tools", "notes") as gateway:
        for text in ("one", "two"):
            async with http_client(gateway.url) as client:
                tools = [t.name for t in (await client.list_tools()).tools]
                found = await client.call_tool("search_tools", {"query": "select:mcp__notes__write_note"})
                await client.call_tool("call_tool", {"name": "mcp__notes__write_note", "arguments": {"text": text}})
    assert tools == ["search_tools", "call_tool"]
    assert found.structured_content["results"][0]["server"] == "notes"
    assert log.read_text().splitlines() == ['write_note {"text": "one"}', 'write_note {"text": "two"}']
