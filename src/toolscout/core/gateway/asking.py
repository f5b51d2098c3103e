"""Permission questions for the gateway's client, asked through MCP elicitation.

The engine's permission rules decide first (deny always wins, allow runs); only an *ask* verdict
reaches the asker built here. The person confirms in their own client:

- on handshake-era connections (2024-11-05 … 2025-11-25, what Claude Desktop, Claude Code and
  Cursor speak) with an ``elicitation/create`` request on the call's own channel;
- on 2026-07-28 connections with the multi-round-trip flow: the call answers
  ``InputRequiredResult`` carrying the same form; the client retries the call with the answer
  (``input_responses``), and the answer only counts for the very same tool, definition and
  arguments (``request_state`` is their digest).

A client that declared no elicitation capability is never asked: :func:`can_elicit` is False and
the call is refused with the rule to add (:func:`toolscout.core.policy.permissions.denied_message`).
Accepting with "remember" allows that tool, as it is defined now, for the rest of this client's
session only: a tool whose description or schema changes afterwards asks again, and the question
says what changed (:mod:`toolscout.core.policy.approvals`).

The question shows every argument: a long value is cut, and the question says exactly which
values were cut and how long each is (:func:`shown_arguments`), so a long first argument cannot
push a later one out of sight.

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
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..mcp.elicitation import refusal
from ..models import ToolSpec
from ..policy.approvals import Fingerprint, ToolChange
from ..policy.permissions import AskAnswer
from ..serialize import dumps

#: Key of the permission question in ``input_requests`` / ``input_responses``.
INPUT_KEY = "toolscout_permission"
#: Characters of the arguments shown in the question (about; every key is shown).
MAX_ARGS_CHARS = 2_000
#: Fewest characters shown of one long string value.
MIN_VALUE_CHARS = 80
#: Most cut values named one by one in the question.
MAX_CUT_NOTES = 20
FORM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "remember": {"type": "boolean", "title": "Allow this tool for the rest of the session", "default": False},
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


def shown_arguments(args: dict[str, Any], limit: int = MAX_ARGS_CHARS) -> tuple[str, list[str]]:
    """The arguments as the question shows them (JSON), and one note per value that was cut.

    Arguments of up to ``limit`` characters (as compact JSON) are shown whole. Longer ones keep
    every key; each string value longer than its share of ``limit`` (at least
    :data:`MIN_VALUE_CHARS`) shows its start, marked ``…``, and a note says which value it is
    and how many of its characters are shown (``content: the first 120 of 9,000 characters``).
    Past that (thousands of keys) the text is cut at ``4 × limit`` and the last note says how
    much was left out.
    """
    whole = dumps(args)
    if len(whole) <= limit:
        return whole, []
    leaves: list[str] = []
    _walk(args, "", lambda path, value: leaves.append(path))
    budget = max(MIN_VALUE_CHARS, limit // max(1, len(leaves)))
    notes: list[str] = []

    def cut(value: Any, path: str) -> Any:
        if isinstance(value, str) and len(value) > budget:
            notes.append(f"{path or '(the value)'}: the first {budget:,} of {len(value):,} characters")
            return value[:budget] + "…"
        if isinstance(value, dict):
            return {k: cut(v, _join(path, k)) for k, v in value.items()}
        if isinstance(value, list):
            return [cut(v, f"{path}[{i}]") for i, v in enumerate(value)]
        return value

    shown = dumps(cut(args, ""))
    if len(shown) > 4 * limit:
        notes.append(f"the rest of the arguments ({len(shown) - 4 * limit:,} characters of JSON) is not shown")
        shown = shown[: 4 * limit] + "…"
    return shown, notes


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def _walk(value: Any, path: str, visit: Any) -> None:
    """Call ``visit(path, value)`` for every string leaf of ``value``."""
    if isinstance(value, str):
        visit(path, value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _walk(v, _join(path, k), visit)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _walk(v, f"{path}[{i}]", visit)


def question(tool: ToolSpec, args: dict[str, Any], change: ToolChange | None = None) -> str:
    """The text the person reads: which tool, on which server, with which arguments (what was
    cut of them, exactly), and, for a tool that changed since it was approved, what changed."""
    shown, notes = shown_arguments(args)
    cut = ""
    if notes:
        listed = notes[:MAX_CUT_NOTES] + (
            [f"and {len(notes) - MAX_CUT_NOTES:,} more values"] if len(notes) > MAX_CUT_NOTES else []
        )
        cut = "\nCut to fit this question (every argument is shown, long values in part): " + "; ".join(listed) + "."
    changed = ""
    if change is not None:
        changed = (
            f"\nWARNING: {tool.name} changed since it was approved: {change.what}. Its description now: "
            f"{change.new_description}\n"
        )
    return (
        f"{changed}Allow {tool.name} (server {tool.server}) to run with these arguments?\n{shown}{cut}\n"
        "Accept to run it once (tick the box to allow it for the rest of this session); decline to refuse."
    )


def call_digest(tool: ToolSpec, args: dict[str, Any]) -> str:
    """What an answer is bound to: SHA-256 of the tool name, its arguments and its definition
    (:class:`~toolscout.core.policy.approvals.Fingerprint`; JSON): an answer given for the tool
    as it was does not run it once it changed."""
    fp = Fingerprint.of(tool)
    return hashlib.sha256(dumps([tool.name, args, fp.description, fp.input_schema]).encode()).hexdigest()


class ElicitingAsker:
    """An engine asker (``async (tool, args) -> answer``) for one ``tools/call`` request.

    Args:
        ctx: the lowlevel request context of the call.
        remembered: tool name → the fingerprint of the definition this client allowed "for the
            session" (mutated on such answers); a tool that no longer has it asks again.
        params: the call's params (``input_responses`` / ``request_state`` of a retry).
        changed: how a tool changed since it was approved (the engine's
            :meth:`~toolscout.core.engine.facade.Engine.tool_change`), for the question.

    Attributes:
        input_required: set when the question must travel as ``InputRequiredResult`` (2026-07-28);
            the caller returns it instead of the engine's refusal.
        failure: why the question could not be asked (the client broke the exchange), or None.
    """

    def __init__(
        self,
        ctx: Any,
        remembered: dict[str, Fingerprint],
        params: Any,
        changed: Callable[[ToolSpec], ToolChange | None] = lambda _tool: None,
    ) -> None:
        self.ctx = ctx
        self.remembered = remembered
        self.changed = changed
        self.responses: dict[str, Any] = dict(getattr(params, "input_responses", None) or {})
        self.state: str | None = getattr(params, "request_state", None)
        self.input_required: types.InputRequiredResult | None = None
        self.failure: str | None = None

    async def __call__(self, tool: ToolSpec, args: dict[str, Any]) -> AskAnswer:
        now = Fingerprint.of(tool)
        kept = self.remembered.get(tool.name)
        change = self.changed(tool)
        if kept is not None and kept != now and change is None:  # changed since this client allowed it
            change = ToolChange(tool.name, kept.changed_parts(now), None, tool.description)
        if kept == now and change is None:
            return "allow_once"
        form = types.ElicitRequestFormParams(message=question(tool, args, change), requested_schema=FORM_SCHEMA)
        if self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            digest = call_digest(tool, args)
            answer = self.responses.get(INPUT_KEY)
            if answer is None or self.state != digest:
                self.input_required = types.InputRequiredResult(
                    input_requests={INPUT_KEY: types.ElicitRequest(params=form)}, request_state=digest
                )
                return "deny"
            return self._interpret(tool, answer)
        try:
            result = await self.ctx.session.elicit_form(
                form.message, FORM_SCHEMA, related_request_id=self.ctx.request_id
            )
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
            self.remembered[tool.name] = Fingerprint.of(tool)
        return "allow_once"


async def forward_question(
    ctx: Any, server: str, params: types.ElicitRequestParams
) -> types.ElicitResult | types.ErrorData:
    """Ask the client of request context ``ctx`` (a ``tools/call`` of the gateway) the question
    upstream ``server`` asked during that call; its answer, or a refusal saying why it was not
    asked (see the module docstring). Raises what the client's exchange raises (the route turns
    that into a refusal)."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return refusal(
            f"the client of toolscout serve speaks MCP {ctx.protocol_version}, where nothing can ask "
            f"it a question in the middle of a call (2026-07-28 has no server-to-client requests), "
            f"so server {server}'s question was not asked"
        )
    caps = ctx.session.client_capabilities
    elicitation = caps.elicitation if caps is not None else None
    if elicitation is None or not ctx.session.can_send_request:
        return refusal(
            f"the client of toolscout serve did not declare the elicitation capability, so server "
            f"{server}'s question was not asked"
        )
    if isinstance(params, types.ElicitRequestURLParams):
        return refusal(
            f"toolscout serve does not forward URL-mode elicitation, so server {server}'s request to "
            "open a URL was not shown to its client"
        )
    if elicitation.form is None and elicitation.url is not None:  # an empty capability means form
        return refusal(
            f"the client of toolscout serve declared URL-mode elicitation only, so server {server}'s form was not shown"
        )
    message = f"The MCP server {server} asks (through toolscout):\n{params.message}"
    result: types.ElicitResult = await ctx.session.elicit_form(
        message, params.requested_schema, related_request_id=ctx.request_id
    )
    return result
