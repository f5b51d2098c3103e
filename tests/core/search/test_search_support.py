"""Shared helpers for the search tests (no tests here): the fixture catalog as a ToolCatalog."""

from __future__ import annotations

import json
from pathlib import Path

from toolscout.core.catalog.loaders import tool_from_dict
from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.models import ToolSpec
from toolscout.core.search.dense import dense_available

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "search_catalog.json"
SHARED = Path(__file__).resolve().parents[3] / ".." / "shared"
DENSE = dense_available()


def fixture_data() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def make_catalog(hidden: tuple[str, ...] = ("secrets",), core: tuple[str, ...] = ("Read",)) -> ToolCatalog:
    """The fixture catalog; tools of servers in ``hidden`` are hidden by the visibility filter."""
    data = fixture_data()
    cat = ToolCatalog(core_names=core)
    for raw in data["builtins"]:
        cat.add_builtin(tool_from_dict(raw))
    for server in data["servers"]:
        cat.set_server_tools(
            server["name"],
            [tool_from_dict(t) for t in server["tools"]],
            instructions=server.get("instructions"),
            description=server.get("description"),
        )
    cat.set_visibility(lambda t: t.server not in hidden)
    return cat


def fixture_tools() -> tuple[list[ToolSpec], dict[str, str]]:
    """Deferred-looking tool list (canonical mcp__ names) and server descriptions, no catalog."""
    cat = make_catalog(hidden=())
    return [t for t in cat.tools() if t.server is not None], dict(cat.server_descriptions)
