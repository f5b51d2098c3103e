"""Panels fed by bursts of engine events redraw once per burst, and at most once per interval
while busy (servers connecting): tui/throttle.py. No timing is asserted, only counts.

Throttle tests run in a bare :class:`~textual.app.App`; the heap re-freezing is the app's
controller alone (no app runs). No full-app test here."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.app import App

from toolscout.tui.throttle import Throttle


def recorder() -> tuple[list[int], asyncio.Event, Callable[[], None]]:
    """A callback that appends 1 to ``runs`` and sets ``ran`` each time it runs."""
    runs: list[int] = []
    ran = asyncio.Event()

    def callback() -> None:
        runs.append(1)
        ran.set()

    return runs, ran, callback


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
    runs, ran, callback = recorder()
    app: App[None] = App()
    async with app.run_test():
        throttle = Throttle(app, callback, interval=3600.0, busy=lambda: False)
        for burst in range(1, 4):
            ran.clear()
            throttle.request()
            throttle.request()
            await asyncio.wait_for(ran.wait(), 10)
            assert len(runs) == burst and not throttle.pending


async def test_flush_runs_a_postponed_run_once_now() -> None:
    """What the tests' settle does instead of waiting out an interval: the run waiting for its
    timer happens at once, once, and its timer is stopped (it does not run a second time)."""
    runs, ran, callback = recorder()
    app: App[None] = App()
    async with app.run_test() as pilot:
        throttle = Throttle(app, callback, interval=3600.0, busy=lambda: True)
        throttle.ran()  # the last run was just now: the next request waits an hour
        throttle.request()
        await pilot.pause()
        assert runs == [] and throttle.pending
        throttle.flush()
        await asyncio.wait_for(ran.wait(), 10)
        await pilot.pause()
        assert runs == [1] and not throttle.pending
        throttle.flush()  # nothing waits: no run
        await pilot.pause()
        assert runs == [1] and not throttle._timer


def test_the_heap_is_refrozen_only_while_servers_connect(monkeypatch) -> None:
    """Catalog changes while servers connect move the new objects out of later collections;
    once every server has settled they do not (later cycles must still be collected). The app's
    controller alone, over the fixture engine: no app runs."""
    import gc

    import tui_scenarios as sc

    from toolscout.tui.controller import SessionController

    settings = sc.make_settings()
    controller = SessionController(None, settings, sc.make_engine(settings))  # type: ignore[arg-type]
    controller._heap_frozen = True  # as after the engine started
    before = gc.get_freeze_count()
    try:
        monkeypatch.setattr(controller.engine, "pending_servers", lambda: [])
        controller.refreeze_heap()
        assert gc.get_freeze_count() == before
        monkeypatch.setattr(controller.engine, "pending_servers", lambda: ["late"])
        keep = [[i] for i in range(100)]  # tracked objects alive now
        controller.refreeze_heap()
        assert gc.get_freeze_count() >= before + len(keep)
    finally:
        gc.unfreeze()
