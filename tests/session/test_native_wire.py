"""Wire fidelity of native deferral (issue 22 item 5): ``request --json`` prints exactly what would
be sent, native fields included; ``context`` says which path and why; and the loopback API's
rules answer 400 exactly where the real API would."""

from __future__ import annotations

import json

import pytest

from fixtures.providers.wire_rules import anthropic_violation
from toolscout.cli import run


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOOLSCOUT_TOOL_SEARCH", "true")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    path = tmp_path / "weather.json"
    path.write_text(
        json.dumps(
            {
                "server": "weather",
                "tools": [
                    {
                        "name": "get_forecast",
                        "description": "Get the weather forecast for a city.",
                        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
                    }
                ],
            }
        )
    )
    return str(path)


@pytest.mark.parametrize(("model", "native"), [("claude-sonnet-4-5", True), ("claude-3-5-haiku", False)])
def test_request_json_prints_the_native_fields_for_a_model_that_supports_them(
    catalog, capsys, model: str, native: bool
) -> None:
    assert run(["--provider", "anthropic", "--model", model, "request", "--catalog", catalog, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    tools = {t["name"]: t for t in body["tools"]}
    assert ("mcp__weather__get_forecast" in tools) is native
    if native:
        assert tools["mcp__weather__get_forecast"]["defer_loading"] is True
        assert tools["mcp__weather__get_forecast"]["input_schema"]["properties"] == {"city": {"type": "string"}}
        assert "ExecuteTool" not in tools and "defer_loading" not in tools["ToolSearch"]
    else:
        assert "ExecuteTool" in tools
    assert anthropic_violation(body) is None


def test_native_off_keeps_the_portable_path(catalog, capsys, monkeypatch) -> None:
    monkeypatch.setenv("TOOLSCOUT_NATIVE", "off")
    assert (
        run(["--provider", "anthropic", "--model", "claude-sonnet-4-5", "request", "--catalog", catalog, "--json"]) == 0
    )
    assert not any("defer_loading" in t for t in json.loads(capsys.readouterr().out)["tools"])


def test_context_says_which_path_and_why(catalog, capsys) -> None:
    assert run(["--provider", "anthropic", "context", "--model", "claude-sonnet-4-5", "--catalog", catalog]) == 0
    assert "deferral path: native tool search: claude-sonnet-4-5 supports defer_loading" in capsys.readouterr().out
    assert (
        run(["--provider", "anthropic", "context", "--model", "claude-sonnet-4-5", "--catalog", catalog, "--json"]) == 0
    )
    assert json.loads(capsys.readouterr().out)["native"]["native"] is True


def _body(tools, content=None, is_error=False):
    messages = [{"role": "user", "content": "hi"}]
    if content is not None:
        messages += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": content,
                        **({"is_error": True} if is_error else {}),
                    }
                ],
            },
        ]
    return {"tools": tools, "messages": messages}


SEARCH = {"name": "ToolSearch", "input_schema": {"type": "object"}}
DEFERRED = {"name": "x", "input_schema": {"type": "object"}, "defer_loading": True}
REF = {"type": "tool_reference", "tool_name": "x"}


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        (_body([DEFERRED]), "At least one tool must have defer_loading=false"),
        (_body([SEARCH, {**DEFERRED, "cache_control": {"type": "ephemeral"}}]), "cannot have both defer_loading=true"),
        (_body([SEARCH, DEFERRED], [{"type": "tool_reference", "tool_name": "y"}]), "Tool reference 'y' not found"),
        (_body([SEARCH, DEFERRED], [REF, {"type": "text", "text": "loaded"}]), "cannot be mixed"),
        (_body([SEARCH, DEFERRED], [REF], is_error=True), "must be type text if is_error is true"),
        (_body([SEARCH, DEFERRED], [REF]), None),
        (_body([SEARCH, {**DEFERRED, "defer_loading": False}], [REF]), None),  # a loaded tool may be referenced
    ],
)
def test_the_loopback_api_refuses_what_the_real_api_refuses(body, refused) -> None:
    got = anthropic_violation(body)
    assert (got is None) if refused is None else (got is not None and refused in got)
