"""Names as models write them resolve to the one canonical tool (select:, ExecuteTool, keyword
queries), and tools with empty-looking names get a stable visible placeholder."""

from __future__ import annotations

import pytest

from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.models import ToolSpec
from toolscout.core.names import loose_key, mcp_tool_name, tool_part, written_name
from toolscout.core.search import ToolSearch
from toolscout.core.search.grammar import parse_query

VAULT = "mcp__obsidian_graph__vault_read"


def _tool(name: str, description: str) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_schema={"type": "object", "properties": {}})


@pytest.fixture
def catalog() -> ToolCatalog:
    catalog = ToolCatalog()
    # The server is configured as "obsidian-graph" and exposed under its normalised name.
    catalog.set_server_tools(
        "obsidian_graph",
        [
            _tool("vault_read", "Read a note from the vault."),
            _tool("vault_write", "Write a note to the vault."),
            _tool("get_graph_schema", "Get the graph schema of the vault links."),
            _tool("query_graph_schema", "Query the graph schema with filters."),
            _tool("graph_schema_stats", "Statistics about the graph schema."),
        ],
    )
    catalog.set_server_tools(
        "code",
        [
            _tool("search_code", "Search code in repositories."),
            _tool("search_code_symbols", "Search code symbols by name."),
            _tool("search_code_history", "Search code history and commits."),
            _tool("list_tags", "List repository tags."),
            _tool("read_file", "Read a file from a repository."),
            _tool("create_branch", "Create a branch in a repository."),
        ],
    )
    return catalog


@pytest.mark.parametrize(
    "query",
    [
        f'select:"{VAULT}"',
        f"select:`{VAULT}`",
        f"select:'{VAULT}'",
        f'select:["{VAULT}"]',
        "select:mcp__obsidian-graph__vault_read",
        "select: MCP__Obsidian-Graph__Vault_Read",
        f"select:[{VAULT}]",
        "select:`vault_read`",
    ],
)
def test_select_forms_resolve_to_the_canonical_tool(catalog, query):
    result = ToolSearch(catalog, dense_cache=None, encoder=False).search(query)
    assert [h.tool.name for h in result.hits] == [VAULT] and result.missing == []


def test_select_json_array_and_spaces_after_commas(catalog):
    search = ToolSearch(catalog, dense_cache=None, encoder=False)
    expected = [VAULT, "mcp__code__list_tags"]
    for query in (
        'select:["mcp__obsidian-graph__vault_read", "mcp__code__list_tags"]',
        "select:mcp__obsidian_graph__vault_read,  `mcp__code__list_tags`",
        'select:"vault_read", "list_tags"',
    ):
        result = search.search(query)
        assert [h.tool.name for h in result.hits] == expected and result.missing == [], query
    assert parse_query('select:["a", "b", "A"]').names == ("a", "b")


def test_catalog_resolve_and_executor_forms(catalog):
    for written in (VAULT, f"`{VAULT}`", '"mcp__obsidian-graph__vault_read"', "vault_read", "Vault-Read"):
        assert [t.name for t in catalog.resolve(written)] == [VAULT], written
    assert catalog.resolve("``") == []


@pytest.mark.parametrize(
    "names",
    [
        ["mcp__obsidian_graph__vault_read"],
        ["vault_read", "search_code", "list_tags", "create_branch"],
        [
            "mcp__obsidian-graph__vault_read",
            "mcp__code__search_code",
            "list_tags",
            "mcp__code__read_file",
            "vault_write",
            "create_branch",
            "query_graph_schema",
        ],
    ],
)
def test_keyword_query_listing_exact_names_returns_every_named_tool_first(catalog, names):
    search = ToolSearch(catalog, dense_cache=None, encoder=False)
    result = search.search(" ".join(names), limit=3)
    got = [h.tool.name for h in result.hits]
    wanted = [t.name for n in names for t in catalog.resolve(n)]
    assert got[: len(wanted)] == wanted  # every named tool, in the query's order, ahead of the rest
    assert all(h.exact_name and h.score == 1.0 for h in result.hits[: len(wanted)])


def test_plain_words_in_a_long_query_are_not_taken_as_names(catalog):
    catalog.set_server_tools("misc", [_tool("search", "Generic search."), _tool("vault", "A vault.")])
    result = ToolSearch(catalog, dense_cache=None, encoder=False).search("search the vault graph schema", limit=3)
    assert not any(h.exact_name for h in result.hits)


def test_empty_looking_names_get_stable_visible_placeholders():
    assert tool_part("") == tool_part("") == "unnamed_da39a3ee"
    assert tool_part("???") != tool_part("") and tool_part("???").startswith("unnamed_")
    assert tool_part("__").startswith("unnamed_") and tool_part("a b") == "a_b"
    catalog = ToolCatalog()
    catalog.set_server_tools("s", [_tool("", "Nameless."), _tool("???", "Marks.")])
    names = [t.name for t in catalog.tools()]
    assert names == sorted([mcp_tool_name("s", ""), mcp_tool_name("s", "???")])
    assert all(n.startswith("mcp__s__unnamed_") for n in names)
    assert [t.original_name for t in catalog.tools() if t.name == mcp_tool_name("s", "")] == [""]


def test_written_and_loose_forms():
    assert written_name('  "`x`"  ') == "x"
    assert loose_key("mcp__Obsidian-Graph__Vault.Read") == "mcp__obsidian_graph__vault_read"
    long = "mcp__server__" + "x" * 80
    assert loose_key(long) == mcp_tool_name("server", "x" * 80).lower()
