"""``toolscout serve`` when requests arrive before the gateway has caught up with its upstream
servers: a call right after a server crashed, a search sent behind a pending ``tools/list``."""

from __future__ import annotations

import json
from typing import Any

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream
from serve_helpers import (
    WAIT_S,
    client_dir,
    fixture_entry,
    serve_command,
    serve_env,
    stdio_gateway,
    text_of,
    write_config,
)

ROUNDS = 5


async def test_a_call_right_after_a_crash_reconnects_and_runs(tmp_path):
    """No pause between the crash and the next call: the gateway has not yet processed the
    disconnect when the call arrives, and must still reconnect the server, not refuse."""
    cfg = write_config(tmp_path, {"mine": fixture_entry("mortal", "mine")})
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "mine") as client:
        for n in range(ROUNDS):
            died = await client.call_tool("call_tool", {"name": "mcp__mine__die", "arguments": {}})
            echo = await client.call_tool("call_tool", {"name": "mcp__mine__echo", "arguments": {"text": f"z{n}"}})
            assert died.is_error and "closed the connection during mcp__mine__die" in text_of(died)
            assert not echo.is_error, f"round {n}: {text_of(echo)}"
            assert text_of(echo) == f"z{n}"


def rpc(message: dict[str, Any]) -> bytes:
    """One JSON-RPC message as the stdio transport frames it (a line)."""
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


async def test_a_search_behind_a_pending_tools_list_waits_for_connecting_servers(tmp_path):
    """Raw JSON-RPC (the SDK client waits for each answer it needs): ``tools/list`` and then at
    once ``search_tools``, while the only server is held before ``initialize`` by its gate. The
    list answers at once (naming the server as still connecting); the search waits for the
    server, never answering "No good match" for a server whose tools are not in yet."""
    gate = tmp_path / "open-gate"
    cfg = write_config(tmp_path, {"late": fixture_entry("late", "late", "--tools", "3", "--gate", str(gate))})
    init = {
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    search = {"query": "operation records"}
    answers: dict[int, Any] = {}
    with (tmp_path / "gateway.stderr").open("w") as errlog:
        async with await anyio.open_process(
            serve_command("--mcp-config", str(cfg)), env=serve_env(), cwd=client_dir(tmp_path), stderr=errlog
        ) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            lines = BufferedByteReceiveStream(proc.stdout)

            async def answer() -> None:
                message = json.loads(await lines.receive_until(b"\n", 1 << 24))
                if "id" in message:
                    answers[message["id"]] = message

            with anyio.fail_after(WAIT_S):
                await proc.stdin.send(rpc(init))
                await answer()
                await proc.stdin.send(
                    rpc({"method": "notifications/initialized"})
                    + rpc({"id": 2, "method": "tools/list"})
                    + rpc({"id": 3, "method": "tools/call", "params": {"name": "search_tools", "arguments": search}})
                )
                while 2 not in answers:
                    await answer()
                listed_while_held = set(answers)
                gate.write_text("go")  # the server connects now
                while 3 not in answers:
                    await answer()
                await proc.stdin.aclose()
                await proc.wait()
    assert listed_while_held == {1, 2}  # the search waited, the list did not
    found = answers[3]["result"]["structuredContent"]
    notes = " ".join(found.get("notes", []))
    assert "No good match" not in notes, found
    # it waited for the server: its tools are in (the wait is 60 s in the tests)
    assert {r["name"] for r in found["results"]} >= {"mcp__late__op_0000", "mcp__late__op_0001"}, found
    assert "pending_servers" not in found
    assert [t["name"] for t in answers[2]["result"]["tools"]] == ["search_tools", "call_tool"]
    assert answers[2]["result"]["tools"][0]["description"].endswith(
        "Still connecting (search finds their tools once they are up): late"
    )


async def test_a_search_that_cannot_wait_says_servers_are_still_connecting(tmp_path):
    """With no wait (``--wait-servers 0``) a search that finds nothing while a server is held
    before ``initialize`` names it as still connecting, never "No good match"."""
    gate = tmp_path / "open-gate"
    cfg = write_config(tmp_path, {"late": fixture_entry("late", "late", "--tools", "3", "--gate", str(gate))})
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--wait-servers", "0") as client:
        result = await client.call_tool("search_tools", {"query": "operation records"})
        gate.write_text("go")
    found = result.structured_content
    notes = " ".join(found.get("notes", []))
    assert not found["results"] and found["pending_servers"] == ["late"]
    assert "still connecting: late" in notes and "search again" in notes, found
    assert "No good match" not in notes, found
