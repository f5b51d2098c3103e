"""The status bar keeps "Esc to interrupt" in view at 80 columns while a turn runs (found by the
new-user try: the end of the bar, where the hint is, was cut off), dropping less useful parts first.

Journey (full app, a model session at 80×24): a turn that hangs shows the hint on the top line;
Esc interrupts it. Harness test: the bar alone, with every part it can show, at 200, 80 and 45
columns: which parts go first, and a provider name too long for the rest is cut before the hint.
"""

from __future__ import annotations

import asyncio

import tui_scenarios as sc
from tui_harness import Harness

from toolscout.core.models import ServerState, ServerStatus
from toolscout.tui.widgets.prompt import PromptInput
from toolscout.tui.widgets.status import StatusBar


async def test_a_running_turn_shows_esc_to_interrupt_at_80_columns() -> None:
    provider = sc.ScriptedProvider("thinking hard", hang=True)
    app = sc.make_app(session="model", provider=provider)
    async with app.run_test(size=(80, 24)) as pilot:
        await sc.settle(pilot)
        await sc.type_text(pilot, "never ends")
        await pilot.press("enter")
        await asyncio.wait_for(provider.started.wait(), 10)
        await pilot.pause()
        assert app.screen.busy
        top = sc.screen_text(app).splitlines()[0]
        assert top.rstrip().endswith("● Esc to interrupt"), top
        assert "scripted" in top  # the provider stays
        prompt = app.screen.query_one(PromptInput)
        busy_border = prompt.styles.border_top[1]
        await pilot.press("escape")
        await sc.settle(pilot)
        assert not app.session.busy
        assert prompt.styles.border_top[1] != busy_border  # the prompt's warning border went
        assert sc.screen_text(app).splitlines()[0].rstrip().endswith("○ ready")


def _status(name: str, state: ServerState) -> ServerStatus:
    return ServerStatus(name=name, state=state)


async def test_a_narrow_bar_drops_the_least_useful_parts_first() -> None:
    bar = StatusBar(id="status")
    app = Harness(lambda: bar)
    async with app.run_test(size=(120, 3)) as pilot:
        bar.provider, bar.model = "anthropic", "claude-sonnet-4-5"
        bar.mode = "tool search on · execute-proxy"
        bar.servers = {
            "a": _status("a", ServerState.CONNECTED),
            "b": _status("b", ServerState.CONNECTING),
            "c": _status("c", ServerState.FAILED),
        }
        bar.encoding = (40, 120, 42.0)
        bar.busy = True

        async def line(width: int) -> str:
            await pilot.resize_terminal(width, 3)
            async with asyncio.timeout(10):  # the bar laid out at the new width, then painted
                while bar.size.width != width:
                    await pilot.pause()
            await pilot.pause()
            return sc.screen_text(app).splitlines()[0].rstrip()

        assert await line(200) == (
            " toolscout   anthropic · claude-sonnet-4-5  tool search on · execute-proxy"
            "  servers 1/3 · 1 connecting · 1 failed  encoding tools 40/120 · ETA 42 s"
            "  ● working — Esc to interrupt"
        )
        # the strategy, the ETA, the connecting count, the mode, the encoding, "working" and the model went
        assert await line(80) == " toolscout   anthropic  servers 1/3 · 1 failed  ● Esc to interrupt"
        assert await line(45) == " toolscout   anthropic  ● Esc to interrupt"
        bar.provider = "a-provider-with-a-very-long-name"
        assert await line(45) == " toolscout   a-provider-…  ● Esc to interrupt"
