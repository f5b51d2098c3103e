"""The mode × strategy × provider matrix of issue 21 item 1 (inline tools are callable), shared by
the in-process session tests, the ``toolscout -p`` subprocess slice and the app (Pilot) tests.

One fixture MCP server, ``ledger`` (``tests/fixtures/servers/ledger.py``), writes every call it
receives to a log: each cell asserts on that log and on the ``tool_result`` the loopback
provider received. Its tool ``pinned`` is in ``toolSearch.alwaysLoad`` (sent with its full
schema in every mode); ``record`` is deferred when tool search is on, inline otherwise.

The three scenarios of a cell, each a scripted model (or, offline, the person):

* ``a``: a direct call of a tool the request carried with its full schema (``pinned``);
* ``b``: ToolSearch, then the call (in a mode that defers nothing ToolSearch is not offered:
  the model is told so, and the direct call that follows runs);
* ``c``: a call of ``record`` before any search: with the ``stub`` strategy and tool search
  on, the self-healing gate answers with its definition and the server gets nothing until the
  model calls again; ``execute-proxy`` with tool search on records the call as ExecuteTool,
  which runs; in a mode that defers nothing it is a direct call of an inline tool, which runs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixtures.providers import Reply, ToolCall
from fixtures.servers.ledger import answer
from fixtures.warm_servers import server_args

LEDGER = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "ledger.py"
PINNED = "mcp__ledger__pinned"
RECORD = "mcp__ledger__record"
#: ``toolSearch.enabled`` of each mode (``auto`` stays below its threshold with these tools).
MODES = {"on": "true", "auto": "auto", "off": "false"}
STRATEGIES = ("execute-proxy", "stub")
PROVIDERS = ("anthropic", "openai", "offline")
CELLS = [(m, s, p) for m in MODES for s in STRATEGIES for p in PROVIDERS]
NOT_LOADED = "was called before it was loaded"
NO_SEARCH = "ToolSearch is not available in this session"


def cell_id(cell: tuple[str, str, str]) -> str:
    """``on-stub-openai``: the test id, also the prefix of every text the cell sends."""
    return "-".join(cell)


def defers(mode: str) -> bool:
    """True when ``mode`` defers ``record`` (tool search on)."""
    return mode == "on"


def gated(mode: str, strategy: str) -> bool:
    """True when a call of ``record`` before any search meets the self-healing gate: only a
    direct call of a tool the request deferred (a stub), i.e. the stub strategy with tool search on."""
    return defers(mode) and strategy == "stub"


def settings_overrides(mode: str, strategy: str) -> dict[str, Any]:
    """Dotted settings of a cell: its mode and strategy, ``pinned`` always loaded, the ledger
    allowed (headless runs cannot ask), the lexical ranker (no model to load)."""
    return {"toolSearch.enabled": MODES[mode], "session.strategy": strategy,
            "toolSearch.alwaysLoad": [PINNED], "permissions.allow": ["mcp__ledger__*"],
            "toolSearch.ranker": "bm25f"}


def ledger_config(log: Path) -> dict[str, Any]:
    """The ``mcpServers`` entry of the ledger, started warm (:mod:`fixtures.warm_servers`)."""
    return {"command": sys.executable, "args": server_args(LEDGER, "ledger", str(log))}


def sent_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool result in a request body the loopback provider received, in
    order (Anthropic ``tool_result`` blocks, OpenAI ``tool`` messages)."""
    out: list[str] = []
    for message in body["messages"]:
        if message["role"] == "tool":
            out.append(message["content"])
        elif message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    out.append(content if isinstance(content, str)
                               else "".join(b.get("text", "") for b in content))
    return out


def last_result(body: dict[str, Any]) -> str:
    """The newest tool result in ``body`` ("" when there is none)."""
    results = sent_results(body)
    return results[-1] if results else ""


def call_record(mode: str, strategy: str, text: str) -> ToolCall:
    """How a model following its system prompt calls ``record`` once it has its schema:
    through ExecuteTool in execute-proxy with tool search on, directly otherwise."""
    if defers(mode) and strategy == "execute-proxy":
        return ToolCall("ExecuteTool", {"tool_name": RECORD, "params": {"text": text}})
    return ToolCall(RECORD, {"text": text})


def retry_after_gate(call: ToolCall) -> Callable[[dict[str, Any]], Reply]:
    """A model step: call ``call`` again when the last result was the gate's definition, else stop."""
    def step(body: dict[str, Any]) -> Reply:
        return Reply(tool_calls=[call]) if NOT_LOADED in last_result(body) else Reply(text="done")
    return step


def script(scenario: str, mode: str, strategy: str, tag: str) -> list[Any]:
    """The scripted model of one scenario (``a``, ``b`` or ``c``, see the module docstring);
    ``tag`` prefixes the texts it sends."""
    if scenario == "a":
        return [Reply(tool_calls=[ToolCall(PINNED, {"text": f"{tag}-a"})]), Reply(text="done")]
    if scenario == "b":
        return [Reply(tool_calls=[ToolCall("ToolSearch", {"query": f"select:{RECORD}"})]),
                Reply(tool_calls=[call_record(mode, strategy, f"{tag}-b")]), Reply(text="done")]
    first = ToolCall(RECORD, {"text": f"{tag}-c"})
    return [Reply(tool_calls=[first]), retry_after_gate(first), Reply(text="done")]


def one_turn_script(mode: str, strategy: str, tag: str) -> list[Any]:
    """Every scenario in one turn (the ``-p`` slice): ``a`` and ``c`` in one message, the gate's
    retry, then ToolSearch and ``b``."""
    first = ToolCall(RECORD, {"text": f"{tag}-c"})

    def after_first(body: dict[str, Any]) -> Reply:
        retry = [first] if any(NOT_LOADED in r for r in sent_results(body)) else []
        return Reply(tool_calls=[*retry, ToolCall("ToolSearch", {"query": f"select:{RECORD}"})])

    return [Reply(tool_calls=[ToolCall(PINNED, {"text": f"{tag}-a"}), first]), after_first,
            Reply(tool_calls=[call_record(mode, strategy, f"{tag}-b")]), Reply(text="done")]


def expected_calls(tag: str, scenarios: str = "acb") -> list[dict[str, Any]]:
    """What the ledger must have received for ``scenarios`` of a cell, in order: each once."""
    tools = {"a": "pinned", "b": "record", "c": "record"}
    return [{"tool": tools[s], "arguments": {"text": f"{tag}-{s}"}} for s in scenarios]


def ledger_answer(tool: str, tag: str, scenario: str) -> str:
    """The result text only the ledger writes for a scenario's call."""
    return answer(tool, f"{tag}-{scenario}")


def mcp_config_file(folder: Path, log: Path) -> Path:
    """An ``.mcp.json``-format file with the ledger, in ``folder``."""
    path = folder / "ledger.mcp.json"
    path.write_text(json.dumps({"mcpServers": {"ledger": ledger_config(log)}}), encoding="utf-8")
    return path
