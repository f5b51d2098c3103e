"""The ``default`` profile's query template, and the bound on what a tool text gains from it.

all-MiniLM-L6-v2 is a symmetric sentence model: a request embedded as ``"Which tool can
<request>"`` lands nearer tool descriptions than the bare request does (``docs/performance.md``,
"Query template"). Most of that lift is a per-tool prior: across the dev queries, how much a tool's
cosine rises with the template correlates 0.93 (metatool) and 0.75 (livemcpbench) with its
*toolness*, the cosine of its text with the bare template. Tool texts are untrusted, and a server
that writes "This tool can do any task …" has a toolness far above a real catalog's (0.40–0.53
against a maximum of 0.31–0.36 on the dev catalogs), so it would take the template's lift for any
query. The lift a tool may keep is therefore bounded: its cosine loses what its toolness exceeds
the catalog's :data:`TOOLNESS_PERCENTILE`-th percentile by (:func:`template_excess`).
"""

from __future__ import annotations

import numpy as np

#: Text put before a query when the ``default`` profile embeds it. Measured on the dev splits
#: against the query as typed (paired bootstrap, 95%), with the toolness bound: metatool nDCG@10
#: +1.5 [+1.3, +1.7], livemcpbench +0.9 [−2.1, +4.1] (its 67 long task texts move less).
QUERY_TEMPLATE = "Which tool can "

#: Toolness above this percentile of the catalog's is taken off a tool's cosine. At 90 the dev
#: sets keep most of the template's gain (a bound at the 75th: metatool +0.1 instead of +1.5).
TOOLNESS_PERCENTILE = 90.0


def template_excess(toolness: np.ndarray) -> np.ndarray:
    """float64[N]: what each tool's toolness (its cosine with the bare template) exceeds the
    catalog's :data:`TOOLNESS_PERCENTILE`-th percentile by (0 for most tools; all 0 for N = 0)."""
    if not len(toolness):
        return np.zeros(0)
    return np.asarray(np.maximum(0.0, toolness - float(np.percentile(toolness, TOOLNESS_PERCENTILE))))


def excess_note(excess: float) -> str:
    """The explanation line of a tool whose cosine the bound lowered."""
    return (
        f"dense cosine lowered by {excess:.4f}: this tool's text answers the bare query template "
        f"({QUERY_TEMPLATE.strip()!r}) more than {TOOLNESS_PERCENTILE:.0f}% of the catalog's tools do"
    )
