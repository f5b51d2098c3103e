"""Small things a Claude Code user expects of the CLI (issue 24 item 6e, 6i), run as a newcomer
runs them (the ``toolscout`` fixture of ``tests/conftest.py``: a subprocess, a fresh ``HOME``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CATALOGS = Path(__file__).resolve().parents[1] / "fixtures" / "tui_catalogs"


def test_search_explain_prints_each_hit_once(toolscout) -> None:
    """``--explain`` printed every hit's name and score twice (the ranked line, then the
    explanation's own head line); now the explanation follows the one ranked line."""
    proc = toolscout("search", "create issue", "--explain", "--limit", "3", "--catalog", str(CATALOGS / "github.json"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    hits = [line.split(". ", 1)[1].split()[0] for line in lines if line[:5].strip().rstrip(".").isdigit()]
    assert len(hits) == 3
    for name in hits:
        assert proc.stdout.count(name) == 1, (name, proc.stdout)
    assert "matched:" in proc.stdout and "weighted" in proc.stdout  # still explained


@pytest.mark.parametrize(
    ("flag", "word", "internal"), [("true", "on", "tst"), ("auto", "auto", "tst-auto"), ("false", "off", "standard")]
)
def test_context_json_says_the_mode_in_the_uis_words(toolscout, flag: str, word: str, internal: str) -> None:
    """``mode.tool_search`` is on/auto/off as the status bar and welcome say it; ``mode.mode``
    keeps the internal name (the stable contract scripts already read)."""
    proc = toolscout("context", "--json", "--tool-search", flag, "--catalog", str(CATALOGS / "github.json"))
    assert proc.returncode == 0, proc.stderr
    mode = json.loads(proc.stdout)["mode"]
    assert mode["tool_search"] == word and mode["mode"] == internal
    assert mode["defer"] is (flag == "true")
