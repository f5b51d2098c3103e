"""The official MCP conformance suite's 22 client authorization scenarios (``auth/*``,
``@modelcontextprotocol/conformance``, pinned in node_clients.py) with toolscout as the client:
tests/fixtures/conformance_client.py logs in through toolscout's own connection and OAuth code,
``$BROWSER`` being the follow-the-URL script (a person clicking "allow"). Every scenario passes
except those in :data:`NOT_SUPPORTED`, each listed with its reason; one of those that starts
passing fails the test too (the list is stale). Skipped, with the reason, where node >= 22 is
missing or npm cannot reach a registry.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from node_clients import NodeTools, install

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))
from oauth_server import browser_command  # noqa: E402

#: The suites that hold the 22 ``auth/*`` client scenarios of 0.1.16, and nothing else.
AUTH_SUITES = ("auth", "backcompat", "draft", "extensions")
#: Scenarios toolscout does not pass, and why (docs/remote-servers.md has the table).
NOT_SUPPORTED = {
    "auth/2025-03-26-oauth-metadata-backcompat": "the 2025-03-26 backwards-compatibility path: the "
    "scenario's authorization-server metadata names an issuer (…/oauth) other than the origin it is "
    "served from, which the mcp SDK's client refuses (RFC 8414 §3.3 issuer check, SEP-2468)",
    "auth/cross-app-access-complete-flow": "enterprise-managed authorization (SEP-990, an extension: "
    "an IdP token exchanged for an ID-JAG) is not supported",
}
#: Bound on one suite's run: its scenarios run in parallel, each client within ``--timeout``.
SUITE_TIMEOUT_S = 400
#: Each client's bound (ms) inside the suite: a login starts a Python, a browser and a listener.
CLIENT_TIMEOUT_MS = 150_000


@pytest.fixture(scope="session")
def node_tools() -> NodeTools:
    """The pinned npm packages (installed once per machine into the cache folder)."""
    return install()


def results(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """``conformance client -o FOLDER`` results: ``auth/NAME`` → its checks."""
    found: dict[str, list[dict[str, Any]]] = {}
    for checks in folder.glob("auth/*/checks.json"):
        match = re.fullmatch(r"(.+)-\d{4}-\d\d-\d\dT[\d-]+Z", checks.parent.name)
        if match:
            found[f"auth/{match.group(1)}"] = json.loads(checks.read_text())
    return found


async def test_conformance_client_authorization_scenarios(tmp_path: Path, node_tools: NodeTools):
    client = f"{sys.executable} {FIXTURES / 'conformance_client.py'}"
    env = node_tools.env(BROWSER=browser_command(tmp_path), PYTHONPATH=str(REPO / "src"))
    out = tmp_path / "conformance"
    verdicts: dict[str, str] = {}
    for suite in AUTH_SUITES:
        with anyio.fail_after(SUITE_TIMEOUT_S):
            done = await anyio.run_process(
                [
                    str(node_tools.bin("conformance")),
                    "client",
                    "--command",
                    client,
                    "--suite",
                    suite,
                    "--timeout",
                    str(CLIENT_TIMEOUT_MS),
                    "-o",
                    str(out),
                ],
                env=env,
                check=False,
            )
        text = done.stdout.decode() + done.stderr.decode()
        for mark, name in re.findall(r"^([✓✗]) (auth/[\w.-]+): ", text, flags=re.M):
            verdicts[name] = mark
    checks = results(out)
    assert len(verdicts) == 22, sorted(verdicts)
    failing = {
        name: "; ".join(
            f"{c.get('id')}: {c.get('errorMessage') or c.get('description')}"
            for c in checks.get(name, [])
            if c.get("status") in ("FAILURE", "WARNING")
        )
        or "the client exited non-zero or timed out"
        for name, mark in verdicts.items()
        if mark == "✗"
    }
    passed = len(verdicts) - len(failing)
    print(f"toolscout passes {passed} of {len(verdicts)} client authorization scenarios")
    for name, reason in sorted(failing.items()):
        print(f"  FAIL {name}: {reason}  [known: {NOT_SUPPORTED.get(name, 'no')}]")
    unexpected = {n: r for n, r in failing.items() if n not in NOT_SUPPORTED}
    assert not unexpected, unexpected
    stale = sorted(set(NOT_SUPPORTED) - set(failing))
    assert not stale, f"these pass now: take them off NOT_SUPPORTED: {stale}"
    assert passed == 22 - len(NOT_SUPPORTED)
