"""One tool call: look up, gate, validate, permit, run, cap.

Rooms: :mod:`.executor` (:class:`ToolExecutor`, behind ExecuteTool and direct calls),
:mod:`.validation` (arguments against the ``inputSchema``), :mod:`.result_cap` (results capped
before the model sees them), :mod:`.form_model` (the argument form's fields and values).
"""

from .executor import ToolExecutor, map_call_result
from .result_cap import cap_result
from .validation import field_problems, validate_params

__all__ = ["ToolExecutor", "cap_result", "field_problems", "map_call_result", "validate_params"]
