"""``toolscout eval``: Recall@k, nDCG@10, MRR and latency of the ranker on a labelled query set."""

from __future__ import annotations

import argparse

from toolscout.core.settings.layers import choices


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``eval`` subcommand."""
    p = sub.add_parser(
        "eval",
        help="measure retrieval quality (Recall@k, nDCG@10, MRR) and latency on a query set",
        description='Queries are JSONL lines {"query": TEXT, "relevant": [NAME, ...]}; NAME is the tool\'s '
        "name exactly as written in the tools file.",
    )
    p.add_argument("--tools", required=True, metavar="PATH", help="tools: JSONL, tools/list dump, or a directory")
    p.add_argument("--queries", required=True, metavar="PATH", help="queries JSONL")
    p.add_argument("--k", default="1,3,5,10", help="cut-offs for Recall@k (default 1,3,5,10)")
    p.add_argument("--ranker", choices=choices("toolSearch.ranker"), help="ranking profile (default: settings)")
    p.add_argument(
        "--compare",
        choices=choices("toolSearch.ranker"),
        metavar="PROFILE",
        help="also rank with PROFILE and print each metric's paired bootstrap 95%% interval of ranker − PROFILE",
    )
    p.add_argument("--json", action="store_true", help="print the stable JSON contract")
    p.add_argument(
        "--explain-failures",
        type=int,
        default=0,
        metavar="N",
        help="list the N worst queries with where their relevant tools ranked",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="do not use the tool-vector cache: encode every tool text (measures first-time encoding)",
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from toolscout.core.search.evaluation import run_eval_cli

    return run_eval_cli(args)
