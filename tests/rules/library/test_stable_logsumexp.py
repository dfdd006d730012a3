"""The log-sum-exp family PyTensor stabilizes: log(exp(x) - exp(y)), the log of three or more
exps added, logsumexp and log_softmax through the layout Ops. Each reaches its stable form
under the default pipeline, is exact where the naive form breaks on both backends (float64
and float32), and keeps the naive form's values on moderate inputs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt

x, y, z, w = rt.vector("x"), rt.vector("y"), rt.vector("z"), rt.vector("w")
m = rt.matrix("m")
t = rt.tensor("t", shape=(None, None, None))
BACKENDS = ["numpy", "jax"]

STRUCTURE = [
    # log(exp(x) - exp(y)), in the forms canonicalize leaves
    ("log_diff_exp", rt.log(rt.exp(x) - rt.exp(y)), x + rt.log1mexp(y - x)),
    ("log_diff_exp_plus_neg", rt.log(rt.exp(x) + -rt.exp(y)), x + rt.log1mexp(y - x)),
    ("log_diff_exp_neg_first", rt.log(-rt.exp(y) + rt.exp(x)), x + rt.log1mexp(y - x)),
    ("log_diff_exp_negated", rt.log(-(rt.exp(y) - rt.exp(x))), x + rt.log1mexp(y - x)),
    # three or more exps, any grouping: nested logaddexp, left to right
    (
        "three_exps",
        rt.log(rt.exp(x) + rt.exp(y) + rt.exp(z)),
        rt.logaddexp(rt.logaddexp(x, y), z),
    ),
    (
        "three_exps_right",
        rt.log(rt.exp(x) + (rt.exp(y) + rt.exp(z))),
        rt.logaddexp(rt.logaddexp(x, y), z),
    ),
    (
        "four_exps_pairs",
        rt.log((rt.exp(x) + rt.exp(y)) + (rt.exp(z) + rt.exp(w))),
        rt.logaddexp(rt.logaddexp(rt.logaddexp(x, y), z), w),
    ),
    # logsumexp with the layout chain inside the sum: rebuilt over the input
    (
        "sum_of_transposed",
        rt.log(rt.sum(rt.transpose(rt.exp(m)), axis=0)),
        rt.logsumexp(rt.transpose(m), axis=0),
    ),
    (
        "sum_of_reshaped",
        rt.log(rt.sum(rt.reshape(rt.exp(m), (-1,)))),
        rt.logsumexp(rt.reshape(m, (-1,))),
    ),
    ("sum_of_indexed", rt.log(rt.sum(rt.exp(x)[1:])), rt.logsumexp(x[1:])),
    # ... outside the sum: rebuilt over the logsumexp
    (
        "expand_dims_of_sum",
        rt.log(rt.expand_dims(rt.sum(rt.exp(x)), 0)),
        rt.expand_dims(rt.logsumexp(x), 0),
    ),
    (
        "squeeze_of_sum",
        rt.log(rt.squeeze(rt.sum(rt.exp(m), axis=1, keepdims=True), 1)),
        rt.logsumexp(m, axis=1),
    ),
    (
        "broadcast_of_sum",
        rt.log(rt.broadcast_to(rt.sum(rt.exp(x)), (3,))),
        rt.broadcast_to(rt.logsumexp(x), (3,)),
    ),
    # ... on both sides, the axis given in the transposed order
    (
        "transposed_on_both_sides",
        rt.log(rt.transpose(rt.sum(rt.transpose(rt.exp(t), (2, 1, 0)), axis=1))),
        rt.transpose(rt.logsumexp(rt.transpose(t, (2, 1, 0)), axis=1)),
    ),
    # log(softmax) through the layout Ops
    ("log_softmax_indexed", rt.log(rt.softmax(x)[0]), rt.log_softmax(x)[0]),
    (
        "log_softmax_row",
        rt.log(rt.softmax(m, axis=0)[1]),
        rt.log_softmax(m, axis=0)[1],
    ),
    (
        "log_softmax_transposed",
        rt.log(rt.transpose(rt.softmax(m, axis=1))),
        rt.transpose(rt.log_softmax(m, axis=1)),
    ),
    (
        "log_softmax_reshaped",
        rt.log(rt.reshape(rt.softmax(m), (-1,))),
        rt.reshape(rt.log_softmax(m), (-1,)),
    ),
]


@pytest.mark.parametrize(("name", "graph", "expected"), STRUCTURE, ids=[c[0] for c in STRUCTURE])
def test_reaches_the_stable_form(name, graph, expected):
    assert rk.rewrite(graph) is expected


def test_types_are_kept_and_complex_inputs_are_left_alone():
    xf, yf = rt.vector("xf", dtype="float32"), rt.vector("yf", dtype="float32")
    xi = rt.vector("xi", dtype="int64")
    assert rk.rewrite(rt.log(rt.exp(xf) - rt.exp(yf))) is xf + rt.log1mexp(yf - xf)
    xd = rt.cast(xi, "float64")  # y - x happens in float64: xi - xi could wrap
    assert rk.rewrite(rt.log(rt.exp(xi) - rt.exp(x))) is xd + rt.log1mexp(x - xd)
    mixed = rt.log(rt.exp(xi) + rt.exp(xf) + rt.exp(yf))
    assert mixed.dtype == "float64"
    assert rk.rewrite(mixed) is rt.logaddexp(rt.logaddexp(xd, xf), yf)
    assert rk.rewrite(rt.log(rt.softmax(xf)[0])) is rt.log_softmax(xf)[0]
    xc = rt.vector("xc", dtype="complex128")
    mc = rt.matrix("mc", dtype="complex128")
    for graph in (
        rt.log(rt.exp(xc) - rt.exp(x)),
        rt.log(rt.exp(xc) + rt.exp(x) + rt.exp(y)),
        rt.log(rt.sum(rt.transpose(rt.exp(mc)), axis=0)),
        rt.log(rt.expand_dims(rt.sum(rt.exp(xc)), 0)),
    ):
        assert rk.rewrite(graph) is graph


def test_sums_that_are_not_all_exps_are_left_alone():
    two_and_one = rt.log(rt.exp(x) + rt.exp(y) + rt.sin(z))
    assert rk.rewrite(two_and_one) is two_and_one
    not_exp = rt.log(rt.sum(rt.transpose(rt.sin(m)), axis=0))
    assert rk.rewrite(not_exp) is not_exp


# --- values where the naive form breaks, on both backends --------------------------------

INF = np.inf

# (name, graph of the inputs, inputs, exact value (float64 reference))
POINTS = [
    (
        "log_diff_exp",
        lambda a, b: rt.log(rt.exp(a) - rt.exp(b)),
        ([100.0, 1000.0, -1000.0], [99.0, 999.0, -1001.0]),
        np.array([100.0, 1000.0, -1000.0]) + np.log1p(-np.exp(-1.0)),
    ),
    (
        "three_exps",
        lambda a, b: rt.log(rt.exp(a) + rt.exp(b) + rt.exp(a + b - 20000.0)),
        ([20000.0, -20000.0], [20000.0, 0.0]),
        sp.logsumexp([[20000.0, 20000.0, 20000.0], [-20000.0, 0.0, -40000.0]], axis=1),
    ),
    (
        "logsumexp_transposed",
        lambda a, b: rt.log(rt.sum(rt.transpose(rt.exp(rt.stack([a, b]))), axis=1)),
        ([1000.0, -1000.0], [999.0, -1001.0]),
        sp.logsumexp([[1000.0, 999.0], [-1000.0, -1001.0]], axis=1),
    ),
    (
        "logsumexp_expand_dims",
        lambda a, b: rt.log(rt.expand_dims(rt.sum(rt.exp(a - b)), 0)),
        ([1000.0, 1000.0], [0.0, 0.0]),
        [sp.logsumexp([1000.0, 1000.0])],
    ),
    (
        "logsumexp_reshaped",
        lambda a, b: rt.log(rt.sum(rt.reshape(rt.exp(rt.stack([a, b])), (-1,)))),
        ([1000.0, 998.0], [-1000.0, 999.0]),
        sp.logsumexp([1000.0, 998.0, -1000.0, 999.0]),
    ),
    (
        "log_softmax_indexed",
        lambda a, b: rt.log(rt.softmax(rt.concatenate([a, b]))[0]),
        ([0.0], [1010.0]),
        -1010.0 - np.log1p(np.exp(-1010.0)),
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("dtype", "rtol"), [("float64", 1e-13), ("float32", 1e-6)])
@pytest.mark.parametrize(("name", "build", "point", "exact"), POINTS, ids=[p[0] for p in POINTS])
def test_exact_where_the_naive_form_breaks(name, build, point, exact, dtype, rtol, backend):
    a, b = rt.vector("a", dtype=dtype), rt.vector("b", dtype=dtype)
    graph = build(a, b)
    inputs = [np.asarray(p, dtype=dtype) for p in point]
    with np.errstate(all="ignore"):
        naive = rk.function([a, b], graph, backend="numpy", rules=None)(*inputs)
    assert not np.allclose(naive, exact, rtol=1e-3), f"{name}: the naive form is already right"
    got = rk.function([a, b], graph, backend=backend)(*inputs)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, exact, rtol=rtol, atol=0)


def test_log_diff_exp_at_the_edges_is_as_written_but_for_both_minus_inf():
    xs = np.array([1.0, 2.0, 3.0, -INF, 2.0, 2.0, INF, INF, INF, -INF, np.nan, 1.0, -INF])
    ys = np.array([2.0, 2.0, -INF, 1.0, INF, -INF, 1.0, INF, -INF, INF, 1.0, np.nan, -INF])
    graph = rt.log(rt.exp(x) - rt.exp(y))
    with np.errstate(all="ignore"):
        written = rk.function([x, y], graph, backend="numpy", rules=None)(xs, ys)
    assert written[1] == -INF and np.isnan(written[0]) and written[6] == INF  # as numpy
    for backend in BACKENDS:
        got = np.asarray(rk.function([x, y], graph, backend=backend)(xs, ys))
        np.testing.assert_array_equal(got[:-1], written[:-1])
        # log(0 - 0) is -inf; y - x is -inf + inf, so x + log1mexp(y - x) is nan there
        assert written[-1] == -INF and np.isnan(got[-1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_infinite_and_nan_exps_added_are_as_written(backend):
    xs = np.array([-INF, INF, -INF, np.nan, 1.0])
    ys = np.array([-INF, 1.0, INF, 1.0, -INF])
    zs = np.array([-INF, -INF, INF, 1.0, 2.0])
    graph = rt.log(rt.exp(x) + rt.exp(y) + rt.exp(z))
    with np.errstate(all="ignore"):
        written = rk.function([x, y, z], graph, backend="numpy", rules=None)(xs, ys, zs)
    got = rk.function([x, y, z], graph, backend=backend)(xs, ys, zs)
    np.testing.assert_allclose(got, written, rtol=1e-15, equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_logsumexp_through_a_transpose_on_both_sides_moves_the_axes(backend):
    point = np.arange(24.0).reshape(2, 3, 4) * 100.0
    graph = rt.log(rt.transpose(rt.sum(rt.transpose(rt.exp(t), (2, 0, 1)), axis=1)))
    got = rk.function([t], graph, backend=backend)(point)
    exact = sp.logsumexp(np.transpose(point, (2, 0, 1)), axis=1).T
    np.testing.assert_allclose(got, exact, rtol=1e-14)


# --- property: rewriting keeps the naive form's values on moderate inputs ----------------


def _family(a, b):
    pair = rt.stack([a, b])
    return [
        rt.log(rt.exp(a) - rt.exp(b)),
        rt.log(-(rt.exp(b) - rt.exp(a))),
        rt.log(rt.exp(a) + rt.exp(b) + rt.exp(a * b)),
        rt.log(rt.sum(rt.transpose(rt.exp(pair)), axis=1)),
        rt.log(rt.expand_dims(rt.sum(rt.exp(pair), axis=0), 0)),
        rt.log(rt.sum(rt.exp(pair)[:, 1:], axis=1, keepdims=True)),
        rt.log(rt.softmax(pair, axis=0)[1]),
        rt.log(rt.transpose(rt.softmax(pair, axis=1))),
    ]


FAMILY_RULES = {
    "log1mexp_of_log_exp_minus_exp",
    "log1mexp_of_log_neg_exp_minus_exp",
    "logaddexp_of_log_added_exps",
    "logsumexp_of_log_sum_layout_exp",
    "logsumexp_of_log_layout_sum_exp",
    "log_softmax_of_log_layout_softmax",
}


def test_the_family_uses_every_new_rule():
    _, trace = rk.rewrite(_family(x, y), trace=True)
    assert {name.removeprefix("stabilize.") for name in trace.fired()} >= FAMILY_RULES


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(-10.0, 10.0, allow_subnormal=False), min_size=1, max_size=4),
    st.lists(st.floats(0.25, 5.0) | st.floats(-5.0, -0.25), min_size=4, max_size=4),
)
def test_rewritten_and_unrewritten_agree_on_moderate_inputs(values, gaps):
    av = np.asarray(values)
    bv = av - np.asarray(gaps[: len(av)])  # b < a mostly; b > a gives nan on both sides
    outputs = _family(x, y)
    plain = rk.function([x, y], outputs, backend="numpy", rules=None)(av, bv)
    for backend in BACKENDS:
        got = rk.function([x, y], outputs, backend=backend)(av, bv)
        for g, p in zip(got, plain, strict=True):
            np.testing.assert_allclose(g, p, rtol=1e-9, atol=1e-12, equal_nan=True)
