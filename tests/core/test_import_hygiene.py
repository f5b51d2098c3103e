"""The core must stay UI-free.

Two checks: no module under ``toolscout.core`` imports Textual or Rich (static, by AST), and the
whole core imports and answers a search in a fresh interpreter where importing Textual or Rich
fails. (scikit-learn ≥ 1.9 imports Rich *optionally* for progress bars when it is installed, so
"Rich is not in sys.modules" would test scikit-learn, not us.)
"""

import ast
import subprocess
import sys
from pathlib import Path

import toolscout.core

UI = ("textual", "rich")

CHECK = """
import sys

class BlockUI:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("textual", "rich"):
            raise ImportError("UI import from the core: " + name)

sys.meta_path.insert(0, BlockUI())
import importlib, pkgutil
import toolscout.core as core
for mod in pkgutil.walk_packages(core.__path__, "toolscout.core."):
    importlib.import_module(mod.name)
from toolscout.core.catalog.registry import ToolCatalog
from toolscout.core.models import ToolSpec
from toolscout.core.search.tool_search import ToolSearch
cat = ToolCatalog()
cat.set_server_tools("gh", [ToolSpec(name="create_issue", description="Create a GitHub issue")])
search = ToolSearch(cat)
search.sync()
print(search.search("select:create_issue").hits[0].tool.name)
"""


def test_no_core_module_imports_textual_or_rich():
    root = Path(toolscout.core.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{path.relative_to(root)}: {n}" for n in names if n.split(".")[0] in UI]
    assert offenders == []


def test_core_works_without_textual_or_rich():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("mcp__gh__create_issue")
