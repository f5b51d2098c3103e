"""A tool whose server runs it only as an MCP task (``execution.taskSupport: "required"``): the
``mcp`` SDK client toolscout uses sends no task-augmented calls, so the tool is shown as not
callable with the reason wherever it is found, and a call is refused before anything is sent
(issue 26 item 0: never offered and then refused by the server)."""

from __future__ import annotations

import json

from mcp_helpers import allow, memory, running

from toolscout.core.models import TASK_REQUIRED_REASON, ToolErrorKind
from toolscout.core.search.render import render_for_model


async def test_a_task_required_tool_is_marked_in_search_and_refused_unsent(tmp_path):
    log = tmp_path / "lib.jsonl"
    async with running([memory("lib", "library", log=str(log))]) as engine:
        found = engine.search_tools("select:mcp__lib__long_job,mcp__lib__typed")
        text = render_for_model(found, engine.catalog)
        refused = await engine.call_tool("mcp__lib__long_job", {}, asker=allow)
        ran = await engine.call_tool("mcp__lib__typed", {"n": 2}, asker=allow)
    assert f"Not callable: mcp__lib__long_job: {TASK_REQUIRED_REASON}." in text
    assert "Not callable: mcp__lib__typed" not in text
    assert refused.is_error and refused.error_kind is ToolErrorKind.TOOL_ERROR
    assert TASK_REQUIRED_REASON in refused.text()
    assert not ran.is_error and ran.structured == {"double": 4}
    assert [json.loads(line)["name"] for line in log.read_text().splitlines()] == ["typed"]  # long_job never sent
