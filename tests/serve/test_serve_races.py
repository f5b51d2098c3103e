"""``toolscout serve`` when requests arrive before the gateway has caught up with its upstream
servers: a call right after a server crashed."""

from __future__ import annotations

from serve_helpers import fixture_entry, stdio_gateway, text_of, write_config

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
