"""The dense signal's background work for :class:`~.index.ToolIndex`: loading the encoder,
encoding pending tool texts in one worker thread, readiness, progress reports, and the tool
vectors laid out by store row for scoring.

A mixin over the index's state (all guarded by ``_dense_cond``): ``_pending`` (tool name → text
still waiting for its vector), ``_vectors``, ``_dense_dirty``, ``_encoder``, ``_worker``, the
row-space matrix ``_dense_rs`` and the profile to fall back to. Split from :mod:`.index` by
responsibility; the index owns the state.
"""

from __future__ import annotations

import functools
import heapq
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import dense as dense_mod

if TYPE_CHECKING:
    from .matrices import Matrices
    from .profiles import Profile
    from .store import TermStore

log = logging.getLogger(__name__)

#: Tool texts encoded per round of the background job (progress is reported after each).
ROUND = 64


class BackgroundDense:
    """Background encoding of tool texts (mixed into :class:`~.index.ToolIndex`)."""

    _dense_cond: threading.Condition
    _pending: dict[str, str]
    _vectors: dict[str, np.ndarray]
    _dense_dirty: set[str]
    _encoder: dense_mod.DenseEncoder | None
    _worker: ThreadPoolExecutor | None
    _job_running: bool
    _closed: bool
    _vec_cache: dense_mod.VectorCache
    _lexical_profile: Profile
    _round_done: int
    #: tool vectors by store row (float32[capacity, DIM]); rebuilt when rows are renumbered
    _dense_rs: np.ndarray | None
    _dense_gen: int
    store: TermStore
    profile: Profile
    fallback_reason: str | None
    encoded_texts: int
    on_progress: Callable[[int, int], None] | None
    #: ``on_ranker_ready()`` (encoding thread) when background encoding settles: every tool has
    #: its vector, or the index fell back to the lexical ranking. Set by the owner.
    on_ranker_ready: Callable[[], None] | None = None
    #: Encoding paused by :meth:`hold_dense` (tool texts queue up meanwhile).
    _held: bool = False

    def hold_dense(self, held: bool) -> None:
        """Pause (True) or resume (False) background encoding, and the model's load if it has
        not happened yet; pending texts wait meanwhile and :meth:`wait_dense` keeps waiting. The
        engine holds it while servers connect: encoding is the process's largest CPU user (and
        loading the model takes ~1 s of CPU), and then competes with the servers starting up and
        with the UI (issue 12)."""
        with self._dense_cond:
            self._held = held
            if not held:
                self._schedule_locked()
            self._dense_cond.notify_all()

    @property
    def dense_ready(self) -> bool:
        """True when the dense signal can be used: model loaded and every tool encoded."""
        with self._dense_cond:
            return self._encoder is not None and not self._pending

    @property
    def dense_pending(self) -> int:
        """Tools still waiting for their vector (background mode)."""
        with self._dense_cond:
            return len(self._pending)

    def wait_dense(self, timeout: float | None = None) -> bool:
        """Block until background encoding is done (or failed); True when the dense signal is ready.

        Args:
            timeout: seconds to wait at most (None: no limit).
        """
        with self._dense_cond:
            self._dense_cond.wait_for(lambda: not self._job_running and not self._pending_work(), timeout)
            return self._encoder is not None and not self._pending

    def close(self) -> None:
        """Stop the background encoder (pending work is dropped; safe to call twice)."""
        with self._dense_cond:
            self._closed = True
            self._dense_cond.notify_all()
        if self._worker is not None:
            self._worker.shutdown(wait=False, cancel_futures=True)

    def _pending_work(self) -> bool:
        return bool(self._pending) and self._encoder is not None and not self._closed

    def _load_encoder_in_background(self) -> None:
        with self._dense_cond:
            self._dense_cond.wait_for(lambda: not self._held or self._closed)
            if self._closed:
                self._job_running = False
                self._dense_cond.notify_all()
                return
        encoder = dense_mod.load_encoder()
        with self._dense_cond:
            self._job_running = False
            if encoder is None:
                self.fallback_reason = dense_mod.unavailable_reason or "dense encoder unavailable"
                self.profile = self._lexical_profile
                self._pending.clear()
                self._worker = None
            else:
                self._encoder = encoder
                self._schedule_locked()
            self._dense_cond.notify_all()
        if encoder is None:
            self._ranker_ready()

    def _schedule_locked(self) -> None:
        if self._worker is not None and not self._job_running and not self._held and self._pending_work():
            self._job_running = True
            self._worker.submit(self._encode_pending)

    def _encode_pending(self) -> None:
        try:
            while True:
                with self._dense_cond:
                    if self._closed or self._held or not self._pending or self._encoder is None:
                        return
                    # shortest texts first, across everything pending: the encoder pads each
                    # ONNX call to its longest text, so length-sorted rounds pad ~10% less
                    # than rounds taken in arrival order (1,673 real catalog tools)
                    pending = self._pending
                    batch = {n: pending[n] for n in heapq.nsmallest(ROUND, pending, key=lambda n: len(pending[n]))}
                    encoder = self._encoder
                encoded = [0]
                vecs = dense_mod.embed_tools(
                    encoder,
                    list(batch.values()),
                    self._vec_cache,
                    progress=functools.partial(self._encoded, counter=encoded),
                )
                with self._dense_cond:
                    for (name, text), vec in zip(batch.items(), vecs, strict=True):
                        if self._pending.get(name) == text:
                            self._vectors[name] = vec
                            self._dense_dirty.add(name)
                            del self._pending[name]
                    cached = len(batch) - encoded[0]
                    self._round_done += cached
                    total = self._round_done + len(self._pending)
                    done = self._round_done
                    if not self._pending:
                        self._round_done = 0
                if cached:  # the encoded ones were reported as they went
                    self._report(done, total)
        except Exception as exc:
            log.exception("background encoding failed")
            with self._dense_cond:
                self.fallback_reason = f"dense encoding failed: {exc}"
                self.profile = self._lexical_profile
                self._pending.clear()
        finally:
            with self._dense_cond:
                self._job_running = False
                self._dense_cond.notify_all()
                settled = not self._pending and not self._closed
            if settled:
                self._ranker_ready()

    def _ranker_ready(self) -> None:
        if self.on_ranker_ready is not None:
            try:
                self.on_ranker_ready()
            except Exception:  # a display problem must not stop encoding
                log.debug("ranker-ready callback failed", exc_info=True)

    @property
    def vector_cache_path(self) -> Path | None:
        """The on-disk vector cache file, or None (memory only)."""
        return self._vec_cache.path

    def _encoded(self, n: int, counter: list[int]) -> None:
        """Progress from the encoder: ``n`` more texts encoded (in the worker thread)."""
        counter[0] += n
        with self._dense_cond:
            self.encoded_texts += n
            self._round_done += n
            done, total = self._round_done, self._round_done + max(0, len(self._pending) - counter[0])
        self._report(done, total)

    def _dense_scores(self, m: Matrices, qvec: np.ndarray) -> np.ndarray:
        """float64[N] cosine of every live tool's vector with ``qvec`` (0 for tools without one)."""
        with self._dense_cond:
            rows = self._dense_rowspace(m.n_rows)
            return m.live(dense_mod.cosine_scores(rows[: m.n_rows], qvec))

    def _dense_rowspace(self, n_rows: int) -> np.ndarray:
        """Tool vectors by store row, updated in place for newly encoded tools (lock held)."""
        store = self.store
        rs = self._dense_rs
        if rs is None or self._dense_gen != store.generation:
            rs = np.zeros((max(64, n_rows), dense_mod.DIM), dtype=np.float32)
            for name, vec in self._vectors.items():
                entry = store.docs.get(name)
                if entry is not None:
                    rs[entry.row] = vec
            self._dense_gen = store.generation
            self._dense_dirty.clear()
        if len(rs) < n_rows:
            grown = np.zeros((max(n_rows, 2 * len(rs)), dense_mod.DIM), dtype=np.float32)
            grown[: len(rs)] = rs
            rs = grown
        for name in self._dense_dirty:
            entry, fresh = store.docs.get(name), self._vectors.get(name)
            if entry is not None and fresh is not None and entry.row < len(rs):
                rs[entry.row] = fresh
        self._dense_dirty.clear()
        self._dense_rs = rs
        return rs

    def _report(self, done: int, total: int) -> None:
        if self.on_progress is not None:
            try:
                self.on_progress(done, max(done, total))
            except Exception:  # a display problem must not stop encoding
                log.debug("progress callback failed", exc_info=True)
