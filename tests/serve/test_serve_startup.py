"""``toolscout serve`` as a real client meets it at start and at the end of a session: the
handshake and the first ``tools/list`` answer while every upstream server is still held before
its ``initialize`` (Claude Code gives a stdio server a few seconds), the 2026-07-28 discover result
declares ``tools.listChanged`` as ``initialize`` does and delivers it on the listen stream, and
SIGTERM / SIGINT end the gateway and its upstream servers (Claude Code sends SIGINT, SIGTERM and,
0.5 s after the first, SIGKILL)."""

from __future__ import annotations

import signal

import anyio
import mcp_types as types
import pytest
from serve_helpers import (
    LEGACY_INIT,
    WAIT_S,
    fixture_entry,
    process_gone,
    raw_stdio_gateway,
    stdio_gateway,
    write_config,
)

#: Upstream servers held before ``initialize`` in the start-up test.
HELD = 6


@pytest.mark.parametrize(
    ("handshake", "ranker"),
    [("initialize", "bm25f"), ("server/discover", None)],
    ids=["initialize-bm25f", "discover-default-ranker"],
)
async def test_handshake_and_first_list_answer_while_every_upstream_is_held(tmp_path, handshake, ranker):
    """Every upstream server blocks its start on a gate file the test opens only afterwards; the
    handshake (legacy ``initialize``, or the 2026-07-28 ``server/discover`` Claude Code sends) and
    ``tools/list`` must be answered meanwhile. With the default ranker profile nothing waits for
    the embedding model either: the held servers' tools are not even listed yet (and tool texts
    are not encoded while a server connects), so their vectors cannot be ready. The announcement
    names the servers as connecting; a search then waits for them and finds their tools."""
    gate = tmp_path / "open-gate"
    cfg = write_config(
        tmp_path,
        {f"held{i}": fixture_entry("late", f"held{i}", "--tools", "2", "--gate", str(gate)) for i in range(HELD)},
    )
    modern = handshake == "server/discover"
    async with raw_stdio_gateway(tmp_path, "--mcp-config", str(cfg), ranker=ranker) as raw:
        with anyio.fail_after(WAIT_S):
            if modern:
                first = await raw.answer(await raw.request("server/discover", modern=True))
            else:
                first = await raw.answer(await raw.request(LEGACY_INIT["method"], LEGACY_INIT["params"]))
                await raw.send({"method": "notifications/initialized"})
            listed = await raw.answer(await raw.request("tools/list", modern=modern))
            # answered while every upstream is held (not after their connect timeout failed them)
            assert not gate.exists()
            held = ", ".join(f"held{i}" for i in range(HELD))
            announced = listed["result"]["tools"][0]["description"]
            assert announced.endswith(f"Still connecting (search finds their tools once they are up): {held}")
            gate.write_text("go")
            found = await raw.answer(
                await raw.request(
                    "tools/call",
                    {"name": "search_tools", "arguments": {"query": "select:mcp__held0__op_0001,mcp__held5__op_0000"}},
                    modern=modern,
                )
            )
    assert first["result"]["capabilities"]["tools"]["listChanged"] is False  # static exposure: the list never changes
    tools = listed["result"]["tools"]
    assert [t["name"] for t in tools] == ["search_tools", "call_tool"]
    assert all(t["_meta"] == {"anthropic/alwaysLoad": True} for t in tools)
    assert [r["name"] for r in found["result"]["structuredContent"]["results"]] == [
        "mcp__held0__op_0001",
        "mcp__held5__op_0000",
    ]


async def test_2026_clients_are_told_of_exposed_tools_on_their_listen_stream(tmp_path):
    """``--expose dynamic`` over a 2026-07-28 stdio connection (Claude Code's): the discover result
    says ``tools.listChanged`` true, as ``initialize`` does, and a search that exposes tools sends
    ``tools/list_changed`` on the client's ``subscriptions/listen`` stream; the new tools are
    listed under ``server__tool`` (the client adds its own ``mcp__<gateway>__``)."""
    cfg = write_config(tmp_path, {"normal": fixture_entry("normal", "normal")})
    async with stdio_gateway(
        tmp_path, "--mcp-config", str(cfg), "--expose", "dynamic", "--allowed-tools", "normal", mode="auto"
    ) as client:
        assert client.session.server_capabilities.tools.list_changed is True
        async with client.listen(tools_list_changed=True) as events:
            await client.call_tool("search_tools", {"query": "select:mcp__normal__echo"})
            with anyio.fail_after(WAIT_S):
                event = await events.__anext__()
        listed = await client.list_tools()
        echo = await client.call_tool("normal__echo", {"text": "listed"})
    assert type(event).__name__ == "ToolsListChanged"
    assert [t.name for t in listed.tools] == ["search_tools", "call_tool", "normal__echo"]
    assert isinstance(echo, types.CallToolResult) and echo.content[0].text == "listed"


@pytest.mark.parametrize(
    "signals", [[signal.SIGTERM], [signal.SIGINT, signal.SIGTERM]], ids=["SIGTERM", "SIGINT-and-SIGTERM"]
)
async def test_signals_end_the_gateway_and_its_upstreams(tmp_path, signals):
    """The client keeps stdin open and signals (Claude Code: SIGINT, then SIGTERM 0.1 s later;
    here both at once, so either may be handled first): the gateway has stopped its upstream
    server by the time it exits, and exits with 128 + the number of the signal it took; the other
    signal does not kill it midway (that would be a death by signal, not an exit status)."""
    cfg = write_config(tmp_path, {"normal": fixture_entry("normal", "normal")})
    async with raw_stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "normal") as raw:
        with anyio.fail_after(WAIT_S):
            await raw.answer(await raw.request(LEGACY_INIT["method"], LEGACY_INIT["params"]))
            await raw.send({"method": "notifications/initialized"})
            ran = await raw.answer(
                await raw.request(
                    "tools/call", {"name": "call_tool", "arguments": {"name": "mcp__normal__pid", "arguments": {}}}
                )
            )
        pid = int(ran["result"]["content"][0]["text"])
        for number in signals:
            raw.proc.send_signal(number)
        with anyio.fail_after(20):  # the stop takes < 2 s; before the fix it never ended while stdin was open
            code = await raw.proc.wait()
        upstream_gone = process_gone(pid)
    assert code in {128 + number for number in signals}, (code, (tmp_path / "gateway.stderr").read_text())
    assert upstream_gone, "the gateway exited before stopping its upstream server"
