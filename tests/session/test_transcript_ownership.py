"""A session's data stays its own (issue 28 item 8), met as another local user or a second
toolscout would meet it: real ``python -m toolscout -p`` processes against the fake model API,
asserting what ``stat`` and the transcript file actually show.

- saved full tool results and transcripts are owner-only: folders ``0700``, files ``0600``;
- one writer per transcript: a second ``--resume`` of an open session is refused, names the
  holder's pid, and writes nothing;
- a transcript that cannot be written is one warning line, never a traceback; the answer still
  comes;
- a transcript two writers interleaved (before the lock) resumes, its bad lines skipped with
  warnings."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from session_helpers import make_engine

from fixtures.providers import FakeModelServer, Reply, ToolCall
from toolscout.core.session.providers import create_provider
from toolscout.core.session.session import Session, SessionNotFound
from toolscout.core.settings.layers import Settings

SRC = Path(__file__).resolve().parents[2] / "src"


def toolscout(work: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(SRC)]))
    full = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "TOOLSCOUT_RANKER": "bm25f", **env, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-m", "toolscout", *argv, "--no-default-servers"],
        cwd=work,
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "catalog").mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_saved_results_and_transcripts_are_owner_only(work: Path) -> None:
    config = Path(os.environ["TOOLSCOUT_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"tools": {"maxResultTokens": 1000}}))
    data = Path(os.environ["TOOLSCOUT_DATA_DIR"])
    script = [
        Reply(tool_calls=[ToolCall("Bash", {"command": "for i in $(seq 2000); do echo secret line $i; done"})]),
        Reply(text="done"),
    ]
    old = os.umask(0o022)  # the usual umask: the files would be world-readable without the fix
    try:
        with FakeModelServer(script) as server:
            done = toolscout(
                work,
                "-p",
                "show the secrets",
                "--base-url",
                server.url,
                "--allowed-tools",
                "Bash",
                "--catalog",
                str(work / "catalog"),
                "--output-format",
                "json",
            )
    finally:
        os.umask(old)
    assert done.returncode == 0, done.stderr
    session_id = json.loads(done.stdout)["session_id"]
    results = data / "tool-results" / session_id
    saved = list(results.iterdir())
    assert len(saved) == 1 and "secret line 1500" in saved[0].read_text()
    assert {mode(data), mode(data / "tool-results"), mode(results)} == {0o700}
    assert mode(saved[0]) == 0o600
    transcript = data / "sessions" / f"{session_id}.jsonl"
    assert mode(data / "sessions") == 0o700 and mode(transcript) == 0o600


def test_a_second_resume_of_an_open_session_is_refused_and_writes_nothing(work: Path, tmp_path: Path) -> None:
    with FakeModelServer([Reply(text="first answer")]) as server:
        first = toolscout(
            work, "-p", "hello", "--base-url", server.url, "--catalog", str(work / "catalog"), "--output-format", "json"
        )
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    transcript = Path(os.environ["TOOLSCOUT_DATA_DIR"]) / "sessions" / f"{session_id}.jsonl"
    engine = make_engine(tmp_path)
    provider = create_provider(Settings().with_overrides({"provider.name": "offline"}))
    holder = Session.resume(engine, session_id, provider=provider)  # this process holds it open
    try:
        before = transcript.read_bytes()
        with FakeModelServer([Reply(text="second answer")]) as server:
            second = toolscout(
                work,
                "-p",
                "hello again",
                "--resume",
                session_id,
                "--base-url",
                server.url,
                "--catalog",
                str(work / "catalog"),
            )
            assert server.bodies == []  # refused before any request
        assert second.returncode == 1 and "Traceback" not in second.stderr
        assert (
            f"session {session_id} is open in another toolscout (pid {os.getpid()}); resume it there or start a new one"
        ) in second.stderr
        assert transcript.read_bytes() == before
        with pytest.raises(SessionNotFound, match="open in another toolscout"):  # a second session object, too
            Session.resume(make_engine(tmp_path), session_id, provider=provider)
    finally:
        asyncio.run(holder.close())
    with FakeModelServer([Reply(text="third answer")]) as server:  # closed: free to resume again
        third = toolscout(
            work, "-p", "and now", "--resume", session_id, "--base-url", server.url, "--catalog", str(work / "catalog")
        )
    assert third.returncode == 0, third.stderr
    assert "third answer" in third.stdout


@pytest.mark.parametrize("kind", ["file", "sessions is a file", "read-only folder"])
def test_a_transcript_that_cannot_be_written_is_one_warning_line(work: Path, tmp_path: Path, kind: str) -> None:
    data = tmp_path / "data"
    if kind == "file":
        data.write_text("not a folder")
    elif kind == "sessions is a file":
        data.mkdir()
        (data / "sessions").write_text("not a folder")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders")
        data.mkdir(mode=0o500)
    with FakeModelServer([Reply(text="the answer")]) as server:
        done = toolscout(
            work,
            "-p",
            "hello",
            "--base-url",
            server.url,
            "--catalog",
            str(work / "catalog"),
            TOOLSCOUT_DATA_DIR=str(data),
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the answer"
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if "transcript" in line]
    assert len(lines) == 1 and "cannot be written" in lines[0] and "not saved" in lines[0], done.stderr


def test_a_transcript_interleaved_by_two_writers_resumes_with_warnings(work: Path, tmp_path: Path) -> None:
    sessions = Path(os.environ["TOOLSCOUT_DATA_DIR"]) / "sessions"
    sessions.mkdir(parents=True)
    meta = {"type": "meta", "id": "20260101-000000-abcdef12", "strategy": "execute-proxy", "provider": "anthropic"}
    lines = [
        json.dumps(meta),
        json.dumps(meta),
        json.dumps({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}),
        '{"type": "message", "message": {"role": "assistant", "con{"type": "usage", "input_tokens": 3}',
        json.dumps({"type": "message", "message": {"role": "user", "content": [7, "x"]}}),
        json.dumps({"type": "message", "message": {"role": "tool"}}),
        json.dumps({"type": "message", "message": {"role": "assistant", "content": [{"type": "text"}]}}),
    ]
    (sessions / f"{meta['id']}.jsonl").write_text("\n".join(lines) + "\n")
    with FakeModelServer([Reply(text="resumed fine")]) as server:
        done = toolscout(
            work, "-p", "go on", "--resume", meta["id"], "--base-url", server.url, "--catalog", str(work / "catalog")
        )
    assert done.returncode == 0, done.stderr
    assert "resumed fine" in done.stdout and "Traceback" not in done.stderr
    assert "unreadable line skipped" in done.stderr and done.stderr.count("malformed message skipped") == 2
