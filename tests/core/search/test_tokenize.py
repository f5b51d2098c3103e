"""The search tokenizer: name splitting, stop words, stemming, CJK, and robustness."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolscout.core.search.tokenize import analyze, is_cjk_term, name_words, tokenize


def test_mcp_name_splits_and_drops_prefix():
    assert tokenize("mcp__github__create_issue") == ["github", "creat", "issu"]
    assert name_words("mcp__slack__postMessage") == ["slack", "post", "message"]


def test_server_colon_name_splits():
    # "mcp" inside a server name is an ordinary word
    assert tokenize("osm-mcp-server::find_parking_facilities") == ["osm", "mcp", "server", "find", "park", "facil"]


def test_camel_case_keeps_joined_word_too():
    assert tokenize("searchRepositories") == ["search", "repositori", "searchrepositori"]
    # prose "GitHub" and a query "github" meet
    assert "github" in tokenize("a GitHub repository")
    assert tokenize("HTTPServer") == ["http", "server", "httpserver"]


def test_stop_words_removed_and_whole_tokens_only():
    assert tokenize("the") == []
    assert tokenize("the theme") == ["theme"]
    assert "the" not in tokenize("theme")


def test_stemming():
    assert tokenize("running queries") == ["run", "queri"]
    assert tokenize("issues") == tokenize("issue")


def test_cjk_bigrams_and_script_boundaries():
    terms = analyze("用GitHub搜索关键词")
    assert [t.term for t in terms if not t.cjk] == ["git", "hub", "github"]
    assert [t.term for t in terms if t.cjk] == ["用", "搜索", "索关", "关键", "键词"]
    assert is_cjk_term("搜索") and not is_cjk_term("search")
    assert tokenize("文") == ["文"]
    assert tokenize("こんにちは") == ["こん", "んに", "にち", "ちは"]


def test_surface_form_kept():
    (term,) = analyze("Running")
    assert (term.term, term.surface) == ("run", "running")


def test_hostile_inputs():
    assert tokenize("\x00\x01\ud800abc\udfff") == ["abc"]
    assert len(tokenize("word " * 2000)) == 2000
    assert tokenize("x" * 10_000) == ["x" * 48]
    assert tokenize("") == [] and tokenize(None) == []  # type: ignore[arg-type]


@settings(max_examples=300)
@given(st.text(alphabet=st.characters(exclude_categories=()), max_size=300))
def test_never_raises(text):
    for term in analyze(text):
        assert (term.term and term.term == term.term.lower()) or term.cjk


def test_vendored_stop_words_match_sklearn():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from toolscout.core.search.stopwords import ENGLISH_STOP_WORDS as ours

    assert ours == ENGLISH_STOP_WORDS


def test_word_spans_are_the_words_the_index_reads():
    from toolscout.core.search.tokenize import word_spans, words

    text = "mcp__github__createIssue: post-comment v2 on_PR éclair 搜索关键词"
    spans = word_spans(text)
    shown = [text[a:b] for a, b in spans]
    assert shown == ["mcp", "github", "create", "Issue", "post", "comment", "v2", "on", "PR", "éclair", "搜索关键词"]
    assert [w.lower() for w in shown[1:]] == words(text)  # the same split, offsets kept


def test_tool_verbs_are_terms_of_names_and_keyword_queries():
    """find_symbol, get_file_contents, move_file, git_show, describe_table: the verb is a term,
    in the name and in a query that spells it, though scikit-learn lists it as a stop word."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    for name, terms in (
        ("find_symbol", ["find", "symbol"]),
        ("get_file_contents", ["get", "file", "content"]),
        ("move_file", ["move", "file"]),
        ("git_show", ["git", "show"]),
        ("describe_table", ["describ", "tabl"]),
        ("browser_take_screenshot", ["browser", "take", "screenshot"]),
    ):
        assert tokenize(name) == terms
        assert tokenize(name.replace("_", " ")) == terms
    assert {"find", "get", "show", "move", "describe"} <= ENGLISH_STOP_WORDS
    # the rest of the list still goes: a preposition inside a name, filler in a query
    assert tokenize("create_or_update_file") == ["creat", "updat", "file"]
    assert tokenize("give me the weather") == ["weather"]


def test_a_request_drops_the_tool_verbs_a_keyword_query_keeps():
    from toolscout.core.search.tokenize import query_terms

    def terms(text):
        return [t.term for t in query_terms(text)]

    assert terms("show commit") == ["show", "commit"]
    assert terms("find files by name") == ["find", "file", "name"]
    assert terms("Can you show me the current exchange rate?") == ["current", "exchang", "rate"]
    assert terms("I need to find a hotel") == ["need", "hotel"]
    assert terms("please get the weather") == ["weather"]
    assert terms("show me") == [] and terms("the a of and") == []  # only common words: nothing to rank by


def test_spelled_names():
    from toolscout.core.search.name_keys import spelled

    assert spelled("find_symbol") == spelled("findSymbol") == spelled("Find symbols") == "find symbol"
    assert spelled("mcp__github__list_issues") == spelled("github list issue")
    assert spelled("create_or_update_file") == "creat or updat file"  # every word counts
    assert spelled("browser_network_requests", stemmed=False) == "browser network requests"
    assert spelled("  ") == "" and spelled("!!") == ""
