"""A bare permission rule naming a built-in (``Bash``, ``Read`` …) means the built-in only: an MCP
server that happens to be configured under that name gets none of it. Tried as an attacker would:
a real stdio server that writes down every call it gets (``recorder.py``) configured as ``Bash``
and as ``Read``, the person's settings allowing ``Bash`` and ``Read``, headless ``toolscout call``
(asking means refused). Each test asserts what the server received, then what the person is told.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from fixtures.warm_servers import server_args
from toolscout.cli import run
from toolscout.core.builtins.registry import builtin_tools
from toolscout.core.mcp.config import parse_entry
from toolscout.core.mcp.resources import LIST_NAME, READ_NAME
from toolscout.core.mcp.server_names import assign_server_names, builtin_name_warnings
from toolscout.core.models import ToolSpec
from toolscout.core.names import BUILTIN_TOOL_NAMES
from toolscout.core.policy.permissions import Decision, PermissionPolicy, denied_message

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))
from mcp_helpers import memory, running

RECORDER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "recorder.py"
SERVERS = ("Bash", "Read")


@pytest.fixture
def cfg(tmp_path: Path, outside_cwd: Path) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    name: {
                        "command": sys.executable,
                        "args": server_args(RECORDER, name, str(tmp_path / f"{name}.jsonl")),
                    }
                    for name in SERVERS
                }
            }
        )
    )
    return str(path)


def user_settings(permissions: dict) -> None:
    folder = Path(os.environ["TOOLSCOUT_CONFIG_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"permissions": permissions}))


def calls(tmp_path: Path, server: str) -> list[str]:
    log = tmp_path / f"{server}.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return [e["text"] for e in map(json.loads, lines) if e["event"] == "call"]


def call(cfg: str, tool: str, params: dict) -> int:
    return run(["call", tool, "--params", json.dumps(params), "--mcp-config", cfg])


@pytest.mark.parametrize("server", SERVERS)
def test_a_bare_builtin_rule_never_grants_a_server_of_that_name(cfg, tmp_path, capsys, server):
    user_settings({"allow": list(SERVERS)})
    assert call(cfg, f"mcp__{server}__record", {"text": "ran"}) == 1  # headless: it would ask, so refused
    assert calls(tmp_path, server) == []
    err = capsys.readouterr().err
    assert f"mcp__{server}__record needs permission" in err, err
    # what to write instead is the server's rule, never the built-in's name
    assert f"'mcp__{server}' for every tool of that server" in err, err
    assert f"'{server}' for every tool" not in err
    # the warning names the server, its config file and the rule form to use, once
    warning = next(line for line in err.splitlines() if f"server {server!r} in {cfg}" in line)
    assert f"the built-in tool {server}" in warning and f"'mcp__{server}'" in warning, warning
    assert err.count(f"server {server!r} in {cfg}") == 1


@pytest.mark.parametrize("server", SERVERS)
def test_the_server_rule_form_still_allows_the_server(cfg, tmp_path, capsys, server):
    user_settings({"allow": [f"mcp__{server}"]})
    assert call(cfg, f"mcp__{server}__record", {"text": "ran"}) == 0, capsys.readouterr().err
    assert calls(tmp_path, server) == ["ran"]


def test_the_bare_rule_still_allows_the_builtin(cfg, tmp_path, capsys):
    user_settings({"allow": ["Bash"]})
    marker = tmp_path / "work" / "made-by-bash"
    assert call(cfg, "Bash", {"command": f"touch {marker}"}) == 0, capsys.readouterr().err
    assert marker.exists()
    assert calls(tmp_path, "Bash") == []


def test_a_bare_builtin_deny_rule_means_the_builtin_only(cfg, tmp_path, capsys):
    user_settings({"allow": ["mcp__Bash__record"], "deny": ["Bash"]})
    assert call(cfg, "mcp__Bash__record", {"text": "ran"}) == 0, capsys.readouterr().err
    assert calls(tmp_path, "Bash") == ["ran"]
    marker = tmp_path / "work" / "made-by-bash"
    assert call(cfg, "Bash", {"command": f"touch {marker}"}) == 1
    assert not marker.exists() and "deny rule 'Bash'" in capsys.readouterr().err


def test_every_builtin_name_is_reserved():
    names = {tool.spec.name for tool in builtin_tools()} | {LIST_NAME, READ_NAME}
    assert names <= BUILTIN_TOOL_NAMES


def test_a_server_named_like_a_builtin_in_any_spelling_is_warned_about():
    configs, _ = assign_server_names(
        parse_entry(name, {"command": "x"}, "/cfg/mcp.json", {}) for name in ("Bash ", "github", "WebFetch")
    )
    warnings = builtin_name_warnings(configs)
    assert len(warnings) == 2
    assert warnings[0].startswith("server 'Bash ' in /cfg/mcp.json") and "'mcp__Bash'" in warnings[0]
    assert "'mcp__WebFetch__*'" in warnings[1]


def test_refusals_and_always_answers_name_the_server_rule(tmp_path):
    tool = ToolSpec("mcp__Bash__record", "", {}, server="Bash", original_name="record")
    policy = PermissionPolicy(allow=["Bash"])
    verdict = policy.decide(tool, args={"text": "x"})
    assert verdict.decision is Decision.ASK
    message = denied_message(tool, verdict, asked=False)
    assert "'mcp__Bash' for every tool of that server" in message and '"Bash"' not in message


async def test_always_for_a_server_tool_remembers_the_server_rule_and_the_builtin_still_asks():
    """The engine over an in-memory server named ``Bash``: "always" for its tool adds that tool's
    own rule (never ``Bash``), so the built-in Bash still asks; ``alwaysLoad`` advice for the
    server names ``mcp__Bash``, which matches it (a bare ``Bash`` would not)."""
    from toolscout.core.catalog.registry import matches_pattern
    from toolscout.core.models import ToolErrorKind

    async def always(tool, params):
        return "always"

    async with running([memory("Bash", "normal")]) as engine:
        assert (await engine.call_tool("mcp__Bash__echo", {"text": "hi"}, asker=always)).text() == "hi"
        assert engine.policy.session_allow == ["mcp__Bash__echo"]
        refused = await engine.call_tool("Bash", {"command": "true"})  # headless: asking means refused
        assert refused.error_kind is ToolErrorKind.PERMISSION_DENIED
        for _ in range(3):
            await engine.call_tool("mcp__Bash__echo", {"text": "again"})
        report = engine.context_report(usage_counts={"mcp__Bash__echo": 4})
        advice = next(s for s in report.suggestions if "alwaysLoad" in s)
        assert '["mcp__Bash"]' in advice, advice
        assert matches_pattern(engine.tool("mcp__Bash__echo"), "mcp__Bash")
        assert not matches_pattern(engine.tool("mcp__Bash__echo"), "Bash")
