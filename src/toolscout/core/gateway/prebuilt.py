"""How the gateway's searches wait when it serves from a prebuilt index (``serve --index DIR``).

With an index every replica has the same catalog and the same tool vectors from its start, so
each ranks with the configured profile from its first search, and the same search gets the same
answer on every replica (issue 27). A search therefore waits, bounded by :data:`RANKER_WAIT_S`,
for the search index to be built with the index's vectors and for the dense ranker to be
ready (the encoder's load, about a second; and the vectors of tools a live server changed since
the index was built), instead of answering from the lexical fallback meanwhile. ``initialize``
and ``tools/list`` never wait (:mod:`.starting`). Without an index nothing waits here.
"""

from __future__ import annotations

import anyio

from .starting import EngineStart

#: Most seconds a search waits for the ranker of a gateway serving a prebuilt index.
RANKER_WAIT_S = 30.0


async def ranker_settled(start: EngineStart, timeout: float = RANKER_WAIT_S) -> None:
    """Wait (at most ``timeout`` s) until ``start``'s search index is built and its ranker
    ready, when its engine serves a prebuilt index; return at once otherwise."""
    engine = start.engine
    if engine.prebuilt is None:
        return
    deadline = anyio.current_time() + timeout
    with anyio.move_on_after(timeout):
        await start.warmed.wait()
    left = deadline - anyio.current_time()
    if left > 0:  # at once when the ranker is ready (every tool has its vector)
        await anyio.to_thread.run_sync(engine.wait_ranker_ready, left)
