"""Hermetic defaults for every test: no user config, no provider keys, tmp data dirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

REPO = Path(__file__).resolve().parents[1]
#: ``../shared`` beside the repo; TOOLSCOUT_TEST_SHARED points elsewhere (e.g. from a worktree).
SHARED = Path(os.environ.get("TOOLSCOUT_TEST_SHARED") or REPO.parent / "shared")
FIXTURES = Path(__file__).resolve().parent / "fixtures"

_PROVIDER_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "TOOLSCOUT_TOOL_SEARCH",
    "TOOLSCOUT_RANKER",
    "TOOLSCOUT_WEIGHT_KEYWORD",
    "TOOLSCOUT_WEIGHT_TFIDF",
    "TOOLSCOUT_RECOMMENDATIONS",
    "TOOLSCOUT_STRATEGY",
    "TOOLSCOUT_MCP_TIMEOUT",
    "TOOLSCOUT_PROVIDER",
    "TOOLSCOUT_MODEL",
    "TOOLSCOUT_MAX_TOOLS",
    "TOOLSCOUT_MANAGED_SETTINGS",
)


#: Seconds per slice of Textual's "wait until the process is idle" (``textual._wait``; 1/50 s
#: in Textual). Pilot waits so twice per key pressed and once per ``pause()``, at least one slice
#: each: ~60 % of the TUI tests' time went to these slices. A shorter slice alone would call a
#: process idle that is only waiting for a CPU on a loaded machine, so each wait first waits
#: for every message already queued in the app to be handled (:func:`_handled_then_idle`).
IDLE_SLICE_S = 1 / 200


#: Hypothesis' profile for the whole suite: no timing gates. Its per-example deadline (200 ms)
#: and its "too slow" health check (slow data generation) fail a correct test on a loaded
#: machine; a test that needs a bound on time waits on an event instead. Per-test
#: ``@settings`` inherit this profile (set ``max_examples`` there, never a deadline).
hypothesis_settings.register_profile("untimed", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("untimed")


def pytest_configure(config: pytest.Config) -> None:
    """Pilot's idle waits (key presses, ``pause()``) become :func:`_handled_then_idle`; the
    sources are compiled once for the processes the tests start (:func:`_compile_sources`)."""
    if not hasattr(config, "workerinput"):  # the xdist controller, or a serial run
        _compile_sources()
    import textual._wait
    import textual.app
    import textual.pilot

    textual._wait.SLEEP_GRANULARITY = IDLE_SLICE_S
    textual._wait.SLEEP_IDLE = IDLE_SLICE_S / 20  # Textual's ratio: idle = < 5 % CPU in a slice
    idle = textual._wait.wait_for_idle

    async def _handled_then_idle(min_sleep: float = 0.0, max_sleep: float = 1.0) -> None:
        """Wait (bounded) until the running app and its screen's widgets have handled every
        message queued so far, including those the handlers queue in turn; then Textual's idle
        wait (one short slice when nothing else runs)."""
        from textual._context import active_app

        app = active_app.get(None)
        if app is not None and app.is_running:
            await _messages_handled(app)
        await idle(min_sleep, max_sleep)

    textual.app.wait_for_idle = _handled_then_idle
    textual.pilot.wait_for_idle = _handled_then_idle


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: half again as many workers as cores (3 on 2 cores). A worker often waits on
    a process it started (a gateway, the CLI, a server connecting) with its core idle: measured
    on 2 cores, 2 workers 166 s, 3 workers 154 s, 4 workers 156 s."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores * 3 // 2)


def _compile_sources() -> None:
    """Write ``src/toolscout``'s bytecode (``__pycache__``, as Python does by default) when
    ``PYTHONDONTWRITEBYTECODE`` keeps imports from writing it: the ~100 ``toolscout`` processes
    the tests start (CLI, ``serve``) would each compile the sources again (~0.1 s CPU each)."""
    import compileall
    import sys

    if sys.dont_write_bytecode:
        compileall.compile_dir(REPO / "src" / "toolscout", quiet=1)


async def _messages_handled(app: Any, rounds: int = 20, timeout_s: float = 10.0) -> None:
    """Until no message pump of ``app`` (the app, its screen, the screen's widgets) has a queued
    message: each round lets every pump handle what it has queued (a callback queued behind it,
    as ``Pilot._wait_for_screen`` does). Gives up quietly after ``rounds`` rounds or a round of
    ``timeout_s`` (a handler waiting for the test itself): the idle wait comes next anyway."""
    import asyncio

    for _ in range(rounds):
        try:
            pumps = [app, *app.screen.walk_children(with_self=True)]
        except Exception:  # no screen yet, or the app is closing
            return
        try:
            await asyncio.wait_for(_one_round(pumps), timeout_s)
        except TimeoutError:
            return
        if all(pump._message_queue.empty() for pump in pumps):
            return


async def _one_round(pumps: list[Any]) -> None:
    """Wait until each of ``pumps`` has handled the messages queued in it before this call."""
    import asyncio

    left = 0
    handled = asyncio.Event()

    def one_handled() -> None:
        nonlocal left
        left -= 1
        if left == 0:
            handled.set()

    for pump in pumps:
        if pump.call_later(one_handled):
            left += 1
    if left:
        await handled.wait()


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
def outside_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty folder beside the files the test writes to ``tmp_path`` (its ``work``):
    a config file there passed with ``--mcp-config`` is then the person's own, not project
    config that waits for the folder's approval, as one inside the current folder would
    (:mod:`toolscout.core.policy.trust_files`)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    monkeypatch.chdir(work)
    return work


class NewcomerCli:
    """``python -m toolscout ARGS`` as a newcomer runs it: a subprocess in an empty folder
    (:attr:`work`) with a fresh ``HOME`` (:attr:`home`, XDG dirs under it, no
    ``TOOLSCOUT_CONFIG_DIR``/``TOOLSCOUT_DATA_DIR``: the platform's own places), the lexical ranker
    (no model to load) and the session's shared vector cache. Calling it returns the finished
    process (text stdout/stderr); stdin is empty."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.work = tmp_path / "work"
        self.home.mkdir(exist_ok=True)
        self.work.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in ("TOOLSCOUT_CONFIG_DIR", "TOOLSCOUT_DATA_DIR")}
        self.env = {
            **env,
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "TOOLSCOUT_RANKER": "bm25f",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")])),
        }

    @property
    def user_mcp_json(self) -> Path:
        """Where the user MCP config lives for this ``HOME`` (``~/.config/toolscout/mcp.json``)."""
        return self.home / ".config" / "toolscout" / "mcp.json"

    def __call__(self, *args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolscout", *args],
            cwd=cwd or self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


@pytest.fixture
def toolscout(tmp_path: Path) -> NewcomerCli:
    """Run the CLI as a newcomer would (:class:`NewcomerCli`)."""
    return NewcomerCli(tmp_path)


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
