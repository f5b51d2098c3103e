"""``toolscout serve`` in a project folder as the README sets it up for Claude Code: the project's
``.mcp.json`` runs ``toolscout serve --mcp-config .toolscout/servers.json`` (Claude Code approved
that line) and the servers live in ``.toolscout/servers.json``, which a ``git pull`` can edit.

The gateway is a real subprocess in the folder, driven by the real MCP client; the upstream
server is the recorder fixture, which writes ``{"event": "start"}`` to its log when it starts.
Each test asserts on that log: what ran, not only what the gateway said.
"""

from __future__ import annotations

import json
from pathlib import Path

from serve_helpers import fixture_entry, stdio_gateway, text_of

from toolscout.core.policy.trust import approve_folder, check_folder

CONFIG = ".toolscout/servers.json"
RECORD = {"name": "mcp__rec__record", "arguments": {"text": "hello"}}
HOW = f"run `toolscout --mcp-config {CONFIG}` in it once and answer its trust prompt, or pass --trust-project"


def project(tmp_path: Path, log: Path) -> Path:
    """The cloned repo: the gateway line in ``.mcp.json``, the recorder (logging to ``log``) in
    ``.toolscout/servers.json``."""
    root = tmp_path / "proj"
    (root / ".toolscout").mkdir(parents=True)
    (root / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "toolscout": {
                        "command": "toolscout",
                        "args": ["serve", "--expose", "dynamic", "--mcp-config", CONFIG],
                    }
                }
            }
        )
    )
    write_servers(root, log)
    return root


def write_servers(root: Path, log: Path) -> None:
    (root / CONFIG).write_text(json.dumps({"mcpServers": {"rec": fixture_entry("recorder", "rec", str(log))}}))


def events(log: Path) -> list[str]:
    return [json.loads(line)["event"] for line in log.read_text().splitlines()] if log.exists() else []


async def test_the_gateway_starts_no_unapproved_project_server_and_says_how_to_approve(tmp_path):
    """Before approval: no server from the file starts; a call, the catalog and a search say the
    folder is not approved and how to approve it (the client cannot answer a prompt), and so does
    stderr, once. After the approval the app records, the server starts and the call runs. After
    an edit of the file (a ``git pull``), nothing starts again until the folder is re-approved."""
    log, root = tmp_path / "rec.jsonl", tmp_path / "proj"
    project(tmp_path, log)
    args = ("--mcp-config", CONFIG, "--allowed-tools", "rec")
    async with stdio_gateway(tmp_path, *args, cwd=root) as client:
        called = await client.call_tool("call_tool", RECORD)
        catalog = json.loads((await client.read_resource("toolscout://catalog")).contents[0].text)
        found = await client.call_tool("search_tools", {"query": "record text"})
    assert called.is_error and "Server rec is not approved" in text_of(called), text_of(called)
    assert f"this folder's --mcp-config file {CONFIG} would run" in text_of(called) and HOW in text_of(called)
    row = next(s for s in catalog["servers"] if s["name"] == "rec")
    assert row["state"] == "not_approved" and HOW in row["error"], row
    notes = found.structured_content.get("notes", [])
    assert any("not approved this project folder" in n and "rec" in n and CONFIG in n for n in notes), notes
    stderr = (tmp_path / "gateway.stderr").read_text()
    assert stderr.count("is not trusted") == 1 and f"toolscout --mcp-config {CONFIG}" in stderr, stderr
    assert events(log) == []

    shown = check_folder(root, config_files=[root / CONFIG])  # what the app's prompt shows, approved
    approve_folder(root, mcp_hash=shown.mcp_hash, grants_hash=shown.grants_hash, configs=shown.configs)
    async with stdio_gateway(tmp_path, *args, cwd=root) as client:
        called = await client.call_tool("call_tool", RECORD)
    assert not called.is_error and text_of(called) == "recorded hello", text_of(called)
    assert events(log) == ["start", "call"]

    pulled = tmp_path / "pulled.jsonl"
    write_servers(root, pulled)  # a `git pull`: the same server now logs elsewhere (any new command)
    async with stdio_gateway(tmp_path, *args, cwd=root) as client:
        called = await client.call_tool("call_tool", RECORD)
    assert called.is_error and "not approved" in text_of(called) and HOW in text_of(called)
    stderr = (tmp_path / "gateway.stderr").read_text()
    assert f"({CONFIG}: rec changed: args changed)" in stderr, stderr
    assert events(pulled) == [] and events(log) == ["start", "call"]


async def test_a_file_outside_the_project_starts_as_before(tmp_path):
    """The person's own file (Claude Desktop's ``--mcp-config ~/.config/toolscout/servers.json``)
    is not the project's: it starts with no approval, in a folder that has none."""
    log, root = tmp_path / "rec.jsonl", tmp_path / "proj"
    root.mkdir()
    own = tmp_path / "my-servers.json"
    own.write_text(json.dumps({"mcpServers": {"rec": fixture_entry("recorder", "rec", str(log))}}))
    async with stdio_gateway(tmp_path, "--mcp-config", str(own), "--allowed-tools", "rec", cwd=root) as client:
        called = await client.call_tool("call_tool", RECORD)
    assert not called.is_error and text_of(called) == "recorded hello", text_of(called)
    assert events(log) == ["start", "call"]
    assert "not trusted" not in (tmp_path / "gateway.stderr").read_text()
