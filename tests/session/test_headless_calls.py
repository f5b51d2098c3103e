"""``toolscout -p --output-format json`` lists every tool call the model made, with its outcome:
rejected and invalid ExecuteTool calls included (loopback provider, real SDKs)."""

from __future__ import annotations

import json

import pytest

from fixtures.providers import FakeModelServer, Reply, ToolCall
from toolscout.cli import run

FORECAST = "mcp__weather__get_forecast"


@pytest.fixture
def catalog(tmp_path):
    path = tmp_path / "weather.json"
    path.write_text(
        json.dumps(
            {
                "server": "weather",
                "tools": [
                    {
                        "name": "get_forecast",
                        "description": "Get the weather forecast for a city.",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                            "required": ["city"],
                        },
                    }
                ],
            }
        )
    )
    return str(path)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_every_call_is_listed_with_its_outcome(catalog, capsys, monkeypatch, tmp_path, provider):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("TOOLSCOUT_TOOL_SEARCH", "true")
    calls = [
        ToolCall("ToolSearch", {"query": f"select:{FORECAST}"}),
        ToolCall("ExecuteTool", {"tool_name": FORECAST, "params": {"city": 5}}),  # invalid arguments
        ToolCall("ExecuteTool", {"params": {"city": "Oslo"}}),  # no tool_name
        ToolCall("ExecuteTool", {"tool_name": "ToolSearch", "params": {"query": "x"}}),  # recursion refused
        ToolCall("ExecuteTool", {"tool_name": "mcp__weather__nope", "params": {}}),  # unknown tool
        ToolCall("made_up_tool", {"a": 1}),  # invented name
        ToolCall("Bash", {"command": "echo hi"}),  # denied (headless)
    ]
    script = [Reply(tool_calls=calls), Reply(text="done")]
    with FakeModelServer(script) as server:
        base = server.url if provider == "anthropic" else server.url + "/v1"
        code = run(
            [
                "-p",
                "go",
                "--provider",
                provider,
                "--base-url",
                base,
                "--catalog",
                catalog,
                "--output-format",
                "json",
                "--no-default-servers",
            ]
        )
    out, err = capsys.readouterr()
    assert code == 0, err
    log = json.loads(out)["tool_calls"]
    used = [
        c
        for m in json.loads(out)["messages"]
        if m["role"] == "assistant"
        for c in m["content"]
        if c["type"] == "tool_use"
    ]
    assert [c["id"] for c in log] == [u["id"] for u in used] and len(log) == len(calls)
    by_arg = [(c["name"], c["tool"], c["outcome"], c["error_kind"]) for c in log]
    assert by_arg == [
        ("ToolSearch", "ToolSearch", "ok", None),
        ("ExecuteTool", FORECAST, "invalid", "invalid_params"),
        ("ExecuteTool", "ExecuteTool", "invalid", "invalid_params"),
        ("ExecuteTool", "ToolSearch", "invalid", "invalid_params"),
        ("ExecuteTool", "mcp__weather__nope", "rejected", "unknown_tool"),
        ("ExecuteTool", "made_up_tool", "rejected", "unknown_tool"),
        ("Bash", "Bash", "denied", "permission_denied"),
    ]
    assert log[1]["params"] == {"city": 5} and "5 is not of type 'string'" in log[1]["output"]
    assert log[2]["arguments"] == {"params": {"city": "Oslo"}} and "needs tool_name" in log[2]["output"]
    assert all(c["is_error"] for c in log[1:])


def test_openai_strict_nulls_for_optional_arguments_are_dropped_before_the_call(capsys, monkeypatch, tmp_path):
    """Strict mode makes the model fill every property (null for the optional ones); the call
    still validates against the real schema and runs."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / ".toolscout").mkdir()
    (tmp_path / ".toolscout" / "settings.json").write_text(json.dumps({"provider": {"openaiStrict": True}}))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    empty = tmp_path / "empty"
    empty.mkdir()
    script = [Reply(tool_calls=[ToolCall("Glob", {"pattern": "*.txt", "path": None})]), Reply(text="done")]
    with FakeModelServer(script) as server:
        code = run(
            [
                "-p",
                "list",
                "--provider",
                "openai",
                "--base-url",
                server.url + "/v1",
                "--catalog",
                str(empty),
                "--output-format",
                "json",
                "--no-default-servers",
                "--allowed-tools",
                "Glob",
            ]
        )
        glob = next(t["function"] for t in server.requests[0][1]["tools"] if t["function"]["name"] == "Glob")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert glob["strict"] is True and glob["parameters"]["properties"]["path"]["type"] == ["string", "null"]
    call = json.loads(out)["tool_calls"][0]
    assert call["outcome"] == "ok" and call["params"] == {"pattern": "*.txt"} and "a.txt" in call["output"]
