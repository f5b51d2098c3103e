"""Benchmark of the prebuilt index (issue 27 item 1) at the 47-catalog scale.

Catalog: the 47 ``tools/list`` dumps of ``../shared/bench-data/catalogs`` (1,673 tools), given
as ``--catalog`` files (searchable file servers), the default ranker (dense signal on).

Measured, each with a cold vector cache of its own (``TOOLSCOUT_CACHE_DIR`` a fresh temp dir, so
nothing but the index can provide vectors):

1. ``toolscout index --catalog DIR --out IDX``: wall time cold (every text encoded) and warm
   (a second run: every vector cached), and the folder's size.
2. Loading the index in process: :func:`~toolscout.core.engine.index_files.read_index` plus
   ``Engine.use_prebuilt_index`` (what ``serve --index`` does before it answers), median of 5.
3. ``toolscout serve`` over stdio (raw JSON-RPC lines), ``--index IDX`` vs ``--catalog DIR``:
   seconds from the spawn to the ``initialize`` answer, to the ``tools/list`` answer, to the
   first search's answer, and until a search is ranked as the index ranks it (the full
   profile: without an index the first answers come from the lexical fallback while the 1,673
   texts are encoded; polled every 2 s, at most ``--max-wait`` s).

Run from the repo: ``.venv/bin/python tests/benchmarks/prebuilt_index.py [--repeat 2] [--json]``.
The load average is printed with each run (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import SRC

SHARED = Path(os.environ.get("TOOLSCOUT_TEST_SHARED") or SRC.parents[1] / "shared")
CATALOGS = next(
    (p for p in (SHARED / "bench-data" / "catalogs", Path("/work/shared/bench-data/catalogs")) if p.is_dir()),
    SHARED / "bench-data" / "catalogs",
)
QUERY = "create a pull request on a repository"
PROBE = "look at what is inside a folder"


def env(cache: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "TOOLSCOUT_"))}
    out.update(PYTHONPATH=str(SRC), TOOLSCOUT_CACHE_DIR=str(cache))
    return out


def catalog_dir(tmp: Path) -> Path:
    """The 47 catalogs alone (the manifest files ``index.json`` / ``servers.json`` left out)."""
    folder = tmp / "catalogs"
    folder.mkdir()
    for path in sorted(CATALOGS.glob("*.json")):
        if path.name not in ("index.json", "servers.json"):
            (folder / path.name).symlink_to(path)
    return folder


def build(catalogs: Path, out: Path, cache: Path) -> float:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "toolscout", "index", "--catalog", str(catalogs), "--out", str(out), "--json"],
        env=env(cache),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    took = time.monotonic() - start
    if proc.returncode:
        raise SystemExit(proc.stderr)
    return took


def load_in_process(out: Path) -> float:
    code = (
        "import time,sys;t=time.perf_counter();"
        "from toolscout.core.engine.index_files import read_index;"
        "from toolscout.core.engine.facade import Engine;"
        "from toolscout.core.settings.layers import Settings;"
        "e=Engine(Settings());t1=time.perf_counter();"
        f"e.use_prebuilt_index(read_index({str(out)!r}));"
        "print(time.perf_counter()-t1)"
    )
    runs = []
    for _ in range(5):
        proc = subprocess.run(
            [sys.executable, "-c", code], env=env(Path("/nonexistent")), capture_output=True, text=True
        )
        if proc.returncode:
            raise SystemExit(proc.stderr)
        runs.append(float(proc.stdout.strip()))
    return statistics.median(runs)


class Stdio:
    def __init__(self, args: list[str], cache: Path, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolscout", "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env(cache),
            cwd=cwd,
        )
        self.next = 0

    def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next += 1
        line = {"jsonrpc": "2.0", "id": self.next, "method": method, "params": params or {}}
        self.proc.stdin.write((json.dumps(line) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            message = json.loads(self.proc.stdout.readline())
            if message.get("id") == self.next:
                return message

    def search(self, query: str) -> str:
        answer = self.ask("tools/call", {"name": "search_tools", "arguments": {"query": query, "max_results": 10}})
        return str(answer["result"]["content"][0]["text"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def serve_run(args: list[str], cache: Path, cwd: Path, target: str | None, max_wait: float) -> dict[str, Any]:
    start = time.monotonic()
    gw = Stdio(args, cache, cwd)
    try:
        gw.ask(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        )
        init = time.monotonic() - start
        gw.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')  # type: ignore[union-attr]
        gw.ask("tools/list")
        listed = time.monotonic() - start
        first = gw.search(QUERY)
        searched = time.monotonic() - start
        ranked: float | None = searched
        if target is not None and first != target:
            ranked = None
            while time.monotonic() - start < max_wait:
                time.sleep(2.0)
                if gw.search(QUERY) == target:
                    ranked = time.monotonic() - start
                    break
        return {
            "initialize_s": round(init, 2),
            "tools_list_s": round(listed, 2),
            "first_search_s": round(searched, 2),
            "ranked_as_index_s": round(ranked, 2) if ranked is not None else f"> {max_wait:g}",
            "answer": first,
        }
    finally:
        gw.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--max-wait", type=float, default=300.0)
    parser.add_argument("--json", action="store_true")
    ns = parser.parse_args()
    report: dict[str, Any] = {"catalogs": str(CATALOGS)}
    with tempfile.TemporaryDirectory(prefix="toolscout-index-bench-") as tmp_name:
        tmp = Path(tmp_name)
        catalogs = catalog_dir(tmp)
        out, cache = tmp / "index", tmp / "build-cache"
        report["load_avg_before_build"] = os.getloadavg()[0]
        report["index_build_cold_s"] = round(build(catalogs, out, cache), 1)
        report["index_build_warm_s"] = round(build(catalogs, out, cache), 1)
        manifest = json.loads((out / "manifest.json").read_text())
        report["tools"] = manifest["tool_count"]
        report["index_bytes"] = sum(p.stat().st_size for p in out.iterdir())
        report["load_in_process_s"] = round(load_in_process(out), 3)
        runs: dict[str, list[dict[str, Any]]] = {"index": [], "no_index": []}
        target: str | None = None
        for i in range(ns.repeat):
            for kind in ("index", "no_index"):
                cwd = tmp / f"{kind}-{i}"
                cwd.mkdir()
                args = ["--index", str(out)] if kind == "index" else ["--catalog", str(catalogs)]
                row = serve_run(args, tmp / f"cache-{kind}-{i}", cwd, target, ns.max_wait)
                if kind == "index" and target is None:
                    target = row["answer"]
                row.pop("answer")
                row["load_avg"] = round(os.getloadavg()[0], 2)
                runs[kind].append(row)
                if not ns.json:
                    print(kind, row, flush=True)
        report["serve"] = runs
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
