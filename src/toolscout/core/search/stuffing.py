"""Bounds on what keyword stuffing can add to a tool's lexical score, and their explanation.

Tool texts are untrusted: a server whose descriptions repeat another service's keywords
(``"github github github create issue pull request repository …"``) must not outrank that
service's own tools (issue 28 item 6). :class:`~.lexical.BM25F` and :class:`~.lexical.FieldTfidf`
apply these bounds:

* a term counts at most :data:`MAX_FIELD_TF` (2) times per field, however often it is repeated;
* per query term, the *body* fields (:data:`BODY_FIELDS`: description, parameter names and
  descriptions, the server-level description) add at most :data:`MAX_BODY_TF` (2.0, the name
  field's BM25F weight: as much as one mention in the tool's name) to BM25F's weighted term
  frequency, so spreading a word over every parameter does not outweigh a tool named for it.

Repeated sentences are not removed: with the counts capped, repetition only lengthens a field,
which BM25F's length normalisation already holds against it.

Measured with ``toolscout eval`` on the shared dev sets before and after (``bm25f`` and
``default`` profiles; the table is in docs/security.md): metatool (14,729 queries) within about
0.1 point on every metric; livemcpbench (67 queries) better or equal on every metric for ``bm25f``,
and mixed within two queries for ``default`` (R@1, R@3 and MRR up; R@5, R@10 and nDCG@10 down:
two relevant tools at ranks 9 and 10 fell just below the top 10). A stuffed impostor beside the real GitHub tools outranks
none of them in either profile (``tests/core/search/test_search_stuffing.py``).

:func:`stuffing_notes` names the bounds that applied to a hit (the score explanation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .segments import FIELD_INDEX

if TYPE_CHECKING:
    from .matrices import Matrices

#: Occurrences of one term that count per field (more are repetition: stuffing).
MAX_FIELD_TF = 2.0
#: Fields whose text a server writes at length; per query term they add at most MAX_BODY_TF.
BODY_FIELDS = ("description", "param_names", "param_descriptions", "server_description")
#: What the body fields may add to one term's BM25F weighted frequency: one mention in the name
#: (the name field's weight, :data:`~.lexical.BM25F_WEIGHTS`).
MAX_BODY_TF = 2.0
#: bool[len(FIELDS)]: which field indexes are body fields.
BODY = np.asarray([f in BODY_FIELDS for f in FIELD_INDEX], dtype=bool)


class Bounded(Protocol):
    """What :func:`stuffing_notes` reads of a scorer (:class:`~.lexical.BM25F`)."""

    weights: dict[str, float]
    b: float
    max_tf: float | None
    max_body: float | None


def stuffing_notes(m: Matrices, name: str, terms: Sequence[tuple[int, str]], scorer: Bounded) -> tuple[str, ...]:
    """What the stuffing bounds took off tool ``name``'s BM25F score, one line per capped query
    term (``terms``: vocabulary id and the word as written): ``'github': repeated terms capped
    (×15 in description, each counted 2×); description and parameter text capped at one mention
    in the name (8.74 → 2)``. Empty when no bound applied (or ``scorer`` has none)."""
    entry = m.store.docs.get(name)
    if entry is None or not terms:
        return ()
    avg = m.avg_lengths
    notes: list[str] = []
    for tid, word in terms:
        repeated, body = [], 0.0
        for f in FIELD_INDEX:
            ids, counts, length = entry.fields[f]
            hit = np.flatnonzero(ids == tid)
            if not len(hit):
                continue
            tf = float(counts[hit[0]])
            if scorer.max_tf is not None and tf > scorer.max_tf:
                repeated.append(f"×{tf:g} in {f}")
                tf = scorer.max_tf
            k = FIELD_INDEX[f]
            norm = 1.0 - scorer.b + scorer.b * length / avg[k] if avg[k] > 0 else 1.0
            if f in BODY_FIELDS:
                body += scorer.weights.get(f, 0.0) * tf / norm
        parts = [f"repeated terms capped ({', '.join(repeated)}, each counted {scorer.max_tf:g}×)"] if repeated else []
        if scorer.max_body is not None and body > scorer.max_body:
            parts.append(
                f"description and parameter text capped at one mention in the name ({body:.2f} → {scorer.max_body:g})"
            )
        if parts:
            notes.append(f"{word!r}: " + "; ".join(parts))
    return tuple(notes)


#: A tool is *stuffed* for a query when the bounds took at least this share of its BM25F score
#: (BM25's saturation keeps the share low: the keyword-soup fixture's tools lose 0.36–0.40, the
#: real GitHub tools beside them 0.16 at most). Holding every tool that any bound touched (share
#: > 0) cost livemcpbench 1 point of nDCG@10 on its long, repetitive real descriptions.
STUFFED_SHARE = 0.3


def stuffed_share(bounded: np.ndarray, unbounded: np.ndarray) -> np.ndarray:
    """float64[N]: the share of each tool's BM25F score the stuffing bounds took for one query
    (``1 − bounded / unbounded``; 0 where the unbounded score is 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(unbounded > 0, 1.0 - bounded / np.where(unbounded > 0, unbounded, 1.0), 0.0)
    return np.asarray(np.clip(share, 0.0, 1.0))


def bound_stuffed_dense(dense: np.ndarray, capped: np.ndarray) -> np.ndarray:
    """The dense component with the stuffed tools' values held to the best unstuffed tool's.

    Repetition buys a keyword-soup text semantic similarity too (its mean-pooled vector *is* the
    query's keywords), so the tools stuffed for this query (``capped``: :data:`STUFFED_SHARE` of
    their BM25F score taken by the bounds) get at most the largest dense value of the tools that
    are not: they can tie the best honest tool on meaning, never pass it.

    Args:
        dense: float64[N] weighted dense component. capped: bool[N].

    Returns:
        A new float64[N] (``dense`` itself when nothing, or everything, is capped).
    """
    if not capped.any() or capped.all():
        return dense
    limit = float(dense[~capped].max())
    return np.where(capped, np.minimum(dense, limit), dense)


def hold_stuffed_dense(dense: np.ndarray, bounded: np.ndarray, unbounded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bound_stuffed_dense` for one query from its BM25F scores with and without the bounds
    (float64[N] each): ``(dense after the bound, what the bound took per tool)``."""
    held = bound_stuffed_dense(dense, stuffed_share(bounded, unbounded) >= STUFFED_SHARE)
    return held, dense - held


def held_note(taken: float, dense: float) -> str:
    """The explanation line of a tool whose dense component was held (weighted, gated values)."""
    return (
        f"dense held at the best unstuffed tool's ({dense + taken:.4f} → {dense:.4f}): the stuffing "
        f"bounds took at least {STUFFED_SHARE:.0%} of this tool's BM25F score"
    )
