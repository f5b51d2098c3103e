"""The gateway passes results through exact (issue 21 item 3 changes only what a *model* is given):
a summary text beside ``structuredContent`` reaches the MCP client as the server sent it, one text
block and the structured content, the data not copied into the text."""

from __future__ import annotations

from serve_helpers import fixture_entry, stdio_gateway, text_of, write_config

from fixtures.servers.ledger import issues


async def test_structured_content_passes_through_the_gateway_unchanged(tmp_path):
    cfg = write_config(tmp_path, {"ledger": fixture_entry("ledger", "ledger", str(tmp_path / "ledger.jsonl"))})
    async with stdio_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "ledger") as client:
        listed = await client.call_tool("call_tool", {"name": "mcp__ledger__list_issues", "arguments": {}})
    assert not listed.is_error
    assert [b.type for b in listed.content] == ["text"] and text_of(listed) == "listed 3 issues"
    assert listed.structured_content == {"issues": issues(3)}
