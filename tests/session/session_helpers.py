"""Helpers for session tests: providers pointed at the fake server, an event recorder."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from fixtures.providers import FakeModelServer, Reply, ToolCall
from fixtures.warm_servers import server_args
from toolscout.core.builtins.registry import builtin_tools, core_tool_names
from toolscout.core.engine.events import Event
from toolscout.core.engine.facade import Engine
from toolscout.core.mcp.config import ServerConfig
from toolscout.core.models import ToolResult, ToolSpec
from toolscout.core.session.providers.anthropic_provider import AnthropicProvider
from toolscout.core.session.providers.openai_provider import OpenAIProvider
from toolscout.core.settings.layers import Settings


def provider_for(kind: str, url: str) -> Any:
    """An Anthropic or OpenAI provider that talks to the fake server at ``url`` (no retries)."""
    if kind == "anthropic":
        return AnthropicProvider("test-key", "claude-test", url, max_retries=0, timeout=20)
    return OpenAIProvider("test-key", "gpt-test", url + "/v1", max_retries=0, timeout=20)


class Recorder:
    """Collects events; ``of(Type)`` filters them; ``await wait_for(Type)`` waits for one."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._arrived = asyncio.Event()

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        self._arrived.set()

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    async def wait_for(self, kind: type, *, timeout_s: float = 10.0) -> Any:
        """The first recorded event of ``kind``, waiting for it (``TimeoutError`` after
        ``timeout_s`` seconds)."""
        async with asyncio.timeout(timeout_s):
            while not (found := self.of(kind)):
                self._arrived.clear()
                await self._arrived.wait()
        return found[0]


def user_texts(body: dict[str, Any]) -> list[str]:
    """Every text of every user message of an Anthropic request body."""
    out = []
    for m in body["messages"]:
        if m["role"] == "user":
            out.extend(b.get("text", "") for b in m["content"] if b.get("type") == "text")
    return out


class WeatherTool:
    """A deferred built-in standing in for an MCP tool (executable, unlike catalog-file tools)."""

    read_only = True
    spec = ToolSpec(
        name="get_forecast",
        description="Get the weather forecast for a city.",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
        original_name="get_forecast",
    )

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def run(self, params: dict[str, Any], ctx: Any) -> ToolResult:
        self.calls.append(params)
        return ToolResult.ok("get_forecast", f"Sunny in {params['city']}, 21 °C")


class SlowTool:
    """A deferred tool that waits until cancelled or released (cancellation tests)."""

    read_only = True
    spec = ToolSpec(
        name="slow_job",
        description="Run a slow background job and wait for it.",
        input_schema={"type": "object", "properties": {}},
        original_name="slow_job",
    )

    def __init__(self) -> None:
        import asyncio

        self.started = asyncio.Event()
        self.cancelled = False

    async def run(self, params: dict[str, Any], ctx: Any) -> ToolResult:
        import asyncio

        self.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolResult.ok("slow_job", "done")


def make_settings(**overrides: Any) -> Settings:
    """Default settings with tool search always on (these test catalogs are far below the auto
    threshold), plus dotted-key overrides (no files read)."""
    return Settings().with_overrides({"toolSearch.enabled": "true", **overrides})


def make_engine(tmp_path: Path, *, extra: list[Any] | None = None, **settings: Any) -> Any:
    """A real Engine: every built-in plus ``extra`` deferred tools, cwd ``tmp_path``."""
    from toolscout.core.builtins.registry import builtin_tools, core_tool_names
    from toolscout.core.engine.facade import Engine

    tools = [*builtin_tools(), *(extra if extra is not None else [WeatherTool(), SlowTool()])]
    return Engine(make_settings(**settings), builtins=tools, core_names=core_tool_names(), project_dir=tmp_path)


#: A fixture server whose tool count is an argument (``--tools N``), logging calls (``--log``).
LATE = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "late.py"
#: The tool limit each provider's session meets in the provider-limit tests: OpenAI's own (its
#: loopback API enforces it), Anthropic's through ``provider.maxTools`` (its own is 10,000).
LIMITS = {"openai": 128, "anthropic": 120}


def wide_config(log: Path, name: str = "wide", tools: int = 140, gate: Path | None = None) -> ServerConfig:
    """A fixture server of ``tools`` tools (``op_0000`` ...) with empty schemas, logging calls to ``log``."""
    args = ["--tools", str(tools), "--props", "0", "--log", str(log)]
    if gate is not None:
        args += ["--gate", str(gate)]
    return ServerConfig(
        name, "stdio", command=sys.executable, args=tuple(server_args(LATE, name, *args)), source="test"
    )


def limit_engine(
    tmp_path: Path, provider: str, mode: str, strategy: str, *configs: ServerConfig, **extra: Any
) -> Engine:
    """An engine over ``configs`` for ``provider``'s limit (:data:`LIMITS`), fixture servers allowed."""
    overrides: dict[str, Any] = {
        "toolSearch.enabled": mode,
        "session.strategy": strategy,
        "permissions.allow": ["wide", "late"],
        **extra,
    }
    if provider == "anthropic":
        overrides["provider.maxTools"] = LIMITS["anthropic"]
    settings = Settings().with_overrides(overrides, "test")
    return Engine(
        settings,
        builtins=builtin_tools(),
        core_names=core_tool_names(),
        project_dir=tmp_path,
        mcp_servers=list(configs),
    )


def names_of(body: dict[str, Any]) -> list[str]:
    """Tool names of a request body as the provider received it (Anthropic or OpenAI shape)."""
    return [t["function"]["name"] if "function" in t else t["name"] for t in body.get("tools") or ()]


def logged(log: Path) -> list[dict[str, Any]]:
    """The calls the fixture server received."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def search_then_execute(target: str) -> list[Reply]:
    """The model's script: ToolSearch ``select:target``, ExecuteTool ``target`` with no params, "done"."""
    return [
        Reply(tool_calls=[ToolCall("ToolSearch", {"query": f"select:{target}"})]),
        Reply(tool_calls=[ToolCall("ExecuteTool", {"tool_name": target, "params": {}})]),
        Reply(text="done"),
    ]


async def run_turn(
    engine: Engine, provider: str, script: list[Any], text: str = "run the last record operation", **server_options: Any
) -> tuple[Any, Any, list[dict[str, Any]]]:
    """Start ``engine`` (its servers settled), run one turn of a session over the loopback
    ``provider`` API (``anthropic`` | ``openai``) answering with ``script``, stop the engine.

    Returns:
        The session, its :class:`~toolscout.core.session.session.TurnOutcome` and the request
        bodies the loopback API received.
    """
    from toolscout.core.session.session import Session

    await engine.start()
    try:
        assert await engine.wait_for_servers(20)
        with FakeModelServer(script, **server_options) as server:
            session = Session(engine, provider=provider_for(provider, server.url), persist=False)
            outcome = await session.send(text)
            return session, outcome, server.bodies
    finally:
        await engine.stop()
