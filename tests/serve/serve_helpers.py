"""Helpers for the ``toolscout serve`` tests: configs, and the gateway run as a real subprocess
driven by the real ``mcp`` client over stdio or streamable HTTP.

(Not named ``conftest``: the directory is on ``sys.path``; tests import this module by name.)
Every wait is bounded (``anyio.fail_after``) and waits on a message, a line or a state.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[2]
SERVERS = REPO / "tests" / "fixtures" / "servers"
if str(SERVERS.parent) not in sys.path:
    sys.path.insert(0, str(SERVERS.parent))
from warm_servers import server_args  # noqa: E402

#: Bound on one wait for the gateway (start-up includes importing the SDK and search).
WAIT_S = 60.0


def fixture_entry(script: str, *args: str) -> dict[str, Any]:
    """A ``mcpServers`` entry running fixture server ``script`` with this Python (warm, through
    the fork server: tests/fixtures/warm_servers.py)."""
    return {"command": sys.executable, "args": server_args(SERVERS / f"{script}.py", *args)}


def time_entry() -> dict[str, Any]:
    """The real ``mcp-server-time`` reference server (installed with toolscout)."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def client_dir(tmp_path: Path) -> Path:
    """The folder the gateway runs in (``tmp_path/client``, as a client starts it in its
    project): the config files in ``tmp_path`` are then the person's own, outside that folder,
    not project config waiting for the folder's approval (:mod:`toolscout.core.policy.trust_files`)."""
    folder = tmp_path / "client"
    folder.mkdir(exist_ok=True)
    return folder


def write_config(tmp_path: Path, servers: dict[str, dict[str, Any]]) -> Path:
    """An MCP config file (Claude Code format) listing ``servers``."""
    path = tmp_path / "servers.mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def write_user_settings(settings: dict[str, Any]) -> None:
    """User settings (``$TOOLSCOUT_CONFIG_DIR/settings.json``; the hermetic fixture set the dir)."""
    folder = Path(os.environ["TOOLSCOUT_CONFIG_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


#: The ranking profile the test gateways use: lexical, so no gateway loads the embedding model
#: in the background (~0.5 s of CPU each, ~9 s over tests/serve). Tests about the default ranker
#: pass ``ranker=None``.
TEST_RANKER = "bm25f"


def serve_env(ranker: str | None = TEST_RANKER) -> dict[str, str]:
    """The environment of the gateway subprocess: this worktree's sources first, and
    ``TOOLSCOUT_RANKER=ranker`` (None: the settings' default profile)."""
    env = dict(os.environ)
    if ranker is not None:
        env["TOOLSCOUT_RANKER"] = ranker
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def serve_command(*args: str) -> list[str]:
    """``toolscout serve ARGS`` as a command line. A client's first request waits (bounded) for
    upstream servers, generously on a loaded test machine; a later ``--wait-servers`` in ARGS wins."""
    return [sys.executable, "-m", "toolscout", "serve", "--wait-servers", str(WAIT_S), *args]


class Inbox:
    """Server notifications the client received; :meth:`wait_for` waits (bounded) for one."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self._changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        self.messages.append(message)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, kind: type, timeout: float = WAIT_S) -> Any:
        with anyio.fail_after(timeout):
            while True:
                found = [m for m in self.messages if isinstance(m, kind)]
                if found:
                    return found[-1]
                await self._changed.wait()


Elicit = Callable[[Any, types.ElicitRequestParams], Awaitable[types.ElicitResult]]


@asynccontextmanager
async def stdio_gateway(
    tmp_path: Path,
    *args: str,
    elicit: Elicit | None = None,
    inbox: Inbox | None = None,
    mode: str = "legacy",
    ranker: str | None = TEST_RANKER,
    cwd: Path | None = None,
) -> AsyncIterator[Client]:
    """``toolscout serve ARGS`` over stdio, connected with the real client (``mode="legacy"`` is
    the initialize handshake real clients use; ``"auto"`` negotiates 2026-07-28); ``ranker`` as
    in :func:`serve_env`. It runs in ``cwd`` (default :func:`client_dir`); its stderr goes to
    ``tmp_path/gateway.stderr``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=serve_command(*args)[1:],
        env=serve_env(ranker),
        cwd=str(cwd or client_dir(tmp_path)),
    )
    with (tmp_path / "gateway.stderr").open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog),
            mode=mode,  # type: ignore[arg-type]
            elicitation_callback=elicit,
            message_handler=inbox,
        ) as client:
            yield client


#: ``_meta`` every request of a 2026-07-28 client carries (no ``initialize`` on that protocol).
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
LEGACY_INIT = {
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


class RawStdio:
    """``toolscout serve`` over stdio spoken to in raw JSON-RPC lines (the SDK client waits for
    each answer it needs; a test of what answers first cannot use it). :meth:`request` sends
    without waiting; :meth:`answer` waits (bounded by the caller) for the answer to an id."""

    def __init__(self, proc: Process) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self.lines = BufferedByteReceiveStream(proc.stdout)
        self.answers: dict[int, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 0

    async def request(self, method: str, params: dict[str, Any] | None = None, *, modern: bool = False) -> int:
        """Send a request (with the 2026-07-28 ``_meta`` when ``modern``); returns its id."""
        self._next_id += 1
        params = dict(params or {})
        if modern:
            params["_meta"] = {**MODERN_META, **params.get("_meta", {})}
        await self.send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    async def send(self, message: dict[str, Any]) -> None:
        """Send one JSON-RPC message (``jsonrpc`` is added)."""
        assert self.proc.stdin is not None
        await self.proc.stdin.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        """The next message from the gateway (answers are also kept in :attr:`answers`)."""
        message: dict[str, Any] = json.loads(await self.lines.receive_until(b"\n", 1 << 26))
        if "id" in message and "method" not in message:
            self.answers[message["id"]] = message
        elif "method" in message:
            self.notifications.append(message)
        return message

    async def answer(self, request_id: int) -> dict[str, Any]:
        """The answer to ``request_id`` (reading until it comes)."""
        while request_id not in self.answers:
            await self.receive()
        return self.answers[request_id]


@asynccontextmanager
async def raw_stdio_gateway(tmp_path: Path, *args: str, ranker: str | None = TEST_RANKER) -> AsyncIterator[RawStdio]:
    """``toolscout serve ARGS`` as a subprocess with pipes, in :func:`client_dir`; stderr goes to
    ``tmp_path/gateway.stderr``. On exit stdin is closed and the process waited for (bounded)."""
    with (tmp_path / "gateway.stderr").open("w") as errlog:
        proc = await anyio.open_process(
            serve_command(*args), env=serve_env(ranker), cwd=client_dir(tmp_path), stderr=errlog
        )
        async with proc:
            try:
                yield RawStdio(proc)
            finally:
                with anyio.move_on_after(WAIT_S, shield=True):
                    if proc.returncode is None:
                        await proc.stdin.aclose()  # type: ignore[union-attr]
                        await proc.wait()
                if proc.returncode is None:
                    proc.kill()


def process_gone(pid: int) -> bool:
    """True once process ``pid`` has exited (or is a zombie waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def text_of(result: types.CallToolResult) -> str:
    """All text blocks of a tool result."""
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def wait_until(check: Callable[[], Awaitable[bool]], timeout: float = WAIT_S) -> None:
    """Ask ``check`` again (yielding between tries) until it is true; fails after ``timeout``."""
    with anyio.fail_after(timeout):
        while not await check():
            await anyio.sleep(0.05)


class HttpGateway:
    """``toolscout serve --http 127.0.0.1:0 ARGS`` as a subprocess; :attr:`url` once it listens.
    ``nofile`` sets its open-file limit (``RLIMIT_NOFILE``, soft and hard), as a desktop's 1024 would."""

    def __init__(self, tmp_path: Path, *args: str, bind: str = "127.0.0.1:0", nofile: int | None = None) -> None:
        self.log_path = tmp_path / "gateway-http.stderr"
        self.errlog = self.log_path.open("w")

        def limit() -> None:
            import resource

            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.proc = subprocess.Popen(  # stopped at once on SIGTERM: no drain delay (docs/deployment.md)
            serve_command("--http", bind, "--drain-delay", "0", *args),
            cwd=client_dir(tmp_path),
            env=serve_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.errlog,
            preexec_fn=limit if nofile else None,
        )
        self.url = ""

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)`` of :attr:`url`."""
        netloc = self.url.split("//", 1)[1].split("/", 1)[0]
        host, _, port = netloc.rpartition(":")
        return host.strip("[]"), int(port)

    def rss_kb(self) -> int:
        """The gateway's resident memory now (``VmRSS`` of /proc/PID/status), in kB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text(encoding="ascii")
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))

    @property
    def stderr(self) -> str:
        """What the gateway wrote to stderr so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    async def start(self) -> str:
        """Wait (bounded) for the ``listening on URL`` line; returns the URL."""
        with anyio.fail_after(WAIT_S):
            while "listening on " not in self.stderr:
                if self.proc.poll() is not None:
                    raise AssertionError(f"gateway exited ({self.proc.returncode}): {self.stderr}")
                await anyio.sleep(0.05)
        line = next(x for x in self.stderr.splitlines() if "listening on " in x)
        self.url = line.rsplit("listening on ", 1)[1].strip()
        return self.url

    def stop(self) -> None:
        """End the subprocess (SIGTERM, then wait bounded)."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.errlog.close()


@asynccontextmanager
async def http_gateway(tmp_path: Path, *args: str, nofile: int | None = None) -> AsyncIterator[HttpGateway]:
    """A started :class:`HttpGateway`, stopped on exit."""
    gateway = HttpGateway(tmp_path, *args, nofile=nofile)
    try:
        await gateway.start()
        yield gateway
    finally:
        gateway.stop()


@asynccontextmanager
async def http_client(
    url: str, headers: dict[str, str] | None = None, *, elicit: Elicit | None = None, inbox: Inbox | None = None
) -> AsyncIterator[Client]:
    """The real client over streamable HTTP (legacy handshake), with optional request headers."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    @asynccontextmanager
    async def transport() -> AsyncIterator[Any]:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0)) as http,
            streamable_http_client(url, http_client=http) as streams,
        ):
            yield streams

    async with Client(
        transport(),
        mode="legacy",
        elicitation_callback=elicit,  # type: ignore[arg-type]
        message_handler=inbox,
    ) as client:
        yield client


#: Headers of a raw streamable-HTTP POST (what the SDK client sends).
RAW_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


async def open_session(url: str, headers: dict[str, str] | None = None) -> str:
    """Open an MCP session with raw HTTP requests (initialize, initialized); its id."""
    import httpx2

    async with httpx2.AsyncClient(timeout=30, headers={**RAW_HEADERS, **(headers or {})}) as http:
        opened = await http.post(url, json=INITIALIZE)
        assert opened.status_code == 200, (opened.status_code, opened.text)
        sid = opened.headers["mcp-session-id"]
        done = await http.post(
            url,
            headers={"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"},
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        )
        assert done.status_code == 202, done.text
    return sid


def raw_post(path: str, host: str, body: dict[str, Any], headers: dict[str, str]) -> bytes:
    """The bytes of an HTTP/1.1 POST of ``body`` (JSON) to ``path``, for raw-socket clients."""
    data = json.dumps(body).encode()
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}",
        f"Content-Length: {len(data)}",
        *(f"{k}: {v}" for k, v in {**RAW_HEADERS, **headers}.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data
