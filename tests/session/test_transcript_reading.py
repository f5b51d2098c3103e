"""Reading the transcript format lives in core/session/transcript.py only: the CLI's call log
(``-p --output-format json``) and the app's resumed history use the same readers."""

from __future__ import annotations

from toolscout.core.session.transcript import result_text, tool_results, tool_uses

MESSAGES = [
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "looking"},
            {"type": "tool_use", "id": "a", "name": "ToolSearch", "input": {"query": "weather"}},
            {"type": "tool_use", "id": "b", "name": "ExecuteTool", "input": {"tool_name": "w", "params": {}}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "found w"},
            {
                "type": "tool_result",
                "tool_use_id": "b",
                "content": [{"type": "text", "text": "sunny"}, "junk", {"type": "text", "text": "warm"}],
            },
        ],
    },
    {"role": "assistant", "content": "It is sunny."},
]


def test_tool_uses_are_the_assistants_calls_in_order() -> None:
    assert [b["id"] for b in tool_uses(MESSAGES)] == ["a", "b"]


def test_a_results_text_is_its_string_or_its_text_blocks() -> None:
    results = tool_results(MESSAGES)
    assert result_text(results["a"]["content"]) == "found w"
    assert result_text(results["b"]["content"]) == "sunny\nwarm"  # a non-object block is skipped
    assert result_text({"unexpected": 1}) is None


def test_the_cli_call_log_reads_through_them() -> None:
    from toolscout.cli.headless import tool_call_log

    log = tool_call_log(MESSAGES, {})
    assert [(e["id"], e["outcome"], e["output"]) for e in log] == [("a", "ok", "found w"), ("b", "ok", "sunny\nwarm")]
