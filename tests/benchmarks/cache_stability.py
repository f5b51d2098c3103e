"""Cache stability over a scripted 50-turn session while real MCP catalogs come and go.

Both request projections (``execute-proxy`` and ``stub``) run the same script: the real
:class:`~toolscout.core.session.session.Session` over a real Engine, the real ``anthropic`` SDK
(:class:`~toolscout.core.session.providers.anthropic_provider.AnthropicProvider`) talking to the
loopback fake Messages API (``tests/fixtures/providers``). Between turns, server tool sets from
``../shared/bench-data/catalogs`` connect, disconnect and re-list (tools dropped, added, a
description changed) through ``catalog.set_server_tools`` / ``remove_server`` +
``engine.apply_delta``, exactly as the MCP pool reports them.

Measured on the *raw request bytes the SDK sent* (captured before JSON parsing):

* the stable prefix is the ``tools`` value then the ``system`` value (the API renders the prompt
  tools → system → messages; the one ``cache_control`` breakpoint on the system block caches both).
  For every request after the first: is it byte-identical to the previous request's? And
  append-only: is the previous tools array, minus its closing ``]``, a byte prefix of the new one
  (with the system identical)? Execute-proxy must be 100% identical; stub appends stubs when
  servers connect, so it is 100% append-only but not identical.
* tokens of every deferred-tools delta announcement (``<deferred-tools-added>`` /
  ``<deferred-tools-removed>`` reminders), counted with ``toolscout.core.tokens.default_counter``.
* uncached input tokens per tool load, under a simple model of the Anthropic cache (breakpoints on
  the system block and on the last message block): a request whose prefix matches the previous
  one pays only for the messages appended since; a prefix change pays for the whole request.

Run alone: ``.venv/bin/python tests/benchmarks/cache_stability.py``.
"""

from __future__ import annotations

import asyncio
import copy
import io
import json
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
for _p in (REPO / "src", REPO / "tests"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from fixtures.providers import FakeModelServer, Reply, ToolCall  # noqa: E402
from toolscout.core.catalog.loaders import load_catalog  # noqa: E402
from toolscout.core.models import ToolSpec  # noqa: E402
from toolscout.core.tokens import TokenCounter, default_counter  # noqa: E402

CATALOGS = REPO.parent / "shared" / "bench-data" / "catalogs"
TURNS = 50
STRATEGIES = ("execute-proxy", "stub")
SEED = 7
#: Servers connected before the first request.
INITIAL = ("github", "slack", "filesystem", "time", "memory", "notion")
#: Catalog changes applied before turn i: (kind, server, argument). Kinds: ``connect``,
#: ``disconnect``, ``relist`` (argument ``(drop, add, redescribe)``: drop the last ``drop`` tools,
#: add ``add`` renamed copies, change the description of ``redescribe`` tools).
CHANGES: dict[int, list[tuple[str, str, tuple[int, int, int]]]] = {
    3: [("connect", "sentry", (0, 0, 0))],
    5: [("relist", "github", (2, 1, 0))],
    7: [("disconnect", "slack", (0, 0, 0))],
    9: [("connect", "playwright", (0, 0, 0))],
    11: [("relist", "notion", (0, 0, 1))],
    13: [("connect", "stripe", (0, 0, 0)), ("connect", "supabase", (0, 0, 0))],
    16: [("disconnect", "memory", (0, 0, 0))],
    18: [("connect", "slack", (0, 0, 0))],
    21: [("relist", "playwright", (3, 2, 0))],
    24: [("connect", "atlassian", (0, 0, 0))],
    27: [("disconnect", "sentry", (0, 0, 0))],
    30: [("connect", "google-workspace", (0, 0, 0))],
    33: [("relist", "github", (0, 2, 1))],
    36: [("disconnect", "playwright", (0, 0, 0))],
    39: [("connect", "cloudflare", (0, 0, 0))],
    42: [("disconnect", "atlassian", (0, 0, 0))],
    45: [("relist", "stripe", (1, 0, 1))],
    48: [("connect", "kubernetes", (0, 0, 0))],
}


# -- raw request bytes ------------------------------------------------------------------------
class CapturingServer(FakeModelServer):
    """The fake Messages API, also keeping each request body exactly as it came off the socket."""

    def __init__(self, script: list[Any]) -> None:
        self.raw: list[bytes] = []
        super().__init__(script)

    def _handler(self) -> Any:
        base = super()._handler()
        server = self

        class Capturing(base):  # type: ignore[misc, valid-type]
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                data = self.rfile.read(length)
                with server._lock:
                    server.raw.append(data)
                self.rfile = io.BytesIO(data)  # the base handler reads the same bytes again
                super().do_POST()

        return Capturing


_WS = re.compile(r"\s*")


def top_level_spans(raw: bytes) -> dict[str, str]:
    """The exact source text of every top-level value of a JSON object, by key.

    Raises:
        ValueError: ``raw`` is not a JSON object.
    """
    text = raw.decode("utf-8")
    dec = json.JSONDecoder()
    i = _WS.match(text, 0).end()  # type: ignore[union-attr]
    if text[i : i + 1] != "{":
        raise ValueError("not a JSON object")
    i += 1
    out: dict[str, str] = {}
    while True:
        i = _WS.match(text, i).end()  # type: ignore[union-attr]
        if text[i] == "}":
            return out
        key, i = dec.raw_decode(text, i)
        i = _WS.match(text, i).end()  # type: ignore[union-attr]
        if text[i] != ":":
            raise ValueError(f"expected ':' at {i}")
        i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
        _, end = dec.raw_decode(text, i)
        out[key] = text[i:end]
        i = _WS.match(text, end).end()  # type: ignore[union-attr]
        if text[i] == ",":
            i += 1


# -- the script -------------------------------------------------------------------------------
@dataclass
class World:
    """The catalog side of the script: original tool sets and what each server lists now."""

    originals: dict[str, list[ToolSpec]]
    instructions: dict[str, str | None]
    current: dict[str, list[ToolSpec]] = field(default_factory=dict)

    def tools_after(self, kind: str, server: str, arg: tuple[int, int, int]) -> list[ToolSpec]:
        """The tool list ``server`` reports after a change (``connect`` / ``relist``)."""
        if kind == "connect":
            return list(self.originals[server])
        drop, add, redescribe = arg
        tools = list(self.current[server])
        tools = tools[: len(tools) - drop] if drop else tools
        for n in range(add):
            src = self.originals[server][n % len(self.originals[server])]
            name = f"{src.original_name or src.name}_v{len(tools)}"
            tools.append(
                replace(src, name=name, original_name=name, description=f"{src.description} (revised edition {n})")
            )
        for n in range(min(redescribe, len(tools))):
            tools[n] = replace(tools[n], description=f"{tools[n].description} Now paginated.")
        return tools


def apply_change(engine: Any, world: World, change: tuple[str, str, tuple[int, int, int]]) -> None:
    """Apply one catalog change the way the MCP pool reports it to the engine."""
    kind, server, arg = change
    if kind == "disconnect":
        world.current.pop(server, None)
        engine.apply_delta(engine.catalog.remove_server(server))
        return
    tools = world.tools_after(kind, server, arg)
    world.current[server] = tools
    engine.apply_delta(engine.catalog.set_server_tools(server, tools, world.instructions.get(server)))


def _pick(engine: Any, world: World, rng: random.Random) -> str:
    """A deferred tool of a connected server (canonical name)."""
    server = rng.choice(sorted(world.current))
    tools = engine.catalog.server_tools(server)
    return rng.choice(tools).name


def _keywords(engine: Any, name: str) -> str:
    tool = engine.catalog.get(name)
    words = re.findall(r"[A-Za-z]{3,}", (tool.description if tool else "") or name)
    return " ".join(words[:5]) or name


def _last_loaded(body: dict[str, Any]) -> str | None:
    """The first name in the newest ``<loaded-tools>`` trailer of the request's tool results."""
    for message in reversed(body["messages"]):
        for block in message["content"]:
            content = block.get("content") if block.get("type") == "tool_result" else None
            if isinstance(content, str) and "<loaded-tools>" in content:
                names = content.split("<loaded-tools>", 1)[1].split("</loaded-tools>", 1)[0].split()
                return names[0] if names else None
    return None


def turn_script(i: int, strategy: str, engine: Any, world: World, rng: random.Random) -> list[Any]:
    """What the fake model does in turn ``i``: search, load-and-call, direct call, talk, search + core tool.

    Entries are callables evaluated when the request arrives, so they pick tools that exist then.
    """
    done = Reply(text=f"Done with turn {i}.")
    kind = i % 5
    if kind == 0:
        return [
            lambda _b: Reply(
                tool_calls=[ToolCall("ToolSearch", {"query": _keywords(engine, _pick(engine, world, rng))})]
            ),
            done,
        ]
    if kind == 1:

        def call_loaded(body: dict[str, Any]) -> Reply:
            name = _last_loaded(body) or _pick(engine, world, rng)
            if strategy == "stub":
                return Reply(tool_calls=[ToolCall(name, {})])
            return Reply(tool_calls=[ToolCall("ExecuteTool", {"tool_name": name, "params": {}})])

        return [
            lambda _b: Reply(tool_calls=[ToolCall("ToolSearch", {"query": "select:" + _pick(engine, world, rng)})]),
            call_loaded,
            done,
        ]
    if kind == 2:  # a deferred tool called by name without loading it (stub: the self-healing gate)
        return [lambda _b: Reply(tool_calls=[ToolCall(_pick(engine, world, rng), {})]), done]
    if kind == 3:
        return [Reply(text=f"Plain answer {i}.")]
    return [
        lambda _b: Reply(
            tool_calls=[
                ToolCall("ToolSearch", {"query": _keywords(engine, _pick(engine, world, rng))}),
                ToolCall("Glob", {"pattern": "*.md"}),
            ]
        ),
        done,
    ]


# -- one run ----------------------------------------------------------------------------------
@dataclass
class RunResult:
    """Everything measured for one strategy (token counts in tokens, times in s)."""

    strategy: str
    requests: int
    pairs: int
    identical: int
    append_only: int
    turn_pairs: int
    turn_identical: int
    turn_append_only: int
    meter_hits: int
    prefix_tokens_first: int
    prefix_tokens_last: int
    tools_first: int
    tools_last: int
    deltas: list[tuple[int, int, int, int]]  # (turn, added, removed, tokens)
    full_announcement_tokens: int
    loads: int
    tools_loaded: int
    load_text_tokens: int
    load_uncached: list[int]
    uncached_total: int
    input_total: int
    wall_s: float
    errors: list[str]


def _strip(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(messages)
    for m in out:
        for b in m["content"]:
            b.pop("cache_control", None)
    return out


def _tok(counter: TokenCounter, value: Any) -> int:
    return counter.count(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


async def _drive(strategy: str, world: World, workdir: Path) -> tuple[Any, CapturingServer, list[Any], list[str]]:
    from toolscout.core.builtins.registry import builtin_tools, core_tool_names
    from toolscout.core.engine.facade import Engine
    from toolscout.core.session.events import AnnouncementSent
    from toolscout.core.session.providers.anthropic_provider import AnthropicProvider
    from toolscout.core.session.session import Session
    from toolscout.core.settings.layers import Settings

    # bm25f: ranking does not matter here and the optional dense model need not load.
    settings = Settings().with_overrides({"toolSearch.ranker": "bm25f"})
    engine = Engine(settings, builtins=builtin_tools(), core_names=core_tool_names(), project_dir=workdir)
    world.current.clear()
    for server in INITIAL:
        apply_change(engine, world, ("connect", server, (0, 0, 0)))
    rng = random.Random(SEED)
    script: list[Any] = []
    for i in range(TURNS):
        script.extend(turn_script(i, strategy, engine, world, rng))
    announcements: list[Any] = []
    errors: list[str] = []
    with CapturingServer(script) as server:
        provider = AnthropicProvider("bench-key", "claude-bench", server.url, max_retries=0, timeout=30)
        session = Session(engine, provider=provider, strategy=strategy, persist=False)
        session.subscribe(lambda e: announcements.append(e) if isinstance(e, AnnouncementSent) else None)
        for i in range(TURNS):
            for change in CHANGES.get(i, []):
                apply_change(engine, world, change)
            outcome = await asyncio.wait_for(session.send(f"turn {i}: carry on with the task"), 60)
            if outcome.error:
                errors.append(f"turn {i}: {outcome.error}")
        await session.close()
    return session, server, announcements, errors


def measure(strategy: str, world: World, counter: TokenCounter) -> RunResult:
    """Run the 50-turn script in ``strategy`` and measure the captured requests."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        session, server, announcements, errors = asyncio.run(_drive(strategy, world, Path(tmp)))
    wall = time.perf_counter() - start
    spans = [top_level_spans(r) for r in server.raw]
    bodies = [json.loads(r) for r in server.raw]
    prefixes = [(s["tools"], s["system"]) for s in spans]

    def same(a: int, b: int) -> bool:
        return prefixes[a] == prefixes[b]

    def append_only(a: int, b: int) -> bool:
        (ta, sa), (tb, sb) = prefixes[a], prefixes[b]
        if sa != sb:
            return False
        return ta == tb or (tb.startswith(ta[:-1]) and tb[len(ta) - 1 :].lstrip().startswith(","))

    n = len(bodies)
    identical = sum(same(k - 1, k) for k in range(1, n))
    appended = sum(append_only(k - 1, k) for k in range(1, n))
    # Turn boundaries: the first request of each turn against the last request of the one before.
    turn_of = [u.turn for u in session.usage_log]
    if len(turn_of) != n:
        raise RuntimeError(f"{len(turn_of)} usage reports for {n} requests: {errors[:3]}")
    firsts = [k for k in range(1, n) if turn_of[k] != turn_of[k - 1]]
    # Simulated cache: unchanged prefix → only the messages appended since the last request are new.
    uncached: list[int] = []
    for k, body in enumerate(bodies):
        msgs = _strip(body["messages"])
        if k == 0 or not same(k - 1, k):
            uncached.append(_tok(counter, prefixes[k][0]) + _tok(counter, prefixes[k][1]) + _tok(counter, msgs))
        else:
            prev = _strip(bodies[k - 1]["messages"])
            uncached.append(_tok(counter, msgs[len(prev) :]))
    full_tokens = 0
    delta_texts: list[str] = []
    for message in bodies[-1]["messages"]:
        if message["role"] != "user":
            continue
        for block in message["content"]:
            text = block.get("text", "") if block.get("type") == "text" else ""
            if "<available-deferred-tools>" in text:
                full_tokens = counter.count(text)
            elif "<deferred-tools-added>" in text or "<deferred-tools-removed>" in text:
                delta_texts.append(text)
    delta_events = [a for a in announcements if not a.full]
    turns_with_delta = _delta_turns(session.messages)
    deltas = [
        (
            turns_with_delta[j] if j < len(turns_with_delta) else -1,
            len(delta_events[j].added) if j < len(delta_events) else -1,
            len(delta_events[j].removed) if j < len(delta_events) else -1,
            counter.count(t),
        )
        for j, t in enumerate(delta_texts)
    ]
    log = session.usage_log
    load_requests = [k for k, u in enumerate(log) if u.load_tokens > 0]
    loads = len(session.router.load_texts)
    tools_loaded = sum(
        len(t.split("<loaded-tools>", 1)[1].split("</loaded-tools>", 1)[0].split())
        for t in session.router.load_texts
        if "<loaded-tools>" in t
    )
    stats = session.cache_stats()
    return RunResult(
        strategy=strategy,
        requests=n,
        pairs=n - 1,
        identical=identical,
        append_only=appended,
        turn_pairs=len(firsts),
        turn_identical=sum(same(k - 1, k) for k in firsts),
        turn_append_only=sum(append_only(k - 1, k) for k in firsts),
        meter_hits=int(stats["prefix_hits"]),
        prefix_tokens_first=_tok(counter, prefixes[0][0]) + _tok(counter, prefixes[0][1]),
        prefix_tokens_last=_tok(counter, prefixes[-1][0]) + _tok(counter, prefixes[-1][1]),
        tools_first=len(bodies[0]["tools"]),
        tools_last=len(bodies[-1]["tools"]),
        deltas=deltas,
        full_announcement_tokens=full_tokens,
        loads=loads,
        tools_loaded=tools_loaded,
        load_text_tokens=int(stats["load_tokens"]),
        load_uncached=[uncached[k] for k in load_requests],
        uncached_total=sum(uncached),
        input_total=sum(_tok(counter, p[0]) + _tok(counter, p[1]) for p in prefixes)
        + sum(_tok(counter, _strip(b["messages"])) for b in bodies),
        wall_s=wall,
        errors=errors,
    )


def _delta_turns(messages: list[dict[str, Any]]) -> list[int]:
    """The turn of every delta announcement block, in order (the person's "turn i: ..." text rides
    in the same user message as the reminders that were due when it was sent)."""
    out: list[int] = []
    turn = -1
    for message in messages:
        if message["role"] != "user":
            continue
        texts = [b.get("text", "") for b in message["content"] if b.get("type") == "text"]
        for text in texts:
            if text.startswith("turn "):
                turn = int(text.split()[1].rstrip(":"))
        out.extend(turn for t in texts if "<deferred-tools-added>" in t or "<deferred-tools-removed>" in t)
    return out


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "n/a"


def load_world() -> World:
    """Tool sets of the catalogs the script uses."""
    loaded = load_catalog(CATALOGS)
    wanted = set(INITIAL) | {s for changes in CHANGES.values() for _, s, _ in changes}
    groups = {g.name: g for g in loaded.servers if g.name in wanted}
    missing = wanted - set(groups)
    if missing:
        raise RuntimeError(f"catalogs missing from {CATALOGS}: {sorted(missing)}")
    return World({n: list(g.tools) for n, g in groups.items()}, {n: g.instructions for n, g in groups.items()})


def report(results: list[RunResult], counter_name: str) -> str:
    """The Markdown section."""
    changes = sum(len(c) for c in CHANGES.values())
    out = [
        "## Cache stability (50 turns, servers coming and going)",
        "",
        f"{TURNS} scripted turns per strategy through the real `anthropic` SDK against the loopback fake "
        f"Messages API; {len(INITIAL)} real catalogs connected at the start, then {changes} catalog changes "
        "between turns (connect, disconnect, re-list with tools dropped/added/re-described; servers from "
        "`../shared/bench-data/catalogs`). The fake model searches (keywords and `select:`), calls what it "
        "loaded, calls deferred tools by name without loading them, calls a core tool, or just answers. "
        "Prefix = the raw `tools` value then the raw `system` value of each request body as sent. "
        f"Tokens: `{counter_name}`.",
        "",
        "| strategy | requests | prefix identical to previous request | append-only (previous prefix is a byte prefix) "
        "| turn boundaries identical | turn boundaries append-only | session meter hits | prefix tokens first → last "
        "| tools first → last |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        out.append(
            f"| {r.strategy} | {r.requests} | {r.identical}/{r.pairs} ({_pct(r.identical, r.pairs)}) "
            f"| {r.append_only}/{r.pairs} ({_pct(r.append_only, r.pairs)}) "
            f"| {r.turn_identical}/{r.turn_pairs} ({_pct(r.turn_identical, r.turn_pairs)}) "
            f"| {r.turn_append_only}/{r.turn_pairs} ({_pct(r.turn_append_only, r.turn_pairs)}) "
            f"| {r.meter_hits}/{r.pairs} | {r.prefix_tokens_first:,} → {r.prefix_tokens_last:,} "
            f"| {r.tools_first} → {r.tools_last} |"
        )
    out += [
        "",
        "Target: execute-proxy 100% byte-identical; stub 100% append-only (each appended batch of "
        "stubs is one prefix miss).",
    ]
    for r in results:
        if r.errors:
            out += ["", f"**{r.strategy}: {len(r.errors)} turn(s) ended in an error:** " + "; ".join(r.errors[:5])]
    out += [
        "",
        "### Delta announcements",
        "",
        "Tokens of each `<deferred-tools-added>`/`<deferred-tools-removed>` reminder the model received, "
        "in the first user message after the change. "
        + "; ".join(
            f"{r.strategy}: full announcement "
            + (
                f"{r.full_announcement_tokens:,} tokens once"
                if r.full_announcement_tokens
                else "none (the stubs announce the tools)"
            )
            + f", {len(r.deltas)} deltas, {sum(d[3] for d in r.deltas):,} tokens in all (median "
            f"{statistics.median([d[3] for d in r.deltas]) if r.deltas else 0:.0f})"
            for r in results
        )
        + ".",
        "",
        "| turn | change | tools added | names removed | " + " | ".join(f"{r.strategy} tokens" for r in results) + " |",
        "|---:|---|---:|---:|" + "---:|" * len(results),
    ]
    by_turn = [{d[0]: d for d in r.deltas} for r in results]
    for turn in sorted({t for m in by_turn for t in m}):
        change = ", ".join(f"{k} {srv}" for k, srv, _ in CHANGES.get(turn, [])) or "?"
        ref = next(m[turn] for m in by_turn if turn in m)
        cells = " | ".join(f"{m[turn][3]:,}" if turn in m else "—" for m in by_turn)
        out.append(f"| {turn} | {change} | {ref[1]} | {ref[2]} | {cells} |")
    out.append("")
    out += [
        "### Tool loads",
        "",
        "A load is a ToolSearch result or a self-healing definition (stub strategy, a stub called before "
        "loading). *Uncached* = input tokens the request carrying the load pays outside the cache under "
        "the model above (the new messages: tool_use, the result with the schemas, reminders).",
        "",
        "| strategy | loads | tools delivered | load text tokens (mean / load) | uncached tokens of the "
        "carrying request (mean / load) | … per tool delivered | session uncached / total input |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        mean_load = r.load_text_tokens / r.loads if r.loads else 0
        unc = sum(r.load_uncached)
        out.append(
            f"| {r.strategy} | {r.loads} | {r.tools_loaded} | {r.load_text_tokens:,} ({mean_load:,.0f}) "
            f"| {unc:,} ({unc / max(1, len(r.load_uncached)):,.0f}) "
            f"| {unc / max(1, r.tools_loaded):,.0f} | {r.uncached_total:,} / {r.input_total:,} "
            f"({_pct(r.uncached_total, r.input_total)}) |"
        )
    out += ["", "Wall time: " + ", ".join(f"{r.strategy} {r.wall_s:.1f} s" for r in results) + "."]
    return "\n".join(out) + "\n"


def run() -> str:
    """Markdown section: prefix stability, delta announcement tokens, uncached tokens per load."""
    if not CATALOGS.is_dir():
        return f"## Cache stability\n\nskipped: {CATALOGS} is not present\n"
    counter = default_counter()
    results = [measure(strategy, load_world(), counter) for strategy in STRATEGIES]
    return report(results, counter.name)


if __name__ == "__main__":
    sys.stdout.write(run())
