"""Server ``instructions`` as the model reads them: a per-server budget with a visible marker.

Every server gets the same budget (setting ``mcp.instructionsBudget``, characters), so what one
server's instructions cost never depends on how long another's are, on the order servers are
configured in, or on when they connect. Text over the budget is cut at the last whitespace
within it (or at the budget when there is none) and ends in ``[… truncated N chars]``, N the
number of characters left out.
"""

from __future__ import annotations

#: Default of ``mcp.instructionsBudget`` (characters per server).
DEFAULT_BUDGET = 1_000
#: At most this much of a budget is given back to end on whitespace (characters).
WORD_SLACK = 80


def budgeted(text: str, budget: int = DEFAULT_BUDGET) -> str:
    """``text`` stripped and cut to ``budget`` characters (plus the marker) when longer.

    >>> budgeted("alpha beta gamma", 11)
    'alpha beta\\n[… truncated 6 chars]'
    """
    text = (text or "").strip()
    if len(text) <= budget:
        return text
    cut = text.rfind(" ", max(0, budget - WORD_SLACK), budget + 1) if budget else 0
    cut = cut if cut > 0 else budget
    kept = text[:cut].rstrip()
    return f"{kept}\n[… truncated {len(text) - len(kept)} chars]" if kept else f"[… truncated {len(text)} chars]"
