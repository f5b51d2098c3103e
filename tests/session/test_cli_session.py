"""``toolscout -p`` and ``toolscout request`` in-process, against the fake API (no tracebacks)."""

from __future__ import annotations

import json

import pytest

from fixtures.providers import FakeModelServer, Reply, ToolCall
from toolscout.cli import run


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
                        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
                    }
                ],
            }
        )
    )
    return str(path)


def test_request_auto_mode_below_threshold_sends_everything_inline(catalog, capsys) -> None:
    assert run(["request", "--catalog", catalog, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    weather = [t for t in body["tools"] if t["name"] == "mcp__weather__get_forecast"]
    assert weather and weather[0]["input_schema"]["properties"] == {"city": {"type": "string"}}
    assert "ToolSearch" not in body["system"]
    texts = [b.get("text", "") for b in body["messages"][0]["content"]]
    assert not any("deferred" in t for t in texts[:-1])


def test_request_auto_threshold_zero_defers(catalog, capsys, monkeypatch) -> None:
    monkeypatch.setenv("TOOLSCOUT_TOOL_SEARCH", "auto:0")
    assert run(["request", "--catalog", catalog, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert "mcp__weather__get_forecast" not in [t["name"] for t in body["tools"]]


def test_request_prints_first_turn_body(catalog, capsys, monkeypatch) -> None:
    monkeypatch.setenv("TOOLSCOUT_TOOL_SEARCH", "true")
    assert run(["request", "--catalog", catalog, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in body["tools"]][-2:] == ["ToolSearch", "Write"]
    text = body["messages"][0]["content"][0]["text"]
    assert "\nmcp__weather__: get_forecast\n" in text  # the compact announcement: prefix once
    assert run(["request", "--catalog", catalog, "--strategy", "stub", "--json"]) == 0
    stub = json.loads(capsys.readouterr().out)
    assert stub["tools"][-1]["name"] == "mcp__weather__get_forecast"


def test_headless_json_transcript(catalog, capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOOLSCOUT_TOOL_SEARCH", "true")  # auto would send this tiny catalog inline
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    script = [
        Reply(tool_calls=[ToolCall("ToolSearch", {"query": "weather forecast"})]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "echo hi"})]),
        Reply(text="The forecast tool is mcp__weather__get_forecast."),
    ]
    with FakeModelServer(script) as server:
        code = run(
            [
                "-p",
                "find a weather tool",
                "--base-url",
                server.url,
                "--catalog",
                catalog,
                "--output-format",
                "json",
                "--no-default-servers",
            ]
        )
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["result"].startswith("The forecast tool")
    assert data["searches"][0]["loaded"][0] == "mcp__weather__get_forecast"
    assert [c["tool"] for c in data["tool_calls"]] == ["ToolSearch", "Bash"]
    assert data["tool_calls"][1]["error_kind"] == "permission_denied" and data["tool_calls"][1]["outcome"] == "denied"
    assert "--allowed-tools Bash" in err
    assert len(data["usage"]) == 3 and data["cache"]["prefix_hits"] == 2


def _empty_dir(tmp_path):
    """An empty catalog directory: no default servers, no tools beyond the built-ins."""
    path = tmp_path / "empty-catalog"
    path.mkdir(exist_ok=True)
    return path


def test_headless_allowed_tools_and_text_output(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    script = [Reply(tool_calls=[ToolCall("Bash", {"command": "echo from-bash"})]), Reply(text="Bash said hi.")]
    with FakeModelServer(script) as server:
        code = run(
            [
                "-p",
                "run echo",
                "--provider",
                "openai",
                "--base-url",
                server.url + "/v1",
                "--allowed-tools",
                "Bash",
                "--no-default-servers",
                "--catalog",
                str(_empty_dir(tmp_path)),
            ]
        )
        tool_result = server.bodies[1]["messages"][-1]
    out, _ = capsys.readouterr()
    assert code == 0 and out.strip() == "Bash said hi."
    assert tool_result == {"role": "tool", "tool_call_id": tool_result["tool_call_id"], "content": "from-bash"}


def test_headless_errors_are_messages_not_tracebacks(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(["-p", "hi", "--provider", "anthropic"]) == 1
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err
    assert run(["-p", "hi", "--no-default-servers"]) == 1
    assert "needs a model" in capsys.readouterr().err
    monkeypatch.setenv("ANTHROPIC_API_KEY", "bad")
    with FakeModelServer([Reply(status=401, error="invalid x-api-key")]) as server:
        code = run(
            ["-p", "hi", "--base-url", server.url, "--no-default-servers", "--catalog", str(_empty_dir(tmp_path))]
        )
    err = capsys.readouterr().err
    assert code == 1 and "rejected the API key" in err and "Traceback" not in err
    assert run(["-p", "hi", "--resume", "nope", "--no-default-servers", "--catalog", str(_empty_dir(tmp_path))]) == 1
    assert "no saved session" in capsys.readouterr().err
