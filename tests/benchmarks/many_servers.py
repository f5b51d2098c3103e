"""The app while many MCP servers connect (issue 12): first paint, keystroke echo, connect time
against the raw SDK in the same run, catalog updates, quit.

Two runs, each in fresh processes with temp config/data/cache dirs:

* **fixture** — :data:`SERVERS` stdio fixture servers (``tests/fixtures/servers/bench.py``), each
  waiting a connect delay before serving, then listing a configurable number of tools with
  schemas of a configurable size (defaults shaped like the 47 real catalogs: 36 tools of ~1.2 kB).
* **real** — the 47 real servers of ``../shared/bench-data/catalogs`` installed under
  ``/work/realservers/work`` (``write_mcp_json.py``); skipped, with the reason, when absent.

Per run, the **raw SDK** before and after the app (the machine's load drifts; the app is compared
with the mean of the two): one process imports ``mcp`` and connects every server concurrently
(``Client`` over ``stdio_client``: initialize + every ``tools/list`` page); its time to the last
answer counts from before the import. In between, the **app**: ``make_app`` over the real
engine (offline session) in Textual's pilot with a real event loop (``run_test(size=(140, 42))``):

* *first paint*: process launch (stamped by the parent just before ``Popen``) → the first frame of
  the main screen rendered (its compositor refresh with the prompt mounted); *ready for input*:
  → ``run_test`` entered and ``pilot.pause()`` returned (Textual's pilot also waits, up to 1 s,
  for the whole process to go idle, so this includes background threads starting up);
* *echo*: from first paint until every server has settled (and 20 keys after), keys are typed one
  at a time into the prompt every ~30 ms; each key is timed from ``pilot.press`` to the prompt's
  ``Input.Changed`` for the new value being dispatched (the frame that shows it follows);
* *connected*: pool start → the ``ServerStateChanged`` of each server reaching the UI loop;
  compared with the raw SDK's time to its last answer (ratio target ≤ 1.1);
* *catalog*: subtrees redrawn by :class:`~toolscout.tui.widgets.catalog.CatalogPanel` refreshes,
  against what whole-tree rebuilds would have drawn;
* *quit*: ``app.exit()`` → the app has stopped the engine; then child processes still alive.

Run alone: ``.venv/bin/python tests/benchmarks/many_servers.py [--servers 47 --delay 0.5
--tools 36 --schema-bytes 1200 --no-real]``.
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

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
BENCH_SERVER = REPO / "tests" / "fixtures" / "servers" / "bench.py"
CATALOGS = next(
    (
        p / "shared" / "bench-data" / "catalogs"
        for p in (REPO.parent, REPO.parent.parent)
        if (p / "shared" / "bench-data" / "catalogs").is_dir()
    ),
    REPO.parent / "shared" / "bench-data" / "catalogs",
)
REAL_ROOT = Path(os.environ.get("TOOLSCOUT_REAL_SERVERS", "/work/realservers/work"))
SIZE = (140, 42)
TARGETS = {"first_paint_s": 1.5, "echo_p95_ms": 50.0, "connect_ratio": 1.1, "quit_s": 2.0}
TIMEOUT_S = 600

RAW = r"""
import json, os, sys, time
t0 = time.perf_counter()
import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
sys.path.insert(0, sys.argv[2])
from toolscout.core.mcp.config import load_mcp_config
import_s = time.perf_counter() - t0
configs = [c for c in load_mcp_config(os.getcwd(), [sys.argv[1]], discover=False).servers.values() if c.error is None]
answers, failures = {}, {}

async def one(cfg):
    params = StdioServerParameters(command=cfg.command, args=list(cfg.args), env=cfg.env or None, cwd=cfg.cwd)
    try:
        with anyio.fail_after(float(sys.argv[3])):
            with open(os.devnull, "w") as errlog:
                async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                    cursor, n = None, 0
                    while True:
                        page = await client.list_tools(cursor=cursor)
                        n += len(page.tools)
                        cursor = page.next_cursor
                        if cursor is None:
                            break
                    answers[cfg.name] = (time.perf_counter() - t0, n)
    except BaseException as exc:
        failures[cfg.name] = f"{type(exc).__name__}: {exc}"[:200]

async def main():
    async with anyio.create_task_group() as tg:
        for cfg in configs:
            tg.start_soon(one, cfg)

anyio.run(main)
print(json.dumps({"import_s": import_s, "answers": answers, "failures": failures}))
"""

APP = r"""
import asyncio, json, os, sys, time
CONFIG, LAUNCH, TYPED_AFTER = sys.argv[1], float(sys.argv[2]), 20
from textual.widgets import Input
from toolscout.core.engine.events import ServerStateChanged
from toolscout.core.factory import create_engine
from toolscout.core.settings.layers import load_settings
from toolscout.core.session.providers import OfflineProvider
from toolscout.core.session.session import Session
from toolscout.tui.factory import make_app
from toolscout.tui.widgets.catalog import CatalogPanel

settings = load_settings()
engine = create_engine(settings, mcp_config_paths=[CONFIG], default_servers=False)
session = Session(engine, settings=settings, provider=OfflineProvider(), persist=False)
app = make_app(settings, engine, session)
out = {"connected": {}, "failed": {}, "echo": [], "catalog": {"refreshes": 0, "groups": 0, "nodes": 0, "full": 0}}
names = set(engine.pool.configs)
stamps = {}
settled = asyncio.Event()

def on_event(event):
    if isinstance(event, ServerStateChanged) and event.status.name in names:
        s = event.status
        now = time.perf_counter() - stamps.get("pool", time.perf_counter())
        if s.state.value == "connected":
            out["connected"].setdefault(s.name, now)
        elif s.state.value in ("failed", "disconnected"):
            out["failed"].setdefault(s.name, s.error or s.state.value)
        if len(out["connected"]) + len(out["failed"]) >= len(names):
            stamps.setdefault("settled", time.perf_counter())
            out.setdefault("cpu_connecting_s", time.process_time() - stamps.get("cpu_pool", 0.0))
            settled.set()
engine.subscribe(on_event)
real_start = engine.pool.start
async def timed_start():
    stamps["pool"] = time.perf_counter()
    stamps["cpu_pool"] = time.process_time()
    await real_start()
engine.pool.start = timed_start

from textual.screen import Screen
real_compose = Screen._compositor_refresh
def first_frame(self):
    real_compose(self)
    if "first_frame" not in stamps and self is app.screen and self.query("#prompt"):
        stamps["first_frame"] = time.time()
Screen._compositor_refresh = first_frame

changed = {"value": None, "event": asyncio.Event(), "t": 0.0}
from textual.widgets import TextArea
def prompt_text(widget):
    return widget.text if isinstance(widget, TextArea) else widget.value
def hook(message):  # the prompt is an Input or (multi-line) a TextArea
    if isinstance(message, Input.Changed) and message.input.id == "prompt":
        changed["value"], changed["t"] = message.value, time.perf_counter()
        changed["event"].set()
    elif isinstance(message, TextArea.Changed) and message.text_area.id == "prompt":
        changed["value"], changed["t"] = message.text_area.text, time.perf_counter()
        changed["event"].set()

def children():
    pids = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
                pids[int(entry)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                pass
    mine, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {p for p, parent in pids.items() if parent in frontier} - mine
        mine |= frontier
    return mine

async def main():
    async with app.run_test(size=(140, 42), message_hook=hook) as pilot:
        await pilot.pause()
        out["first_idle_s"] = time.time() - LAUNCH
        out["first_paint_s"] = stamps.get("first_frame", time.time()) - LAUNCH
        panel = app.screen.query_one(CatalogPanel)
        real_refresh = panel.refresh_tree
        def counted():
            real_refresh()
            c = out["catalog"]
            c["refreshes"] += 1
            c["groups"] += len(panel.last_rebuilt)
            sizes = {g: len(t) for g, t in panel.groups()}
            c["nodes"] += sum(sizes.get(g, 0) for g in panel.last_rebuilt)
            c["full"] += sum(sizes.values())
        panel.refresh_tree = counted
        text, keys, after = "", "the quick brown fox jumps over the lazy dog ", 0
        if os.environ.get("BENCH_IDLE_WHILE_CONNECTING"):  # nobody types until every server settled
            await asyncio.wait_for(settled.wait(), 600)
        i = 0
        while after < TYPED_AFTER and i < 3000:
            if len(text) >= 40:
                key, expected = "backspace", text[:-1]
            else:
                ch = keys[i % len(keys)]
                key, expected = ("space" if ch == " " else ch), text + ch
            i += 1
            during = not settled.is_set()
            changed["event"].clear()
            t = time.perf_counter()
            await pilot.press(key)
            try:
                async with asyncio.timeout(20):
                    while changed["value"] != expected:
                        changed["event"].clear()
                        await changed["event"].wait()
            except TimeoutError:
                out["echo"].append([during, None])
                continue
            out["echo"].append([during, 1000 * (changed["t"] - t)])
            text = expected
            if not text:  # all deleted: type again
                pass
            if not during:
                after += 1
            await asyncio.sleep(0.03)  # typing cadence
        out["prompt_ok"] = prompt_text(app.screen.query_one("#prompt")) == text
        out["children_before_quit"] = len(children())
        t = time.perf_counter()
        app.exit()
    out["quit_s"] = time.perf_counter() - t
    out["children_after_quit"] = sorted(children())
    out["all_settled_s"] = stamps["settled"] - stamps["pool"] if "settled" in stamps else None

if os.environ.get("BENCH_PROFILE"):
    import cProfile, pstats
    prof = cProfile.Profile()
    prof.enable()
    asyncio.run(main())
    prof.disable()
    pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(45)
else:
    asyncio.run(main())
out["sessions"] = engine.pool.sessions_in_use
print(json.dumps(out))
"""


def hermetic_env(home: Path) -> dict[str, str]:
    """Temp config/data/cache dirs, no provider keys, this checkout's ``src`` first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "TOOLSCOUT_"))}
    env.update(
        TOOLSCOUT_CONFIG_DIR=str(home / "config"),
        TOOLSCOUT_DATA_DIR=str(home / "data"),
        TOOLSCOUT_CACHE_DIR=str(home / "cache"),
        TOOLSCOUT_MANAGED_SETTINGS=str(home / "managed.json"),
        PYTHONPATH=str(REPO / "src"),
    )
    return env


def fixture_config(path: Path, servers: int, delay: float, tools: int, schema_bytes: int) -> Path:
    """A ``.mcp.json`` of ``servers`` bench fixture servers."""
    spec = {
        f"bench{i:02d}": {
            "command": PYTHON,
            "args": [str(BENCH_SERVER), f"bench{i:02d}", str(delay), str(tools), str(schema_bytes)],
        }
        for i in range(servers)
    }
    path.write_text(json.dumps({"mcpServers": spec}))
    return path


def real_config(path: Path) -> tuple[Path | None, str]:
    """The real servers' ``.mcp.json``, or None and why not."""
    writer = CATALOGS / "write_mcp_json.py"
    if not writer.is_file() or not REAL_ROOT.is_dir():
        return None, f"the real servers are not installed ({REAL_ROOT} or {writer} missing)"
    proc = subprocess.run(
        [PYTHON, str(writer), "--root", str(REAL_ROOT), "--out", str(path)], capture_output=True, text=True, timeout=120
    )
    if proc.returncode != 0:
        return None, f"write_mcp_json.py failed: {proc.stderr[-300:]}"
    return path, proc.stdout.strip()


def run_json(args: list[str], env: dict[str, str], cwd: Path) -> dict:
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(
    config: Path, connect_timeout: float, priority: str = "normal", sessions: str = "auto", idle: bool = False
) -> dict:
    """Raw SDK then app, each in a fresh process with its own temp dirs (``idle``: nobody types
    into the app until every server settled)."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = hermetic_env(home)
        if idle:
            env["BENCH_IDLE_WHILE_CONNECTING"] = "1"
        (home / "config").mkdir()
        (home / "config" / "settings.json").write_text(
            json.dumps({"mcp": {"timeout": connect_timeout, "serverPriority": priority, "serverSessions": sessions}})
        )
        raw_args = [PYTHON, "-c", RAW, str(config), str(REPO / "src"), str(connect_timeout)]
        raw = run_json(raw_args, env, home)
        launch = time.time()
        app = run_json([PYTHON, "-c", APP, str(config), repr(launch)], env, home)
        raw_after = run_json(raw_args, env, home)
    return {"raw": raw, "app": app, "raw_after": raw_after}


def _q(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summarise(label: str, result: dict) -> list[str]:
    """Markdown rows of one run."""
    raw, app, after = result["raw"], result["app"], result["raw_after"]
    label = f"{label} ({app.get('sessions', '?')} sessions)"
    answered = set(raw["answers"]) & set(after["answers"])
    lasts = [
        max((t for n, (t, _) in r["answers"].items() if n in answered), default=float("nan")) for r in (raw, after)
    ]
    raw_last = sum(lasts) / 2  # the raw SDK before and after the app: load drift evens out
    app_times = {n: t for n, t in app["connected"].items() if n in answered}
    app_last = max(app_times.values(), default=float("nan"))
    ratio = app_last / raw_last if raw_last else float("nan")
    during = [ms for d, ms in app["echo"] if d and ms is not None]
    after = [ms for d, ms in app["echo"] if not d and ms is not None]
    lost = sum(1 for _, ms in app["echo"] if ms is None)
    cat = app["catalog"]
    tools = sum(n for _, n in raw["answers"].values())
    leftover = len(app["children_after_quit"])
    return [
        f"| {label} | first paint (first frame of the main screen) | {app['first_paint_s']:.2f} s | "
        f"< {TARGETS['first_paint_s']} s |",
        f"| {label} | pilot ready (first frame + process idle, at most 1 s more) | {app['first_idle_s']:.2f} s | |",
        f"| {label} | echo while connecting: p50 / p95 / max ({len(during)} keys) | "
        f"{_q(during, 0.5):.1f} / {_q(during, 0.95):.1f} / {max(during, default=float('nan')):.1f} ms | "
        f"p95 < {TARGETS['echo_p95_ms']:.0f} ms |",
        f"| {label} | echo after connecting: p50 / p95 ({len(after)} keys) | "
        f"{_q(after, 0.5):.1f} / {_q(after, 0.95):.1f} ms | |",
        f"| {label} | keys lost (no echo within 20 s) · prompt text intact | {lost} · {app.get('prompt_ok')} | 0 · True |",
        f"| {label} | raw SDK: last answer, before / after the app ({len(answered)} servers, {tools:,} tools; "
        f"import {raw['import_s']:.2f} s) | {lasts[0]:.2f} / {lasts[1]:.2f} s | |",
        f"| {label} | app: last of those connected (pool start → UI loop) | {app_last:.2f} s | |",
        f"| {label} | app / raw (mean of before and after) | {ratio:.2f} | ≤ {TARGETS['connect_ratio']} |",
        f"| {label} | app: first server connected | {min(app_times.values(), default=float('nan')):.2f} s | |",
        f"| {label} | app process CPU (all threads) from pool start to the last server settled | "
        f"{app.get('cpu_connecting_s', float('nan')):.2f} s | |",
        f"| {label} | catalog: subtrees redrawn / tool nodes drawn over {cat['refreshes']} refreshes | "
        f"{cat['groups']} / {cat['nodes']:,} (whole-tree rebuilds: {cat['full']:,} nodes) | changed server only |",
        f"| {label} | quit (app.exit → engine stopped) · child processes left | {app['quit_s']:.2f} s · {leftover} "
        f"(of {app['children_before_quit']}) | < {TARGETS['quit_s']} s · 0 |",
    ]


def run(argv: list[str] | None = None) -> str:
    """Markdown section: the many-server UI benchmark."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, default=47)
    ap.add_argument("--delay", type=float, default=0.5, help="fixture server start-up delay (s)")
    ap.add_argument("--tools", type=int, default=36, help="tools per fixture server")
    ap.add_argument("--schema-bytes", type=int, default=1200, help="approximate JSON bytes per input schema")
    ap.add_argument("--no-real", action="store_true", help="skip the real 47 servers")
    ap.add_argument("--no-fixture", action="store_true", help="skip the fixture servers")
    ap.add_argument(
        "--idle-while-connecting",
        action="store_true",
        help="type only after every server settled (connect time without the typing's CPU)",
    )
    ap.add_argument(
        "--server-sessions",
        choices=("auto", "shared", "separate"),
        default="auto",
        help="the app's mcp.serverSessions (the raw SDK always starts each server in its own session)",
    )
    ap.add_argument(
        "--server-priority",
        choices=("normal", "low"),
        default="normal",
        help="the app's mcp.serverPriority (the raw SDK always runs servers at normal priority)",
    )
    a = ap.parse_args(argv or [])
    rows: list[str] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        fixture = fixture_config(Path(tmp) / "fixture.json", a.servers, a.delay, a.tools, a.schema_bytes)
        low = (
            (" · low priority" if a.server_priority == "low" else "")
            + ("" if a.server_sessions == "auto" else f" · {a.server_sessions} set")
            + (" · idle while connecting" if a.idle_while_connecting else "")
        )
        if not a.no_fixture:
            rows += summarise(
                f"fixture ×{a.servers}{low}",
                measure(fixture, 60.0, a.server_priority, a.server_sessions, a.idle_while_connecting),
            )
        if a.no_real:
            notes.append("real servers: skipped (--no-real)")
        else:
            real, why = real_config(Path(tmp) / "real.json")
            if real is None:
                notes.append(f"real servers: skipped: {why}")
            else:
                rows += summarise(
                    f"real 47{low}", measure(real, 30.0, a.server_priority, a.server_sessions, a.idle_while_connecting)
                )
                notes.append(f"real servers: {why}")
    head = [
        "## Many servers: UI responsiveness while connecting",
        "",
        f"`tests/benchmarks/many_servers.py` (fixture: {a.servers} stdio servers, {a.delay:g} s start-up delay, "
        f"{a.tools} tools of ~{a.schema_bytes:,} B schemas each). App in Textual's pilot with a real event loop "
        f"at {SIZE[0]}x{SIZE[1]}, offline session, temp dirs; raw SDK and app in fresh processes, same run.",
        "",
        "| run | measure | result | target |",
        "|---|---|---:|---|",
    ]
    return "\n".join([*head, *rows, "", *(f"- {n}" for n in notes)]) + "\n"


if __name__ == "__main__":
    sys.stdout.write(run(sys.argv[1:]))
