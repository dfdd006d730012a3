"""``rt.lax`` (jax.lax's spellings), ``rt.nn`` (jax.nn's functions), ``assembly`` (more of
NumPy's), ``spellings`` (PyTensor's names) and the new ``rt.linalg`` names: values against
the libraries they copy, on both backends, gradients against ``jax.grad``, and the errors."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg as sl
from jax import lax

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError, ShapeError

BACKENDS = ["numpy", "jax"]
A = np.arange(12.0).reshape(3, 4) / 2 - 2.5
V = np.array([-2.0, -1.0, -0.25, 0.0, 0.5, 1.0, 3.0, 7.0])
I = np.array([5, -7, 0, 3, -1, 6, 2, 0], dtype=np.int64)  # noqa: E741
J = np.array([2, 2, -3, -2, 4, 1, 1, 5], dtype=np.int64)
SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
LOW = np.tril(SPD) + np.eye(3)

SCATTER = lax.ScatterDimensionNumbers(
    update_window_dims=(0,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,)
)
GATHER = lax.GatherDimensionNumbers(
    offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
)
ROWS = np.array([[2], [0], [2]])

# name: (rewritekit on Vars (a, v, i, j, s, n), the reference on arrays)
CASES = {
    # jax.lax
    "clamp": (
        lambda a, v, i, j, s, n: rt.lax.clamp(-1.0, v, 2.0),
        lambda *x: lax.clamp(-1.0, x[1], 2.0),
    ),
    "div_int": (lambda a, v, i, j, s, n: rt.lax.div(i, j), lambda *x: lax.div(x[2], x[3])),
    "rsqrt": (lambda a, v, i, j, s, n: rt.lax.rsqrt(s), lambda *x: lax.rsqrt(x[4])),
    "integer_pow": (
        lambda a, v, i, j, s, n: rt.lax.integer_pow(a, 3),
        lambda *x: lax.integer_pow(x[0], 3),
    ),
    "select_n": (
        lambda a, v, i, j, s, n: rt.lax.select_n(rt.abs(i) % 3, v, 2 * v, -v),
        lambda *x: lax.select_n(jnp.abs(x[2]) % 3, x[1], 2 * x[1], -x[1]),
    ),
    "convert": (
        lambda a, v, i, j, s, n: rt.lax.convert_element_type(v, "int32"),
        lambda *x: lax.convert_element_type(x[1], jnp.int32),
    ),
    "broadcast_in_dim": (
        lambda a, v, i, j, s, n: rt.lax.broadcast_in_dim(a, (3, 2, 4), (0, 2)),
        lambda *x: lax.broadcast_in_dim(x[0], (3, 2, 4), (0, 2)),
    ),
    # the short paths: trailing axes (NumPy's broadcasting), length-1 axes only (keepdims)
    "broadcast_in_dim_trailing": (
        lambda a, v, i, j, s, n: rt.lax.broadcast_in_dim(a, (2, 3, 4), (1, 2)),
        lambda *x: lax.broadcast_in_dim(x[0], (2, 3, 4), (1, 2)),
    ),
    "broadcast_in_dim_scalar": (
        lambda a, v, i, j, s, n: rt.lax.broadcast_in_dim(s, (2, 3), ()),
        lambda *x: lax.broadcast_in_dim(x[4], (2, 3), ()),
    ),
    "broadcast_in_dim_keepdims": (
        lambda a, v, i, j, s, n: rt.lax.broadcast_in_dim(a, (3, 1, 4), (0, 2)),
        lambda *x: lax.broadcast_in_dim(x[0], (3, 1, 4), (0, 2)),
    ),
    "broadcast_in_dim_transposed": (
        lambda a, v, i, j, s, n: rt.lax.broadcast_in_dim(a, (4, 2, 3), (2, 0)),
        lambda *x: lax.broadcast_in_dim(x[0], (4, 2, 3), (2, 0)),
    ),
    "reshape_dims": (
        lambda a, v, i, j, s, n: rt.lax.reshape(a, (2, 6), (1, 0)),
        lambda *x: lax.reshape(x[0], (2, 6), (1, 0)),
    ),
    "dot_general": (
        lambda a, v, i, j, s, n: rt.lax.dot_general(
            rt.stack([a, a + 1]), rt.stack([a.T, a.T]), (((2,), (1,)), ((0,), (0,)))
        ),
        lambda *x: lax.dot_general(
            np.stack([x[0], x[0] + 1]), np.stack([x[0].T, x[0].T]), (((2,), (1,)), ((0,), (0,)))
        ),
    ),
    "slice": (
        lambda a, v, i, j, s, n: rt.lax.slice(a, (0, 1), (3, 4), (2, 2)),
        lambda *x: lax.slice(x[0], (0, 1), (3, 4), (2, 2)),
    ),
    "slice_in_dim": (
        lambda a, v, i, j, s, n: rt.lax.slice_in_dim(a, 1, 3, axis=1),
        lambda *x: lax.slice_in_dim(x[0], 1, 3, axis=1),
    ),
    "dynamic_slice_in_dim": (
        lambda a, v, i, j, s, n: rt.lax.dynamic_slice_in_dim(a, n, 3, axis=1),
        lambda *x: lax.dynamic_slice_in_dim(x[0], x[5], 3, axis=1),
    ),
    "dynamic_index_in_dim": (
        lambda a, v, i, j, s, n: rt.lax.dynamic_index_in_dim(a, n - 3, 0, keepdims=False),
        lambda *x: lax.dynamic_index_in_dim(x[0], x[5] - 3, 0, keepdims=False),
    ),
    "dynamic_update_slice_in_dim": (
        lambda a, v, i, j, s, n: rt.lax.dynamic_update_slice_in_dim(v, a[0], n, 0),
        lambda *x: lax.dynamic_update_slice_in_dim(x[1], x[0][0], x[5], 0),
    ),
    "dynamic_update_index_in_dim": (
        lambda a, v, i, j, s, n: rt.lax.dynamic_update_index_in_dim(a, v[:4], n - 2, 0),
        lambda *x: lax.dynamic_update_index_in_dim(x[0], x[1][:4], x[5] - 2, 0),
    ),
    "index_take": (
        lambda a, v, i, j, s, n: rt.lax.index_take(a, (rt.abs(i) % 3, rt.abs(j) % 4), (0, 1)),
        lambda *x: lax.index_take(x[0], (jnp.abs(x[2]) % 3, jnp.abs(x[3]) % 4), (0, 1)),
    ),
    "pad": (
        lambda a, v, i, j, s, n: rt.lax.pad(a, -9.0, [(1, -1, 1), (-2, 2, 0)]),
        lambda *x: lax.pad(x[0], -9.0, [(1, -1, 1), (-2, 2, 0)]),
    ),
    "cumsum_reverse": (
        lambda a, v, i, j, s, n: rt.lax.cumsum(a, 1, reverse=True),
        lambda *x: lax.cumsum(x[0], 1, reverse=True),
    ),
    "cumprod": (lambda a, v, i, j, s, n: rt.lax.cumprod(a, 0), lambda *x: lax.cumprod(x[0], 0)),
    "reduce_max": (
        lambda a, v, i, j, s, n: rt.lax.reduce_max(a, (1,)),
        lambda *x: lax.reduce_max(x[0], (1,)),
    ),
    "argmax": (
        lambda a, v, i, j, s, n: rt.lax.argmax(-a, 1, "int32"),
        lambda *x: lax.argmax(-x[0], 1, jnp.int32),
    ),
    "iota": (
        lambda a, v, i, j, s, n: rt.lax.iota("float32", 5),
        lambda *x: lax.iota(jnp.float32, 5),
    ),
    "gather": (
        lambda a, v, i, j, s, n: rt.lax.gather(a, rt.constant(ROWS), GATHER, (1, 4)),
        lambda *x: lax.gather(x[0], ROWS, GATHER, (1, 4)),
    ),
    "scatter_add": (
        lambda a, v, i, j, s, n: rt.lax.scatter_add(a, rt.constant(ROWS), a[:, :3], SCATTER),
        lambda *x: lax.scatter_add(x[0], ROWS, x[0][:, :3], SCATTER),
    ),
    "sort_operands": (
        lambda a, v, i, j, s, n: rt.lax.sort([rt.abs(i), v], num_keys=1)[1],
        lambda *x: lax.sort((jnp.abs(x[2]), x[1]), num_keys=1)[1],
    ),
    "top_k": (lambda a, v, i, j, s, n: rt.lax.top_k(a, 2)[0], lambda *x: lax.top_k(x[0], 2)[0]),
    "cummax_reverse": (
        lambda a, v, i, j, s, n: rt.lax.cummax(v, reverse=True),
        lambda *x: lax.cummax(x[1], reverse=True),
    ),
    "complex": (
        lambda a, v, i, j, s, n: rt.lax.complex(a, -a),
        lambda *x: lax.complex(x[0], -x[0]),
    ),
    # jax.nn
    **{
        name: (
            (lambda fn: lambda a, v, i, j, s, n: fn(v))(getattr(rt.nn, name)),
            (lambda fn: lambda *x: fn(x[1]))(getattr(jax.nn, name)),
        )
        for name in (
            "relu",
            "relu6",
            "leaky_relu",
            "elu",
            "celu",
            "selu",
            "silu",
            "gelu",
            "mish",
            "soft_sign",
            "squareplus",
            "hard_tanh",
            "hard_sigmoid",
            "hard_silu",
            "sparse_plus",
            "sparse_sigmoid",
            "log_sigmoid",
            "softplus",
        )
    },
    "gelu_exact": (
        lambda a, v, i, j, s, n: rt.nn.gelu(v, approximate=False),
        lambda *x: jax.nn.gelu(x[1], approximate=False),
    ),
    "log1mexp": (lambda a, v, i, j, s, n: rt.nn.log1mexp(s), lambda *x: jax.nn.log1mexp(x[4])),
    "logmeanexp": (
        lambda a, v, i, j, s, n: rt.nn.logmeanexp(a, axis=1),
        lambda *x: jax.nn.logmeanexp(x[0], axis=1),
    ),
    "standardize": (
        lambda a, v, i, j, s, n: rt.nn.standardize(a, axis=0),
        lambda *x: jax.nn.standardize(x[0], axis=0),
    ),
    "glu": (lambda a, v, i, j, s, n: rt.nn.glu(a), lambda *x: jax.nn.glu(x[0])),
    "one_hot": (
        lambda a, v, i, j, s, n: rt.nn.one_hot(i, 4),
        lambda *x: jax.nn.one_hot(x[2], 4, dtype=jnp.float64),
    ),
    "one_hot_axis0": (
        lambda a, v, i, j, s, n: rt.nn.one_hot(j, 5, axis=0, dtype="int32"),
        lambda *x: jax.nn.one_hot(x[3], 5, axis=0, dtype=jnp.int32),
    ),
    # NumPy
    "diagonal": (
        lambda a, v, i, j, s, n: rt.diagonal(rt.stack([a, -a]), 1, 1, 2),
        lambda *x: np.diagonal(np.stack([x[0], -x[0]]), 1, 1, 2),
    ),
    "diagonal_neg": (lambda a, v, i, j, s, n: rt.diagonal(a, -1), lambda *x: np.diagonal(x[0], -1)),
    "fill_diagonal": (
        lambda a, v, i, j, s, n: rt.fill_diagonal(a, 9.0),
        lambda *x: _filled(x[0], 9.0),
    ),
    "tril_indices": (
        lambda a, v, i, j, s, n: a[rt.tril_indices(3, 1, 4)],
        lambda *x: x[0][np.tril_indices(3, 1, 4)],
    ),
    "triu_indices": (
        lambda a, v, i, j, s, n: a[rt.triu_indices(3)],
        lambda *x: x[0][np.triu_indices(3, 0, 3)],
    ),
    "indices": (lambda a, v, i, j, s, n: rt.indices((2, 3))[1], lambda *x: np.indices((2, 3))[1]),
    "block": (
        lambda a, v, i, j, s, n: rt.block([[a, a[:, :1]], [v[:4], 1.0]]),
        lambda *x: np.block([[x[0], x[0][:, :1]], [x[1][:4], 1.0]]),
    ),
    "vdot": (lambda a, v, i, j, s, n: rt.vdot(a, a + 1), lambda *x: np.vdot(x[0], x[0] + 1)),
    "vecdot": (
        lambda a, v, i, j, s, n: rt.vecdot(a, a[0], axis=-1),
        lambda *x: np.vecdot(x[0], x[0][0]),
    ),
    "bitwise_count": (
        lambda a, v, i, j, s, n: rt.bitwise_count(i * 1234567),
        lambda *x: np.bitwise_count(x[2] * 1234567),
    ),
    "bitwise_count_int8": (
        lambda a, v, i, j, s, n: rt.bitwise_count(rt.cast(i, "int8") * 17),
        lambda *x: np.bitwise_count(x[2].astype(np.int8) * np.int8(17)),
    ),
    "identity": (
        lambda a, v, i, j, s, n: rt.identity(3, dtype="int32"),
        lambda *x: np.identity(3, dtype=np.int32),
    ),
    "empty": (lambda a, v, i, j, s, n: rt.empty((2, 2)) + 1, lambda *x: np.ones((2, 2))),
    "array": (
        lambda a, v, i, j, s, n: rt.array([[s, 2 * s], [3.0, s]]),
        lambda *x: np.array([[x[4], 2 * x[4]], [3.0, x[4]]]),
    ),
    "diag": (lambda a, v, i, j, s, n: rt.diag(v[:3], 1), lambda *x: np.diag(x[1][:3], 1)),
    # PyTensor
    "switch": (
        lambda a, v, i, j, s, n: rt.switch(rt.gt(v, 0), v, rt.neg(v)),
        lambda *x: np.abs(x[1]),
    ),
    "alloc": (
        lambda a, v, i, j, s, n: rt.alloc(v[:4], 2, 4),
        lambda *x: np.broadcast_to(x[1][:4], (2, 4)),
    ),
    "fill": (lambda a, v, i, j, s, n: rt.fill(a, 2.0), lambda *x: np.full((3, 4), 2.0)),
    "join": (lambda a, v, i, j, s, n: rt.join(1, a, a), lambda *x: np.concatenate([x[0], x[0]], 1)),
    "batched_dot": (
        lambda a, v, i, j, s, n: rt.batched_dot(rt.stack([a, a]), rt.stack([a.T, 2 * a.T])),
        lambda *x: np.stack([x[0] @ x[0].T, 2 * x[0] @ x[0].T]),
    ),
    "batched_dot_vec": (
        lambda a, v, i, j, s, n: rt.batched_dot(a, a),
        lambda *x: np.sum(x[0] * x[0], 1),
    ),
    "variadic_add": (
        lambda a, v, i, j, s, n: rt.variadic_add(a, a, 1.0),
        lambda *x: 2 * x[0] + 1.0,
    ),
    "and_": (lambda a, v, i, j, s, n: rt.and_(i, j), lambda *x: x[2] & x[3]),
    "or_bool": (
        lambda a, v, i, j, s, n: rt.or_(rt.lt(v, 0), rt.ge(v, 3)),
        lambda *x: (x[1] < 0) | (x[1] >= 3),
    ),
    "shape_padright": (
        lambda a, v, i, j, s, n: rt.shape_padright(v, 2) + 0 * a[0, 0],
        lambda *x: x[1][:, None, None],
    ),
    # linalg
    "block_diag": (
        lambda a, v, i, j, s, n: rt.linalg.block_diag(a, v[:2], s),
        lambda *x: sl.block_diag(x[0], x[1][:2], x[4]),
    ),
    "cho_solve": (
        lambda a, v, i, j, s, n: rt.linalg.cho_solve(rt.linalg.cho_factor(SPD), a),
        lambda *x: sl.cho_solve(sl.cho_factor(SPD), x[0]),
    ),
    "cho_solve_lower": (
        lambda a, v, i, j, s, n: rt.linalg.cho_solve(rt.linalg.cho_factor(SPD, lower=True), v[:3]),
        lambda *x: sl.cho_solve(sl.cho_factor(SPD, lower=True), x[1][:3]),
    ),
    "toeplitz": (
        lambda a, v, i, j, s, n: rt.linalg.toeplitz(v[:3], a[0]),
        lambda *x: sl.toeplitz(x[1][:3], x[0][0]),
    ),
    "toeplitz_sym": (
        lambda a, v, i, j, s, n: rt.linalg.toeplitz(v[:4]),
        lambda *x: sl.toeplitz(x[1][:4]),
    ),
    "triangular_solve": (
        lambda a, v, i, j, s, n: rt.linalg.triangular_solve(
            LOW, a.T[:, :3], left_side=False, lower=True, transpose_a=True
        ),
        lambda *x: lax.linalg.triangular_solve(
            LOW, x[0].T[:, :3], left_side=False, lower=True, transpose_a=True
        ),
    ),
    "triangular_solve_unit": (
        lambda a, v, i, j, s, n: rt.linalg.triangular_solve(
            LOW, a, left_side=True, lower=True, unit_diagonal=True
        ),
        lambda *x: lax.linalg.triangular_solve(
            LOW, x[0], left_side=True, lower=True, unit_diagonal=True
        ),
    ),
    "matrix_norm": (
        lambda a, v, i, j, s, n: rt.linalg.matrix_norm(a, ord=1),
        lambda *x: np.linalg.matrix_norm(x[0], ord=1),
    ),
    "vector_norm": (
        lambda a, v, i, j, s, n: rt.linalg.vector_norm(a, axis=(0, 1), ord=3),
        lambda *x: np.linalg.vector_norm(x[0], axis=(0, 1), ord=3),
    ),
    "multi_dot": (
        lambda a, v, i, j, s, n: rt.linalg.multi_dot([v[:3], a, a.T]),
        lambda *x: np.linalg.multi_dot([x[1][:3], x[0], x[0].T]),
    ),
}


def _filled(a, value):
    out = a.copy()
    np.fill_diagonal(out, value)
    return out


def _inputs():
    return (
        rt.matrix("a", shape=(3, 4)),
        rt.vector("v", shape=(8,)),
        rt.vector("i", dtype="int64", shape=(8,)),
        rt.vector("j", dtype="int64", shape=(8,)),
        rt.scalar("s"),
        rt.scalar("l", dtype="int64"),
    )


VALUES = (A, V, I, J, np.float64(1.7), np.int64(2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_function_matches_its_library(backend):
    names = sorted(CASES)
    ins = _inputs()
    f = rk.function(list(ins), [CASES[n][0](*ins) for n in names], backend=backend)
    with jax.enable_x64(True):
        for name, got in zip(names, f(*VALUES), strict=True):
            expected = np.asarray(CASES[name][1](*VALUES))
            np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-14, err_msg=name)
            assert np.shape(got) == expected.shape, name
            assert np.asarray(got).dtype == expected.dtype, name


def _broadcasts(broadcast_in_dim, total, a, v):
    """broadcast_in_dim's forms (trailing axes, a scalar, keepdims, in between), weighted
    so that each gradient entry counts where its value went (JAX's own transpose rule
    rejects unsorted dimensions: the values test has that form)."""

    def weights(*shape):
        return np.arange(1.0, np.prod(shape) + 1).reshape(shape) / 10

    return (
        total(broadcast_in_dim(a, (2, 3, 4), (1, 2)) ** 2 * weights(2, 3, 4))
        + total(broadcast_in_dim(v[1], (2, 3), ()) * weights(2, 3))
        + total(broadcast_in_dim(a, (3, 1, 4), (0, 2)) ** 3 * weights(3, 1, 4))
        + total(broadcast_in_dim(a, (3, 2, 4), (0, 2)) ** 2 * weights(3, 2, 4))
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_match_jax(backend):
    a, v = rt.matrix("a", shape=(3, 4)), rt.vector("v", shape=(8,))
    s = rt.scalar("s", dtype="int64")

    def ours(a, v):
        acts = [
            getattr(rt.nn, n)(v)
            for n in ("relu", "relu6", "elu", "gelu", "hard_tanh", "sparse_plus")
        ]
        cost = sum(rt.sum(x * (k + 1)) for k, x in enumerate(acts))
        cost = (
            cost
            + rt.sum(rt.lax.clamp(-1.0, v, 1.0) * v)
            + rt.sum(rt.lax.pad(a, 0.5, [(1, 0, 1), (0, -1, 0)]) ** 2)
        )
        cost = cost + rt.sum(rt.lax.scatter_add(a, rt.constant(ROWS), a[:, :3] ** 2, SCATTER) ** 2)
        cost = cost + rt.sum(rt.diagonal(a, 1) ** 3) + rt.sum(rt.linalg.toeplitz(v[:3], a[0]) ** 2)
        cost = cost + rt.sum(rt.lax.dynamic_slice_in_dim(a, s, 2, axis=1) ** 2)
        cost = cost + _broadcasts(rt.lax.broadcast_in_dim, rt.sum, a, v)
        return cost + rt.sum(rt.linalg.cho_solve(rt.linalg.cho_factor(SPD), a) * a)

    def theirs(a, v):
        acts = [
            getattr(jax.nn, n)(v)
            for n in ("relu", "relu6", "elu", "gelu", "hard_tanh", "sparse_plus")
        ]
        cost = sum(jnp.sum(x * (k + 1)) for k, x in enumerate(acts))
        cost = (
            cost
            + jnp.sum(lax.clamp(-1.0, v, 1.0) * v)
            + jnp.sum(lax.pad(a, 0.5, [(1, 0, 1), (0, -1, 0)]) ** 2)
        )
        cost = cost + jnp.sum(lax.scatter_add(a, ROWS, a[:, :3] ** 2, SCATTER) ** 2)
        cost = (
            cost
            + jnp.sum(jnp.diagonal(a, 1) ** 3)
            + jnp.sum(jax.scipy.linalg.toeplitz(v[:3], a[0]) ** 2)
        )
        cost = cost + jnp.sum(lax.dynamic_slice_in_dim(a, 2, 2, axis=1) ** 2)
        cost = cost + _broadcasts(lax.broadcast_in_dim, jnp.sum, a, v)
        return cost + jnp.sum(jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(SPD), a) * a)

    cost = ours(a, v)
    got = rk.function([a, v, s], rk.grad(cost, [a, v]), backend=backend)(A, V, np.int64(2))
    with jax.enable_x64(True):
        expected = jax.grad(theirs, argnums=(0, 1))(A, V)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_switch_runs_the_chosen_branch():
    i, x = rt.scalar("i", dtype="int64"), rt.scalar("x")
    branches = [lambda v: v + 1, lambda v: 2 * v, rt.exp]
    out = rk.switch(i, branches, x)
    g = rk.grad(out, x)
    for backend in BACKENDS:
        f = rk.function([i, x], [out, g], backend=backend)
        for index, x_value, value, grad in [
            (-3, 2.5, 3.5, 1.0),
            (1, 2.5, 5.0, 2.0),
            (9, 0.0, 1.0, 1.0),
        ]:
            np.testing.assert_allclose(f(np.int64(index), x_value), (value, grad))
    assert rt.lax.switch is rk.switch


def test_pytensor_constructors_and_queries():
    assert rt.dscalar().type == rt.scalar().type
    assert rt.fvector("v").type.dtype == "float32" and rt.imatrix().type.dtype == "int32"
    assert rt.tensor3().type.shape == (None, None, None) and rt.lrow().type.shape == (1, None)
    x = rt.tensor("x", shape=(None, 3))
    assert rt.shape_tuple(x)[1] == 3
    assert int(rt.get_scalar_constant_value(rt.shape_i(x, 1))) == 3
    assert float(rt.get_underlying_scalar_constant_value(rt.cast(rt.constant(2), "float32"))) == 2
    with pytest.raises(GraphTypeError, match="not a scalar known before run time"):
        rt.get_scalar_constant_value(rt.shape_i(x, 0))
    assert rt.atleast_Nd(x, 4).type.shape == (1, 1, None, 3)
    assert rt.atleast_Nd(x, 3, left=False).type.shape == (None, 3, 1)
    assert rt.specify_broadcastable(x, 0).type.shape == (1, 3)
    shape = rt.broadcast_shape(x, rt.tensor("y", shape=(4, 1, 1)))
    assert shape[0] == 4 and shape[2] == 3 and isinstance(shape[1], rk.Var)
    assert rt.result_type(rt.vector("f", dtype="float32"), 1.0) == np.float32
    assert rt.issubdtype(rt.vector("k", dtype="int16"), np.integer) and rt.ndim(x) == 2
    assert rt.as_tensor_variable is rt.as_tensor


def test_errors_name_the_function_and_argument():
    v = rt.vector("v")
    with pytest.raises(GraphTypeError, match=r"nn\.one_hot: num_classes must be a static int"):
        rt.nn.one_hot(rt.vector("i", dtype="int64"), rt.scalar("n", dtype="int64"))
    with pytest.raises(GraphTypeError, match="join: the axis comes first"):
        rt.join(v, v)
    with pytest.raises(GraphTypeError, match="tril_indices: n must be a Python int"):
        rt.tril_indices(rt.scalar("n", dtype="int64"))
    with pytest.raises(ShapeError, match="diagonal: axis1 and axis2 are the same axis"):
        rt.diagonal(rt.matrix("m"), 0, 1, 1)
    with pytest.raises(DTypeError, match="bitwise_count: input 'x' must be an integer"):
        rt.bitwise_count(v)
    with pytest.raises(ShapeError, match=r"lax\.pad: padding_config needs one"):
        rt.lax.pad(v, 0.0, [(1, 1, 0), (0, 0, 0)])
    four = rt.vector("four", shape=(4,))
    with pytest.raises(ShapeError, match=r"lax\.broadcast_in_dim: broadcast_dimensions \(1,\)"):
        rt.lax.broadcast_in_dim(four, (4,), (1,))
    with pytest.raises(ShapeError, match=r"operand axis 0 of 'four' has length 4, result axis 0"):
        rt.lax.broadcast_in_dim(four, (3, 4), (0,))
    with pytest.raises(DTypeError, match="switch: index must be an integer scalar"):
        rk.switch(rt.scalar("f"), [lambda: 1.0])
    with pytest.raises(ShapeError, match=r"nn.glu: axis 0 .* must have an even static length"):
        rt.nn.glu(rt.vector("w", shape=(3,)))
    with pytest.raises(ShapeError, match="block: the lists at the top are nested unevenly"):
        rt.block([[v], v])
    dn = lax.GatherDimensionNumbers(
        (1,), (0,), (0,), operand_batching_dims=(1,), start_indices_batching_dims=(0,)
    )
    with pytest.raises(ShapeError, match=r"lax\.gather: 1 window dims for 0 uncollapsed"):
        rt.lax.gather(rt.matrix("m"), rt.constant(ROWS), dn, (1, 4))
    with pytest.raises(GraphTypeError, match="lax: unsupported gather/scatter mode 'one_hot'"):
        rt.lax.gather(rt.matrix("m"), rt.constant(ROWS), GATHER, (1, 4), mode="one_hot")


def test_gather_modes_and_batching_dims_match_jax():
    x = np.arange(12.0).reshape(3, 4)
    starts = np.array([[2], [5], [-1]])  # in range, past the end, before the start
    rows = lax.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    per_row = lax.GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(1,),
        start_index_map=(1,),
        operand_batching_dims=(0,),
        start_indices_batching_dims=(0,),
    )
    a = rt.matrix("a", shape=(3, 4))
    outs = [rt.lax.gather(a, rt.constant(starts), rows, (1, 4), mode=m) for m in ("clip", "fill")]
    outs.append(rt.lax.gather(a, rt.constant(np.array([[3], [0], [1]])), per_row, (1, 1)))
    with jax.enable_x64(True):
        expected = [lax.gather(x, starts, rows, (1, 4), mode=m) for m in ("clip", "fill")]
        expected.append(lax.gather(x, np.array([[3], [0], [1]]), per_row, (1, 1)))
    for got, want in zip(rk.function([a], outs, backend="numpy")(x), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_vmap_of_the_compositions_matches_a_loop():
    def body(a, v):
        scattered = rt.lax.scatter_add(a, rt.constant(ROWS), a[:, :3] * v[0], SCATTER)
        return rt.sum(scattered) + rt.sum(rt.diagonal(a, 1) * rt.linalg.toeplitz(v[:3])[0])

    a, v = rt.tensor("as", shape=(5, 3, 4)), rt.tensor("vs", shape=(5, 8))
    batched = rk.vmap(body)(a, v)
    values = (np.stack([A + k for k in range(5)]), np.stack([V * k for k in range(5)]))
    got = rk.function([a, v], batched, backend="numpy")(*values)
    one_a, one_v = rt.matrix("a", shape=(3, 4)), rt.vector("v", shape=(8,))
    single = rk.function([one_a, one_v], body(one_a, one_v), backend="numpy")
    np.testing.assert_allclose(got, [single(x, y) for x, y in zip(*values, strict=True)])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_real_input_through_complex_values_gets_the_real_part(backend):
    v = rt.vector("v", shape=(2,))
    cost = rt.sum(rt.abs(v * (1 + 2j))) + rt.sum(rt.real(rt.exp(1j * v)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no complex-to-real cast warnings
        got = rk.function([v], rk.grad(cost, v), backend=backend)(np.array([1.0, -2.0]))
    with jax.enable_x64(True):
        expected = jax.grad(
            lambda x: jnp.sum(jnp.abs(x * (1 + 2j))) + jnp.sum(jnp.real(jnp.exp(1j * x)))
        )(np.array([1.0, -2.0]))
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_one_hot_is_at_the_top_level_too():
    assert rt.one_hot is rt.nn.one_hot
    z = rt.vector("z", dtype="int64")
    f = rk.function([z], rt.one_hot(z, 3))
    expected = [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]  # 5 is out of range: zeros
    np.testing.assert_array_equal(f(np.array([2, 0, 5])), expected)
