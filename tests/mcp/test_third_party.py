"""The third-party reference server ``mcp-server-time`` (installed with toolscout), end to end:
connect, list, search, execute, validation error, tool error, disconnect."""

from __future__ import annotations

import sys

import pytest
from mcp_helpers import EventLog, allow, running

from toolscout.core.mcp.config import ServerConfig
from toolscout.core.models import ServerState, ToolErrorKind

pytest.importorskip("mcp_server_time")

TIME = ServerConfig(
    "time", command=sys.executable, args=("-m", "mcp_server_time", "--local-timezone", "UTC"), source="test"
)


async def test_mcp_server_time_end_to_end(events: EventLog):
    async with running([TIME], events) as engine:
        status = engine.pool.status("time")
        assert status.state is ServerState.CONNECTED and status.tool_count == 2
        names = sorted(t.name for t in engine.catalog.server_tools("time"))
        assert names == ["mcp__time__convert_time", "mcp__time__get_current_time"]
        tool = engine.tool("mcp__time__get_current_time")
        assert tool.read_only and tool.input_schema["required"] == ["timezone"]
        assert engine.catalog.is_deferred(tool)

        hits = engine.search_tools("convert a time between timezones").hits
        assert hits and hits[0].tool.name == "mcp__time__convert_time"

        # readOnlyHint is the server's claim, not a permission: headless still refuses
        refused = await engine.call_tool("mcp__time__get_current_time", {"timezone": "UTC"})
        assert refused.error_kind is ToolErrorKind.PERMISSION_DENIED

        now = await engine.call_tool("mcp__time__get_current_time", {"timezone": "UTC"}, asker=allow)
        assert not now.is_error and now.structured["timezone"] == "UTC" and "datetime" in now.structured

        converted = await engine.call_tool(
            "mcp__time__convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
            asker=allow,
        )
        source, target = converted.structured["source"], converted.structured["target"]
        assert not converted.is_error and source["datetime"].endswith("T12:00:00+00:00")
        # noon UTC is 21:00 the same day in Tokyo (before, the date was compared with itself)
        assert target["datetime"] == source["datetime"][:10] + "T21:00:00+09:00"
        assert converted.structured["time_difference"] == "+9.0h"

        invalid = await engine.call_tool("mcp__time__get_current_time", {"tz": "UTC"}, asker=allow)
        assert invalid.error_kind is ToolErrorKind.INVALID_PARAMS
        assert "'timezone' is a required property" in invalid.text() and "IANA timezone" in invalid.text()

        server_error = await engine.call_tool("mcp__time__get_current_time", {"timezone": "Mars/Olympus"}, asker=allow)
        assert server_error.is_error and server_error.error_kind is ToolErrorKind.TOOL_ERROR

        await engine.disconnect("time")
        assert engine.pool.status("time").state is ServerState.DISCONNECTED
        assert engine.catalog.server_tools("time") == []
        after = await engine.call_tool("mcp__time__get_current_time", {"timezone": "UTC"}, asker=allow)
        assert after.error_kind is ToolErrorKind.SERVER_FAILED and "disconnected" in after.text()
