"""Auto tool search with servers that connect late and large (issue 12 item 1).

A fixture server (``tests/fixtures/servers/late.py``) holds back ``initialize`` until the test
creates its gate file, so "the person typed before the servers finished connecting" is a fact of
the test, not a race. Assertions are on the request bodies the loopback model API received.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from session_helpers import Recorder, provider_for, user_texts

from fixtures.providers import FakeModelServer, Reply
from fixtures.warm_servers import server_args
from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.facade import Engine
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.serialize import dumps
from toolscout.core.session.events import ToolSearchSwitched
from toolscout.core.session.reminders import rebuild_state
from toolscout.core.session.session import Session
from toolscout.core.settings.layers import Settings
from toolscout.core.tokens import default_counter

LATE = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "late.py"
#: A 20,000-token window at 10%: 2,000 tokens of deferrable schemas switch tool search on. The
#: built-ins' deferrable tools stay below it; the late server (30 tools x 6 params) is far above.
WINDOW = 20_000
THRESHOLD = 2_000


def late_config(gate: Path, name: str = "late", tools: int = 30, props: int = 6) -> ServerConfig:
    return ServerConfig(
        name,
        "stdio",
        command=sys.executable,
        args=tuple(server_args(LATE, name, "--tools", str(tools), "--props", str(props), "--gate", str(gate))),
        source="test",
    )


def make_engine(tmp_path: Path, *configs: ServerConfig) -> Engine:
    settings = Settings().with_overrides({"toolSearch.enabled": "auto", "provider.contextWindow": WINDOW}, "test")
    return Engine(
        settings,
        builtins=builtin_tools(),
        core_names=core_tool_names(),
        project_dir=tmp_path,
        mcp_servers=list(configs),
    )


def inline_deferrable_tokens(engine: Engine, body: dict[str, Any]) -> int:
    """Tokens of the tools a request sends in full that the catalog would defer."""
    counter = default_counter()
    out = 0
    for definition in body["tools"]:
        tool = engine.catalog.get(definition["name"])
        if tool is not None and engine.catalog.is_deferred(tool):
            out += counter.count(dumps(definition))
    return out


async def test_early_first_message_then_large_late_server_switches_once(tmp_path) -> None:
    gate = tmp_path / "gate"
    engine = make_engine(tmp_path, late_config(gate))
    await engine.start()
    try:
        script = [Reply(text="one"), Reply(text="two"), Reply(text="three")]
        with FakeModelServer(script) as server:
            session = Session(engine, provider=provider_for("anthropic", server.url))
            rec = Recorder()
            session.subscribe(rec)
            assert engine.pending_servers() == ["late"]
            assert (await session.send("hello")).text == "one"
            decision = session.mode_decision
            assert decision is not None and not decision.defer and decision.unknown == ("late",)
            assert "deciding" in decision.reason
            gate.touch()
            assert await engine.wait_for_servers(20)
            assert len(engine.catalog.server_tools("late")) == 30
            assert (await session.send("again")).text == "two"
            assert (await session.send("and again")).text == "three"
            bodies = [body for _, body in server.requests]
    finally:
        await engine.stop()
    _, second, third = bodies
    names = [[t["name"] for t in b["tools"]] for b in bodies]
    # tool search off: every tool inline, and no dead-weight ToolSearch / ExecuteTool
    assert "ToolSearch" not in names[0] and "ExecuteTool" not in names[0]
    # after the switch: deferral on, the late server's tools announced, not inline
    assert "ToolSearch" in names[1] and "ExecuteTool" in names[1]
    assert not any(n.startswith("mcp__late__") for n in names[1])
    announced = rebuild_state(session.messages).announced
    assert "mcp__late__op_0029" in announced
    assert any("mcp__late__: op_0000 op_0001" in t for t in user_texts(second))
    # never a request whose inline schemas exceed the threshold
    assert all(inline_deferrable_tokens(engine, b) <= THRESHOLD for b in bodies)
    # one switch: one announced notice, and the prefix is stable again afterwards
    switches = rec.of(ToolSearchSwitched)
    assert len(switches) == 1 and "prompt-cache" in switches[0].notice
    assert third["tools"] == second["tools"] and third["system"] == second["system"]
    records = [json.loads(line) for line in session.store.path.read_text().splitlines()]
    assert [r["name"] for r in records if r.get("type") == "event" and r["name"] == "tool_search_switched"] == [
        "tool_search_switched"
    ]
    assert [r["mode"]["defer"] for r in records if r["type"] == "projection"] == [False, True]


async def connect_once(tmp_path: Path, monkeypatch: Any) -> tuple[Path, int]:
    """A previous run: the late server connects (gate open); returns the gate and its size."""
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(tmp_path / "cache"))
    gate = tmp_path / "gate"
    gate.touch()
    engine = make_engine(tmp_path, late_config(gate))
    await engine.start()
    try:
        assert await engine.wait_for_servers(20)
        return gate, engine.server_schema_tokens("late")
    finally:
        await engine.stop()


async def test_last_known_size_decides_before_the_server_connects(tmp_path, monkeypatch) -> None:
    gate, size = await connect_once(tmp_path, monkeypatch)
    assert size > THRESHOLD
    assert (tmp_path / "cache" / "server-sizes.json").is_file()
    gate.unlink()  # the next run: the server is slow again
    engine = make_engine(tmp_path, late_config(gate))
    await engine.start()
    try:
        assert engine.pending_sizes() == {"late": size}
        with FakeModelServer([Reply(text="ok")]) as server:
            session = Session(engine, provider=provider_for("anthropic", server.url), persist=False)
            assert (await session.send("hello")).text == "ok"
            body = server.requests[0][1]
        decision = session.mode_decision
        assert decision is not None and decision.defer and decision.estimated_tokens == size
        assert "ToolSearch" in [t["name"] for t in body["tools"]]
        assert "late" in engine.context_report().to_json()["pending"]
    finally:
        gate.touch()
        await engine.stop()


async def test_a_changed_server_config_does_not_inherit_a_size(tmp_path, monkeypatch) -> None:
    await connect_once(tmp_path, monkeypatch)
    other = make_engine(tmp_path, late_config(tmp_path / "other-gate", tools=2))
    assert other.sizes.get("late") is None
    assert other.pending_sizes() == {"late": None}


def _mcp_json(tmp_path: Path, gate: Path) -> str:
    cfg = late_config(gate)
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"late": {"command": cfg.command, "args": list(cfg.args)}}}))
    return str(path)


def test_headless_and_request_defer_for_a_large_server(tmp_path, capsys, monkeypatch, outside_cwd) -> None:
    monkeypatch.setenv("TOOLSCOUT_TOOL_SEARCH", "auto:1")  # 1% of 200k: 2,000 tokens
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("TOOLSCOUT_NATIVE", "off")  # the portable path (native: tests/session/test_native_*.py)
    gate = tmp_path / "gate"
    gate.touch()
    config = _mcp_json(tmp_path, gate)
    from toolscout.cli import run

    with FakeModelServer([Reply(text="done")]) as server:
        code = run(
            [
                "-p",
                "hi",
                "--base-url",
                server.url,
                "--mcp-config",
                config,
                "--no-default-servers",
                "--output-format",
                "json",
            ]
        )
        _, err = capsys.readouterr()
        assert code == 0, err
        headless = server.requests[0][1]
    assert run(["--no-default-servers", "request", "--mcp-config", config, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    for body in (headless, printed):
        names = [t["name"] for t in body["tools"]]
        assert "ToolSearch" in names and not any(n.startswith("mcp__late__") for n in names)
        assert any("mcp__late__: op_0000" in t for t in user_texts(body))


def test_tool_search_off_leaves_search_tools_out(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("TOOLSCOUT_TOOL_SEARCH", "false")
    gate = tmp_path / "gate"
    gate.touch()
    from toolscout.cli import run

    assert run(["--no-default-servers", "request", "--mcp-config", _mcp_json(tmp_path, gate), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    names = [t["name"] for t in body["tools"]]
    assert "mcp__late__op_0029" in names and "ToolSearch" not in names and "ExecuteTool" not in names
    assert not any("deferred" in t for t in user_texts(body))


async def test_inline_session_records_an_invented_tool_name_through_execute_tool(tmp_path) -> None:
    engine = make_engine(tmp_path)
    await engine.start()
    try:
        from fixtures.providers import ToolCall

        script = [Reply(tool_calls=[ToolCall("mcp__nowhere__thing", {"a": 1})]), Reply(text="sorry")]
        with FakeModelServer(script) as server:
            session = Session(engine, provider=provider_for("anthropic", server.url), persist=False)
            outcome = await session.send("do the thing")
            first, second = (body for _, body in server.requests)
    finally:
        await engine.stop()
    assert outcome.text == "sorry" and outcome.error is None
    assert "ExecuteTool" not in [t["name"] for t in first["tools"]]
    assert [t["name"] for t in second["tools"]][-1] == "ExecuteTool"  # appended, nothing reordered
    assert second["tools"][:-1] == first["tools"]
    use = second["messages"][1]["content"][0]
    assert use["name"] == "ExecuteTool" and use["input"]["tool_name"] == "mcp__nowhere__thing"


def test_bridge_shows_the_switch_as_a_chat_notice() -> None:
    from toolscout.tui import messages as m
    from toolscout.tui.bridge import SessionTranslator

    message = SessionTranslator()(ToolSearchSwitched("Tool search switched on: ...", "reason", 2))
    assert isinstance(message, m.WarningRaised) and message.text.startswith("Tool search switched on")
