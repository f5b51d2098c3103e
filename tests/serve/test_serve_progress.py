"""Progress and cancellation through ``toolscout serve``: a client's ``tools/call`` carrying
``_meta.progressToken`` gets the upstream server's ``notifications/progress`` with *its* token,
and its ``notifications/cancelled`` for a call in flight reaches the upstream server. The
upstream is the stdio fixture ``slow.py``, which writes down the token it received and whether it
was cancelled; the clients are the real SDK client (stdio and streamable HTTP) and raw JSON-RPC
lines where the exact token and request id matter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from serve_helpers import (
    LEGACY_INIT,
    WAIT_S,
    RawStdio,
    fixture_entry,
    http_client,
    http_gateway,
    raw_stdio_gateway,
    stdio_gateway,
    text_of,
    write_config,
)

WORK = "mcp__slow__work"


def setup(tmp_path: Path, *extra: str) -> tuple[list[str], Path]:
    log = tmp_path / "slow.jsonl"
    cfg = write_config(tmp_path, {"slow": fixture_entry("slow", "slow", str(log))})
    return ["--mcp-config", str(cfg), "--allowed-tools", "mcp__slow", *extra], log


def received(log: Path) -> list[dict[str, Any]]:
    """What the upstream server wrote down, in order."""
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


async def until_logged(log: Path, event: str) -> None:
    """Wait (bounded) until the upstream wrote down ``event`` (another process: no event to wait on)."""
    with anyio.fail_after(WAIT_S):
        while not any(e["event"] == event for e in received(log)):
            await anyio.sleep(0.02)


class Reports:
    """A ``progress_callback`` recording each report."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))


async def started(raw: RawStdio) -> None:
    await raw.answer(await raw.request(LEGACY_INIT["method"], LEGACY_INIT["params"]))
    await raw.send({"method": "notifications/initialized"})


def progress_of(raw: RawStdio) -> list[dict[str, Any]]:
    return [n["params"] for n in raw.notifications if n["method"] == "notifications/progress"]


@pytest.mark.parametrize("transport", ["stdio", "stdio-2026", "http"])
async def test_the_sdk_client_gets_the_upstreams_progress(tmp_path: Path, transport: str) -> None:
    """The real client's ``progress_callback`` (``initialize`` over stdio and HTTP, and the
    2026-07-28 protocol over stdio, as Claude Code speaks it)."""
    args, log = setup(tmp_path)
    reports = Reports()
    call = {"name": WORK, "arguments": {"steps": 3, "message": "[red]step {i}[/] of {n}\x1b[2J"}}
    if transport.startswith("stdio"):
        async with stdio_gateway(tmp_path, *args, mode="auto" if transport == "stdio-2026" else "legacy") as client:
            assert (client.protocol_version == "2026-07-28") is (transport == "stdio-2026")
            result = await client.call_tool("call_tool", call, progress_callback=reports)
    else:
        async with http_gateway(tmp_path, *args) as gateway, http_client(gateway.url) as client:
            result = await client.call_tool("call_tool", call, progress_callback=reports)
    assert not result.is_error, text_of(result)
    assert text_of(result) == "worked 3 steps"
    # every report, in order, as the upstream sent it (its text untouched: the client shows it)
    assert reports.seen == [(float(i), 3.0, f"[red]step {i}[/] of 3\x1b[2J") for i in (1, 2, 3)]
    assert received(log)[0]["progress_token"] is not None  # the gateway asked the upstream for progress


async def test_progress_carries_the_clients_own_token_and_none_is_asked_without_one(tmp_path: Path) -> None:
    args, log = setup(tmp_path, "--expose", "dynamic")
    async with raw_stdio_gateway(tmp_path, *args) as raw:
        with anyio.fail_after(WAIT_S):
            await started(raw)
            plain = await raw.answer(
                await raw.request("tools/call", {"name": "call_tool", "arguments": {"name": WORK, "arguments": {}}})
            )
            assert not plain["result"]["isError"], plain
            assert progress_of(raw) == []  # the client asked for none
            # exposed by a search, the tool is called by its own name (dynamic exposure)
            await raw.answer(
                await raw.request("tools/call", {"name": "search_tools", "arguments": {"query": f"select:{WORK}"}})
            )
            meta = {"progressToken": "client-token-7"}
            done = await raw.answer(
                await raw.request(
                    "tools/call",
                    {"name": WORK, "arguments": {"steps": 2, "known_total": False}, "_meta": meta},
                )
            )
    assert not done["result"]["isError"], done
    assert progress_of(raw) == [
        {"progressToken": "client-token-7", "progress": 1.0, "message": "step 1 of 2"},
        {"progressToken": "client-token-7", "progress": 2.0, "message": "step 2 of 2"},
    ]
    first, _, second, _ = received(log)
    assert first == {"event": "call", "progress_token": None}  # no token, no progress asked upstream
    assert second["event"] == "call" and second["progress_token"] not in (None, "client-token-7")


async def test_a_clients_cancellation_reaches_the_upstream(tmp_path: Path) -> None:
    args, log = setup(tmp_path)
    hold = tmp_path / "never"
    async with raw_stdio_gateway(tmp_path, *args) as raw:
        with anyio.fail_after(WAIT_S):
            await started(raw)
            call = {"name": WORK, "arguments": {"steps": 1, "hold": str(hold)}}
            request = await raw.request(
                "tools/call", {"name": "call_tool", "arguments": call, "_meta": {"progressToken": 1}}
            )
            while not progress_of(raw):  # the call is running upstream
                await raw.receive()
            await raw.send(
                {"method": "notifications/cancelled", "params": {"requestId": request, "reason": "changed my mind"}}
            )
            await until_logged(log, "cancelled")
            # the gateway still answers (the cancelled request is not answered: MCP spec)
            listed = await raw.answer(await raw.request("tools/list"))
    assert [e["event"] for e in received(log)] == ["call", "cancelled"]
    assert request not in raw.answers and "result" in listed


async def test_the_sdk_clients_abandoned_call_is_cancelled_upstream(tmp_path: Path) -> None:
    """The real client abandoning a call (its task cancelled) sends ``notifications/cancelled``;
    the gateway passes it on and the gateway keeps serving the client."""
    args, log = setup(tmp_path)
    reports = Reports()
    call = {"name": WORK, "arguments": {"steps": 1, "hold": str(tmp_path / "never")}}
    async with stdio_gateway(tmp_path, *args) as client:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: client.call_tool("call_tool", call, progress_callback=reports))
                with anyio.fail_after(WAIT_S):
                    while not reports.seen:  # the call runs upstream
                        await anyio.sleep(0.02)
                scope.cancel()
        await until_logged(log, "cancelled")
        after = await client.call_tool("call_tool", {"name": WORK, "arguments": {"steps": 1}})
    assert text_of(after) == "worked 1 steps"
    assert [e["event"] for e in received(log)] == ["call", "cancelled", "call", "done"]
