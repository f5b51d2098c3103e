"""Lenient ``tools/list`` and a guarded read stream, against a raw JSON-RPC stdio server that
sends what the SDK would refuse to: each bad tool is dropped alone with a warning naming server,
tool and reason; repeated listings are one tool; stray output is one warning; a broken answer
fails at its stage, not as a timeout."""

from __future__ import annotations

import json
import logging
import sys

import anyio
import pytest
from mcp_helpers import EventLog, allow, running, server_args, server_path

from toolscout.cli import run
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.mcp.listing import MAX_SCHEMA_DEPTH, check_tool
from toolscout.core.mcp.wire import recover
from toolscout.core.models import ServerState

GITLAB = [
    "create_or_update_file",
    "search_repositories",
    "create_repository",
    "get_file_contents",
    "push_files",
    "create_issue",
    "create_merge_request",
    "fork_repository",
    "create_branch",
]


def raw(name: str, mode: str | None = None) -> ServerConfig:
    return ServerConfig(
        name,
        "stdio",
        command=sys.executable,
        args=tuple(server_args(server_path("raw_jsonrpc"), mode or name)),
        source="test",
    )


def nested(depth: int) -> dict:
    schema: dict = {}
    for _ in range(depth - 1):
        schema = {"items": schema}
    return schema


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"name": "a"}, "no inputSchema"),
        ({"name": "a", "inputSchema": "object"}, "inputSchema is str, not an object"),
        ({"name": "a", "inputSchema": [1]}, "inputSchema is list, not an object"),
        ({"name": 7, "inputSchema": {}}, "name is int, not a string"),
        ("tool", "not an object (str)"),
        ({"name": "a", "inputSchema": nested(MAX_SCHEMA_DEPTH + 1)}, f"nested {MAX_SCHEMA_DEPTH + 1} deep"),
        ({"name": "a", "description": "x\ud800y", "inputSchema": {}}, "lone surrogate in the text 'x\\\\ud800y'"),
        ({"name": "a\udfff", "inputSchema": {}}, "lone surrogate"),
        ({"name": "a", "inputSchema": {"properties": {"\ud800": {}}}}, "lone surrogate"),
    ],
)
def test_unusable_tools_are_dropped_with_the_reason(entry, reason):
    tool, why = check_tool(entry)
    assert tool is None and reason in why


def test_usable_tools_are_kept_as_sent():
    gitlab = {
        "name": "create_issue",
        "description": "GitLab",
        "annotations": None,
        "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#"},
    }
    tool, why = check_tool(gitlab)
    assert why == "" and tool.name == "create_issue" and tool.input_schema == gitlab["inputSchema"]
    deep_enough, _ = check_tool({"name": "d", "inputSchema": nested(MAX_SCHEMA_DEPTH), "description": 5})
    assert deep_enough is not None and deep_enough.description == ""
    number_root, _ = check_tool({"name": "n", "inputSchema": {"type": "number"}})
    assert number_root is not None  # the catalog's projection wraps it


async def test_one_bad_tool_never_takes_its_neighbours(events: EventLog):
    async with running([raw("messy")], events, **{"mcp.timeout": 20}) as engine:
        status = engine.pool.status("messy")
        assert status.state is ServerState.CONNECTED, status.error
        names = [t.bare_name for t in engine.catalog.server_tools("messy")]
        # the 9 GitLab tools with no root type, the good tool once, and page 2's new tool
        assert sorted(names) == sorted([*GITLAB, "good_tool", "late_tool"])
        assert status.tool_count == 11 and not any(n.endswith("_2") for n in names)
        warnings = engine.source_warnings["messy"]
        for line in [
            "tool 'no_schema' dropped: no inputSchema",
            "tool 'string_schema' dropped: inputSchema is str, not an object",
            "tool 'deep_schema' dropped: inputSchema nested 299 deep (limit 64)",
            "tool 'surrogate_tool' dropped: a lone surrogate in the text 'Broken \\\\ud800 text.'",
            "tool tools[14] dropped: name is int, not a string",
            "tool tools[15] dropped: not an object (str)",
            "tool 'good_tool' dropped: listed again; the first listing is kept",
        ]:
            assert line in warnings
        repaired = [w for w in warnings if "inputSchema repaired" in w and 'type "object" assumed' in w]
        assert len(repaired) == 9
        good = engine.tool("mcp__messy__good_tool")
        assert good.description == "A well-formed tool."  # the first listing, not page 2's
        # a repaired GitLab tool is called with its real name, and the call reaches the server
        result = await engine.call_tool("mcp__messy__create_issue", {"title": "t"}, asker=allow)
        assert not result.is_error, result.text()
        assert json.loads(result.text()) == {"tool": "create_issue", "arguments": {"title": "t"}}
        # the call made the server announce list_changed: the re-list warns about nothing new
        connection = engine.pool.connection("messy")
        with anyio.fail_after(20):
            while connection.relists < 1:
                await anyio.sleep(0.02)
        assert sum("'no_schema' dropped" in w for w in engine.warnings) == 1
        assert len(engine.catalog.server_tools("messy")) == 11


async def test_repeating_pages_are_bounded_and_listed_once(events: EventLog):
    servers = [raw("same", "cursor_forever"), raw("fresh", "fresh_cursor_forever")]
    async with running(servers, events, **{"mcp.timeout": 20}) as engine:
        for name, why in (("same", "repeated cursor 'again'"), ("fresh", "a page of repeated tools")):
            assert [t.bare_name for t in engine.catalog.server_tools(name)] == ["only_tool"]
            assert (
                f"tools/list stopped after 2 pages ({why}); kept the 1 tools read so far"
                in engine.source_warnings[name]
            )


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_stray_output_is_one_warning_not_a_traceback_per_line(events: EventLog):
    sdk_log = logging.getLogger("mcp.client.stdio")
    records = _Records()
    sdk_log.addHandler(records)
    try:
        async with running([raw("banner"), raw("flood")], events, **{"mcp.timeout": 20}) as engine:
            assert engine.pool.status("banner").state is ServerState.CONNECTED
            assert engine.pool.status("flood").state is ServerState.CONNECTED
            guard = engine.pool.connection("flood").guard
            with anyio.fail_after(30):  # the flood goes on; wait until thousands of lines went by
                while guard.noise_lines < 3000:
                    await anyio.sleep(0.01)
            assert engine.source_warnings["banner"] == [
                "wrote output that is not MCP (JSON-RPC) during initialize, ignored from now on; "
                "first line: 'Starting raw server v1.0'"
            ]
            flood = engine.source_warnings["flood"]
            assert len(flood) == 1 and "first line: 'debug: loop iteration 1 (not JSON)'" in flood[0]
            assert sum(w.startswith("flood:") for w in engine.warnings) == 1
            assert engine.pool.connection("banner").guard.noise_lines == 3
    finally:
        sdk_log.removeHandler(records)
    assert not [r for r in records.records if r.levelno >= logging.WARNING]


async def test_an_unreadable_answer_fails_at_its_stage_at_once(events: EventLog):
    servers = [raw("torn", "unreadable"), raw("deep", "deep3000")]
    async with running(servers, events, **{"mcp.timeout": 60}) as engine:
        torn, deep = engine.pool.status("torn"), engine.pool.status("deep")
    assert torn.state is ServerState.FAILED and deep.state is ServerState.FAILED
    assert torn.error.startswith("the server's answer could not be read (Unterminated string")
    assert torn.error.endswith("during tools/list")
    assert deep.error == "the server's answer could not be read (JSON nested too deep to read) during tools/list"


async def test_a_timeout_names_the_stage_and_the_stray_output(events: EventLog):
    """The server prints its banner at once and never answers. The timeout leaves it time to
    start and print under load (at 2 s, it had not printed yet in one run of two suites at once,
    load average 8-12)."""
    async with running([raw("noisy", "noise_only")], events, **{"mcp.timeout": 6}) as engine:
        status = engine.pool.status("noisy")
    assert status.state is ServerState.FAILED
    assert status.error.startswith(
        "no answer to initialize within 6 s; it wrote non-MCP output instead, first line: 'Starting raw server v1.0'"
    )


def test_mcp_list_shows_each_servers_warnings(tmp_path, capsys, outside_cwd):
    cfg = tmp_path / "servers.json"
    cfg.write_text(
        json.dumps(
            {"mcpServers": {"messy": {"command": sys.executable, "args": [server_path("raw_jsonrpc"), "messy"]}}}
        )
    )
    assert run(["mcp", "list", "--json", "--no-default-servers", "--mcp-config", str(cfg)]) == 0
    payload = json.loads(capsys.readouterr().out)
    row = payload["servers"][0]
    assert row["tool_count"] == 11 and row["state"] == "connected"
    assert "tool 'no_schema' dropped: no inputSchema" in row["warnings"]
    assert "messy: tool 'no_schema' dropped: no inputSchema" in payload["warnings"]

    assert run(["mcp", "list", "--no-default-servers", "--mcp-config", str(cfg)]) == 0
    out = capsys.readouterr()
    assert "~ tool 'deep_schema' dropped: inputSchema nested 299 deep (limit 64)" in out.out
    assert "no_schema" not in out.err  # shown under its server, not repeated


def test_recover_reads_what_the_strict_parser_refused():
    result = recover('{"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "a\\ud800b"}]}}')
    assert result.message.result == {"content": [{"type": "text", "text": "a\ufffdb"}]}  # printable
    listing = recover('{"jsonrpc": "2.0", "id": 4, "result": {"tools": [{"name": "t\\ud800"}]}}')
    assert listing.message.result == {"tools": [{"name": "t\ud800"}]}  # kept for the per-tool check
    torn = recover('{"jsonrpc": "2.0", "id": "r-7", "result": {"tools": [')
    assert torn.message.id == "r-7" and "could not be read" in torn.message.error.message
    assert recover("Listening on port 3000") is None and recover('{"log": "not json-rpc"}') is None
