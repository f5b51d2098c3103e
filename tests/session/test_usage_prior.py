"""The usage prior (issue 25 item 2), met as a person meets it: a real session over the loopback
Anthropic API runs ``get_forecast`` through ExecuteTool and writes its transcript; the next
session in the same folder ranks that tool a little higher, says so in the score explanation
(its own ``usage`` component), and in its recommendations. ``toolSearch.usagePrior = 0`` turns it
off; an exact tool name still ranks first however much another tool was used; another project's
transcripts and failed calls do not count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from session_helpers import WeatherTool, make_engine, provider_for

from fixtures.providers import FakeModelServer, Reply, ToolCall
from toolscout.core.models import ToolResult, ToolSpec
from toolscout.core.search.usage_history import project_usage
from toolscout.core.session.session import Session

QUERY = "weather for a city"
#: A weight above the default, so one earlier call overtakes a rival 15% ahead (the default is
#: chosen by the replay benchmark, tests/benchmarks/usage_replay.py).
WEIGHT = 0.2


class RivalTool:
    """A second deferred weather tool that matches the query as well as ``get_forecast``."""

    read_only = True
    spec = ToolSpec(
        name="get_weather_outlook",
        description="Get the weather outlook and forecast for a city.",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        original_name="get_weather_outlook",
    )

    async def run(self, params: dict[str, Any], ctx: Any) -> ToolResult:
        return ToolResult.ok("get_weather_outlook", "Cloudy")


def engine_for(project: Path, **settings: Any) -> Any:
    overrides = {"toolSearch.ranker": "bm25f", "toolSearch.usagePrior": WEIGHT, **settings}
    return make_engine(project, extra=[WeatherTool(), RivalTool()], **overrides)


async def run_session(project: Path, script: list[Reply]) -> Session:
    engine = engine_for(project)
    await engine.start()
    try:
        with FakeModelServer(script) as server:
            session = Session(engine, provider=provider_for("anthropic", server.url), persist=True)
            await session.send("what will the weather be in Paris?")
            await session.close()
            return session
    finally:
        await engine.stop()


def forecast_then_done(city: str = "Paris") -> list[Reply]:
    return [
        Reply(tool_calls=[ToolCall("ToolSearch", {"query": "select:get_forecast"})]),
        Reply(tool_calls=[ToolCall("ExecuteTool", {"tool_name": "get_forecast", "params": {"city": city}})]),
        Reply(text="Sunny."),
    ]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOOLSCOUT_DATA_DIR", str(tmp_path / "data"))
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


async def test_a_tool_run_in_an_earlier_session_ranks_higher_and_says_why(project: Path) -> None:
    cold = engine_for(project)
    cold.use_project_usage()
    before = {h.tool.name: h for h in cold.rank(QUERY, 5)}
    assert "usage" not in before["get_forecast"].components  # nothing ran yet
    assert before["get_weather_outlook"].score > before["get_forecast"].score  # the rival leads

    session = await run_session(project, forecast_then_done())
    assert session.store is not None and session.store.path.exists()
    assert project_usage(project) == {"get_forecast": pytest.approx(1.0, abs=0.01)}

    warm = engine_for(project)
    warm.use_project_usage()
    hits = warm.rank(QUERY, 5)
    assert [h.tool.name for h in hits[:2]] == ["get_forecast", "get_weather_outlook"]
    lifted = hits[0]
    assert lifted.components["usage"] > 0
    assert lifted.raw["usage"] == pytest.approx(1.0)  # the most used tool has share 1
    assert sum(lifted.components.values()) == pytest.approx(lifted.score)
    assert "usage" in warm.ranker_components
    explained = warm.explain(lifted)
    assert "usage" in explained and "share of this project's tool runs" in explained
    # score = (1 - λ) fused + λ share with λ = weight × gate: the rival keeps its fused part
    lam = WEIGHT * hits[1].raw["gate"]
    assert hits[1].score == pytest.approx((1 - lam) * before["get_weather_outlook"].score)
    assert hits[1].components["usage"] == 0.0


async def test_the_setting_0_turns_it_off(project: Path) -> None:
    await run_session(project, forecast_then_done())
    off = engine_for(project, **{"toolSearch.usagePrior": 0})
    off.use_project_usage()
    hits = off.rank(QUERY, 5)
    assert all("usage" not in h.components for h in hits)
    assert "usage" not in off.ranker_components
    assert hits[0].tool.name == "get_weather_outlook"


async def test_an_exact_name_outranks_any_amount_of_use(project: Path) -> None:
    await run_session(project, forecast_then_done())
    engine = engine_for(project, **{"toolSearch.usagePrior": 0.5})
    engine.use_project_usage()
    for _ in range(500):
        engine.record_tool_use("get_forecast")
    hits = engine.rank("get_weather_outlook", 5)
    assert hits[0].tool.name == "get_weather_outlook" and hits[0].exact_name
    assert hits[0].score == 1.0
    result = engine.search_tools("get_weather_outlook")
    assert result.hits[0].tool.name == "get_weather_outlook"


async def test_failed_calls_and_other_projects_do_not_count(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    await run_session(other, forecast_then_done())  # another folder's session
    assert project_usage(project) == {}
    # a call the tool refuses (missing city) comes back with is_error: not counted
    failing = [
        Reply(tool_calls=[ToolCall("ToolSearch", {"query": "select:get_forecast"})]),
        Reply(tool_calls=[ToolCall("ExecuteTool", {"tool_name": "get_forecast", "params": {}})]),
        Reply(text="failed"),
    ]
    await run_session(project, failing)
    assert project_usage(project) == {}
    assert project_usage(other) == {"get_forecast": pytest.approx(1.0, abs=0.01)}


async def test_recommendations_carry_the_prior(project: Path) -> None:
    await run_session(project, forecast_then_done())
    engine = engine_for(project)
    engine.use_project_usage()
    ranked = engine.search.rank(QUERY, 5)  # what the prefetcher ranks with
    assert ranked[0].tool.name == "get_forecast" and ranked[0].components["usage"] > 0


async def test_older_sessions_count_less(project: Path) -> None:
    import os
    import time

    session = await run_session(project, forecast_then_done())
    assert session.store is not None
    two_weeks = time.time() - 14 * 86_400
    os.utime(session.store.path, (two_weeks, two_weeks))  # the session was two weeks ago
    assert project_usage(project) == {"get_forecast": pytest.approx(0.5, abs=0.01)}
