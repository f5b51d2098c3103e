"""Permission rules match server names exactly, by every spelling of a server, aliases included."""

from __future__ import annotations

import pytest

from toolscout.core.mcp.config import ServerConfig
from toolscout.core.mcp.server_names import assign_server_names
from toolscout.core.models import ToolSpec
from toolscout.core.names import normalise_server_name
from toolscout.core.policy.permissions import Decision, PermissionPolicy
from toolscout.core.rules.match import covers_server, matches


def mcp(server: str, tool: str, name: str | None = None) -> ToolSpec:
    return ToolSpec(name or f"mcp__{server}__{tool}", server=server, original_name=tool)


@pytest.mark.parametrize(
    ("configured", "canonical"),
    [
        ("time__evil", "time_evil"),
        ("time ", "time"),
        ("my.srv", "my_srv"),
        ("a\x1b[31mb", "a_31mb"),
        ("x\n__y", "x_y"),
        (" tab\tname ", "tab_name"),
        ("ok-name_1", "ok-name_1"),
        ("trail__", "trail"),
    ],
)
def test_server_names_are_normalised_to_names_without_double_underscores(configured, canonical):
    assert normalise_server_name(configured) == canonical
    assert "__" not in canonical


def test_a_glob_never_crosses_the_server_boundary():
    rule = "mcp__time__*"
    assert matches(mcp("time", "get_current_time"), rule)
    assert not matches(mcp("time_evil", "x"), rule)  # configured as "time__evil"
    assert not matches(mcp("time_2", "get_current_time"), rule)  # configured as "time "
    assert not matches(mcp("timex", "y"), rule)
    assert matches(mcp("time_evil", "x"), "mcp__time*")  # a server glob says so itself
    assert matches(mcp("time", "a__b"), "mcp__time__a__*")  # the tool part may hold "__"
    assert matches(ToolSpec("Bash"), "Bash") and not matches(ToolSpec("Bash"), "mcp__Bash")


def test_a_rule_names_a_server_by_its_configured_or_canonical_spelling():
    tool = mcp("my_srv", "drop")
    spellings = {"my.srv": "my_srv"}
    for rule in (
        "my.srv",
        "my_srv",
        "mcp__my_srv",
        "mcp__my.srv",
        "mcp__my_srv__drop",
        "mcp__my.srv__drop",
        "mcp__my_srv__*",
    ):
        assert matches(tool, rule, spellings), rule
    # the configured spelling wins: "time_2" names the server configured so, not the renamed "time "
    spellings = {"time": "time", "time ": "time_2", "time_2": "time_2_2"}
    assert matches(mcp("time_2", "x"), "time ", spellings)
    assert not matches(mcp("time_2", "x"), "time", spellings)
    assert matches(mcp("time_2_2", "x"), "time_2", spellings)


def test_an_alias_carries_the_decision_of_the_real_tool():
    alias = mcp("srv", "x", name="mcp__srv__x_2")  # second listing of the same tool
    policy = PermissionPolicy(allow=["srv"], deny=["mcp__srv__x"])
    assert policy.decide(alias).decision is Decision.DENY
    assert not policy.is_visible(alias)
    policy = PermissionPolicy(allow=["mcp__srv__x"])
    assert policy.decide(alias).decision is Decision.ALLOW
    assert policy.decide(mcp("srv", "y")).decision is Decision.ASK  # MCP tools still ask by default


def test_collision_names_follow_configured_order_and_exact_spellings():
    def names(*configured: str) -> list[str]:
        out, _ = assign_server_names(ServerConfig(n, command="x", source="f") for n in configured)
        return [c.name for c in out]

    assert names("time", "time ") == ["time", "time_2"]
    assert names("time ", "time") == ["time_2", "time"]  # the exact spelling keeps its name
    assert names("a.b", "a b") == ["a_b", "a_b_2"]
    assert names("a b", "a.b") == ["a_b", "a_b_2"]
    assert names("time ", "time", "time_2") == ["time_3", "time", "time_2"]
    out, warnings = assign_server_names(ServerConfig(n, command="x", source="f") for n in ("time__evil", "..."))
    assert out[0].name == "time_evil" and out[0].configured_name == "time__evil"
    assert out[1].error and "no ASCII letters or digits" in out[1].error
    assert not any("..." in w for w in warnings)  # reported once, as the server's error
    assert any("'time__evil'" in w and "'time_evil'" in w for w in warnings)
    again, more = assign_server_names(out)  # loading twice changes nothing
    assert [c.name for c in again] == [c.name for c in out] and not more


def test_a_whole_server_deny_covers_its_resources():
    for rule in ("srv", "mcp__srv", "mcp__srv__*", "mcp__*", "*", "my.srv"):
        assert covers_server(rule, "srv", {"my.srv": "srv"}), rule
    for rule in ("mcp__srv__one_tool", "other", "mcp__srv_2__*"):
        assert not covers_server(rule, "srv"), rule
