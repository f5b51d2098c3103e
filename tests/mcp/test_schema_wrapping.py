"""Tools with non-object or combinator roots over a real stdio server: the model sees the
projected schema, arguments are validated against it, and the server gets the unwrapped value."""

from __future__ import annotations

import json

from mcp_helpers import allow, fixture_module, running, stdio

from toolscout.core.models import ToolErrorKind, ToolSpec


def _odd_schemas(engine) -> None:
    """Register the server's tools with the odd schemas the fixture can send (what a lenient
    ``tools/list`` reading delivers; the SDK's strict reading refuses non-object roots)."""
    module = fixture_module("odd_roots")
    engine.apply_delta(engine.catalog.set_server_tools(
        "odd", [ToolSpec(name=n, input_schema=s) for n, s in module.SCHEMAS.items()]))


async def test_wrapped_and_lifted_roots_reach_the_server_as_it_expects():
    async with running([stdio("odd", "odd_roots", "--plain")]) as engine:
        _odd_schemas(engine)
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
        assert any("mcp__odd__number_root: inputSchema repaired" in w for w in engine.warnings)
