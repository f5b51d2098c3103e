"""Result records of a ToolSearch query, and their stable JSON contract."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..models import ToolSpec

SearchMode = Literal["select", "discover", "keyword"]


@dataclass(frozen=True)
class ScoredTool:
    """One ranked tool with its explanation.

    Attributes:
        tool: the tool.
        score: final score in [0, 1] (what is ranked and compared with floors).
        components: named parts of the score *after* weighting, summing to ``score``
            (e.g. ``{"keyword": 0.2, "tfidf": 0.4}`` for the hybrid profile).
        raw: the same components before weighting/normalisation (for the detailed explanation).
        matched: field name → query terms that matched in that field.
        exact_name: True when the query was exactly this tool's full or bare name, or spelled
            it in words ("find symbol" for ``find_symbol``; see :mod:`.name_keys`).
        notes: what the stuffing bounds took off the lexical score, one line each (a term
            repeated in a field, too much description text for one term:
            :func:`~toolscout.core.search.stuffing.stuffing_notes`); empty when none applied.
    """

    tool: ToolSpec
    score: float
    components: dict[str, float] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)
    matched: dict[str, list[str]] = field(default_factory=dict)
    exact_name: bool = False
    notes: tuple[str, ...] = ()

    @property
    def lexical_score(self) -> float:
        """The keyword-match part of the score: BM25F (``default``, ``bm25f`` profiles) or the
        hybrid profile's keyword scorer."""
        return self.components.get("bm25f", self.components.get("keyword", 0.0))

    @property
    def tfidf_score(self) -> float:
        """The TF-IDF part of the score (``bm25f`` and ``hybrid`` profiles; 0 otherwise)."""
        return self.components.get("tfidf", 0.0)

    @property
    def dense_score(self) -> float:
        """The embedding-similarity part of the score (``default`` profile; 0 otherwise)."""
        return self.components.get("dense", 0.0)


@dataclass
class SearchResult:
    """Everything one ToolSearch query returned.

    Attributes:
        query: the query as given. mode: ``select`` | ``discover`` | ``keyword`` (the query's
            form, not how it was ranked).
        ranker: the ranking profile that ranked ``hits`` (``default``, ``bm25f``, ``hybrid``:
            ``bm25f`` while ``default`` waits for its tool vectors); empty when nothing was
            ranked (``select:``, an unusable query).
        hits: ranked tools (best first).
        missing: ``select:`` names that resolved to nothing (or to several tools).
        ambiguous: the names of ``missing`` that resolved to several tools (their candidates
            are in ``suggestions``).
        suggestions: missing name → closest real names.
        already_loaded: ``select:`` names that are core/always-load tools ("call it directly").
        no_good_match: True when nothing cleared the display floor.
        unmatched_terms: query terms that matched no field of any tool.
        pending_servers: servers still connecting (their tools may appear later).
        instructions: server → its ``instructions``, for servers whose tools are in ``hits``.
        errors: human-readable problems with the query (never raised).
    """

    query: str
    mode: SearchMode
    hits: list[ScoredTool] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    suggestions: dict[str, list[str]] = field(default_factory=dict)
    already_loaded: list[str] = field(default_factory=list)
    no_good_match: bool = False
    unmatched_terms: list[str] = field(default_factory=list)
    pending_servers: list[str] = field(default_factory=list)
    instructions: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    ranker: str = ""

    def to_json(self) -> dict[str, Any]:
        """The stable JSON contract of ``toolscout search --json``."""
        return {
            "query": self.query,
            "mode": self.mode,
            "ranker": self.ranker,
            "results": [
                {
                    "name": h.tool.name,
                    "server": h.tool.server,
                    "score": round(h.score, 6),
                    "lexical_score": round(h.lexical_score, 6),
                    "tfidf_score": round(h.tfidf_score, 6),
                    "dense_score": round(h.dense_score, 6),
                    "components": {k: round(v, 6) for k, v in h.components.items()},
                    "matched": h.matched,
                }
                for h in self.hits
            ],
            "missing": self.missing,
            "suggestions": self.suggestions,
            "already_loaded": self.already_loaded,
            "no_good_match": self.no_good_match,
            "unmatched_terms": self.unmatched_terms,
            "pending_servers": self.pending_servers,
        }

    def to_record(self) -> dict[str, Any]:
        """What a transcript keeps of this result (:meth:`to_json`, plus each hit's description
        and the query's errors), so a resumed session shows the search as it was shown live."""
        record = self.to_json()
        for row, hit in zip(record["results"], self.hits, strict=True):
            row["description"] = hit.tool.description
        record["ambiguous"], record["errors"] = self.ambiguous, self.errors
        return record

    @classmethod
    def from_record(cls, record: Any) -> SearchResult | None:
        """The result :meth:`to_record` kept (each hit's tool carries its name, server and
        description only), or None for a record that is not one (another version, a torn file)."""
        if not isinstance(record, dict) or not isinstance(record.get("results"), list):
            return None
        try:
            hits = [
                ScoredTool(
                    ToolSpec(
                        str(r["name"]),
                        str(r.get("description") or ""),
                        server=r.get("server") if isinstance(r.get("server"), str) else None,
                    ),
                    float(r["score"]),
                    {str(k): float(v) for k, v in (r.get("components") or {}).items()},
                )
                for r in record["results"]
            ]
            modes: dict[Any, SearchMode] = {"select": "select", "discover": "discover"}
            mode = modes.get(record.get("mode"), "keyword")
            return cls(
                str(record.get("query", "")),
                mode,
                hits,
                missing=[str(n) for n in record.get("missing") or []],
                ambiguous=[str(n) for n in record.get("ambiguous") or []],
                already_loaded=[str(n) for n in record.get("already_loaded") or []],
                no_good_match=bool(record.get("no_good_match")),
                unmatched_terms=[str(t) for t in record.get("unmatched_terms") or []],
                pending_servers=[str(n) for n in record.get("pending_servers") or []],
                errors=[str(e) for e in record.get("errors") or []],
                ranker=str(record.get("ranker") or ""),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
