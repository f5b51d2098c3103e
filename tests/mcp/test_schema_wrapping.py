"""Tools with non-object or combinator roots over a real stdio server: the model sees the
projected schema, arguments are validated against it, and the server gets the unwrapped value."""

from __future__ import annotations

import json

from mcp_helpers import allow, running, stdio

from toolscout.core.models import ToolErrorKind


async def test_wrapped_and_lifted_roots_reach_the_server_as_it_expects():
    async with running([stdio("odd", "odd_roots")]) as engine:  # schemas sent verbatim, read leniently
        union = engine.catalog.get("mcp__odd__union_root")
        assert union is not None and union.wrapped_arguments
        assert union.input_schema["required"] == ["value"]
        sent = await engine.call_tool("mcp__odd__union_root", {"value": {"a": 2}}, asker=allow)
        assert json.loads(sent.text())["arguments"] == {"a": 2}  # unwrapped before tools/call
        bad = await engine.call_tool("mcp__odd__union_root", {"a": 2}, asker=allow)
        assert bad.error_kind is ToolErrorKind.INVALID_PARAMS and "'value' is a required property" in bad.text()

        lifted = engine.catalog.get("mcp__odd__anyof_root")
        assert lifted is not None and not lifted.wrapped_arguments and "anyOf" not in lifted.input_schema
        ok = await engine.call_tool("mcp__odd__anyof_root", {"path": "/x"}, asker=allow)
        assert json.loads(ok.text())["arguments"] == {"path": "/x"}
        neither = await engine.call_tool("mcp__odd__anyof_root", {}, asker=allow)
        assert neither.error_kind is ToolErrorKind.INVALID_PARAMS  # the anyOf still holds

        number = await engine.call_tool("mcp__odd__number_root", {"value": 3}, asker=allow)
        assert number.error_kind is ToolErrorKind.INVALID_PARAMS and "can only carry an object" in number.text()
        assert "asks for an integer rather than an object" in number.text()  # JSON's word, not Python's int
        assert any("mcp__odd__number_root: inputSchema repaired" in w for w in engine.warnings)
