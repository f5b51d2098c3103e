"""Issue 21 item 1 from the command line: ``python -m toolscout -p`` in a subprocess, as a person
runs it, over every cell of the mode × strategy × provider matrix (:mod:`inline_matrix`), one
scripted turn each (``a`` and ``c`` in one message, the gate's retry, ToolSearch, ``b``).

The mode comes from ``TOOLSCOUT_TOOL_SEARCH``, the strategy from ``--strategy``, the rest from the
person's settings file; the ledger fixture server's log says what reached it. Offline there is no
``-p``: it says it needs a model, and nothing is started (the person running a tool offline is
``test_inline_calls.py`` and the app's ``tests/tui/test_inline_calls_app.py``). The README's example (``toolscout -p
"what time is it in Tokyo?"`` on the embedded default servers, tool search ``auto``) is the last
test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fixtures.inline_matrix import (
    CELLS,
    MODES,
    NO_SEARCH,
    NOT_LOADED,
    PINNED,
    RECORD,
    cell_id,
    defers,
    expected_calls,
    gated,
    ledger_answer,
    mcp_config_file,
    one_turn_script,
    sent_results,
    settings_overrides,
)
from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.servers.ledger import calls

SRC = Path(__file__).resolve().parents[2] / "src"


def _nested(dotted: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in dotted.items():
        *parents, last = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out


def _toolscout(work: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    # This checkout's sources, after a PYTHONPATH given to the tests (which pytest itself imports).
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(SRC)]))
    full = {**os.environ, **env, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-m", "toolscout", *argv], cwd=work, env=full, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def person(tmp_path: Path, outside_cwd: Path):
    """``(work folder, ledger log, --mcp-config file)`` for one cell (the person's settings file
    is written by :func:`_settings`, in the hermetic config dir of ``tests/conftest.py``)."""
    log = tmp_path / "ledger.jsonl"
    return outside_cwd, log, mcp_config_file(tmp_path, log)


def _settings(mode: str, strategy: str) -> None:
    dotted = {
        k: v
        for k, v in settings_overrides(mode, strategy).items()
        if k not in ("toolSearch.enabled", "session.strategy")
    }  # given by env and flag below
    path = Path(os.environ["TOOLSCOUT_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_nested(dotted)), encoding="utf-8")


@pytest.mark.parametrize("cell", CELLS, ids=cell_id)
def test_headless_direct_calls_of_inline_tools_reach_the_server(person, cell) -> None:
    mode, strategy, provider = cell
    work, log, config = person
    tag = cell_id(cell)
    _settings(mode, strategy)
    env = {"TOOLSCOUT_TOOL_SEARCH": MODES[mode]}
    if provider == "offline":  # no -p without a model: it says so, and starts nothing
        proc = _toolscout(work, env, "-p", "record a line", "--mcp-config", str(config), "--strategy", strategy)
        assert proc.returncode == 1 and "toolscout -p needs a model" in proc.stderr
        assert calls(log) == []
        return
    env[f"{provider.upper()}_API_KEY"] = "test-key"
    with FakeModelServer(one_turn_script(mode, strategy, tag)) as model:
        base = model.url if provider == "anthropic" else model.url + "/v1"
        proc = _toolscout(
            work,
            env,
            "-p",
            "record lines in the ledger",
            "--provider",
            provider,
            "--base-url",
            base,
            "--mcp-config",
            str(config),
            "--strategy",
            strategy,
            "--output-format",
            "json",
        )
        bodies = model.bodies
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["result"] == "done" and out["strategy"] == strategy
    received = sorted(calls(log), key=lambda c: c["arguments"]["text"])
    assert received == sorted(expected_calls(tag), key=lambda c: c["arguments"]["text"])  # each once
    results = sent_results(bodies[-1])
    assert results[0] == ledger_answer("pinned", tag, "a")  # (a) the pinned tool, called directly
    if gated(mode, strategy):  # (c) a stub called before any search: its definition, then it ran
        assert NOT_LOADED in results[1] and results[2] == ledger_answer("record", tag, "c")
        searched = results[3]
    else:  # (c) inline, or recorded as ExecuteTool: it ran at once
        assert results[1] == ledger_answer("record", tag, "c")
        searched = results[2]
    assert (NO_SEARCH in searched) is not defers(mode)  # ToolSearch where nothing is deferred: said so
    assert results[-1] == ledger_answer("record", tag, "b")  # (b)
    outcomes = {(c["tool"], c["outcome"]) for c in out["tool_calls"]}
    assert (RECORD, "ok") in outcomes and (PINNED, "ok") in outcomes
    assert ((RECORD, "rejected") in outcomes) is gated(mode, strategy)


def test_the_readme_example_runs_the_time_tool_with_tool_search_auto(outside_cwd: Path) -> None:
    """``toolscout -p "what time is it in Tokyo?" --allowed-tools 'mcp__time__*'`` (README) on
    the embedded default servers: ``auto`` stays below its threshold, so the time tool is in the
    tools array and the model calls it directly. It used to be ``rejected`` / ``not_loaded``."""
    call = ToolCall("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})
    with FakeModelServer([Reply(tool_calls=[call]), Reply(text="It is evening in Tokyo.")]) as model:
        proc = _toolscout(
            outside_cwd,
            {"ANTHROPIC_API_KEY": "test-key", "TOOLSCOUT_RANKER": "bm25f"},
            "-p",
            "what time is it in Tokyo?",
            "--allowed-tools",
            "mcp__time__*",
            "--base-url",
            model.url,
            "--output-format",
            "json",
        )
        bodies = model.bodies
    assert proc.returncode == 0, proc.stderr
    assert "mcp__time__get_current_time" in [t["name"] for t in bodies[0]["tools"]]
    log = json.loads(proc.stdout)["tool_calls"]
    assert [(c["tool"], c["outcome"]) for c in log] == [("mcp__time__get_current_time", "ok")]
    answer = json.loads(sent_results(bodies[1])[0])  # what the time server wrote, as the model got it
    assert answer["timezone"] == "Asia/Tokyo" and answer["datetime"].endswith("+09:00")
