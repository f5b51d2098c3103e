"""Every request body ``toolscout request --json`` builds carries only schemas the provider
accepts: hostile and real catalogs, both strategies, both providers, tool search on and off."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

from jsonschema import Draft202012Validator

from toolscout.cli import run
from toolscout.core.catalog.loaders import load_catalog
from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.schemas import project, provider_problems
from toolscout.core.schemas.strict import strict_problems
from toolscout.core.search import ToolSearch
from toolscout.core.search.render import render_for_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from hostile_schemas import HOSTILE, write_catalog

COMBINATIONS = list(itertools.product(("execute-proxy", "stub"), ("anthropic", "openai"), ("true", "false")))


def _bodies(catalog: str, capsys, monkeypatch, stderr: list[str]) -> list[tuple[str, str, str, dict]]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    out = []
    for strategy, provider, search in COMBINATIONS:
        monkeypatch.setenv("TOOLSCOUT_TOOL_SEARCH", search)
        assert run(["--provider", provider, "request", "--catalog", catalog, "--strategy", strategy, "--json"]) == 0
        captured = capsys.readouterr()
        out.append((strategy, provider, search, json.loads(captured.out)))
        stderr.append(captured.err)
    return out


def _check_all(bodies: list[tuple[str, str, str, dict]], known_valid: frozenset[str] = frozenset()) -> set[str]:
    """Meta-schema + provider rules for every tool of every body; returns the tool names seen.

    ``known_valid``: schema texts (``json.dumps(..., sort_keys=True)``) already checked against
    the meta-schema elsewhere; a body schema identical to one skips that check (the provider rules
    still run)."""
    checked: set[tuple[str, str]] = set()
    valid: set[str] = set(known_valid)  # the meta-schema check does not depend on the provider
    names: set[str] = set()
    for strategy, provider, search, body in bodies:
        for tool in body["tools"]:
            name = tool["name"] if provider == "anthropic" else tool["function"]["name"]
            schema = tool["input_schema"] if provider == "anthropic" else tool["function"]["parameters"]
            names.add(name)
            text = json.dumps(schema, sort_keys=True)
            if (provider, text) in checked:
                continue
            checked.add((provider, text))
            if text not in valid:
                Draft202012Validator.check_schema(schema)
                valid.add(text)
            assert provider_problems(schema, provider) == [], (strategy, provider, search, name)
    return names


def test_hostile_catalog_request_bodies_are_all_accepted(tmp_path, capsys, monkeypatch):
    catalog = str(write_catalog(tmp_path / "hostile.json"))
    stderr: list[str] = []
    bodies = _bodies(catalog, capsys, monkeypatch, stderr)
    names = _check_all(bodies)
    assert {f"mcp__hostile__{n}" for n in HOSTILE} <= names  # inline (search off) carries every tool
    assert (
        "warning: hostile: mcp__hostile__float_type: inputSchema repaired: properties.ratio.type: "
        "'float' read as 'number'" in stderr[0]
    )
    inline = next(b for s, p, q, b in bodies if (s, p, q) == ("execute-proxy", "anthropic", "false"))
    wrapped = next(t for t in inline["tools"] if t["name"] == "mcp__hostile__number_root")
    assert wrapped["input_schema"]["required"] == ["value"]


def test_real_catalog_request_bodies_are_all_accepted(shared_dir, capsys, monkeypatch):
    """The 47 real catalogs' bodies. The catalog's projection of every real schema is checked
    against the meta-schema by tests/core/test_schema_projection.py (about 5 s of CPU); a body
    schema byte-identical to one of those projections is not checked a second time here."""
    catalogs = shared_dir / "bench-data" / "catalogs"
    projected = frozenset(
        json.dumps(project(tool.get("inputSchema")).schema, sort_keys=True)
        for path in sorted(catalogs.glob("*.json"))
        for tool in _catalog_tools(path)
    )
    names = _check_all(_bodies(str(catalogs), capsys, monkeypatch, []), known_valid=projected)
    assert len([n for n in names if n.startswith("mcp__")]) == 1673


def _catalog_tools(path: Path) -> list[dict]:
    """The ``tools`` of one ``tools/list`` dump (none for a file that is not one)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return data["tools"] if isinstance(data, dict) and isinstance(data.get("tools"), list) else []


def test_search_answers_carry_the_same_projected_schema(tmp_path):
    """What select: returns is the catalog's projected schema, byte for byte, and accepted."""
    loaded = load_catalog(write_catalog(tmp_path / "hostile.json"))
    catalog = ToolCatalog()
    for group in loaded.servers:
        catalog.set_server_tools(group.name, group.tools)
    search = ToolSearch(catalog, dense_cache=None, encoder=False)
    names = [t.name for t in catalog.tools()]
    result = search.search("select:" + ",".join(names), limit=50)
    assert [h.tool.name for h in result.hits] == names
    definitions = [json.loads(line) for line in render_for_model(result, catalog).splitlines() if line.startswith("{")]
    assert len(definitions) == len(names)
    for definition in definitions:
        assert definition["input_schema"] == catalog.get(definition["name"]).input_schema
        Draft202012Validator.check_schema(definition["input_schema"])
        assert provider_problems(definition["input_schema"], "anthropic") == []


def test_openai_strict_request_bodies(tmp_path, capsys, monkeypatch):
    catalog = str(write_catalog(tmp_path / "hostile.json"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("TOOLSCOUT_TOOL_SEARCH", "false")
    (tmp_path / ".toolscout").mkdir()
    (tmp_path / ".toolscout" / "settings.json").write_text(json.dumps({"provider": {"openaiStrict": True}}))
    monkeypatch.chdir(tmp_path)
    assert run(["--provider", "openai", "request", "--catalog", catalog, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    strict_tools = [t["function"] for t in body["tools"] if t["function"].get("strict")]
    assert strict_tools
    for function in strict_tools:
        assert strict_problems(function["parameters"]) == [], function["name"]
