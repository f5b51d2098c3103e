"""How soon ``toolscout serve`` (stdio) answers its client, before and after the gateway stopped
waiting for its engine at start (issue 21 item 9), with N configured upstream servers.

For each N (real ``mcp-server-time`` copies, cold processes) and each handshake (legacy
``initialize``, or the 2026-07-28 ``server/discover`` Claude Code sends), a fresh gateway is
started with temp config/data/cache dirs and the default ranker profile; the script times, from
the spawn, the first answer and then the first ``tools/list`` round trip (raw JSON-RPC lines, so
nothing waits on the client side), and the exit after stdin closes. *Before* runs the source tree
of :data:`BASELINE_REF` (``git archive``, first on ``PYTHONPATH``), *after* the working tree,
alternating so machine load hits both alike; the load average is printed with each run.

Run alone: ``.venv/bin/python tests/benchmarks/serve_startup.py [--servers 1 10 30] [--repeat 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import SRC
from startup import baseline_tree

#: The commit before the change (the branch point of real-clients).
BASELINE_REF = os.environ.get("TOOLSCOUT_BENCH_BASELINE", "5a65b29")
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode()


def _read(proc: subprocess.Popen[bytes], want: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        message = json.loads(proc.stdout.readline())
        if message.get("id") == want:
            return message


def one_run(src: Path, servers: int, modern: bool) -> dict[str, float]:
    """Seconds to the first answer, for the ``tools/list`` round trip and to exit after stdin EOF."""
    with tempfile.TemporaryDirectory(prefix="toolscout-serve-bench-") as tmp:
        home = Path(tmp)
        config = home / "servers.json"
        config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        f"time{i}": {
                            "command": sys.executable,
                            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
                        }
                        for i in range(servers)
                    }
                }
            )
        )
        (home / "project").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "TOOLSCOUT_"))}
        env.update(
            PYTHONPATH=str(src),
            TOOLSCOUT_CONFIG_DIR=str(home / "config"),
            TOOLSCOUT_DATA_DIR=str(home / "data"),
            TOOLSCOUT_CACHE_DIR=str(home / "cache"),
        )
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "toolscout", "serve", "--mcp-config", str(config)],
            cwd=home / "project",
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdin is not None
        meta = {"_meta": MODERN_META} if modern else {}
        if modern:
            proc.stdin.write(_line({"id": 1, "method": "server/discover", "params": meta}))
        else:
            proc.stdin.write(
                _line(
                    {
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {},
                            "clientInfo": {"name": "bench", "version": "0"},
                        },
                    }
                )
            )
        proc.stdin.flush()
        _read(proc, 1)
        answered = time.monotonic()
        if not modern:
            proc.stdin.write(_line({"method": "notifications/initialized"}))
        proc.stdin.write(_line({"id": 2, "method": "tools/list", "params": meta}))
        proc.stdin.flush()
        _read(proc, 2)
        listed = time.monotonic()
        proc.stdin.close()
        proc.wait(120)
        return {
            "first_answer_s": answered - start,
            "tools_list_s": listed - answered,
            "exit_s": time.monotonic() - listed,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, nargs="+", default=[1, 10, 30])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="one JSON line per run instead of the text lines")
    args = parser.parse_args()
    with baseline_tree(BASELINE_REF) as before:
        trees = [("before", before), ("after", SRC)] if before is not None else [("after", SRC)]
        for servers in args.servers:
            for modern in (False, True):
                for _ in range(args.repeat):
                    for label, src in trees:
                        load = os.getloadavg()[0]
                        times = one_run(src, servers, modern)
                        row = {
                            "tree": label,
                            "servers": servers,
                            "handshake": "server/discover" if modern else "initialize",
                            "load": round(load, 1),
                            **{k: round(v, 2) for k, v in times.items()},
                        }
                        print(
                            json.dumps(row)
                            if args.json
                            else f"{label:6} N={servers:<3} {row['handshake']:16} load {load:4.1f}: first answer "
                            f"{times['first_answer_s']:5.2f} s, tools/list {times['tools_list_s']:5.2f} s, "
                            f"exit after EOF {times['exit_s']:4.2f} s",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
