"""The query-vector cache: a repeated query gives the same ranking without an encoder pass, and
encoders of another identity (model id or piece caps) never share a vector."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest
from test_search_support import DENSE, fixture_tools

from toolscout.core.search import dense
from toolscout.core.search.index import ToolIndex
from toolscout.core.search.query_vectors import QueryVectors


class HashEncoder(dense.DenseEncoder):
    """Deterministic vectors from a hash of (model id, text); counts the texts it encodes."""

    def __init__(self, model_id: str = "hash-test-encoder") -> None:  # no model file
        self.model_id = model_id
        self.calls: list[str] = []

    def encode(self, texts: Any, batch: int = dense.BATCH, progress: Any = None) -> np.ndarray:
        out = np.zeros((len(texts), dense.DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(f"{self.model_id}\0{text}".encode()).digest()[:4], "little")
            vec = np.random.default_rng(seed).standard_normal(dense.DIM).astype(np.float32)
            out[i] = vec / np.linalg.norm(vec)
        if progress is not None:
            progress(len(texts))
        return out

    def encode_one(self, text: str, pieces: int | None = None) -> np.ndarray:
        self.calls.append(text)
        return self.encode([text])[0]


def test_a_repeated_query_ranks_the_same_without_an_encoder_pass() -> None:
    tools, descriptions = fixture_tools()
    encoder = HashEncoder()
    index = ToolIndex(tools, "default", server_descriptions=descriptions, encoder=encoder)
    first = index.rank("send a message to the team channel", 5)
    assert encoder.calls == ["send a message to the team channel"]
    second = index.rank("send a message to the team channel", 5)
    assert encoder.calls == ["send a message to the team channel"]  # answered from the cache
    assert [(h.tool.name, h.score, h.components) for h in first] == [
        (h.tool.name, h.score, h.components) for h in second
    ]
    assert index.query_vectors.hits == 1 and index.query_vectors.misses == 1
    index.rank("Send a message to the team channel", 5)  # another text: encoded
    assert encoder.calls[-1] == "Send a message to the team channel"


def test_encoders_of_another_identity_never_share_a_vector() -> None:
    cache = QueryVectors()
    a, b = HashEncoder("model-a"), HashEncoder("model-b")
    va = cache.vectors(a, ["list open issues"])
    vb = cache.vectors(b, ["list open issues"])
    assert a.calls == ["list open issues"] and b.calls == ["list open issues"]
    assert not np.allclose(va, vb)
    # the same model with another query cap is another identity too
    capped = HashEncoder("model-a")
    capped.query_pieces = 16
    assert capped.identity != a.identity
    cache.vectors(capped, ["list open issues"])
    assert capped.calls == ["list open issues"]
    np.testing.assert_array_equal(cache.vectors(a, ["list open issues"]), va)
    assert a.calls == ["list open issues"]


def test_a_cached_vector_cannot_be_changed_by_a_caller_and_the_cache_is_bounded() -> None:
    cache = QueryVectors(size=2)
    enc = HashEncoder()
    got = cache.vectors(enc, ["one"])
    got[0, :] = 0.0  # the caller's copy
    np.testing.assert_array_equal(cache.vectors(enc, ["one"])[0], enc.encode(["one"])[0])
    cache.vectors(enc, ["two", "three"])  # "one" is the least recently used: evicted
    assert len(cache) == 2
    cache.vectors(enc, ["one"])
    assert enc.calls == ["one", "two", "three", "one"]
    assert cache.vectors(enc, []).shape == (0, dense.DIM)


@pytest.mark.skipif(not DENSE, reason="dense extra not installed")
def test_the_cached_query_vector_is_the_encoders_query_vector() -> None:
    encoder = dense.load_encoder()
    if encoder is None:
        pytest.skip("dense encoder unavailable")
    cache = QueryVectors()
    text = "create a pull request on github " * 30  # longer than the query cap
    first = cache.vectors(encoder, [text])[0]
    np.testing.assert_array_equal(first, encoder.encode_query(text))
    np.testing.assert_array_equal(cache.vectors(encoder, [text])[0], first)
    assert cache.hits == 1


def test_piece_caps_keep_the_closing_separator_and_change_the_cache_identity() -> None:
    ids = [101, *range(1000, 1300), 102]  # [CLS] … [SEP]
    assert dense._cut(ids, 64) == [101, *range(1000, 1062), 102]
    assert len(dense._cut(ids, 64)) == 64
    assert dense._cut(ids[:10], 64) == ids[:10]
    enc = HashEncoder()
    enc.tool_pieces = 64
    assert enc.identity != HashEncoder().identity


@pytest.mark.skipif(not DENSE, reason="dense extra not installed")
def test_tool_texts_are_read_up_to_the_tool_cap_and_queries_up_to_the_query_cap() -> None:
    encoder = dense.load_encoder()
    if encoder is None:
        pytest.skip("dense encoder unavailable")
    long = "search the issue tracker for open bugs about login failures " * 40
    head = encoder.encode_one(long, encoder.query_pieces)
    np.testing.assert_array_equal(encoder.encode_query(long), head)
    batched = encoder.encode([long, "a short partner"])[0]
    assert float(batched @ encoder.encode_one(long)) > 1 - 1e-5  # tools: the tool cap, batched or not
    if encoder.query_pieces < encoder.tool_pieces:
        assert float(head @ batched) < 1 - 1e-4  # the query read fewer pieces
