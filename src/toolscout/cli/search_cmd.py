"""``toolscout search QUERY``: run one ToolSearch query against catalogs or real servers."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from toolscout.core.engine.facade import Engine
from toolscout.core.sanitize import dumps_json
from toolscout.core.settings.layers import choices

from . import fail
from .common import add_config_options, add_trust_flag, make_engine, print_warnings, run_with_engine
from .progress import encoding_progress

if TYPE_CHECKING:
    from toolscout.core.search.results import SearchResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``search`` subcommand."""
    p = sub.add_parser("search", help="search the deferred tools (select:, discover:, +required terms)")
    p.add_argument("query", help='e.g. "create issue", "select:A,B", "discover:send a message", "+slack message"')
    add_config_options(p)
    p.add_argument("--limit", type=int, default=None, help="results (1–50; default toolSearch.maxResults)")
    p.add_argument("--ranker", choices=choices("toolSearch.ranker"), help="ranking profile")
    p.add_argument("--json", action="store_true", help="print the stable JSON contract")
    add_trust_flag(p)
    p.add_argument("--explain", action="store_true", help="explain every score")
    p.add_argument(
        "--wait-for-vectors",
        action="store_true",
        help="on a first-time encode, wait for the dense ranker (progress on a TTY) instead of "
        "answering from the lexical ranker at once (`toolscout index` encodes ahead of time)",
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if args.limit is not None and not 1 <= args.limit <= 50:
        return fail("--limit must be between 1 and 50", 2)
    if not args.query.strip():
        return fail("empty query: give keywords, discover:<task> or select:<names>", 2)
    engine = make_engine(args)
    engine.use_project_usage()  # the usage prior, as in a session

    async def body(engine: Engine) -> int:
        engine.warm_search()
        # cached vectors load in well under a second: only a real (first-time) encode is pending
        ready = await asyncio.to_thread(engine.wait_ranker_ready, 1.5)
        pending = 0 if ready else engine.vectors_pending
        if pending and args.wait_for_vectors:
            print(
                f"toolscout: encoding {pending} tool descriptions for the dense ranker (once; cached)...",
                file=sys.stderr,
                flush=True,
            )
            with encoding_progress(engine):
                await asyncio.to_thread(engine.wait_ranker_ready, None)
        elif pending:
            print(
                f"toolscout: ranked by {engine.active_ranker} while {pending} tool descriptions are "
                "encoded for the dense ranker; run `toolscout index` once (or pass --wait-for-vectors) "
                "for the full ranking",
                file=sys.stderr,
                flush=True,
            )
        result = engine.search_tools(args.query, args.limit)
        if args.json:
            print(dumps_json(result.to_json(), indent=2))
        else:
            print(format_result(result, explain=args.explain))
        return 2 if result.errors and not result.hits else 0  # e.g. "discover:" with nothing after it

    code = run_with_engine(engine, body, needs_a_catalog=True)
    print_warnings(engine)
    return code


#: Most characters of the query echoed back in the text output.
QUERY_SHOWN = 200


def format_result(result: SearchResult, *, explain: bool = False) -> str:
    """Human-readable text of a :class:`SearchResult` (plain, no colour)."""
    from toolscout.core.search.render import explain as explain_hit

    query = (
        result.query
        if len(result.query) <= QUERY_SHOWN
        else f"{result.query[:QUERY_SHOWN]}… ({len(result.query):,} chars)"
    )
    lines = [f"{result.mode} search: {query!r}"]
    for err in result.errors:
        lines.append(f"  ! {err}")
    loaded = set(result.already_loaded)
    for i, hit in enumerate(result.hits, 1):
        if explain:  # the explanation's own first line names the hit: each hit is printed once
            head, *rest = explain_hit(hit).splitlines()
            lines.append(f"{i:>3}. {head}")
            lines.extend("     " + line for line in rest)
            continue
        parts = "  ".join(f"{k} {v:.3f}" for k, v in hit.components.items())
        note = "  [already loaded]" if hit.tool.name in loaded else ""
        lines.append(f"{i:>3}. {hit.tool.name}  score {hit.score:.3f}  ({parts}){note}")
    ranked = {hit.tool.name for hit in result.hits}
    for name in (n for n in result.already_loaded if n not in ranked):
        lines.append(f"  {name}: already loaded — call it directly")
    for name in (n for n in result.missing if n not in result.ambiguous):  # an ambiguous one has its "!" line
        close = result.suggestions.get(name) or []
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        lines.append(f"  {name}: no such tool{hint}")
    if result.no_good_match and not result.errors:  # a "!" line says why already
        lines.append("  no good match")
    if result.unmatched_terms:
        lines.append(f"  terms that matched nothing: {', '.join(result.unmatched_terms)}")
    if result.pending_servers:
        lines.append(f"  still connecting: {', '.join(result.pending_servers)}")
    return "\n".join(lines)
