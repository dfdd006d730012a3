"""The gradient of ``where`` gets an exact zero from the branch it did not take.

``where(c, a, b)`` sends ``where(c, g, 0)`` to ``a`` and ``where(c, 0, g)`` to ``b``. The
differentiator applies an elementwise vjp to ``g`` and masks the result again, so the
masked positions stay exact zeros whatever the untaken branch's derivative is there
(``0 * nan`` would be NaN). ``jax.grad`` gives NaN in these cases; it serves here only as
the oracle for the branch taken, evaluated at points inside that branch's domain.

The graphs are differentiated as written (``stabilize=False``) and compiled with
``rules="fast_compile"`` (folding only), so no rewrite rule can be what fixes them; the
table of ``docs/gradients.md`` is checked with the default rules too.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.ir import toposort
from rewritekit.tensor.gradient import split_masks
from rewritekit.tensor.ufunc import shape_sources

BACKENDS = ("numpy", "jax")
TINY = float(np.nextafter(0.0, 1.0))  # the smallest subnormal
LENGTH = 6  # points per Op in each draw: one compiled function serves every draw
RTOL = 1e-9


def _grad_values(inputs, grads, args, backend, rules="fast_compile"):
    f = rk.function(inputs, grads, backend=backend, rules=rules)
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in f(*args)]


def _reference(fn, points):
    """``fn``'s derivative at each point, by ``jax.grad``."""
    with jax.enable_x64(True):
        return np.asarray(jax.vmap(jax.grad(fn))(jnp.asarray(points, dtype=jnp.float64)))


# --- the cases of docs/gradients.md ------------------------------------------------------

TABLE = [
    ("where(x < 7, x, sqrt(x - 7))", lambda x: rt.where(x < 7, x, rt.sqrt(x - 7)), 5.0, 1.0),
    ("where(x > 0, log(x), 0)", lambda x: rt.where(x > 0, rt.log(x), 0.0), -1.0, 0.0),
    ("where(x > 0, log(x), 0)", lambda x: rt.where(x > 0, rt.log(x), 0.0), 0.0, 0.0),
    ("where(x > 0, sqrt(x), 0)", lambda x: rt.where(x > 0, rt.sqrt(x), 0.0), 0.0, 0.0),
    ("where(x > 0, sqrt(x), 0)", lambda x: rt.where(x > 0, rt.sqrt(x), 0.0), -1.0, 0.0),
    ("where(abs(x) < 1, arcsin(x), x)", lambda x: rt.where(abs(x) < 1, rt.arcsin(x), x), 2.0, 1.0),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rules", ["default", "fast_compile"])
@pytest.mark.parametrize("stabilize", [True, False], ids=["stabilize", "as_written"])
@pytest.mark.parametrize(
    ("build", "point", "expected"),
    [pytest.param(*case[1:], id=f"{case[0]} at {case[2]}") for case in TABLE],
)
def test_documented_where_gradients_are_exact(build, point, expected, stabilize, rules, backend):
    x, v = rt.scalar("x"), rt.vector("v")
    grads = [rk.grad(c, w, stabilize=stabilize) for c, w in ((build(x), x), (rt.sum(build(v)), v))]
    got_scalar, got_vector = _grad_values([x, v], grads, [point, np.array([point])], backend, rules)
    # exact, and +0.0 rather than -0.0 (the masked zero is the constant 0)
    assert got_scalar.tobytes() == np.float64(expected).tobytes(), got_scalar
    assert got_vector.tobytes() == np.array([expected]).tobytes(), got_vector


def test_the_untaken_branch_gets_a_masked_cotangent():
    x = rt.vector("x")
    taken = x > 0
    g = rk.grad(rt.sum(rt.where(taken, rt.sqrt(x), 0.0)), x, stabilize=False)
    masks, _ = split_masks(g)
    assert masks == [(taken, False)]


def test_elementwise_results_know_which_input_has_their_shape():
    # x * log(x) - 7 has x's run-time shape although every static length is unknown, so
    # the cotangents of x and log(x) need no summing back (and their masks stay masks)
    x, z = rt.vector("x"), rt.vector("z")
    y, w = x * rt.log(x) - 7, x * z
    sources = shape_sources(toposort([y, w]))
    assert sources[y] is x and sources[rt.log(x)] is x
    assert w not in sources  # x or z may be the one of length 1


# --- every Op with a restricted domain, as the untaken branch -----------------------------


@dataclass(frozen=True)
class Restricted:
    """An Op used where its domain excludes some inputs.

    ``inside(u, m)`` says where the Op is taken (``m`` is ``rt`` or ``np``); ``outside``
    lists edge points where it is not (its derivative is infinite or NaN there) and
    ``beyond`` intervals of them; ``within`` is an interval inside and ``more`` lists more
    points inside. No subnormal is drawn inside: XLA on CPU flushes them to zero, so the
    JAX backend takes them as 0 (and outside these domains).
    """

    name: str
    build: Callable
    reference: Callable
    inside: Callable
    outside: tuple[float, ...]
    beyond: tuple[tuple[float, float], ...]
    within: tuple[float, float]
    more: tuple[float, ...] = ()


ONE_UP, ONE_DOWN = float(np.nextafter(1.0, 2.0)), float(np.nextafter(1.0, 0.0))
POSITIVE = {
    "inside": lambda u, m: u > 0,
    "outside": (0.0, -0.0, -TINY),
    "beyond": ((-10.0, -TINY),),
    "within": (1e-3, 10.0),
}
UNIT = {
    "inside": lambda u, m: m.abs(u) < 1,
    "outside": (1.0, -1.0, ONE_UP, -ONE_UP),
    "beyond": ((-10.0, -1.0), (1.0, 10.0)),
    "within": (-0.99, 0.99),
    "more": (ONE_DOWN, -ONE_DOWN),
}
NONZERO = {
    "inside": lambda u, m: m.not_equal(u, 0),
    "outside": (0.0, -0.0),
    "beyond": (),
    "within": (0.1, 10.0),
    "more": (-0.5, -3.0),
}
POLES = {  # gammaln and digamma at the non-positive integers
    "inside": lambda u, m: u > 0,
    "outside": (0.0, -0.0, -1.0, -2.0, -3.0),
    "beyond": (),
    "within": (0.1, 10.0),
}
LOG1P = {
    "inside": lambda u, m: u > -1,
    "outside": (-1.0, -ONE_UP, -2.0),
    "beyond": ((-10.0, -1.0),),
    "within": (-0.99, 10.0),
    "more": (-ONE_DOWN,),
}
ARCCOSH = {
    "inside": lambda u, m: u > 1,
    "outside": (1.0, ONE_DOWN, 0.0, -0.0),
    "beyond": ((-10.0, 1.0),),
    "within": (1.01, 10.0),
    "more": (ONE_UP,),
}
LOGIT = {
    "inside": lambda u, m: m.logical_and(u > 0, u < 1),
    "outside": (0.0, -0.0, 1.0, ONE_UP),
    "beyond": ((-10.0, 0.0), (1.0, 10.0)),
    "within": (0.01, 0.99),
}
LOG1MEXP = {
    "inside": lambda u, m: u < 0,
    "outside": (0.0, -0.0, TINY),
    "beyond": ((TINY, 10.0),),
    "within": (-50.0, -1e-3),
}


def _log1mexp(u):
    """log(1 - exp(u)) in JAX, each branch where it is accurate (Maechler, 2012), with the
    double where (jax.grad of log(-expm1(u)) loses precision below -log(2))."""
    near = u > -np.log(2.0)
    above, below = jnp.where(near, u, -1.0), jnp.where(near, -1.0, u)
    return jnp.where(near, jnp.log(-jnp.expm1(above)), jnp.log1p(-jnp.exp(below)))


OPS = [
    Restricted("sqrt", rt.sqrt, jnp.sqrt, **POSITIVE),
    Restricted("log", rt.log, jnp.log, **POSITIVE),
    Restricted("log2", rt.log2, jnp.log2, **POSITIVE),
    Restricted("log10", rt.log10, jnp.log10, **POSITIVE),
    Restricted("log1p", rt.log1p, jnp.log1p, **LOG1P),
    Restricted("arcsin", rt.arcsin, jnp.arcsin, **UNIT),
    Restricted("arccos", rt.arccos, jnp.arccos, **UNIT),
    Restricted("arctanh", rt.arctanh, jnp.arctanh, **UNIT),
    Restricted("erfinv", rt.erfinv, jsp.erfinv, **UNIT),
    Restricted("arccosh", rt.arccosh, jnp.arccosh, **ARCCOSH),
    Restricted("logit", rt.logit, jsp.logit, **LOGIT),
    Restricted("reciprocal", rt.reciprocal, lambda u: 1 / u, **NONZERO),
    Restricted("true_divide", lambda u: 2.0 / u, lambda u: 2.0 / u, **NONZERO),
    Restricted("arctan2", lambda u: rt.arctan2(u, u), lambda u: jnp.arctan2(u, u), **NONZERO),
    Restricted("power_half", lambda u: u**0.5, lambda u: u**0.5, **POSITIVE),
    Restricted("power_three_halves", lambda u: u**1.5, lambda u: u**1.5, **POSITIVE),
    Restricted("power_minus_half", lambda u: u**-0.5, lambda u: u**-0.5, **POSITIVE),
    Restricted("xlogy_self", lambda u: rt.xlogy(u, u), lambda u: jsp.xlogy(u, u), **POSITIVE),
    Restricted("xlogy_y", lambda u: rt.xlogy(2.0, u), lambda u: jsp.xlogy(2.0, u), **POSITIVE),
    Restricted("log1mexp", rt.log1mexp, _log1mexp, **LOG1MEXP),
    Restricted("gammaln", rt.gammaln, jsp.gammaln, **POLES),
    Restricted("digamma", rt.digamma, jsp.digamma, **POLES),
    # an elementwise Op whose derivative is a vjp method, not a table rule
    Restricted("trigamma", lambda u: rt.polygamma(1, u), lambda u: jsp.polygamma(1, u), **POLES),
]
# the branch taken where the Op is not: (rt form, jax form)
SAFE = [
    (lambda u: 3.0 * u, lambda u: 3.0 * u),
    (rt.sin, jnp.sin),
    (lambda u: u * u - u, lambda u: u * u - u),
]


def _safe(index):
    return SAFE[index % len(SAFE)]


def _piecewise(index, u, order):
    op, (safe, _) = OPS[index], _safe(index)
    taken = op.inside(u, rt)
    if order == "restricted_first":
        return rt.where(taken, op.build(u), safe(u))
    return rt.where(rt.logical_not(taken), safe(u), op.build(u))


@functools.cache
def _compiled(order, backend):
    """The gradients of every Op's piecewise function, one input vector per Op."""
    us = [rt.vector(op.name) for op in OPS]
    cost = rt.sum(rt.stack([rt.sum(_piecewise(i, u, order)) for i, u in enumerate(us)]))
    grads = rk.grad(cost, us, stabilize=False)
    return rk.function(us, grads, backend=backend, rules="fast_compile")


@functools.cache
def _oracle():
    """jax.grad of each Op and of its safe branch, elementwise, in one jitted function."""

    def grads(*us):
        pairs = []
        for i, u in enumerate(us):
            pairs.append(
                (jax.vmap(jax.grad(OPS[i].reference))(u), jax.vmap(jax.grad(_safe(i)[1]))(u))
            )
        return pairs

    return jax.jit(grads)


def _points(op):
    outside = [st.sampled_from(op.outside)] + [st.floats(lo, hi) for lo, hi in op.beyond]
    inside = [st.floats(*op.within, exclude_min=True, exclude_max=True)]
    inside += [st.sampled_from(op.more)] if op.more else []
    return st.lists(st.one_of(*outside, *inside), min_size=LENGTH, max_size=LENGTH)


@pytest.mark.parametrize("order", ["restricted_first", "restricted_second"])
@settings(max_examples=25)
@given(data=st.data())
def test_untaken_branches_out_of_their_domain_give_exact_zeros(order, data):
    arrays = [np.array(data.draw(_points(op), label=op.name)) for op in OPS]
    with jax.enable_x64(True), np.errstate(all="ignore"):
        oracle = [(np.asarray(a), np.asarray(b)) for a, b in _oracle()(*arrays)]
    for backend in BACKENDS:
        with np.errstate(all="ignore"):
            got = [np.asarray(g) for g in _compiled(order, backend)(*arrays)]
        for op, u, g, (restricted, safe) in zip(OPS, arrays, got, oracle, strict=True):
            taken = op.inside(u, np)
            message = f"{op.name} ({order}, {backend}) at {u.tolist()}: got {g.tolist()}"
            assert np.all(np.isfinite(g[~taken])), message
            np.testing.assert_allclose(
                g, np.where(taken, restricted, safe), rtol=RTOL, atol=0, err_msg=message
            )


# --- nesting, sums, broadcasting, repeated uses, higher derivatives -----------------------

# arccosh above 1, log1p on (-1, 1], the identity below: arccosh is undefined below 1 and
# log1p below -1, and both have infinite derivatives at their edges
EDGES = (1.0, ONE_UP, ONE_DOWN, -1.0, -ONE_UP, 0.0, -0.0, TINY, -TINY)


def _nested(u, m):
    if m is rt:
        return rt.where(u > 1, rt.arccosh(u), rt.where(u > -1, rt.log1p(u), u))
    return jnp.where(u > 1, jnp.arccosh(u), jnp.where(u > -1, jnp.log1p(u), u))


@settings(max_examples=25)
@given(points=st.lists(st.sampled_from(EDGES) | st.floats(-5.0, 5.0), min_size=5, max_size=5))
def test_nested_wheres(points):
    u = np.array(points)
    v = rt.vector("v")
    g = rk.grad(rt.sum(_nested(v, rt)), v, stabilize=False)
    expected = np.where(
        u > 1,
        _reference(jnp.arccosh, np.where(u > 1, u, 2.0)),
        np.where(u > -1, _reference(jnp.log1p, np.where(u > -1, u, 0.0)), 1.0),
    )
    for backend in BACKENDS:
        (got,) = _grad_values([v], [g], [u], backend)
        assert np.all(np.isfinite(got[u <= 1])), (backend, u, got)
        np.testing.assert_allclose(got, expected, rtol=RTOL, err_msg=f"{backend} at {u}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_condition_broadcast_against_the_branches(backend):
    # the condition larger than the branch (a matrix over a vector) and smaller (a vector
    # over a matrix): the cotangent of v is summed over rows, masked position by position
    v, m = rt.vector("v"), rt.matrix("m")
    bigger = rt.sum(rt.where(m > 0, rt.sqrt(v), v))
    smaller = rt.sum(rt.where(v > 0, rt.log(m * v), m))
    grads = [rk.grad(bigger, v, stabilize=False), rk.grad(smaller, v, stabilize=False)]
    a = np.array([-1.0, 0.0, 4.0])
    b = np.array([[-1.0, -2.0, 1.0], [-3.0, 0.0, 2.0]])
    got_bigger, got_smaller = _grad_values([v, m], grads, [a, b], backend)
    sqrt_prime = _reference(jnp.sqrt, np.where(a > 0, a, 1.0))
    np.testing.assert_allclose(got_bigger, np.where(b > 0, sqrt_prime, 1.0).sum(axis=0))
    np.testing.assert_array_equal(got_smaller[:2], [0.0, 0.0])
    np.testing.assert_allclose(got_smaller[2], 2 * _reference(jnp.log, a[2:])[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_mask_survives_summing_back_to_a_broadcast_scalar(backend):
    # t is broadcast against d: its cotangent is a sum over d's positions, an exact zero
    # when every position is masked, whether the condition is a vector or a scalar
    t, d = rt.scalar("t"), rt.vector("d")
    by_vector = rt.sum(rt.where(d > 0, d * rt.log(t), 0.0))
    by_scalar = rt.sum(rt.where(t > 0, d * rt.log(t), 0.0))
    grads = [rk.grad(by_vector, t, stabilize=False), rk.grad(by_scalar, t, stabilize=False)]
    negative, mixed = np.array([-1.0, -2.0]), np.array([-1.0, 3.0])
    for t_value in (0.0, -0.0, -1.0):
        got = _grad_values([t, d], grads, [t_value, negative], backend)
        assert [float(g) for g in got] == [0.0, 0.0]
    # where a position takes the branch, its derivative d / t counts (here 3 / 2)
    got = _grad_values([t, d], grads, [2.0, mixed], backend)
    np.testing.assert_allclose(got[0], 3.0 * _reference(jnp.log, [2.0])[0])
    assert float(got[1]) == float(np.sum(mixed) * _reference(jnp.log, [2.0])[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_shared_subexpressions_under_several_wheres(backend):
    # sqrt(v) is used by two wheres with the same condition: the cotangents' common mask
    # stays outermost when they are added, so sqrt's vjp is masked too
    v = rt.vector("v")
    s = rt.sqrt(v)
    cost = rt.sum(rt.where(v > 0, s, 0.0) + rt.where(v > 0, 2.0 * s, 1.0))
    (got,) = _grad_values(
        [v], [rk.grad(cost, v, stabilize=False)], [np.array([-1.0, 0.0, 4.0])], backend
    )
    np.testing.assert_array_equal(got[:2], [0.0, 0.0])
    np.testing.assert_allclose(got[2], 3.0 * _reference(jnp.sqrt, [4.0])[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_second_derivatives_jvp_and_jacobian_through_where(backend):
    v = rt.vector("v")
    y = rt.where(v > 0, rt.sqrt(v), v)
    first = rk.grad(rt.sum(y), v, stabilize=False)
    second = rk.grad(rt.sum(first), v, stabilize=False)
    tangent = rk.jvp(y, v, rt.ones_like(v))
    jac = rk.jacobian(y, v)
    a = np.array([-1.0, 0.0, -0.0, 0.25, 4.0])
    got = _grad_values([v], [first, second, tangent, jac], [a], backend)
    where_taken = np.where(a > 0, a, 1.0)
    d1 = np.where(a > 0, _reference(jnp.sqrt, where_taken), 1.0)
    d2 = np.where(a > 0, _reference(jax.grad(jnp.sqrt), where_taken), 0.0)
    np.testing.assert_allclose(got[0], d1, rtol=RTOL)
    np.testing.assert_allclose(got[1], d2, rtol=RTOL)
    np.testing.assert_allclose(got[2], d1, rtol=RTOL)
    np.testing.assert_allclose(got[3], np.diag(d1), rtol=RTOL)
    assert np.all(np.isfinite(got[1][a <= 0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_edges(backend):
    v = rt.vector("v", dtype="float32")
    g = rk.grad(rt.sum(rt.where(v > 0, rt.log(v), v)), v, stabilize=False)
    tiny32 = np.nextafter(np.float32(0), np.float32(1))
    a = np.array([0.0, -0.0, -tiny32, -2.0, 2.0], dtype="float32")
    (got,) = _grad_values([v], [g], [a], backend)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got[:4], np.ones(4, dtype="float32"))
    assert got[4] == np.float32(_reference(jnp.log, [2.0])[0])
