"""OAuth for remote MCP servers (:mod:`toolscout.core.mcp.oauth`, ``toolscout mcp login/logout``)
against a loopback authorization server + protected MCP resource built from the SDK's server-side
auth (tests/fixtures/oauth_server.py): what the server received (registrations, grants, the
bearer tokens presented), where the login is kept and with which mode, what a 401 says, and that
nothing logs in by itself."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import webbrowser
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp_helpers import FIXTURES, allow, running, stdio
from oauth_server import SCOPE, WRITE_SCOPE, browser_command, protected_server

from toolscout.core.dirs import config_dir
from toolscout.core.mcp.config import parse_entry
from toolscout.core.mcp.login import log_in
from toolscout.core.mcp.oauth import challenge_of
from toolscout.core.mcp.oauth_redirect import LoopbackRedirect
from toolscout.core.mcp.oauth_store import login_file
from toolscout.core.models import ServerState

pytest.importorskip("uvicorn")

SRC = Path(__file__).resolve().parents[2] / "src"
#: Bound on one CLI run (a fresh interpreter importing the SDK; slower on a loaded machine).
CLI_TIMEOUT_S = 120


def remote(url: str, **entry: object) -> object:
    """The ``notes`` http server at ``url`` as a config entry would give it."""
    return parse_entry("notes", {"type": "http", "url": url, **entry}, "test", {})


async def toolscout(*args: str, cwd: Path, browser_log: Path | None = None) -> tuple[int, str, str]:
    """``python -m toolscout ARGS`` in ``cwd`` (this test's config dir), ``$BROWSER`` set to the
    follow-the-URL script; returns exit status, stdout, stderr."""
    env = {
        **os.environ,
        "BROWSER": browser_command(cwd),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
        "TOOLSCOUT_RANKER": "bm25f",
    }
    if browser_log is not None:
        env["BROWSER_LOG"] = str(browser_log)
    with anyio.fail_after(CLI_TIMEOUT_S):
        done = await anyio.run_process([sys.executable, "-m", "toolscout", *args], cwd=cwd, env=env, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def write_user_config(url: str) -> None:
    path = config_dir() / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": {"notes": {"type": "http", "url": url}}}))


def follow_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``webbrowser.open`` as the ``$BROWSER`` script does it (this process's ``webbrowser`` reads
    ``$BROWSER`` once, so the in-process tests give it the script's steps directly)."""
    sys.path.insert(0, str(FIXTURES))
    import browser_allow

    monkeypatch.setattr(webbrowser, "open", lambda url: browser_allow.main(url) == 0)


async def test_mcp_login_opens_the_browser_stores_the_token_privately_and_the_server_gets_it(tmp_path: Path):
    work = tmp_path / "project"
    work.mkdir()
    async with protected_server() as server:
        write_user_config(server.url)
        code, out, err = await toolscout("mcp", "login", "notes", cwd=work, browser_log=tmp_path / "browser.log")
        assert code == 0, err
        assert "Logged in to notes" in out and "3 tools" in out
        # the browser was sent to the authorization endpoint with PKCE, and back to a loopback port
        opened = (tmp_path / "browser.log").read_text()
        assert f"opened {server.base}/authorize?" in opened and "code_challenge_method=S256" in opened
        assert "redirected to http://127.0.0.1:" in opened and "/callback?code=" in opened
        assert f"scope={SCOPE}" in opened  # the scope the 401 named
        assert len(server.registrations) == 1 and server.grants == ["authorization_code"]
        token = server.issued[0]
        assert server.bearer_presented()[-1] == token  # the login's own tools/list

        # kept in the user config dir, owner-only, and nowhere in the project folder
        path = login_file("notes")
        assert path.parent == config_dir() / "oauth"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert json.loads(path.read_text())["tokens"]["access_token"] == token
        assert not [p for p in work.rglob("*") if p.is_file() and token in p.read_text(errors="ignore")]

        # a later connection presents it, without any login
        async with running([remote(server.url)]) as engine:
            assert engine.pool.status("notes").state is ServerState.CONNECTED
            result = await engine.call_tool("mcp__notes__read_notes", {}, asker=allow)
            assert result.text() == "remote note: buy milk"
        assert server.bearer_presented()[-1] == token
        assert server.grants == ["authorization_code"] and len(server.registrations) == 1

        code, out, err = await toolscout("mcp", "logout", "notes", cwd=work)
        assert code == 0 and "Logged out of notes" in out, err
        assert not path.exists()
        code, _, err = await toolscout("mcp", "logout", "notes", cwd=work)
        assert code == 1 and "no login is stored for notes" in err
        async with running([remote(server.url)]) as engine:
            status = engine.pool.status("notes")
            assert status.needs_login and "toolscout mcp login notes" in (status.error or "")


async def test_a_server_that_needs_login_says_what_it_asked_for_and_never_blocks_the_others(
    monkeypatch: pytest.MonkeyPatch,
):
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    async with protected_server() as server, running([remote(server.url), stdio("normal")]) as engine:
        status = engine.pool.status("notes")
        assert status.state is ServerState.FAILED and status.needs_login
        assert status.error == (
            f"HTTP 401 from {server.url}: the server needs a login (OAuth); it asks for scope "
            f"'{SCOPE}'; resource metadata: {server.base}/.well-known/oauth-protected-resource/mcp; "
            "error: invalid_token (Authentication required). Log in with: toolscout mcp login notes"
        )
        # the stdio server connected beside it and its tools run
        assert engine.pool.status("normal").state is ServerState.CONNECTED
        echo = await engine.call_tool("mcp__normal__echo", {"text": "still here"}, asker=allow)
        assert echo.text() == "still here"
    # connecting never logs in: nothing was registered or authorized, no browser was opened
    assert server.registrations == [] and server.authorizations == [] and server.grants == []
    assert server.presented == [None]
    assert opened == []


async def test_an_expired_token_is_refreshed_before_it_is_sent(monkeypatch: pytest.MonkeyPatch):
    follow_in_process(monkeypatch)
    async with protected_server() as server:
        status = await log_in(remote(server.url), wait=60)  # type: ignore[arg-type]
        assert status.state is ServerState.CONNECTED, status.error
        first = server.issued[0]
        # the access token's lifetime passes (the file says when it expires)
        path = login_file("notes")
        data = json.loads(path.read_text())
        assert data["expires_at"] > time.time()
        data["expires_at"] = time.time() - 1
        path.write_text(json.dumps(data))

        async with running([remote(server.url)]) as engine:
            assert engine.pool.status("notes").state is ServerState.CONNECTED
            await engine.call_tool("mcp__notes__read_notes", {}, asker=allow)
        assert server.grants == ["authorization_code", "refresh_token"]
        second = server.issued[1]
        assert second != first and first not in server.bearer_presented()[-3:]
        assert server.bearer_presented()[-1] == second
        stored = json.loads(path.read_text())
        assert stored["tokens"]["access_token"] == second and stored["expires_at"] > time.time()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_a_token_the_server_stops_accepting_fails_the_call_with_the_login_command(
    monkeypatch: pytest.MonkeyPatch,
):
    follow_in_process(monkeypatch)
    async with protected_server() as server:
        assert (await log_in(remote(server.url), wait=60)).state is ServerState.CONNECTED  # type: ignore[arg-type]
        async with running([remote(server.url)]) as engine:
            server.access.clear()  # revoked at the server
            result = await engine.call_tool("mcp__notes__read_notes", {}, asker=allow)
            assert result.is_error
            assert "HTTP 401" in result.text() and "Log in with: toolscout mcp login notes" in result.text()
    assert server.grants == ["authorization_code"]  # no login started by itself


async def test_login_refuses_a_server_of_a_folder_not_approved(tmp_path: Path):
    work = tmp_path / "repo"
    work.mkdir()
    async with protected_server() as server:
        (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"notes": {"type": "http", "url": server.url}}}))
        code, _, err = await toolscout("mcp", "login", "notes", cwd=work, browser_log=tmp_path / "browser.log")
    assert code == 1
    assert "not approved" in err and server.url in err
    assert server.registrations == [] and not (tmp_path / "browser.log").exists()


async def test_the_redirect_listener_takes_only_its_own_state():
    async with LoopbackRedirect() as listener, httpx2.AsyncClient() as client:
        assert listener.redirect_uri.startswith("http://127.0.0.1:")
        listener.expect("the-state")
        wrong = await client.get(f"{listener.redirect_uri}?code=stolen&state=other")
        assert wrong.status_code == 400
        right = await client.get(f"{listener.redirect_uri}?code=good&state=the-state")
        assert right.status_code == 200
        result = await listener.wait(5)
        assert (result.code, result.state) == ("good", "the-state")
        again = await client.get(f"{listener.redirect_uri}?code=late&state=the-state")
        assert again.status_code == 400


def test_oauth_entry_fields_are_read_and_checked():
    cfg = parse_entry(
        "n",
        {
            "type": "http",
            "url": "https://x/mcp",
            "oauth": {"clientId": "abc", "clientSecret": "${S}", "callbackPort": 8765},
        },
        "test",
        {"S": "shh"},
    )
    assert cfg.error is None and cfg.oauth is not None
    assert (cfg.oauth.client_id, cfg.oauth.client_secret, cfg.oauth.callback_port) == ("abc", "shh", 8765)
    bad = parse_entry("n", {"type": "http", "url": "https://x/mcp", "oauth": {"clientID": "abc"}}, "test", {})
    assert bad.error is not None and "unknown key 'clientID'" in bad.error
    port = parse_entry("n", {"type": "http", "url": "https://x/mcp", "oauth": {"callbackPort": "80"}}, "test", {})
    assert port.error is not None and "callbackPort" in port.error


def test_client_credentials_need_a_client_and_a_secret_or_key():
    missing = parse_entry(
        "n", {"type": "http", "url": "https://x/mcp", "oauth": {"grant": "client_credentials"}}, "t", {}
    )
    assert missing.error is not None and "needs clientId and clientSecret or privateKeyFile" in missing.error
    unknown = parse_entry("n", {"type": "http", "url": "https://x/mcp", "oauth": {"grant": "password"}}, "t", {})
    assert unknown.error is not None and "authorization_code, client_credentials" in unknown.error
    ok = parse_entry(
        "n",
        {
            "type": "http",
            "url": "https://x/mcp",
            "oauth": {"grant": "client_credentials", "clientId": "c", "privateKeyFile": "~/k.pem"},
        },
        "t",
        {},
    )
    assert ok.error is None and ok.oauth is not None and ok.oauth.private_key_file == "~/k.pem"


async def test_a_call_that_needs_more_scope_says_so_and_the_next_login_asks_for_it(monkeypatch: pytest.MonkeyPatch):
    follow_in_process(monkeypatch)
    async with protected_server() as server:
        assert (await log_in(remote(server.url), wait=60)).state is ServerState.CONNECTED  # type: ignore[arg-type]
        assert server.authorizations[0].scopes == [SCOPE]
        async with running([remote(server.url)]) as engine:
            result = await engine.call_tool("mcp__notes__write_notes", {"text": "hi"}, asker=allow)
            assert result.is_error
            assert f"HTTP 403 from {server.url}: the login lacks the scope this needs; " in result.text()
            assert f"it asks for scope '{SCOPE} {WRITE_SCOPE}'" in result.text()
            assert "error: insufficient_scope" in result.text() and "toolscout mcp login notes" in result.text()
        assert len(server.authorizations) == 1  # the refusal started no login
        # the next login asks for what was granted and what the call needed
        assert (await log_in(remote(server.url), wait=60)).state is ServerState.CONNECTED  # type: ignore[arg-type]
        assert server.authorizations[1].scopes == [SCOPE, WRITE_SCOPE]
        async with running([remote(server.url)]) as engine:
            result = await engine.call_tool("mcp__notes__write_notes", {"text": "hi"}, asker=allow)
            assert not result.is_error and result.text() == "written: hi"


async def test_calls_to_a_logged_in_server_run_side_by_side(monkeypatch: pytest.MonkeyPatch):
    """The SDK's OAuth client holds one lock until each answer's headers arrive; a server that
    answers with one JSON body when the call is done would then get one call at a time. Two calls
    that wait for each other on the server both finish."""
    follow_in_process(monkeypatch)
    async with protected_server(json_response=True) as server:
        assert (await log_in(remote(server.url), wait=60)).state is ServerState.CONNECTED  # type: ignore[arg-type]
        async with running([remote(server.url)]) as engine:
            answers: dict[str, str] = {}

            async def call(who: str) -> None:
                answers[who] = (await engine.call_tool("mcp__notes__meet", {"who": who}, asker=allow)).text()

            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call, "first")
                    tg.start_soon(call, "second")
        assert answers == {"first": "first met", "second": "second met"}
        assert sorted(server.arrived) == ["first", "second"]


async def test_only_remote_servers_without_a_static_header_log_in():
    from toolscout.core.mcp.login import LoginError

    with pytest.raises(LoginError, match="it is a stdio server"):
        await log_in(stdio("normal"))
    header = parse_entry(
        "h", {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"authorization": "Bearer x"}}, "t", {}
    )
    with pytest.raises(LoginError, match="it sends its own Authorization header"):
        await log_in(header)


async def test_a_refused_login_says_why(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture):
    follow_in_process(monkeypatch)
    async with protected_server() as server:
        server.deny = True
        status = await log_in(remote(server.url), wait=60)  # type: ignore[arg-type]
    assert status.state is ServerState.FAILED and status.needs_login
    assert status.error == (
        "login to notes failed: the authorization server refused the login (access_denied: the person said no). "
        "Try again with: toolscout mcp login notes"
    )
    assert server.grants == []
    assert "tokens" not in json.loads(login_file("notes").read_text())  # the registration is kept, no token
    assert "OAuth flow error" not in caplog.text  # reported once, as the server's error, no traceback


async def test_a_login_refuses_an_authorization_server_endpoint_in_cleartext_off_loopback(
    monkeypatch: pytest.MonkeyPatch,
):
    # the metadata points the code + PKCE verifier at a plain-http token endpoint on another host:
    # refused before the browser opens (OAuth 2.1 §1.5, the MCP authorization spec: https except loopback)
    follow_in_process(monkeypatch)
    async with protected_server() as server:
        server.token_endpoint = "http://auth.example.invalid/token"
        status = await log_in(remote(server.url), wait=60)  # type: ignore[arg-type]
    assert status.state is ServerState.FAILED and status.needs_login
    assert status.error is not None
    assert "http://auth.example.invalid/token" in status.error and "https" in status.error
    assert server.authorizations == [] and server.grants == []  # no browser, no code, nothing sent


def test_a_hostile_challenge_is_shown_escaped_once_and_bounded():
    # a 401 whose WWW-Authenticate carries terminal escapes and a huge description
    header = (
        'Bearer error="invalid_token\x1b]0;PWNED\x07", error_description="\x1b[2J' + "A" * 100_000 + '", '
        'scope="read\x1b[5m", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource"'
    )
    request = httpx2.Request("POST", "http://127.0.0.1:1/mcp")
    response = httpx2.Response(401, headers={"WWW-Authenticate": header}, request=request)
    challenge = challenge_of(response)
    assert challenge is not None
    line = challenge.describe("notes")
    assert "\x1b" not in line and "\x07" not in line and len(line) < 1_000
    # the ESC shows as \x1b, not as \\x1b (which would read as a backslash the server sent)
    assert "it asks for scope 'read\\x1b[5m'" in line
    assert "error: invalid_token\\x1b]0;PWNED\\x07" in line
