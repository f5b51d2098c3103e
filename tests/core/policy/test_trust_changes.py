"""What the trust prompt and notice say changed in ``.mcp.json`` since the approval
(:mod:`toolscout.core.policy.trust_changes`): per server and field, from digests, never values."""

from __future__ import annotations

import json

from toolscout.core.policy.trust_changes import ServerChange, mcp_changes, server_digests

APPROVED = {
    "a": {"command": "python3", "args": ["-m", "a"], "env": {"TOKEN": "secret-1", "MODE": "x"}},
    "b": {"url": "https://b.example/mcp", "type": "http"},
    "c": {"command": "true"},
}


def test_each_kind_of_change_is_named_by_field_and_variable():
    now = {
        "a": {
            "command": "python3",
            "args": ["-m", "a", "--evil"],
            "cwd": "/tmp",
            "env": {"TOKEN": "secret-2", "PYTHONPATH": "./evil"},
        },
        "b": {"url": "https://evil.example/mcp", "type": "http"},
        "c": {"command": "true"},
        "d\u202e": "not an object",
    }
    assert mcp_changes(server_digests(APPROVED), now) == (
        ServerChange(
            "a",
            "changed",
            ("args changed", "cwd added", "env TOKEN changed", "env PYTHONPATH added", "env MODE removed"),
        ),
        ServerChange("b", "changed", ("url changed",)),
        ServerChange("d\u202e", "added"),
    )
    assert ServerChange("d\u202e", "added").summary() == "d\\u202e added"


def test_nothing_changed_removed_servers_and_an_old_record():
    assert mcp_changes(server_digests(APPROVED), APPROVED) == ()
    assert mcp_changes(server_digests(APPROVED), {"c": {"command": "true"}}) == (
        ServerChange("a", "removed"),
        ServerChange("b", "removed"),
    )
    assert mcp_changes(None, APPROVED) is None  # stored before per-server digests


def test_the_digests_hold_no_value():
    stored = json.dumps(server_digests(APPROVED))
    assert "secret-1" not in stored and "python3" not in stored and "TOKEN" in stored


def test_approvals_stored_before_headers_were_hashed_keep_their_hash(tmp_path):
    """``mcpHash`` covers headers only where a server has them: the hash of a file without
    headers is the one earlier versions stored, so their approvals still hold."""
    import hashlib

    from toolscout.core.policy.trust import mcp_fingerprint

    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": APPROVED}))
    fields = ("type", "transport", "command", "args", "env", "cwd", "url")  # what was hashed before
    before = {k: {f: v.get(f) for f in fields} for k, v in APPROVED.items()}
    assert mcp_fingerprint(tmp_path) == hashlib.sha256(json.dumps(before, sort_keys=True).encode()).hexdigest()
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {**APPROVED, "b": {**APPROVED["b"], "headers": {"Authorization": "Bearer ${TOKEN}"}}}}
        )
    )
    assert mcp_fingerprint(tmp_path) != hashlib.sha256(json.dumps(before, sort_keys=True).encode()).hexdigest()
