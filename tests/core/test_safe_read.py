"""Loaders never raise and never hang: FIFOs, /dev/zero, BOMs, absurd JSON, torn transcripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from toolscout.core.catalog.loaders import CatalogFileError, load_catalog
from toolscout.core.mcp.config import load_mcp_config, read_config_file
from toolscout.core.safe_read import SafeReadError, read_json, read_text
from toolscout.core.session.transcript import TranscriptStore, load_for_resume, load_transcript
from toolscout.core.settings.layers import SettingsPaths, load_settings


def bounded(fn, timeout: float = 10.0):
    """Run ``fn()`` in a thread; fail (instead of hanging the suite) if it blocks."""
    out: list = []

    def target() -> None:
        try:
            out.append(fn())
        except Exception as exc:  # re-raised in the test's thread
            out.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "the read blocked"
    if isinstance(out[0], Exception):
        raise out[0]
    return out[0]


def settings_from(tmp_path: Path, text: str):
    path = tmp_path / "settings.json"
    path.write_text(text, encoding="utf-8")
    return load_settings(SettingsPaths(user=path, project=None, project_local=None, managed=None), env={}), path


def test_a_fifo_in_place_of_mcp_json_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / ".mcp.json")
    config = bounded(lambda: load_mcp_config(tmp_path, env={"TOOLSCOUT_CONFIG_DIR": str(tmp_path)}))
    assert config.servers == {}
    assert config.warnings == [
        f"MCP config {tmp_path / '.mcp.json'}: not a regular file (a FIFO); not read; no servers read from it"
    ]


def test_settings_symlinked_to_dev_zero_is_refused(tmp_path):
    path = tmp_path / "settings.json"
    path.symlink_to("/dev/zero")
    paths = SettingsPaths(user=path, project=None, project_local=None, managed=None)
    settings = bounded(lambda: load_settings(paths, {}))
    assert settings["toolSearch.maxResults"] == 5
    assert [str(w) for w in settings.warnings] == [
        f"{path}: not a regular file (a character device); not read; its settings are ignored"
    ]


def test_a_bom_is_tolerated(tmp_path):
    path = tmp_path / ".mcp.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"mcpServers": {"t": {"command": "x"}}}).encode())
    config = read_config_file(path)
    assert list(config.servers) == ["t"] and config.warnings == []
    settings, _ = settings_from(tmp_path, "\ufeff" + json.dumps({"toolSearch": {"maxResults": 7}}))
    assert settings["toolSearch.maxResults"] == 7 and settings.warnings == []


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("1e400", "1e400"),
        ('"1e999"', '"1e999"'),
        ("9" * 5000, "99999999999999999999…(5000 digits)"),
        ("-1e400", "-1e400"),
    ],
)
def test_absurd_integer_settings_fall_back_with_one_warning(tmp_path, written, shown):
    settings, path = settings_from(tmp_path, '{"toolSearch": {"maxResults": ' + written + '}, "mcp": {"timeout": 5}}')
    assert settings["toolSearch.maxResults"] == 5 and settings["mcp.timeout"] == 5  # the rest still applies
    assert [str(w) for w in settings.warnings] == [
        f"{path}: toolSearch.maxResults = {shown}: not a finite number; using the default"
    ]


def test_env_override_1e999_is_a_warning_not_a_traceback():
    settings = load_settings(SettingsPaths(None, None, None, None), env={"TOOLSCOUT_MCP_TIMEOUT": "1e999"})
    assert settings["mcp.timeout"] == 30.0
    assert 'env:TOOLSCOUT_MCP_TIMEOUT: mcp.timeout = "1e999": not a finite number' in str(settings.warnings[0])


def test_deep_nesting_is_a_file_warning(tmp_path):
    deep = '{"a": ' * 3000 + "1" + "}" * 3000
    settings, path = settings_from(tmp_path, deep)
    assert [str(w) for w in settings.warnings] == [
        f"{path}: malformed JSON: JSON nested too deep to read; its settings are ignored"
    ]
    (tmp_path / ".mcp.json").write_text(deep)
    assert "JSON nested too deep to read" in read_config_file(tmp_path / ".mcp.json").warnings[0]
    (tmp_path / "cat.json").write_text(deep)
    with pytest.raises(CatalogFileError, match="nested too deep"):
        load_catalog(tmp_path / "cat.json")


def test_size_cap_and_non_utf8(tmp_path):
    path = tmp_path / "big.json"
    path.write_text("[" + "1," * 100 + "1]")
    with pytest.raises(SafeReadError, match="over the 100-byte limit"):
        read_text(path, max_bytes=100)
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(SafeReadError, match=r"not UTF-8 text \(byte 7\)"):
        read_json(path)
    with pytest.raises(FileNotFoundError):
        read_json(tmp_path / "missing.json")
    (tmp_path / "blank.json").write_text(" \n")
    assert read_json(tmp_path / "blank.json") == {}


def test_a_catalog_fifo_is_a_clear_error(tmp_path):
    os.mkfifo(tmp_path / "tools.jsonl")
    with pytest.raises(CatalogFileError, match="not a regular file"):
        bounded(lambda: load_catalog(tmp_path / "tools.jsonl"))


def test_torn_transcript_line_is_repaired_once_and_appends_stay_readable(tmp_path):
    path = tmp_path / "s.jsonl"
    store = TranscriptStore(path)
    store.append({"type": "meta", "id": "s"})
    store.append({"type": "message", "message": {"role": "user", "content": "hi"}})
    store.close()
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "message", "mess')  # the crash
    first = load_for_resume(path)
    assert first.warnings == [f"{path}: torn last line (25 bytes, a crash mid-write) removed"]
    assert len(first.messages) == 1
    store = TranscriptStore(path)
    store.append({"type": "message", "message": {"role": "assistant", "content": "hello"}})
    store.close()
    second = load_for_resume(path)
    assert second.warnings == [] and [m["content"] for m in second.messages] == ["hi", "hello"]
    # a complete last record that only lost its newline is kept, and gets the newline
    path.write_text(path.read_text().rstrip("\n"))
    assert load_for_resume(path).warnings == [] and path.read_text().endswith("\n")
    assert len(load_transcript(path).messages) == 2


@pytest.mark.parametrize("kind", ["fifo", "deep"])
def test_mcp_list_with_a_fifo_or_deep_mcp_json_neither_hangs_nor_crashes(tmp_path, kind):
    project = tmp_path / "project"
    project.mkdir()
    if kind == "fifo":
        os.mkfifo(project / ".mcp.json")
        os.mkfifo(tmp_path / "trusted-folders.json")  # the trust store too
    else:
        (project / ".mcp.json").write_text('{"a": ' * 3000 + "1" + "}" * 3000)
    env = {
        **os.environ,
        "TOOLSCOUT_CONFIG_DIR": str(tmp_path),
        "TOOLSCOUT_CACHE_DIR": "off",
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    done = subprocess.run(
        [sys.executable, "-m", "toolscout", "mcp", "list", "--no-default-servers", "--trust-project"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    reason = "not a regular file (a FIFO)" if kind == "fifo" else "JSON nested too deep to read"
    assert f"MCP config {project / '.mcp.json'}: " in done.stderr and reason in done.stderr
    assert "Traceback" not in done.stderr
