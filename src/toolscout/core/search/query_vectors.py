"""Query vectors, remembered: an LRU keyed by (encoder identity, query text).

A default-profile query costs one encoder pass (~4–15 ms on 2 cores, the rest of the query is
~0.5 ms: ``docs/performance.md``). The same text is ranked again often: the live-scoring panel
re-ranks the text being typed whenever the catalog changes, prefetch ranks the same
conversation text for several turns, ``toolscout eval --explain-failures`` re-ranks the worst
queries, a model repeats a ToolSearch query. Those repeats cost no encoder pass.

The key holds the encoder's :attr:`~.dense.DenseEncoder.identity` (model id and piece caps), so
two encoders never share a vector, and the exact query text (no normalisation: the encoder sees
case and punctuation). Stored vectors are read-only, so a caller cannot change a cached one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .dense import DenseEncoder

#: Query vectors kept (each 1.5 KiB: 384 float32).
QUERY_CACHE_SIZE = 512
#: Longer texts are encoded but not kept (a pasted document is unlikely to come again).
MAX_CACHED_CHARS = 2_000


class QueryVectors:
    """LRU of query vectors.

    Args:
        size: entries kept at most (0 disables the cache).

    Attributes:
        hits, misses: lookups answered from the cache / by the encoder, over its life.
    """

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self.size = max(0, int(size))
        self._items: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def vectors(self, encoder: DenseEncoder, texts: Sequence[str]) -> np.ndarray:
        """float32[len(texts), DIM]: each text's query vector (:meth:`DenseEncoder.encode_query`),
        from the cache when this encoder identity encoded the same text before."""
        identity = encoder.identity
        rows: list[np.ndarray] = []
        for text in texts:
            key = (identity, text)
            with self._lock:
                vec = self._items.get(key)
                if vec is not None:
                    self._items.move_to_end(key)
                    self.hits += 1
            if vec is None:
                vec = np.asarray(encoder.encode_query(text), dtype=np.float32)
                vec.setflags(write=False)
                with self._lock:
                    self.misses += 1
                    if self.size and len(text) <= MAX_CACHED_CHARS:
                        self._items[key] = vec
                        self._items.move_to_end(key)
                        while len(self._items) > self.size:
                            self._items.popitem(last=False)
            rows.append(vec)
        if not rows:
            from .dense import DIM

            return np.zeros((0, DIM), dtype=np.float32)
        return np.vstack(rows)

    def clear(self) -> None:
        """Forget every vector (counters kept)."""
        with self._lock:
            self._items.clear()
