"""Usage-prior replay: does ranking the tools a person already ran a little higher help the next
search? (issue 25 item 2; the prior is :mod:`toolscout.core.search.usage_prior`).

Synthetic but built from real labelled queries: for each bench set (``livemcpbench``,
``metatool``) :data:`PEOPLE` people are simulated, each with a working set of
:data:`WORKING_SET` tools that are the relevant tools of real dev queries, used with Zipf
popularity (exponent 1.1). A session is :data:`TURNS` turns; at each turn the person, with
probability :data:`EXPLORE`, does something new (a random dev query of the set), else picks a
tool of the working set by popularity and asks one of the real queries labelled with it. The
query is ranked through the real :class:`ToolIndex` with a :class:`UsagePrior` that has seen
only the earlier turns; then the person runs the query's relevant tools (each counted as a
successful call). R@5 and nDCG@10 (``run_baselines.py`` definitions) are averaged over all
turns, for the prior off (weight 0) and several weights, on exactly the same turns.

Run: ``PYTHONPATH=src .venv/bin/python tests/benchmarks/usage_replay.py [--ranker default|bm25f]``
(prints Markdown). ~1–3 minutes on 2 cores with the dense extra (tool vectors are encoded once
per set; every weight replays the same query texts, which the query-vector cache answers).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import DATASETS, load_dataset

from toolscout.core.search.evaluation import EvalQuery, query_metrics
from toolscout.core.search.index import ToolIndex
from toolscout.core.search.usage_prior import UsagePrior

PEOPLE = 12
TURNS = 40
WORKING_SET = 8
EXPLORE = 0.25
ZIPF = 1.1
WEIGHTS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
SEED = 25


def sessions(queries: list[EvalQuery], rng: random.Random) -> list[list[EvalQuery]]:
    """One turn list per person (see the module docstring)."""
    by_tool: dict[str, list[EvalQuery]] = defaultdict(list)
    for q in queries:
        for name in q.relevant:
            by_tool[name].append(q)
    tools = sorted(by_tool)
    out = []
    for _ in range(PEOPLE):
        working = rng.sample(tools, min(WORKING_SET, len(tools)))
        popularity = [1.0 / (i + 1) ** ZIPF for i in range(len(working))]
        turns = []
        for _ in range(TURNS):
            if rng.random() < EXPLORE:
                turns.append(rng.choice(queries))
            else:
                tool = rng.choices(working, popularity)[0]
                turns.append(rng.choice(by_tool[tool]))
        out.append(turns)
    return out


def replay(index: ToolIndex, people: list[list[EvalQuery]], weight: float) -> dict[str, float]:
    """Mean R@5 / nDCG@10 over every turn of every person, the prior learning turn by turn;
    ``new nDCG@10`` over the turns none of whose relevant tools had been run before (where the
    prior can only hurt), ``seen`` over the others."""
    sums: dict[str, float] = defaultdict(float)
    for turns in people:
        prior = UsagePrior(lambda w=weight: w)
        index.usage_prior = prior
        used: set[str] = set()
        for q in turns:
            ranked = [h.tool.name for h in index.rank(q.query, 10)]
            rec, nd, _ = query_metrics(ranked, q.relevant, (5,))
            part = "seen" if used & set(q.relevant) else "new"
            sums["R@5"] += rec[5]
            sums["nDCG@10"] += nd
            sums[part] += nd
            sums[f"n_{part}"] += 1
            sums["n"] += 1
            for name in q.relevant:  # the person runs the tools the task needed
                prior.record(name)
                used.add(name)
    index.usage_prior = None
    return {
        "R@5": 100 * sums["R@5"] / sums["n"],
        "nDCG@10": 100 * sums["nDCG@10"] / sums["n"],
        "new": 100 * sums["new"] / max(1, sums["n_new"]),
        "seen": 100 * sums["seen"] / max(1, sums["n_seen"]),
        "n_new": sums["n_new"],
        "n": sums["n"],
    }


def run(ranker: str = "default") -> str:
    """The replay as a Markdown section (``run_all.py`` calls it with the defaults)."""
    lines = [
        "## Usage-prior replay",
        "",
        f"Usage-prior replay: {PEOPLE} people × {TURNS} turns per set, working set {WORKING_SET} tools "
        f"(Zipf {ZIPF}), {int(EXPLORE * 100)}% exploring turns, ranker `{ranker}`, seed {SEED}.",
        "",
        "| set | weight | R@5 | nDCG@10 | ΔR@5 | ΔnDCG@10 | nDCG@10 seen-tool turns (Δ) | nDCG@10 new-tool turns (Δ) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in DATASETS:
        ds = load_dataset(name)
        rng = random.Random(f"{SEED}-{name}")
        people = sessions(ds.all_queries, rng)
        start = time.perf_counter()
        index = ToolIndex(ds.tools, ranker, server_descriptions=ds.server_descriptions)
        build = time.perf_counter() - start
        print(f"{name}: index {build:.1f} s, profile {index.active_profile}", file=sys.stderr)
        base = None
        for w in WEIGHTS:
            m = replay(index, people, w)
            base = base or m
            lines.append(
                f"| {name} | {w:.2f} | {m['R@5']:.1f} | {m['nDCG@10']:.1f} | "
                f"{m['R@5'] - base['R@5']:+.1f} | {m['nDCG@10'] - base['nDCG@10']:+.1f} | "
                f"{m['seen']:.1f} ({m['seen'] - base['seen']:+.1f}) | {m['new']:.1f} ({m['new'] - base['new']:+.1f}) |"
            )
        lines.append(f"| {name} | turns | {int(base['n'])} ({int(base['n_new'])} new-tool) | | | | | |")
        qv = index.query_vectors
        print(f"{name}: query vectors {qv.hits} hits / {qv.misses} misses", file=sys.stderr)
        index.close()
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranker", default="default", help="ranking profile (default: default)")
    print(run(parser.parse_args().ranker))


if __name__ == "__main__":
    main()
