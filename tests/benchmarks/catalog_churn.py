"""Catalog churn benchmark (issue 28 item 9): list, search, re-list and remove one server of
5,000 / 10,000 / 20,000 synthetic tools, through the catalog and the search index together.

Rows (seconds, one process): ``list`` set_server_tools + index sync; ``search`` one query;
``re-list`` every tool renamed (all removed, all added); ``storm`` 20 re-lists of 300 renamed
tools queued behind a busy index, then applied (merged into one batch); ``remove`` the server
(what quitting or a disconnect costs). Run: ``PYTHONPATH=src python tests/benchmarks/catalog_churn.py``.
"""

from __future__ import annotations

import time

from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.models import ToolSpec
from toolscout.core.search import ToolSearch
from toolscout.core.settings.layers import Settings

SCHEMA = {"type": "object", "properties": {"id": {"type": "string", "description": "record id"}}}


def tools(count: int, generation: int = 0) -> list[ToolSpec]:
    return [
        ToolSpec(
            name=f"g{generation}_archive_{i}",
            input_schema=SCHEMA,
            description=f"Archive shipment batch {i} of generation {generation}.",
        )
        for i in range(count)
    ]


def row(count: int) -> dict[str, float]:
    out: dict[str, float] = {}
    cat = ToolCatalog()
    search = ToolSearch(
        cat,
        Settings().with_overrides({"toolSearch.ranker": "bm25f"}),
        dense_cache=None,
        encoder=False,
        background_sync=True,
    )
    start = time.perf_counter()
    search.sync(cat.set_server_tools("big", tools(count)))
    search.index  # noqa: B018 - builds the index and applies the queue
    out["list"] = time.perf_counter() - start
    start = time.perf_counter()
    search.search("archive shipment batch 42")
    out["search"] = time.perf_counter() - start
    start = time.perf_counter()
    search.sync(cat.set_server_tools("big", tools(count, 1)))
    search.search("archive shipment batch 42")
    out["re-list"] = time.perf_counter() - start
    cat.set_server_tools("storm", tools(300, 100))
    start = time.perf_counter()
    with search._lock:
        for generation in range(101, 121):
            search.sync(cat.set_server_tools("storm", tools(300, generation)))
    search.search("archive shipment batch 42")
    out["storm"] = time.perf_counter() - start
    start = time.perf_counter()
    search.sync(cat.remove_server("big"))
    search.search("archive shipment batch 42")
    out["remove"] = time.perf_counter() - start
    search.close()
    return out


def main() -> None:
    print("| tools | list | search | re-list | storm (20 x 300) | remove |")
    print("|---:|---:|---:|---:|---:|---:|")
    for count in (5_000, 10_000, 20_000):
        r = row(count)
        print(
            f"| {count:,} | "
            + " | ".join(f"{r[k]:.2f} s" for k in ("list", "search", "re-list", "storm", "remove"))
            + " |"
        )


if __name__ == "__main__":
    main()
