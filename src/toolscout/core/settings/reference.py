"""The settings reference in ``docs/configuration.md``, generated from the schema (:data:`.layers.KEYS`).

The page keeps the generated table between two marker lines; ``python -m
toolscout.core.settings.reference docs/configuration.md`` rewrites it in place after a change to
the schema, and ``tests/core/test_docs.py`` fails while the page and the schema disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .layers import ENV_KEYS, KEYS, PROJECT_GATED_KEYS, USER_ONLY_KEYS

BEGIN = "<!-- settings reference: generated from toolscout.core.settings.layers.KEYS; do not edit -->"
END = "<!-- end of settings reference -->"


def render_reference() -> str:
    """The reference table as markdown: one row per setting, in schema order.

    Columns: the dotted key, its default as JSON, its allowed values (for a fixed set), the
    environment variable that overrides it, and the schema's one-line description.
    """
    env_of = {key: var for var, key in ENV_KEYS.items()}
    rows = ["| key | default | values | env | meaning |", "|---|---|---|---|---|"]
    for key in KEYS:
        values = ", ".join(f"`{c}`" for c in key.choices)
        env = f"`{env_of[key.name]}`" if key.name in env_of else ""
        doc = key.doc.replace("|", "\\|")
        if key.name in PROJECT_GATED_KEYS:
            doc += " (from a project's own files only once the folder is approved)"
        if key.name in USER_ONLY_KEYS:
            doc += " (user or managed settings only)"
        rows.append(f"| `{key.name}` | `{json.dumps(key.default)}` | {values} | {env} | {doc} |")
    return "\n".join(rows)


def replace_block(page: str) -> str:
    """``page`` with the text between :data:`BEGIN` and :data:`END` replaced by the current table.

    Raises:
        ValueError: the page lacks either marker line.
    """
    head, sep, rest = page.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError("the page has no settings-reference markers")
    return f"{head}{BEGIN}\n{render_reference()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    """Rewrite the block in each page named in ``argv``; returns the exit status."""
    for name in argv:
        path = Path(name)
        path.write_text(replace_block(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
