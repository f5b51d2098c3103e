"""The code's format and lint are checked by the suite: ``ruff format`` (the one line-length
rule, ``[tool.ruff]`` in ``pyproject.toml``) and ``ruff check`` on ``src`` and ``tests``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    return subprocess.run([ruff, *args, "src", "tests"], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_the_code_is_formatted() -> None:
    out = _ruff("format", "--check")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]


def test_the_code_passes_ruff_check() -> None:
    out = _ruff("check")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]
