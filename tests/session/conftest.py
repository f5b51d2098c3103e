"""Fixtures for session tests: a real Engine with built-ins, extra deferred tools, fake model APIs.

Every wait is bounded; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from toolscout.core.models import ToolResult, ToolSpec
from toolscout.core.settings import Settings

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))


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
    """Default settings plus dotted-key overrides (no files read)."""
    return Settings().with_overrides(overrides) if overrides else Settings()


def make_engine(tmp_path: Path, *, extra: list[Any] | None = None, **settings: Any) -> Any:
    """A real Engine: every built-in plus ``extra`` deferred tools, cwd ``tmp_path``."""
    from toolscout.core.builtins.registry import builtin_tools, core_tool_names
    from toolscout.core.engine import Engine

    tools = [*builtin_tools(), *(extra if extra is not None else [WeatherTool(), SlowTool()])]
    return Engine(make_settings(**settings), builtins=tools, core_names=core_tool_names(), project_dir=tmp_path)


@pytest.fixture
def engine(tmp_path: Path) -> Any:
    return make_engine(tmp_path)
