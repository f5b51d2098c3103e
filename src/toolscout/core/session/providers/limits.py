"""How many tools one request may carry, per provider: the one table, and the setting over it.

* ``openai``: 128. The Chat Completions reference says of ``tools``: "A max of 128 functions are
  supported", and the API refuses a longer array with a 400 ``invalid_request_error``
  (``code: array_above_max_length``, "Invalid 'tools': array too long. Expected an array with
  maximum length 128, ..."). OpenAI-compatible servers (vLLM, llama.cpp, LM Studio, gateways)
  often accept more: ``provider.maxTools`` says so.
* ``anthropic``: 10,000. The Messages API documents no cap on ``tools``; the largest documented
  figure is the tool search tool's "maximum tools: 10,000 tools in your catalog"
  (platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool, *Limits*), a
  catalog that is itself sent in ``tools``.
* ``offline``: none (no request is sent).

``provider.maxTools`` (settings, env ``TOOLSCOUT_MAX_TOOLS``) overrides the table for whichever
provider runs. The session never sends more (:mod:`toolscout.core.session.modes`).
"""

from __future__ import annotations

from ...settings.layers import Settings
from ...tokens import ToolLimit

#: Tools per request by provider name (None: no limit). See the module docstring for sources.
MAX_TOOLS: dict[str, int | None] = {"openai": 128, "anthropic": 10_000, "offline": None}
#: The setting that overrides :data:`MAX_TOOLS`.
SETTING = "provider.maxTools"


def tool_limit(provider: str, settings: Settings) -> ToolLimit:
    """The most tools one request to ``provider`` (a :attr:`Provider.name`) may carry:
    ``provider.maxTools`` when set, else :data:`MAX_TOOLS` (an unknown provider: no limit)."""
    override = settings.get(SETTING)
    if override is not None:
        return ToolLimit(int(override), provider, SETTING)
    return ToolLimit(MAX_TOOLS.get(provider), provider)
