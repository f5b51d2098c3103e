"""Issue 21 item 3: a tool result reaches the model whole. ``structuredContent`` the text blocks do
not carry (text "listed 3 issues" beside ``{"issues": [...]}``) is given to the model too, capped
like any result; when the text already is that data (the SDK's JSON of its structured output) it
is not repeated. Asserted on the ``tool_result`` the loopback provider received from a session
over the ``ledger`` fixture server (stdio), and on what the person sees offline.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from session_helpers import provider_for

from fixtures.inline_matrix import ledger_config, sent_results
from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.servers.ledger import issues
from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.facade import Engine
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.session.providers import OfflineProvider
from toolscout.core.session.session import Session
from toolscout.core.settings.layers import Settings

HEADING = "[structured content]"


def _engine(tmp_path: Path, **settings: object) -> Engine:
    entry = ledger_config(tmp_path / "ledger.jsonl")
    config = ServerConfig("ledger", "stdio", command=entry["command"], args=tuple(entry["args"]))
    values = {"toolSearch.enabled": "false", "permissions.allow": ["mcp__ledger__*"], **settings}
    return Engine(
        Settings().with_overrides(values),
        builtins=builtin_tools(),
        core_names=core_tool_names(),
        project_dir=tmp_path,
        mcp_servers=[config],
    )


def _structured_part(result: str) -> object:
    """The JSON after the ``[structured content]`` line of a result."""
    _, _, data = result.partition(f"\n{HEADING}\n")
    assert data, result
    return json.loads(data)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_structured_content_beside_a_summary_reaches_the_model_once(tmp_path: Path, provider: str) -> None:
    engine = _engine(tmp_path)
    script = [
        Reply(
            tool_calls=[
                ToolCall("mcp__ledger__list_issues", {}),
                ToolCall("mcp__ledger__issue_count", {}),
                ToolCall("mcp__ledger__titles", {}),
            ]
        ),
        Reply(text="done"),
    ]
    await engine.start()
    try:
        assert await engine.wait_for_servers(20)
        with FakeModelServer(script) as server:
            session = Session(engine, provider=provider_for(provider, server.url), persist=False)
            assert (await session.send("how many issues?")).text == "done"
            listed, counted, titled = sent_results(server.bodies[1])
    finally:
        await engine.stop()
    # The summary, then the data only the structured content had.
    assert listed.startswith("listed 3 issues\n") and _structured_part(listed) == {"issues": issues(3)}
    # The SDK's structured output: its text is the JSON of the structured content, given once.
    assert HEADING not in counted and json.loads(counted) == {"open": 3, "closed": 41}
    assert titled == "\n".join(i["title"] for i in issues(3))  # a list: one block per item, not repeated


async def test_a_long_structured_result_is_capped_like_any_result(tmp_path: Path) -> None:
    """Over ``tools.maxResultTokens`` the structured part is cut with the rest, and the whole
    (summary and data) is kept on disk, where the note says."""
    engine = _engine(tmp_path, **{"tools.maxResultTokens": 1000})
    script = [Reply(tool_calls=[ToolCall("mcp__ledger__list_issues", {"count": 400})]), Reply(text="done")]
    await engine.start()
    try:
        assert await engine.wait_for_servers(20)
        with FakeModelServer(script) as server:
            session = Session(engine, provider=provider_for("anthropic", server.url), persist=False)
            assert (await session.send("list them all")).text == "done"
            (result,) = sent_results(server.bodies[1])
    finally:
        await engine.stop()
    assert result.startswith(f"listed 400 issues\n{HEADING}\n") and "output truncated to about 1,000 tokens" in result
    assert "Issue number 400 " not in result  # the tail is not sent ...
    saved = Path(re.search(r"saved at (\S+)\. ", result).group(1))
    assert _structured_part(saved.read_text(encoding="utf-8")) == {"issues": issues(400)}  # ... it is on disk


async def test_offline_the_person_sees_the_structured_content_too(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    await engine.start()
    try:
        assert await engine.wait_for_servers(20)
        session = Session(engine, provider=OfflineProvider(), persist=False)
        result = await session.run_tool("mcp__ledger__list_issues", {})
        recorded = session.messages[-1]["content"][0]["content"]  # the transcript's tool_result
    finally:
        await engine.stop()
    assert result.text() == recorded
    assert _structured_part(recorded) == {"issues": issues(3)}
