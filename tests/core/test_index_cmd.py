"""``toolscout index`` in a subprocess: encodes a catalog's tool vectors into the on-disk cache
ahead of time, with a progress bar on a terminal, and encodes nothing the second time."""

from __future__ import annotations

import json
import os
import pty
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from toolscout.core.search.dense import dense_available

CATALOGS = Path(__file__).resolve().parents[1] / "fixtures" / "tui_catalogs"

pytestmark = pytest.mark.skipif(not dense_available(), reason="the dense extra (onnxruntime, model) is not installed")


def _index(cache: Path, *, tty: bool) -> tuple[int, dict, str]:
    """Run ``toolscout index --catalog … --json``; stderr on a pseudo-terminal when ``tty``."""
    env = {**os.environ, "TOOLSCOUT_CACHE_DIR": str(cache), "COLUMNS": "100"}
    args = [sys.executable, "-m", "toolscout", "index", "--catalog", str(CATALOGS), "--json"]
    if not tty:
        proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        return proc.returncode, json.loads(proc.stdout), proc.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    out = proc.stdout.read().decode() if proc.stdout else ""
    code = proc.wait(timeout=300)
    return code, json.loads(out), b"".join(chunks).decode(errors="replace")


def test_index_encodes_once_with_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    code, first, err = _index(cache, tty=True)
    assert code == 0, err
    assert first["tools"] > 40 and first["encoded"] == first["tools"] and first["cached"] == 0
    assert first["profile"] == "default"
    assert "encoding tools" in err and f"/{first['tools']}" in err  # the tqdm bar on the terminal
    assert "\rencoding tools" in err  # it redraws in place: its own CRs pass the output sanitiser
    rows = sqlite3.connect(cache / "embeddings.sqlite").execute("SELECT COUNT(*) FROM vec").fetchone()[0]
    assert rows == first["encoded"]

    code, second, err = _index(cache, tty=False)
    assert code == 0, err
    assert second["tools"] == first["tools"]
    assert second["encoded"] == 0 and second["cached"] == first["tools"]
    assert "encoding tools" not in err  # no bar when stderr is not a terminal
