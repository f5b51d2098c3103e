"""The NotebookEdit built-in (deferred): replace, insert or delete one Jupyter notebook cell."""

from __future__ import annotations

import json
import uuid
from typing import Any

from ..models import ToolErrorKind, ToolResult
from ._common import fail, spec
from .base import ToolContext
from .files import update_text
from .safe_open import checked_target


class NotebookEditTool:
    """Edit a cell of an ``.ipynb`` file, addressed by cell id or 0-based index."""

    read_only = False
    spec = spec(
        "NotebookEdit",
        "Edits a Jupyter notebook (.ipynb) cell: replaces its source, inserts a new cell after it "
        "(or at the start when cell_id is omitted), or deletes it. cell_id is the cell's id or its "
        "0-based index.",
        {
            "notebook_path": {"type": "string", "description": "Path of the .ipynb file"},
            "cell_id": {"type": "string", "description": "Cell id, or 0-based index as a string"},
            "new_source": {"type": "string", "description": "New source of the cell"},
            "cell_type": {
                "type": "string",
                "enum": ["code", "markdown"],
                "description": "Cell type (required for insert)",
            },
            "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"], "default": "replace"},
        },
        ["notebook_path", "new_source"],
        hint="edit, insert or delete Jupyter notebook cells",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Apply one cell edit and write the notebook back (indent 1, as Jupyter does), through
        :func:`~.files.update_text` (no symlink followed, regular files only)."""
        path = checked_target("NotebookEdit", params, ctx.cwd, ctx.target)
        if path.suffix != ".ipynb":
            return fail(
                "NotebookEdit", f"{path} is not a .ipynb file; use Edit for other files.", ToolErrorKind.INVALID_PARAMS
            )
        done: list[str] = []

        def change(text: str) -> str | ToolResult:
            try:
                nb = json.loads(text)
                cells = nb["cells"]
                assert isinstance(cells, list)
            except (ValueError, KeyError, AssertionError, TypeError) as exc:
                return fail("NotebookEdit", f"{path} is not a readable notebook: {exc}")
            edited = _edit(cells, params, path)
            if isinstance(edited, ToolResult):
                return edited
            done.append(f"{edited} in {path}.")
            return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"

        failed = await update_text("NotebookEdit", path, change, f"Notebook does not exist: {path}")
        return failed or ToolResult.ok("NotebookEdit", done[0])


def _edit(cells: list[dict[str, Any]], params: dict[str, Any], path: object) -> str | ToolResult:
    """Apply the edit to ``cells`` in place: what was done, or the error result."""
    mode = params.get("edit_mode") or "replace"
    cell_id = params.get("cell_id")
    index = _find(cells, cell_id)
    if cell_id is not None and index is None:
        return fail(
            "NotebookEdit", f"No cell {cell_id!r} in {path} ({len(cells)} cells).", ToolErrorKind.INVALID_PARAMS
        )
    source = params["new_source"]
    if mode == "insert":
        kind = params.get("cell_type")
        if kind not in ("code", "markdown"):
            return fail(
                "NotebookEdit", "cell_type (code or markdown) is required to insert.", ToolErrorKind.INVALID_PARAMS
            )
        cell: dict[str, Any] = {"cell_type": kind, "id": uuid.uuid4().hex[:8], "metadata": {}, "source": source}
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
        at = 0 if index is None else index + 1
        cells.insert(at, cell)
        return f"Inserted a {kind} cell at index {at}"
    if index is None:
        return fail("NotebookEdit", f"cell_id is required to {mode} a cell.", ToolErrorKind.INVALID_PARAMS)
    if mode == "delete":
        cells.pop(index)
        return f"Deleted cell {index}"
    cells[index]["source"] = source
    if params.get("cell_type"):
        cells[index]["cell_type"] = params["cell_type"]
    if cells[index].get("cell_type") == "code":
        cells[index]["outputs"], cells[index]["execution_count"] = [], None
    return f"Replaced the source of cell {index}"


def _find(cells: list[dict[str, Any]], cell_id: str | None) -> int | None:
    if cell_id is None:
        return None
    for i, cell in enumerate(cells):
        if cell.get("id") == cell_id:
            return i
    if cell_id.strip().isdigit() and int(cell_id) < len(cells):
        return int(cell_id)
    return None
