"""Tool names over a real stdio server: an empty-looking name is shown under a placeholder and
called by its real name; ExecuteTool accepts the forms a model writes."""

from __future__ import annotations

import json

from mcp_helpers import allow, running, stdio

from toolscout.core.names import mcp_tool_name


async def test_nameless_tools_are_called_by_their_real_name():
    async with running([stdio("odd-server", "odd_roots", "--plain")]) as engine:
        placeholder = mcp_tool_name("odd-server", "")
        assert placeholder.startswith("mcp__odd-server__unnamed_")
        shown = [t.name for t in engine.catalog.server_tools("odd-server")]
        assert placeholder in shown and mcp_tool_name("odd-server", "???") in shown
        result = await engine.call_tool(placeholder, {}, asker=allow)
        assert json.loads(result.text())["tool"] == ""  # what the server received
        marks = await engine.call_tool(f"`{mcp_tool_name('odd-server', '???')}`", {}, asker=allow)
        assert json.loads(marks.text())["tool"] == "???"
        loose = await engine.call_tool('"mcp__odd_server__anyof_root"', {"id": "1"}, asker=allow)
        assert json.loads(loose.text()) == {"tool": "anyof_root", "arguments": {"id": "1"}}
