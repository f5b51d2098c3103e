"""Many tools never hang the app (issue 28 item 9): removing or re-listing a server's tools is
linear in its size, and a search racing a re-list on another thread always answers.

The complexity test counts work deterministically (the elements the catalog puts into sets and
dicts while it removes a server), never time: twice the tools must be about twice the work."""

from __future__ import annotations

import threading

import toolscout.core.catalog.registry as registry
from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.models import ToolSpec
from toolscout.core.search import ToolSearch
from toolscout.core.settings.layers import Settings

SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}}


def tools(count: int, generation: int = 0) -> list[ToolSpec]:
    return [
        ToolSpec(
            name=f"g{generation}_archive_{i}",
            description=f"Archive shipment batch {i} of generation {generation}.",
            input_schema=SCHEMA,
        )
        for i in range(count)
    ]


class _Counter:
    """Counts the elements handed to ``set(...)`` inside the catalog module."""

    def __init__(self) -> None:
        self.elements = 0

    def __call__(self, iterable=()):
        out = set(iterable)
        self.elements += len(out)
        return out


def removal_work(monkeypatch, count: int) -> int:
    cat = ToolCatalog()
    cat.set_server_tools("big", tools(count))
    cat.set_server_tools("other", tools(5, generation=9))
    counter = _Counter()
    monkeypatch.setattr(registry, "set", counter, raising=False)  # the module's own name lookup
    try:
        delta = cat.remove_server("big")
    finally:
        monkeypatch.undo()
    assert len(delta.removed) == count and [t.server for t in cat] == ["other"] * 5
    return counter.elements


def test_removing_a_server_is_linear_in_its_tools(monkeypatch):
    small, large = removal_work(monkeypatch, 1000), removal_work(monkeypatch, 2000)
    assert large <= 3 * small, (small, large)  # quadratic was 4x (a set of every removed name per kept name)


def test_a_search_on_another_thread_racing_re_lists_always_answers():
    """The gateway searches in a worker thread while the loop applies ``tools/list_changed``
    re-lists: every search answers, never ``internal search error: KeyError``."""
    cat = ToolCatalog()
    cat.set_server_tools("storm", tools(300))
    search = ToolSearch(cat, Settings().with_overrides({"toolSearch.ranker": "bm25f"}), dense_cache=None, encoder=False)
    stop, errors, answered = threading.Event(), [], [0]

    def hammer() -> None:
        queries = ["g0_archive_7", "archive shipment batch 12", "select:g1_archive_3", "g2_archive_250 g3_archive_1"]
        while not stop.is_set():
            for query in queries:
                result = search.search(query)
                errors.extend(result.errors for _ in [0] if any("internal" in e for e in result.errors))
                answered[0] += 1

    worker = threading.Thread(target=hammer, daemon=True)
    worker.start()
    try:
        for generation in range(1, 60):
            search.sync(cat.set_server_tools("storm", tools(300, generation)))
    finally:
        stop.set()
        worker.join(30)
    assert not worker.is_alive()
    assert answered[0] > 0 and errors == []


def test_a_re_list_storm_queued_behind_a_search_is_applied_as_one_batch():
    """50 re-lists of 300 renamed tools queued while the index is busy are applied as one
    removal and one add (counted), with the same index as applying them one by one."""
    cat = ToolCatalog()
    cat.set_server_tools("storm", tools(300))
    search = ToolSearch(
        cat,
        Settings().with_overrides({"toolSearch.ranker": "bm25f"}),
        dense_cache=None,
        encoder=False,
        background_sync=True,
    )
    index = search.index
    calls = {"add": 0}
    real_add = index.add

    def counted_add(batch):
        calls["add"] += 1
        return real_add(batch)

    index.add = counted_add
    with search._lock:  # a search in progress: the worker waits, the deltas queue up
        for generation in range(1, 51):
            search.sync(cat.set_server_tools("storm", tools(300, generation)))
    assert search.search("g50_archive_7").hits[0].tool.name == "mcp__storm__g50_archive_7"
    assert calls["add"] <= 2, calls  # one batch (or two, if the worker took the first delta early)
    assert sorted(t.name for t in search.index.tools()) == sorted(t.name for t in cat.deferred_tools())
    search.close()
