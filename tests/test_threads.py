"""Eight threads building, rewriting, compiling and calling graphs at once.

What is shared between threads: the intern tables (hash-consing), the compile cache of
``rk.function``, the rule sets' lookup caches, the type-inference cache and JAX's jit. The
tests start the threads together behind a barrier, so their work overlaps.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.backends.numpy import NUMPY_BACKEND
from rewritekit.ir import Var

THREADS = 8


def _together(work: Callable[[int], Any], threads: int = THREADS) -> list[Any]:
    """``work(i)`` for i in range(threads), run in as many threads, started together."""
    barrier = threading.Barrier(threads)

    def run(i: int) -> Any:
        barrier.wait(timeout=30)
        return work(i)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(run, range(threads)))  # re-raises a thread's exception


class SlowCounting:
    """The NumPy backend, counting its compiles; each compile takes a while, so that
    threads asking for the same graph overlap inside it."""

    name = "slow-counting"

    def __init__(self) -> None:
        self.compiles = 0
        self._lock = threading.Lock()

    def compile(self, inputs: Sequence[Var], outputs: Sequence[Var]) -> Any:
        with self._lock:
            self.compiles += 1
        threading.Event().wait(0.05)
        return NUMPY_BACKEND.compile(inputs, outputs)


def _model(x: Var, s: Var, k: int) -> Var:
    """A small graph with rewrites to do (log(1 + exp(.)) is softplus, x * 1 is x)."""
    return rt.log(1 + rt.exp(x * s * 1.0)).sum() + k * rt.sum(x * x)


def _expected(x: np.ndarray, s: float, k: int) -> float:
    return float(np.logaddexp(0.0, x * s).sum() + k * np.sum(x * x))


def test_the_same_expression_built_in_eight_threads_is_one_node():
    x, s = rt.vector("x"), rt.scalar("s")

    def build(i: int) -> list[Var]:
        # fresh nodes every time (the constants are new), so the threads race to create them
        return [_model(x, s, 1000 + j) for j in range(150)]

    built = _together(build)
    for other in built[1:]:
        assert all(a is b for a, b in zip(built[0], other, strict=True))
    assert _model(x, s, 1000) is built[0][0]


def test_a_graph_compiled_from_eight_threads_at_once_is_compiled_once():
    backend = SlowCounting()
    x, s = rt.vector("x"), rt.scalar("s")
    y = _model(x, s, 3)
    functions = _together(lambda i: rk.function([x, s], y, backend=backend))
    assert backend.compiles == 1
    assert all(f._fn is functions[0]._fn for f in functions)
    data = np.array([0.5, -2.0, 40.0])
    for f in functions:
        np.testing.assert_allclose(f(data, 0.5), _expected(data, 0.5, 3), rtol=1e-12)


def test_a_jax_function_first_called_from_eight_threads_at_once_compiles_once():
    import jax

    compiles: list[str] = []

    def listen(name: str, duration: float, **kwargs: Any) -> None:
        if name == "/jax/core/compile/backend_compile_duration":
            compiles.append(name)

    x, s = rt.vector("x"), rt.scalar("s")
    y = _model(x, s, 5) * rt.cos(s)
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        data = np.array([1.0, -1.0])
        values = _together(lambda i: float(rk.function([x, s], y)(data, 0.5)))
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert len(compiles) == 1
    np.testing.assert_allclose(values, _expected(data, 0.5, 5) * np.cos(0.5), rtol=1e-12)


def test_eight_threads_rewrite_the_same_graph_to_the_same_nodes():
    x, s = rt.vector("x"), rt.scalar("s")
    y = _model(x, s, 2)
    rewritten = _together(lambda i: rk.rewrite(y, "default"))
    assert all(r is rewritten[0] for r in rewritten)
    assert rk.rewrite(y, "default") is rewritten[0]


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_eight_threads_compile_and_call_the_same_and_different_graphs(backend):
    x, s = rt.vector("x"), rt.scalar("s")
    data = np.linspace(-3.0, 3.0, 7)

    def work(i: int) -> list[float]:
        k = i % 3  # threads 0, 3, 6 share a graph, and so on; the others differ
        f = rk.function([x, s], _model(x, s, k), backend=backend)
        g = rk.function([x, s], [rt.cumsum(x * s) - k, rt.sort(x)[::-1]], backend=backend)
        results = []
        for step in range(5):
            scale = 0.25 * (step + i)
            results.append(float(f(data, scale)) - _expected(data, scale, k))
            total, ordered = g(data, scale)
            np.testing.assert_allclose(total, np.cumsum(data * scale) - k, rtol=1e-12)
            np.testing.assert_array_equal(ordered, np.sort(data)[::-1])
        return results

    for errors in _together(work):
        np.testing.assert_allclose(errors, 0.0, atol=1e-9)


def test_the_compile_cache_and_intern_tables_stay_consistent_under_churn():
    """Threads build, compile and drop graphs while others do the same: entries freed in
    one thread (weak-reference callbacks) never break another's lookups."""
    x = rt.vector("x")

    def work(i: int) -> None:
        for j in range(40):
            y = rt.exp(x * (i + j % 5)) + j  # some shared between threads, some not
            f = rk.function([x], y, backend="numpy")
            np.testing.assert_allclose(f(np.zeros(2)), np.ones(2) + j)
            del y, f

    _together(work)
    stats = rk.intern_stats()
    assert stats.applies_live >= 0 and stats.applies_created > 0


FRESH_PROCESS = """
import threading
from concurrent.futures import ThreadPoolExecutor
import numpy as np
import rewritekit as rk
import rewritekit.tensor as rt

barrier = threading.Barrier(8)

def work(i):
    x = rt.vector("x")
    barrier.wait(timeout=60)
    backend = "jax" if i % 2 else "numpy"
    f = rk.function([x], rt.sum(rt.exp(x) * i) + rt.sort(x)[0], backend=backend)
    return float(f(np.zeros(3)))

with ThreadPoolExecutor(8) as pool:
    print(*pool.map(work, range(8)))
"""


def test_the_first_compiles_of_a_process_from_eight_threads_at_once():
    """The backends load their implementations on first use (JAX's on the first compile):
    eight threads doing that at once in a fresh process all get working functions."""
    root = pathlib.Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    assert [float(v) for v in done.stdout.split()] == [3.0 * i for i in range(8)]
