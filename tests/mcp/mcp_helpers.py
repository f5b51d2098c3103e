"""Helpers for MCP tests: fixture servers (stdio and in memory), settings, event waits.

(Not named ``conftest``: the directory is on ``sys.path`` and must not shadow the ``mcp`` SDK,
so it has no ``__init__.py`` and tests import this module by its own name.)

Every wait is bounded (``anyio.fail_after``) and waits on engine events, never on sleeps.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

from toolscout.core.engine.events import Event, ServerStateChanged
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.models import ServerState
from toolscout.core.settings.layers import Settings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SERVERS = FIXTURES / "servers"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))
from warm_servers import server_args  # noqa: E402

#: Fixture servers whose tests look at the server's own process (pid, session, nice, signals):
#: always started cold, with nothing in between (tests/fixtures/warm_servers.py).
COLD = frozenset({"probe", "stubborn"})


def server_path(name: str) -> str:
    """Path of a fixture server script (``tests/fixtures/servers/<name>.py``)."""
    return str(SERVERS / f"{name}.py")


def stdio(name: str, script: str | None = None, *args: str, env: dict[str, str] | None = None) -> ServerConfig:
    """A stdio config that runs a fixture server with this Python (warm, through the fork server,
    unless it is in :data:`COLD`)."""
    path = server_path(script or name)
    argv = [path, *args] if (script or name) in COLD else server_args(path, *args)
    return ServerConfig(name, "stdio", command=sys.executable, args=tuple(argv), env=env or {}, source="test")


def fixture_module(name: str) -> ModuleType:
    """Import a fixture server script as a module (to build it in memory)."""
    spec = importlib.util.spec_from_file_location(f"fixture_server_{name}", SERVERS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def memory(name: str, script: str | None = None, **kwargs: Any) -> ServerConfig:
    """An in-memory config for a fixture server built by its ``build(name, ...)``."""
    return ServerConfig.memory(name, fixture_module(script or name).build(name, **kwargs))


def make_settings(**overrides: Any) -> Settings:
    """Default settings (no files) with dotted-key overrides."""
    settings = Settings()
    return settings.with_overrides(overrides, "test") if overrides else settings


class EventLog:
    """Records engine events; :meth:`wait_for` waits (bounded) for one that matches."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._changed = anyio.Event()

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, predicate: Callable[[Event], bool], timeout: float = 20.0, start: int = 0) -> Event:
        with anyio.fail_after(timeout):
            seen = start
            while True:
                for event in self.events[seen:]:
                    if predicate(event):
                        return event
                seen = len(self.events)
                await self._changed.wait()

    async def wait_state(self, server: str, state: ServerState, timeout: float = 20.0, start: int = 0) -> Any:
        event = await self.wait_for(
            lambda e: isinstance(e, ServerStateChanged) and e.status.name == server and e.status.state is state,
            timeout,
            start,
        )
        return event.status  # type: ignore[attr-defined]


def make_engine(servers: Iterable[ServerConfig], *, builtins: bool = True, **overrides: Any) -> Any:
    """An engine over ``servers`` (not started), with the real built-ins unless told otherwise."""
    from toolscout.core.engine.facade import Engine

    tools: list[Any] = []
    core: set[str] = set()
    if builtins:
        from toolscout.core.builtins.registry import builtin_tools, core_tool_names

        tools, core = builtin_tools(), core_tool_names()
    return Engine(make_settings(**overrides), builtins=tools, core_names=core, mcp_servers=list(servers))


@asynccontextmanager
async def running(
    servers: Iterable[ServerConfig],
    log: EventLog | None = None,
    *,
    settle: bool = True,
    settle_s: float = 30,
    **overrides: Any,
) -> AsyncIterator[Any]:
    """Start an engine over ``servers``, optionally wait (at most ``settle_s`` seconds) until every
    server settled, stop it after."""
    engine = make_engine(servers, **overrides)
    if log is not None:
        engine.subscribe(log)
    await engine.start()
    try:
        if settle:
            assert await engine.wait_for_servers(settle_s), "servers did not settle"
        yield engine
    finally:
        with anyio.fail_after(20):
            await engine.stop()


async def allow(tool: Any, params: Any) -> str:
    """An asker that allows every call once."""
    return "allow_once"


def pid_alive(pid: int) -> bool:
    """True while a process with this pid exists (and is not a reaped zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def descendants(fragment: str) -> list[int]:
    """Pids of this process's descendants whose command line contains ``fragment`` (Linux)."""
    parents: dict[int, int] = {}
    cmdlines: dict[int, bytes] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                    parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    cmdlines[int(entry)] = fh.read()
            except (OSError, IndexError, ValueError):
                continue
    mine, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - mine
        mine |= frontier
    return sorted(p for p in mine if fragment.encode() in cmdlines.get(p, b""))


async def started_server(fragment: str, timeout: float = 20.0) -> int:
    """The pid of the one server process (not the launcher's shim) whose command line contains
    ``fragment``, once it has started: no need to wait for it to connect, which a niced server on
    a loaded machine may not do within a test's patience."""
    with anyio.fail_after(timeout):
        while True:
            found = [p for p in descendants(fragment) if p not in descendants("launcher_shim.py")]
            if found:
                assert len(found) == 1, found
                return found[0]
            await anyio.sleep(0.02)
