"""JSON Schema → form fields and validated arguments (no widgets)."""

from __future__ import annotations

import re

import pytest

from toolscout.core.calls.form_model import FieldSpec, FormError, fields_of, parse_value
from toolscout.core.calls.validation import field_problems as validate_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "[b]City[/b]"},
        "days": {"type": "integer", "minimum": 1},
        "ratio": {"type": ["number", "null"]},
        "hourly": {"type": "boolean"},
        "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "extra": {"anyOf": [{"type": "object"}, {"type": "null"}]},
        "anything": {},
    },
    "required": ["city", "tags"],
}


def test_fields_follow_the_schema() -> None:
    fields = {f.name: f for f in fields_of(SCHEMA)}
    assert [f.name for f in fields_of(SCHEMA)] == list(SCHEMA["properties"])
    assert fields["city"].kind == "string" and fields["city"].required
    assert fields["days"].kind == "integer"
    assert fields["ratio"].kind == "number" and fields["ratio"].nullable
    assert fields["hourly"].kind == "boolean"
    assert fields["units"].kind == "enum" and fields["units"].choices == ["metric", "imperial"]
    assert fields["units"].has_default and fields["units"].default == "metric"
    assert fields["tags"].kind == "json" and fields["tags"].required
    assert fields["extra"].kind == "json" and fields["extra"].type_label == "object/null"
    assert fields["anything"].kind == "json" and fields["anything"].type_label == "any"


def test_a_const_property_is_a_one_choice_field_set_to_its_value() -> None:
    """``{"const": "fixed"}`` (no type) was a JSON box left empty, which Run refused as "not
    valid JSON"; its one allowed value is now chosen already."""
    [field] = fields_of({"type": "object", "properties": {"c": {"const": "fixed"}}, "required": ["c"]})
    assert field.kind == "enum" and field.choices == ["fixed"] and field.type_label == "enum"
    assert field.has_default and field.default == "fixed"
    assert parse_value(field, field.default) == (True, "fixed")
    assert validate_arguments({"type": "object", "properties": {"c": {"const": "fixed"}}}, {"c": "fixed"}) == []


def test_free_text_strings_are_multiline_and_constrained_ones_single() -> None:
    props = {
        "body": {"type": "string"},
        "when": {"type": "string", "format": "date-time"},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "title": {"type": "string", "maxLength": 80},
        "essay": {"type": "string", "maxLength": 5000},
        "units": {"type": "string", "enum": ["a", "b"]},
        "count": {"type": "integer"},
    }
    fields = {f.name: f for f in fields_of({"type": "object", "properties": props})}
    assert {name for name, f in fields.items() if f.multiline} == {"body", "essay"}


@pytest.mark.parametrize("schema", [None, 3, "x", {"properties": []}, {"properties": {"a": 5}}, {"required": 7}])
def test_odd_schemas_never_raise(schema) -> None:
    fields_of(schema)
    validate_arguments(schema, {})


def test_values_are_parsed_by_kind() -> None:
    fields = {f.name: f for f in fields_of(SCHEMA)}
    assert parse_value(fields["city"], "") == (False, None)
    assert parse_value(fields["days"], " 4 ") == (True, 4)
    assert parse_value(fields["ratio"], "0.5") == (True, 0.5)
    assert parse_value(fields["tags"], '["a", "b"]') == (True, ["a", "b"])
    assert parse_value(fields["hourly"], None) == (False, None)
    assert parse_value(fields["hourly"], False) == (True, False)
    with pytest.raises(FormError, match="whole number"):
        parse_value(fields["days"], "4.5")
    with pytest.raises(FormError, match="not valid JSON"):
        parse_value(fields["tags"], "[a")


def test_validation_names_the_field() -> None:
    problems = validate_arguments(SCHEMA, {"days": 0})
    names = [name for name, _ in problems]
    assert "city" in names and "tags" in names and "days" in names
    assert validate_arguments(SCHEMA, {"city": "Oslo", "tags": []}) == []


def test_a_problem_inside_a_field_says_where_in_it() -> None:
    """The field is the top-level property (the form marks it); the message says where below it."""
    schema = {
        "type": "object",
        "properties": {
            "obj": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "items": {"type": "array", "items": {"type": "integer"}}},
            }
        },
    }
    problems = validate_arguments(schema, {"obj": {"x": "notnum", "items": [1, "two"]}})
    assert problems == [
        ("obj", "'two' is not of type 'integer' (at obj.items[1])"),
        ("obj", "'notnum' is not of type 'number' (at obj.x)"),
    ]
    assert validate_arguments(schema, {"obj": 5}) == [("obj", "5 is not of type 'object'")]


def test_an_invalid_schema_is_reported_not_raised() -> None:
    problems = validate_arguments({"type": "object", "properties": {"a": {"type": 12}}}, {"a": 1})
    assert problems and problems[0][0] == "" and "invalid" in problems[0][1]


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        (SCHEMA, {"city": "Oslo", "tags": []}),
        (SCHEMA, {"days": 0}),
        (
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "integer"}}},
            {"a": "x"},
        ),
        ({"type": "object", "properties": {"a": {"$ref": "https://example.invalid/s.json"}}}, {"a": 1}),
        ({"type": "object", "properties": {"a": {"type": 12}}}, {"a": 1}),
    ],
)
def test_the_form_and_the_executor_agree(schema, arguments) -> None:
    from toolscout.core.calls.validation import Invalid, validate_params

    blocking = [
        p for p in validate_arguments(schema, arguments) if p[0] or not p[1].startswith("the tool's input schema")
    ]
    assert bool(blocking) == isinstance(validate_params(schema, arguments), Invalid)


@pytest.mark.parametrize(
    ("kind", "typed", "shown"),
    [
        ("number", "inf", "inf"),
        ("number", " nan ", "nan"),
        ("number", "1e400", "1e400"),
        ("number", "-Infinity", "-Infinity"),
        ("json", "[1, 1e400]", "1e400"),
        ("json", '{"a": NaN}', "NaN"),
        ("json", "-Infinity", "-Infinity"),
    ],
)
def test_a_number_json_cannot_carry_is_refused(kind: str, typed: str, shown: str) -> None:
    """Python reads ``inf``, ``nan`` and ``1e400`` (and ``json.loads`` reads ``NaN`` and
    ``Infinity``) as floats that reach the server as ``null``: the form refuses them, saying so."""
    field = FieldSpec("x", kind)
    with pytest.raises(FormError, match=f"^x: {re.escape(shown)} is not a number JSON can carry"):
        parse_value(field, typed)
    assert parse_value(field, "1e300") == (True, 1e300)
