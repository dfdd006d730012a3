"""rk.function's compile cache: a graph compiled again is reused, and freed with the graph;
``f.jitted``, the bare callable for hot loops."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit import compile as compile_module
from rewritekit.backends.numpy import NUMPY_BACKEND
from rewritekit.ir import Var
from rewritekit.rules import RuleSet, lvar, rule
from rewritekit.rules.library import NAMED


class Counting:
    """The NumPy backend, counting its compiles and keeping a weak reference to each
    compiled callable."""

    name = "counting"

    def __init__(self) -> None:
        self.compiles = 0
        self.made: list[weakref.ref[Any]] = []

    def compile(self, inputs: Sequence[Var], outputs: Sequence[Var]) -> Any:
        self.compiles += 1
        fn = NUMPY_BACKEND.compile(inputs, outputs)

        def call(*args: Any) -> list[Any]:
            return fn(*args)

        self.made.append(weakref.ref(call))
        return call


def _graph() -> tuple[Var, Var, Var]:
    x, s = rt.vector("x"), rt.scalar("s")
    return x, s, rt.log(1 + rt.exp(x * s)).sum()


def test_the_same_graph_compiles_once_and_shares_the_compiled_callable():
    backend = Counting()
    x, s, y = _graph()
    f = rk.function([x, s], y, backend=backend)
    g = rk.function([x, s], y, backend=backend)
    assert backend.compiles == 1
    assert g is not f and g._fn is f._fn
    assert g.graph is f.graph and g.trace == f.trace and len(f.trace) > 0
    data = np.array([0.5, -2.0])
    expected = np.log1p(np.exp(data * 3.0)).sum()
    np.testing.assert_allclose(g(data, 3.0), expected, rtol=1e-12)
    np.testing.assert_allclose(f(data, 3.0), expected, rtol=1e-12)


def test_a_rebuilt_expression_over_the_same_inputs_is_the_same_graph():
    backend = Counting()
    x = rt.vector("x")
    f = rk.function([x], [rt.exp(x) + 1, x], backend=backend)
    g = rk.function([x], (rt.exp(x) + 1, x), backend=backend)  # hash-consed: same nodes
    h = rk.function([x], rt.exp(x) + 1, backend=backend)  # one output: another graph
    assert backend.compiles == 2 and g._fn is f._fn and h._fn is not f._fn
    assert isinstance(g(np.zeros(2)), list) and not isinstance(h(np.zeros(2)), list)


def test_per_function_settings_stay_per_function():
    backend = Counting()
    x, s, y = _graph()
    f = rk.function([x, s], y, backend=backend)
    g = rk.function([x, s], y, backend=backend, trust_input=True, check_rewrites=True)
    assert backend.compiles == 1
    assert not f.trust_input and not f.check_rewrites and g.trust_input and g.check_rewrites
    with pytest.raises(TypeError, match="takes 2 arguments"):
        f(np.zeros(2))
    np.testing.assert_allclose(g(np.zeros(2), 1.0), 2 * np.log(2.0), rtol=1e-12)


def test_other_rules_inputs_or_backend_compile_anew():
    backend, other = Counting(), Counting()
    x, s, y = _graph()
    rk.function([x, s], y, backend=backend)
    rk.function([x, s], y, backend=backend, rules=None)
    rk.function([x, s], y, backend=backend, rules="fast_compile")
    assert backend.compiles == 3
    rk.function([s, x], y, backend=backend)  # another order is another signature
    assert backend.compiles == 4
    rk.function([x, s], y, backend=other)
    assert backend.compiles == 4 and other.compiles == 1
    rk.function([x, s], y, backend=backend, rules=None)  # and each of those is cached
    rk.function([x, s], y, backend=backend, rules="fast_compile")
    assert backend.compiles == 4


def test_rule_sets_match_by_their_rules():
    backend = Counting()
    a = lvar("a")
    log1p = rule(rt.log(1 + a), rt.log1p(a), name="log1p")
    exp_log = rule(rt.exp(rt.log(a)), a, name="exp_log")
    x = rt.vector("x")
    y = rt.log(1 + x)
    f = rk.function([x], y, backend=backend, rules=[log1p])
    assert rk.function([x], y, backend=backend, rules=[log1p])._fn is f._fn  # a new list
    assert rk.function([x], y, backend=backend, rules=log1p)._fn is f._fn
    assert rk.function([x], y, backend=backend, rules=RuleSet([log1p]))._fn is f._fn
    assert backend.compiles == 1
    rk.function([x], y, backend=backend, rules=[log1p, exp_log])
    rk.function([x], y, backend=backend, rules=[exp_log, log1p])  # order is priority
    assert backend.compiles == 3
    assert rk.function([x], y, backend=backend, rules=NAMED["default"]).trace[0].rule


def test_cache_false_compiles_anew_and_leaves_the_cache_alone():
    backend = Counting()
    x, s, y = _graph()
    f = rk.function([x, s], y, backend=backend, cache=False)
    g = rk.function([x, s], y, backend=backend, cache=False)
    assert backend.compiles == 2 and g._fn is not f._fn
    np.testing.assert_allclose(g(np.zeros(2), 1.0), f(np.zeros(2), 1.0))
    rk.function([x, s], y, backend=backend)  # nothing was stored
    assert backend.compiles == 3


def test_clear_cache_empties_it():
    backend = Counting()
    x, s, y = _graph()
    f = rk.function([x, s], y, backend=backend)
    assert compile_module.cache_size() >= 1
    compile_module.clear_cache()
    assert compile_module.cache_size() == 0
    g = rk.function([x, s], y, backend=backend)
    assert backend.compiles == 2 and g._fn is not f._fn
    np.testing.assert_allclose(f(np.zeros(2), 1.0), g(np.zeros(2), 1.0))


def test_the_cache_holds_graphs_weakly():
    backend = Counting()
    x, s, y = _graph()
    f = rk.function([x, s], y, backend=backend)
    gc.collect()  # no other test's garbage is freed while this one counts
    size = compile_module.cache_size()
    inputs, output = weakref.ref(x), weakref.ref(y)
    del x, s, y
    gc.collect()
    assert inputs() is not None and compile_module.cache_size() == size  # f holds them
    del f
    gc.collect()
    assert inputs() is None and output() is None
    assert compile_module.cache_size() == size - 1
    assert backend.made[0]() is None  # the compiled callable went with the entry


def _own_rules() -> list[Any]:
    a = lvar("a")
    return [rule(rt.log(1 + a), rt.log1p(a), name="log1p")]


@pytest.mark.parametrize("rules", ["default", None, "own"])
def test_a_cache_hit_finds_its_graph_and_trace_after_the_first_function_is_gone(rules):
    rules = _own_rules() if rules == "own" else rules
    backend = Counting()
    x, s, y = _graph()
    f = rk.function([x, s], [y, x], backend=backend, rules=rules)
    alive = rk.function([x, s], [y, x], backend=backend, rules=rules)
    assert alive.graph == f.graph and alive.trace is f.trace  # shared while f lives
    first_graph, first_trace = f.graph, [(e.rule, e.before, e.after) for e in f.trace]
    del f, alive
    gc.collect()  # the first trace is freed; the cache entry stays (x, s, y live)
    g = rk.function([x, s], [y, x], backend=backend, rules=rules)
    assert backend.compiles == 1
    assert g.graph == first_graph and g.graph[1] is x  # hash-consed: the same nodes
    assert [(e.rule, e.before, e.after) for e in g.trace] == first_trace
    assert rk.graph_inputs(g.graph) == [x, s]
    np.testing.assert_allclose(g(np.zeros(2), 1.0)[0], 2 * np.log(2.0), rtol=1e-12)


def test_functions_of_no_inputs_are_not_cached():
    backend = Counting()
    y = rt.constant([1.0, 2.0]) * 2
    rk.function([], y, backend=backend)
    rk.function([], y, backend=backend)
    assert backend.compiles == 2


def test_jax_functions_share_the_jitted_callable():
    x, s, y = _graph()
    f = rk.function([x, s], y)
    g = rk.function([x, s], y, rules="default", backend="jax")
    assert g._fn is f._fn and g._fn.jitted is f._fn.jitted
    data = np.array([0.5, -2.0])
    np.testing.assert_allclose(g(data, 3.0), np.log1p(np.exp(data * 3.0)).sum(), rtol=1e-12)


def test_jitted_is_the_bare_callable():
    x = rt.vector("x", shape=(4,))
    f = rk.function([x], [x + 1, x * 2])
    with jax.enable_x64(True):
        step = f.jitted
        data = jax.numpy.arange(4.0)
        plus, times = step(data)
    assert step is f._fn.jitted() and plus.dtype == np.float64
    np.testing.assert_allclose(plus, np.arange(4.0) + 1)
    np.testing.assert_allclose(times, np.arange(4.0) * 2)


def test_jitted_refuses_a_64_bit_graph_where_64_bit_jax_is_off():
    x = rt.vector("x", shape=(4,))
    f = rk.function([x], x + 1)
    if jax.config.jax_enable_x64:
        pytest.skip("64-bit JAX is on in this process")
    with pytest.raises(RuntimeError, match="64-bit JAX is off"):
        f.jitted  # noqa: B018
    x32 = rt.vector("x32", dtype="float32", shape=(4,))
    g = rk.function([x32], x32 + 1)
    (out,) = g.jitted(np.arange(4.0, dtype=np.float32))
    assert out.dtype == np.float32


def test_jitted_exists_only_for_the_jax_backend():
    x = rt.vector("x")
    with pytest.raises(AttributeError, match="jitted exists only for the jax backend"):
        rk.function([x], x + 1, backend="numpy").jitted  # noqa: B018


def test_the_jax_call_restores_the_64_bit_setting():
    x = rt.vector("x")
    f = rk.function([x], x * 2)
    before = jax.config.jax_enable_x64
    assert f(np.ones(3)).dtype == np.float64
    assert jax.config.jax_enable_x64 == before
    with pytest.raises(ValueError, match="expected 1 dimensions"):
        f(np.ones((2, 2)))
    assert jax.config.jax_enable_x64 == before
