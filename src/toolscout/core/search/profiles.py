"""Ranking profiles: which signals are fused, with which weights and normalisations.

A profile turns raw per-document signal vectors (BM25F, TF-IDF, keyword points, dense cosine)
into a final score in [0, 1]:

``final = gate × Σ_s w_s · norm_s(raw_s)`` with ``Σ_s w_s = 1`` and every ``norm_s`` in [0, 1].

``gate`` (in [0, 1], one value per query, so it never changes the order) turns the relative
min-max scores back into an absolute confidence: for lexical profiles it is the square root of
the share of the query's idf mass that the best tool matches; the dense profiles also accept a
dense confidence: ``default-as-typed`` the best cosine mapped from [0.25, 0.60] to [0, 1],
``default`` (whose query is templated) the best cosine's lead over the catalog's median
(:data:`DENSE_MARGIN`). A gibberish query therefore scores ~0 and the display floor reports "no
good match" instead of showing five arbitrary tools at 1.0.

Measured choices (``tests/benchmarks/REPORT.md``; research: ``shared/research/retrieval-ceiling.md``):

Lexical signals are divided by their maximum (the same as min-max whenever some tool does not
match, which is every real query; but a tool that matches is never normalised to 0), the dense
cosine is min-max normalised over the catalog.

* ``default`` — min-max 0.3 · BM25F + 0.7 · MiniLM cosine, the query embedded as
  ``"Which tool can <query>"`` (:mod:`.query_template`, with its bound on what a tool text gains
  from the template; dev nDCG@10 livemcpbench 46.1, metatool 72.8, against 45.1 and 71.4 for the
  query as typed: ``docs/performance.md``, "Query template").
  Falls back to ``bm25f`` when the dense extra is missing.
* ``default-as-typed`` — the same fusion with the query embedded as typed (the default until
  the template was measured; kept for ``toolscout eval --compare``).
* ``bm25f`` — 0.7 · BM25F + 0.3 · field TF-IDF (best lexical mean nDCG@10 on the tune split;
  research: +0.8 over BM25F alone).
* ``hybrid`` — the seed formula: 0.4 · keyword (max-normalised) + 0.6 · scikit-learn TF-IDF
  cosine over name 3.0 / hint 2.5 / description 1.0 (below plain BM25 on natural-language
  queries; kept for comparison). No gate: both parts are already absolute-ish.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..settings.layers import choices
from .lexical import minmax
from .query_template import QUERY_TEMPLATE

#: The ranking profiles, as the ``toolSearch.ranker`` setting declares them.
PROFILES: tuple[str, ...] = choices("toolSearch.ranker")


#: The dense confidence of the ``default`` profile's gate: the best cosine's lead over the median
#: cosine of the catalog, mapped from [0.20, 0.50] to [0, 1]. The lead is what the template leaves
#: alone (median lead, query as typed → templated: livemcpbench dev 0.311 → 0.313, metatool
#: 0.360 → 0.359; random letter strings 0.17–0.18 → 0.18–0.22, their 90th percentile ≤ 0.26),
#: where the best cosine itself rises by 0.04–0.06 for real queries and 0.09–0.10 for gibberish.
DENSE_MARGIN = (0.20, 0.50)

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
        query_prefix: text put before the query when it is embedded (dense signal only).
        dense_conf: what the gate reads of the cosines: ``best`` (the best tool's) or ``margin``
            (the best minus the catalog's median). dense_conf_lo / dense_conf_hi: that value
            mapped to dense confidence 0 / 1.
    """

    name: str
    weights: dict[str, float]
    norms: dict[str, str] = field(default_factory=dict)
    gate: str = "lexical"
    multi_query: bool = False
    multi_weight: float = 0.5
    dense_conf_lo: float = 0.25
    dense_conf_hi: float = 0.60
    query_prefix: str = ""
    dense_conf: str = "best"

    @property
    def signals(self) -> tuple[str, ...]:
        """Signals with a non-zero weight."""
        return tuple(s for s, w in self.weights.items() if w > 0)

    def dense_confidence(self, cosines: np.ndarray) -> float:
        """The gate's dense confidence in [0, 1] from one query's cosines (float64[N], N ≥ 1):
        :attr:`dense_conf` (``best`` or ``margin``) mapped from [lo, hi] to [0, 1], clipped."""
        lead = float(cosines.max()) - (float(np.median(cosines)) if self.dense_conf == "margin" else 0.0)
        return min(1.0, max(0.0, (lead - self.dense_conf_lo) / (self.dense_conf_hi - self.dense_conf_lo)))

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
        name: ``default`` | ``default-as-typed`` | ``bm25f`` | ``hybrid`` (unknown names give
            ``default``).
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
        norms = {"bm25f": "max", "field_tfidf": "max", "dense": "minmax"}
        if name == "default-as-typed":
            prof = Profile(name, w, norms, gate="lexical+dense")
        else:
            # the template lifts every cosine (real queries ~+0.05, gibberish ~+0.09), by how much
            # depends on the query; the best cosine's lead over the catalog's median does not move
            # (DENSE_MARGIN), so the gate reads that
            prof = Profile(
                "default",
                w,
                norms,
                gate="lexical+dense",
                dense_conf="margin",
                dense_conf_lo=DENSE_MARGIN[0],
                dense_conf_hi=DENSE_MARGIN[1],
                query_prefix=QUERY_TEMPLATE,
            )
    if multi_query is not None:
        prof = replace(prof, multi_query=multi_query)
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
