"""OpenAI strict mode: the strict view keeps only what strict mode allows, or says the tool
must be sent without strict; nulls for optional properties are removed before the call."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from toolscout.core.calls.validation import validate_params
from toolscout.core.schemas import project, project_input_schema
from toolscout.core.schemas.strict import restore_optional, strict_problems, strict_schema
from toolscout.core.session.providers.openai_provider import to_openai_tools

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from hostile_schemas import HOSTILE


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_shapes_are_strict_or_explicitly_not(name):
    base = project(HOSTILE[name]).schema
    view = strict_schema(base)
    if view.schema is None:
        assert len(view.warnings) == 1 and view.warnings[0].endswith("sent without strict")
    else:
        Draft202012Validator.check_schema(view.schema)
        assert strict_problems(view.schema) == []


def test_optional_properties_become_nullable_and_nulls_are_removed_before_the_call():
    base = project(
        {
            "type": "object",
            "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}, "opt": {"type": ["string", "null"]}},
            "required": ["q"],
        }
    ).schema
    view = strict_schema(base).schema
    assert view["required"] == ["q", "limit", "opt"] and view["additionalProperties"] is False
    assert view["properties"]["limit"]["type"] == ["integer", "null"]
    sent = {"q": "x", "limit": None, "opt": None}
    assert validate_params(base, sent) is not None  # the model's strict answer fails the base schema
    restored = restore_optional(sent, base)
    assert restored == {"q": "x", "opt": None}  # opt accepts null itself: kept
    assert validate_params(base, restored) is None


def test_open_objects_are_sent_without_strict():
    schema, warnings = project_input_schema({"type": "object"}, "openai", strict=True)
    assert schema == {"type": "object", "properties": {}}
    assert any("sent without strict" in w for w in warnings)
    tools = to_openai_tools(
        [
            {"name": "a", "input_schema": schema},
            {
                "name": "b",
                "input_schema": project(
                    {"type": "object", "properties": {"x": {"type": "string", "minLength": 2}}}
                ).schema,
            },
        ],
        strict=True,
    )
    assert "strict" not in tools[0]["function"]
    assert tools[1]["function"]["strict"] is True
    assert tools[1]["function"]["parameters"] == {
        "type": "object",
        "properties": {"x": {"type": ["string", "null"]}},
        "additionalProperties": False,
        "required": ["x"],
    }


def test_strict_off_sends_the_base_projection_unchanged():
    base = project({"type": "object", "properties": {"x": {"type": "string"}}}).schema
    assert to_openai_tools([{"name": "a", "input_schema": base}])[0]["function"] == {
        "name": "a",
        "description": "",
        "parameters": base,
    }


def test_real_catalogs_strict_views_follow_the_rules(shared_dir):
    strict = total = 0
    for path in sorted((shared_dir / "bench-data" / "catalogs").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for tool in data.get("tools", []) if isinstance(data, dict) else []:
            view = strict_schema(project(tool.get("inputSchema")).schema)
            total += 1
            if view.schema is not None:
                strict += 1
                assert strict_problems(view.schema) == [], (path.name, tool["name"])
    assert total == 1673 and strict > 0
