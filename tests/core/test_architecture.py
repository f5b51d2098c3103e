"""The layering of ``src/toolscout`` as tests: import contracts, no import cycles, small modules,
and the core strictly typed (mypy, configured in ``pyproject.toml``).

Imports are read from the source (AST). Every import counts for the contracts, wherever it is
written (a function-level import is still a dependency); for cycles in ``src`` only the imports
that run when a module is imported count (module level, outside ``if TYPE_CHECKING:``), as those
are the ones that can fail half-initialised. In the core, a loop hidden in a function-level import
is a cycle too.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "toolscout"
MAX_LINES = 450
#: Modules over :data:`MAX_LINES` today, each to be split by responsibility (issue 13, item 2).
#: The list may only shrink: a module not on it may not grow past the limit.
TOO_LONG_TODAY: set[str] = set()

#: (importer prefix, forbidden prefixes, why).
CONTRACTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("toolscout.core", ("toolscout.cli", "toolscout.tui", "textual", "rich"),
     "the core is UI-free: the CLI and the TUI depend on it, never the reverse"),
    ("toolscout.core.search", ("toolscout.core.session",),
     "search ranks tools; it knows nothing of conversations"),
    ("toolscout.core.mcp", ("toolscout.core.session",), "the MCP layer knows nothing of conversations"),
    ("toolscout.tui", ("toolscout.cli",), "the app's command-line entry lives in cli/app_cmd.py: the UI never "
     "imports the command line"),
    ("toolscout.tui.widgets", ("toolscout.core.mcp", "toolscout.core.session.session"),
     "widgets render what they are given; they do not drive servers or the session"),
    ("toolscout.tui.screens", ("toolscout.tui.app",),
     "screens post requests up (messages) and read facts from the controller; they never call the app"),
    ("toolscout.tui.controller", ("toolscout.tui.app", "toolscout.tui.screens.main"),
     "the controller reports to the main screen by messages; it imports neither the app nor the screen"),
)
#: Layers inside the core: (package, the only other core packages that may import it, why).
CORE_LAYERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("toolscout.core.session", (),
     "conversations sit on top of the engine: nothing else in the core imports the session"),
    ("toolscout.core.engine", ("toolscout.core.session", "toolscout.core.gateway", "toolscout.core.factory"),
     "the engine's parts (catalog, search, MCP, executor, built-ins) never import the facade they make up"),
    ("toolscout.core.gateway", (), "the MCP gateway (toolscout serve) is a client of the engine, for the CLI only"),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        parts = module.split(".")
        keep = len(parts) - node.level + (1 if is_package else 0)
        base = ".".join(parts[:keep] + ([node.module] if node.module else []))
    # ``from . import x`` may name a submodule: count both the package and ``package.x``
    return [base, *(f"{base}.{a.name}" for a in node.names)]


def imports(path: Path, *, runtime_only: bool, type_checking: bool = True) -> set[str]:
    """Absolute names imported by the module at ``path`` (``runtime_only``: module level only;
    ``type_checking``: include ``if TYPE_CHECKING:`` blocks unless ``runtime_only``)."""
    module, is_package = module_name(path), path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                found.update(_resolve(module, is_package, node))
            elif isinstance(node, ast.If):
                if not ((runtime_only or not type_checking) and _is_type_checking(node)):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif not runtime_only:
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.stmt):
                        visit([child])
                    for grandchild in ast.walk(child):
                        if isinstance(grandchild, ast.Import | ast.ImportFrom):
                            visit([grandchild])

    visit(tree.body)
    return found


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_import_contracts_hold() -> None:
    broken = []
    for path in sources():
        module = module_name(path)
        names = imports(path, runtime_only=False)
        for importer, forbidden, why in CONTRACTS:
            if _within(module, importer):
                broken += [f"{module} imports {n} ({why})" for n in sorted(names)
                           if any(_within(n, f) for f in forbidden)]
    assert broken == []


def test_core_layers_hold() -> None:
    """``core.result_cap`` (the engine's side) once imported ``core.session.transcript`` for the
    data directory; the layers inside the core run one way (:data:`CORE_LAYERS`)."""
    broken = []
    for path in sources():
        module = module_name(path)
        if not _within(module, "toolscout.core"):
            continue
        names = imports(path, runtime_only=False)
        for package, allowed, why in CORE_LAYERS:
            if _within(module, package) or any(_within(module, a) for a in allowed):
                continue
            broken += [f"{module} imports {n} ({why})" for n in sorted(names) if _within(n, package)]
    assert broken == []


def import_cycles(*, runtime_only: bool, within: str = "toolscout", type_checking: bool = False) -> list[list[str]]:
    """Strongly connected components (more than one module) of the import graph of ``within``,
    each sorted; imports as :func:`imports` reads them (``if TYPE_CHECKING:`` ones only when
    ``type_checking`` and not ``runtime_only``)."""
    known = {module_name(p): p for p in sources() if _within(module_name(p), within)}
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        targets = set()
        for name in imports(path, runtime_only=runtime_only, type_checking=type_checking):
            while name and name not in known:  # ``from pkg import func``: the module is ``pkg``
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    # A package's __init__ importing its own submodules is how packages work, not a cycle.
    for module in graph:
        graph[module] = {t for t in graph[module] if not _within(t, module)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def strongconnect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return cycles


def test_no_import_cycles() -> None:
    assert import_cycles(runtime_only=True) == []


def test_no_import_loops_in_the_core_even_inside_functions() -> None:
    """A function-level import that closes a loop (``core.mcp.config`` imported
    ``server_names`` inside ``load_mcp_config`` while ``server_names`` imported ``config``) hides a
    cycle from :func:`test_no_import_cycles`; the core has none."""
    assert import_cycles(runtime_only=False, within="toolscout.core") == []


def test_no_import_loops_in_the_ui_even_for_type_checking() -> None:
    """The app, the controller and the screens used to know each other only through
    ``if TYPE_CHECKING:`` imports (app ↔ main screen); the UI's dependencies now run one way:
    app → controller and screens, screens → controller (read-only) and widgets."""
    assert import_cycles(runtime_only=False, within="toolscout.tui", type_checking=True) == []


def test_no_new_module_is_over_450_lines() -> None:
    long = {module_name(p): n for p in sources() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert set(long) <= TOO_LONG_TODAY, f"split these by responsibility: {long}"


def test_the_core_is_strictly_typed() -> None:
    """``mypy`` as configured in ``pyproject.toml`` (strict on ``toolscout.core``), in its own
    process: mypy raises the interpreter's recursion limit, which would leak into other tests."""
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    cache = os.environ.get("TOOLSCOUT_MYPY_CACHE", str(SRC.parent / ".mypy_cache"))
    out = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", cache], cwd=SRC.parent,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


#: ``getattr``/``hasattr`` with a literal attribute that are not guesses at our own types:
#: (module, receiver, attribute) → why the attribute may be missing.
PROBES_ALLOWED: dict[tuple[str, str, str], str] = {
    **{("toolscout.cli.common", "args", a): "argparse: each subcommand defines its own options"
       for a in ("folder_trust", "trust_project", "allowed_tools", "add_dir", "catalog", "mcp_config",
                 "no_default_servers")},
    ("toolscout.cli.headless", "args", "strategy"): "argparse: each subcommand defines its own options",
    **{("toolscout.core.evaluation", "args", a): "argparse: `eval` and the benchmarks pass different namespaces"
       for a in ("k", "ranker", "json", "explain_failures")},
    ("toolscout.cli.parser", "self", "_argv"): "argparse.ArgumentParser subclass: set only by parse_args",
    ("toolscout.cli.progress", "out", "isatty"): "any text stream (a test's StringIO, a pipe)",
    ("toolscout.core.gateway.asking", "params", "input_responses"): "MCP SDK: newer protocol revisions only",
    ("toolscout.core.gateway.asking", "params", "request_state"): "MCP SDK: newer protocol revisions only",
    ("toolscout.core.gateway.asking", "answer", "model_dump"): "MCP SDK: a result model or a plain dict",
    ("toolscout.core.gateway.server", "request", "headers"): "MCP SDK: only HTTP requests carry headers",
    ("toolscout.core.safe_read", "os", "O_NONBLOCK"): "platform: not on Windows",
    ("toolscout.core.safe_read", "os", "O_CLOEXEC"): "platform: not on Windows",
    ("toolscout.core.search.dense", "np", "vecdot"): "numpy >= 2.0 only",
    ("toolscout.core.mcp.shared_sessions", "os", "pidfd_open"): "platform: Linux 5.3+ only",
    ("toolscout.core.mcp.shared_sessions", "socket", "send_fds"): "platform: Unix only",
    ("toolscout.core.session.providers.anthropic_provider", "u", "cache_read_input_tokens"): "Anthropic SDK: optional usage field",
    ("toolscout.core.session.providers.anthropic_provider", "u", "cache_creation_input_tokens"): "Anthropic SDK: optional usage field",
    ("toolscout.core.session.providers.anthropic_provider", "exc", "body"): "Anthropic SDK: APIStatusError only",
    ("toolscout.core.session.providers.anthropic_provider", "exc", "message"): "Anthropic SDK: APIError only",
    ("toolscout.core.session.providers.openai_provider", "u", "prompt_tokens_details"): "OpenAI SDK: optional usage field",
    ("toolscout.core.session.providers.openai_provider", "details", "cached_tokens"): "OpenAI SDK: optional usage field",
}
#: Probes at our own types still in the tree (issue 13 item 1): the list may only shrink.
PROBES_TODAY: set[tuple[str, str, str]] = set()


def probes() -> set[tuple[str, str, str]]:
    """(module, receiver, attribute) of every ``getattr``/``hasattr`` with a literal attribute."""
    found = set()
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
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
OWN_TYPES = {"engine", "session", "provider", "catalog", "gateway", "decision", "report", "hit", "index",
             "counter", "is_deferred", "settings", "app", "screen"}
#: ``name: Any`` parameters of those names still in the tree (only in the UI controller's files).
ANY_PARAMS_TODAY: set[tuple[str, str]] = set()


def test_the_seams_are_typed() -> None:
    """An engine, a session, a provider or a catalog is passed as what it is, never as ``Any``
    (issue 13 item 1: ~15 signatures said ``engine: Any`` / ``session: Any``)."""
    found = set()
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in [*node.args.args, *node.args.kwonlyargs]:
                    if arg.arg in OWN_TYPES and arg.annotation is not None and ast.unparse(arg.annotation) == "Any":
                        found.add((module_name(path), arg.arg))
    assert found - ANY_PARAMS_TODAY == set()
    assert found >= ANY_PARAMS_TODAY, f"gone, drop from ANY_PARAMS_TODAY: {ANY_PARAMS_TODAY - found}"


#: The engine's and session's parts that the UI and CLI must not reach: they ask the facade
#: (:mod:`toolscout.core.engine_queries`: ``engine.tool_state(...)``, ``engine.server_instructions(...)``, …).
ENGINE_PARTS = {"catalog", "search", "pool", "executor"}
SESSION_PARTS = {"router", "prefetch", "meter"}


def test_the_ui_and_cli_ask_the_engine_not_its_parts() -> None:
    """``engine.catalog.…``, ``engine.search.…``, ``session.router.…`` in ``toolscout.tui`` or
    ``toolscout.cli`` reach around the facade (issue 13 item 1); none is left."""
    found = set()
    for path in sources():
        if not module_name(path).startswith(("toolscout.tui", "toolscout.cli")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                owner = ast.unparse(node.value).split(".")[-1].lstrip("_")
                if (owner == "engine" and node.attr in ENGINE_PARTS) or (owner == "session" and node.attr in SESSION_PARTS):
                    found.add(f"{module_name(path)}:{node.lineno} {ast.unparse(node)}")
    assert found == set()


def test_the_readme_architecture_names_modules_that_exist() -> None:
    """README's Architecture section (paragraph and tree) names only modules of ``src/toolscout``,
    the engine's read side and the data folders among them (issue 13 "Done when")."""
    import re

    readme = (SRC.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Architecture\n", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"[\w/]+\.py\b", section))
    package = SRC / "toolscout"
    basenames = {p.name for p in package.rglob("*.py")} | {p.name for p in (SRC.parent / "tests").rglob("test_*.py")}
    missing = {n for n in named if not ((SRC.parent / n).exists() if n.startswith("tests/")
                                        else (package / n).exists() if "/" in n else n in basenames)}
    assert missing == set(), f"README's Architecture names modules that are not in src/toolscout: {missing}"
    assert {"core/engine_queries.py", "core/dirs.py", "tui/controller.py"} <= named
