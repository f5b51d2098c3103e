"""The compact deferred-name announcement (issue 12 item 5): each group's prefix written once,
parsed back to exactly the announced names, and every form it shows resolves to one tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.models import ToolSpec
from toolscout.core.names import from_announcement
from toolscout.core.serialize import announcement_groups, parse_announcement_line


def _tool(name: str) -> ToolSpec:
    return ToolSpec(name=name, description=f"{name} does things", input_schema={"type": "object"})


def _catalog() -> ToolCatalog:
    cat = ToolCatalog()
    cat.add_builtin(_tool("WebFetch"))
    cat.set_server_tools("github", [_tool("create_issue"), _tool("list_issues")])
    cat.set_server_tools("atlassian-jira", [_tool("jira_get")])
    cat.set_server_tools("s" * 60, [_tool("long_tool_name")])  # shortened: no group prefix
    return cat


def test_groups_write_each_prefix_once_and_parse_back_exactly() -> None:
    cat = _catalog()
    tools = cat.tools()
    lines = announcement_groups(tools)
    assert "mcp__github__: create_issue list_issues" in lines
    assert "built-in: WebFetch" in lines
    assert sum(line.count("mcp__github__") for line in lines) == 1
    assert [n for line in lines for n in parse_announcement_line(line)] == [t.name for t in tools]


def test_older_one_name_per_line_form_still_parses() -> None:
    assert parse_announcement_line("# github (2)") == []
    assert parse_announcement_line("mcp__github__create_issue") == ["mcp__github__create_issue"]
    assert parse_announcement_line("mcp__github__create_issue — Create: an issue") == ["mcp__github__create_issue"]


@pytest.mark.parametrize(
    "written",
    [
        "mcp__github__create_issue",
        "mcp__github__: create_issue",
        "mcp__github__:create_issue",
        "mcp__github__ create_issue",
        " mcp__github__:  create_issue ",
        "create_issue",
    ],
)
def test_every_form_the_announcement_shows_resolves_to_the_one_tool(written: str) -> None:
    assert [t.name for t in _catalog().resolve(written)] == ["mcp__github__create_issue"]


def test_builtin_group_form_and_unrelated_text() -> None:
    cat = _catalog()
    assert [t.name for t in cat.resolve("built-in: WebFetch")] == ["WebFetch"]
    assert from_announcement("mcp__github__") == "mcp__github__"
    assert from_announcement("select this") == "select this"
    assert cat.resolve("mcp__github__: nothing_here") == []


@given(
    st.lists(
        st.tuples(
            st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True),
            st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,20}", fullmatch=True),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_round_trip_for_any_names(pairs: list[tuple[str, str]]) -> None:
    cat = ToolCatalog()
    for server in {s for s, _ in pairs}:
        cat.set_server_tools(server, [_tool(t) for s, t in pairs if s == server])
    tools = cat.tools()
    parsed = [n for line in announcement_groups(tools) for n in parse_announcement_line(line)]
    assert sorted(parsed) == sorted(t.name for t in tools)


def test_first_request_over_the_47_catalogs_fits_12k_tokens(shared_dir: Path, tmp_path: Path) -> None:
    """Issue 12 item 5's target, on the exact body ``toolscout request`` prints."""
    from toolscout.core.builtins.registry import builtin_tools, core_tool_names
    from toolscout.core.engine.facade import Engine
    from toolscout.core.session.providers.offline import OfflineProvider
    from toolscout.core.session.session import Session
    from toolscout.core.settings.layers import Settings
    from toolscout.core.tokens import default_counter

    settings = Settings().with_overrides({"toolSearch.enabled": "true"}, "test")
    engine = Engine(settings, builtins=builtin_tools(), core_names=core_tool_names(), project_dir=tmp_path)
    engine.load_catalog_file(shared_dir / "bench-data" / "catalogs")
    assert len(engine.catalog.deferred_tools()) >= 1_673
    body = Session(engine, provider=OfflineProvider(), persist=False).request_body("hi")
    tokens = default_counter().count(json.dumps(body, separators=(",", ":"), ensure_ascii=False))
    assert tokens <= 12_000, tokens
