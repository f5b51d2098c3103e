"""The suite has no timing gates: a correct test passes on a loaded machine (2 cores shared by
several suites). Hypothesis' per-example deadline and its "too slow" health check are off for
every test (the ``untimed`` profile, tests/conftest.py), and no test turns them back on."""

from __future__ import annotations

import ast
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TESTS = Path(__file__).resolve().parents[1]
#: ``@settings(...)`` / ``settings.register_profile(...)`` arguments that gate on time.
TIMING = {"deadline", "suppress_health_check"}


def test_hypothesis_has_no_deadline_and_no_too_slow_check() -> None:
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


@settings(max_examples=2)
@given(st.integers())
def test_a_slow_example_is_not_a_failure(n: int) -> None:
    """Each example takes longer than Hypothesis' default deadline (200 ms), as one may on a
    busy machine: with the deadline this raised ``DeadlineExceeded``."""
    time.sleep(0.25)


def test_no_test_sets_its_own_deadline_or_health_checks() -> None:
    """Per-test ``@settings`` keep to the example count; the profile in tests/conftest.py is the
    one place that says anything about time."""
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == "conftest.py" and path.parent == TESTS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in ("settings", "register_profile"):
                found += [f"{path.relative_to(TESTS)}:{node.lineno} {k.arg}" for k in node.keywords if k.arg in TIMING]
    assert found == []
