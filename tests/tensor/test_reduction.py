"""The reductions: dtypes against NumPy, static shapes, hash-consing, errors, both backends."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import SUPPORTED_DTYPES, TensorType
from rewritekit.tensor import reduction as rd

DTYPES = sorted(SUPPORTED_DTYPES)
REAL = [d for d in DTYPES if np.dtype(d).kind != "c"]

# Functions whose result dtype is NumPy's own, for every dtype NumPy accepts.
NUMPY_DTYPE = {
    rt.sum: np.sum,
    rt.prod: np.prod,
    rt.mean: np.mean,
    rt.var: np.var,
    rt.std: np.std,
    rt.all: np.all,
    rt.any: np.any,
    rt.cumsum: np.cumsum,
    rt.cumprod: np.cumprod,
}
# Ordering functions: NumPy orders complex numbers lexicographically; we reject them.
ORDERING = {rt.max: np.max, rt.min: np.min, rt.argmax: np.argmax, rt.argmin: np.argmin}
# Float functions: floats keep their dtype, the rest compute in float64 (SciPy's rule for
# logsumexp; NumPy has no softmax).
FLOAT = [rt.logsumexp, rt.softmax, rt.log_softmax]


@given(st.sampled_from(list(NUMPY_DTYPE)), st.sampled_from(DTYPES))
def test_dtypes_match_numpy(fn, dtype):
    expected = NUMPY_DTYPE[fn](np.ones((2, 3), dtype=dtype)).dtype.name
    assert fn(rt.matrix("x", dtype=dtype)).dtype == expected


@given(st.sampled_from(list(ORDERING)), st.sampled_from(REAL))
def test_ordering_dtypes_match_numpy(fn, dtype):
    expected = ORDERING[fn](np.ones((2, 3), dtype=dtype)).dtype.name
    assert fn(rt.matrix("x", dtype=dtype)).dtype == expected


@given(st.sampled_from(FLOAT), st.sampled_from(REAL))
def test_float_functions_keep_floats_and_compute_integers_in_float64(fn, dtype):
    expected = dtype if np.dtype(dtype).kind == "f" else "float64"
    assert fn(rt.matrix("x", dtype=dtype)).dtype == expected


def test_accumulating_dtypes_named():
    # The rule stated in the module docstring, spelled out.
    assert rt.sum(rt.vector("b", dtype="bool")).dtype == "int64"
    assert rt.sum(rt.vector("i", dtype="int8")).dtype == "int64"
    assert rt.prod(rt.vector("u", dtype="uint16")).dtype == "uint64"
    assert rt.cumsum(rt.vector("u", dtype="uint64")).dtype == "uint64"
    assert rt.sum(rt.vector("f", dtype="float32")).dtype == "float32"
    assert rt.var(rt.vector("c", dtype="complex64")).dtype == "float32"
    assert rt.mean(rt.vector("c", dtype="complex64")).dtype == "complex64"
    assert rt.max(rt.vector("i", dtype="int16")).dtype == "int16"
    assert rt.argmax(rt.vector("f", dtype="float32")).dtype == "int64"


# --- static shapes -------------------------------------------------------------------------


def test_reduction_shapes():
    x = rt.tensor("x", shape=(2, None, 4))
    assert rt.sum(x).type is TensorType("float64", ())
    assert rt.sum(x, keepdims=True).type is TensorType("float64", (1, 1, 1))
    assert rt.sum(x, axis=1).type is TensorType("float64", (2, 4))
    assert rt.max(x, axis=-1, keepdims=True).type is TensorType("float64", (2, None, 1))
    assert rt.mean(x, axis=(0, 2)).type is TensorType("float64", (None,))
    assert rt.var(x, axis=(2, 0), keepdims=True).type is TensorType("float64", (1, None, 1))
    assert rt.all(x, axis=()).type is TensorType("bool", (2, None, 4))
    assert rt.logsumexp(x, axis=-2).type is TensorType("float64", (2, 4))
    assert rt.sum(rt.scalar("s", dtype="int8")).type is TensorType("int64", ())


def test_arg_shapes():
    x = rt.tensor("x", shape=(2, None, 4), dtype="float32")
    assert rt.argmax(x).type is TensorType("int64", ())
    assert rt.argmax(x, keepdims=True).type is TensorType("int64", (1, 1, 1))
    assert rt.argmin(x, axis=1).type is TensorType("int64", (2, 4))
    assert rt.argmin(x, axis=-1, keepdims=True).type is TensorType("int64", (2, None, 1))


def test_cumulative_and_softmax_shapes():
    x = rt.tensor("x", shape=(2, 3), dtype="int32")
    assert rt.cumsum(x).type is TensorType("int64", (6,))
    assert rt.cumsum(rt.tensor("y", shape=(2, None))).type is TensorType("float64", (None,))
    assert rt.cumprod(x, axis=-1).type is TensorType("int64", (2, 3))
    # NumPy treats a 0-d input as 1-d: np.cumsum(np.array(1.0), axis=0).shape == (1,)
    assert rt.cumsum(rt.scalar("s"), axis=0).type is TensorType("float64", (1,))
    assert rt.softmax(x).type is TensorType("float64", (2, 3))
    assert rt.log_softmax(x, axis=(0, 1)).type is TensorType("float64", (2, 3))


# --- hash-consing -------------------------------------------------------------------------


def test_equivalent_axis_spellings_build_one_node():
    x = rt.matrix("x")
    assert rt.sum(x, axis=0) is rt.sum(x, axis=(0,))
    assert rt.sum(x, axis=-1) is rt.sum(x, axis=1)
    assert rt.sum(x) is rt.sum(x, axis=(1, 0)) is rt.sum(x, axis=[-1, -2])
    assert rt.max(x, axis=1, keepdims=True) is rt.max(x, axis=(-1,), keepdims=1)
    assert rt.var(x, ddof=1) is rt.var(x, ddof=1.0)
    assert rt.argmax(x, axis=-1) is rt.argmax(x, axis=1)
    assert rt.argmax(rt.vector("v"), axis=None).owner.op == rd.Argmax(0)
    assert rt.cumsum(x, axis=-1) is rt.cumsum(x, axis=1)
    assert rt.softmax(x) is rt.softmax(x, axis=1) is rt.softmax(x, axis=(-1,))
    assert rt.sum(x, axis=0) is not rt.sum(x, axis=0, keepdims=True)
    assert rt.sum(x, axis=0) is not rt.prod(x, axis=0)


def test_ops_are_values():
    assert rd.Sum((1, 0)) == rd.Sum(axis=[0, 1], keepdims=False)
    assert hash(rd.Sum((0,), True)) == hash(rd.Sum((0,), keepdims=True))
    assert rd.Variance((0,), 1) != rd.Std((0,), 1)
    assert str(rd.Sum((0,))) == "Sum{axis=(0,), keepdims=False}"


# --- Var methods ----------------------------------------------------------------------------


def test_var_methods_call_the_functions():
    x = rt.matrix("x")
    assert x.sum() is rt.sum(x)
    assert x.sum(axis=0) is rt.sum(x, axis=0)
    assert x.prod(-1, keepdims=True) is rt.prod(x, axis=1, keepdims=True)
    assert x.mean(axis=(0, 1)) is rt.mean(x)
    assert x.var(ddof=1) is rt.var(x, ddof=1)
    assert x.std(0, 1) is rt.std(x, axis=0, ddof=1)
    assert x.max(axis=1) is rt.max(x, axis=1)
    assert x.min() is rt.min(x)
    assert x.argmax(axis=0) is rt.argmax(x, axis=0)
    assert x.argmin() is rt.argmin(x)
    assert x.all(axis=1) is rt.all(x, axis=1)
    assert x.any() is rt.any(x)
    assert x.cumsum(axis=0) is rt.cumsum(x, axis=0)
    assert x.cumprod() is rt.cumprod(x)


# --- errors ---------------------------------------------------------------------------------


def test_axis_out_of_range_names_function_axis_and_rank():
    x = rt.matrix("x")
    with pytest.raises(
        ShapeError, match=r"^sum: axis 2 is out of range for a 2-d input \(input 'x'\)$"
    ):
        rt.sum(x, axis=2)
    with pytest.raises(ShapeError, match=r"mean: axis -3 is out of range for a 2-d input"):
        rt.mean(x, axis=(0, -3))
    with pytest.raises(ShapeError, match=r"argmax: axis 2 is out of range for a 2-d input"):
        rt.argmax(x, axis=2)
    with pytest.raises(ShapeError, match=r"cumsum: axis -3 is out of range for a 2-d input"):
        rt.cumsum(x, axis=-3)
    with pytest.raises(ShapeError, match=r"softmax: axis -1 is out of range for a 0-d input"):
        rt.softmax(rt.scalar("s"))
    with pytest.raises(ShapeError, match=r"cumprod: axis 1 is out of range for a 0-d input"):
        rt.cumprod(rt.scalar("s"), axis=1)


def test_repeated_axis_is_an_error():
    x = rt.matrix("x")
    with pytest.raises(
        ShapeError,
        match=r"^max: axis -1 is repeated in axis=\(1, -1\) for a 2-d input \(input 'x'\)$",
    ):
        rt.max(x, axis=(1, -1))
    with pytest.raises(ShapeError, match=r"log_softmax: axis 0 is repeated in axis=\(0, 0\)"):
        rt.log_softmax(x, axis=(0, 0))


def test_bad_axis_kinds():
    x = rt.matrix("x")
    with pytest.raises(
        GraphTypeError, match=r"sum: axis must be an int, a tuple of ints or None, got 1.0"
    ):
        rt.sum(x, axis=1.0)
    with pytest.raises(GraphTypeError, match=r"any: axis must be .*, got True"):
        rt.any(x, axis=True)
    with pytest.raises(GraphTypeError, match=r"argmin: axis must be an int or None, got \(0, 1\)"):
        rt.argmin(x, axis=(0, 1))
    with pytest.raises(GraphTypeError, match=r"cumsum: axis must be an int or None, got \[0\]"):
        rt.cumsum(x, axis=[0])
    with pytest.raises(GraphTypeError, match=r"var: ddof must be a number, got 'one'"):
        rt.var(x, ddof="one")


def test_ops_take_normalized_axes_only():
    with pytest.raises(
        GraphTypeError,
        match=r"sum: axis must be a tuple of distinct non-negative ints \(rt.sum normalizes",
    ):
        rd.Sum((-1,))
    with pytest.raises(GraphTypeError, match=r"max: axis must be a tuple of distinct"):
        rd.Max((0, 0))
    with pytest.raises(GraphTypeError, match=r"softmax: axis must be a tuple of non-negative"):
        rd.Softmax(1)
    with pytest.raises(GraphTypeError, match=r"argmax: axis must be a non-negative int or None"):
        rd.Argmax(-1)
    # Called directly, an Op checks its axes against the input (infer_types).
    with pytest.raises(
        ShapeError, match=r"^sum: axis 3 is out of range for a 2-d input \(inputs 'x'\)$"
    ):
        rd.Sum((3,))(rt.matrix("x"))
    with pytest.raises(ShapeError, match=r"cumsum: axis 1 is out of range for a 1-d input"):
        rd.Cumsum(1)(rt.vector("v"))


def test_unsupported_dtypes():
    c = rt.vector("c", dtype="complex128")
    with pytest.raises(
        DTypeError,
        match=r"^max: input has dtype complex128, which max does not support \(expected one "
        r"of the kinds bool, int, uint, float\) \(inputs 'c'\)$",
    ):
        rt.max(c)
    for fn in (rt.min, rt.argmax, rt.argmin, rt.logsumexp, rt.softmax, rt.log_softmax):
        with pytest.raises(DTypeError, match=f"{fn.__name__}: input has dtype complex128"):
            fn(c)


def test_reducing_a_static_empty_axis_without_identity():
    x = rt.tensor("x", shape=(0, 3))
    with pytest.raises(
        ShapeError,
        match=r"^max: cannot reduce over axis 0 of length 0 \(shape \(0, 3\)\): max of nothing "
        r"is undefined \(inputs 'x'\)$",
    ):
        rt.max(x, axis=0)
    with pytest.raises(ShapeError, match=r"min: cannot reduce over axis 0 of length 0"):
        rt.min(x)
    with pytest.raises(ShapeError, match=r"argmax: cannot reduce over axis 0 of length 0"):
        rt.argmax(x)
    # Over the other axis, or for reductions with an identity, it is fine (as in NumPy).
    assert rt.max(x, axis=1).type is TensorType("float64", (0,))
    assert rt.sum(x, axis=0).type is TensorType("float64", (3,))
    assert rt.argmin(x, axis=1).type is TensorType("int64", (0,))


# --- both backends --------------------------------------------------------------------------


def _every_function(x):
    return [
        rt.sum(x, axis=0),
        x.prod(axis=-1, keepdims=True),
        x.mean(),
        x.var(axis=1, ddof=1),
        x.std(),
        x.max(axis=(0, 1), keepdims=True),
        x.min(axis=0),
        x.argmax(),
        x.argmin(axis=1),
        rt.all(x > 0.0, axis=0),
        rt.any(x > 2.0),
        x.cumsum(),
        x.cumprod(axis=0),
        rt.logsumexp(x, axis=1),
        rt.softmax(x),
        rt.log_softmax(x, axis=None),
    ]


def _numpy_expected(a):
    return [
        np.sum(a, axis=0),
        np.prod(a, axis=-1, keepdims=True),
        np.mean(a),
        np.var(a, axis=1, ddof=1),
        np.std(a),
        np.max(a, axis=(0, 1), keepdims=True),
        np.min(a, axis=0),
        np.argmax(a),
        np.argmin(a, axis=1),
        np.all(a > 0, axis=0),
        np.any(a > 2),
        np.cumsum(a),
        np.cumprod(a, axis=0),
        sp.logsumexp(a, axis=1),
        sp.softmax(a, axis=-1),
        sp.log_softmax(a, axis=None),
    ]


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_functions_compute_what_numpy_does(backend, dtype):
    x = rt.matrix("x", dtype=dtype)
    a = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -2.5]], dtype=dtype)
    f = rk.function([x], _every_function(x), backend=backend)
    rtol = 1e-6 if dtype == "float32" else 1e-12
    for got, expected in zip(f(a), _numpy_expected(a), strict=True):
        got, expected = np.asarray(got), np.asarray(expected)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=rtol)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_integer_and_bool_inputs(backend):
    i = rt.matrix("i", dtype="int32")
    b = rt.vector("b", dtype="bool")
    f = rk.function(
        [i, b],
        [i.sum(axis=1), i.mean(), rt.logsumexp(i), b.sum(), b.cumsum(), b.prod(), b.max()],
        backend=backend,
    )
    ai = np.array([[1, 2, 3], [4, 5, 6]], dtype="int32")
    ab = np.array([True, False, True])
    expected = [
        np.sum(ai, axis=1),
        np.mean(ai),
        sp.logsumexp(ai),
        np.sum(ab),
        np.cumsum(ab),
        np.prod(ab),
        np.max(ab),
    ]
    for got, want in zip(f(ai, ab), expected, strict=True):
        got = np.asarray(got)
        assert got.dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_special_values(backend):
    x = rt.matrix("x")
    f = rk.function(
        [x],
        [rt.max(x, axis=1), rt.min(x, axis=1), rt.argmax(x, axis=1), rt.logsumexp(x, axis=1)],
        backend=backend,
    )
    a = np.array([[1.0, np.nan, 3.0], [-np.inf, -np.inf, -np.inf], [np.inf, 0.0, -np.inf]])
    got = [np.asarray(v) for v in f(a)]
    np.testing.assert_array_equal(got[0], np.max(a, axis=1))  # [nan, -inf, inf]
    np.testing.assert_array_equal(got[1], np.min(a, axis=1))  # [nan, -inf, -inf]
    np.testing.assert_array_equal(got[2], np.argmax(a, axis=1))  # the first NaN wins
    np.testing.assert_array_equal(got[3], sp.logsumexp(a, axis=1))  # [nan, -inf, inf]


def test_max_of_an_empty_axis_fails_at_run_time_as_in_numpy():
    x = rt.matrix("x")
    f = rk.function([x], rt.max(x, axis=0), backend="numpy")
    with pytest.raises(ValueError, match="zero-size array"):
        f(np.zeros((0, 3)))
    np.testing.assert_array_equal(
        rk.function([x], rt.logsumexp(x, axis=0), backend="numpy")(np.zeros((0, 2))),
        sp.logsumexp(np.zeros((0, 2)), axis=0),  # log(0) = -inf
    )


def test_logsumexp_and_softmax_are_grad_safe_in_jax():
    x = rt.matrix("x")
    f = rk.function([x], rt.logsumexp(x, axis=1), backend="jax")
    a = np.array([[-np.inf, -np.inf], [1.0, 2.0], [-np.inf, 0.0]])
    with jax.enable_x64(True):
        g = np.asarray(jax.grad(lambda v: f.jax_fn(v).sum())(jnp.asarray(a)))
    # d logsumexp / dx = softmax(x); an all -inf row has no softmax: its gradient is 0.
    np.testing.assert_allclose(g[1:], sp.softmax(a[1:], axis=1), rtol=1e-12)
    np.testing.assert_array_equal(g[0], [0.0, 0.0])
    s = rk.function([x], rt.log_softmax(x), backend="jax")
    with jax.enable_x64(True):
        gs = jax.grad(lambda v: s.jax_fn(v)[:, 0].sum())(jnp.asarray(a[1:]))
    assert np.all(np.isfinite(np.asarray(gs)))


def test_softmax_rows_sum_to_one_and_default_axis_is_last():
    x = rt.tensor("x", shape=(2, 3))
    a = np.array([[1000.0, 1000.0, 0.0], [-3.0, 0.0, 3.0]])  # no overflow: max-shifted
    for backend in ("numpy", "jax"):
        out = np.asarray(rk.function([x], rt.softmax(x), backend=backend)(a))
        np.testing.assert_allclose(out, sp.softmax(a, axis=-1), rtol=1e-12)
        np.testing.assert_allclose(out.sum(axis=-1), [1.0, 1.0], rtol=1e-12)


# --- logcumsumexp ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_logcumsumexp_neither_overflows_nor_underflows(backend):
    x = rt.matrix("x")
    v = np.array([[1000.0, -1000.0, 2.0], [-1000.0, -999.0, -np.inf]])
    weights = np.array([[1.0, -2.0, 3.0], [0.5, 1.0, 2.0]])
    out = rt.logcumsumexp(x, axis=1)
    f = rk.function([x], [out, rk.grad(rt.sum(out * weights), x)], backend=backend)
    value, grad = f(v)
    expected = np.logaddexp.accumulate(v, axis=1)
    np.testing.assert_allclose(value, expected, rtol=1e-15)
    # d/dx_i of sum_j w_j out_j = sum_{j >= i} w_j exp(x_i - out_j), computed in float64
    # where it is representable: exp(x_i - out_j) <= 1
    ref = np.zeros_like(v)
    for r in range(2):
        for i in range(3):
            for j in range(i, 3):
                ref[r, i] += weights[r, j] * np.exp(v[r, i] - expected[r, j])
    np.testing.assert_allclose(grad, ref, rtol=1e-13)


def test_logcumsumexp_flattens_without_an_axis_and_reverses_in_lax():
    x = rt.matrix("x", shape=(2, 2))
    assert rt.logcumsumexp(x).type.shape == (4,)
    v = np.array([[0.5, 1.0], [2.0, -3.0]])
    f = rk.function([x], rt.lax.cumlogsumexp(x, axis=0, reverse=True), backend="numpy")
    np.testing.assert_allclose(f(v), np.logaddexp.accumulate(v[::-1], axis=0)[::-1])
    with pytest.raises(DTypeError, match="logcumsumexp"):
        rt.logcumsumexp(rt.vector("z", dtype="complex128"))
