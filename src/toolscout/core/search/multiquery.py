"""Split a long task description into sub-tasks (multi-query retrieval).

After Toolshed (Lumer et al., arXiv:2410.14594): a multi-step request is decomposed and each
part is retrieved separately, then the results are fused, so the tools of the third step are not
drowned by the words of the first. Decomposition here is rule-based (no LLM): sentences, then
clauses joined by ``; ``, "and then", ", then", "after that", "finally", "also". Only queries of
at least :data:`MIN_WORDS` words are split; parts shorter than :data:`MIN_PART_WORDS` words are
merged into their neighbour.
"""

from __future__ import annotations

import re

MIN_WORDS = 12
MIN_PART_WORDS = 3
MAX_PARTS = 6

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+|;\s+")
_CLAUSE = re.compile(
    r",?\s+(?:and\s+then|after\s+that|afterwards|finally|then|and\s+also|also)\s+|,\s+and\s+",
    re.IGNORECASE,
)


def split_subqueries(text: str) -> list[str]:
    """Sub-tasks of ``text``; ``[]`` when the text is short or does not split.

    >>> split_subqueries("Find the repo on GitHub and then open an issue, finally post a note in Slack")
    ['Find the repo on GitHub', 'open an issue', 'post a note in Slack']
    """
    if not isinstance(text, str) or len(text.split()) < MIN_WORDS:
        return []
    parts: list[str] = []
    for sentence in _SENTENCE.split(text[:20_000]):
        parts.extend(p.strip(" ,.;:") for p in _CLAUSE.split(sentence))
    merged: list[str] = []
    for part in (p for p in parts if p):
        if (merged and len(part.split()) < MIN_PART_WORDS) or (merged and len(merged[-1].split()) < MIN_PART_WORDS):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    if len(merged) < 2:
        return []
    if len(merged) > MAX_PARTS:
        merged = [*merged[: MAX_PARTS - 1], " ".join(merged[MAX_PARTS - 1 :])]
    return merged
