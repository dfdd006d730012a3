"""``rk.vectorize`` and ``rk.vmap``: a graph for every element of new leading batch axes,
checked against a loop over the batch on both backends, with gradients against
``jax.vmap(jax.grad(...))``; the batching rules, the ``Blockwise`` fallback and the errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.tensor.control import Blockwise
from rewritekit.vectorize import fallback_ops
from rewritekit.vectorize.core import blockwise

BACKENDS = ["numpy", "jax"]
x = rt.vector("x", shape=(3,))
M = rt.matrix("M", shape=(3, 3))
s = rt.scalar("s")

# core graphs of x (and M, s, shared): each is checked against a loop over the batch
CORES = {
    "elementwise": lambda: rt.exp(x) * s + rt.sin(x) / (1 + x * x),
    "broadcast_scalar_core": lambda: rt.sum(x) * rt.ones((2, 3)) + x,
    "reductions": lambda: rt.stack([rt.max(x), rt.mean(x), rt.logsumexp(x), rt.var(x)]),
    "keepdims": lambda: x - rt.max(rt.reshape(x, (1, 3)), axis=1, keepdims=True),
    "argmax": lambda: rt.argmax(x * s),
    "softmax_cumsum": lambda: rt.softmax(x) + rt.cumsum(x),
    "matmul": lambda: M @ x + rt.dot(x, x),
    "indexing": lambda: x[1:] * x[0] + rt.sort(x)[:2],
    "concatenate": lambda: rt.concatenate([x, x[:1] * 2.0]),
    "joined_with_shared": lambda: rt.concatenate([x, M[0]]) + rt.sum(rt.reshape(M, (9,))),
    "layout": lambda: rt.transpose(rt.expand_dims(x, 1) * M) + rt.squeeze(rt.expand_dims(x, 0), 0),
    "reshape": lambda: rt.sum(rt.reshape(rt.concatenate([x, x * s]), (2, 3)), axis=0),
    "matmul_shared_matrix": lambda: x @ M + M @ x + rt.sum(rt.expand_dims(x, 0) @ M, axis=0),
    "sort": lambda: rt.sort(x * s) + rt.argsort(-x),
    "dot": lambda: rt.dot(M, x) + rt.dot(x, M) + rt.dot(x, x),
    "new_axes": lambda: rt.sum(x[None, 1:] * x[:, None], axis=0) + x[-1],
    "einsum": lambda: rt.einsum("ij,j->i", M, x) + rt.einsum("i,i,j->j", x, x, x[::-1]),
    "solve": lambda: rt.linalg.solve(M + 3 * rt.eye(3), x) + rt.linalg.solve(_spd(), M)[0],
    "linalg": lambda: (
        rt.linalg.det(_spd()) * x
        + rt.linalg.inv(_spd()) @ x
        + rt.linalg.cholesky(_spd())[1]
        + rt.linalg.slogdet(_spd() * 2.0)[1]
    ),
    "triangular": lambda: (
        rt.linalg.solve_triangular(M + 3 * rt.eye(3), x, lower=True)
        + rt.linalg.solve_triangular(_spd(), rt.outer(x, x), lower=False)[2]
    ),
    "diagonals": lambda: (
        rt.linalg.diag(x) @ x
        + rt.linalg.trace(rt.outer(x, x))
        + rt.linalg.diag(rt.outer(x, x[::-1]), k=-1)[1]
    ),
    "gather": lambda: rt.sum(M[[0, 2]][:, [1, 1]]) + x[[2, 0, 1]] + M[:, 1:][[1, 1, 0], 0],
    "batched_index": lambda: M[rt.argmax(x)] + M[:, rt.argmin(x)] + x[rt.argsort(x)],
    "index_after_slice": lambda: rt.sum(M[1:, [0, 2, 2]], axis=0) + rt.sum(_t()[[1, 0], :, [0, 1]]),
    "index_update": lambda: (
        rt.set_subtensor(x[[0, 2]], x[:2] * s)
        + rt.sum(rt.inc_subtensor(M[[0, 0], 1:], x[1:]), axis=1)
        + rt.inc_subtensor(x[rt.argsort(x)[:2]], x[::2])
    ),
    "scan": lambda: _sum_scan(rt.scan(lambda c, xi: (c * s + xi, c * xi), rt.zeros(()), x)),
    "scan_shared_rows": lambda: _sum_scan(
        rt.scan(lambda c, row: (rt.tanh(row * c), c @ row), x, M, reverse=True)
    ),
    "scan_carry_grows": lambda: _sum_scan(
        rt.scan(lambda c, row: (c * 0.5 + x, rt.sum(row * c)), rt.zeros(3), M)
    ),
    "while_shared_condition": lambda: rt.while_loop(
        lambda st: st[0] < 3, lambda st: (st[0] + 1, st[1] * x + s), (rt.constant(0), x)
    )[1],
    "while_batched_condition": lambda: _plus(
        rt.while_loop(
            lambda st: rt.sum(st[1]) < 20.0,
            lambda st: (st[0] + 1.0, rt.abs(st[1]) * 2.0 + 0.5),
            (rt.constant(0.0), x),
        )
    ),
    "cond_shared_predicate": lambda: (
        rt.cond(s > 0, lambda a: a * 2.0, lambda a: -a, x)
        + rt.cond(s < 0, lambda a: a * 0.0, lambda a: M[0] * 1.0, x)
    ),
    "cond_batched_predicate": lambda: rt.cond(
        rt.sum(x) > 0, lambda a: rt.exp(a), lambda a: M[1] + 0.0 * s, x
    ),
    "fill": lambda: rt.sum(rt.full((2, 3), rt.sum(x)), axis=0) + rt.stop_gradient(x),
    "updates": lambda: rt.set_subtensor(x[1:], x[:2] * s) + rt.inc_subtensor(x[0], 1.0),
    "update_shared": lambda: rt.sum(rt.inc_subtensor(M[1:, 0], x[:2]) + rt.set_subtensor(M[0], x)),
    "update_column": lambda: rt.sum(rt.set_subtensor(M[:, 1:], rt.expand_dims(x, 1)), axis=0),
}


def _spd():
    """A symmetric positive definite matrix of x and M."""
    return M @ rt.transpose(M) + rt.outer(x, x) + rt.eye(3)


def _sum_scan(result):
    carry, ys = result
    return carry + rt.sum(ys, axis=0)


def _plus(pair):
    return pair[0] + pair[1]


def _t():
    return rt.reshape(rt.concatenate([x, x * 2.0, x - 1.0, x * x]), (2, 3, 2))


def _loop(core_fn, backend, batch):
    out = core_fn()
    f = rk.function([x, M, s], out, backend=backend)
    return np.stack([f(row, batch["M"], batch["s"]) for row in batch["xs"]])


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    return {"xs": rng.normal(size=(n, 3)), "M": rng.normal(size=(3, 3)), "s": np.float64(0.7)}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CORES))
def test_vectorized_graphs_match_a_loop_over_the_batch(name, backend):
    batch = _data(4)
    xs = rt.matrix("xs", shape=(None, 3))
    out = rk.vectorize(CORES[name](), {x: xs})
    got = rk.function([xs, M, s], out, backend=backend)(batch["xs"], batch["M"], batch["s"])
    np.testing.assert_allclose(got, _loop(CORES[name], backend, batch), rtol=1e-12, atol=1e-14)


@settings(max_examples=15, deadline=None)
@given(
    st.integers(1, 5),
    st.integers(1, 3),
    st.sampled_from(sorted(CORES)),
    st.integers(0, 2**16),
)
def test_two_batch_axes_on_both_backends_agree_with_the_loop(b1, b2, name, seed):
    """Property: two batch axes, any core of CORES: JAX, NumPy and a loop over the
    flattened batch give the same values."""
    rng = np.random.default_rng(seed)
    batch = {"xs": rng.normal(size=(b1 * b2, 3)), "M": rng.normal(size=(3, 3)), "s": 0.3}
    xss = rt.tensor("xss", shape=(b1, b2, 3))
    out = rk.vectorize(CORES[name](), {x: xss})
    expected = _loop(CORES[name], "numpy", batch)
    for backend in BACKENDS:
        f = rk.function([xss, M, s], out, backend=backend)
        got = f(batch["xs"].reshape(b1, b2, 3), batch["M"], batch["s"])
        np.testing.assert_allclose(
            got.reshape(expected.shape), expected, rtol=1e-12, atol=1e-14, err_msg=backend
        )


def test_an_elementwise_graph_gains_no_node():
    xs = rt.matrix("xs", shape=(5, 3))
    core = rt.exp(x) * 2.0 + rt.sin(x) - x * x
    batched = rk.vectorize(core, {x: xs})
    assert len(rk.toposort(batched)) == len(rk.toposort(core))
    assert batched.type.shape == (5, 3)


def test_nodes_that_do_not_read_the_batch_are_kept():
    xs = rt.matrix("xs", shape=(5, 3))
    shared = rt.exp(M).sum()
    out, same = rk.vectorize([x * shared, shared], {x: xs})
    assert same is shared
    assert shared in rk.ancestors([out])


def test_the_ops_without_a_rule_fall_back_to_blockwise():
    """No core of CORES takes the fallback (the op records' test lists the Ops that do)."""
    xs = rt.matrix("xs", shape=(5, 3))
    taken = {name: fallback_ops(rk.vectorize(CORES[name](), {x: xs})) for name in CORES}
    assert {name: ops for name, ops in taken.items() if ops} == {}


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_example_gradients_match_jax_vmap_of_grad(backend):
    w = rt.vector("w", shape=(3,))
    loss = rt.sum(rt.log1p(rt.exp(-(M @ w) * x))) + rt.sum(w * w) * 0.1
    xs = rt.matrix("xs", shape=(6, 3))
    per_example = rk.vectorize(rk.grad(loss, w), {x: xs})
    f = rk.function([xs, M, w], per_example, backend=backend)
    data = _data(6, seed=3)
    wv = np.array([0.3, -0.2, 0.5])

    def jloss(wj, xj):
        return jnp.sum(jnp.log1p(jnp.exp(-(data["M"] @ wj) * xj))) + jnp.sum(wj * wj) * 0.1

    with jax.enable_x64(True):
        expected = jax.vmap(jax.grad(jloss), in_axes=(None, 0))(wv, data["xs"])
    np.testing.assert_allclose(f(data["xs"], data["M"], wv), expected, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_example_gradients_through_a_scan_match_jax(backend):
    """The gradient graph holds the loop and its reverse sweep: both batch by their bodies."""
    w = rt.vector("w", shape=(3,))
    carry, ys = rt.scan(lambda c, xi: (rt.tanh(c * w[0] + xi * w[1]) + w[2], c * xi), s, x)
    loss = carry + rt.sum(ys)
    xs = rt.matrix("xs", shape=(6, 3))
    per_example = rk.vectorize(rk.grad(loss, w), {x: xs})
    assert fallback_ops(per_example) == []
    f = rk.function([xs, s, w], per_example, backend=backend)
    data, wv = _data(6, seed=5), np.array([0.8, -0.4, 0.1])

    def jloss(wj, xj):
        def step(c, xi):
            return jnp.tanh(c * wj[0] + xi * wj[1]) + wj[2], c * xi

        c, y = jax.lax.scan(step, data["s"], xj)
        return c + jnp.sum(y)

    with jax.enable_x64(True):
        expected = jax.vmap(jax.grad(jloss), in_axes=(None, 0))(wv, data["xs"])
    np.testing.assert_allclose(f(data["xs"], data["s"], wv), expected, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_a_blockwise_sums_over_the_batch_for_shared_inputs(backend):
    xs = rt.matrix("xs", shape=(5, 3))
    (out,) = blockwise(rt.einsum("ij,j->i", M, x).owner, [M, xs], [False, True], 1)
    assert isinstance(out.owner.op, Blockwise)
    gx, gm = rk.function([xs, M], rk.grad(rt.sum(out * out), [xs, M]), backend=backend)(
        *(d := _data(5, seed=1))["xs"][None], d["M"]
    )
    y = d["xs"] @ d["M"].T
    np.testing.assert_allclose(gx, 2 * y @ d["M"], rtol=1e-12)
    np.testing.assert_allclose(gm, 2 * y.T @ d["xs"], rtol=1e-12)


# --- vmap -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_with_in_axes_and_out_axes(backend):
    t = rt.matrix("t", shape=(3, 7))
    out = rk.vmap(lambda col, m: m @ col + 1.0, in_axes=(1, None), out_axes=1)(t, M)
    assert out.type.shape == (3, 7)
    tv, mv = np.random.default_rng(2).normal(size=(3, 7)), _data(1)["M"]
    np.testing.assert_allclose(rk.function([t, M], out, backend=backend)(tv, mv), mv @ tv + 1.0)


def test_vmap_broadcasts_an_output_that_does_not_read_the_mapped_axis():
    xs = rt.matrix("xs", shape=(4, 3))
    mapped, const = rk.vmap(lambda v: (rt.sum(v), rt.sum(M)))(xs)
    assert const.type.shape[0] in (4, None)
    got = rk.function([xs, M], [mapped, const], backend="numpy")(np.ones((4, 3)), np.eye(3))
    np.testing.assert_allclose(got[1], np.full(4, 3.0))


# --- errors ---------------------------------------------------------------------------------


def test_batch_lengths_that_differ_name_both_inputs():
    y = rt.vector("y", shape=(3,))
    with pytest.raises(ShapeError, match=r"length 5 .*'x'.* 6 .*'y'"):
        rk.vectorize(x + y, {x: rt.matrix("a", shape=(5, 3)), y: rt.matrix("b", shape=(6, 3))})


@pytest.mark.parametrize(
    "value",
    [rt.matrix("wrong_core", shape=(5, 4)), rt.matrix("wrong_dtype", dtype="float32"), x],
)
def test_a_replacement_that_is_not_the_input_with_batch_axes_names_it(value):
    with pytest.raises(GraphTypeError, match=r"replacement of <Var 'x'"):
        rk.vectorize(rt.exp(x), {x: value})


# --- random variables ---------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_batched_parameters_under_one_key_are_one_draw_of_the_batch(backend):
    """PyTensor's semantics: the batch joins the draw's size (each element its own draw),
    the next key is shared: the same graph as the batched draw written by hand."""
    key = rr.key("key")
    k1, a = rr.normal(key, x, 1.0)
    k2, b = rr.gamma(k1, rt.exp(x), 2.0, size=(4, 3))
    xs = rt.matrix("xs", shape=(5, 3))
    next_key, da, db = rk.vectorize([k2, a, b], {x: xs})
    assert next_key is k2 or next_key.type == k2.type
    h1, ha = rr.normal(key, xs, 1.0)
    h2, hb = rr.gamma(h1, rt.exp(xs)[:, None, :], 2.0, size=(5, 4, 3))
    f = rk.function([key, xs], [next_key, da, db], backend=backend)
    g = rk.function([key, xs], [h2, ha, hb], backend=backend)
    data = _data(5)["xs"]
    for got, expected in zip(f(rr.seed(3), data), g(rr.seed(3), data), strict=True):
        np.testing.assert_array_equal(got, expected)
    assert np.unique(f(rr.seed(3), np.zeros((5, 3)))[1]).size == 15  # distinct draws


@pytest.mark.parametrize("backend", BACKENDS)
def test_batched_keys_draw_like_a_loop_over_the_keys(backend):
    key = rr.key("key")
    k, draw = rr.normal(key, x, s)
    keys = rt.tensor("keys", shape=(4, 2), dtype="uint32")
    next_keys, draws = rk.vectorize([k, draw], {key: keys})
    assert next_keys.type.shape == (4, 2) and draws.type.shape == (4, 3)
    f = rk.function([keys, x, s], [next_keys, draws], backend=backend)
    one = rk.function([key, x, s], [k, draw], backend=backend)
    seeds = np.stack([rr.seed(i) for i in range(4)])
    xv = np.array([0.0, 10.0, -5.0])
    got = f(seeds, xv, 2.0)
    for i in range(4):
        for g, e in zip(got, one(seeds[i], xv, 2.0), strict=True):
            np.testing.assert_array_equal(g[i], e)


def test_a_draw_of_an_op_without_a_rule_is_refused():
    """The fallback would give every element the draw of one shared key."""
    from rewritekit.vectorize.core import _fallback

    key = rr.key("key")
    node = rr.normal(key, x, 1.0)[1].owner
    with pytest.raises(GraphTypeError, match="same draw"):
        _fallback(
            node,
            [key, node.inputs[1], rt.matrix("xs", shape=(2, 3)), node.inputs[3]],
            [False, False, True, False],
            1,
        )


# --- Jacobians --------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["rev", "fwd", "auto"])
@pytest.mark.parametrize("static", [True, False])
def test_jacobian_modes_match_jax(mode, static, backend):
    v = rt.vector("v", shape=(3,) if static else (None,))
    W = rt.matrix("W", shape=(5, 3) if static else (None, None))
    J = rk.jacobian(rt.tanh(W @ v) * rt.sum(v * v), v, mode=mode)
    Wv, vv = np.random.default_rng(4).normal(size=(5, 3)), np.array([0.3, -0.5, 0.9])
    with jax.enable_x64(True):
        expected = jax.jacfwd(lambda a: jnp.tanh(Wv @ a) * jnp.sum(a * a))(vv)
    got = rk.function([W, v], J, backend=backend)(Wv, vv)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_auto_mode_takes_forward_mode_for_fewer_inputs_than_outputs():
    W5 = rt.matrix("W5", shape=(5, 3))
    y = rt.tanh(W5 @ x)
    assert rk.jacobian(y, x, mode="auto") is rk.jacobian(y, x, mode="fwd")
    assert rk.jacobian(rt.sum(y) * x, x, mode="auto") is rk.jacobian(rt.sum(y) * x, x)


def test_a_jacobian_mode_that_does_not_exist_is_an_error():
    with pytest.raises(GraphTypeError, match="mode must be 'rev', 'fwd' or 'auto'"):
        rk.jacobian(rt.sin(x), x, mode="forward")


def test_the_shape_of_a_batched_value_is_shared():
    xs = rt.matrix("xs", shape=(None, 3))
    n, vector = rk.vectorize([rt.shape_i(x * 2, 0), rt.shape(x)], {x: xs})
    assert n.type.shape == () and vector.type.shape == (1,)
    got = rk.function([xs], [n, vector], backend="jax")(np.ones((4, 3)))
    assert int(got[0]) == 3 and got[1].tolist() == [3]


def test_a_random_variable_with_parameters_of_its_own_and_a_size_vectorizes():
    # lkj_cholesky's n is an Op parameter beyond (size, dtype): the batched Op keeps it
    key, eta, etas = rr.key(), rt.scalar("eta"), rt.vector("etas", shape=(4,))
    batched = rk.vectorize(rr.lkj_cholesky(key, 3, eta, size=(2,))[1], {eta: etas})
    assert batched.type.shape == (4, 2, 3, 3)
    factors = rk.function([key, etas], batched, backend="numpy")(rr.seed(0), np.arange(1.0, 5.0))
    np.testing.assert_allclose(np.einsum("...ij,...ij->...i", factors, factors), 1.0)
