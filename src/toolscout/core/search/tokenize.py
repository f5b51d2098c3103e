"""The search tokenizer: tool names and free text → stemmed index terms.

Rules (measured in ``shared/research/retrieval-ceiling.md``):

* ``mcp__server__tool`` and ``server::tool`` split into their parts; the ``mcp`` of an
  ``mcp__`` prefix is not a term.
* camelCase (``getIssue``), acronyms (``HTTPServer`` → ``http server``) and snake_case split.
* Lower-cased Unicode word runs; scikit-learn's English stop-word list removed (dropping it
  costs 6 nDCG points), except the verbs tool names are made of (``find``, ``get``, ``show``,
  ``move``, ``describe``, …: :data:`.stopwords.TOOL_WORDS`), which are terms everywhere but in a
  query that is a request ("can you show me…", :func:`query_terms`); Snowball English stemming
  (PyStemmer, falling back to the pure-Python ``snowballstemmer``, then to no stemming).
* Whole-token matching only: a term is a whole word, so ``the`` never matches ``theme``.
* Chinese, Japanese and Korean runs become overlapping character bigrams (a one-character run
  is kept as a unigram); text mixing scripts is split at script boundaries (``用GitHub搜索`` →
  ``github`` + ``搜索``). A tool matched *only* through CJK terms needs at least two matching
  bigrams (enforced by the index, see :data:`MIN_CJK_MATCHES`).

Every function here accepts any ``str`` (control characters, lone surrogates, megabyte
inputs) and never raises.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from .stopwords import ENGLISH_STOP_WORDS, TOOL_WORDS

#: A tool matched only through CJK bigrams needs at least this many distinct matching bigrams.
MIN_CJK_MATCHES = 2
#: Longer word runs (base64 blobs, hashes) are cut to this many characters before stemming.
MAX_TOKEN_CHARS = 48
#: Inputs are cut to this many characters: queries this long are pasted files, not searches.
MAX_INPUT_CHARS = 200_000

_CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0002ebef"  # CJK extensions B-F
)
_CJK_CHAR = f"[{_CJK_RANGES}]"
_TOKEN = re.compile(rf"(?P<cjk>{_CJK_CHAR}+)|(?P<word>(?:(?!{_CJK_CHAR})[^\W_])+)")
_MCP_PREFIX = re.compile(r"(?<![^\W_])mcp__", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_IS_CJK = re.compile(_CJK_CHAR)
_IS_CJK_ANY = re.compile(_CJK_CHAR)
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")
_PLAIN_WORD = re.compile(r"[^\W_]+")


#: Words never indexed: scikit-learn's English stop-word list (318 words; vendored, see
#: :mod:`.stopwords`) without the verbs tool names are made of (:data:`TOOL_WORDS`).
STOP_WORDS: frozenset[str] = ENGLISH_STOP_WORDS - TOOL_WORDS
#: Words that make a query a request addressed to someone, whose tool verbs are then dropped
#: (:func:`query_terms`): first- and second-person pronouns, and "please".
REQUEST_WORDS: frozenset[str] = frozenset(
    [
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "we",
        "us",
        "our",
        "ours",
        "ourselves",
        "please",
    ]
)


def _load_stemmer() -> tuple[str, Callable[[str], str]]:
    try:
        import Stemmer  # PyStemmer

        stemmer = Stemmer.Stemmer("english")
        return "pystemmer", stemmer.stemWord
    except Exception:
        pass
    try:
        import snowballstemmer

        pure = snowballstemmer.stemmer("english")
        return "snowballstemmer", pure.stemWord
    except Exception:
        return "none", lambda word: word


#: Which stemmer is active: ``pystemmer``, ``snowballstemmer`` or ``none``.
STEMMER_NAME, _stem_word = _load_stemmer()
_STEM_LOCK = threading.Lock()


@functools.lru_cache(maxsize=131_072)
def stem(word: str) -> str:
    """Snowball English stem of one lower-case word (cached; thread-safe)."""
    with _STEM_LOCK:  # the C stemmer object keeps state between calls
        try:
            return _stem_word(word)
        except Exception:
            return word


@dataclass(frozen=True, slots=True)
class Term:
    """One index term and the text it came from.

    Attributes:
        term: the index term (stemmed word, or a CJK bigram/unigram).
        surface: the lower-cased word as written (for explanations and ``unmatched_terms``).
        cjk: True for CJK bigram/unigram terms.
        compound: True for a whole camelCase run kept besides its parts (``githubissue`` from
            ``githubIssue``); it may match nothing while its parts do.
        tool_word: True for a tool verb of :data:`TOOL_WORDS` (``find``, ``get``, …): a
            term, which a request drops from its query terms (:func:`query_terms`).
    """

    term: str
    surface: str
    cjk: bool = False
    compound: bool = False
    tool_word: bool = False


def clean(text: object) -> str:
    """Make any value safe to tokenize: ``str`` only, lone surrogates replaced, length capped."""
    if type(text) is str and text.isascii() and len(text) <= MAX_INPUT_CHARS:
        return text  # nothing to fix: the common case, without an encode
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if len(text) > MAX_INPUT_CHARS:
        text = text[:MAX_INPUT_CHARS]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8", "replace")
    return text


def _runs(text: str) -> list[tuple[str, bool]]:
    """``(run, is_cjk)`` word runs of cleaned text, before camelCase splitting.

    Text without CJK characters (nearly all tool text) takes a regex without the per-character
    script lookahead, which is ~5× faster; the result is the same.
    """
    if text.isascii():
        return [(w, False) for w in _ASCII_WORD.findall(text)]
    if _IS_CJK_ANY.search(text) is None:
        return [(w, False) for w in _PLAIN_WORD.findall(text)]
    out: list[tuple[str, bool]] = []
    for match in _TOKEN.finditer(text):
        cjk = match.group("cjk")
        out.append((cjk, True) if cjk is not None else (match.group("word"), False))
    return out


def words(text: str) -> list[str]:
    """Lower-cased word runs after name splitting, before stop words and stemming.

    CJK runs are returned whole; camelCase runs only as their parts.
    ``"mcp__github__createIssue"`` → ``["github", "create", "issue"]``.
    """
    text = clean(text)
    if "__" in text:
        text = _MCP_PREFIX.sub(" ", text)
    if not text.islower():
        text = _CAMEL.sub(" ", text)
    return [run.lower() for run, _ in _runs(text)]


def word_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets in ``text`` of the words the tokenizer reads: runs of
    letters and digits (snake_case, kebab-case and spaces separate them), camelCase runs as their
    parts, a CJK run whole. For showing which words of a text matched (the UI's highlighting);
    lower-case and :func:`stem` a word to compare it with a query's terms.
    """
    spans: list[tuple[int, int]] = []
    for match in _TOKEN.finditer(text):
        start = match.start()
        if match.group("cjk") is not None:
            spans.append((start, match.end()))
            continue
        for part in _CAMEL.split(match.group()):
            spans.append((start, start + len(part)))
            start += len(part)
    return spans


def _cjk_terms(run: str) -> list[Term]:
    if len(run) == 1:
        return [Term(run, run, True)]
    return [Term(run[i : i + 2], run[i : i + 2], True) for i in range(len(run) - 1)]


#: Word run as written (before camelCase splitting) → its terms; bounded, cleared when full.
_RUN_TERMS: dict[str, tuple[Term, ...]] = {}
_RUN_TERMS_MAX = 262_144


def _run_terms(run: str) -> tuple[Term, ...]:
    """Terms of one non-CJK word run: camelCase parts then the whole run, stop words dropped."""
    hit = _RUN_TERMS.get(run)
    if hit is not None:
        return hit
    if run.islower() or len(run) == 1:
        pieces = [run]
    else:
        pieces = [part for part in _CAMEL.split(run) if part]
        if len(pieces) > 1:
            pieces.append(run)
    compound = len(pieces) - 1 if len(pieces) > 1 else -1  # the whole run, appended last
    out = []
    for k, piece in enumerate(pieces):
        word = piece.lower()
        if word not in STOP_WORDS:
            word = word[:MAX_TOKEN_CHARS]
            out.append(Term(stem(word), word, compound=k == compound, tool_word=word in TOOL_WORDS))
    terms = tuple(out)
    if len(_RUN_TERMS) >= _RUN_TERMS_MAX:
        _RUN_TERMS.clear()
    _RUN_TERMS[run] = terms
    return terms


def analyze(text: str) -> list[Term]:
    """Index terms of ``text`` in order, with duplicates (term frequency matters).

    Returns:
        ``[Term]``; empty for text made only of stop words, punctuation or nothing.
    """
    text = clean(text)
    if "__" in text:
        text = _MCP_PREFIX.sub(" ", text)
    out: list[Term] = []
    for run, is_cjk in _runs(text):
        out.extend(_cjk_terms(run) if is_cjk else _RUN_TERMS.get(run) or _run_terms(run))
    return out


def query_terms(text: str) -> list[Term]:
    """The terms a query searches by: :func:`analyze`, less the tool verbs (:data:`TOOL_WORDS`:
    ``find``, ``get``, ``show``, …) when the query is a request addressed to someone, i.e. has a
    word of :data:`REQUEST_WORDS` ("can you show me…", "I need to find…", "give me…").

    In a keyword query ("find symbol", "show commit", "get current time") a tool verb is what
    the tool does and matches tool names; in a request it is grammar, and matching it ranked
    tools by the verb (measured on the shared dev sets: keeping the verbs in requests costs
    about 1 nDCG@10 on livemcpbench; dropping them is neutral on both sets).
    """
    out = analyze(text)
    if not any(t.tool_word for t in out) or REQUEST_WORDS.isdisjoint(words(text)):
        return out
    return [t for t in out if not t.tool_word]


def tokenize(text: str) -> list[str]:
    """Index terms of ``text`` (see :func:`analyze`), as plain strings."""
    return [t.term for t in analyze(text)]


def is_cjk_term(term: str) -> bool:
    """True when ``term`` is a CJK bigram or unigram."""
    return bool(term) and _IS_CJK.match(term) is not None


def name_words(name: str) -> list[str]:
    """Readable words of a tool name: ``"mcp__slack__postMessage"`` → ``["slack", "post", "message"]``."""
    return words(name)
