"""MCP configuration: formats, ``${VAR}`` expansion, invalid entries, precedence, the default."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mcp_helpers import make_settings

from toolscout.core.factory import create_engine
from toolscout.core.mcp.config import (
    ServerConfig,
    default_servers,
    expand_vars,
    load_mcp_config,
    parse_entry,
    read_config_file,
    user_config_path,
)
from toolscout.core.models import ServerState


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_expand_vars_plain_default_and_missing():
    env = {"A": "1", "EMPTY": ""}
    assert expand_vars("x${A}y", env) == "x1y"
    assert expand_vars("${B:-fallback}", env) == "fallback"
    assert expand_vars("${EMPTY:-d}", env) == "d"
    assert expand_vars("${A:-d}", env) == "1"
    try:
        expand_vars("${NOPE}", env)
    except ValueError as exc:
        assert "NOPE" in str(exc)
    else:
        raise AssertionError("missing variable must be reported")


def test_stdio_and_http_entries_expand_everywhere():
    env = {"TOKEN": "t0k", "ROOT": "/srv"}
    stdio = parse_entry(
        "gh",
        {
            "command": "${ROOT}/bin/gh",
            "args": ["--dir", "${ROOT}", 3],
            "env": {"GITHUB_TOKEN": "${TOKEN}"},
            "cwd": "${ROOT}",
        },
        "f",
        env,
    )
    assert stdio.error is None and stdio.transport == "stdio"
    assert (stdio.command, stdio.args, stdio.env, stdio.cwd) == (
        "/srv/bin/gh",
        ("--dir", "/srv", "3"),
        {"GITHUB_TOKEN": "t0k"},
        "/srv",
    )
    http = parse_entry(
        "api", {"type": "http", "url": "https://h/${TOKEN}", "headers": {"Authorization": "Bearer ${TOKEN}"}}, "f", env
    )
    assert (http.transport, http.url, http.headers) == ("http", "https://h/t0k", {"Authorization": "Bearer t0k"})
    assert parse_entry("s", {"type": "sse", "url": "http://x"}, "f", env).transport == "sse"
    assert parse_entry("s", {"type": "stdio", "command": "x"}, "f", env).transport == "stdio"


def test_entries_keep_their_text_as_written_for_the_trust_prompt():
    """What runs is expanded; what :meth:`ServerConfig.launch_details` shows (the trust prompt,
    ``mcp list`` for a server not approved) is the file's text, and :meth:`~ServerConfig.reads_env`
    names the variables read (sorted, once each, defaults too), never their values. An entry
    whose variable is not set still shows its text; a server built in code shows its fields."""
    env = {"TOKEN": "t0k", "ROOT": "/srv"}
    stdio = parse_entry(
        "gh",
        {
            "command": "${ROOT}/bin/gh",
            "args": ["--token", "${TOKEN}", 3],
            "env": {"GITHUB_TOKEN": "${TOKEN}", "MODE": "${MODE:-ro}"},
            "cwd": "${ROOT}",
        },
        "f",
        env,
    )
    assert (stdio.args, stdio.env["MODE"]) == (("--token", "t0k", "3"), "ro")
    assert stdio.launch_details() == [
        ("would run", "'${ROOT}/bin/gh' --token '${TOKEN}' 3"),
        ("cwd", "${ROOT}"),
        ("env", "GITHUB_TOKEN=${TOKEN}"),
        ("env", "MODE=${MODE:-ro}"),
    ]
    assert stdio.reads_env() == "reads your environment: MODE, ROOT, TOKEN"
    assert stdio.command_line() == "/srv/bin/gh --token t0k 3"  # what runs
    http = parse_entry("api", {"type": "http", "url": "https://h/${TOKEN}", "headers": {"A": "x\n${TOKEN}"}}, "f", env)
    assert http.launch_details() == [("would connect to", "https://h/${TOKEN}"), ("header", "A: x\\n${TOKEN}")]
    assert http.reads_env() == "reads your environment: TOKEN"
    unset = parse_entry("u", {"type": "sse", "url": "https://h/", "headers": {"A": "${UNSET_FOR_TEST}"}}, "f", env)
    assert unset.error and "UNSET_FOR_TEST" in unset.error
    assert unset.launch_details() == [("would connect to", "https://h/"), ("header", "A: ${UNSET_FOR_TEST}")]
    assert unset.reads_env() == "reads your environment: UNSET_FOR_TEST"
    plain = parse_entry("p", {"command": "true", "env": {"${NOT_EXPANDED}": "1"}}, "f", env)
    assert plain.reads_env() == ""  # names are never expanded, so never read
    built = ServerConfig("b", command="srv", args=("${X}",), env={"K": "v"})
    assert built.launch_details() == [("would run", "srv '${X}'"), ("env", "K=v")] and built.reads_env() == ""


def test_invalid_entries_carry_a_reason_per_server():
    env: dict[str, str] = {}
    cases = {
        "weird": ({"type": "carrier-pigeon", "command": "x"}, "unknown type"),
        "nocmd": ({"args": ["x"]}, "no 'command'"),
        "nourl": ({"type": "http"}, "no 'url'"),
        "badargs": ({"command": "x", "args": "not a list"}, "'args'"),
        "notobj": ("just a string", "JSON object"),
        "novar": ({"command": "${UNSET_FOR_TEST}"}, "UNSET_FOR_TEST"),
    }
    for name, (raw, reason) in cases.items():
        cfg = parse_entry(name, raw, "cfg.json", env)
        assert cfg.error and reason in cfg.error and "cfg.json" in cfg.error, (name, cfg.error)


def test_bad_json_file_is_a_warning_and_other_files_still_load(tmp_path):
    bad = write(tmp_path / "bad.json", "{not json")
    good = write(tmp_path / "good.json", {"mcpServers": {"a": {"command": "x"}, "b": {"type": "nope"}}})
    config = load_mcp_config(tmp_path / "project", [bad, good], env={}, discover=False)
    assert any("malformed JSON" in w and "bad.json" in w for w in config.warnings)
    assert config.servers["a"].error is None
    assert "unknown type" in (config.servers["b"].error or "")
    missing = load_mcp_config(tmp_path, [tmp_path / "absent.json"], env={}, discover=False)
    assert any("not found" in w for w in missing.warnings)


def test_precedence_user_then_project_then_explicit(tmp_path):
    env = {"TOOLSCOUT_CONFIG_DIR": str(tmp_path / "user")}
    assert user_config_path(env) == tmp_path / "user" / "mcp.json"
    write(tmp_path / "user" / "mcp.json", {"mcpServers": {"a": {"command": "user-a"}, "u": {"command": "u"}}})
    project = tmp_path / "proj"
    write(project / ".mcp.json", {"mcpServers": {"a": {"command": "project-a"}, "p": {"command": "p"}}})
    desktop = write(tmp_path / "claude_desktop_config.json", {"mcpServers": {"p": {"command": "desktop-p"}}})
    config = load_mcp_config(project, [desktop], env=env)
    assert {n: c.command for n, c in config.servers.items()} == {"u": "u", "a": "project-a", "p": "desktop-p"}
    assert len(config.files) == 3


def test_empty_and_serverless_files(tmp_path):
    assert read_config_file(write(tmp_path / "e.json", ""), {}).servers == {}
    other = read_config_file(write(tmp_path / "o.json", {"something": 1}), {})
    assert other.servers == {} and "mcpServers" in other.warnings[0]


def test_default_servers_use_this_python_and_the_repository(tmp_path):
    plain = {c.name: c for c in default_servers(tmp_path)}
    assert set(plain) == {"time", "git", "fetch"}
    assert all(c.command == sys.executable and c.source == "default" for c in plain.values())
    assert plain["time"].args == ("-m", "mcp_server_time")
    assert "--repository" not in plain["git"].args
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    git = {c.name: c for c in default_servers(repo)}["git"]
    assert git.args[-2:] == ("--repository", str(repo.resolve()))


def test_factory_uses_default_only_without_any_config(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSCOUT_CONFIG_DIR", str(tmp_path / "cfg"))
    engine = create_engine(make_settings(), project_dir=tmp_path)
    assert {s.name for s in engine.server_statuses()} == {"time", "git", "fetch"}
    assert create_engine(make_settings(), project_dir=tmp_path, default_servers=False).server_statuses() == []
    assert create_engine(make_settings(), project_dir=tmp_path, connect_servers=False).server_statuses() == []
    write(tmp_path / ".mcp.json", {"mcpServers": {"mine": {"command": "x"}, "broken": {"type": "?"}}})
    engine = create_engine(make_settings(), project_dir=tmp_path)
    statuses = {s.name: s for s in engine.server_statuses()}
    assert set(statuses) == {"mine", "broken"}
    assert statuses["broken"].state is ServerState.FAILED and "unknown type" in (statuses["broken"].error or "")
    assert any("broken" in w for w in engine.warnings)
