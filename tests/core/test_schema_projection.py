"""The inputSchema projection: every shape becomes a schema both providers accept, meaning kept."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from toolscout.core.calls.validation import Invalid, validate_params
from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.models import ToolSpec
from toolscout.core.schemas import (
    project,
    project_input_schema,
    provider_problems,
    unwrap_arguments,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from hostile_schemas import HOSTILE, INVALID_CALLS, VALID_CALLS


def _accepted(schema: dict) -> None:
    Draft202012Validator.check_schema(schema)  # raises SchemaError with the path
    for provider in ("anthropic", "openai"):
        assert provider_problems(schema, provider) == [], provider


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_every_hostile_shape_projects_to_an_accepted_idempotent_schema(name):
    result = project(HOSTILE[name])
    _accepted(result.schema)
    again = project(result.schema)
    assert (again.schema, again.warnings, again.wrapped) == (result.schema, (), False)


def test_the_raw_hostile_shapes_really_are_rejected():
    """The fixture is hostile: without the projection most shapes fail a provider rule."""
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    rejected = [
        n
        for n, s in HOSTILE.items()
        if n != "deep_150"  # too deep for the meta-schema check itself
        if provider_problems(s, "anthropic") or provider_problems(s, "openai") or not meta.is_valid(s)
    ]
    assert len(rejected) >= 20


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("float_type", "properties.ratio.type: 'float' read as 'number'"),
        ("bare_strings", 'properties.query: bare string \'string\' read as {"type": "string"}'),
        ("no_properties", None),
        ("number_root", "(root): root type 'number' is not an object"),
        ("remote_ref", "properties.r.$ref: reference 'https://example.com/schemas/r.json' does not resolve"),
        ("top_level_anyof", "(root).anyOf: top-level combinators are rejected by Anthropic"),
    ],
)
def test_each_repair_is_named_in_a_warning(name, expected):
    warnings = project(HOSTILE[name]).warnings
    if expected is None:  # {"type": "object"} gains properties: {} with nothing lost
        assert project(HOSTILE[name]).schema == {"type": "object", "properties": {}}
    else:
        assert any(w.startswith(expected) for w in warnings), warnings


def test_non_object_roots_are_wrapped_and_unwrapped():
    result = project({"type": "number", "minimum": 0})
    assert result.wrapped
    assert result.schema == {
        "type": "object",
        "properties": {"value": {"type": "number", "minimum": 0}},
        "required": ["value"],
    }
    assert unwrap_arguments({"value": 3}, result.wrapped) == 3
    assert unwrap_arguments({"a": 1}, False) == {"a": 1}


def test_wrapping_keeps_defs_resolvable_and_recursion_finite():
    arr = project(HOSTILE["array_root_with_defs"])
    assert "$defs" in arr.schema and arr.schema["properties"]["value"]["items"] == {"$ref": "#/$defs/item"}
    assert validate_params(arr.schema, {"value": [{"k": "x"}]}) is None
    rec = project(HOSTILE["recursive_wrapped_root"])
    assert rec.schema["properties"]["value"]["items"] == {"$ref": "#/properties/value"}
    assert validate_params(rec.schema, {"value": [["a", ["b"]], "c"]}) is None
    assert isinstance(validate_params(rec.schema, {"value": [1]}), Invalid)


@pytest.mark.parametrize("name", sorted(VALID_CALLS))
def test_valid_arguments_stay_valid(name):
    args, sent = VALID_CALLS[name]
    result = project(HOSTILE[name])
    assert validate_params(result.schema, args) is None
    if sent is not None:
        assert unwrap_arguments(args, result.wrapped) == sent


@pytest.mark.parametrize("name", sorted(INVALID_CALLS))
def test_constraints_survive_the_projection(name):
    """Combinators moved off the top level, inlined root refs, nested $defs, $id scopes and
    anchors still reject what the server's schema rejects."""
    assert isinstance(validate_params(project(HOSTILE[name]).schema, INVALID_CALLS[name]), Invalid)


def test_the_input_is_never_mutated():
    original = json.loads(json.dumps(HOSTILE))
    for schema in HOSTILE.values():
        project(schema)
    assert json.loads(json.dumps(HOSTILE)) == original


def test_shared_and_cyclic_python_objects_do_not_loop():
    node: dict = {"type": "object", "properties": {}}
    node["properties"]["self"] = node
    result = project(node)
    _accepted(result.schema)
    assert any("cycle" in w for w in result.warnings)


def test_public_entry_point_returns_schema_and_warnings():
    schema, warnings = project_input_schema({"type": "object", "properties": {"x": {"type": "float"}}}, "openai")
    assert schema == {"type": "object", "properties": {"x": {"type": "number"}}}
    assert warnings == ["properties.x.type: 'float' read as 'number'"]


def test_catalog_registers_the_projection_once_and_keeps_the_source():
    catalog = ToolCatalog()
    raw = {"type": "number"}
    catalog.set_server_tools("s", [ToolSpec(name="t", input_schema=raw)])
    tool = catalog.get("mcp__s__t")
    assert tool is not None and tool.wrapped_arguments and tool.source_schema is raw
    assert tool.input_schema["properties"]["value"] == {"type": "number"}
    catalog.set_server_tools("s", [tool])  # re-registering does not wrap twice
    assert catalog.get("mcp__s__t").input_schema == tool.input_schema


def test_every_real_catalog_schema_projects_to_an_accepted_schema(shared_dir):
    count = 0
    accepted: set[str] = set()  # 1,377 distinct projected schemas: each checked once
    for path in sorted((shared_dir / "bench-data" / "catalogs").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "tools" not in data:
            continue
        for tool in data["tools"]:
            result = project(tool.get("inputSchema"))
            if (text := json.dumps(result.schema, sort_keys=True)) not in accepted:
                _accepted(result.schema)
                accepted.add(text)
            assert not result.wrapped, (path.name, tool["name"])
            count += 1
    assert count == 1673


def test_a_resumed_projection_repairs_schemas_saved_before_the_repair():
    from toolscout.core.session.projection import Projection

    good = {"name": "a", "description": "", "input_schema": {"type": "object", "properties": {}}}
    bad = {"name": "b", "description": "", "input_schema": {"type": "object", "properties": {"x": {"type": "float"}}}}
    proj = Projection.from_json(
        {"strategy": "execute-proxy", "system": "s", "tools": [good, bad], "full_names": ["a", "b"]}
    )
    assert proj.tools[0] is good  # already valid: the same bytes
    assert proj.tools[1]["input_schema"]["properties"]["x"] == {"type": "number"}
