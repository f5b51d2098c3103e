"""The deferred-tool announcement within its token budget (issue 22 item 4).

Over ``toolSearch.announceBudget`` the largest servers are announced as one line each (prefix,
tool count, what they work on); their tools are found by search, ``select:`` by bare name and the
self-healing gate keep working for names the model was never shown, and a later turn never
re-announces them. Assertions are on what the loopback model API and the fixture MCP server got.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from session_helpers import provider_for, user_texts

from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.warm_servers import server_args
from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.catalog.loaders import load_catalog
from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.engine.facade import Engine
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.serialize import announcement_groups, budgeted_groups, parse_announcement_line
from toolscout.core.session.reminders import FULL_TAG, rebuild_state
from toolscout.core.session.session import Session
from toolscout.core.settings.layers import Settings
from toolscout.core.tokens import default_counter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LATE = FIXTURES / "servers" / "late.py"
CATALOGS = FIXTURES / "readme_catalogs"


def _readme_catalog() -> ToolCatalog:
    cat = ToolCatalog()
    for group in load_catalog(CATALOGS).servers:
        if group.name:
            cat.set_server_tools(group.name, group.tools, group.instructions)
    return cat


def test_within_the_budget_the_lines_are_exactly_the_compact_names() -> None:
    tools = _readme_catalog().tools()
    assert budgeted_groups(tools, 10**9, default_counter().count) == announcement_groups(tools)


@pytest.mark.parametrize("budget", [0, 150, 300, 450])
def test_over_the_budget_large_servers_become_one_parseable_line_each(budget: int) -> None:
    cat = _readme_catalog()
    tools = cat.tools()
    count = default_counter().count
    lines = budgeted_groups(tools, budget, count)
    summaries = [line for line in lines if "__* (" in line]
    assert summaries, "the readme catalogs (232 tools) do not fit these budgets"
    summary_cost = sum(count(line) for line in summaries)
    # Within the budget, unless the summaries alone pass it (then only summaries and built-ins).
    assert count("\n".join(lines)) <= max(budget, summary_cost + 60)
    announced = [n for line in lines for n in parse_announcement_line(line)]
    wildcards = [n for n in announced if n.endswith("__*")]
    assert len(wildcards) == len(summaries)
    # Every tool is covered: by its name or by its server's wildcard, never twice.
    for tool in tools:
        hits = [n for n in announced if n == tool.name or (n.endswith("__*") and tool.name.startswith(n[:-1]))]
        assert len(hits) == 1, tool.name
    for line in summaries:  # "mcp__github__* (26 tools): issue, pull, ..."
        prefix, rest = line.split("* (", 1)
        assert int(rest.split(" ", 1)[0]) == sum(1 for t in tools if t.name.startswith(prefix))


def _engine(tmp_path: Path, budget: int, strategy: str) -> Engine:
    settings = Settings().with_overrides(
        {
            "toolSearch.enabled": "true",
            "toolSearch.announceBudget": budget,
            "session.strategy": strategy,
            "permissions.allow": ["mcp__big__*", "mcp__small__*"],
        },
        "test",
    )
    servers = [
        ServerConfig(
            name,
            "stdio",
            command=sys.executable,
            args=tuple(server_args(LATE, name, "--tools", str(n), "--props", "1")),
            source="test",
        )
        for name, n in (("big", 60), ("small", 2))
    ]
    return Engine(
        settings, builtins=builtin_tools(), core_names=core_tool_names(), project_dir=tmp_path, mcp_servers=servers
    )


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("strategy", ["execute-proxy", "stub"])
async def test_a_summarised_servers_tool_is_found_selected_and_run(
    tmp_path: Path, provider: str, strategy: str
) -> None:
    engine = _engine(tmp_path, budget=60, strategy=strategy)
    await engine.start()
    try:
        assert await engine.wait_for_servers(30)
        call = (
            ToolCall("mcp__big__op_0042", {"field_0": "x"})
            if strategy == "stub"
            else ToolCall("ExecuteTool", {"tool_name": "op_0042", "params": {"field_0": "x"}})
        )
        script = [
            Reply(tool_calls=[ToolCall("ToolSearch", {"query": "select:op_0042"})]),
            Reply(tool_calls=[call]),
            Reply(text="done"),
            Reply(text="again"),
        ]
        with FakeModelServer(script) as server:
            session = Session(engine, provider=provider_for(provider, server.url), persist=False, strategy=strategy)
            assert (await session.send("run op 42 on the big server")).text == "done"
            assert (await session.send("once more")).text == "again"
            bodies = server.bodies
        first = "\n".join(user_texts(bodies[0])) if provider == "anthropic" else str(bodies[0]["messages"])
        if strategy == "execute-proxy":
            assert "mcp__big__* (60 tools)" in first and "op_0042" not in first
            assert "mcp__small__: op_0000 op_0001" in first
        # The fixture server ran the call (its result text names the tool it ran).
        results = str(bodies[2]["messages"])
        assert "ran op_0042" in results
        # The second turn's user message announces nothing again.
        last_user = str(bodies[3]["messages"][-1])
        assert "deferred-tools-added" not in last_user and FULL_TAG not in last_user
    finally:
        await engine.stop()


async def test_history_counts_a_summary_line_as_every_tool_of_its_server() -> None:
    text = f"<{FULL_TAG}>\nmcp__big__* (60 tools): op\nmcp__small__: op_0000 op_0001\n</{FULL_TAG}>"
    state = rebuild_state([{"role": "user", "content": [{"type": "text", "text": text}]}])
    assert state.covers("mcp__big__op_0059") and state.covers("mcp__small__op_0001")
    assert not state.covers("mcp__bigger__op_0001") and not state.covers("mcp__small__op_0002")
    assert state.gone({"mcp__small__op_0000"}) == ["mcp__big__*", "mcp__small__op_0001"]
