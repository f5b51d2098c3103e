from hypothesis import given
from hypothesis import strategies as st

from toolscout.core.names import (
    MAX_NAME_LENGTH,
    dedupe,
    lookup_key,
    mcp_tool_name,
    sanitize,
    shorten,
    split_mcp_name,
)


def test_mcp_name_format_and_sanitising():
    assert mcp_tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert mcp_tool_name("my server.v2", "do/thing!") == "mcp__my_server_v2__do_thing_"
    assert sanitize("a-b_c9") == "a-b_c9"


def test_long_names_are_shortened_deterministically_and_distinctly():
    a = mcp_tool_name("s" * 40, "tool_" + "x" * 40)
    b = mcp_tool_name("s" * 40, "tool_" + "x" * 39 + "y")
    assert len(a) == len(b) == MAX_NAME_LENGTH
    assert a != b
    assert a == mcp_tool_name("s" * 40, "tool_" + "x" * 40)


def test_split_round_trips():
    assert split_mcp_name("mcp__github__create_issue") == ("github", "create_issue")
    assert split_mcp_name("Read") is None
    assert split_mcp_name("mcp__onlyserver") is None


def test_dedupe_is_deterministic():
    taken = {"x", "x_2"}
    assert dedupe("x", taken) == "x_3"
    assert dedupe("y", taken) == "y"
    long = "a" * 64
    assert len(dedupe(long, {long})) <= 64


def test_lookup_key_is_case_insensitive():
    assert lookup_key(" MCP__GitHub__Create_Issue ") == "mcp__github__create_issue"


@given(st.text())
def test_normaliser_never_raises_and_always_fits(text):
    name = mcp_tool_name(text, text)
    assert len(name) <= MAX_NAME_LENGTH
    assert sanitize(name) == name
    assert len(shorten(text)) <= MAX_NAME_LENGTH
