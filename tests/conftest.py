"""Shared test set-up: the hypothesis profile and helpers."""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Iterator

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci")


@contextlib.contextmanager
def shallow_recursion(headroom: int = 60) -> Iterator[None]:
    """Run the body with the recursion limit just above the current depth.

    Code that recursed once per graph level would fail here on any graph deeper than
    ``headroom``, so passing under it shows the code is iterative.
    """
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + headroom)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)
