"""The last-known server size cache: round trip, keys per start command, bad files read as empty."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolscout.core.engine.server_sizes import FILE_NAME, ServerSizes, default_path, server_key
from toolscout.core.mcp.config import ServerConfig


def test_round_trip_and_key_follows_the_start_command(tmp_path: Path) -> None:
    path = tmp_path / "sizes.json"
    a = ServerConfig("github", command="npx", args=("github-mcp",))
    b = ServerConfig("github", command="npx", args=("github-mcp@2",))
    ServerSizes(path).record(server_key(a), 12_345)
    again = ServerSizes(path)
    assert again.get(server_key(a)) == 12_345
    assert server_key(a) != server_key(b) and again.get(server_key(b)) is None


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[1,2]",
        b'{"servers": [1]}',
        b"[" * 5000,
        b'{"servers": {"x": "big", "y": true, "z": -1, "w": 7}}',
    ],
)
def test_bad_files_read_as_empty_or_keep_only_valid_entries(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "sizes.json"
    path.write_bytes(content)
    sizes = ServerSizes(path)
    assert sizes.get("x") is None and sizes.get("y") is None and sizes.get("z") is None
    sizes.record("new", 5)  # and the file is rewritten whole
    assert ServerSizes(path).get("new") == 5


def test_a_fifo_or_directory_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert ServerSizes(fifo).get("x") is None  # returns at once instead of blocking
    folder = tmp_path / "folder.json"
    folder.mkdir()
    sizes = ServerSizes(folder)
    sizes.record("x", 1)  # the write fails quietly: only an estimate is lost
    assert sizes.get("x") == 1


def test_cache_dir_override_and_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(tmp_path))
    assert default_path() == tmp_path / FILE_NAME
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", "off")
    assert default_path() is None
    sizes = ServerSizes(None)
    sizes.record("x", 3)
    assert sizes.get("x") == 3
