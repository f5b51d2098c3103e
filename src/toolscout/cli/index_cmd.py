"""``toolscout index``: build the dense ranker's tool vectors ahead of time.

Encodes every searchable tool of the configured MCP servers (or of ``--catalog`` files) into the
on-disk vector cache, so the first ``search``, the app's first ranking and ``eval`` start from
cached vectors. Only texts not already cached are encoded; a bar with rate and ETA is drawn on
stderr when it is a terminal.

With ``--out DIR`` it also writes a prebuilt index there (the catalog snapshot, every tool's
vector, the encoder's identity and a manifest: :mod:`toolscout.core.engine.index_files`), which
``toolscout serve --index DIR`` serves from at once. The folder is replaced atomically.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from toolscout.core.engine.facade import Engine
from toolscout.core.sanitize import strip_controls

from . import fail
from .common import add_config_options, add_trust_flag, make_engine, print_warnings, run_with_engine
from .progress import encoding_progress


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``index`` subcommand."""
    p = sub.add_parser("index", help="encode tool vectors ahead of time (configured servers or --catalog)")
    add_config_options(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="also write a prebuilt index to DIR for toolscout serve --index DIR (replaced atomically)",
    )
    add_trust_flag(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from toolscout.core.gateway.selfref import without_gateway

    def warn(text: str) -> None:
        print(f"toolscout index: warning: {strip_controls(text)}", file=sys.stderr, flush=True)

    engine = make_engine(args, server_filter=without_gateway(warn))  # the servers serve would start

    async def body(engine: Engine) -> int:
        started = time.perf_counter()
        with encoding_progress(engine):
            await asyncio.to_thread(engine.warm_search)
            ready = await asyncio.to_thread(engine.wait_ranker_ready, None)
        took = time.perf_counter() - started
        index = engine.index_report()
        tools, encoded = index.tools, index.encoded
        summary: dict[str, Any] = {
            "tools": tools,
            "encoded": encoded,
            "cached": max(0, tools - encoded),
            "seconds": round(took, 2),
            "tools_per_second": round(encoded / took, 1) if encoded and took > 0 else None,
            "servers": index.servers,
            "vector_cache": str(index.vector_cache) if index.vector_cache else None,
            "profile": index.profile,
        }
        if args.out and not index.servers:  # e.g. an unapproved project config: no server started
            return fail(f"--out {args.out}: no server's tools to index (see the warnings); {args.out} left as it was")
        if args.out:
            if not ready:
                warn(f"no vectors in the index: {index.fallback_reason or 'the dense ranker is unavailable'}")
            try:
                manifest = await asyncio.to_thread(engine.write_prebuilt_index, Path(args.out))
            except OSError as exc:
                return fail(f"--out {args.out}: {strip_controls(exc)}")
            summary["index"] = {"path": str(Path(args.out).absolute()), **manifest}
        elif not ready:
            return fail(f"no vectors built: {index.fallback_reason or 'the dense ranker is unavailable'}")
        if args.json:
            print(json.dumps(summary, indent=2))
        else:
            rate = f", {summary['tools_per_second']:,} tools/s" if summary["tools_per_second"] else ""
            print(
                f"indexed {tools:,} tools from {len(index.servers)} servers: {encoded:,} encoded, "
                f"{summary['cached']:,} already cached ({took:.1f} s{rate})"
            )
            off = f"memory only (TOOLSCOUT_CACHE_DIR={os.environ.get('TOOLSCOUT_CACHE_DIR')!r}: off, or not an absolute folder)"
            print(f"vector cache: {summary['vector_cache'] or off}")
            if args.out:
                built = summary["index"]
                print(
                    f"index: {built['path']} ({built['tool_count']:,} tools of {built['server_count']} servers, "
                    f"{'with' if built['encoder'] else 'without'} vectors)"
                )
        return 0

    code = run_with_engine(engine, body, needs_a_catalog=True)
    print_warnings(engine)  # on stderr: --json's stdout stays the summary alone
    sys.stdout.flush()
    return code
