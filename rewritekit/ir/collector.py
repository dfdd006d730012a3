"""Python's cyclic garbage collector paused while a graph is built or compiled.

Every graph node is a reference cycle (a Var's ``owner`` is the Apply whose ``outputs`` hold
the Var), so building thousands of nodes triggers the collector over and over, and each
full collection walks every object of the process (JAX's included). Paused, ``rk.function``
on W5's gradient takes 0.055 s instead of 0.114 s (docs/performance.md, "Where the first
call goes"). The garbage made meanwhile is collected when the collector runs next.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def gc_paused(fn: F) -> F:
    """``fn`` with the cyclic collector off while it runs (nested calls and a collector the
    user turned off are left as they are)."""

    @functools.wraps(fn)
    def paused(*args: Any, **kwargs: Any) -> Any:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return paused  # type: ignore[return-value]
