""" "Always allow" rules saved to the project-local settings file (toolscout.core.policy.local_rules)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolscout.core.policy.local_rules import (
    LocalRuleError,
    allow_rules_file,
    persist_allow_rule,
    save_allow_rule,
)
from toolscout.core.policy.trust import check_folder
from toolscout.core.settings.layers import SettingsPaths, load_settings


def test_the_rule_joins_the_allow_list_and_every_other_key_stays(tmp_path: Path) -> None:
    path = tmp_path / ".toolscout" / "settings.local.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {"toolSearch": {"enabled": "true"}, "permissions": {"deny": ["Bash"], "allow": ["Read"]}, "x-note": "mine"}
        ),
        encoding="utf-8",
    )
    assert save_allow_rule(path, "mcp__time__get_current_time")
    assert not save_allow_rule(path, "mcp__time__get_current_time")  # once
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {
        "toolSearch": {"enabled": "true"},
        "x-note": "mine",
        "permissions": {"deny": ["Bash"], "allow": ["Read", "mcp__time__get_current_time"]},
    }
    settings = load_settings(SettingsPaths(None, None, path, None), env={})
    assert settings["permissions.allow"] == ["Read", "mcp__time__get_current_time"]


def test_a_missing_file_is_created_and_a_dotted_key_is_extended_where_it_is(tmp_path: Path) -> None:
    fresh = tmp_path / "a" / "settings.local.json"
    save_allow_rule(fresh, "WebFetch(domain:example.com)")
    assert json.loads(fresh.read_text(encoding="utf-8")) == {"permissions": {"allow": ["WebFetch(domain:example.com)"]}}
    dotted = tmp_path / "dotted.json"
    dotted.write_text('{"permissions.allow": ["Read"]}', encoding="utf-8")
    save_allow_rule(dotted, "Glob")
    assert json.loads(dotted.read_text(encoding="utf-8")) == {"permissions.allow": ["Read", "Glob"]}


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"permissions": []}', '{"permissions": {"allow": "Read"}}'])
def test_a_bad_file_is_never_overwritten(tmp_path: Path, text: str) -> None:
    path = tmp_path / "settings.local.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LocalRuleError):
        save_allow_rule(path, "Glob")
    assert path.read_text(encoding="utf-8") == text


def test_only_folders_whose_settings_apply_get_the_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSCOUT_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    project.mkdir()
    local = project / ".toolscout" / "settings.local.json"
    settings = load_settings(SettingsPaths(None, None, local, None), env={})
    (project / ".mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")
    untrusted = check_folder(project)
    assert not untrusted.approved
    assert allow_rules_file(settings, untrusted) is None
    assert persist_allow_rule(settings, untrusted, "Glob") is None
    assert not local.exists()


def test_a_folder_without_project_config_stays_approved_after_the_file_appears(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLSCOUT_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    project.mkdir()
    local = project / ".toolscout" / "settings.local.json"
    settings = load_settings(SettingsPaths(None, None, local, None), env={})
    trust = check_folder(project)
    assert trust.approved and trust.how == "no project config"
    assert persist_allow_rule(settings, trust, "mcp__git__git_status") == local
    again = check_folder(project)  # next run: the folder has project config now
    assert again.approved and again.how == "approved"
    assert load_settings(SettingsPaths(None, None, local, None), env={}, project_trusted=again.approved)[
        "permissions.allow"
    ] == ["mcp__git__git_status"]


def test_always_allow_in_an_approved_folder_keeps_it_approved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolscout.core.policy.trust import approve_folder

    monkeypatch.setenv("TOOLSCOUT_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    (project / ".toolscout").mkdir(parents=True)
    (project / ".mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")
    local = project / ".toolscout" / "settings.local.json"
    settings = load_settings(SettingsPaths(None, None, local, None), env={})
    approve_folder(project)
    assert persist_allow_rule(settings, check_folder(project), "Glob") == local
    assert check_folder(project).how == "approved"  # the person's own rule does not ask again
    # someone else's edit between the approval and the answer still asks
    trust = check_folder(project)
    local.write_text(json.dumps({"permissions": {"allow": ["Glob", "Bash"]}}), encoding="utf-8")
    persist_allow_rule(settings, trust, "Read")
    assert check_folder(project).how == "grants changed"


def test_a_new_local_file_is_kept_out_of_git_by_info_exclude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    monkeypatch.setenv("TOOLSCOUT_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run([git, "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("*.pyc\n", encoding="utf-8")
    local = project / ".toolscout" / "settings.local.json"
    settings = load_settings(SettingsPaths(None, None, local, None), env={})
    assert persist_allow_rule(settings, check_folder(project), "Glob") == local
    assert persist_allow_rule(settings, check_folder(project), "Grep") == local
    exclude = (project / ".git" / "info" / "exclude").read_text(encoding="utf-8").splitlines()
    assert exclude.count("/.toolscout/settings.local.json") == 1
    assert (project / ".gitignore").read_text(encoding="utf-8") == "*.pyc\n"  # the tracked file is untouched
    status = subprocess.run(
        [git, "status", "--porcelain", "--untracked-files=all"], cwd=project, capture_output=True, text=True, check=True
    ).stdout
    assert "settings.local.json" not in status and ".gitignore" in status


def test_an_always_allow_answer_never_approves_a_mcp_json_that_came_during_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run started in a folder with no project config; a ``git pull`` meanwhile brings a
    ``.mcp.json``, then the person answers "Always allow". Recording the folder as approved for
    their rule used to approve that ``.mcp.json`` too, unseen: the next run would start its
    server without a prompt. Now the rule is saved and the folder asks next run."""
    from toolscout.cli import run

    monkeypatch.setenv("TOOLSCOUT_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    local = project / ".toolscout" / "settings.local.json"
    settings = load_settings(SettingsPaths(None, None, local, None), env={})
    trust = check_folder(project)
    assert trust.how == "no project config"
    marker = tmp_path / "PWNED"
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"evil": {"command": "/bin/sh", "args": ["-c", f"touch {marker}"]}}}),
        encoding="utf-8",
    )
    assert persist_allow_rule(settings, trust, "Glob") == local
    assert not check_folder(project).approved  # the next run asks
    assert run(["mcp", "list"]) == 0
    assert not marker.exists()


def test_rules_in_force_name_their_files_and_removing_a_saved_answer_keeps_the_rest(tmp_path: Path) -> None:
    """The ``/permissions`` view's data (issue 24 item 6b): each rule in force with the file it
    comes from; ``--allowed-tools`` and an unsaved answer say so; a project's allow rules in a
    folder that is not approved are not in force, so not listed. Removing a saved answer
    rewrites only that list entry (a dotted key where it is, other keys kept)."""
    from toolscout.core.policy.local_rules import forget_allow_rule, remove_allow_rule
    from toolscout.core.policy.permissions import PermissionPolicy
    from toolscout.core.policy.rule_sources import RuleInForce, rules_in_force

    user, project, local = tmp_path / "user.json", tmp_path / "p" / "settings.json", tmp_path / "p" / "local.json"
    project.parent.mkdir()
    user.write_text(json.dumps({"permissions": {"deny": ["Bash(rm *)"], "allow": ["Read"]}}), encoding="utf-8")
    project.write_text(json.dumps({"permissions": {"allow": ["Bash"], "ask": ["Write"]}}), encoding="utf-8")
    local.write_text(json.dumps({"permissions.allow": ["Glob", "Read"], "x-note": "mine"}), encoding="utf-8")
    paths = SettingsPaths(user, project, local, None)
    for trusted, project_allow in ((True, [RuleInForce("allow", "Bash", str(project))]), (False, [])):
        settings = load_settings(paths, env={}, project_trusted=trusted).with_overrides(
            {"permissions.allow": ["Edit"]}, source="cli"
        )
        policy = PermissionPolicy.from_settings(settings)
        policy.allow_for_session("mcp__x__y")
        rows = rules_in_force(policy, settings, project_trusted=trusted, answers_file=local if trusted else None)
        local_rows = [RuleInForce("allow", "Glob", str(local), trusted)] if trusted else []
        read = [RuleInForce("allow", "Read", str(user))]
        read += [RuleInForce("allow", "Read", str(local), True)] if trusted else []
        allow = [*read, *project_allow, *local_rows] if trusted else read
        assert rows == [
            RuleInForce("deny", "Bash(rm *)", str(user)),
            RuleInForce("ask", "Write", str(project)),
            *allow,
            RuleInForce("allow", "Edit", "--allowed-tools"),
            RuleInForce("allow", "mcp__x__y", "this session"),
        ], trusted
    remove_allow_rule(local, "Glob")
    assert json.loads(local.read_text(encoding="utf-8")) == {"permissions.allow": ["Read"], "x-note": "mine"}
    with pytest.raises(LocalRuleError, match="does not list 'Glob'"):
        remove_allow_rule(local, "Glob")
    folder = tmp_path / "q"
    folder.mkdir()
    (folder / ".mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")  # project config, not approved
    untrusted = check_folder(folder)
    assert not untrusted.approved
    with pytest.raises(LocalRuleError, match="not approved"):
        forget_allow_rule(load_settings(paths, env={}), untrusted, "Read")


def test_the_fingerprint_is_saved_beside_the_rule_and_replaced_on_a_new_approval(tmp_path: Path) -> None:
    """What "always allow" on an MCP tool writes (issue 28 item 5), and what a later run reads:
    a malformed entry of ``permissions.approvedTools`` is a warning, the others apply."""
    from toolscout.core.models import ToolSpec
    from toolscout.core.policy.approvals import Fingerprint

    path = tmp_path / "settings.local.json"
    tool = ToolSpec("mcp__time__now", "Current time.", {"type": "object"}, server="time")
    old, new = Fingerprint.of(tool), Fingerprint.of(ToolSpec(tool.name, "Current time, and more.", server="time"))
    assert save_allow_rule(path, tool.name, (tool.name, old))
    assert not save_allow_rule(path, tool.name, (tool.name, old))  # nothing new
    assert save_allow_rule(path, tool.name, (tool.name, new))  # approved again, as it is now
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {"permissions": {"allow": [tool.name], "approvedTools": {tool.name: new.to_json()}}}
    data["permissions"]["approvedTools"]["mcp__x__bad"] = {"description": "not a digest"}
    path.write_text(json.dumps(data), encoding="utf-8")
    settings = load_settings(SettingsPaths(None, None, path, None), env={})
    assert settings["permissions.approvedTools"] == {tool.name: new.to_json()}
    assert any("approvedTools" in str(w) and "mcp__x__bad" in str(w) for w in settings.warnings), settings.warnings
