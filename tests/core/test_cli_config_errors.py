"""A bad MCP config is never silently replaced (issue 24 item 1), run as a newcomer runs the CLI
(the ``toolscout`` fixture of ``tests/conftest.py``: a subprocess, a fresh ``HOME``, an empty folder).

A ``--mcp-config`` file that cannot be used (malformed JSON, not ``{"mcpServers": {...}}``,
missing) stops every command that reads it with exit status 2, naming the file and the problem,
before anything starts: before, ``search``/``context``/``request`` given the option before the
command answered from the embedded default servers without a word. A broken *discovered* file
(the user ``mcp.json``) is a warning naming it, and the embedded default does not start in its place.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

#: What a person gets wrong in a config file → (file text, the problem the error names).
BAD_FILES = {
    "malformed": ('{"mcpServers": {"time": ', "malformed JSON"),
    "wrong-shape": ('["time", "git"]', "no 'mcpServers' object"),
    "servers-not-object": ('{"mcpServers": ["time"]}', "'mcpServers' must be an object"),
}

#: Every command that reads MCP configs, as a newcomer types it (the config option goes last).
COMMANDS = {
    "search": ["search", "current time"],
    "context": ["context"],
    "request": ["request"],
    "mcp list": ["mcp", "list"],
    "call": ["call", "mcp__time__get_current_time", "--params", '{"timezone": "UTC"}'],
    "index": ["index"],
    "serve": ["serve"],
    "headless": ["-p", "what time is it", "--provider", "offline"],
    "app": [],
}
#: Commands that also take the option after the command name.
AFTER = ("search", "context", "request", "mcp list", "call", "index", "serve")


def bad_config(toolscout, kind: str) -> Path:
    """A broken config file beside the project folder (the person's own file, not project config)."""
    path = toolscout.home / f"{kind}.json"
    path.write_text(BAD_FILES[kind][0], encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        *((c, "malformed") for c in sorted(COMMANDS)),
        *(("search", k) for k in sorted(BAD_FILES) if k != "malformed"),
        ("context", "wrong-shape"),
        ("request", "servers-not-object"),
    ],
)
def test_a_bad_mcp_config_before_the_command_stops_it_naming_the_file(toolscout, command: str, kind: str) -> None:
    path = bad_config(toolscout, kind)
    proc = toolscout("--mcp-config", str(path), *COMMANDS[command], timeout=60)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""  # no answer from the embedded default servers
    assert f"toolscout: --mcp-config {path}: {BAD_FILES[kind][1]}" in proc.stderr


@pytest.mark.parametrize("command", AFTER)
def test_a_bad_mcp_config_after_the_command_stops_it_too(toolscout, command: str) -> None:
    path = bad_config(toolscout, "malformed")
    proc = toolscout(*COMMANDS[command], "--mcp-config", str(path), timeout=60)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert f"toolscout: --mcp-config {path}: malformed JSON" in proc.stderr


@pytest.mark.parametrize("command", ["search", "context", "request"])
def test_a_missing_mcp_config_before_the_command_stops_it(toolscout, command: str) -> None:
    missing = toolscout.home / "no-such.json"
    proc = toolscout("--mcp-config", str(missing), *COMMANDS[command], timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"toolscout: --mcp-config {missing}: no such file or directory" in proc.stderr


def test_a_bad_file_inside_the_project_folder_stops_the_command_too(toolscout) -> None:
    """Project config waits for the folder's approval, but a file that cannot be read is said at once."""
    inside = toolscout.work / "servers.json"
    inside.write_text("{not json", encoding="utf-8")
    proc = toolscout("search", "current time", "--mcp-config", "servers.json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "toolscout: --mcp-config servers.json: malformed JSON" in proc.stderr


def test_options_before_and_after_the_command_both_count(toolscout) -> None:
    """``toolscout --mcp-config bad.json search --mcp-config good.json``: the bad one is not
    dropped in favour of the later one (argparse let a subcommand's list replace the top level's)."""
    bad = bad_config(toolscout, "malformed")
    good = toolscout.home / "good.json"
    good.write_text(json.dumps({"mcpServers": {}}), encoding="utf-8")
    proc = toolscout("--mcp-config", str(bad), "search", "current time", "--mcp-config", str(good))
    assert proc.returncode == 2 and f"--mcp-config {bad}: malformed JSON" in proc.stderr


def test_a_broken_user_mcp_json_is_named_and_not_replaced_by_the_default(toolscout) -> None:
    """The user file is there but broken: each command warns naming it and why, and does not
    quietly run the embedded default servers instead (exit 0: it was not given on the command line)."""
    toolscout.user_mcp_json.parent.mkdir(parents=True)
    toolscout.user_mcp_json.write_text('{"mcpServers": {"github": ', encoding="utf-8")
    proc = toolscout("search", "current time", "--json")
    assert proc.returncode == 0, proc.stderr
    assert not [r for r in json.loads(proc.stdout)["results"] if r["server"] == "time"]
    assert f"warning: mcp: MCP config {toolscout.user_mcp_json}: malformed JSON" in proc.stderr
    assert "the embedded default servers (time, git, fetch) do not start" in proc.stderr
    listed = toolscout("mcp", "list", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)["servers"]] == []
    assert any(
        str(toolscout.user_mcp_json) in w and "malformed JSON" in w for w in json.loads(listed.stdout)["warnings"]
    )
    context = toolscout("context", "--json")
    assert any(str(toolscout.user_mcp_json) in w for w in json.loads(context.stdout)["warnings"])
    indexed = toolscout("index", "--json")  # stdout is the summary alone; the warning on stderr
    assert f"warning: mcp: MCP config {toolscout.user_mcp_json}: malformed JSON" in indexed.stderr


def test_a_good_mcp_config_before_the_command_is_used(toolscout) -> None:
    """The option before the command reaches it (it was dropped: the defaults answered instead)."""
    config = toolscout.home / "none.json"
    config.write_text(json.dumps({"mcpServers": {}}), encoding="utf-8")
    proc = toolscout("--mcp-config", str(config), "mcp", "list", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["servers"] == []
    searched = toolscout("--mcp-config", str(config), "search", "current time", "--json")
    assert searched.returncode == 0
    assert not [r for r in json.loads(searched.stdout)["results"] if r["server"] == "time"]
