"""Run every benchmark section and write one Markdown report.

Usage::

    .venv/bin/python tests/benchmarks/run_all.py --out tests/benchmarks/REPORT.md
    .venv/bin/python tests/benchmarks/run_all.py --only retrieval --out /tmp/r.md

Sections are modules in this folder with a ``run() -> str`` function returning Markdown. The
runner calls the modules named in :data:`SECTIONS` first, in that order (a missing one is listed
as "not present"), then any other module here that defines ``def run(`` (alphabetically), so a
new section (token savings, cache stability, UI responsiveness ...) needs no edit of this file. Needs
``../shared/bench-data`` (the sections that read it are skipped with a note when it is absent).
Not collected by pytest (``--ignore=tests/benchmarks``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import importlib.util
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import BENCH, machine_info  # noqa: E402

#: Section modules, in report order. Add yours here.
SECTIONS: tuple[str, ...] = ("retrieval", "scale", "token_savings", "cache_stability", "ui_responsiveness")
NEEDS_BENCH = {"retrieval", "scale"}


def discovered() -> list[str]:
    """Section modules in this folder that are not in :data:`SECTIONS`."""
    skip = {*SECTIONS, "common", "run_all"}
    out = []
    for path in sorted(HERE.glob("*.py")):
        if path.stem not in skip and "\ndef run(" in path.read_text(encoding="utf-8"):
            out.append(path.stem)
    return out


def header() -> str:
    info = machine_info()
    rows = "\n".join(f"| {k} | {v} |" for k, v in info.items())
    return (
        "# toolscout benchmark report\n\n"
        f"Generated {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')} by "
        "`tests/benchmarks/run_all.py`.\n\n| machine / package | version |\n|---|---|\n" + rows + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "REPORT.md", help="Markdown file to write")
    ap.add_argument("--only", default="", help="comma-separated section names (default: all present)")
    args = ap.parse_args(argv)
    wanted = [s for s in args.only.split(",") if s] or [*SECTIONS, *discovered()]
    parts = [header()]
    for name in wanted:
        if importlib.util.find_spec(name) is None:
            parts.append(f"## {name}\n\n(not present: no `tests/benchmarks/{name}.py`)\n")
            continue
        if name in NEEDS_BENCH and not BENCH.is_dir():
            parts.append(f"## {name}\n\n(skipped: {BENCH} is absent)\n")
            continue
        start = time.perf_counter()
        print(f"[run_all] {name} ...", file=sys.stderr, flush=True)
        try:
            body = importlib.import_module(name).run()
        except Exception:
            body = f"## {name}\n\nFAILED:\n\n```\n{traceback.format_exc()}\n```\n"
        took = time.perf_counter() - start
        parts.append(f"{body.rstrip()}\n\n_(section took {took:.0f} s)_\n")
        print(f"[run_all] {name} done in {took:.0f} s", file=sys.stderr, flush=True)
    args.out.write_text("\n".join(parts), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
