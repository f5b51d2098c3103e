"""What the catalog and the context report say while servers connect (issue 12 item 4).

Journey (full app): while a server connects, the catalog, the status bar and F4 say the mode is
being decided, with no partial totals, and a first request goes inline; once it connects, the
catalog settles and the next request switches to deferral, announced in the chat (the core's
events reaching several panels and the session). The context report's rows are a core test."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import tui_scenarios as sc
from warm_servers import server_args

from toolscout.core.mcp.config import ServerConfig
from toolscout.core.models import ServerState
from toolscout.tui.widgets.catalog import CatalogPanel

LATE = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "late.py"
SIZE = (140, 44)


def _engine(tmp_path: Path, settings: Any, *, tools: int = 3, props: int = 4) -> Any:
    from toolscout.core.builtins.registry import builtin_tools, core_tool_names
    from toolscout.core.engine.facade import Engine

    catalogs = tmp_path / "catalogs"
    catalogs.mkdir()
    for server in ("azure-all", "atlassian-jira", "azure", "atlassian"):
        (catalogs / f"{server}.json").write_text(
            json.dumps(
                {
                    "server": server,
                    "tools": [
                        {
                            "name": "get_item",
                            "description": f"Get an item from {server}.",
                            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
                        }
                    ],
                }
            )
        )
    late = ServerConfig(
        "late",
        "stdio",
        command=sys.executable,
        args=tuple(
            server_args(LATE, "late", "--tools", str(tools), "--props", str(props), "--gate", str(tmp_path / "gate"))
        ),
        source="test",
    )
    broken = ServerConfig("jira", command=sc.BROKEN_COMMAND, args=("--stdio",), source="test")
    return Engine(
        settings,
        catalog_paths=[catalogs],
        builtins=builtin_tools(),
        core_names=core_tool_names(),
        project_dir=tmp_path,
        mcp_servers=[late, broken],
    )


async def _until(pilot: Any, predicate: Any) -> None:
    import anyio

    with anyio.fail_after(15):
        while not predicate():
            await pilot.pause(0.02)


async def test_while_connecting_the_app_says_deciding_and_switches_to_deferral_once_connected(tmp_path) -> None:
    """Journey over a server that connects when the test opens its gate (``late``: ~5k tokens of
    schemas, over 10% of a 20k window once known) and one that fails (``jira``)."""
    from toolscout.core.session.session import Session
    from toolscout.tui.factory import make_app as build

    settings = sc.make_settings(**{"toolSearch.enabled": "auto", "provider.contextWindow": 20_000})
    engine = _engine(tmp_path, settings, tools=30, props=6)
    provider = sc.ScriptedProvider()
    session = Session(engine, settings=settings, provider=provider, persist=False)
    app = build(settings, engine, session)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.screen.query_one(CatalogPanel)
        await _until(
            pilot, lambda: panel.statuses.get("jira") is not None and panel.statuses["jira"].state is ServerState.FAILED
        )
        await sc.settle(pilot, servers=False)
        await pilot.press("f2")
        await pilot.pause()
        groups = [g for g, _ in panel.groups()]
        assert groups == ["built-in", "atlassian", "atlassian-jira", "azure", "azure-all", "jira", "late"]
        summary = str(app.screen.query_one("#catalog-summary").render())
        assert "deciding: 1 server connecting" in summary and "1 failed" in summary
        assert "deferral off" not in summary
        text = sc.screen_text(app)
        assert " 0 tok" not in text and "servers 4/6 · 1 connecting · 1 failed" in text
        report = engine.context_report().to_json()
        assert report["pending"] == ["late"] and "deciding" in report["mode"]["reason"]
        await pilot.press("f4")
        await sc.settle(pilot, servers=False)
        usage = " ".join(sc.screen_text(app).split())
        assert "deciding: 1 server connecting" in usage and "deferral off" not in usage

        await pilot.press("ctrl+l")
        await sc.type_text(pilot, "hello")
        await pilot.press("enter")
        await _until(pilot, lambda: len(provider.requests) == 1 and not app.screen.busy)
        assert session.mode_decision is not None and not session.mode_decision.defer
        assert "Tool search switched on" not in sc.screen_text(app)

        await pilot.press("f2")
        (tmp_path / "gate").touch()
        await sc.settle(pilot)
        await _until(pilot, lambda: panel.group_tokens(engine.catalog.server_tools("late")) is not None)
        summary = str(app.screen.query_one("#catalog-summary").render())
        assert "connecting" not in summary and "deciding" not in summary
        await pilot.press("ctrl+l")
        await sc.type_text(pilot, "again")
        await pilot.press("enter")
        await _until(pilot, lambda: len(provider.requests) == 2 and not app.screen.busy)
        await sc.settle(pilot)
        assert session.mode_decision.defer
        assert "ToolSearch" in [t["name"] for t in provider.requests[1].tools]
        assert "Tool search switched on" in " ".join(sc.screen_text(app).split())


async def test_context_json_has_a_row_for_every_server_with_its_state(tmp_path) -> None:
    import asyncio

    from toolscout.core.engine.events import ServerStateChanged

    engine = _engine(tmp_path, sc.make_settings(**{"toolSearch.enabled": "auto"}))
    failed = asyncio.Event()
    engine.subscribe(
        lambda e: (
            failed.set()
            if isinstance(e, ServerStateChanged) and e.status.name == "jira" and e.status.state is ServerState.FAILED
            else None
        )
    )
    await engine.start(warm_search=False)
    try:
        await asyncio.wait_for(failed.wait(), 15)
        rows = {r["server"]: r for r in engine.context_report().to_json()["servers"]}
        assert rows["jira"]["state"] == "failed" and "/nonexistent/jira-mcp" in rows["jira"]["reason"]
        assert rows["late"]["state"] == "connecting" and rows["late"]["tools"] == 0
        assert rows["atlassian"]["state"] == "connected" and rows["atlassian"]["reason"] is None
        order = [r["server"] for r in engine.context_report().to_json()["servers"]]
        assert order == [None, "atlassian", "atlassian-jira", "azure", "azure-all", "jira", "late"]
        from toolscout.cli.context_cmd import format_report

        text = format_report(engine.context_report())
        assert "\njira" in text and "failed: cannot start '/nonexistent/jira-mcp'" in text
        assert "\nlate" in text and " connecting" in text
    finally:
        (tmp_path / "gate").touch()
        await engine.stop()
