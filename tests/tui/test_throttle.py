"""Panels fed by bursts of engine events redraw once per burst, and at most once per interval
while busy (servers connecting): tui/throttle.py. No timing is asserted, only counts."""

from __future__ import annotations

import asyncio

from textual.app import App

from toolscout.tui.throttle import Throttle


async def test_a_burst_runs_once_and_a_busy_throttle_defers_the_next_run() -> None:
    runs: list[int] = []
    ran = asyncio.Event()
    busy = {"now": False}

    def callback() -> None:
        runs.append(len(runs))
        ran.set()

    app: App[None] = App()
    async with app.run_test() as pilot:
        throttle = Throttle(app, callback, interval=3600.0, busy=lambda: busy["now"])
        for _ in range(50):  # a burst of requests: one run after the next frame
            throttle.request()
        await asyncio.wait_for(ran.wait(), 10)
        await pilot.pause()
        assert runs == [0] and not throttle.pending

        busy["now"] = True  # busy, and the last run was just now: the next one waits its interval
        for _ in range(50):
            throttle.request()
        await pilot.pause()
        await pilot.pause()
        assert runs == [0] and throttle.pending

        busy["now"] = False  # a request while one is pending joins it: still no extra run
        throttle.request()
        await pilot.pause()
        assert runs == [0] and throttle.pending


async def test_an_idle_throttle_runs_each_burst_after_its_frame() -> None:
    runs: list[int] = []
    ran = asyncio.Event()

    def callback() -> None:
        runs.append(1)
        ran.set()

    app: App[None] = App()
    async with app.run_test():
        throttle = Throttle(app, callback, interval=3600.0, busy=lambda: False)
        for burst in range(1, 4):
            ran.clear()
            throttle.request()
            throttle.request()
            await asyncio.wait_for(ran.wait(), 10)
            assert len(runs) == burst and not throttle.pending
