import json

import pytest

from toolscout.core.catalog.loaders import CatalogFileError, load_catalog


def test_jsonl_with_both_schema_spellings_and_bad_lines(tmp_path):
    path = tmp_path / "tools.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"name": "a", "description": "A", "input_schema": {"type": "object"}, "server": "s1"}),
                json.dumps(
                    {"name": "b", "description": "B", "inputSchema": {"type": "object", "properties": {"x": {}}}}
                ),
                "{not json",
                json.dumps({"description": "no name"}),
                "",
            ]
        ),
        encoding="utf-8",
    )
    loaded = load_catalog(path)
    assert [s.name for s in loaded.servers] == ["s1", None]
    assert loaded.servers[1].tools[0].input_schema == {"type": "object", "properties": {"x": {}}}
    assert len(loaded.warnings) == 2 and ":3:" in loaded.warnings[0]


def test_dump_and_directory(tmp_path):
    (tmp_path / "one.json").write_text(
        json.dumps({"server": "one", "instructions": "Be nice", "tools": [{"name": "t", "inputSchema": {}}]})
    )
    (tmp_path / "index.json").write_text(json.dumps({"servers": []}))
    loaded = load_catalog(tmp_path)
    assert [s.name for s in loaded.servers] == ["one"]
    assert loaded.servers[0].instructions == "Be nice"
    assert loaded.warnings == []
    (tmp_path / "broken.json").write_text("{oops")
    assert any("broken.json" in w and "not valid JSON" in w for w in load_catalog(tmp_path).warnings)


def test_a_dump_follows_the_listing_rules_for_empty_and_repeated_names(tmp_path):
    """Found by a new-user try: a dump's empty name was skipped and a repeated one became
    ``dup_2``, where a server's tools/list keeps the first and shows the empty one as unnamed."""
    from toolscout.core.catalog.registry import ToolCatalog

    (tmp_path / "s.json").write_text(
        json.dumps(
            {
                "server": "s",
                "tools": [
                    {"name": "dup", "description": "first", "inputSchema": {}},
                    {"name": "", "inputSchema": {}},
                    {"name": "dup", "description": "second", "inputSchema": {}},
                ],
            }
        )
    )
    loaded = load_catalog(tmp_path / "s.json")
    assert [(t.name, t.description) for t in loaded.servers[0].tools] == [("dup", "first"), ("", "")]
    assert loaded.warnings == [f'{tmp_path / "s.json"}: tools[2] skipped: "dup" is listed again']
    catalog = ToolCatalog()
    catalog.set_server_tools("s", loaded.servers[0].tools)
    assert sorted(t.name for t in catalog.server_tools("s")) == ["mcp__s__dup", "mcp__s__unnamed_da39a3ee"]


def test_missing_path_raises_clear_error(tmp_path):
    with pytest.raises(CatalogFileError, match="no such file"):
        load_catalog(tmp_path / "nope.json")


def test_real_catalogs_load(shared_dir):
    loaded = load_catalog(shared_dir / "bench-data" / "catalogs")
    assert loaded.tool_count >= 1600
    assert len(loaded.servers) >= 45
