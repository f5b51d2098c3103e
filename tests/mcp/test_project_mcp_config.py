"""An ``--mcp-config`` file inside the project folder is the project's config: tried as an attacker would.

The README's Claude Code setup keeps the servers in the project's ``.toolscout/servers.json`` and
puts ``toolscout serve --mcp-config .toolscout/servers.json`` in ``.mcp.json``. Claude Code
approves that line, not the file it names, and toolscout never checked files named with
``--mcp-config``: a ``git pull`` that edited the file ran its new commands with no prompt from
anyone. Here the cloned repo's ``.toolscout/servers.json`` has a server whose command writes a
marker file; each test asserts on the marker (what ran), not only on what toolscout says.
(``serve`` is tried in tests/serve/test_serve_trust.py, the app in
tests/tui/test_trust_project_config.py.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from toolscout.cli import run
from toolscout.core.policy.trust import (
    approve_folder,
    check_folder,
    mcp_fingerprint,
    trust_store_path,
)

CONFIG = ".toolscout/servers.json"


def pwn_command(marker: Path) -> dict:
    return {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'a').write('ran')"]}


def write_servers(path: Path, servers: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A cloned repo with only ``.toolscout/servers.json`` (no ``.mcp.json``, no settings: before,
    a folder with "no project config"), whose server writes ``tmp_path/MARKER``; the current
    directory."""
    root = tmp_path / "proj"
    write_servers(root / CONFIG, {"pwn": pwn_command(tmp_path / "MARKER")})
    monkeypatch.chdir(root)
    return root


def approve_with_config(root: Path, *configs: str) -> None:
    """What the app's trust prompt does when the person approves the folder it showed."""
    shown = check_folder(root, config_files=configs or [CONFIG])
    approve_folder(root, mcp_hash=shown.mcp_hash, grants_hash=shown.grants_hash, configs=shown.configs)


def test_the_testers_repro_runs_nothing_before_approval(project, capsys):
    """``mcp list --mcp-config .toolscout/servers.json`` in a fresh folder said ``connected``
    (and wrote the marker); ``call`` and ``context`` started it too. Now the server is
    ``not_approved``, shown with what it would run and how to approve the folder."""
    marker = project.parent / "MARKER"
    assert run(["mcp", "list", "--json", "--mcp-config", CONFIG]) == 0
    out, err = capsys.readouterr()
    row = json.loads(out)["servers"][0]
    assert row["name"] == "pwn" and row["state"] == "not_approved", row
    assert f"this folder's --mcp-config file {CONFIG} would run" in row["error"]
    assert f"run `toolscout --mcp-config {CONFIG}` in it once" in row["error"] and "--trust-project" in row["error"]
    assert "not trusted" in err and f"Its project servers ({CONFIG}) are not started" in err
    assert run(["mcp", "list", "--mcp-config", CONFIG]) == 0  # not_approved does not count as failed
    assert "not_approved" in capsys.readouterr().out
    assert run(["call", "mcp__pwn__anything", "--mcp-config", CONFIG]) == 1
    assert "is not approved" in capsys.readouterr().err
    assert run(["context", "--mcp-config", CONFIG]) == 0
    assert not marker.exists()
    assert not trust_store_path().exists()  # nothing recorded on the person's behalf


@pytest.mark.parametrize("how", ["dot-dot", "absolute", "symlink-outside-to-inside", "symlinked-dir-inside"])
def test_no_spelling_of_the_path_takes_the_file_out_of_the_project(project, capsys, how):
    """``..``, an absolute path, a link outside the folder to the file and a folder inside the
    project that links elsewhere (the repository chose where it points) all name project config;
    the notice names the spelling that approves it, and once approved it starts."""
    outside = project.parent
    if how == "dot-dot":
        given = f"../{project.name}/.toolscout/../{CONFIG}"
    elif how == "absolute":
        given = str(project / CONFIG)
    elif how == "symlink-outside-to-inside":
        (outside / "link.json").symlink_to(project / CONFIG)
        given = str(outside / "link.json")
    else:
        write_servers(outside / "elsewhere" / "servers.json", {"pwn": pwn_command(outside / "MARKER")})
        (project / "cfg").symlink_to(outside / "elsewhere", target_is_directory=True)
        given = "cfg/servers.json"
    assert run(["mcp", "list", "--json", "--mcp-config", given]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["servers"][0]["state"] == "not_approved"
    assert f"run `toolscout --mcp-config {given}` in this folder once" in err  # the path that approves it
    assert not (outside / "MARKER").exists()
    from toolscout.core.policy.trust_files import project_key

    assert project_key(project, given) is not None
    approve_with_config(project, given)  # approved as given, the same spelling then starts it
    assert run(["mcp", "list", "--mcp-config", given]) == 1  # it ran (not an MCP server: it failed)
    assert (outside / "MARKER").read_text() == "ran"


def test_after_approval_it_starts_and_an_edit_asks_again_naming_the_change(project, capsys):
    """Approved (as the prompt records it) the server starts. A later ``git pull`` changes its
    command and adds one: nothing runs, the notice names the file and each change, and the
    stored approval is untouched. Folder approvals made without the file are not disturbed."""
    marker = project.parent / "MARKER"
    approve_with_config(project)
    assert check_folder(project, config_files=[CONFIG]).how == "approved"
    assert run(["mcp", "list", "--mcp-config", CONFIG]) == 1  # it ran (not an MCP server: it failed)
    assert marker.read_text() == "ran"
    capsys.readouterr()

    store = trust_store_path().read_bytes()
    write_servers(
        project / CONFIG,
        {"pwn": pwn_command(project.parent / "MARKER2"), "extra": pwn_command(project.parent / "MARKER3")},
    )
    trust = check_folder(project, config_files=[CONFIG])
    assert trust.how == "changed" and trust.changed_files == (CONFIG,)
    assert run(["mcp", "list", "--mcp-config", CONFIG]) == 0
    out, err = capsys.readouterr()
    assert f"({CONFIG}: pwn changed: args changed; {CONFIG}: extra added)" in err
    assert f"the commands in {CONFIG} (--mcp-config) changed since you approved it" in err
    assert out.count("not_approved") == 2
    assert run(["call", "mcp__extra__x", "--mcp-config", CONFIG]) == 1
    assert not (project.parent / "MARKER2").exists() and not (project.parent / "MARKER3").exists()
    assert trust_store_path().read_bytes() == store


def test_a_folder_approved_from_mcp_json_alone_keeps_its_approval_and_asks_once_for_the_file(project, capsys):
    """A folder approved for its ``.mcp.json`` keeps its record (same hash: nothing re-asks
    people who do not use a project ``--mcp-config``). Using one for the first time asks once:
    the notice says the file was not part of the approval and lists its servers as added; once
    approved both files' servers start, and runs without the file still count as approved."""
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"own": pwn_command(project.parent / "OWN")}}))
    approve_folder(project)
    record = json.loads(trust_store_path().read_text())["folders"][str(project.resolve())]
    assert record["mcpHash"] == mcp_fingerprint(project) and "configs" not in record
    assert check_folder(project).how == "approved"

    assert run(["mcp", "list", "--mcp-config", CONFIG]) == 0
    err = capsys.readouterr().err
    assert "were not part of that approval" in err and f"({CONFIG}: pwn added)" in err
    assert not (project.parent / "MARKER").exists() and not (project.parent / "OWN").exists()

    approve_with_config(project)
    assert run(["mcp", "list", "--mcp-config", CONFIG]) == 1  # both ran (neither is an MCP server)
    assert (project.parent / "MARKER").exists() and (project.parent / "OWN").exists()
    assert check_folder(project).how == "approved"


def test_the_folders_own_mcp_json_named_with_mcp_config_is_not_approved_either(project, capsys):
    """``--mcp-config .mcp.json`` (the README's ``toolscout index`` example) read the folder's
    ``.mcp.json`` a second time as the person's own file, which won over the project copy: its
    servers started in a folder nobody approved. Approving ``.mcp.json`` covers it."""
    marker = project.parent / "OWN"
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"own": pwn_command(marker)}}))
    assert run(["mcp", "list", "--json", "--mcp-config", ".mcp.json"]) == 0
    assert json.loads(capsys.readouterr().out)["servers"][0]["state"] == "not_approved"
    assert not marker.exists()
    approve_folder(project)
    assert check_folder(project, config_files=[".mcp.json"]).how == "approved"
    assert run(["mcp", "list", "--mcp-config", ".mcp.json"]) == 1
    assert marker.exists()


def test_trust_project_approves_the_file_for_one_run(project, capsys):
    assert run(["mcp", "list", "--mcp-config", CONFIG, "--trust-project"]) == 1
    assert (project.parent / "MARKER").exists()
    assert not check_folder(project, config_files=[CONFIG]).approved


def test_a_file_outside_the_project_still_starts_without_a_prompt(tmp_path, monkeypatch, capsys):
    """The person's own file (here beside the folder, reached with ``..``) is theirs: it starts,
    with no notice, as before; the folder itself has no project config."""
    root = tmp_path / "proj"
    root.mkdir()
    own = tmp_path / "own-servers.json"
    write_servers(own, {"mine": pwn_command(tmp_path / "MINE")})
    monkeypatch.chdir(root)
    assert run(["mcp", "list", "--mcp-config", "../own-servers.json"]) == 1  # ran (not an MCP server)
    assert (tmp_path / "MINE").read_text() == "ran"
    assert "not trusted" not in capsys.readouterr().err
    assert check_folder(root, config_files=["../own-servers.json"]).how == "no project config"


def test_a_folder_holding_the_home_directory_is_no_project(tmp_path, monkeypatch):
    """Some clients start their servers in ``/`` or ``~``: ``toolscout serve --mcp-config
    ~/servers.json`` there must keep working, so a folder that is or contains the home
    directory makes no file project config; a project folder under it does."""
    from toolscout.core.policy import trust_files
    from toolscout.core.policy.trust_files import project_key

    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    monkeypatch.setattr(trust_files, "account_home", lambda: str(home))
    mine = home / "servers.json"
    assert project_key(home, mine) is None and project_key(tmp_path, mine) is None
    assert project_key("/", mine) is None
    assert project_key(home / "proj", home / "proj" / CONFIG) == CONFIG
    assert project_key(home / "proj", mine) is None
    assert project_key(home, home / ".mcp.json") == ".mcp.json"  # the folder's own: gated even here


def test_home_in_the_environment_does_not_make_a_project_file_the_persons_own(project, monkeypatch, capsys):
    """Found by a review: the ``.mcp.json`` line that starts ``toolscout serve`` sets its
    environment too, and ``HOME=.`` made every --mcp-config file "the person's own", so the
    marker server ran unapproved (``HOME=.toolscout`` did the same for ``--mcp-config
    .mcp.json``). The home directory now comes from the account."""
    marker = project.parent / "MARKER"
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"pwn2": pwn_command(marker)}}))
    for home, config in ((".", CONFIG), (".toolscout", ".mcp.json")):
        monkeypatch.setenv("HOME", str(project / home))
        assert run(["mcp", "list", "--json", "--mcp-config", config]) == 0
        rows = json.loads(capsys.readouterr().out)["servers"]
        assert {r["state"] for r in rows} == {"not_approved"}, rows
    assert not marker.exists()


def test_a_folder_or_missing_file_given_as_mcp_config_does_not_make_the_folder_untrusted(tmp_path, monkeypatch, capsys):
    """Found by a review: ``--mcp-config .toolscout`` (a folder) in a folder with no config said
    the folder was not trusted and named it as its project servers."""
    (tmp_path / "repo" / ".toolscout").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    for given in (".toolscout", "missing.json"):
        run(["mcp", "list", "--mcp-config", given])
        err = capsys.readouterr().err
        assert "not trusted" not in err and given in err, err  # its own error names it


def test_inside_is_also_decided_by_file_identity(project, monkeypatch):
    """On a case-insensitive disk (macOS) ``../REPO/.toolscout/servers.json`` reaches the folder
    ``repo`` under a spelling no path comparison matches (found by a review); the folders on the
    way are then compared by device and inode. Simulated here: every path spelling misses."""
    from toolscout.core.policy import trust_files

    monkeypatch.setattr(trust_files, "_places", lambda path: ["/ELSEWHERE/servers.json"])
    assert trust_files.project_key(project, project / CONFIG) == CONFIG
    assert trust_files.project_key(project, project.parent / "outside.json") is None
