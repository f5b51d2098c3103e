"""The executor over in-memory servers: lookup, the self-healing gate, schema validation,
permissions, result mapping, resources."""

from __future__ import annotations

import json

from mcp_helpers import EventLog, allow, memory, running

from toolscout.core.calls.validation import Invalid, SchemaProblem, field_problems, validate_params
from toolscout.core.models import ToolErrorKind, ToolSpec


def args_seen(result) -> dict:
    return json.loads(result.text())["arguments"]


# -- validation (pure) ----------------------------------------------------------------------
def test_validation_handles_refs_recursion_drafts_and_broken_schemas():
    mod = __import__("mcp_helpers").fixture_module("schemas")
    schemas = mod.SCHEMAS
    tree = {"root": {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}}
    assert validate_params(schemas["recursive"], tree) is None
    bad_tree = validate_params(schemas["recursive"], {"root": {"name": "a", "children": [{"nom": 1}]}})
    assert isinstance(bad_tree, Invalid) and "params.root.children[0]" in bad_tree.message
    assert validate_params(schemas["defs"], {"color": "red", "size": 2}) is None
    wrong = validate_params(schemas["defs"], {"color": "purple", "size": 0})
    assert isinstance(wrong, Invalid) and "purple" in wrong.message and "params.size" in wrong.message
    assert validate_params(schemas["noprops"], {"anything": [1, 2]}) is None
    assert validate_params(mod.UNSERVABLE["only_schema"], {"x": 1}) is None
    assert isinstance(validate_params(schemas["draft7"], {"when": "x"}), Invalid)  # minLength via definitions
    assert validate_params(schemas["draft7"], {"when": "today"}) is None
    malformed = validate_params(schemas["malformed"], {"x": "1"})
    assert isinstance(malformed, SchemaProblem) and "strnig" in malformed.message
    dangling = validate_params(schemas["dangling_ref"], {"x": 1})
    assert isinstance(dangling, SchemaProblem) and "$ref" in dangling.message
    assert isinstance(validate_params(["not", "a", "schema"], {}), SchemaProblem)
    self_loop = {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}
    assert isinstance(validate_params(self_loop, {}), SchemaProblem | type(None))


async def test_schemas_over_the_wire_are_kept_and_enforced(events: EventLog):
    async with running([memory("schemas")], events) as engine:
        tool = engine.tool("mcp__schemas__recursive")
        assert tool.input_schema["$defs"]["node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/node"}
        tree = {"root": {"name": "a", "children": [{"name": "b"}]}}
        assert args_seen(await engine.call_tool("mcp__schemas__recursive", tree, asker=allow)) == tree

        bad = await engine.call_tool("mcp__schemas__defs", {"color": "purple"}, asker=allow)
        assert bad.error_kind is ToolErrorKind.INVALID_PARAMS
        assert "'purple' is not one of ['red', 'green', 'blue']" in bad.text()
        assert '"$defs"' in bad.text()  # the schema comes with the message

        # a malformed schema is reported once, and the call still reaches the server
        sent = await engine.call_tool("mcp__schemas__malformed", {"x": "1"}, asker=allow)
        assert args_seen(sent) == {"x": "1"}
        assert any("mcp__schemas__malformed" in w and "strnig" in w for w in engine.warnings)
        assert args_seen(await engine.call_tool("mcp__schemas__noprops", None, asker=allow)) == {}
        assert args_seen(await engine.call_tool("mcp__schemas__noprops", '{"a": 1}', asker=allow)) == {"a": 1}
        not_json = await engine.call_tool("mcp__schemas__noprops", "{oops", asker=allow)
        assert not_json.error_kind is ToolErrorKind.INVALID_PARAMS and "not valid JSON" in not_json.text()
        not_obj = await engine.call_tool("mcp__schemas__noprops", [1], asker=allow)
        assert not_obj.error_kind is ToolErrorKind.INVALID_PARAMS and "JSON object" in not_obj.text()


async def test_a_bad_argument_to_a_5000_value_enum_gets_a_short_answer():
    """One bad argument must not answer with the whole enum and the whole ~50 KB schema."""
    async with running([memory("schemas")]) as engine:
        name = "mcp__schemas__big_enum"
        bad = await engine.call_tool(name, {"unit": "kelvin"}, asker=allow)
        huge = await engine.call_tool(name, {"unit": "x" * 50_000, "count": ["y"] * 9_000}, asker=allow)
        wrong_type = await engine.call_tool(name, "[1, 2]", asker=allow)
        ok = await engine.call_tool(name, {"unit": "unit_4999"}, asker=allow)
    assert bad.error_kind is ToolErrorKind.INVALID_PARAMS
    text = bad.text()
    assert len(text) <= 2000, len(text)
    assert "- params.unit: 'kelvin' is not one of ['unit_0000', 'unit_0001'" in text  # field, value, hint
    assert "… and 4,995 more]" in text and "unit_0005" not in text
    assert f"Input schema of {name} (excerpt)" in text and '"required"' in text
    assert huge.error_kind is ToolErrorKind.INVALID_PARAMS and len(huge.text()) <= 2000
    assert "(50,000 characters) is not one of" in huge.text() and "- params.count: ['y'," in huge.text()
    assert "… and 8,995 more] is not of type 'integer'" in huge.text()
    schema = __import__("mcp_helpers").fixture_module("schemas").SCHEMAS["big_enum"]
    form = field_problems(schema, {"unit": "kelvin"})  # the argument form's reading
    assert [f for f, _ in form] == ["unit"] and len(form[0][1]) <= 500 and "… and 4,995 more" in form[0][1]
    assert len(wrong_type.text()) <= 2000 and "must be a JSON object" in wrong_type.text()
    assert args_seen(ok) == {"unit": "unit_4999"}  # the server gets the valid call, whole


# -- lookup ---------------------------------------------------------------------------------
async def test_lookup_unknown_ambiguous_case_and_duplicates():
    async with running([memory("alpha", "normal"), memory("beta", "normal")]) as engine:
        names = {t.name for t in engine.catalog.tools() if t.server}
        assert {"mcp__alpha__echo", "mcp__beta__echo"} <= names
        ambiguous = await engine.call_tool("echo", {"text": "x"}, asker=allow)
        assert ambiguous.error_kind is ToolErrorKind.UNKNOWN_TOOL and "ambiguous" in ambiguous.text()
        assert "mcp__alpha__echo" in ambiguous.text() and "mcp__beta__echo" in ambiguous.text()
        assert (await engine.call_tool("MCP__Beta__Echo", {"text": "b"}, asker=allow)).text() == "b"
        unknown = await engine.call_tool("mcp__alpha__ecoh", {}, asker=allow)
        assert unknown.error_kind is ToolErrorKind.UNKNOWN_TOOL and "mcp__alpha__echo" in unknown.text()
        nowhere = await engine.call_tool("mcp__nosuchserver__x", {}, asker=allow)
        assert nowhere.error_kind is ToolErrorKind.UNKNOWN_TOOL and "ToolSearch" in nowhere.text()


async def test_file_catalog_tools_are_searchable_not_runnable(tmp_path):
    catalog = tmp_path / "cat.json"
    catalog.write_text(
        json.dumps(
            {
                "server": "paper",
                "tools": [{"name": "print_it", "description": "Print.", "inputSchema": {"type": "object"}}],
            }
        )
    )
    from mcp_helpers import make_engine

    engine = make_engine([])
    engine.load_catalog_file(catalog)
    result = await engine.call_tool("mcp__paper__print_it", {}, asker=allow)
    assert result.error_kind is ToolErrorKind.SERVER_FAILED and "catalog file" in result.text()


# -- the self-healing gate ------------------------------------------------------------------
async def test_direct_call_to_an_unloaded_deferred_tool_returns_its_schema_then_runs():
    async with running([memory("normal")]) as engine:
        first = await engine.call_tool("mcp__normal__add", {"a": 1, "b": 2}, asker=allow, direct=True)
        assert first.error_kind is ToolErrorKind.NOT_LOADED
        assert "Add two integers" in first.text() and '"required"' in first.text()
        assert "mcp__normal__add" in engine.loaded
        second = await engine.call_tool("mcp__normal__add", {"a": 1, "b": 2}, asker=allow, direct=True)
        assert second.text() == "3" and second.structured == {"result": 3}

        mine: set[str] = set()  # a caller-kept loaded set is used and updated instead
        gated = await engine.call_tool("mcp__normal__echo", {"text": "x"}, asker=allow, direct=True, loaded=mine)
        assert gated.error_kind is ToolErrorKind.NOT_LOADED and mine == {"mcp__normal__echo"}
        # via ExecuteTool (direct=False) there is no gate, and core built-ins are never gated
        assert (await engine.call_tool("mcp__normal__pid", {}, asker=allow)).is_error is False
        read = await engine.call_tool("Read", {"file_path": "/nonexistent/x"}, direct=True)
        assert read.error_kind is not ToolErrorKind.NOT_LOADED


# -- permissions ----------------------------------------------------------------------------
async def test_headless_ask_is_denied_with_the_rule_to_add():
    async with running([memory("normal")]) as engine:
        denied = await engine.call_tool("mcp__normal__echo", {"text": "x"})
        assert denied.error_kind is ToolErrorKind.PERMISSION_DENIED
        assert '"mcp__normal__echo"' in denied.text() and "permissions.allow" in denied.text()
        assert "--allowed-tools" in denied.text()
        # read-only built-ins run without asking
        todo = await engine.call_tool("TodoWrite", {"todos": []})
        assert todo.error_kind is not ToolErrorKind.PERMISSION_DENIED


async def test_asker_answers_and_session_rules():
    asked: list[str] = []

    def answering(answer: str):
        async def asker(tool: ToolSpec, params: dict) -> str:
            asked.append(tool.name)
            return answer

        return asker

    async with running([memory("normal")]) as engine:
        no = await engine.call_tool("mcp__normal__echo", {"text": "x"}, asker=answering("deny"))
        assert no.error_kind is ToolErrorKind.PERMISSION_DENIED and "user denied" in no.text()
        assert (await engine.call_tool("mcp__normal__echo", {"text": "1"}, asker=answering("allow_once"))).text() == "1"
        assert (await engine.call_tool("mcp__normal__echo", {"text": "2"}, asker=answering("always"))).text() == "2"
        assert (await engine.call_tool("mcp__normal__echo", {"text": "3"})).text() == "3"  # no asker needed now
        assert asked == ["mcp__normal__echo"] * 3

        async def broken(tool: ToolSpec, params: dict) -> str:
            raise RuntimeError("prompt crashed")

        refused = await engine.call_tool("mcp__normal__add", {"a": 1, "b": 1}, asker=broken)
        assert refused.error_kind is ToolErrorKind.PERMISSION_DENIED


async def test_duration_leaves_out_the_wait_for_a_permission_answer(fake_clock):
    async def slow_person(tool: ToolSpec, params: dict) -> str:
        fake_clock.advance(0.5)  # reading the prompt for half a second
        return "allow_once"

    async with running([memory("normal")]) as engine:
        engine.executor.clock = fake_clock
        result = await engine.call_tool("mcp__normal__echo", {"text": "x"}, asker=slow_person)
        assert result.text() == "x"
        # the echo's own time (a few clock readings), not the half second of asking
        assert 0 < result.duration_ms < 100


async def test_settings_rules_deny_hides_and_ask_beats_allow():
    rules = {
        "permissions.allow": ["normal"],
        "permissions.ask": ["mcp__normal__add"],
        "permissions.deny": ["mcp__normal__explode", "Bash"],
    }
    async with running([memory("normal")], **rules) as engine:
        assert (await engine.call_tool("mcp__normal__echo", {"text": "ok"})).text() == "ok"  # server rule
        ask = await engine.call_tool("mcp__normal__add", {"a": 1, "b": 2})
        assert ask.error_kind is ToolErrorKind.PERMISSION_DENIED and "permissions.ask" in ask.text()
        hidden = await engine.call_tool("mcp__normal__explode", {})
        assert hidden.error_kind is ToolErrorKind.DISABLED and "'mcp__normal__explode'" in hidden.text()
        assert engine.tool("mcp__normal__explode") is not None
        visible = {t.name for t in engine.catalog.tools()}
        assert "mcp__normal__explode" not in visible and "Bash" not in visible
        assert all(h.tool.name != "mcp__normal__explode" for h in engine.search_tools("fails reason").hits)
        bash = await engine.call_tool("Bash", {"command": "true"}, asker=allow)
        assert bash.error_kind is ToolErrorKind.DISABLED


# -- results --------------------------------------------------------------------------------
async def test_results_map_every_content_type():
    async with running([memory("normal")]) as engine:
        rich = await engine.call_tool("mcp__normal__rich", {}, asker=allow)
        assert [b.type for b in rich.content] == ["text", "image", "resource", "resource_link"]
        image, resource, link = rich.content[1:]
        assert image.mime_type == "image/png" and image.data
        assert (resource.uri, resource.text) == ("res://embedded", "embedded body")
        assert (link.uri, link.text) == ("res://readme", "readme")
        assert rich.duration_ms > 0 and rich.tool_name == "mcp__normal__rich"
        error = await engine.call_tool("mcp__normal__explode", {"reason": "kaput"}, asker=allow)
        assert error.is_error and error.error_kind is ToolErrorKind.TOOL_ERROR and "kaput" in error.text()


async def test_resource_builtins_appear_and_read():
    async with running([memory("normal"), memory("noresources", "schemas")]) as engine:
        for name in ("ListMcpResources", "ReadMcpResource"):
            tool = engine.tool(name)
            assert tool is not None and engine.catalog.is_deferred(tool)
        listing = await engine.call_tool("ListMcpResources", {})
        assert "normal: res://readme" in listing.text() and "noresources" not in listing.text()
        read = await engine.call_tool("ReadMcpResource", {"server": "normal", "uri": "res://readme"})
        assert read.content[0].text == "hello from the readme"
        missing = await engine.call_tool("ReadMcpResource", {"server": "nope", "uri": "x"})
        assert missing.is_error and "No MCP server named 'nope'" in missing.text()
        bad = await engine.call_tool("ReadMcpResource", {"server": "normal"})
        assert bad.error_kind is ToolErrorKind.INVALID_PARAMS


async def test_no_resource_tools_without_resources():
    async with running([memory("schemas")]) as engine:
        assert engine.tool("ListMcpResources") is None


async def test_a_catalog_file_tool_is_refused_before_any_question(tmp_path):
    """Found by an attacker try of ``serve --catalog``: the person was asked to allow a tool that
    could never run, and only then told so. Now the refusal comes first; arguments are still
    checked against its schema."""
    from toolscout.core.engine.facade import Engine
    from toolscout.core.settings.layers import Settings

    dump = tmp_path / "weather.json"
    dump.write_text(
        json.dumps(
            {
                "server": "weather",
                "tools": [{"name": "get_forecast", "inputSchema": {"type": "object", "required": ["city"]}}],
            }
        )
    )
    asked: list[str] = []

    async def asker(tool: ToolSpec, args: dict) -> object:
        asked.append(tool.name)
        raise AssertionError("asked about a tool that cannot run")

    engine = Engine(Settings(), catalog_paths=[dump])
    await engine.start()
    try:
        result = await engine.call_tool("mcp__weather__get_forecast", {"city": "Oslo"}, asker=asker)
        assert result.error_kind is ToolErrorKind.SERVER_FAILED
        assert "comes from a catalog file: it can be searched but not run" in result.text()
        invalid = await engine.call_tool("mcp__weather__get_forecast", {}, asker=asker)
        assert invalid.error_kind is ToolErrorKind.INVALID_PARAMS and "'city' is a required property" in invalid.text()
    finally:
        await engine.stop()
    assert asked == []
