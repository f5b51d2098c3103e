"""``toolscout call`` draws the progress an MCP server reports on stderr when stderr is a terminal
(one line, redrawn in place and erased at the end), and nothing otherwise (no progress is then
asked for). The upstream is the stdio fixture ``slow.py``; the terminal is a pseudo-terminal
(python's ``pty``), read by a thread while the command runs in this process."""

from __future__ import annotations

import io
import json
import os
import pty
import sys
import threading
from pathlib import Path
from typing import Any

from mcp_helpers import server_args, server_path

from toolscout.cli import run

#: The server's message: markup, a title-setting escape and a bell, none of which may reach the terminal.
HOSTILE = "[b]step {i}[/b] of {n} \x1b]0;pwned\x07done"


def config(tmp_path: Path, log: Path) -> str:
    path = tmp_path / "slow.mcp.json"
    entry = {"command": sys.executable, "args": server_args(server_path("slow"), "slow", str(log))}
    path.write_text(json.dumps({"mcpServers": {"slow": entry}}))
    return str(path)


def call_args(params: dict[str, Any], cfg: str) -> list[str]:
    """``toolscout call mcp__slow__work`` with ``params``, the server allowed."""
    return [
        "call",
        "mcp__slow__work",
        "--params",
        json.dumps(params),
        "--mcp-config",
        cfg,
        "--allowed-tools",
        "mcp__slow",
    ]


def received(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


class Terminal:
    """A pseudo-terminal whose output a thread collects; :attr:`stream` writes to it. When the
    output contains ``until``, the thread creates the file ``release`` (the fixture's call then ends)."""

    def __init__(self, until: str, release: Path) -> None:
        self.master, slave = pty.openpty()
        self.stream = io.TextIOWrapper(os.fdopen(slave, "wb"), encoding="utf-8", write_through=True)
        self.output = b""
        self._until, self._release = until.encode(), release
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: the writing side is closed
                return
            if not chunk:
                return
            self.output += chunk
            if self._until in self.output:
                self._release.touch()

    def close(self) -> str:
        self.stream.close()
        self._thread.join(20)
        os.close(self.master)
        return self.output.decode("utf-8", "replace")


def test_a_long_call_shows_its_progress_on_a_terminal(tmp_path, monkeypatch, capsys, outside_cwd):
    log, release = tmp_path / "slow.jsonl", tmp_path / "release"
    params = {"steps": 3, "hold": str(release), "message": HOSTILE}
    terminal = Terminal("step 3", release)  # the last step is on the screen: let the call finish
    monkeypatch.setattr(sys, "stderr", terminal.stream)
    try:
        code = run(call_args(params, config(tmp_path, log)))
    finally:
        monkeypatch.undo()
        shown = terminal.close()
    assert code == 0, shown
    assert capsys.readouterr().out.strip() == "worked 3 steps"  # the result on stdout, untouched
    assert "mcp__slow__work: 3/3 " in shown  # a bar: the server said the total
    assert ", [b]step 3[/b] of 3 done" in shown  # its message as text, the escape sequence removed
    assert "pwned" not in shown and "\x07" not in shown
    assert "\r" in shown  # redrawn in place
    assert received(log)[0]["progress_token"] is not None


def test_an_unknown_total_shows_a_count(tmp_path, monkeypatch, capsys, outside_cwd):
    log, release = tmp_path / "slow.jsonl", tmp_path / "release"
    params = {"steps": 2, "hold": str(release), "known_total": False}
    terminal = Terminal("step 2 of 2", release)
    monkeypatch.setattr(sys, "stderr", terminal.stream)
    try:
        code = run(call_args(params, config(tmp_path, log)))
    finally:
        monkeypatch.undo()
        shown = terminal.close()
    assert code == 0, shown
    assert "mcp__slow__work: 2 " in shown and ", step 2 of 2" in shown  # a count, no total
    assert "2/" not in shown
    capsys.readouterr()


def test_no_terminal_no_progress(tmp_path, capsys, outside_cwd):
    log = tmp_path / "slow.jsonl"
    code = run(call_args({"steps": 3}, config(tmp_path, log)))
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out.strip() == "worked 3 steps" and "step" not in out.err
    assert received(log)[0] == {"event": "call", "progress_token": None}  # none asked for
