"""Start-up time of the CLI: where the seconds go, before and after the lazy-loading fixes.

Wall times are medians of fresh processes (``toolscout`` console script, cwd = the repo, temp
config/data dirs so no user ``mcp.json`` or settings leak in; the embedded default servers time,
git and fetch start for ``call`` and ``mcp list``). *Before* runs the same commands on the source
tree of :data:`BASELINE_REF` (extracted with ``git archive`` into a temp dir and put first on
``PYTHONPATH``), *after* on the working tree, alternating so machine load hits both alike.

The phase table runs one fresh interpreter per tree that times, in order: importing the CLI and
building its parser, creating the engine over every catalog in ``../shared/bench-data/catalogs``
(no servers), ``engine.start`` (catalog load; before the fixes this also built the search index),
the search index build (tokenizing ~1,700 tools, loading the optional dense model and reading
its vector cache), the first search, and the context report (tiktoken over every schema).
Server connect times come from ``ServerStateChanged`` events of the default servers.

Run alone: ``.venv/bin/python tests/benchmarks/startup.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CATALOGS = REPO.parent / "shared" / "bench-data" / "catalogs"
TOOLSCOUT = REPO / ".venv" / "bin" / "toolscout"
PYTHON = REPO / ".venv" / "bin" / "python"
#: The commit before the start-up fixes (override with ``TOOLSCOUT_BENCH_BASELINE``).
BASELINE_REF = os.environ.get("TOOLSCOUT_BENCH_BASELINE", "e8e56e8")
RUNS = 3
TIMEOUT_S = 120.0

COMMANDS: dict[str, list[str]] = {
    "call time": [
        "call",
        "mcp__time__get_current_time",
        "--params",
        '{"timezone":"UTC"}',
        "--allowed-tools",
        "mcp__time__*",
    ],
    "context --catalog": ["context", "--catalog", str(CATALOGS)],
    "search --catalog": ["search", "create issue", "--catalog", str(CATALOGS)],
    "mcp list": ["mcp", "list"],
    "--help": ["--help"],
}

PHASES = r"""
import asyncio, inspect, json, sys, time
CAT = sys.argv[1]
out = {}
t = time.perf_counter()
import toolscout.cli as cli
cli.build_parser()
out["import CLI + build parser"] = time.perf_counter() - t
heavy = ("mcp", "mcp_types", "pydantic", "numpy", "scipy", "sklearn", "onnxruntime", "tokenizers", "tiktoken",
         "anthropic", "openai", "textual", "rich")
loaded = sorted({m.split(".")[0] for m in sys.modules} & set(heavy))
from toolscout.core.factory import create_engine
from toolscout.core.settings.layers import Settings
t = time.perf_counter()
engine = create_engine(Settings(), catalog_paths=[CAT], connect_servers=False)
out["create engine"] = time.perf_counter() - t

async def main():
    lazy = "warm_search" in inspect.signature(engine.start).parameters
    t = time.perf_counter()
    await (engine.start(warm_search=False) if lazy else engine.start())
    out["engine.start (catalog load; before the fixes also the index build)"] = time.perf_counter() - t
    t = time.perf_counter()
    engine.search.index  # built by start() before the fixes: then this is ~0
    out["search index build (tokenize + dense model + vectors)"] = time.perf_counter() - t
    t = time.perf_counter()
    engine.search_tools("create an issue in the tracker")
    out["first search"] = time.perf_counter() - t
    t = time.perf_counter()
    engine.context_report()
    out["context report (tiktoken load + counting)"] = time.perf_counter() - t
    await engine.stop()

asyncio.run(main())
print(json.dumps({"phases": out, "loaded_by_parser": loaded, "tools": len(engine.catalog),
                  "profile": engine.search.active_profile}))
"""

SERVERS = r"""
import asyncio, json, time
from toolscout.core.engine.events import ServerStateChanged
from toolscout.core.factory import create_engine
from toolscout.core.settings.layers import Settings
t0 = time.perf_counter()
engine = create_engine(Settings())
seen = {}
def on(event):
    if isinstance(event, ServerStateChanged) and event.status.state.value != "connecting":
        seen.setdefault(event.status.name, (event.status.state.value, time.perf_counter() - t0))
engine.subscribe(on)
async def main():
    await engine.start(warm_search=False)
    await engine.wait_for_servers(60)
    await engine.stop()
asyncio.run(main())
print(json.dumps({"created_s": 0, "servers": seen, "total_s": time.perf_counter() - t0}))
"""


@contextmanager
def baseline_tree(ref: str = BASELINE_REF) -> Iterator[Path | None]:
    """The ``src`` directory of commit ``ref`` (temp), or None when ``git archive`` cannot produce it."""
    tmp = Path(tempfile.mkdtemp(prefix="toolscout-baseline-"))
    try:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "src"], capture_output=True, timeout=60)
        if archive.returncode != 0:
            yield None
            return
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True, timeout=60)
        yield tmp / "src"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _env(src: Path | None, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "TOOLSCOUT_"))}
    env["TOOLSCOUT_CONFIG_DIR"] = str(home / "config")
    env["TOOLSCOUT_DATA_DIR"] = str(home / "data")
    env["TOOLSCOUT_MANAGED_SETTINGS"] = str(home / "managed.json")
    env["PYTHONPATH"] = str(src) if src else ""
    return env


def time_command(args: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one ``toolscout`` process (raises when it fails)."""
    t = time.perf_counter()
    proc = subprocess.run([str(TOOLSCOUT), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    took = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"toolscout {' '.join(args)} exited {proc.returncode}: {proc.stderr[-500:]}")
    return took


def run_script(script: str, env: dict[str, str], *args: str) -> dict:
    """Run a measuring script in a fresh interpreter and parse its JSON line."""
    proc = subprocess.run(
        [str(PYTHON), "-c", script, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT_S
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-1500:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def import_top(env: dict[str, str], n: int = 8) -> list[tuple[str, float]]:
    """The slowest top-level packages (cumulative ms) of ``import toolscout.cli`` + parser."""
    proc = subprocess.run(
        [str(PYTHON), "-X", "importtime", "-c", "import toolscout.cli as c; c.build_parser()"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    best: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        pkg = parts[2].strip().split(".")[0]
        best[pkg] = max(best.get(pkg, 0.0), int(parts[1]) / 1000)
    return sorted(best.items(), key=lambda kv: -kv[1])[:n]


def run() -> str:
    """Markdown section: wall times before/after, phase breakdown, import and server costs."""
    if not CATALOGS.is_dir():
        return f"## Start-up time\n\nskipped: {CATALOGS} is not present\n"
    with tempfile.TemporaryDirectory() as home_dir, baseline_tree() as base_src:
        home = Path(home_dir)
        after_env = _env(None, home)
        before_env = _env(base_src, home) if base_src else None
        commands = dict(COMMANDS)
        only_time = home / "only-time.json"
        only_time.write_text(
            json.dumps({"mcpServers": {"time": {"command": str(PYTHON), "args": ["-m", "mcp_server_time"]}}})
        )
        commands["call time, only its server configured"] = [*commands["call time"], "--mcp-config", str(only_time)]
        walls: dict[str, dict[str, list[float]]] = {name: {"before": [], "after": []} for name in commands}
        for _ in range(RUNS):
            for name, args in commands.items():
                if before_env is not None:
                    walls[name]["before"].append(time_command(args, before_env))
                walls[name]["after"].append(time_command(args, after_env))
        phases_after = run_script(PHASES, after_env, str(CATALOGS))
        phases_before = run_script(PHASES, before_env, str(CATALOGS)) if before_env else None
        servers = run_script(SERVERS, after_env)
        top = import_top(after_env)
        top_before = import_top(before_env) if before_env else []
        load = os.getloadavg()

    out = [
        "## Start-up time",
        "",
        f"Median of {RUNS} fresh processes per command, machine load average {load[0]:.1f} on "
        f"{os.cpu_count()} cores while measuring. *Before* = source of `{BASELINE_REF}`"
        f"{'' if before_env else ' (unavailable: git archive failed)'}; *after* = working tree.",
        "",
        "| command | before (s) | after (s) | saved |",
        "|---|---:|---:|---:|",
    ]
    for name, series in walls.items():
        b = statistics.median(series["before"]) if series["before"] else float("nan")
        a = statistics.median(series["after"])
        shown = " ".join(commands[name]).replace(str(CATALOGS), "CATALOGS").replace(str(home), "TMP")
        out.append(f"| `toolscout {shown}` | {b:.2f} | {a:.2f} | {b - a:.2f} s |")
    out += [
        "",
        f"### Phases in one process ({phases_after['tools']:,} catalog tools, ranker profile "
        f"`{phases_after['profile']}`)",
        "",
        "| phase | before (s) | after (s) |",
        "|---|---:|---:|",
    ]
    before_phases = phases_before["phases"] if phases_before else {}
    names = list(dict.fromkeys([*before_phases, *phases_after["phases"]]))
    for name in names:
        b = before_phases.get(name)
        a = phases_after["phases"].get(name)
        out.append(f"| {name} | {'' if b is None else f'{b:.2f}'} | {'' if a is None else f'{a:.2f}'} |")
    out += [
        "",
        "Heavy packages imported just by `import toolscout.cli` + `build_parser()`: before "
        f"{', '.join(phases_before['loaded_by_parser']) if phases_before else '?'}; after "
        f"{', '.join(phases_after['loaded_by_parser']) or 'none'}.",
        "",
        "Slowest packages under `python -X importtime` (cumulative ms, CLI import + parser): before "
        + ", ".join(f"{p} {ms:.0f}" for p, ms in top_before)
        + "; after "
        + ", ".join(f"{p} {ms:.0f}" for p, ms in top)
        + ".",
        "",
        "Default servers (after), seconds from engine creation until each settled: "
        + ", ".join(f"{n} {st} at {s:.2f}" for n, (st, s) in servers["servers"].items())
        + f"; all settled and stopped after {servers['total_s']:.2f} s.",
        "",
    ]
    out += FINDINGS
    return "\n".join(out) + "\n"


FINDINGS = [
    "### What changed and what is left",
    "",
    "- **Search index on first use** (`core/search/tool_search.py`): `ToolSearch.index` is built on first "
    "access (`warm()` builds it ahead); before that `sync()` only snapshots what it would index, so the "
    "first search sees exactly what eager syncing would have. `Engine.start(warm_search=True)` keeps the TUI "
    "as before (index built at start); the CLI's `run_with_engine` passes `warm_search=False`, so `context`, "
    "`call` and `mcp list` never tokenize the catalog nor load the dense model, and `search` builds it for "
    "its query.",
    "- **MCP SDK imported when a server launches** (`core/mcp/pool.py`, `core/calls/executor.py`, `core/engine/facade.py`): "
    "`mcp`/`mcp_types`/pydantic models (~0.6–1.3 s) are no longer imported with the engine; catalog-only "
    "runs never import them.",
    "- **`call` starts only the tool's own server** (`cli/call_cmd.py`, a later change): the first row's "
    "*after* includes it.",
    "- Left: numpy/scipy still load with the CLI parser through `core/search/__init__` (eager re-exports); a "
    "lazy `__getattr__` there would save ~0.3 s more.",
]


if __name__ == "__main__":
    sys.stdout.write(run())
