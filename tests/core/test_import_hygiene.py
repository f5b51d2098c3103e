"""The core must stay UI-free: importing it must not pull in Textual or Rich."""

import subprocess
import sys

CHECK = """
import importlib, pkgutil, sys
import toolscout.core as core
for mod in pkgutil.walk_packages(core.__path__, "toolscout.core."):
    importlib.import_module(mod.name)
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "rich"))
print(",".join(bad))
"""


def test_core_imports_no_textual_or_rich():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"core pulled in UI modules: {out.stdout.strip()}"
