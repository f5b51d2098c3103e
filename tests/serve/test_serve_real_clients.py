"""``toolscout serve`` used from real MCP clients (installed from npm, pinned: node_clients.py):

- the official conformance suite's server scenarios, run once, against ``toolscout serve --http``
  in front of a reference server: every scenario that applies to a gateway passes (prompts,
  resources, templates, subscriptions and completion pass through); each one that does not is
  listed in :data:`NOT_APPLICABLE` with the reason (docs/gateway.md has the table);
- one Claude Code session (``claude -p`` against a loopback Messages API) with the gateway in
  front of ``mcp-server-time``: the request bodies Claude Code sent show the gateway's two tools
  inline (``anthropic/alwaysLoad`` honoured), the time tool's result reaching the API, and nothing
  else.

Skipped, with the reason, where node >= 22 is missing or npm cannot reach a registry.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from node_clients import NodeTools, install
from serve_helpers import REPO, TEST_RANKER, http_gateway, serve_command, time_entry, write_config

from fixtures.providers import FakeModelServer, Reply, ToolCall

#: Conformance server scenarios that apply to a gateway: they must pass.
APPLIES = {
    "server-initialize": "the handshake: the gateway's serverInfo and capabilities",
    "ping": "ping",
    "tools-list": "the served list (search_tools, call_tool) is valid",
    "resources-list": "the gateway's own resources and the upstream's (test://static-text ...)",
    "resources-read-text": "an upstream text resource read through the gateway by its URI",
    "resources-read-binary": "an upstream blob resource read through the gateway by its URI",
    "resources-templates-read": "a URI of an upstream resource template, routed by the template",
    "resources-subscribe": "resources/subscribe passed to the upstream that lists the URI",
    "resources-unsubscribe": "resources/unsubscribe passed to the upstream",
    "prompts-list": "upstream prompts, served as ref__<prompt>",
    "prompts-get-simple": "prompts/get by the upstream's own name (one server has it)",
    "prompts-get-with-args": "prompts/get with arguments, passed on as given",
    "prompts-get-embedded-resource": "a prompt whose messages embed a resource, passed on as sent",
    "prompts-get-with-image": "a prompt whose messages carry an image, passed on as sent",
    "completion-complete": "completion/complete routed to the server owning the prompt",
    "server-sse-multiple-streams": "streamable HTTP: several SSE streams on one session",
    "dns-rebinding-protection": "Host and Origin checks of the HTTP endpoint",
}
_RAW_NAME = (
    "calls an upstream tool by its raw name; the gateway serves search_tools + call_tool "
    "(the upstream tool is mcp__ref__<name>)"
)
_DEPRECATED = "deprecated by the 2026-07-28 revision (SEP-2577) and left out of the gateway"
#: Conformance server scenarios that do not apply to a gateway, and why (docs/gateway.md).
NOT_APPLICABLE = {
    "tools-call-simple-text": _RAW_NAME + "; it passes only because the check accepts the gateway's "
    "'Unknown tool' text",
    "tools-call-error": _RAW_NAME + "; it passes only because the gateway's 'Unknown tool' answer is an error too",
    "tools-call-image": _RAW_NAME,
    "tools-call-audio": _RAW_NAME,
    "tools-call-embedded-resource": _RAW_NAME,
    "tools-call-mixed-content": _RAW_NAME,
    "tools-call-with-progress": _RAW_NAME,
    "tools-call-elicitation": _RAW_NAME,
    "elicitation-sep1034-defaults": _RAW_NAME,
    "elicitation-sep1330-enums": _RAW_NAME,
    "server-sse-polling": _RAW_NAME + " (a pending scenario)",
    "json-schema-2020-12": "looks for the upstream tool in tools/list; the gateway lists two tools "
    "(search results carry the upstream schema as sent, $schema included)",
    "tools-call-sampling": _RAW_NAME + "; sampling is " + _DEPRECATED,
    "logging-set-level": "logging is " + _DEPRECATED + " (no logging capability)",
    "tools-call-with-logging": "logging is " + _DEPRECATED + "; " + _RAW_NAME,
}
#: Bound on one run of the conformance suite (~3-6 s) or of one Claude Code session (~5-25 s).
CLIENT_TIMEOUT_S = 300


@pytest.fixture(scope="session")
def node_tools() -> NodeTools:
    """The pinned npm packages (installed once per machine into the cache folder)."""
    return install()


def scenario_results(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """``conformance server -o FOLDER`` results: scenario → its checks (``status``, ``errorMessage``)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for entry in folder.iterdir():
        match = re.fullmatch(r"server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z", entry.name)
        if match and (entry / "checks.json").exists():
            found[match.group(1)] = json.loads((entry / "checks.json").read_text())
    return found


async def test_conformance_server_scenarios_through_the_gateway(tmp_path, node_tools):
    """The whole server suite (``--suite all``), once, against the gateway over streamable HTTP
    with the reference server as its stdio upstream ``ref``."""
    cfg = write_config(
        tmp_path, {"ref": {"command": str(node_tools.node), "args": [str(node_tools.ref_server), "--stdio"]}}
    )
    out = tmp_path / "conformance"
    async with http_gateway(tmp_path, "--mcp-config", str(cfg), "--allowed-tools", "ref") as gateway:
        with anyio.fail_after(CLIENT_TIMEOUT_S):
            run = await anyio.run_process(
                [str(node_tools.bin("conformance")), "server", "--url", gateway.url, "--suite", "all", "-o", str(out)],
                env=node_tools.env(),
                check=False,
            )
    results = scenario_results(out)
    log = (run.stdout + run.stderr).decode(errors="replace")[-3000:]
    assert set(results) == set(APPLIES) | set(NOT_APPLICABLE), (
        f"scenarios to classify: {sorted(set(results) ^ (set(APPLIES) | set(NOT_APPLICABLE)))}\n{log}"
    )
    failed = {name: [c.get("errorMessage") for c in results[name] if c["status"] != "SUCCESS"] for name in APPLIES}
    assert not any(failed.values()), failed
    assert all(results[name] for name in APPLIES)  # each ran at least one check


def _claude_env(server_url: str, tmp_path: Path, node_tools: NodeTools) -> dict[str, str]:
    """Claude Code's environment: the loopback API, tool search on, no calls home (each variable
    below stops one: telemetry, error reports, updates, feature flags, surveys), a fresh config dir."""
    quiet = (
        "DISABLE_TELEMETRY DISABLE_ERROR_REPORTING DISABLE_AUTOUPDATER DISABLE_UPDATES DISABLE_BUG_COMMAND "
        "DISABLE_FEEDBACK_COMMAND DISABLE_GROWTHBOOK DISABLE_INSTALLATION_CHECKS DISABLE_COST_WARNINGS "
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY "
        "CLAUDE_CODE_DISABLE_FEATURE_FLAGS CLAUDE_CODE_DISABLE_TERMINAL_TITLE CLAUDE_CODE_SKIP_PROMPT_HISTORY"
    )
    return node_tools.env(
        ANTHROPIC_BASE_URL=server_url,
        ANTHROPIC_API_KEY="loopback-key",
        IS_SANDBOX="1",
        ENABLE_TOOL_SEARCH="true",
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"),
        CLAUDE_CODE_ENABLE_TELEMETRY="0",
        **dict.fromkeys(quiet.split(), "1"),
    )


def scripted_model(body: dict[str, Any]) -> Reply:
    """The loopback model, by the number of assistant turns so far (a retried request gets the
    same answer): search, call the time tool, answer."""
    turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    if turn == 0:
        return Reply(tool_calls=[ToolCall("mcp__toolscout__search_tools", {"query": "current time in a timezone"})])
    if turn == 1:
        return Reply(
            tool_calls=[
                ToolCall(
                    "mcp__toolscout__call_tool",
                    {"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}},
                )
            ]
        )
    return Reply(text="LOOPBACK-FINAL: the time tool ran.")


def tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool_result block in a Messages request, in order."""
    found = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block.get("content")
                found.append(content if isinstance(content, str) else json.dumps(content))
    return found


def test_claude_code_sends_the_gateway_tools_inline_and_gets_the_time(tmp_path, node_tools):
    """One ``claude -p`` session, the gateway over stdio in front of ``mcp-server-time``."""
    servers = write_config(tmp_path, {"time": time_entry()})  # outside the project: the person's own file
    project = tmp_path / "project"
    project.mkdir()
    gateway = serve_command("--mcp-config", str(servers), "--allowed-tools", "time")
    mcp_config = tmp_path / "claude-mcp.json"
    mcp_config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "toolscout": {
                        "command": gateway[0],
                        "args": gateway[1:],
                        "env": {"PYTHONPATH": str(REPO / "src"), "TOOLSCOUT_RANKER": TEST_RANKER},
                    }
                }
            }
        )
    )
    with FakeModelServer([scripted_model] * 10) as api:
        done = subprocess.run(
            [
                str(node_tools.bin("claude")),
                "-p",
                "What time is it in UTC? Use the tools.",
                "--mcp-config",
                str(mcp_config),
                "--strict-mcp-config",
                "--dangerously-skip-permissions",
                "--output-format",
                "stream-json",
                "--verbose",
                "--no-session-persistence",
                "--debug-file",
                str(tmp_path / "claude.log"),
            ],
            cwd=project,
            env=_claude_env(api.url, tmp_path, node_tools),
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        requests, others = list(api.requests), list(api.others)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    result = next((e for e in events if e.get("type") == "result"), {})
    assert done.returncode == 0 and result.get("result") == "LOOPBACK-FINAL: the time tool ran.", (
        done.stderr[-3000:],
        done.stdout[-3000:],
    )
    # nothing else: three turns (no ToolSearch "select:" turn to load the gateway's tools), no side requests
    assert others == [] and [path for path, _ in requests] == ["/v1/messages?beta=true"] * 3
    for _, body in requests:
        sent = {t["name"]: t for t in body["tools"]}
        for name in ("mcp__toolscout__search_tools", "mcp__toolscout__call_tool"):
            assert name in sent and "defer_loading" not in sent[name], sorted(sent)  # inline, full schema
        assert sent["mcp__toolscout__search_tools"]["input_schema"]["required"] == ["query"]
    first = requests[0][1]
    assert "mcp__toolscout__" not in json.dumps([first.get("system"), first["messages"]])  # not listed as deferred
    found, ran = tool_results(requests[2][1])
    assert "mcp__time__get_current_time" in found
    now = json.loads(ran)
    assert now["timezone"] == "UTC" and re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$", now["datetime"]), ran
