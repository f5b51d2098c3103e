import json

import pytest

from toolscout.core.settings.layers import (
    KEYS,
    Settings,
    SettingsPaths,
    load_settings,
    save_user_setting,
)


@pytest.fixture
def paths(tmp_path):
    return SettingsPaths(
        user=tmp_path / "user.json",
        project=tmp_path / "proj" / ".toolscout" / "settings.json",
        project_local=tmp_path / "proj" / ".toolscout" / "settings.local.json",
        managed=tmp_path / "managed.json",
    )


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def test_defaults_when_nothing_is_configured(paths):
    s = load_settings(paths, env={})
    assert s["toolSearch.enabled"] == "auto"
    assert s.mode == "tst-auto"
    assert s["toolSearch.thresholdRatio"] == 0.10
    assert s["toolSearch.maxResults"] == 5
    assert s["recommendations.minScore"] == 0.15
    assert s.warnings == []


def test_closest_layer_wins_and_managed_cannot_be_overridden(paths):
    write(paths.user, {"toolSearch": {"maxResults": 7, "enabled": "true"}})
    write(paths.project, {"toolSearch": {"maxResults": 8}})
    write(paths.project_local, {"toolSearch.maxResults": 9})
    write(paths.managed, {"toolSearch": {"enabled": "false"}})
    s = load_settings(paths, env={"TOOLSCOUT_TOOL_SEARCH": "true"})
    assert s["toolSearch.maxResults"] == 9
    assert s["toolSearch.enabled"] == "false"
    assert s.sources["toolSearch.enabled"].startswith("managed:")


def test_permission_lists_merge_across_layers(paths):
    write(paths.user, {"permissions": {"allow": ["Bash"]}})
    write(paths.project, {"permissions": {"allow": ["mcp__github__*"], "deny": ["mcp__slack__*"]}})
    s = load_settings(paths, env={})
    assert s["permissions.allow"] == ["Bash", "mcp__github__*"]
    assert s["permissions.deny"] == ["mcp__slack__*"]


BAD_VALUES = [
    ("toolSearch.enabled", "sometimes"),
    ("toolSearch.thresholdRatio", 0),
    ("toolSearch.thresholdRatio", 1.5),
    ("toolSearch.thresholdRatio", "x"),
    ("toolSearch.maxResults", 0),
    ("toolSearch.maxResults", 51),
    ("toolSearch.maxResults", 2.5),
    ("toolSearch.maxResults", True),
    ("toolSearch.alwaysLoad", "github"),
    ("toolSearch.alwaysLoad", 3),
    ("permissions.allow", "Bash"),  # a lone string never grants
    ("permissions.additionalDirectories", "/"),
    ("toolSearch.weights.keyword", -0.1),
    ("recommendations.enabled", "maybe"),
    ("recommendations.minScore", 2),
    ("session.strategy", "magic"),
    ("provider.name", "gemini"),
    ("mcp.timeout", 0),
    ("provider.maxTools", 1),  # issue 21 item 2: at least ToolSearch and ExecuteTool must fit
    ("provider.maxTools", "many"),
    ("provider.maxTools", 1_000_000),
    ("permissions.deny", {"a": 1}),
]


@pytest.mark.parametrize(("key", "value"), BAD_VALUES)
def test_every_invalid_value_falls_back_with_a_warning(paths, key, value):
    write(paths.project, {key: value})
    s = load_settings(paths, env={})
    default = next(k.default for k in KEYS if k.name == key)
    assert s[key] == default
    assert len(s.warnings) == 1
    w = s.warnings[0]
    assert w.key == key and w.value == value and str(paths.project) in w.source
    assert key in str(w)


def test_a_list_keeps_its_valid_entries_and_names_each_bad_one(paths):
    write(paths.user, {"permissions": {"deny": ["mcp__a__x"], "allow": ["Read"]}})
    write(
        paths.project,
        {
            "permissions": {"deny": [5, "mcp__b__y", "Bash(rm", "  "], "ask": "WebFetch"},
            "toolSearch": {"alwaysLoad": [1, 2]},
        },
    )
    s = load_settings(paths, env={})
    assert s["permissions.deny"] == ["mcp__a__x", "mcp__b__y", "Bash(rm"]  # a malformed deny is kept
    assert s["permissions.ask"] == ["WebFetch"]  # one string: a one-entry list
    assert s["toolSearch.alwaysLoad"] == []
    assert {w.key: w.value for w in s.warnings} == {
        "permissions.deny[0]": 5,
        "permissions.deny[2]": "Bash(rm",
        "permissions.deny[3]": "  ",
        "permissions.ask": "WebFetch",
        "toolSearch.alwaysLoad[0]": 1,
        "toolSearch.alwaysLoad[1]": 2,
    }
    assert all(str(paths.project) in str(w) for w in s.warnings)


def test_a_malformed_allow_rule_is_dropped_and_a_managed_deny_keeps_the_rest(paths):
    write(paths.user, {"permissions": {"allow": ["github(", "mcp__time__*", None]}})
    write(paths.managed, {"permissions": {"deny": ["mcp__time__get_time", False]}})
    s = load_settings(paths, env={})
    assert s["permissions.allow"] == ["mcp__time__*"]
    assert s["permissions.deny"] == ["mcp__time__get_time"]
    shown = [str(w) for w in s.warnings]
    assert any(
        'permissions.allow[0] = "github(": unbalanced parentheses' in w and "grants nothing" in w for w in shown
    ), shown
    assert any(w.startswith("managed:") and "permissions.deny[1] = false" in w for w in shown), shown


def test_saving_a_partly_valid_list_refuses_it_whole(paths):
    s = load_settings(paths, env={})
    with pytest.raises(ValueError, match=r"\[1\]"):
        save_user_setting(s, "permissions.deny", ["Bash", 5])
    assert not paths.user.exists()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "\xff\xfe"])
def test_malformed_files_warn_and_use_defaults(paths, text):
    write(paths.user, text)
    s = load_settings(paths, env={})
    assert s["toolSearch.maxResults"] == 5
    assert len(s.warnings) == 1 and s.warnings[0].source == str(paths.user)


def test_unknown_key_warns(paths):
    write(paths.project, {"toolSearch": {"maxResult": 3}})
    s = load_settings(paths, env={})
    assert s.warnings[0].reason == "unknown key"


def test_a_known_group_that_is_not_an_object_and_a_word_for_a_number_say_what_was_expected(paths):
    """Found by a new-user try: these read "unknown setting 'permissions'" (a key that exists) and
    "could not convert string to float: 'lots'" (Python's words)."""
    write(paths.project, {"permissions": None, "toolSearch": [], "recommendations": {"max": "lots"}})
    s = load_settings(paths, env={})
    shown = {w.key: str(w) for w in s.warnings}
    assert "expected an object of settings (permissions.allow, " in shown["permissions"]
    assert "toolSearch.enabled" in shown["toolSearch"] and "unknown" not in shown["toolSearch"]
    assert shown["recommendations.max"].endswith('recommendations.max = "lots": expected a number; using the default')
    assert s["permissions.allow"] == [] and s["recommendations.max"] == 3


@pytest.mark.parametrize(
    ("env", "enabled", "ratio"),
    [
        ("true", "true", 0.10),
        ("false", "false", 0.10),
        ("auto", "auto", 0.10),
        ("auto:25", "auto", 0.25),
        ("auto:0", "auto", 1e-9),
        ("auto:100", "auto", 1.0),
    ],
)
def test_env_mode_override(paths, env, enabled, ratio):
    s = load_settings(paths, env={"TOOLSCOUT_TOOL_SEARCH": env})
    assert s["toolSearch.enabled"] == enabled
    assert s["toolSearch.thresholdRatio"] == pytest.approx(ratio)


@pytest.mark.parametrize("env", ["auto:150", "auto:x", "yes please"])
def test_bad_env_mode_warns(paths, env):
    s = load_settings(paths, env={"TOOLSCOUT_TOOL_SEARCH": env})
    assert s["toolSearch.enabled"] == "auto"
    assert s.warnings and s.warnings[0].source == "env:TOOLSCOUT_TOOL_SEARCH"


def test_save_user_setting_persists_and_validates(paths):
    s = load_settings(paths, env={})
    s2 = save_user_setting(s, "recommendations.enabled", False)
    assert s2["recommendations.enabled"] is False
    assert json.loads(paths.user.read_text())["recommendations"]["enabled"] is False
    assert load_settings(paths, env={})["recommendations.enabled"] is False
    with pytest.raises(ValueError):
        save_user_setting(s2, "toolSearch.maxResults", 99)
    with pytest.raises(ValueError):
        save_user_setting(s2, "no.such.key", 1)


def test_with_overrides_is_validated():
    s = Settings().with_overrides({"session.strategy": "stub", "toolSearch.maxResults": "many"})
    assert s["session.strategy"] == "stub"
    assert s["toolSearch.maxResults"] == 5
    assert len(s.warnings) == 1


def test_a_malformed_user_file_is_left_as_is_and_the_change_holds_for_the_session(tmp_path) -> None:
    from toolscout.core.settings.layers import UnsavedSettingError, change_user_setting

    user = tmp_path / "settings.json"
    for broken in ('{"model": {"name": "my-model"}, "custom": 1,', "[1, 2]"):
        user.write_text(broken, encoding="utf-8")
        settings = load_settings(SettingsPaths(user, None, None, None), env={})
        with pytest.raises(UnsavedSettingError) as caught:
            change_user_setting(settings, "recommendations.enabled", False)
        assert user.read_text(encoding="utf-8") == broken
        assert str(user) in str(caught.value) and "this session only" in str(caught.value)
        assert caught.value.settings["recommendations.enabled"] is False


def test_choices_and_defaults_are_declared_once_in_the_schema() -> None:
    """Issue 13 item 3: a setting's set of values and its default live in ``KEYS`` only; other
    modules ask :func:`choices` / :func:`default` (the strategies were once listed in six places)."""
    import ast
    from pathlib import Path

    from toolscout.core.settings.layers import KEYS, default

    assert default("session.strategy") == "execute-proxy"
    listed = default("toolSearch.alwaysLoad")
    listed.append("x")
    assert default("toolSearch.alwaysLoad") == []  # a fresh copy each time
    src = Path(__file__).resolve().parents[3] / "src" / "toolscout"
    restated = []
    for path in src.rglob("*.py"):
        if path.name == "layers.py" and path.parent.name == "settings":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 2:
                values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                for key in KEYS:
                    if (
                        key.choices
                        and key.default in values
                        and len(values) == len(node.elts)
                        and values <= set(key.choices)
                    ):
                        restated.append(f"{path.relative_to(src)}:{node.lineno} lists {key.name}'s values")
            if isinstance(node, ast.Constant) and node.value == "execute-proxy":
                restated.append(f"{path.relative_to(src)}:{node.lineno} restates session.strategy's default")
    assert restated == []
