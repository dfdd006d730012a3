"""The unconstraining transforms: round trips, the constrained sets, log|J| against Jacobians
of hand-written JAX versions, stability at |y| = 800, the JAX backend, dtypes and errors.

Each case's graphs are compiled once (``_compiled``) and called on many points.
"""

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpyro.distributions.transforms import CorrCholeskyTransform
from scipy.linalg import helmert
from scipy.special import expit

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import BroadcastError, DTypeError, ShapeError
from rewritekit.logprob import transforms as tr
from rewritekit.logprob.transforms import TransformError

LOW, HIGH = rt.scalar("low"), rt.scalar("high")
K_SIMPLEX, K_ORDERED, K_SUM_TO_ZERO, K_CORR = 4, 5, 5, 4

# case -> (transform, K for event transforms or None, symbolic bounds)
CASES = {
    "log": (tr.log, None, False),
    "logodds": (tr.logodds, None, False),
    "interval": (tr.interval(-2, 3.5), None, False),
    "interval_symbolic": (tr.interval(LOW, HIGH), None, True),
    "lower_bound": (tr.lower_bound(-2.0), None, False),
    "upper_bound": (tr.upper_bound(3.0), None, False),
    "simplex": (tr.simplex, K_SIMPLEX, False),
    "ordered": (tr.ordered, K_ORDERED, False),
    "sum_to_zero": (tr.sum_to_zero, K_SUM_TO_ZERO, False),
    "cholesky_corr": (tr.cholesky_corr, K_CORR, False),
}
ELEMENTWISE = ["log", "logodds", "interval", "interval_symbolic", "lower_bound", "upper_bound"]
NAMES = ["backward", "log_jac_det", "forward_backward", "forward", "backward_forward", "grads"]


def _y_length(case):
    transform, k, _ = CASES[case]
    if transform is tr.cholesky_corr:
        return k * (k - 1) // 2
    return None if k is None else k - 1 if transform in (tr.simplex, tr.sum_to_zero) else k


def _x_event(case):
    """The constrained value's event shape: (), (K,), or (K, K) for cholesky_corr."""
    transform, k, _ = CASES[case]
    return () if k is None else (k, k) if transform is tr.cholesky_corr else (k,)


def _graph(case, dtype="float64", batch=(None,)):
    """Inputs [y, x, (low, high)] and the outputs named in NAMES (grads: of sum(log|J|)
    plus sum(backward(y)) with respect to y)."""
    transform, k, symbolic = CASES[case]
    y_shape = batch + (() if k is None else (_y_length(case),))
    y = rt.tensor("y", shape=y_shape, dtype=dtype)
    x = rt.tensor("x", shape=batch + _x_event(case), dtype=dtype)
    if symbolic and dtype != "float64":
        low, high = rt.scalar("low", dtype=dtype), rt.scalar("high", dtype=dtype)
        transform = tr.interval(low, high)
    back, ljd = transform.backward(y), transform.log_jac_det(y)
    outputs = [back, ljd, transform.forward(back), transform.forward(x)]
    outputs.append(transform.backward(outputs[-1]))
    outputs.append(rk.grad(rt.sum(ljd) + rt.sum(back), y))
    inputs = [y, x, *([transform.lower, transform.upper] if symbolic else [])]
    return inputs, outputs


@functools.cache
def _compiled(case, backend="numpy"):
    inputs, outputs = _graph(case)
    f = rk.function(inputs, outputs, backend=backend)
    bounds = (np.float64(-1.5), np.float64(2.0)) if CASES[case][2] else ()

    def call(y, x):
        return dict(zip(NAMES, (np.asarray(v) for v in f(y, x, *bounds)), strict=True))

    return call


def _bounds(case):
    if case == "interval_symbolic":
        return -1.5, 2.0
    return (-2, 3.5) if case == "interval" else (None, None)


def _constrained(case, u):
    """A point of the constrained set from u in (0, 1) (shape: batch + event)."""
    if case == "log":
        return np.exp(20 * u - 10)
    if case == "lower_bound":
        return -2.0 + np.exp(20 * u - 10)
    if case == "upper_bound":
        return 3.0 - np.exp(20 * u - 10)
    if case == "logodds":
        return u
    if case == "simplex":
        return u / u.sum(axis=-1, keepdims=True)
    if case == "ordered":
        return np.cumsum(np.concatenate([20 * u[..., :1] - 10, u[..., 1:] * 5], -1), -1)
    if case == "sum_to_zero":
        return 10 * (u - u.mean(axis=-1, keepdims=True))
    if case == "cholesky_corr":  # a random covariance, scaled to a correlation matrix
        cov = u @ np.swapaxes(u, -1, -2) + 0.1 * np.eye(u.shape[-1])
        scale = np.sqrt(np.einsum("...ii->...i", cov))
        return np.linalg.cholesky(cov / scale[..., :, None] / scale[..., None, :])
    low, high = _bounds(case)
    return low + (high - low) * u


@st.composite
def _points(draw, case, bound):
    """(y, u): an unconstrained batch with entries in [-bound, bound] and a batch of u."""
    k = CASES[case][1]
    n = draw(st.integers(1, 4))
    y_shape = (n,) if k is None else (n, _y_length(case))
    y = draw(arrays("float64", y_shape, elements=st.floats(-bound, bound)))
    u_shape = (n, *_x_event(case))
    u = draw(arrays("float64", u_shape, elements=st.floats(1e-3, 1 - 1e-3)))
    return y, u


@pytest.mark.parametrize("case", list(CASES))
@settings(max_examples=25)
@given(data=st.data())
def test_round_trips(case, data):
    # moderate |y|: further out, backward(y) rounds onto the boundary of the set
    y, u = data.draw(_points(case, 5.0 if case in ("ordered", "cholesky_corr") else 10.0))
    x = _constrained(case, u)
    out = _compiled(case)(y, x)
    np.testing.assert_allclose(out["forward_backward"], y, rtol=1e-9, atol=1e-9)
    # entries near 0 of a vector with large ones (sum_to_zero) carry the large ones' rounding
    scale = 1 + np.abs(x).max()
    np.testing.assert_allclose(out["backward_forward"], x, rtol=1e-12, atol=1e-15 * scale)


@pytest.mark.parametrize("case", list(CASES))
@settings(max_examples=25)
@given(data=st.data())
def test_backward_lies_in_the_constrained_set(case, data):
    # ordered: a step exp(y_k) below the spacing of floats at x_(k-1) rounds away
    y, u = data.draw(_points(case, 5.0 if case == "ordered" else 30.0))
    x = _compiled(case)(y, _constrained(case, u))["backward"]
    assert np.all(np.isfinite(x))
    if case == "simplex":
        assert np.all(x >= 0)
        np.testing.assert_allclose(x.sum(axis=-1), 1.0, rtol=0, atol=1e-14)
    elif case == "ordered":
        assert np.all(np.diff(x, axis=-1) > 0)
    elif case == "sum_to_zero":
        np.testing.assert_allclose(x.sum(axis=-1), 0.0, rtol=0, atol=1e-13 * (1 + abs(y).max()))
    elif case == "cholesky_corr":  # lower triangular, diagonal >= 0, unit rows: corr = L L^T
        np.testing.assert_array_equal(np.triu(x, 1), 0.0)
        assert np.all(np.einsum("...ii->...i", x) >= 0)
        np.testing.assert_allclose(np.einsum("...ij,...ij->...i", x, x), 1.0, rtol=1e-14)
    elif case == "log":
        assert np.all(x > 0)
    elif case == "lower_bound":
        assert np.all(x > -2.0)
    elif case == "upper_bound":
        assert np.all(x < 3.0)
    else:
        low, high = _bounds(case) if case != "logodds" else (0, 1)
        assert np.all((low < x) & (x < high))


def _simplex_jnp(y):
    """Stan's stick-breaking, written as the reference manual states it."""
    k = y.shape[-1] + 1
    xs, used = [], 0.0
    for i in range(k - 1):
        xs.append((1 - used) * jax.nn.sigmoid(y[i] - jnp.log(k - i - 1)))
        used = used + xs[-1]
    return jnp.stack([*xs, 1 - used])


def _sum_to_zero_jnp(y):
    """x = H^T y with scipy's Helmert rows (an orthonormal basis of the sum-zero plane)."""
    return jnp.asarray(helmert(y.shape[-1] + 1)).T @ y


def _cholesky_corr_jnp(y):
    """Stan's construction of cholesky_factor_corr, entry by entry, row by row."""
    n = (1 + int(np.sqrt(1 + 8 * y.shape[-1]))) // 2
    z, position, rows = jnp.tanh(y), 0, []
    for i in range(n):
        row, left = [], 1.0  # the squared norm left: a product of 1 - z^2 = 1 / cosh(y)^2
        for _ in range(i):
            row.append(z[position] * jnp.sqrt(left))
            left, position = left / jnp.cosh(y[position]) ** 2, position + 1
        rows.append(jnp.stack([*row, jnp.sqrt(left), *[0.0 * left] * (n - 1 - i)]))
    return jnp.stack(rows)


def _ordered_jnp(y):
    xs = [y[0]]
    for i in range(1, y.shape[-1]):
        xs.append(xs[-1] + jnp.exp(y[i]))
    return jnp.stack(xs)


def _backward_jnp(case):
    low, high = _bounds(case)
    return {
        "log": jnp.exp,
        "logodds": jax.nn.sigmoid,
        "lower_bound": lambda y: -2.0 + jnp.exp(y),
        "upper_bound": lambda y: 3.0 - jnp.exp(y),
        "simplex": _simplex_jnp,
        "ordered": _ordered_jnp,
        "sum_to_zero": _sum_to_zero_jnp,
        "cholesky_corr": _cholesky_corr_jnp,
    }.get(case, lambda y: low + (high - low) * jax.nn.sigmoid(y))


def _jacobian_log_det(case, points):
    """log|det| of the Jacobian of the hand-written backward map (for simplex and
    sum_to_zero: of its first K - 1 outputs, for cholesky_corr: of its strictly lower
    entries, a square map) at each point, and the map's values."""
    fn = _backward_jnp(case)
    with jax.enable_x64(True):
        values = np.asarray(jax.jit(jax.vmap(fn))(points))
        if CASES[case][1] is None:
            return np.log(np.abs(np.asarray(jax.jit(jax.vmap(jax.grad(fn)))(points)))), values
        head = {
            "simplex": lambda v: fn(v)[:-1],
            "sum_to_zero": lambda v: fn(v)[:-1],
            "cholesky_corr": lambda v: fn(v)[np.tril_indices(K_CORR, -1)],
        }.get(case, fn)
        jacobians = np.asarray(jax.jit(jax.vmap(jax.jacobian(head)))(points))
    sign, log_det = np.linalg.slogdet(jacobians)
    assert np.all(sign != 0)
    return log_det, values


@pytest.mark.parametrize("case", list(CASES))
def test_log_jac_det_is_the_log_det_of_the_jacobian(case):
    length = _y_length(case)
    rng = np.random.default_rng(0)
    points = rng.normal(0.0, 3.0, size=(24,) if length is None else (24, length))
    points[0] = 0.0
    expected, values = _jacobian_log_det(case, points)
    x = _constrained(case, np.full((1, *_x_event(case)), 0.5))
    out = _compiled(case)(points, x)
    np.testing.assert_allclose(out["backward"], values, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out["log_jac_det"], expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", ["logodds", "interval", "interval_symbolic"])
@settings(max_examples=40)
@given(y=arrays("float64", 6, elements=st.floats(-800, 800)))
def test_logistic_log_jac_det_is_accurate_and_smooth_far_out(case, y):
    y = np.concatenate([y, [800.0, -800.0]])
    out = _compiled(case)(y, np.full(y.shape, 0.5 if case == "logodds" else 0.0))
    low, high = _bounds(case) if case != "logodds" else (0, 1)
    # log sigmoid'(y) = -|y| - 2 log(1 + exp(-|y|))
    expected = np.log(high - low) - np.abs(y) - 2 * np.log1p(np.exp(-np.abs(y)))
    np.testing.assert_allclose(out["log_jac_det"], expected, rtol=1e-13, atol=1e-13)
    # d/dy log sigmoid'(y) = sigmoid(-y) - sigmoid(y) = -tanh(y / 2); d/dy backward >= 0
    d_backward = out["grads"] + np.tanh(y / 2)
    assert np.all(np.isfinite(out["grads"]))
    np.testing.assert_allclose(d_backward, (high - low) * expit(y) * expit(-y), atol=1e-12)


@pytest.mark.parametrize("case", ["simplex", "ordered"])
@pytest.mark.parametrize("far", [800.0, -800.0])
def test_event_transforms_are_finite_far_out(case, far):
    y = np.full((2, _y_length(case)), far)
    y[1, ::2] = -far
    if case == "ordered":  # exp(800) overflows x itself; log|J| = sum(y[1:]) stays exact
        with np.errstate(over="ignore", invalid="ignore"):
            out = _compiled(case)(y, np.arange(K_ORDERED)[None] * 1.0)
        np.testing.assert_array_equal(out["log_jac_det"], y[:, 1:].sum(axis=-1))
        return
    out = _compiled(case)(y, np.full((1, K_SIMPLEX), 1 / K_SIMPLEX))
    assert np.all(np.isfinite(out["log_jac_det"])) and np.all(np.isfinite(out["grads"]))
    np.testing.assert_allclose(out["backward"].sum(axis=-1), 1.0, rtol=0, atol=1e-15)


@pytest.mark.parametrize("case", list(CASES))
def test_jax_backend_agrees_with_numpy(case):
    length = _y_length(case)
    rng = np.random.default_rng(1)
    # cholesky_corr: forward(backward(y)) is arctanh(tanh(y)), ill-conditioned for |y| >> 1
    spread = 1.0 if case == "cholesky_corr" else 4.0
    y = rng.normal(0.0, spread, size=(16,) if length is None else (16, length))
    if case not in ("log", "ordered", "cholesky_corr"):  # where backward(y) stays finite
        y[:2] = [[800.0], [-800.0]] if length else [800.0, -800.0]
    x = _constrained(case, rng.uniform(0.01, 0.99, size=(8, *_x_event(case))))
    want, got = _compiled(case)(y, x), _compiled(case, "jax")(y, x)
    for name in NAMES:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-11, atol=1e-13, err_msg=name)


def test_event_transforms_batch_over_any_leading_axes():
    rng = np.random.default_rng(2)
    for case in ["simplex", "ordered", "sum_to_zero"]:
        inputs, outputs = _graph(case, batch=(None, 3))
        f = rk.function(inputs[:1], outputs[:3], backend="numpy")
        y = rng.normal(size=(2, 3, _y_length(case)))
        back, ljd, again = f(y)
        flat = _compiled(case)(y.reshape(6, -1), np.full((1, CASES[case][1]), 0.2))
        np.testing.assert_allclose(back.reshape(6, -1), flat["backward"], rtol=1e-15)
        np.testing.assert_allclose(ljd.reshape(6), flat["log_jac_det"], rtol=1e-15)
        np.testing.assert_allclose(again, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_types_keep_the_dtype_and_the_batch_shape(case):
    for dtype in ["float32", "float64"]:
        inputs, outputs = _graph(case, dtype=dtype, batch=(None, 2))
        assert [v.dtype for v in outputs] == [dtype] * len(outputs), case
        assert outputs[1].type.shape == (None, 2)  # log|J|: the batch shape
        assert outputs[0].type.shape == outputs[4].type.shape == inputs[1].type.shape


def test_float32_values_stay_float32():
    y = rt.vector("y", shape=(3,), dtype="float32")
    outputs = [tr.simplex.backward(y), tr.interval(0, 2).log_jac_det(y)]
    f = rk.function([y], outputs, backend="numpy")
    back, ljd = f(np.array([0.0, 1.0, -1.0], dtype="float32"))
    assert back.dtype == ljd.dtype == np.float32
    np.testing.assert_allclose(float(np.sum(back)), 1.0, rtol=1e-6)


def test_the_simplex_centre_is_uniform():
    y = rt.vector("y", shape=(4,))
    back = rk.function([y], tr.simplex.backward(y), backend="numpy")(np.zeros(4))
    np.testing.assert_allclose(back, np.full(5, 0.2), rtol=1e-15)


def test_names_strings_and_equality():
    assert [str(t) for t in (tr.log, tr.logodds, tr.simplex, tr.ordered)] == [
        "log",
        "logodds",
        "simplex",
        "ordered",
    ]
    assert [t.event_ndim for t in (tr.log, tr.logodds, tr.simplex, tr.ordered)] == [0, 0, 1, 1]
    assert repr(tr.interval(0, 1)) == "interval(0, 1)" == tr.interval(0, 1).name + "(0, 1)"
    assert str(tr.interval(LOW, HIGH)) == "interval(low, high)"
    assert str(tr.interval(np.float32(0.5), np.array([1.0, 2.0]))) == "interval(0.5, [1.0, 2.0])"
    assert tr.interval(0, 1) == tr.interval(np.float64(0.0), 1.0)
    assert hash(tr.interval(0, 1)) == hash(tr.interval(0.0, 1))
    assert tr.interval(LOW, HIGH) == tr.interval(LOW, HIGH) != tr.interval(HIGH, LOW + 1)
    assert tr.log == tr.Log() != tr.logodds
    assert len({tr.log, tr.logodds, tr.simplex, tr.ordered, tr.interval(LOW, 1)}) == 5


@pytest.mark.parametrize(
    ("lower", "upper", "shown"),
    [
        (1, 0, "lower=1 and upper=0"),
        (2.5, 2.5, "lower=2.5 and upper=2.5"),
        (np.array([0.0, 3.0]), 2, "lower=[0.0, 3.0] and upper=2"),
        (rt.constant(1.0), rt.constant(-1.0), "lower=1.0 and upper=-1.0"),
    ],
)
def test_interval_needs_lower_below_upper(lower, upper, shown):
    message = f"interval: the lower bound must be below the upper bound, got {shown}"
    with pytest.raises(TransformError, match=re.escape(message)):
        tr.interval(lower, upper)
    assert issubclass(TransformError, ValueError)


def test_interval_bounds_must_be_finite_and_broadcast():
    with pytest.raises(TransformError, match=r"interval: the upper bound must be finite, got "):
        tr.interval(0, np.inf)
    with pytest.raises(BroadcastError, match=r"interval: cannot broadcast the bounds' shapes"):
        tr.interval(np.zeros(2), np.ones(3))
    tr.interval(LOW, 0)  # unknown bounds are not checked


def test_interval_without_bounds_says_they_are_missing():
    with pytest.raises(TransformError, match="interval: the lower and upper bounds are missing"):
        tr.interval(None, None)
    with pytest.raises(TransformError, match="interval: the upper bound is missing"):
        tr.interval(0, None)
    with pytest.raises(TransformError, match="interval: the lower bound is missing"):
        tr.interval(None, 1)
    with pytest.raises(TransformError, match="interval: the lower and upper bounds are missing"):
        tr.Interval(None, None)


@pytest.mark.parametrize(
    ("lower", "upper", "side", "shown"),
    [
        ("a", 1, "lower", "'a'"),
        (0, [1, [2, 3]], "upper", "[1, [2, 3]]"),
    ],
    ids=["text", "ragged"],
)
def test_a_non_numeric_bound_is_an_error_naming_the_argument(lower, upper, side, shown):
    message = (
        f"interval: the {side} bound must be a number, an array of numbers or a Var, got {shown}"
    )
    with pytest.raises(DTypeError, match=re.escape(message)):
        tr.interval(lower, upper)


@pytest.mark.parametrize("method", ["forward", "backward", "log_jac_det"])
def test_simplex_needs_a_static_event_length(method):
    message = (
        f"simplex.{method}: needs the static length of the last axis of its input 'v', got "
        "type float64[?,?]; build the input with one, e.g. rt.tensor('v', shape=(None, 3))"
    )
    with pytest.raises(ShapeError, match=re.escape(message)):
        getattr(tr.simplex, method)(rt.matrix("v"))


@pytest.mark.parametrize("transform", [tr.simplex, tr.ordered, tr.sum_to_zero, tr.cholesky_corr])
def test_event_transforms_need_an_event_axis(transform):
    message = f"{transform}.backward: input 'y' must have at least one axis (the event axis)"
    with pytest.raises(ShapeError, match=re.escape(message)):
        transform.backward(rt.scalar("y"))


@jax.jit
def _numpyro_corr_cholesky(y):
    factor = CorrCholeskyTransform()(y)
    return factor, CorrCholeskyTransform().log_abs_det_jacobian(y, factor)


def test_cholesky_corr_matches_numpyro():
    y = np.random.default_rng(3).normal(0.0, 2.0, size=(6, _y_length("cholesky_corr")))
    y[0] = [30.0, -30.0, 5.0, -800.0, 800.0, 0.0]  # tanh rounds to +-1: log|J| stays exact
    out = _compiled("cholesky_corr")(y, _constrained("cholesky_corr", np.full((1, 4, 4), 0.5)))
    with jax.enable_x64(True):
        factor, log_det = _numpyro_corr_cholesky(y)
    # NumPyro takes the norm left from cumprod(1 - t^2), rewritekit from a sum of logs
    np.testing.assert_allclose(out["backward"][1:], factor[1:], rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(out["log_jac_det"][1:], log_det[1:], rtol=1e-11)
    # NumPyro's clips tanh(y) into (-1, 1) and takes log(1 - t^2) from it: finite, not exact
    sech2 = np.log(4.0) - 2 * np.abs(y[0]) - 2 * np.log1p(np.exp(-2 * np.abs(y[0])))
    rows, cols = np.tril_indices(K_CORR, -1)
    np.testing.assert_allclose(out["log_jac_det"][0], sech2 @ (1 + (rows - 1 - cols) / 2))
    assert np.all(np.isfinite(out["grads"]))


def test_new_transforms_names_and_event_axes():
    assert [str(tr.sum_to_zero), str(tr.cholesky_corr)] == ["sum_to_zero", "cholesky_corr"]
    assert (tr.sum_to_zero.event_ndim, tr.cholesky_corr.event_ndim) == (1, 2)
    assert tr.SumToZero() == tr.sum_to_zero and tr.CholeskyCorr() == tr.cholesky_corr
    assert {"ordered", "simplex", "sum_to_zero", "cholesky_corr"} <= set(tr.__all__)


def test_sum_to_zero_log_jac_det_is_the_constant_of_its_first_n_minus_1_entries():
    # x = H^T y with H the (n - 1) x n Helmert rows: |det H^T[:n-1]| = 1 / sqrt(n)
    y = rt.tensor("y", shape=(2, 3))
    f = rk.function([y], tr.sum_to_zero.log_jac_det(y), backend="numpy")
    head = helmert(4).T[:-1]
    np.testing.assert_allclose(f(np.ones((2, 3))), [np.linalg.slogdet(head)[1]] * 2, rtol=1e-15)
    np.testing.assert_allclose(f(np.ones((2, 3)))[0], -0.5 * np.log(4), rtol=1e-15)


@pytest.mark.parametrize("method", ["backward", "log_jac_det"])
def test_cholesky_corr_needs_a_triangular_number_of_entries(method):
    message = (
        f"cholesky_corr.{method}: the last axis of 'y' has length 4, which is not n(n-1)/2 "
        "for any n (1, 3, 6, 10, ...)"
    )
    with pytest.raises(ShapeError, match=re.escape(message)):
        getattr(tr.cholesky_corr, method)(rt.vector("y", shape=(4,)))


def test_cholesky_corr_forward_needs_square_matrices():
    message = "cholesky_corr.forward: input 'x' must end with a square n x n matrix"
    with pytest.raises(ShapeError, match=re.escape(message)):
        tr.cholesky_corr.forward(rt.tensor("x", shape=(2, 3)))
    with pytest.raises(ShapeError, match=re.escape("cholesky_corr.forward: needs the static")):
        tr.cholesky_corr.forward(rt.matrix("x"))


@pytest.mark.parametrize("method", ["forward", "backward", "log_jac_det"])
def test_sum_to_zero_needs_a_static_event_length(method):
    message = f"sum_to_zero.{method}: needs the static length of the last axis of its input 'v'"
    with pytest.raises(ShapeError, match=re.escape(message)):
        getattr(tr.sum_to_zero, method)(rt.matrix("v"))


def test_one_sided_bounds_must_be_given_and_finite():
    assert str(tr.lower_bound(LOW)) == "lower_bound(low)"
    assert str(tr.upper_bound(np.float64(1.5))) == "upper_bound(1.5)"
    with pytest.raises(TransformError, match="lower_bound: the lower bound is missing"):
        tr.lower_bound(None)
    with pytest.raises(TransformError, match="upper_bound: the upper bound must be finite"):
        tr.upper_bound(np.inf)
