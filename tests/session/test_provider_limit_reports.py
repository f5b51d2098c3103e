"""Provider limits (issue 21 item 2): ``provider.maxTools`` and what ``toolscout context`` says.

The CLI runs in process over a real stdio fixture server of 140 tools
(``tests/fixtures/servers/late.py``): 149 tools inline with the built-ins, more than the 128
OpenAI accepts in one request. Sessions talk to the loopback OpenAI API
(``tests/fixtures/providers``), which refuses more than 128 tools like the real one, or, standing
in for a local OpenAI-compatible server, more than it is told to accept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from session_helpers import (
    LATE,
    Recorder,
    limit_engine,
    logged,
    names_of,
    provider_for,
    run_turn,
    search_then_execute,
    wide_config,
)

from fixtures.providers import FakeModelServer, Reply
from toolscout.core.session.events import ToolSearchSwitched
from toolscout.core.session.session import Session


def mcp_json(tmp_path: Path, tools: int = 140) -> str:
    cfg = wide_config(tmp_path / "calls.jsonl", tools=tools)
    assert str(LATE) in cfg.args
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"wide": {"command": cfg.command, "args": list(cfg.args)}}}))
    return str(path)


def context(capsys: Any, tmp_path: Path, *flags: str, json_out: bool = True) -> Any:
    from toolscout.cli import run

    argv = ["--provider", "openai", "--no-default-servers", "context", "--mcp-config", mcp_json(tmp_path), *flags]
    assert run([*argv, "--json"] if json_out else argv) == 0
    out = capsys.readouterr().out
    return json.loads(out) if json_out else out


@pytest.mark.parametrize("mode", ["auto", "false"])
def test_context_says_when_the_limit_decided(tmp_path, capsys, outside_cwd, mode) -> None:
    report = context(capsys, tmp_path, "--tool-search", mode)
    decision = report["mode"]
    assert decision["tool_limit"] == {
        "provider": "openai",
        "max_tools": 128,
        "source": "provider",
        "tools": 149,
        "limited": True,
    }
    assert decision["defer"] is True
    assert "149 tools > the 128 tools openai accepts in one request" in decision["reason"]
    (wide,) = [row for row in report["servers"] if row["server"] == "wide"]
    if mode == "auto":
        assert decision["reason"].startswith(
            "149 tools > the 128 tools openai accepts in one request, so tools are deferred"
        )
        assert (wide["deferred"], wide["loaded"]) == (140, 0)
    else:  # off: the first 117 of the server's tools fit inline beside the 9 built-ins and 2 others
        assert decision["reason"].startswith("tool search is off, but 149 tools > the 128 tools")
        assert (wide["deferred"], wide["loaded"]) == (23, 117)
        assert decision["reason"] in report["warnings"]
    text = context(capsys, tmp_path, "--tool-search", mode, json_out=False)
    assert (
        "tool limit: the 128 tools openai accepts in one request; 149 tools inline would be more than fit, "
        "so the limit decided"
    ) in text
    assert "149 tools > the 128 tools openai accepts in one request" in text


def test_context_with_room_says_the_tools_fit(tmp_path, capsys, outside_cwd) -> None:
    from toolscout.cli import run

    argv = ["--provider", "openai", "--no-default-servers", "context", "--mcp-config", mcp_json(tmp_path, 20), "--json"]
    assert run(argv) == 0
    decision = json.loads(capsys.readouterr().out)["mode"]
    assert decision["tool_limit"]["limited"] is False and decision["defer"] is False
    assert decision["tool_limit"]["tools"] == 29


def user_settings(home: Path, data: dict[str, Any]) -> None:
    path = home / "config" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_provider_max_tools_in_settings_overrides_the_limit(tmp_path, capsys, outside_cwd, hermetic_env) -> None:
    user_settings(hermetic_env, {"provider": {"maxTools": 200}})
    decision = context(capsys, tmp_path)["mode"]
    assert decision["tool_limit"] == {
        "provider": "openai",
        "max_tools": 200,
        "source": "provider.maxTools",
        "tools": 149,
        "limited": False,
    }
    assert decision["defer"] is False  # auto, and the schemas are small: inline, as the setting allows


def test_provider_max_tools_from_the_environment(tmp_path, capsys, outside_cwd, monkeypatch) -> None:
    monkeypatch.setenv("TOOLSCOUT_MAX_TOOLS", "100")
    decision = context(capsys, tmp_path)["mode"]
    assert decision["tool_limit"]["max_tools"] == 100 and decision["tool_limit"]["limited"] is True
    assert "149 tools > the 100 tools provider.maxTools allows in one request" in decision["reason"]


@pytest.mark.parametrize("bad", [0, 1, "many", 2.5, True, 1_000_000])
def test_an_invalid_max_tools_falls_back_with_a_warning(tmp_path, capsys, outside_cwd, hermetic_env, bad) -> None:
    user_settings(hermetic_env, {"provider": {"maxTools": bad}})
    report = context(capsys, tmp_path)
    assert report["mode"]["tool_limit"]["max_tools"] == 128 and report["mode"]["tool_limit"]["source"] == "provider"
    (warning,) = [w for w in report["warnings"] if "provider.maxTools" in w]
    assert json.dumps(bad) in warning or str(bad) in warning


async def test_a_lower_max_tools_caps_what_the_session_sends(tmp_path) -> None:
    log = tmp_path / "calls.jsonl"
    engine = limit_engine(tmp_path, "openai", "false", "stub", wide_config(log), **{"provider.maxTools": 50})
    _, outcome, bodies = await run_turn(engine, "openai", search_then_execute("mcp__wide__op_0139"))
    assert outcome.error is None and outcome.text == "done", outcome
    assert [len(names_of(b)) for b in bodies] == [50, 50, 50]
    assert logged(log) == [{"tool": "op_0139", "arguments": {}}]


async def test_a_higher_max_tools_for_a_local_server_that_accepts_more(tmp_path) -> None:
    """An OpenAI-compatible server that takes 300 tools: with provider.maxTools 300 and tool
    search off, every tool goes inline, as the person asked."""
    engine = limit_engine(
        tmp_path,
        "openai",
        "false",
        "execute-proxy",
        wide_config(tmp_path / "calls.jsonl"),
        **{"provider.maxTools": 300},
    )
    session, outcome, (body,) = await run_turn(engine, "openai", [Reply(text="done")], "hello", openai_max_tools=300)
    assert outcome.text == "done"
    names = names_of(body)
    assert len(names) == 149 and "mcp__wide__op_0139" in names and "ToolSearch" not in names
    assert not any(w.startswith("provider limit") for w in engine.warnings)
    from toolscout.core.tokens import ToolLimit

    decision = session.mode_decision  # the session took the setting's limit, and every tool fits it
    assert decision is not None and decision.limit == ToolLimit(300, "openai", "provider.maxTools")
    assert not decision.limited and decision.tool_count == 149


async def test_a_lower_limit_mid_session_rebuilds_the_array_once(tmp_path) -> None:
    """A stub session of 151 tools against a server that takes 300 (provider.maxTools 300);
    then provider.maxTools drops to 100 (as a change in the settings screen does): the next
    request carries 100 tools, said once, and the tool past the new limit still runs."""
    log = tmp_path / "calls.jsonl"
    engine = limit_engine(tmp_path, "openai", "true", "stub", wide_config(log), **{"provider.maxTools": 300})
    await engine.start()
    try:
        assert await engine.wait_for_servers(20)
        script = [Reply(text="one"), *search_then_execute("mcp__wide__op_0139")]
        with FakeModelServer(script, openai_max_tools=300) as server:
            session = Session(engine, provider=provider_for("openai", server.url), persist=False)
            rec = Recorder()
            session.subscribe(rec)
            assert (await session.send("hello")).text == "one"
            assert session.apply_settings(engine.settings.with_overrides({"provider.maxTools": 100})) == []
            outcome = await session.send("run the last record operation")
            bodies = server.bodies
    finally:
        await engine.stop()
    assert outcome.error is None and outcome.text == "done", outcome
    assert [len(names_of(b)) for b in bodies] == [151, 100, 100, 100]  # 9 loaded + 142 stubs, then cut
    (switch,) = rec.of(ToolSearchSwitched)
    assert switch.notice.startswith(
        "The tools array held 151 tools, more than the 100 tools provider.maxTools "
        "allows in one request, so it was rebuilt"
    )
    assert logged(log) == [{"tool": "op_0139", "arguments": {}}]
