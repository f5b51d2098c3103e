"""Servers with hostile names, over real stdio: what each fixture server actually received.

Every server runs ``recorder.py``, which logs every call it gets to its own file; a permission
rule written for one server must never let a call through to another.
"""

from __future__ import annotations

import json
from pathlib import Path

from mcp_helpers import running, stdio

from toolscout.core.models import ToolErrorKind


def recorders(tmp_path: Path, *names: str):
    logs = {n: tmp_path / f"log-{i}.jsonl" for i, n in enumerate(names)}
    return [stdio(n, "recorder", n, str(logs[n])) for n in names], logs


def received(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def calls(log: Path) -> list[str]:
    return [e["text"] for e in received(log) if e["event"] == "call"]


async def test_an_allow_glob_for_time_lets_nothing_through_to_lookalike_servers(tmp_path):
    servers, logs = recorders(tmp_path, "time", "time__evil", "time ")
    async with running(servers, **{"permissions.allow": ["mcp__time__*"]}) as engine:
        names = {s.name for s in engine.server_statuses()}
        assert names == {"time", "time_evil", "time_2"}
        assert any("'time__evil'" in w and "'time_evil'" in w for w in engine.warnings)
        ok = await engine.call_tool("mcp__time__record", {"text": "to time"})
        assert not ok.is_error, ok.text()
        for name in ("mcp__time_evil__record", "mcp__time_2__record"):
            result = await engine.call_tool(name, {"text": "to a lookalike"})
            assert result.error_kind is ToolErrorKind.PERMISSION_DENIED, result.text()
    assert calls(logs["time"]) == ["to time"]
    assert calls(logs["time__evil"]) == [] and calls(logs["time "]) == []
    assert received(logs["time__evil"])  # it did start: the refusal was the rule, not a dead server


async def test_the_plain_name_goes_to_the_server_configured_with_it_whatever_the_order(tmp_path):
    for order in (("time ", "time"), ("time", "time ")):
        servers, logs = recorders(tmp_path / "-".join(order).replace(" ", "_"), *order)
        for log in logs.values():
            log.parent.mkdir(parents=True, exist_ok=True)
        async with running(servers, **{"permissions.allow": ["time"]}) as engine:
            result = await engine.call_tool("mcp__time__record", {"text": "plain"})
            assert not result.is_error, result.text()
            refused = await engine.call_tool("mcp__time_2__record", {"text": "alias"})
            assert refused.error_kind is ToolErrorKind.PERMISSION_DENIED
        assert calls(logs["time"]) == ["plain"] and calls(logs["time "]) == []


async def test_a_deny_by_either_spelling_stops_tools_and_resources(tmp_path):
    servers, logs = recorders(tmp_path, "my.srv")
    for rule in ("my_srv", "my.srv", "mcp__my_srv__*"):
        overrides = {"permissions.deny": [rule], "permissions.allow": ["mcp__my_srv__record"]}
        async with running(servers, **overrides) as engine:
            assert engine.server_statuses()[0].name == "my_srv"
            result = await engine.call_tool("mcp__my_srv__record", {"text": "denied"})
            assert result.error_kind is ToolErrorKind.DISABLED, (rule, result.text())
            assert not [t for t in engine.search_tools("record").hits if t.tool.server == "my_srv"]
            for spelling in ("my.srv", "my_srv"):
                read = await engine.call_tool("ReadMcpResource", {"server": spelling, "uri": "res://secret"})
                assert read.error_kind is ToolErrorKind.PERMISSION_DENIED, read.text()
            listing = await engine.call_tool("ListMcpResources", {})
            assert "res://secret" not in listing.text()
    assert [e for e in received(logs["my.srv"]) if e["event"] != "start"] == []


async def test_resources_of_an_allowed_server_still_read(tmp_path):
    servers, logs = recorders(tmp_path, "my.srv")
    async with running(servers, **{"permissions.deny": ["other"]}) as engine:
        read = await engine.call_tool("ReadMcpResource", {"server": "my.srv", "uri": "res://secret"})
        assert not read.is_error and "the secret" in read.text()
    assert [e["event"] for e in received(logs["my.srv"])] == ["start", "read"]


async def test_an_alias_for_a_colliding_tool_name_is_denied_with_the_real_tool(tmp_path):
    from mcp.server.mcpserver import MCPServer

    from toolscout.core.mcp.config import ServerConfig

    got: list[str] = []
    server = MCPServer("dup")

    @server.tool(name="rm.all", description="Remove everything.")
    def rm_dot() -> str:
        got.append("rm.all")
        return "gone"

    @server.tool(name="rm_all", description="Remove everything too.")
    def rm_underscore() -> str:
        got.append("rm_all")
        return "gone"

    async with running(
        [ServerConfig.memory("dup", server)], **{"permissions.allow": ["dup"], "permissions.deny": ["mcp__dup__rm_all"]}
    ) as engine:
        names = sorted(t.name for t in engine.catalog.tools(include_hidden=True) if t.server == "dup")
        assert names == ["mcp__dup__rm_all", "mcp__dup__rm_all_2"]  # the second spelling needs an alias
        assert not [t for t in engine.catalog.tools() if t.server == "dup"]  # both hidden from search
        for name in names:
            result = await engine.call_tool(name, {})
            assert result.error_kind is ToolErrorKind.DISABLED, result.text()
    assert got == []
