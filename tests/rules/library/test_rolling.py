"""Rolling chains of equal steps into scans (``rewritekit.rules.library.rolling``): the
rolled graph computes what the unrolled one does, forward and in reverse mode, on both
backends; what cannot be rolled stays as it is."""

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
from rewritekit.rules.library.rolling import MIN_NODES, MIN_STEPS, roll_chains
from rewritekit.rules.trace import RewriteTrace
from rewritekit.tensor.control import Scan

X = np.linspace(-1.0, 1.0, 4)


def _scans(outputs: object) -> list[Scan]:
    return [node.op for node in rk.toposort(outputs) if isinstance(node.op, Scan)]


def _rolled(outputs: list[rk.Var]) -> tuple[list[rk.Var], RewriteTrace]:
    log = RewriteTrace()
    return roll_chains(list(outputs), log), log


def _values(inputs: list[rk.Var], outputs: object, data: list[np.ndarray], **kw: object) -> list:
    f = rk.function(inputs, outputs, backend="numpy", rules=None, **kw)
    return [np.asarray(v) for v in f(*data)]


def _chain(x: rk.Var, steps: int, step: object) -> rk.Var:
    y = x
    for k in range(steps):
        y = step(y, k)  # type: ignore[operator]
    return y


def _tanh_step(y: rk.Var, k: int) -> rk.Var:
    return rt.tanh(y * 0.5 + k % 5) + rt.log(1 + rt.exp(y))


def _jax_tanh_chain(x: jax.Array, steps: int) -> jax.Array:
    y = x
    for k in range(steps):
        y = jnp.tanh(y * 0.5 + k % 5) + jnp.log1p(jnp.exp(y))
    return jnp.sum(y)


# --- forward -----------------------------------------------------------------------------


def test_a_chain_becomes_one_scan_with_the_same_values() -> None:
    x = rt.vector("x", shape=(4,))
    y = _chain(x, 30, _tanh_step)
    (rolled,), log = _rolled([y])
    scans = _scans(rolled)
    assert len(scans) == 1 and scans[0].length >= 28
    assert [e.rule for e in log] == ["loops.roll_chain"]
    assert len(rk.toposort(rolled)) < 20
    np.testing.assert_allclose(_values([x], rolled, [X]), _values([x], y, [X]), rtol=1e-14)


def test_the_loop_is_cut_where_its_first_step_is_equal_too() -> None:
    """Members cut at ``log`` leave the first step (``log(erfc(x * 0.5 + c))``, with no
    ``+ 0.5`` before it) outside; cut at the ``+ 0.5`` every step is equal."""
    x = rt.vector("x", shape=(4,))
    y = _chain(x, 12, lambda y, k: rt.log(rt.erfc(y * 0.5 + (k % 3) * 0.1)) + 0.5)
    (rolled,), _ = _rolled([y])
    scans = _scans(rolled)
    assert len(scans) == 1 and scans[0].length == 12
    outside = [n.op for n in rk.toposort(rolled) if not isinstance(n.op, Scan)]
    assert not any(op == rt.erfc for op in outside)
    np.testing.assert_allclose(_values([x], rolled, [X]), _values([x], y, [X]), rtol=1e-14)


def test_the_constants_that_vary_become_a_sequence_and_equal_ones_stay() -> None:
    # step 2's constant is 0.5, the same Constant as the multiplier: each use has its slot
    x = rt.vector("x", shape=(4,))
    y = _chain(x, 20, lambda y, k: rt.tanh(y * 0.5 + 0.25 * k))
    (rolled,), _ = _rolled([y])
    (scan,) = _scans(rolled)
    assert scan.n_seq == 1
    np.testing.assert_allclose(_values([x], rolled, [X]), _values([x], y, [X]), rtol=1e-14)


def test_a_chain_shorter_than_the_minimum_stays_unrolled() -> None:
    x = rt.vector("x", shape=(4,))
    y = _chain(x, MIN_STEPS - 1, lambda y, k: rt.tanh(rt.sin(y * 0.5 + k) * 2.0 + 1.0) * 0.5)
    (rolled,), log = _rolled([y])
    assert rolled is y and not log


def test_a_chain_of_few_nodes_in_all_stays_unrolled() -> None:
    x = rt.vector("x", shape=(4,))
    y = _chain(x, 12, lambda y, k: y / (1.5 + k))  # 12 divisions: less than MIN_NODES
    (rolled,), log = _rolled([y])
    assert rolled is y and not log
    longer = _chain(x, MIN_NODES + 2, lambda y, k: y / (1.5 + k))
    (rolled,), log = _rolled([longer])
    assert len(_scans(rolled)) == 1
    np.testing.assert_allclose(_values([x], rolled, [X]), _values([x], longer, [X]), rtol=1e-14)


def test_rows_of_an_input_become_the_scanned_sequence() -> None:
    x, w = rt.vector("x", shape=(3,)), rt.matrix("w", shape=(20, 3))
    y = _chain(x, 20, lambda y, k: rt.tanh(y * w[k] + 0.1))
    (rolled,), _ = _rolled([y])
    (node,) = [n for n in rk.toposort(rolled) if isinstance(n.op, Scan)]
    assert node.op.n_seq == 1
    seq = node.inputs[1]  # w itself or its rows from the first rolled step on
    assert seq is w or (seq.owner is not None and seq.owner.inputs[0] is w)
    data = [X[:3], np.random.default_rng(0).normal(size=(20, 3))]
    np.testing.assert_allclose(_values([x, w], rolled, data), _values([x, w], y, data), rtol=1e-14)


def test_a_value_read_outside_the_chain_is_a_row_of_the_scans_ys() -> None:
    x = rt.vector("x", shape=(4,))
    values = [x]
    for k in range(20):
        values.append(rt.sin(values[-1] * 0.9 + k * 0.1))
    outs = [values[-1], values[7], rt.exp(values[12])]
    rolled, _ = _rolled(outs)
    assert len(_scans(rolled)) == 1
    for a, b in zip(_values([x], rolled, [X]), _values([x], outs, [X]), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_steps_that_repeat_with_a_period_roll_as_blocks() -> None:
    x = rt.vector("x", shape=(4,))
    y = _chain(x, 24, lambda y, k: rt.sin(y) * 0.9 if k % 2 else rt.cos(y) + 0.1)
    (rolled,), _ = _rolled([y])
    (scan,) = _scans(rolled)
    assert scan.length >= MIN_STEPS and scan.length <= 12
    np.testing.assert_allclose(_values([x], rolled, [X]), _values([x], y, [X]), rtol=1e-14)


def test_a_skip_connection_is_carried_and_a_longer_one_is_not_rolled() -> None:
    x = rt.vector("x", shape=(4,))
    values = [x, x * 0.5]
    for _ in range(40):  # each step reads the two before: carried as a pair
        values.append(rt.tanh(values[-1]) + values[-2] * 0.5)
    (rolled,), log = _rolled([values[-1]])
    (scan,) = _scans(rolled)
    assert scan.n_carry == 2 and log
    np.testing.assert_allclose(_values([x], rolled, [X]), _values([x], values[-1], [X]))
    values = [x, x * 0.5, x * 0.25]
    for _ in range(40):  # each step reads three back: not a state carried step to step
        values.append(rt.tanh(values[-1]) + values[-3] * 0.5)
    (rolled,), log = _rolled([values[-1]])
    assert not _scans(rolled) and not log


def test_random_draws_are_never_moved_into_a_loop() -> None:
    x = rt.vector("x", shape=(4,))
    key, y = rr.key(), x
    for _ in range(12):
        key, draw = rr.normal(key, 0.0, 1.0, size=(4,))
        y = rt.tanh(y + draw)
    (rolled,), log = _rolled([y])
    assert rolled is y and not log


def test_the_chain_of_a_sum_of_one_repeated_value_is_left_to_the_rules() -> None:
    x = rt.vector("x", shape=(4,))
    term = rt.exp(x) * rt.sin(x)
    total = term
    for _ in range(30):
        total = total + term
    (rolled,), log = _rolled([total])
    assert rolled is total and not log


# --- through rk.function, rk.grad and rk.explain -------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_function_rolls_the_chain_and_its_gradient(backend: str) -> None:
    x = rt.vector("x", shape=(4,))
    cost = rt.sum(_chain(x, 40, _tanh_step))
    f = rk.function([x], [cost, rk.grad(cost, x)], backend=backend)
    rolled = [e for e in f.trace if e.rule == "loops.roll_chain"]
    assert rolled and "loops.roll_chain" in rk.explain(f)
    scans = _scans(f.graph)
    assert scans and all(s.length is not None for s in scans)
    assert len(rk.toposort(f.graph)) < 150  # against about 900 unrolled
    value, grad = f(X)
    with jax.enable_x64(True):
        want_value, want_grad = jax.value_and_grad(_jax_tanh_chain)(X, 40)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


def test_roll_false_keeps_the_steps_and_is_cached_apart() -> None:
    x = rt.vector("x", shape=(4,))
    y = rt.sum(_chain(x, 20, lambda y, k: rt.tanh(y * 0.5 + k)))
    rolled = rk.function([x], y, backend="numpy")
    unrolled = rk.function([x], y, backend="numpy", roll=False)
    assert _scans(rolled.graph) and not _scans(unrolled.graph)
    np.testing.assert_allclose(rolled(X), unrolled(X), rtol=1e-14)


def test_grad_rolls_before_the_rules_and_roll_false_does_not() -> None:
    x = rt.vector("x", shape=(4,))
    cost = rt.sum(_chain(x, 30, _tanh_step))
    rolled, unrolled = rk.grad(cost, x), rk.grad(cost, x, roll=False)
    assert _scans(rolled) and not _scans(unrolled)
    np.testing.assert_allclose(_values([x], rolled, [X]), _values([x], unrolled, [X]), rtol=1e-12)


def test_grad_with_respect_to_a_step_of_the_chain() -> None:
    x = rt.vector("x", shape=(4,))
    values = [x]
    for k in range(30):
        values.append(rt.tanh(values[-1] * 0.7 + 0.1 * k))
    cost = rt.sum(values[-1])
    g = rk.grad(cost, values[10])  # an intermediate: it must stay in the graph
    want = rk.grad(cost, values[10], roll=False)
    np.testing.assert_allclose(_values([x], g, [X]), _values([x], want, [X]), rtol=1e-12)


def test_check_rewrites_accepts_the_roll() -> None:
    x = rt.vector("x", shape=(4,))
    y = rt.sum(_chain(x, 16, lambda y, k: rt.sin(y * 0.8 + 0.05 * k)))
    f = rk.function([x], y, backend="numpy", check_rewrites=True)
    assert any(e.rule == "loops.roll_chain" for e in f.trace)
    f(X)  # raises RewriteMismatch if the rolled value differed


# --- properties ------------------------------------------------------------------------------

_UNARY = {
    "tanh": (rt.tanh, jnp.tanh),
    "sin": (rt.sin, jnp.sin),
    "softplus": (rt.softplus, jax.nn.softplus),
    "sigmoid": (rt.sigmoid, jax.nn.sigmoid),
}


def _step_of(ops: list[str], scales: list[float], m: str) -> object:
    def step(y: object, k: int) -> object:
        out = y
        for name, scale in zip(ops, scales, strict=True):
            fn = _UNARY[name][0 if m == "rt" else 1]
            out = fn(out * scale + 0.1 * (k % 3)) + y * 0.25  # type: ignore[operator]
        return out

    return step


@settings(max_examples=15)
@given(
    ops=st.lists(st.sampled_from(sorted(_UNARY)), min_size=1, max_size=3),
    scales=st.lists(st.floats(0.2, 0.9), min_size=3, max_size=3),
    steps=st.integers(12, 30),  # 4-15 nodes a step: MIN_NODES (48) in all
)
def test_rolled_chains_and_gradients_match_jax(
    ops: list[str], scales: list[float], steps: int
) -> None:
    scales = scales[: len(ops)]
    x = rt.vector("x", shape=(4,))
    cost = rt.sum(_chain(x, steps, _step_of(ops, scales, "rt")))
    g = rk.grad(cost, x)
    jax_step = _step_of(ops, scales, "jnp")

    def reference(v: jax.Array) -> jax.Array:
        return jnp.sum(_chain(v, steps, jax_step))  # type: ignore[arg-type]

    with jax.enable_x64(True):
        want_value, want_grad = jax.value_and_grad(reference)(X)
    for backend in ("numpy", "jax"):
        f = rk.function([x], [cost, g], backend=backend)
        assert _scans(f.graph)
        value, grad = f(X)
        np.testing.assert_allclose(value, want_value, rtol=1e-10)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-9, atol=1e-12)
    unrolled = rk.function([x], [cost, rk.grad(cost, x, roll=False)], backend="numpy", roll=False)
    np.testing.assert_allclose(unrolled(X)[1], grad, rtol=1e-9, atol=1e-12)


def test_a_step_that_may_change_an_unknown_shape_is_not_rolled() -> None:
    x = rt.vector("x")  # length unknown: concatenate([y, y]) has y's type, not its shape
    y = _chain(x, 12, lambda y, k: rt.concatenate([y, y])[: rt.shape(y)[0] + 1] * (1.0 + k))
    (rolled,), log = _rolled([y])
    assert not log
    np.testing.assert_allclose(_values([x], rolled, [X]), _values([x], y, [X]))


def test_an_elementwise_step_over_a_vector_of_unknown_length_rolls() -> None:
    x = rt.vector("x")
    y = _chain(x, 20, lambda y, k: rt.tanh(y * 0.5 + 0.1 * k))
    (rolled,), _ = _rolled([y])
    assert len(_scans(rolled)) == 1
    np.testing.assert_allclose(_values([x], rolled, [X]), _values([x], y, [X]), rtol=1e-14)


def _momentum(p: object, v: object, steps: int, m: object) -> object:
    for _ in range(steps):
        v = 0.9 * v - 0.1 * m.sin(p)  # type: ignore[operator]
        p = p + v  # type: ignore[operator]
    return m.sum(p)  # type: ignore[attr-defined]


def test_two_carries_that_read_each_other_roll_into_one_scan() -> None:
    x = rt.vector("x", shape=(4,))
    cost = _momentum(x, x * 0.0, 30, rt)
    (rolled,), log = _rolled([cost])
    (scan,) = _scans(rolled)
    assert scan.n_carry == 2 and scan.length >= 24 and log
    np.testing.assert_allclose(_values([x], [rolled], [X]), _values([x], [cost], [X]), rtol=1e-14)
    g = rk.grad(cost, x)
    assert any(s.n_carry == 2 and s.reverse for s in _scans(g))
    with jax.enable_x64(True):
        want = jax.grad(lambda v: _momentum(v, v * 0.0, 30, jnp))(X)
    for backend in ("numpy", "jax"):
        np.testing.assert_allclose(rk.function([x], g, backend=backend)(X), want, rtol=1e-12)


@settings(max_examples=15)
@given(
    a=st.sampled_from(sorted(_UNARY)),
    b=st.sampled_from(sorted(_UNARY)),
    scales=st.lists(st.floats(0.1, 0.9), min_size=4, max_size=4),
    steps=st.integers(16, 30),
)
def test_two_carry_chains_and_gradients_match_jax(
    a: str, b: str, scales: list[float], steps: int
) -> None:
    s1, s2, s3, s4 = scales

    def run(x: object, m: str) -> object:
        fa, fb = _UNARY[a][0 if m == "rt" else 1], _UNARY[b][0 if m == "rt" else 1]
        u, w = x, x * s4  # type: ignore[operator]
        for k in range(steps):
            u, w = fa(u * s1 + w) * s2, fb(w - u * s3) + 0.01 * (k % 4)
        return (rt if m == "rt" else jnp).sum(u * w)  # type: ignore[attr-defined]

    x = rt.vector("x", shape=(4,))
    cost = run(x, "rt")
    g = rk.grad(cost, x)
    with jax.enable_x64(True):
        want_value, want_grad = jax.value_and_grad(lambda v: run(v, "jnp"))(X)
    f = rk.function([x], [cost, g], backend="jax")
    assert any(s.n_carry == 2 for s in _scans(f.graph))
    value, grad = f(X)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-9, atol=1e-12)
