"""Ranking profiles: which signals are fused, with which weights and normalisations.

A profile turns raw per-document signal vectors (BM25F, TF-IDF, keyword points, dense cosine)
into a final score in [0, 1]:

``final = gate × Σ_s w_s · norm_s(raw_s)`` with ``Σ_s w_s = 1`` and every ``norm_s`` in [0, 1].

``gate`` (in [0, 1], one value per query, so it never changes the order) turns the relative
min-max scores back into an absolute confidence: for lexical profiles it is the square root of
the share of the query's idf mass that the best tool matches; the dense profile also accepts the
best cosine (mapped from [0.25, 0.60] to [0, 1]). A gibberish query therefore scores ~0 and the
display floor reports "no good match" instead of showing five arbitrary tools at 1.0.

Measured choices (``tests/benchmarks/REPORT.md``; research: ``shared/research/retrieval-ceiling.md``):

Lexical signals are divided by their maximum (the same as min-max whenever some tool does not
match, which is every real query; but a tool that matches is never normalised to 0), the dense
cosine is min-max normalised over the catalog.

* ``default`` — min-max 0.3 · BM25F + 0.7 · MiniLM cosine (research: 51.4 mean nDCG@10 vs 35.8
  for BM25). Falls back to ``bm25f`` when the dense extra is missing.
* ``bm25f`` — 0.7 · BM25F + 0.3 · field TF-IDF (best lexical mean nDCG@10 on the tune split;
  research: +0.8 over BM25F alone).
* ``hybrid`` — the seed formula: 0.4 · keyword (max-normalised) + 0.6 · scikit-learn TF-IDF
  cosine over name 3.0 / hint 2.5 / description 1.0 (below plain BM25 on natural-language
  queries; kept for comparison). No gate: both parts are already absolute-ish.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..settings.layers import choices
from .lexical import minmax

#: The ranking profiles, as the ``toolSearch.ranker`` setting declares them.
PROFILES: tuple[str, ...] = choices("toolSearch.ranker")

#: Signal → the component name it is reported under in ``ScoredTool.components``.
COMPONENT_NAMES = {
    "bm25f": "bm25f",
    "field_tfidf": "tfidf",
    "dense": "dense",
    "keyword": "keyword",
    "sk_tfidf": "tfidf",
}


def _maxnorm(x: np.ndarray) -> np.ndarray:
    hi = float(x.max()) if len(x) else 0.0
    return x / hi if hi > 0 else np.zeros_like(x)


def _clip(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.clip(x, 0.0, 1.0))


NORMALISERS = {"minmax": minmax, "max": _maxnorm, "raw": _clip}


@dataclass(frozen=True)
class Profile:
    """One fusion recipe.

    Attributes:
        name: profile name. weights: signal → weight (sum 1).
        norms: signal → ``minmax`` | ``max`` | ``raw``.
        gate: ``none`` | ``lexical`` | ``lexical+dense`` (see the module docstring).
        multi_query: fuse per-sub-task scores for long queries (see :mod:`.multiquery`).
        multi_weight: weight of the sub-query aggregate against the whole query (0..1).
    """

    name: str
    weights: dict[str, float]
    norms: dict[str, str] = field(default_factory=dict)
    gate: str = "lexical"
    multi_query: bool = False
    multi_weight: float = 0.5
    dense_conf_lo: float = 0.25
    dense_conf_hi: float = 0.60

    @property
    def signals(self) -> tuple[str, ...]:
        """Signals with a non-zero weight."""
        return tuple(s for s, w in self.weights.items() if w > 0)

    def fuse(self, raw: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Weighted, normalised components (not gated) from raw signal vectors."""
        out: dict[str, np.ndarray] = {}
        for sig in self.signals:
            norm = NORMALISERS[self.norms.get(sig, "minmax")]
            out[sig] = self.weights[sig] * norm(np.asarray(raw[sig], dtype=np.float64))
        return out


def component_names(profile: Profile) -> tuple[str, ...]:
    """The ``ScoredTool.components`` keys ``profile`` reports, in its signal order
    (e.g. ``("bm25f", "dense")`` for ``default``)."""
    return tuple(dict.fromkeys(COMPONENT_NAMES[s] for s in profile.signals))


def make_profile(name: str, weights: dict[str, float] | None = None, *, multi_query: bool | None = None) -> Profile:
    """The named profile, optionally with other fusion weights or multi-query on/off.

    Args:
        name: ``default`` | ``bm25f`` | ``hybrid`` (unknown names give ``default``).
        weights: for ``hybrid`` ``{"keyword": w_k, "tfidf": w_t}`` (settings
            ``toolSearch.weights.*``); for the others signal names as in :data:`COMPONENT_NAMES`.
            Weights are rescaled to sum to 1 (all-zero weights keep the defaults).
    """
    if name == "hybrid":
        w = {"keyword": 0.4, "sk_tfidf": 0.6}
        if weights:
            w = {"keyword": float(weights.get("keyword", 0.4)), "sk_tfidf": float(weights.get("tfidf", 0.6))}
        prof = Profile(
            "hybrid", _unit(w, {"keyword": 0.4, "sk_tfidf": 0.6}), {"keyword": "max", "sk_tfidf": "raw"}, gate="none"
        )
    elif name == "bm25f":
        w = _unit(_rename(weights) or {"bm25f": 0.7, "field_tfidf": 0.3}, {"bm25f": 0.7, "field_tfidf": 0.3})
        prof = Profile("bm25f", w, {"bm25f": "max", "field_tfidf": "max"}, gate="lexical")
    else:
        w = _unit(_rename(weights) or {"bm25f": 0.3, "dense": 0.7}, {"bm25f": 0.3, "dense": 0.7})
        prof = Profile("default", w, {"bm25f": "max", "field_tfidf": "max", "dense": "minmax"}, gate="lexical+dense")
    if multi_query is not None:
        prof = Profile(prof.name, prof.weights, prof.norms, prof.gate, multi_query, prof.multi_weight)
    return prof


def _rename(weights: dict[str, float] | None) -> dict[str, float] | None:
    if not weights:
        return None
    alias = {"tfidf": "field_tfidf", "keyword": "bm25f"}
    return {alias.get(k, k): float(v) for k, v in weights.items()}


def _unit(w: dict[str, float], fallback: dict[str, float]) -> dict[str, float]:
    w = {k: max(0.0, v) for k, v in w.items()}
    total = sum(w.values())
    if total <= 0:
        return dict(fallback)
    return {k: v / total for k, v in w.items()}
