"""The layering of ``src/toolscout`` as tests: import contracts, no import cycles, small modules,
and the whole package strictly typed (mypy, configured in ``pyproject.toml``).

The import contracts (the core is UI-free, the session sits on top of the engine, widgets do not
drive servers, no cycles between modules or packages, …) are written in ``pyproject.toml``'s
``[tool.importlinter]`` and checked by import-linter (:func:`test_import_contracts_hold`): every
import counts there, function-level and ``if TYPE_CHECKING:`` ones included.

What import-linter cannot say stays here, read from the source (AST): module length, ``getattr``
probes at our own types, ``Any``-typed seams, and the UI and the CLI reaching past the engine into
its parts (``engine.catalog.…``: an attribute, not an import; the UI imports ``Engine`` rightly).
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "toolscout"
MAX_LINES = 450
#: Modules over :data:`MAX_LINES` today, each to be split by responsibility (issue 13, item 2).
#: The list may only shrink: a module not on it may not grow past the limit. These seven passed
#: the limit when ``ruff format`` was adopted (it wraps what was packed by hand at 120 columns).
TOO_LONG_TODAY: set[str] = {
    "toolscout.core.gateway.server",
    "toolscout.core.engine.facade",
    "toolscout.core.session.session",
    "toolscout.core.mcp.connection",
    "toolscout.tui.controller",
    "toolscout.core.calls.executor",
    "toolscout.core.settings.layers",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@functools.cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the module at ``path``, parsed once for all the tests below."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def test_import_contracts_hold() -> None:
    """``lint-imports`` with ``pyproject.toml``'s contracts, in its own process: import-linter's
    public Python API only reads the configuration, and its CLI function, run in this process,
    would reconfigure logging (``dictConfig`` disables the loggers already made) and put the
    working directory on ``sys.path``. No cache: building the graph takes ~0.2 s, less than
    keeping a cache directory fresh across worktrees. A broken contract fails with the linter's
    report (the importing line, the chain and the contract's guidance)."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    assert lint_imports.exists(), "import-linter is in the test extra: pip install -e '.[test]'"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run(
        [str(lint_imports), "--config", "pyproject.toml", "--no-cache", "--no-logo"],
        cwd=SRC.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert " 0 broken." in out.stdout, out.stdout


def test_no_new_module_is_over_450_lines() -> None:
    long = {module_name(p): n for p in sources() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert set(long) <= TOO_LONG_TODAY, f"split these by responsibility: {long}"


def test_the_package_is_strictly_typed() -> None:
    """``mypy`` as configured in ``pyproject.toml`` (strict on all of ``toolscout``: the core, the
    CLI and the TUI), in its own process: mypy raises the interpreter's recursion limit, which
    would leak into other tests."""
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    cache = os.environ.get("TOOLSCOUT_MYPY_CACHE", str(SRC.parent / ".mypy_cache"))
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", cache],
        cwd=SRC.parent,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr


#: ``getattr``/``hasattr`` with a literal attribute that are not guesses at our own types:
#: (module, receiver, attribute) → why the attribute may be missing.
PROBES_ALLOWED: dict[tuple[str, str, str], str] = {
    **{
        ("toolscout.cli.common", "args", a): "argparse: each subcommand defines its own options"
        for a in (
            "folder_trust",
            "trust_project",
            "allowed_tools",
            "add_dir",
            "catalog",
            "mcp_config",
            "no_default_servers",
        )
    },
    ("toolscout.cli.headless", "args", "strategy"): "argparse: each subcommand defines its own options",
    **{
        ("toolscout.core.search.evaluation", "args", a): "argparse: `eval` and the benchmarks pass different namespaces"
        for a in ("k", "ranker", "json", "explain_failures", "no_cache", "compare")
    },
    ("toolscout.cli.parser", "self", "_argv"): "argparse.ArgumentParser subclass: set only by parse_args",
    ("toolscout.cli.progress", "out", "isatty"): "any text stream (a test's StringIO, a pipe)",
    ("toolscout.core.gateway.asking", "params", "input_responses"): "MCP SDK: newer protocol revisions only",
    ("toolscout.core.gateway.asking", "params", "request_state"): "MCP SDK: newer protocol revisions only",
    ("toolscout.core.gateway.asking", "answer", "model_dump"): "MCP SDK: a result model or a plain dict",
    ("toolscout.core.gateway.server", "request", "headers"): "MCP SDK: only HTTP requests carry headers",
    ("toolscout.core.gateway.clients", "request", "headers"): "MCP SDK: only HTTP requests carry headers",
    ("toolscout.core.gateway.clients", "request", "scope"): "MCP SDK: only HTTP requests carry an ASGI scope",
    ("toolscout.core.safe_read", "os", "O_NONBLOCK"): "platform: not on Windows",
    ("toolscout.core.safe_read", "os", "O_CLOEXEC"): "platform: not on Windows",
    ("toolscout.core.builtins.safe_open", "os", "O_PATH"): "platform: Linux only",
    ("toolscout.core.search.dense", "np", "vecdot"): "numpy >= 2.0 only",
    ("toolscout.core.mcp.shared_sessions", "os", "pidfd_open"): "platform: Linux 5.3+ only",
    ("toolscout.core.mcp.shared_sessions", "socket", "send_fds"): "platform: Unix only",
    (
        "toolscout.core.session.providers.anthropic_provider",
        "u",
        "cache_read_input_tokens",
    ): "Anthropic SDK: optional usage field",
    (
        "toolscout.core.session.providers.anthropic_provider",
        "u",
        "cache_creation_input_tokens",
    ): "Anthropic SDK: optional usage field",
    ("toolscout.core.session.providers.anthropic_provider", "exc", "body"): "Anthropic SDK: APIStatusError only",
    ("toolscout.core.session.providers.anthropic_provider", "exc", "message"): "Anthropic SDK: APIError only",
    (
        "toolscout.core.session.providers.openai_provider",
        "u",
        "prompt_tokens_details",
    ): "OpenAI SDK: optional usage field",
    (
        "toolscout.core.session.providers.openai_provider",
        "details",
        "cached_tokens",
    ): "OpenAI SDK: optional usage field",
    (
        "toolscout.core.session.providers.openai_responses",
        "u",
        "input_tokens_details",
    ): "OpenAI SDK: optional usage field",
    (
        "toolscout.core.session.providers.openai_responses",
        "details",
        "cached_tokens",
    ): "OpenAI SDK: optional usage field",
    ("toolscout.core.session.providers.openai_responses", "item", "namespace"): "OpenAI SDK: only namespaced calls",
    ("toolscout.core.session.providers.openai_responses", "part", "type"): "OpenAI SDK: a message part of any kind",
    (
        "toolscout.core.session.providers",
        "module",
        "PROVIDER",
    ): "a provider's module, named by a registry string (a plugin's, a test's), may lack it",
}
#: Probes at our own types still in the tree (issue 13 item 1): the list may only shrink.
PROBES_TODAY: set[tuple[str, str, str]] = set()


def probes() -> set[tuple[str, str, str]]:
    """(module, receiver, attribute) of every ``getattr``/``hasattr`` with a literal attribute."""
    found = set()
    for path in sources():
        for node in nodes(path):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                found.add((module_name(path), ast.unparse(node.args[0]), node.args[1].value))
    return found


def test_no_getattr_probes_at_our_own_types() -> None:
    """The seams are typed (``Engine``, ``Session``, ``Provider``, ``ModeDecision`` …): reading an
    attribute they have is ``obj.attr``, and one they lack is a type error, not a silent default.
    Only third-party objects, argparse namespaces and platform modules are probed."""
    unexplained = probes() - set(PROBES_ALLOWED) - PROBES_TODAY
    assert unexplained == set(), "type the receiver instead of probing it (or explain it in PROBES_ALLOWED)"
    assert probes() >= PROBES_TODAY, f"gone, drop from PROBES_TODAY: {PROBES_TODAY - probes()}"


#: Parameter names that always hold one of our own types (an Engine, a Session, a ToolCatalog …).
OWN_TYPES = {
    "engine",
    "session",
    "provider",
    "catalog",
    "gateway",
    "decision",
    "report",
    "hit",
    "index",
    "counter",
    "is_deferred",
    "settings",
    "app",
    "screen",
}
#: ``name: Any`` parameters of those names still in the tree (only in the UI controller's files).
ANY_PARAMS_TODAY: set[tuple[str, str]] = set()


def test_the_seams_are_typed() -> None:
    """An engine, a session, a provider or a catalog is passed as what it is, never as ``Any``
    (issue 13 item 1: ~15 signatures said ``engine: Any`` / ``session: Any``)."""
    found = set()
    for path in sources():
        for node in nodes(path):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in [*node.args.args, *node.args.kwonlyargs]:
                    if arg.arg in OWN_TYPES and arg.annotation is not None and ast.unparse(arg.annotation) == "Any":
                        found.add((module_name(path), arg.arg))
    assert found - ANY_PARAMS_TODAY == set()
    assert found >= ANY_PARAMS_TODAY, f"gone, drop from ANY_PARAMS_TODAY: {ANY_PARAMS_TODAY - found}"


#: The engine's and session's parts that the UI and CLI must not reach: they ask the facade
#: (:mod:`toolscout.core.engine.queries`: ``engine.tool_state(...)``, ``engine.server_instructions(...)``, …).
ENGINE_PARTS = {"catalog", "search", "pool", "executor"}
SESSION_PARTS = {"router", "prefetch", "meter"}


def test_the_ui_and_cli_ask_the_engine_not_its_parts() -> None:
    """``engine.catalog.…``, ``engine.search.…``, ``session.router.…`` in ``toolscout.tui`` or
    ``toolscout.cli`` reach around the facade (issue 13 item 1); none is left."""
    found = set()
    for path in sources():
        if not module_name(path).startswith(("toolscout.tui", "toolscout.cli")):
            continue
        for node in nodes(path):
            if isinstance(node, ast.Attribute):
                owner = ast.unparse(node.value).split(".")[-1].lstrip("_")
                if (owner == "engine" and node.attr in ENGINE_PARTS) or (
                    owner == "session" and node.attr in SESSION_PARTS
                ):
                    found.add(f"{module_name(path)}:{node.lineno} {ast.unparse(node)}")
    assert found == set()


def test_the_architecture_page_names_modules_that_exist() -> None:
    """docs/architecture.md (paragraph and tree) names only modules of ``src/toolscout``, the
    engine's read side and the data folders among them (issue 13 "Done when")."""
    import re

    section = (SRC.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"[\w/]+\.py\b", section))
    package = SRC / "toolscout"
    basenames = {p.name for p in package.rglob("*.py")} | {p.name for p in (SRC.parent / "tests").rglob("test_*.py")}
    missing = {
        n
        for n in named
        if not (
            (SRC.parent / n).exists()
            if n.startswith("tests/")
            else (package / n).exists()
            if "/" in n
            else n in basenames
        )
    }
    assert missing == set(), f"docs/architecture.md names modules that are not in src/toolscout: {missing}"
    assert {"core/engine/queries.py", "core/dirs.py", "tui/controller.py"} <= named
