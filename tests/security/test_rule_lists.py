"""A malformed entry in a permission list never drops the list's other rules: tried as an attacker
(or a typo) would, through ``toolscout call`` against a real stdio server that writes down every
call it gets (``recorder.py``). Each test asserts what the server received, then the warning.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from fixtures.warm_servers import server_args
from toolscout.cli import run

RECORDER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "recorder.py"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "time.jsonl"


@pytest.fixture
def cfg(tmp_path: Path, log: Path, outside_cwd: Path) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {"mcpServers": {"time": {"command": sys.executable, "args": server_args(RECORDER, "time", str(log))}}}
        )
    )
    return str(path)


def user_settings(permissions: dict) -> None:
    folder = Path(os.environ["TOOLSCOUT_CONFIG_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"permissions": permissions}))


def calls(log: Path) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [e["text"] for e in map(json.loads, lines) if e["event"] == "call"]


def call(cfg: str, *extra: str) -> int:
    return run(["call", "mcp__time__record", "--params", '{"text": "ran"}', "--mcp-config", cfg, *extra])


@pytest.mark.parametrize(
    "deny",
    [
        ["mcp__time__record", 5],
        ["mcp__time__record", None, {"x": 1}],
        "mcp__time__record",
        ["Bash(", "mcp__time__record", ""],
    ],
)
def test_a_malformed_deny_list_still_denies_its_valid_rules(cfg, log, capsys, deny):
    user_settings({"allow": ["mcp__time__*"], "deny": deny})
    assert call(cfg) == 1
    err = capsys.readouterr().err
    assert "denied" in err or "deny rule" in err, err
    assert calls(log) == []
    assert "using the default" not in err
    if isinstance(deny, list):  # each bad entry is named
        for i, entry in enumerate(deny):
            if entry != "mcp__time__record":
                assert f"permissions.deny[{i}] = {json.dumps(entry)}" in err, err
    else:
        assert "read as the one-entry list" in err


def test_a_malformed_ask_list_still_asks(cfg, log, capsys):
    user_settings({"allow": ["mcp__time__*"], "ask": ["mcp__time__record", 5]})
    assert call(cfg) == 1  # headless: asking means refused
    assert calls(log) == []
    assert "permissions.ask[1] = 5" in capsys.readouterr().err


@pytest.mark.parametrize("allow", [["time("], ["mcp__time("], "mcp__time__record", ["mcp__time__recor", 5]])
def test_a_malformed_allow_grants_nothing(cfg, log, capsys, allow):
    user_settings({"allow": allow})
    assert call(cfg) == 1
    assert calls(log) == []
    err = capsys.readouterr().err
    assert "permissions.allow" in err and "needs permission" in err, err


def test_the_valid_rules_beside_a_bad_one_apply(cfg, log, capsys):
    user_settings({"allow": ["mcp__time__record", 5, "Bash("]})
    assert call(cfg) == 0
    assert calls(log) == ["ran"]
    err = capsys.readouterr().err
    assert "permissions.allow[1] = 5: not a string" in err
    assert 'permissions.allow[2] = "Bash(": unbalanced parentheses' in err
