"""Issue 10 item 5: a server's text reaches the terminal inert on every CLI path.

A fixture server puts OSC 52 (clipboard), OSC 0 (title), CSI 2J (clear screen) and a C1 CSI in
its instructions, descriptions, stderr and results. Each command runs as a real subprocess and
the test asserts on the bytes it wrote: no ESC, no C1 CSI, while the text around them arrives.
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
from fixtures.servers.hostile_output import EVIL
from fixtures.warm_servers import server_args
from toolscout.core.sanitize import dumps_json, strip_controls

SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "hostile_output.py"
SRC = str(Path(toolscout.__file__).resolve().parents[1])


@pytest.fixture
def cfg(tmp_path: Path) -> str:
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"mcpServers": {
        "hostile": {"command": sys.executable, "args": server_args(SERVER)},
        "broken": {"command": sys.executable, "args": server_args(SERVER, "crash")},
    }}))
    return str(path)


def cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[bytes, bytes]:
    """Run ``toolscout ARGS`` in a subprocess; its stdout and stderr bytes, checked to be inert."""
    full_env = {**os.environ, "PYTHONPATH": SRC, **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "toolscout", *args], cwd=tmp_path, env=full_env,
                          capture_output=True, timeout=180, check=False)
    for stream in (proc.stdout, proc.stderr):
        assert b"\x1b" not in stream and "\x9b".encode() not in stream, stream
    return proc.stdout, proc.stderr


def test_sanitiser_removes_sequences_whole() -> None:
    assert strip_controls(f"a{EVIL}b") == "ab"
    assert strip_controls("tab\tline\ncr\r", keep="\n\t") == "tab\tline\ncr"
    assert json.loads(dumps_json({"x": EVIL})) == {"x": EVIL}
    assert "\x1b" not in dumps_json(EVIL) and "\x9b" not in dumps_json(EVIL)


def test_mcp_list_shows_stderr_and_instructions_inert(tmp_path: Path, cfg: str) -> None:
    out, _ = cli(tmp_path, "mcp", "list", "--mcp-config", cfg)
    assert b"hostile stderr" in out and b"connected" in out
    out, _ = cli(tmp_path, "mcp", "list", "--json", "--mcp-config", cfg)
    rows = {r["name"]: r for r in json.loads(out)["servers"]}
    assert rows["hostile"]["instructions"] == f"Instructions {EVIL} end."  # kept exactly, as JSON escapes
    assert EVIL in rows["broken"]["error"]


def test_call_and_search_output_inert(tmp_path: Path, cfg: str) -> None:
    out, _ = cli(tmp_path, "call", "mcp__hostile__forecast", "--params", '{"city": "Oslo"}',
                 "--mcp-config", cfg, "--allowed-tools", "hostile")
    assert out.decode().strip() == "Sunny in Oslo  done"
    out, _ = cli(tmp_path, "call", "mcp__hostile__forecast", "--params", '{"city": "Oslo"}',
                 "--mcp-config", cfg, "--allowed-tools", "hostile", "--json")
    assert json.loads(out)["content"][0]["text"] == f"Sunny in Oslo {EVIL} done"
    out, _ = cli(tmp_path, "search", "weather forecast", "--mcp-config", cfg, "--ranker", "bm25f")
    assert b"mcp__hostile__forecast" in out


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_headless_output_inert(fmt: str, tmp_path: Path, cfg: str) -> None:
    script = [Reply(tool_calls=[ToolCall("mcp__hostile__forecast", {"city": "Oslo"})]),
              Reply(text=f"The model says {EVIL} bye")]
    with FakeModelServer(script) as model:
        out, _ = cli(tmp_path, "-p", "weather?", "--provider", "openai", "--base-url", model.url + "/v1",
                       "--mcp-config", cfg, "--allowed-tools", "hostile", "--output-format", fmt,
                       env={"OPENAI_API_KEY": "test-key", "TOOLSCOUT_TOOL_SEARCH": "false"})
    if fmt == "json":
        assert json.loads(out)["result"] == f"The model says {EVIL} bye"
    else:
        assert out.decode().strip() == "The model says  bye"
