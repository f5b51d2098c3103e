"""Helpers for session tests: providers pointed at the fake server, an event recorder."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from toolscout.core.engine.events import Event
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
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                      "additionalProperties": False},
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
    spec = ToolSpec(name="slow_job", description="Run a slow background job and wait for it.",
                    input_schema={"type": "object", "properties": {}}, original_name="slow_job")

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
