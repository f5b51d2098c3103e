"""ToolSearch: grammar, select/discover/keyword modes, floors, hidden tools, sync, rendering."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_search_support import make_catalog

from toolscout.core.catalog.loaders import tool_from_dict
from toolscout.core.search import ToolSearch, explain, parse_query, render_for_model
from toolscout.core.settings.layers import Settings


def lexical_settings(**overrides) -> Settings:
    return Settings().with_overrides({"toolSearch.ranker": "bm25f", **overrides})


@pytest.fixture
def catalog():
    return make_catalog()


@pytest.fixture
def ts(catalog):
    return ToolSearch(catalog, lexical_settings(), dense_cache=None)


def names(result):
    return [h.tool.name for h in result.hits]


# -- grammar --------------------------------------------------------------------------------
def test_parse_query_modes():
    assert parse_query("select: A, b ,a,,").names == ("A", "b")
    assert parse_query("SELECT:x").mode == "select"
    p = parse_query("discover:  open a bug +github")
    assert (p.mode, p.text, p.required) == ("discover", "open a bug", ("github",))
    p = parse_query("read +file ++x + y")
    assert (p.mode, p.text, p.required) == ("keyword", "read + y", ("file", "x"))


@settings(max_examples=200)
@given(st.text(alphabet=st.characters(exclude_categories=()), max_size=200))
def test_parse_query_total(text):
    parse_query(text)
    parse_query("select:" + text)
    parse_query("discover:" + text)


# -- select ---------------------------------------------------------------------------------
def test_select_exact_and_case_insensitive(ts):
    r = ts.search("select:mcp__slack__post_message,MCP__WEATHER__GET_FORECAST")
    assert r.mode == "select"
    assert names(r) == ["mcp__slack__post_message", "mcp__weather__get_forecast"]
    assert all(h.exact_name and h.score == 1.0 for h in r.hits)
    assert r.missing == [] and r.errors == []


def test_select_bare_unique_and_ambiguous(ts):
    r = ts.search("select:set_theme,read_file")
    assert names(r) == ["mcp__desktop__set_theme"]
    assert r.missing == ["read_file"]
    assert r.suggestions["read_file"] == ["mcp__filesystem__read_file", "mcp__github__read_file"]
    assert "ambiguous" in r.errors[0]


def test_each_empty_answer_says_why_once_and_never_contradicts_itself(ts):
    """Found by a new-user try: an ambiguous select: name also read "Not found", an empty query
    ("+++") and a query of common words also read "No good match", and a +word that is in no tool
    name (it must be in the name) said nothing about why."""
    ambiguous = ts.search("select:read_file")
    text = render_for_model(ambiguous, ts.catalog)
    assert "Not found" not in text
    assert (
        "'read_file' is ambiguous: 2 tools have that name (mcp__filesystem__read_file, mcp__github__read_file)" in text
    )
    assert ambiguous.missing == ambiguous.ambiguous == ["read_file"]  # not loaded, and why
    for query, why in (
        ("+++", "empty query"),
        ("the a of and", "has only common words"),
        ("+zebra", "+zebra: a +word must be in the tool's name"),
    ):
        r = ts.search(query)
        text = render_for_model(r, ts.catalog)
        assert r.no_good_match and not r.hits, query
        assert [line for line in text.splitlines() if why in line] and "No good match" not in text, text
    assert "No good match" in render_for_model(ts.search("zebra"), ts.catalog)  # nothing else to say
    has_it = ts.search("+theme zebra quantum")  # a name has +theme: the other words found nothing
    assert not has_it.hits and not has_it.errors and "No good match" in render_for_model(has_it, ts.catalog)
    connecting = ts.search("+zebra", pending_servers=["zoo"])  # its tools may have it: no verdict
    assert "still connecting" in render_for_model(connecting, ts.catalog) and not connecting.errors


@pytest.mark.parametrize("ranker", ["default", "bm25f"])
def test_a_query_spelling_a_name_in_words_ranks_it_first(catalog, ranker):
    """Issue 21: "get forecast" for get_forecast lost its verb (a stop word) and was ranked, not named."""
    ts = ToolSearch(catalog, lexical_settings(**{"toolSearch.ranker": ranker}), dense_cache=None)
    for query, name in (
        ("get forecast", "mcp__weather__get_forecast"),
        ("list issues", "mcp__github__list_issues"),
        ("github list issue", "mcp__github__list_issues"),
        ("Post Messages", "mcp__slack__post_message"),
        ("search repositories", "mcp__github__searchRepositories"),
    ):
        r = ts.search(query)
        assert names(r)[0] == name and r.hits[0].exact_name and r.hits[0].score == 1.0, (query, names(r))
    r = ts.search("read file")  # two servers have read_file: both named, ties by name
    assert names(r)[:2] == ["mcp__filesystem__read_file", "mcp__github__read_file"]
    alone = ts.search("get")  # a tool verb alone is a query, not "only common words"
    assert "mcp__weather__get_forecast" in names(alone) and not alone.errors
    asked = ts.search("can you get me")  # a request made of common words still says so
    assert not asked.hits and any("has only common words" in e for e in asked.errors)


def test_a_name_outside_mcp_name_characters_is_not_spelled(catalog):
    """A server's 'get_[forecast]' (a hostile look-alike) is ranked, never named, by "get forecast"."""
    catalog.set_server_tools("evil", [tool_from_dict({"name": "get_[forecast]", "description": "Get a forecast."})])
    ts = ToolSearch(catalog, lexical_settings(), dense_cache=None)
    r = ts.search("get forecast")
    assert names(r)[0] == "mcp__weather__get_forecast" and r.hits[0].exact_name
    assert not any(h.exact_name for h in r.hits if h.tool.server == "evil")


def test_select_already_loaded_and_unknown(ts):
    r = ts.search("select:Read,ToolSearch,mcp__slack__post_mesage")
    assert r.already_loaded == ["Read", "ToolSearch"]
    assert r.missing == ["mcp__slack__post_mesage"]
    assert r.suggestions["mcp__slack__post_mesage"][0] == "mcp__slack__post_message"
    text = render_for_model(r, ts.catalog)
    assert "Already loaded, call directly" in text and "Did you mean: mcp__slack__post_message" in text


def test_select_pending_server(ts):
    r = ts.search("select:mcp__jira__create_ticket", pending_servers=["jira"])
    assert r.missing == ["mcp__jira__create_ticket"]
    assert any("server jira is still connecting" in e for e in r.errors)
    assert r.pending_servers == ["jira"]


def test_select_empty(ts):
    r = ts.search("select:")
    assert r.hits == [] and r.errors


# -- ranked modes ---------------------------------------------------------------------------
def test_keyword_and_discover(ts):
    r = ts.search("slack message")
    assert r.mode == "keyword" and names(r)[0] == "mcp__slack__post_message"
    r = ts.search("discover: weather forecast for a city")
    assert r.mode == "discover" and names(r)[0] == "mcp__weather__get_forecast"
    assert r.instructions == {}
    r = ts.search("create github issue")
    assert r.instructions == {"github": "Use owner/repo form for repositories."}


def test_required_term(ts):
    assert names(ts.search("read file +github")) == ["mcp__github__read_file"]
    assert set(names(ts.search("+slack"))) == {"mcp__slack__post_message", "mcp__slack__list_channels"}


def test_limits_and_floor(catalog):
    ts = ToolSearch(catalog, lexical_settings(**{"toolSearch.maxResults": 2}), dense_cache=None)
    assert len(ts.search("file").hits) == 2
    assert len(ts.search("file", limit=500).hits) <= 50
    assert len(ts.search("file", limit=0).hits) == 1  # clamped to at least 1
    high = ToolSearch(catalog, lexical_settings(**{"toolSearch.displayFloor": 0.99}), dense_cache=None)
    r = high.search("file")
    assert all(h.score >= 0.99 for h in r.hits)


def test_no_good_match_and_unmatched_terms(ts):
    r = ts.search("zorblax frobnicate slack")
    assert r.unmatched_terms == ["zorblax", "frobnicate"]
    r = ts.search("zorblax frobnicate")
    assert r.no_good_match and r.hits == []
    assert r.unmatched_terms == ["zorblax", "frobnicate"]
    assert "No good match" in render_for_model(r, ts.catalog)
    assert ts.search("").no_good_match
    # a camelCase query's whole run ("postmessage") matching nothing is not reported
    assert ts.search("postMessage zorblax").unmatched_terms == ["zorblax"]


def test_hidden_tools_invisible_in_every_mode(catalog, ts):
    assert "mcp__secrets__read_secret" in catalog  # registered but hidden
    assert all(h.tool.server != "secrets" for h in ts.search("vault secret").hits)
    assert ts.search("select:mcp__secrets__read_secret").hits == []
    assert all(h.tool.server != "secrets" for h in ts.search("+secret").hits)
    assert (
        ts.search("mcp__secrets__read_secret").hits == []
        or names(ts.search("mcp__secrets__read_secret"))[0] != "mcp__secrets__read_secret"
    )
    assert all(h.tool.server != "secrets" for h in ts.rank("read secret vault", 10))
    # the filter changes after sync: hits are re-checked at query time
    catalog.set_visibility(lambda t: t.server != "slack")
    assert all(h.tool.server != "slack" for h in ts.search("slack message").hits)


def test_exact_name_query_first(ts):
    r = ts.search("mcp__filesystem__list_directory")
    assert names(r)[0] == "mcp__filesystem__list_directory" and r.hits[0].exact_name


def test_sync_with_delta(catalog, ts):
    delta = catalog.set_server_tools(
        "notes", [tool_from_dict({"name": "add_note", "description": "Add a note to the notebook."})]
    )
    assert ts.search("notebook note").hits == []
    ts.sync(delta)
    assert names(ts.search("notebook note")) == ["mcp__notes__add_note"]
    ts.sync(catalog.remove_server("notes"))
    assert ts.search("notebook note").hits == []
    catalog.set_always_load(["weather"])
    ts.sync()
    r = ts.search("select:mcp__weather__get_forecast")
    assert r.already_loaded == ["mcp__weather__get_forecast"]
    r = ts.search("weather forecast")  # still found, answered "call it directly" (no definition)
    assert names(r)[0] == "mcp__weather__get_forecast" and "mcp__weather__get_forecast" in r.already_loaded
    text = render_for_model(r, catalog)
    assert '"name":"mcp__weather__get_forecast"' not in text
    assert "Already loaded, call directly (no search needed): mcp__weather__get_forecast" in text


def test_render_for_model_is_complete_and_deterministic(ts, catalog):
    r = ts.search("github issue")
    text = render_for_model(r, catalog)
    assert text == render_for_model(ts.search("github issue"), catalog)
    lines = text.splitlines()
    assert lines[0].endswith("Their full definitions (JSON):")
    first = json.loads(lines[1])
    assert set(first) == {"name", "description", "input_schema"}
    assert first["input_schema"]["properties"]
    assert text.count('<server_instructions server="github">') == 1


def test_explain_lists_components_and_fields(ts):
    hit = ts.search("slack message").hits[0]
    text = explain(hit)
    assert text.splitlines()[0].startswith("mcp__slack__post_message  score ")
    assert "bm25f" in text and "weighted" in text and "name: slack, message" in text


def test_to_json_contract(ts):
    data = ts.search("slack message").to_json()
    assert set(data) >= {"query", "mode", "results", "missing", "no_good_match", "unmatched_terms"}
    assert data["results"][0]["name"] == "mcp__slack__post_message"


def test_default_profile_reports_active(catalog):
    ts = ToolSearch(catalog, Settings(), dense_cache=None, encoder=False)
    assert ts.active_profile == "bm25f"
    hybrid = ToolSearch(catalog, Settings().with_overrides({"toolSearch.ranker": "hybrid"}), dense_cache=None)
    assert set(hybrid.search("slack message").hits[0].components) == {"keyword", "tfidf"}


def test_the_result_names_the_ranker_that_ranked_it(catalog):
    """The ranker a result carries is the profile that ranked it, not the query's form: the
    chat's search entry says it (it used to say ``keyword``, the mode, whatever ranked)."""
    for profile in ("bm25f", "hybrid"):
        result = ToolSearch(catalog, lexical_settings(**{"toolSearch.ranker": profile}), dense_cache=None).search(
            "slack message"
        )
        assert (result.mode, result.ranker, result.to_json()["ranker"]) == ("keyword", profile, profile)
    fallback = ToolSearch(catalog, Settings(), dense_cache=None, encoder=False)  # default without vectors
    assert fallback.search("discover: send a chat message").ranker == "bm25f"
    assert fallback.search("select:mcp__slack__post_message").ranker == ""  # nothing ranked
    assert fallback.search("   ").ranker == ""


@settings(max_examples=150)
@given(st.text(alphabet=st.characters(exclude_categories=()), max_size=300))
def test_search_never_raises(text):
    ts = _shared_ts()
    for q in (text, "select:" + text, "discover:" + text, "+" + text):
        r = ts.search(q)
        assert not any(e.startswith("internal") for e in r.errors)
        render_for_model(r, ts.catalog)


def test_search_hostile_strings():
    ts = _shared_ts()
    for q in ("\x00\x01\x02", "\ud800\udc00\udfff", "a" * 10_000, "word " * 2_000, "select:" + "x," * 5000):
        r = ts.search(q)
        assert not any(e.startswith("internal") for e in r.errors)
    assert ts.search(None).no_good_match  # type: ignore[arg-type]


_TS: ToolSearch | None = None


def _shared_ts() -> ToolSearch:
    global _TS
    if _TS is None:
        _TS = ToolSearch(make_catalog(), lexical_settings(), dense_cache=None)
    return _TS
