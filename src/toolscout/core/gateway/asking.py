"""Permission questions for the gateway's client, asked through MCP elicitation.

The engine's permission rules decide first (deny always wins, allow runs); only an *ask* verdict
reaches the asker built here. The person confirms in their own client:

- on handshake-era connections (2024-11-05 … 2025-11-25, what Claude Desktop, Claude Code and
  Cursor speak) with an ``elicitation/create`` request on the call's own channel;
- on 2026-07-28 connections with the multi-round-trip flow: the call answers
  ``InputRequiredResult`` carrying the same form; the client retries the call with the answer
  (``input_responses``), and the answer only counts for the very same tool and arguments
  (``request_state`` is their digest).

A client that declared no elicitation capability is never asked: :func:`can_elicit` is False and
the call is refused with the rule to add (:func:`toolscout.core.policy.permissions.denied_message`).
Accepting with "remember" allows that tool for the rest of this client's session only.

Questions an upstream server asks during a call (its own ``elicitation/create``) are forwarded
the same way, by :func:`forward_question` (the route from the upstream connection is
:mod:`toolscout.core.mcp.elicitation`): to a handshake-era client that declared form elicitation,
on the call's channel, with the message prefixed by the server's name (so a server cannot pass
its question off as toolscout's permission question), and the client's answer goes upstream as
it is. A client that declared no elicitation, a 2026-07-28 client (no request can reach it in the
middle of a call) and URL-mode questions are refused, the server being told why.
"""

from __future__ import annotations

import hashlib
from typing import Any

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..mcp.elicitation import refusal
from ..models import ToolSpec
from ..policy.permissions import AskAnswer
from ..serialize import dumps

#: Key of the permission question in ``input_requests`` / ``input_responses``.
INPUT_KEY = "toolscout_permission"
#: Characters of the arguments shown in the question.
MAX_ARGS_CHARS = 2_000
FORM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "remember": {"type": "boolean", "title": "Allow this tool for the rest of the session",
                     "default": False},
    },
}


def can_elicit(ctx: Any) -> bool:
    """True when the client of request context ``ctx`` declared form elicitation (and, on a
    handshake-era connection, the call's channel can carry a request back to it)."""
    caps = ctx.session.client_capabilities
    if caps is None or caps.elicitation is None:
        return False
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return True
    return bool(ctx.session.can_send_request)


def question(tool: ToolSpec, args: dict[str, Any]) -> str:
    """The text the person reads: which tool, on which server, with which arguments."""
    shown = dumps(args)
    if len(shown) > MAX_ARGS_CHARS:
        shown = shown[:MAX_ARGS_CHARS] + f"… ({len(shown) - MAX_ARGS_CHARS:,} more characters)"
    return (f"Allow {tool.name} (server {tool.server}) to run with these arguments?\n{shown}\n"
            "Accept to run it once (tick the box to allow it for the rest of this session); decline to refuse.")


def call_digest(tool: ToolSpec, args: dict[str, Any]) -> str:
    """What an answer is bound to: SHA-256 of the tool name and its arguments (JSON)."""
    return hashlib.sha256(dumps([tool.name, args]).encode()).hexdigest()


class ElicitingAsker:
    """An engine asker (``async (tool, args) -> answer``) for one ``tools/call`` request.

    Args:
        ctx: the lowlevel request context of the call.
        remembered: tool names this client allowed "for the session" (mutated on such answers).
        params: the call's params (``input_responses`` / ``request_state`` of a retry).

    Attributes:
        input_required: set when the question must travel as ``InputRequiredResult`` (2026-07-28);
            the caller returns it instead of the engine's refusal.
        failure: why the question could not be asked (the client broke the exchange), or None.
    """

    def __init__(self, ctx: Any, remembered: set[str], params: Any) -> None:
        self.ctx = ctx
        self.remembered = remembered
        self.responses: dict[str, Any] = dict(getattr(params, "input_responses", None) or {})
        self.state: str | None = getattr(params, "request_state", None)
        self.input_required: types.InputRequiredResult | None = None
        self.failure: str | None = None

    async def __call__(self, tool: ToolSpec, args: dict[str, Any]) -> AskAnswer:
        if tool.name in self.remembered:
            return "allow_once"
        form = types.ElicitRequestFormParams(message=question(tool, args), requested_schema=FORM_SCHEMA)
        if self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            digest = call_digest(tool, args)
            answer = self.responses.get(INPUT_KEY)
            if answer is None or self.state != digest:
                self.input_required = types.InputRequiredResult(
                    input_requests={INPUT_KEY: types.ElicitRequest(params=form)}, request_state=digest)
                return "deny"
            return self._interpret(tool, answer)
        try:
            result = await self.ctx.session.elicit_form(form.message, FORM_SCHEMA,
                                                        related_request_id=self.ctx.request_id)
        except Exception as exc:  # a broken exchange refuses, never allows
            self.failure = f"the client did not answer the permission question ({type(exc).__name__}: {exc})"
            return "deny"
        return self._interpret(tool, result)

    def _interpret(self, tool: ToolSpec, answer: Any) -> AskAnswer:
        data = answer.model_dump(by_alias=True) if hasattr(answer, "model_dump") else dict(answer or {})
        if data.get("action") != "accept":
            return "deny"
        content = data.get("content") or {}
        if content.get("remember") is True:
            self.remembered.add(tool.name)
        return "allow_once"


async def forward_question(ctx: Any, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
    """Ask the client of request context ``ctx`` (a ``tools/call`` of the gateway) the question
    upstream ``server`` asked during that call; its answer, or a refusal saying why it was not
    asked (see the module docstring). Raises what the client's exchange raises (the route turns
    that into a refusal)."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return refusal(f"the client of toolscout serve speaks MCP {ctx.protocol_version}, where nothing can ask "
                       f"it a question in the middle of a call (2026-07-28 has no server-to-client requests), "
                       f"so server {server}'s question was not asked")
    caps = ctx.session.client_capabilities
    elicitation = caps.elicitation if caps is not None else None
    if elicitation is None or not ctx.session.can_send_request:
        return refusal(f"the client of toolscout serve did not declare the elicitation capability, so server "
                       f"{server}'s question was not asked")
    if isinstance(params, types.ElicitRequestURLParams):
        return refusal(f"toolscout serve does not forward URL-mode elicitation, so server {server}'s request to "
                       "open a URL was not shown to its client")
    if elicitation.form is None and elicitation.url is not None:  # an empty capability means form
        return refusal(f"the client of toolscout serve declared URL-mode elicitation only, so server {server}'s "
                       "form was not shown")
    message = f"The MCP server {server} asks (through toolscout):\n{params.message}"
    result: types.ElicitResult = await ctx.session.elicit_form(message, params.requested_schema,
                                                               related_request_id=ctx.request_id)
    return result
