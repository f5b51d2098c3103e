"""The engine's read side (``core/engine/queries.py``): what the CLI, the session and the UI ask the
engine instead of reaching into its catalog, search index or server pool (issue 13 item 1)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.facade import Engine
from toolscout.core.mcp.server_config import ServerConfig
from toolscout.core.settings.layers import Settings

TOOLS = [
    {
        "name": "create_issue",
        "description": "Create a new issue in a GitHub repository.",
        "inputSchema": {"type": "object", "properties": {"repo": {"type": "string"}}},
    },
    {
        "name": "merge_pull_request",
        "description": "Merge a pull request.",
        "inputSchema": {"type": "object", "properties": {"number": {"type": "integer"}}},
    },
]


def _engine(tmp_path: Path, *servers: ServerConfig, **settings: object) -> Engine:
    catalog = tmp_path / "github.json"
    catalog.write_text(
        json.dumps({"server": "github", "instructions": "Use owner/repo form for repositories.", "tools": TOOLS})
    )
    engine = Engine(
        Settings().with_overrides({"toolSearch.ranker": "bm25f", **settings}),
        builtins=builtin_tools(),
        core_names=core_tool_names(),
        project_dir=tmp_path,
        mcp_servers=list(servers),
    )
    engine.load_catalog_file(catalog)
    return engine


def test_tools_states_and_instructions_come_from_the_engine(tmp_path: Path) -> None:
    engine = _engine(tmp_path, **{"toolSearch.alwaysLoad": ["mcp__github__create_issue"]})
    names = [t.name for t in engine.tools()]
    assert "Read" in names and "mcp__github__create_issue" in names
    read, issue = engine.tool("Read"), engine.tool("mcp__github__create_issue")
    assert read is not None and issue is not None
    deferred = engine.tool("mcp__github__merge_pull_request")
    assert deferred is not None
    assert engine.tool_state(read, set()) == "core"
    assert engine.tool_state(issue, set()) == "always-load"
    assert engine.tool_state(deferred, set()) == "deferred"
    assert engine.tool_state(deferred, set(), defer=False) == "inline"
    assert engine.tool_state(deferred, {deferred.name}) == "loaded"
    assert engine.server_instructions("github") == "Use owner/repo form for repositories."
    assert engine.server_instructions("nobody") is None


def test_rank_and_index_report_answer_without_the_search_object(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    hits = engine.rank("open an issue on a repository", 3)
    assert hits and hits[0].tool.name == "mcp__github__create_issue"
    assert set(hits[0].components) <= set(engine.ranker_components)
    assert engine.wait_ranker_ready(None) is False  # bm25f has no dense signal
    assert engine.vectors_pending == 0 and engine.active_ranker == "bm25f"
    report = engine.index_report()
    assert report.profile == "bm25f" and report.fallback_reason is None
    assert "github" in report.servers and report.tools == len(engine.search.index)


def test_server_questions_name_configured_servers_only(tmp_path: Path) -> None:
    held = ServerConfig(
        "held", "stdio", command=sys.executable, args=("-c", "pass"), source="project", not_approved=True
    )
    engine = _engine(tmp_path, held)
    assert engine.server_names == ["held"]
    assert [s.name for s in engine.mcp_statuses()] == ["held"]
    assert {s.name for s in engine.server_statuses()} >= {"held", "github"}  # file catalogs too
    assert engine.server_config("held").command == sys.executable and engine.server_config("github") is None
    assert [c.name for c in engine.unapproved_servers()] == ["held"]
    assert json.loads(json.dumps(engine.pending_sizes())) == {}
