"""Issue 10 item 5: a server's text reaches the terminal inert on every CLI path.

A fixture server puts OSC 52 (clipboard), OSC 0 (title), CSI 2J (clear screen) and a C1 CSI in
its instructions, descriptions, stderr and results, and a lone carriage return and bidi controls
(U+202E ...) in a tool's name, description and result. Each command runs as a real subprocess and
the test asserts on the bytes it wrote: no ESC, no C1 CSI, no carriage return, no raw bidi
control (shown as ``\\u202e``), while the text around them arrives; ``--json`` stays exact.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolscout
from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.servers.hostile_output import EVIL, REPORT, TRICK
from fixtures.warm_servers import server_args
from toolscout.core.sanitize import dumps_json, strip_controls

SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "hostile_output.py"
SRC = str(Path(toolscout.__file__).resolve().parents[1])
#: What the terminal shows for TRICK: the carriage return gone, each bidi control as an escape.
SHOWN = r"RED  overwrite \u202etxt.exe\u202c \u2066iso\u2069 \u2067x\u2069 \u202ay\u202b\u202d \u200e\u200f"
BIDI_BYTES = [ch.encode() for ch in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"]


@pytest.fixture
def cfg(tmp_path: Path) -> str:
    path = tmp_path / "hostile.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "hostile": {"command": sys.executable, "args": server_args(SERVER)},
                    "broken": {"command": sys.executable, "args": server_args(SERVER, "crash")},
                }
            }
        )
    )
    return str(path)


def cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[bytes, bytes]:
    """Run ``toolscout ARGS`` in a subprocess (in ``tmp_path/work``: the config files in
    ``tmp_path`` are the person's own, outside the project folder); its stdout and stderr bytes,
    checked to be inert."""
    full_env = {**os.environ, "PYTHONPATH": SRC, **(env or {})}
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "toolscout", *args],
        cwd=work,
        env=full_env,
        capture_output=True,
        timeout=180,
        check=False,
    )
    for stream in (proc.stdout, proc.stderr):
        assert b"\x1b" not in stream and "\x9b".encode() not in stream, stream
        assert b"\r" not in stream and not [b for b in BIDI_BYTES if b in stream], stream
    return proc.stdout, proc.stderr


def test_sanitiser_removes_sequences_whole() -> None:
    assert strip_controls(f"a{EVIL}b") == "ab"
    assert strip_controls("tab\tline\ncr\r", keep="\n\t") == "tab\tline\ncr"
    assert json.loads(dumps_json({"x": EVIL})) == {"x": EVIL}
    assert "\x1b" not in dumps_json(EVIL) and "\x9b" not in dumps_json(EVIL)
    assert strip_controls(TRICK) == SHOWN
    assert strip_controls("a\r\nb\rc") == "a\nbc"
    assert json.loads(dumps_json({"x": TRICK})) == {"x": TRICK}
    assert "\r" not in dumps_json(TRICK) and not any(b.decode() in dumps_json(TRICK) for b in BIDI_BYTES)


def test_mcp_list_shows_stderr_and_instructions_inert(tmp_path: Path, cfg: str) -> None:
    out, _ = cli(tmp_path, "mcp", "list", "--mcp-config", cfg)
    assert b"hostile stderr" in out and b"connected" in out
    out, _ = cli(tmp_path, "mcp", "list", "--json", "--mcp-config", cfg)
    rows = {r["name"]: r for r in json.loads(out)["servers"]}
    assert rows["hostile"]["instructions"] == f"Instructions {EVIL} end."  # kept exactly, as JSON escapes
    assert EVIL in rows["broken"]["error"]


def test_call_and_search_output_inert(tmp_path: Path, cfg: str) -> None:
    out, _ = cli(
        tmp_path,
        "call",
        "mcp__hostile__forecast",
        "--params",
        '{"city": "Oslo"}',
        "--mcp-config",
        cfg,
        "--allowed-tools",
        "hostile",
    )
    assert out.decode().strip() == "Sunny in Oslo  done"
    out, _ = cli(
        tmp_path,
        "call",
        "mcp__hostile__forecast",
        "--params",
        '{"city": "Oslo"}',
        "--mcp-config",
        cfg,
        "--allowed-tools",
        "hostile",
        "--json",
    )
    assert json.loads(out)["content"][0]["text"] == f"Sunny in Oslo {EVIL} done"
    out, _ = cli(tmp_path, "search", "weather forecast", "--mcp-config", cfg, "--ranker", "bm25f")
    assert b"mcp__hostile__forecast" in out


def test_carriage_returns_and_bidi_controls_do_not_reach_the_terminal(tmp_path: Path, cfg: str) -> None:
    name = "mcp__hostile__report_exe_txt"
    out, _ = cli(
        tmp_path, "call", name, "--params", '{"city": "Oslo"}', "--mcp-config", cfg, "--allowed-tools", "hostile"
    )
    assert out.decode().strip() == f"first line\nReport for Oslo: {SHOWN} done"
    out, _ = cli(
        tmp_path,
        "call",
        name,
        "--params",
        '{"city": "Oslo"}',
        "--mcp-config",
        cfg,
        "--allowed-tools",
        "hostile",
        "--json",
    )
    assert json.loads(out)["content"][0]["text"] == f"first line\r\nReport for Oslo: {TRICK} done"
    out, _ = cli(tmp_path, "request", "--mcp-config", cfg, "--tool-search", "false")
    descriptions = [t.get("description") for t in json.loads(out)["tools"]]
    assert f"Weather report {TRICK} end." in descriptions  # escaped in the JSON, read back exactly
    catalog = tmp_path / "tools.jsonl"
    catalog.write_text(
        "\n".join(json.dumps({"name": n, "description": "weather report"}) for n in (REPORT, "ok\rOVER"))
    )
    out, _ = cli(tmp_path, "search", "weather report", "--catalog", str(catalog), "--ranker", "bm25f")
    assert "report\\u202eexe.txt" in out.decode() and "okOVER" in out.decode()
    out, _ = cli(tmp_path, "search", "weather report", "--catalog", str(catalog), "--ranker", "bm25f", "--json")
    assert {r["name"] for r in json.loads(out)["results"]} == {REPORT, "ok\rOVER"}


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_headless_output_inert(fmt: str, tmp_path: Path, cfg: str) -> None:
    script = [
        Reply(tool_calls=[ToolCall("mcp__hostile__forecast", {"city": "Oslo"})]),
        Reply(text=f"The model says {EVIL} {TRICK} bye"),
    ]
    with FakeModelServer(script) as model:
        out, _ = cli(
            tmp_path,
            "-p",
            "weather?",
            "--provider",
            "openai",
            "--base-url",
            model.url + "/v1",
            "--mcp-config",
            cfg,
            "--allowed-tools",
            "hostile",
            "--output-format",
            fmt,
            env={"OPENAI_API_KEY": "test-key", "TOOLSCOUT_TOOL_SEARCH": "false"},
        )
    if fmt == "json":
        assert json.loads(out)["result"] == f"The model says {EVIL} {TRICK} bye"
    else:
        assert out.decode().strip() == f"The model says  {SHOWN} bye"
