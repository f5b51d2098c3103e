"""Hermetic defaults for every test: no user config, no provider keys, tmp data dirs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: ``../shared`` beside the repo; TOOLSCOUT_TEST_SHARED points elsewhere (e.g. from a worktree).
SHARED = Path(os.environ.get("TOOLSCOUT_TEST_SHARED") or REPO.parent / "shared")
FIXTURES = Path(__file__).resolve().parent / "fixtures"

_PROVIDER_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
    "TOOLSCOUT_TOOL_SEARCH", "TOOLSCOUT_RANKER", "TOOLSCOUT_WEIGHT_KEYWORD", "TOOLSCOUT_WEIGHT_TFIDF",
    "TOOLSCOUT_RECOMMENDATIONS", "TOOLSCOUT_STRATEGY", "TOOLSCOUT_MCP_TIMEOUT", "TOOLSCOUT_PROVIDER",
    "TOOLSCOUT_MODEL", "TOOLSCOUT_MANAGED_SETTINGS",
)


@pytest.fixture(scope="session")
def embedding_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One vector cache for the whole run: hermetic, and each tool text is encoded once."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def hermetic_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, embedding_cache_dir: Path
) -> Path:
    """Point config/data/cache dirs at temp dirs and drop provider keys and overrides."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("TOOLSCOUT_CACHE_DIR", str(embedding_cache_dir))
    monkeypatch.setenv("TOOLSCOUT_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("TOOLSCOUT_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("TOOLSCOUT_MANAGED_SETTINGS", str(home / "managed-settings.json"))
    for var in _PROVIDER_VARS:
        if var != "TOOLSCOUT_MANAGED_SETTINGS":
            monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def shared_dir() -> Path:
    """``../shared`` beside the repo; skips the test when it is not there."""
    if not (SHARED / "bench-data").is_dir():
        pytest.skip("../shared/bench-data is not present beside the repo (only on the project's machines)")
    return SHARED


class FakeClock:
    """A monotonic clock (seconds) that moves only by ``tick`` per reading and by :meth:`advance`:
    durations in tests come out the same on an idle and on a loaded machine."""

    def __init__(self, tick: float = 0.001) -> None:
        self.now = 0.0
        self.tick = tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass (a person reading a prompt, a slow search)."""
        self.now += seconds


@pytest.fixture
def fake_clock() -> FakeClock:
    """A :class:`FakeClock` to inject where code measures time (``ToolExecutor.clock``, ...)."""
    return FakeClock()
