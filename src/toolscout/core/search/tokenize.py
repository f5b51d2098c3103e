"""The search tokenizer: tool names and free text → stemmed index terms.

Rules (measured in ``shared/research/retrieval-ceiling.md``):

* ``mcp__server__tool`` and ``server::tool`` split into their parts; the ``mcp`` of an
  ``mcp__`` prefix is not a term.
* camelCase (``getIssue``), acronyms (``HTTPServer`` → ``http server``) and snake_case split.
* Lower-cased Unicode word runs; scikit-learn's English stop-word list removed (dropping it
  costs 6 nDCG points); Snowball English stemming (PyStemmer, falling back to the pure-Python
  ``snowballstemmer``, then to no stemming).
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

from .stopwords import ENGLISH_STOP_WORDS

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


#: scikit-learn's English stop-word list (318 words; vendored, see :mod:`.stopwords`).
STOP_WORDS: frozenset[str] = ENGLISH_STOP_WORDS


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
    """

    term: str
    surface: str
    cjk: bool = False


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


def _raw_words(text: str) -> list[tuple[str, bool]]:
    """``(word, is_cjk)`` runs after the ``mcp__`` and camelCase splits, not lower-cased.

    A camelCase run yields its parts and then the whole run (``GitHub`` → ``Git``, ``Hub``,
    ``GitHub``) so prose that writes ``GitHub`` and a query that writes ``github`` still meet.
    """
    text = clean(text)
    if "__" in text:
        text = _MCP_PREFIX.sub(" ", text)
    out: list[tuple[str, bool]] = []
    for word, cjk in _runs(text):
        if cjk or word.islower() or len(word) == 1:  # most prose has no camelCase to split
            out.append((word, cjk))
            continue
        parts = _CAMEL.split(word)
        out.extend((part, False) for part in parts if part)
        if len(parts) > 1:
            out.append((word, False))
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


def _cjk_terms(run: str) -> list[Term]:
    if len(run) == 1:
        return [Term(run, run, True)]
    return [Term(run[i : i + 2], run[i : i + 2], True) for i in range(len(run) - 1)]


#: Word run as written → its ``Term`` (None for a stop word); bounded, cleared when full.
_WORD_TERMS: dict[str, Term | None] = {}
_WORD_TERMS_MAX = 262_144


def _word_term(raw: str) -> Term | None:
    try:
        return _WORD_TERMS[raw]
    except KeyError:
        pass
    word = raw.lower()
    term = None if word in STOP_WORDS else Term(stem(word[:MAX_TOKEN_CHARS]), word[:MAX_TOKEN_CHARS])
    if len(_WORD_TERMS) >= _WORD_TERMS_MAX:
        _WORD_TERMS.clear()
    _WORD_TERMS[raw] = term
    return term


def analyze(text: str) -> list[Term]:
    """Index terms of ``text`` in order, with duplicates (term frequency matters).

    Returns:
        ``[Term]``; empty for text made only of stop words, punctuation or nothing.
    """
    out: list[Term] = []
    for raw, is_cjk in _raw_words(text):
        if is_cjk:
            out.extend(_cjk_terms(raw))
            continue
        term = _word_term(raw)
        if term is not None:
            out.append(term)
    return out


def tokenize(text: str) -> list[str]:
    """Index terms of ``text`` (see :func:`analyze`), as plain strings."""
    return [t.term for t in analyze(text)]


def is_cjk_term(term: str) -> bool:
    """True when ``term`` is a CJK bigram or unigram."""
    return bool(term) and _IS_CJK.match(term) is not None


def name_words(name: str) -> list[str]:
    """Readable words of a tool name: ``"mcp__slack__postMessage"`` → ``["slack", "post", "message"]``."""
    return words(name)
