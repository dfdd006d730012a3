"""Order statistics, searches, paddings and weighted statistics (``rewritekit.tensor.ordering``
and ``numerics``): against NumPy on both backends, gradients against ``jax.grad`` of the
``jax.numpy`` functions and finite differences, batching against a loop, and their errors."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.testing import verify_grad

BACKENDS = ["numpy", "jax"]
RNG = np.random.default_rng(0)
A = RNG.normal(size=(3, 5))
A[1, 4] = A[1, 2]  # a tie
A[:, 3] = np.abs(A[:, 3]) + 1.0  # above 0.6: a column all NaN for the nan* functions (_nans)
S = np.sort(RNG.normal(size=6))
V = RNG.normal(size=(2, 4))
V[0, 0], V[1, 1], V[1, 2] = S[2], np.nan, np.inf
R = np.round(A * 2) + 0.0  # whole numbers
FW = np.array([1, 2, 1, 3, 1])


def _nans(x):
    """``x`` with NaN where it is above 0.6."""
    return rt.where(x > 0.6, np.nan, x) if isinstance(x, rk.Var) else np.where(x > 0.6, np.nan, x)


def _pad_cases():
    widths = {"reflect": (7, 11), "symmetric": ((4, 1), (6, 12)), "wrap": ((4, 7), (1, 12))}
    cases = {
        f"pad_{mode}": (
            lambda a, s, v, d, mode=mode, w=w: rt.pad(a, w, mode),
            lambda a, s, v, d, mode=mode, w=w: np.pad(a, w, mode),
        )
        for mode, w in widths.items()
    }
    cases["pad_constant"] = (
        lambda a, s, v, d: rt.pad(a, ((1, 2), (0, 3)), constant_values=((1.0, 2.0), (3.0, 4.0))),
        lambda a, s, v, d: np.pad(a, ((1, 2), (0, 3)), constant_values=((1.0, 2.0), (3.0, 4.0))),
    )
    cases["pad_edge_dynamic"] = (
        lambda a, s, v, d: rt.pad(d, [(2, 1)], "edge"),
        lambda a, s, v, d: np.pad(d, [(2, 1)], "edge"),
    )
    return cases


# name: (rewritekit on Vars (a, s, v, d), NumPy on arrays); d is `a` without static shape
CASES = {
    "searchsorted": (
        lambda a, s, v, d: rt.searchsorted(s, v),
        lambda a, s, v, d: np.searchsorted(s, v),
    ),
    "searchsorted_right": (
        lambda a, s, v, d: rt.searchsorted(s, v, "right"),
        lambda a, s, v, d: np.searchsorted(s, v, "right"),
    ),
    "searchsorted_sorter": (
        lambda a, s, v, d: rt.searchsorted(s[::-1], v, sorter=np.arange(5, -1, -1)),
        lambda a, s, v, d: np.searchsorted(s[::-1], v, sorter=np.arange(5, -1, -1)),
    ),
    "quantile": (
        lambda a, s, v, d: rt.quantile(d, [0.1, 0.5, 0.95], axis=1),
        lambda a, s, v, d: np.quantile(a, [0.1, 0.5, 0.95], axis=1),
    ),
    "quantile_flat": (
        lambda a, s, v, d: rt.quantile(a, 0.3),
        lambda a, s, v, d: np.quantile(a, 0.3),
    ),
    "quantile_nearest": (
        lambda a, s, v, d: rt.quantile(a, [0.125, 0.375, 0.625], 1, method="nearest"),
        lambda a, s, v, d: np.quantile(a, [0.125, 0.375, 0.625], 1, method="nearest"),
    ),
    "quantile_keepdims_higher": (
        lambda a, s, v, d: rt.quantile(a, [0.3, 0.7], 0, method="higher", keepdims=True),
        lambda a, s, v, d: np.quantile(a, [0.3, 0.7], 0, method="higher", keepdims=True),
    ),
    "percentile_lower": (
        lambda a, s, v, d: rt.percentile(a, 40, axis=1, method="lower"),
        lambda a, s, v, d: np.percentile(a, 40, axis=1, method="lower"),
    ),
    "median": (lambda a, s, v, d: rt.median(d, axis=0), lambda a, s, v, d: np.median(a, axis=0)),
    "median_nan": (lambda a, s, v, d: rt.median(v, axis=1), lambda a, s, v, d: np.median(v, 1)),
    "median_axes": (
        lambda a, s, v, d: rt.median(a, axis=(0, 1), keepdims=True),
        lambda a, s, v, d: np.median(a, axis=(0, 1), keepdims=True),
    ),
    "nanquantile": (
        lambda a, s, v, d: rt.nanquantile(_nans(d), [0.2, 0.8], axis=1, method="midpoint"),
        lambda a, s, v, d: np.nanquantile(_nans(a), [0.2, 0.8], axis=1, method="midpoint"),
    ),
    "nanmedian": (
        lambda a, s, v, d: rt.nanmedian(_nans(a), axis=0),
        lambda a, s, v, d: np.nanmedian(_nans(a), axis=0),
    ),
    "nanpercentile": (
        lambda a, s, v, d: rt.nanpercentile(_nans(a), 30, axis=1, keepdims=True),
        lambda a, s, v, d: np.nanpercentile(_nans(a), 30, axis=1, keepdims=True),
    ),
    "average": (
        lambda a, s, v, d: rt.average(d, axis=1, weights=s[:5] ** 2),
        lambda a, s, v, d: np.average(a, axis=1, weights=s[:5] ** 2),
    ),
    "average_returned": (
        lambda a, s, v, d: rt.average(a, weights=a * a, returned=True)[1],
        lambda a, s, v, d: np.average(a, weights=a * a, returned=True)[1],
    ),
    "average_count": (
        lambda a, s, v, d: rt.average(d, axis=0, returned=True)[1],
        lambda a, s, v, d: np.average(a, axis=0, returned=True)[1],
    ),
    "cov": (lambda a, s, v, d: rt.cov(d), lambda a, s, v, d: np.cov(a)),
    "cov_columns": (
        lambda a, s, v, d: rt.cov(a, rowvar=False, ddof=0),
        lambda a, s, v, d: np.cov(a, rowvar=False, ddof=0),
    ),
    "cov_y": (lambda a, s, v, d: rt.cov(a[0], a[1]), lambda a, s, v, d: np.cov(a[0], a[1])),
    "cov_weights": (
        lambda a, s, v, d: rt.cov(a, fweights=FW, aweights=s[:5] ** 2),
        lambda a, s, v, d: np.cov(a, fweights=FW, aweights=s[:5] ** 2),
    ),
    "cov_scalar": (lambda a, s, v, d: rt.cov(a[0]), lambda a, s, v, d: np.cov(a[0])),
    "corrcoef": (lambda a, s, v, d: rt.corrcoef(d), lambda a, s, v, d: np.corrcoef(a)),
    "count_nonzero": (
        lambda a, s, v, d: rt.count_nonzero(a > 0, axis=1),
        lambda a, s, v, d: np.count_nonzero(a > 0, axis=1),
    ),
    "lexsort": (
        lambda a, s, v, d: rt.lexsort([rt.round(a[0]), rt.round(a[1])]),
        lambda a, s, v, d: np.lexsort([np.round(a[0]), np.round(a[1])]),
    ),
    "lexsort_axis0": (
        lambda a, s, v, d: rt.lexsort(rt.stack([rt.round(d), rt.round(2 * d)]), axis=0),
        lambda a, s, v, d: np.lexsort([np.round(a), np.round(2 * a)], axis=0),
    ),
    "top_k_values": (
        lambda a, s, v, d: rt.top_k(rt.round(d * 2) + 0.0, 3)[0],
        lambda a, s, v, d: -np.sort(-(np.round(a * 2) + 0.0), axis=1)[:, :3],
    ),
    "top_k_indices": (  # ties: the lower index first
        lambda a, s, v, d: rt.top_k(rt.round(a * 2) + 0.0, 3, axis=0)[1],
        lambda a, s, v, d: np.argsort(-(np.round(a * 2) + 0.0), 0, kind="stable")[:3],
    ),
    "cummax": (
        lambda a, s, v, d: rt.cummax(d, axis=1),
        lambda a, s, v, d: np.maximum.accumulate(a, axis=1),
    ),
    "cummin_reverse": (
        lambda a, s, v, d: rt.cummin(v, axis=1, reverse=True),
        lambda a, s, v, d: np.minimum.accumulate(v[:, ::-1], axis=1)[:, ::-1],
    ),
    **_pad_cases(),
    "nan_to_num": (
        lambda a, s, v, d: rt.nan_to_num(rt.log(v)),
        lambda a, s, v, d: np.nan_to_num(np.log(v)),
    ),
    "nan_to_num_values": (
        lambda a, s, v, d: rt.nan_to_num(-v / 0.0, nan=1.0, posinf=2.0, neginf=-3.0),
        lambda a, s, v, d: np.nan_to_num(-v / 0.0, nan=1.0, posinf=2.0, neginf=-3.0),
    ),
    "isneginf": (lambda a, s, v, d: rt.isneginf(-v), lambda a, s, v, d: np.isneginf(-v)),
    "isposinf": (lambda a, s, v, d: rt.isposinf(v), lambda a, s, v, d: np.isposinf(v)),
    "rint": (lambda a, s, v, d: rt.rint(a * 2), lambda a, s, v, d: np.rint(a * 2)),
    "remainder": (lambda a, s, v, d: rt.remainder(a, 0.7), lambda a, s, v, d: np.remainder(a, 0.7)),
    "cbrt": (lambda a, s, v, d: rt.cbrt(a * 100), lambda a, s, v, d: np.cbrt(a * 100)),
    "cbrt_cubes": (lambda a, s, v, d: rt.cbrt(R**3), lambda a, s, v, d: np.cbrt(R**3)),
    "hypot": (lambda a, s, v, d: rt.hypot(v, 3.0), lambda a, s, v, d: np.hypot(v, 3.0)),
    "copysign": (
        lambda a, s, v, d: rt.copysign(a, a[::-1] * 0.0),
        lambda a, s, v, d: np.copysign(a, a[::-1] * 0.0),
    ),
    "logspace": (
        lambda a, s, v, d: rt.logspace(-1, 2, 7, base=2.0),
        lambda a, s, v, d: np.logspace(-1, 2, 7, base=2.0),
    ),
    "interp": (lambda a, s, v, d: rt.interp(v, s, s**2), lambda a, s, v, d: np.interp(v, s, s**2)),
    "interp_left_right": (
        lambda a, s, v, d: rt.interp(d * 3, s, s**2, left=-1.0, right=5.0),
        lambda a, s, v, d: np.interp(a * 3, s, s**2, left=-1.0, right=5.0),
    ),
    "interp_period": (
        lambda a, s, v, d: rt.interp(a, s, s**2, period=1.5),
        lambda a, s, v, d: np.interp(a, s, s**2, period=1.5),
    ),
}


@pytest.mark.filterwarnings("ignore:All-NaN slice")  # NumPy's nanmedian of a NaN column
@pytest.mark.parametrize("backend", BACKENDS)
def test_every_function_matches_numpy(backend):
    a, s = rt.matrix("a", shape=(3, 5)), rt.vector("s", shape=(6,))
    v, d = rt.matrix("v", shape=(2, 4)), rt.matrix("d")
    names = sorted(CASES)
    f = rk.function([a, s, v, d], [CASES[n][0](a, s, v, d) for n in names], backend=backend)
    with np.errstate(all="ignore"):
        for name, got in zip(names, f(A, S, V, A), strict=True):
            expected = CASES[name][1](A, S, V, A)
            np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15, err_msg=name)
            assert np.shape(got) == np.shape(expected), name


def _cost(ns, lax, a, q):
    """One scalar over every differentiable function, written once for rt and jnp."""
    terms = [
        ns.quantile(a, q, axis=1) ** 2,
        ns.nanquantile(a, q, axis=0) ** 2,
        ns.percentile(a, 30.0, method="midpoint") ** 2,
        ns.median(a, axis=0),
        lax.cummax(a, axis=1) * a[::-1],
        lax.cummin(a, 0, reverse=True) ** 3,
        lax.top_k(a, 2)[0] ** 2,
        ns.pad(a, ((1, 2), (5, 3)), "reflect") ** 2,
        ns.pad(a, 2, "symmetric") ** 3,
        ns.pad(a, (1, 9), "wrap") ** 3,
        ns.pad(a, 1, "edge") ** 3,
        ns.cov(a) ** 2,
        ns.corrcoef(a),
        ns.average(a, 1, weights=a[0] ** 2),
        ns.cbrt(a) ** 2,
        ns.hypot(a, a[::-1]) ** 2,
        ns.copysign(a, a[::-1]) ** 3,
        ns.interp(a * 2, ns.sort(a[0]), a[1] ** 2),
        ns.nan_to_num(a) ** 3,
    ]
    return sum(ns.sum(t) for t in terms)


def test_gradients_match_jax():
    """On the NumPy backend (the JAX lowering of these gradient graphs is the Ops', each
    checked by the op records; compiling this one with XLA would cost seconds)."""
    a, q = rt.matrix("a", shape=(3, 5)), rt.vector("q")
    cost = _cost(rt, rt, a, q)
    got = rk.function([a, q], rk.grad(cost, [a, q]), backend="numpy")(A, [0.2, 0.5, 0.9])
    with jax.enable_x64(True):
        grads = jax.jit(jax.grad(lambda a, q: _cost(jnp, jax.lax, a, q), argnums=(0, 1)))
        expected = grads(A, np.array([0.2, 0.5, 0.9]))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-10, atol=1e-12)


def test_gradients_match_finite_differences():
    x = RNG.normal(size=(3, 4))
    verify_grad(lambda x, q: rt.quantile(x, q, axis=0), [x, np.array([0.3, 0.8])])
    verify_grad(lambda x: rt.nanmedian(x, axis=1) + rt.cummax(x, 1, reverse=True)[:, 0], [x])
    verify_grad(
        lambda x: rt.pad(x, ((2, 5), (3, 1)), "symmetric").sum() * rt.pad(x, 3, "wrap"), [x]
    )
    verify_grad(
        lambda x: rt.cov(x, aweights=rt.exp(x[0])).sum() + rt.corrcoef(x, x[::-1] ** 2), [x]
    )
    verify_grad(lambda x: rt.cbrt(x) * rt.hypot(x, 0.5) + rt.top_k(x * x, 2)[0].sum(), [x])
    xp = np.sort(x[0])
    verify_grad(lambda x, xp, fp: rt.interp(x, xp, fp), [x * 0.9 + 0.01, xp, x[1] ** 2])


def test_cummax_gradient_at_ties_goes_to_the_nearest_tie():
    x = rt.vector("x")
    g = rk.grad(rt.sum(rt.cummax(x) * np.arange(1.0, 6.0)), x)
    got = rk.function([x], g, backend="numpy")(np.array([2.0, 1.0, 2.0, 3.0, 3.0]))
    np.testing.assert_array_equal(got, [1.0 + 2.0, 0.0, 3.0, 4.0, 5.0])


def test_vectorize_matches_a_loop():
    a, v, x = rt.vector("a"), rt.matrix("v"), rt.matrix("x", shape=(3, 5))
    outs = [
        rt.searchsorted(a, v),
        rt.searchsorted(a, v, side="right"),
        rt.interp(v, a, a * a),
        rt.cummax(x, 1),
        rt.quantile(x, [0.2, 0.7], axis=1),
        rt.top_k(x, 2)[1],
        rt.pad(x, (2, 3), "reflect"),
    ]
    sorted_a = np.sort(RNG.normal(size=(4, 6)), axis=1)
    sorted_a[1, -1] = np.nan
    values = RNG.normal(size=(4, 2, 3))
    values[0, 0, 0], values[2, 1, 1] = np.nan, sorted_a[2, 2]
    xs = RNG.normal(size=(4, 3, 5))
    a_batch, x_batch = rt.matrix("as"), rt.tensor("xs", shape=(None, 3, 5))
    batched = rk.vectorize(outs, {a: a_batch, x: x_batch})
    inputs = [a_batch, v, x_batch]
    single = rk.function([a, v, x], outs, backend="numpy")
    for backend in BACKENDS:
        got = rk.function(inputs, batched, backend=backend)(sorted_a, values[0], xs)
        for k in range(4):
            for g, e in zip(got, single(sorted_a[k], values[0], xs[k]), strict=True):
                np.testing.assert_allclose(np.asarray(g)[k], e, rtol=1e-13)
    # rk.vmap over the values only: the same Op on the batched values
    vs = rt.tensor("vs", shape=(None,) * 3)
    f = rk.function([a, vs], rk.vmap(lambda v: rt.searchsorted(a, v))(vs), backend="numpy")
    np.testing.assert_array_equal(f(sorted_a[0], values), np.searchsorted(sorted_a[0], values))


@settings(max_examples=25)
@given(
    x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=4), elements=st.floats(-9, 9)),
    q=st.lists(st.floats(0, 1), min_size=1, max_size=3),
    method=st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]),
    data=st.data(),
)
def test_quantiles_match_numpy(x, q, method, data):
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    keepdims = data.draw(st.booleans())
    x = np.where(x > 7, np.nan, x)  # some NaN
    var = rt.tensor("x", shape=(None,) * x.ndim)
    for ours, theirs in [(rt.quantile, np.quantile), (rt.nanquantile, np.nanquantile)]:
        out = ours(var, q, axis, method=method, keepdims=keepdims)
        got = rk.function([var], out, backend="numpy", rules=None)(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy warns of all-NaN slices
            expected = theirs(x, q, axis, method=method, keepdims=keepdims)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@settings(max_examples=25)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=4),
    mode=st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]),
    data=st.data(),
)
def test_pad_matches_numpy(shape, mode, data):
    widths = data.draw(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1))
    widths = widths[0] if len(widths) == 1 else [widths[k % len(widths)] for k in range(len(shape))]
    x = np.arange(float(np.prod(shape))).reshape(shape)
    var = rt.tensor("x", shape=shape)
    f = rk.function([var], rt.pad(var, widths, mode), backend="numpy", rules=None)
    np.testing.assert_array_equal(f(x), np.pad(x, widths, mode))


def test_dtypes_follow_jax():
    f32, i32 = rt.vector("f", dtype="float32"), rt.vector("i", dtype="int32")
    assert rt.median(i32).dtype == rt.quantile(i32, 0.5, method="lower").dtype == "float64"
    assert rt.quantile(f32, [0.1, 0.9]).dtype == rt.nanmedian(f32).dtype == "float32"
    assert rt.searchsorted(i32, 1.5).type == rk.TensorType("int64", ())
    assert rt.top_k(i32, 2)[1].dtype == rt.count_nonzero(f32).dtype == "int64"
    assert rt.cov(f32).type == rk.TensorType("float32", ())
    assert rt.hypot(f32, 2).dtype == rt.copysign(2, f32).dtype == rt.cbrt(f32).dtype == "float32"
    assert rt.rint(i32).dtype == rt.cbrt(i32).dtype == "float64"
    assert rt.nan_to_num(i32) is i32
    assert rt.pad(rt.vector("b", dtype="bool", shape=(3,)), 1).type == rk.TensorType("bool", (5,))


def test_errors_name_the_function_and_argument():
    x, m = rt.vector("x"), rt.matrix("m")
    n = rt.scalar("n", dtype="int64")
    with pytest.raises(ShapeError, match="searchsorted: a must be 1-d"):
        rt.searchsorted(m, x)
    with pytest.raises(GraphTypeError, match="searchsorted: side must be 'left' or 'right'"):
        rt.searchsorted(x, x, side="middle")
    with pytest.raises(GraphTypeError, match="quantile: method must be one of"):
        rt.quantile(x, 0.5, method="inverted_cdf")
    with pytest.raises(GraphTypeError, match="median: out is not supported"):
        rt.median(x, out=np.zeros(()))
    with pytest.raises(DTypeError, match="quantile: input 'a' has dtype complex128"):
        rt.quantile(rt.vector("c", dtype="complex128"), 0.5)
    with pytest.raises(GraphTypeError, match=r"top_k: k must be a static int .*jax.lax.top_k"):
        rt.top_k(x, n)
    with pytest.raises(ShapeError, match="top_k: k=4 must be in \\[0, the length of axis -1\\]"):
        rt.top_k(rt.vector("s", shape=(3,)), 4)
    with pytest.raises(GraphTypeError, match="cummax: axis must be a static int"):
        rt.cummax(x, n)
    with pytest.raises(ShapeError, match="cummin: axis 0 is out of range for a 0-d input"):
        rt.cummin(rt.scalar("s"))
    with pytest.raises(ShapeError, match="lexsort: keys float64\\[\\?,\\?\\] needs a static"):
        rt.lexsort(m)
    with pytest.raises(GraphTypeError, match=r"pad: pad_width must be static ints \(as jnp.pad"):
        rt.pad(x, n)
    with pytest.raises(GraphTypeError, match="pad: pad_width must be static ints >= 0"):
        rt.pad(x, (-1, 2))
    with pytest.raises(GraphTypeError, match="pad: mode must be one of"):
        rt.pad(x, 1, "mean")
    with pytest.raises(ShapeError, match="pad: mode 'reflect' needs a static, non-zero length"):
        rt.pad(x, 1, "reflect")
    with pytest.raises(ShapeError, match="pad: expected a number, a \\(before, after\\) pair"):
        rt.pad(m, np.zeros((3, 2), dtype=int))
    with pytest.raises(GraphTypeError, match="average: weights float64\\[\\?\\] and a"):
        rt.average(m, weights=x)
    with pytest.raises(ShapeError, match="average: weights float64\\[3\\] must have the shape"):
        rt.average(rt.matrix("a", shape=(2, 4)), axis=1, weights=rt.vector("w", shape=(3,)))
    with pytest.raises(ShapeError, match="cov: expected at most 2 axes"):
        rt.cov(rt.tensor("t", shape=(2, 2, 2)))
    with pytest.raises(DTypeError, match="cov: fweights must be integer"):
        rt.cov(m, fweights=x)
    with pytest.raises(GraphTypeError, match="cov: ddof must be a static int"):
        rt.cov(m, ddof=n)
    with pytest.raises(ShapeError, match="interp: xp and fp must be 1-d and of the same length"):
        rt.interp(x, rt.vector("xp", shape=(3,)), rt.vector("fp", shape=(4,)))
    with pytest.raises(GraphTypeError, match="interp: left may be a value or 'extrapolate'"):
        rt.interp(x, x, x, left="clip")
    with pytest.raises(ShapeError, match="logspace: start and stop are scalars"):
        rt.logspace(0, 1, 3, axis=1)
