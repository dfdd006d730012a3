"""The JAX backend calls one ``lax`` primitive for an elementwise node whose float operands
already share the computation dtype and a shape (``backends/jax/elemwise.py``,
``PRIMITIVES``): the jaxpr is the one ``jnp``'s function traces, less its nested ``jit``, and
every other node still goes through ``jnp``."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.backends.jax import _load_implementations, jax_funcify
from rewritekit.tensor import elemwise as ew

_load_implementations()
from rewritekit.backends.jax import elemwise as jax_elemwise  # noqa: E402 (after the load)

UNARY = {
    ew.Negative,
    ew.Abs,
    ew.Square,
    ew.Exp,
    ew.Expm1,
    ew.Log,
    ew.Log1p,
    ew.Sqrt,
    ew.Sin,
    ew.Cos,
    ew.Tanh,
}
OPS = sorted(jax_elemwise.PRIMITIVES, key=lambda cls: cls.__name__)


def _flat(jaxpr):
    """The primitives of ``jaxpr`` with nested ``jit`` calls inlined: (name, params)."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in ("jit", "pjit"):
            found += _flat(eqn.params["jaxpr"].jaxpr)
        else:
            found.append((eqn.primitive.name, str(sorted(eqn.params.items()))))
    return found


def _implementations(cls, dtypes, shapes):
    pairs = enumerate(zip(dtypes, shapes, strict=True))
    vars_ = [rt.tensor(f"v{i}", dtype=d, shape=s) for i, (d, s) in pairs]
    node = cls()(*vars_).owner
    general = jax_elemwise.elemwise_impl(jax_elemwise.TABLE[cls], node)
    return jax_funcify(node.op, node), general


def _values(dtypes, shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [
        (rng.uniform(size=s) < 0.5) if d == "bool" else rng.uniform(0.1, 2.0, size=s).astype(d)
        for d, s in zip(dtypes, shapes, strict=True)
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cls", OPS, ids=lambda cls: cls.__name__)
def test_primitive_traces_what_jnp_traces(cls, dtype):
    arity = 1 if cls in UNARY else 2
    layouts = [[(3,)] * arity] + ([[(3,), ()], [(), (3,)]] if arity == 2 else [])
    for shapes in layouts:
        fast, general = _implementations(cls, [dtype] * arity, shapes)
        args = _values([dtype] * arity, shapes)
        with jax.enable_x64(True):
            mine, theirs = jax.make_jaxpr(fast)(*args), jax.make_jaxpr(general)(*args)
        assert _flat(mine.jaxpr) == _flat(theirs.jaxpr), (cls.__name__, shapes)
        assert not any(e.primitive.name in ("jit", "pjit") for e in mine.jaxpr.eqns)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_where_is_one_select(dtype):
    dtypes, shapes = ["bool", dtype, dtype], [(2, 3)] * 3
    fast, general = _implementations(ew.Where, dtypes, shapes)
    args = _values(dtypes, shapes)
    with jax.enable_x64(True):
        mine, theirs = jax.make_jaxpr(fast)(*args), jax.make_jaxpr(general)(*args)
    assert [e.primitive.name for e in mine.jaxpr.eqns] == ["select_n"]
    assert _flat(mine.jaxpr) == _flat(theirs.jaxpr)


@pytest.mark.parametrize(
    ("cls", "dtypes", "shapes"),
    [
        (ew.Add, ["float64", "float64"], [(2, 3), (3,)]),  # broadcasting: jnp's
        (ew.Add, ["float32", "float64"], [(3,), (3,)]),  # a cast: jnp's
        (ew.Add, ["int64", "int64"], [(3,), (3,)]),  # not float: jnp's
        (ew.TrueDivide, ["int32", "int32"], [(3,), (3,)]),
        (ew.Where, ["bool", "float64", "float64"], [(3,), (3,), ()]),
    ],
)
def test_other_operands_go_through_jnp(cls, dtypes, shapes):
    fast, general = _implementations(cls, dtypes, shapes)
    args = _values(dtypes, shapes)
    with jax.enable_x64(True):
        mine, theirs = jax.make_jaxpr(fast)(*args), jax.make_jaxpr(general)(*args)
        np.testing.assert_array_equal(np.asarray(fast(*args)), np.asarray(general(*args)))
    assert str(mine) == str(theirs)


_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=40, deadline=None)
@given(st.lists(_FLOATS, min_size=3, max_size=3), st.lists(_FLOATS, min_size=3, max_size=3))
def test_a_graph_of_primitives_matches_numpy(xs, ys):
    """Values through the primitives are the NumPy backend's (NaN and inf included)."""
    x, y = rt.vector("x", shape=(3,)), rt.vector("y", shape=(3,))
    out = rt.where(x < y, rt.exp(x) * y - rt.log1p(rt.abs(y)), rt.maximum(x, y) / (y + 0.5))
    fs = [rk.function([x, y], out, backend=b, rules=None) for b in ("numpy", "jax")]
    args = [np.array(xs), np.array(ys)]
    with np.errstate(all="ignore"):
        reference = fs[0](*args)
    np.testing.assert_allclose(fs[1](*args), reference, rtol=1e-12, atol=0)
