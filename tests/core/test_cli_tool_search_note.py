"""``request`` and ``context`` say on stderr, once, when tool search is off (issue 14): why, and
the flag or setting that switches it on. Real subprocesses; stdout stays the plain output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CATALOGS = Path(__file__).resolve().parents[1] / "fixtures" / "tui_catalogs"


def toolscout(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLSCOUT_", "ANTHROPIC_", "OPENAI_"))}
    env.update(
        HOME=str(tmp_path),
        TOOLSCOUT_CONFIG_DIR=str(tmp_path / "config"),
        TOOLSCOUT_CACHE_DIR="off",
        TOOLSCOUT_DATA_DIR=str(tmp_path / "data"),
        TOOLSCOUT_DENSE="0",
    )
    return subprocess.run(
        [sys.executable, "-m", "toolscout", *argv, "--catalog", str(CATALOGS)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )


def notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("note: ")]


@pytest.mark.parametrize("command", [["request", "--json"], ["context", "--json"], ["context"]])
def test_auto_below_the_threshold_prints_one_note(tmp_path: Path, command: list[str]) -> None:
    done = toolscout(tmp_path, *command)
    assert done.returncode == 0, done.stderr
    (note,) = notes(done.stderr)
    assert "tool search auto: " in note and "< 10% of the 200k window, so every tool is inline" in note
    assert "--tool-search true" in note and "toolSearch.enabled" in note
    if "--json" in command:
        json.loads(done.stdout)  # the note never reaches stdout
        assert "note:" not in done.stdout


def test_request_with_tool_search_on_has_no_note_and_defers(tmp_path: Path) -> None:
    done = toolscout(tmp_path, "request", "--json", "--tool-search", "true")
    assert done.returncode == 0, done.stderr
    assert notes(done.stderr) == []
    names = [t["name"] for t in json.loads(done.stdout)["tools"]]
    assert "ToolSearch" in names and not any(n.startswith("mcp__github__") for n in names)


def test_tool_search_false_says_so(tmp_path: Path) -> None:
    done = toolscout(tmp_path, "context", "--tool-search", "false")
    (note,) = notes(done.stderr)
    assert note.startswith("note: tool search off (toolSearch.enabled = false)")
