"""Issue 10 item 4 (output): a huge tool result reaches the model capped, whole on disk, and a
``--resume`` never re-sends it. Asserts on the request bodies the loopback provider received."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.servers.big_output import expected
from fixtures.warm_servers import server_args
from toolscout.cli import run
from toolscout.core.calls.result_cap import cap_result
from toolscout.core.tokens import default_counter

SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "big_output.py"
LIMIT = 25_000


def test_small_results_pass_untouched(tmp_path: Path) -> None:
    assert cap_result("short", limit=1000, folder=tmp_path, name="c1") == "short"
    assert not any(tmp_path.iterdir())


def test_cap_keeps_head_within_limit_and_the_whole_on_disk(tmp_path: Path) -> None:
    text = expected(1)
    capped = cap_result(text, limit=2000, folder=tmp_path, name="call/1")
    path = Path(re.search(r"saved at (\S+)\. ", capped).group(1))
    assert path.parent == tmp_path and path.read_text() == text
    head = capped.split("\n\n[toolscout:")[0]
    assert text.startswith(head) and default_counter().count(head) <= 2000
    shown = head.count("\n") + 1
    assert f"offset={shown + 1}" in capped and f'Read file_path="{path}"' in capped


def test_a_cut_inside_one_long_line_points_at_the_byte_to_read_on_from(tmp_path: Path) -> None:
    text = "é" * 300_000  # one line, two bytes per character
    capped = cap_result(text, limit=2000, folder=tmp_path, name="c")
    head = capped.split("\n\n[toolscout:")[0]
    start = int(re.search(r"tail -c \+(\d+)", capped).group(1))
    assert (tmp_path / "c.txt").read_bytes()[start - 1 :].decode() == text[len(head) :]


def _headless(model: FakeModelServer, cfg: Path, *extra: str) -> int:
    return run(
        [
            "-p",
            "dump it",
            "--provider",
            "openai",
            "--base-url",
            model.url + "/v1",
            "--mcp-config",
            str(cfg),
            "--allowed-tools",
            "big",
            "--output-format",
            "json",
            *extra,
        ]
    )


def test_20_mb_result_is_capped_in_requests_transcripts_and_resume(
    tmp_path: Path, monkeypatch, capsys, outside_cwd
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"big": {"command": sys.executable, "args": server_args(SERVER)}}}))
    script = [
        Reply(tool_calls=[ToolCall("ExecuteTool", {"tool_name": "mcp__big__dump", "params": {"megabytes": 20}})]),
        Reply(text="got it"),
    ]
    with FakeModelServer(script) as model:
        assert _headless(model, cfg) == 0
        sent = model.requests[1][1]
    session_id = json.loads(capsys.readouterr().out)["session_id"]
    result = next(m["content"] for m in sent["messages"] if m["role"] == "tool")
    # What the provider received: the capped head plus the note, about LIMIT tokens, not 20 MB.
    assert len(json.dumps(sent)) < LIMIT * 8
    assert default_counter().count(result) < LIMIT + 500
    assert "saved at" in result, result[-3000:]
    saved = Path(re.search(r"saved at (\S+)\. ", result).group(1))
    assert saved.read_text() == expected(20)
    # The transcript holds the capped form, so resuming re-sends only that.
    with FakeModelServer([Reply(text="still here")]) as model:
        assert _headless(model, cfg, "--resume", session_id) == 0
        resumed = model.requests[0][1]
    capsys.readouterr()
    assert len(json.dumps(resumed)) < LIMIT * 8
    assert any(m["role"] == "tool" and m["content"] == result for m in resumed["messages"])
