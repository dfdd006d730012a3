"""Out-of-bounds indices, the same on both backends (issue 20).

Mode "raise" (``x[i]``): a compiled function raises ``rk.GraphIndexError`` naming the Op,
the graph input the index came from, the axis, the index and the length, word for word
the same on NumPy and JAX; ``f.jax_fn`` reads as "fill". Modes "clip" and "fill" compute
the same on both backends as ``jax.numpy``'s ``.at[...]`` modes, and their gradients
match finite differences and ``jax.grad``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import GraphIndexError, GraphTypeError
from rewritekit.vectorize.core import blockwise

BACKENDS = ("numpy", "jax")
X = np.arange(5.0)
M = np.arange(12.0).reshape(3, 4)

x = rt.vector("x")
m = rt.matrix("m")
i = rt.scalar("i", dtype="int64")
idx = rt.vector("idx", dtype="int64")
cols = rt.vector("cols", dtype="int64")
v = rt.vector("v")


def errors(inputs, output, *args):
    """The GraphIndexError message of each backend (failing if one returns)."""
    found = []
    for backend in BACKENDS:
        f = rk.function(inputs, output, backend=backend)
        with pytest.raises(GraphIndexError) as info:
            f(*args)
        found.append(str(info.value))
    return found


# --- mode "raise": the four snippets, then the rest --------------------------------


@pytest.mark.parametrize(
    ("output", "index", "op"),
    [
        (x[i], 5, "getitem"),
        (x[i], -6, "getitem"),
        (rt.set_subtensor(x[i], 9.0), 7, "set_subtensor"),
    ],
)
def test_an_index_out_of_bounds_raises_the_same_error_on_both_backends(output, index, op):
    numpy_message, jax_message = errors([x, i], output, X, index)
    assert numpy_message == jax_message
    assert numpy_message.startswith(
        f"{op}: index {index} is out of bounds for axis 0 with length 5 (index from input 'i')"
    )


def test_in_bounds_negative_indices_count_from_the_end():
    for backend in BACKENDS:
        f = rk.function([x, i], [x[i], x.at[i].set(9.0), x.at[i].add(1.0)], backend=backend)
        for k in (-5, -1, 0, 4):
            got, put, added = (np.asarray(r) for r in f(X, k))
            assert got == X[k]
            expected = X.copy()
            expected[k] = 9.0
            np.testing.assert_array_equal(put, expected)
            expected[k] = X[k] + 1.0
            np.testing.assert_array_equal(added, expected)


@pytest.mark.parametrize(
    ("inputs", "output", "args", "start"),
    [
        ([x, idx], x[idx], (X, [0, 4, 7]), "getitem: index 7 is out of bounds for axis 0"),
        ([m, idx, cols], m[idx, cols], (M, [0, 2], [1, -5]), "getitem: index -5 is out of b"),
        ([m, cols], m[:, cols], (M, [0, 4]), "getitem: index 4 is out of bounds for axis 1"),
        (
            [m, i, cols],
            m[i, cols],
            (M, -4, [0, 1]),
            "getitem: index -4 is out of bounds for axis 0",
        ),
        ([m, idx], rt.set_subtensor(m[idx], 1.0), (M, [0, 3]), "set_subtensor: index 3 is out"),
        ([x, idx], rt.inc_subtensor(x[idx], 1.0), (X, [-6, 3]), "inc_subtensor: index -6 is ou"),
        ([m, cols], rt.take(m, cols, axis=1), (M, [4]), "getitem: index 4 is out of bounds for"),
        (
            [m, cols],
            rt.take_along_axis(m, rt.expand_dims(cols, 0), axis=1),
            (M, [1, 4]),
            "getitem: index 4 is out of bounds for axis 1 with length 4 (index from input 'cols')",
        ),
    ],
)
def test_advanced_indices_sets_and_increments_raise_alike(inputs, output, args, start):
    numpy_message, jax_message = errors(inputs, output, *args)
    assert numpy_message == jax_message
    assert numpy_message.startswith(start)


def test_the_message_names_every_input_the_index_is_computed_from():
    j = rt.scalar("j", dtype="int64")
    (message, _) = errors([m, i, j], m[:, i + 2 * j], M, 1, 2)
    assert "index 5 is out of bounds for axis 1 with length 4 (index from inputs 'i', 'j')" in (
        message
    )


def test_a_static_index_beyond_a_length_known_only_at_run_time_raises():
    with pytest.raises(GraphIndexError, match=r"getitem: index 3 .* with length 2 \(a static"):
        rk.function([x], x[3], backend="numpy")(np.zeros(2))
    with pytest.raises(GraphIndexError, match=r"getitem: index 3 .* with length 2 \(a static"):
        rk.function([x], x[3])(np.zeros(2))


def test_an_index_out_of_bounds_inside_a_loop_body_raises_on_both_backends():
    _, ys = rk.scan(lambda c, k: (c + x[k], x[k]), rt.constant(0.0), idx)
    numpy_message, jax_message = errors([x, idx], ys, X, np.array([0, 9, 1]))
    assert numpy_message == jax_message
    assert numpy_message.startswith("getitem: index 9 is out of bounds for axis 0 with length 5")
    # a Blockwise (vectorization's fallback: a loop in NumPy, jax.vmap in JAX)
    (batched,) = blockwise(x[i].owner, [m, idx], [True, True], 1)
    numpy_message, jax_message = errors([m, idx], batched, M, np.array([0, 1, 7]))
    assert numpy_message == jax_message
    assert numpy_message.startswith("getitem: index 7 is out of bounds for axis 0 with length 4")


def test_jax_fn_reads_mode_raise_as_fill_every_time():
    f = rk.function([x, i], [x[i], x.at[i].set(9.0), x.at[i].add(1.0)])
    with jax.enable_x64(True):
        for run in (f.jax_fn, jax.jit(f.jax_fn), f.jitted):
            got, put, added = run(X, 7)
            assert np.isnan(got)
            np.testing.assert_array_equal(put, X)
            np.testing.assert_array_equal(added, X)
        # no gradient reaches x through an element "fill" filled
        grad = jax.grad(lambda a, k: jnp.nan_to_num(f.jax_fn(a, k)[0]))(X, 7)
        np.testing.assert_array_equal(grad, np.zeros(5))
    ints = rt.vector("ints", dtype="int32")
    g = rk.function([ints, i], ints[i])
    with jax.enable_x64(True):
        assert int(g.jax_fn(np.arange(3, dtype="int32"), 5)) == np.iinfo("int32").min


# --- modes "clip" and "fill" ----------------------------------------------------------------


def _modes_graph():
    """The graph of the property test: every kind of entry in both modes."""
    outputs = []
    for mode in ("clip", "fill"):
        outputs += [
            rt.getitem(m, (idx, cols), mode),
            rt.getitem(m, (slice(None), cols), mode, fill_value=-1.0),
            rt.getitem(m, (i, cols), mode),
            m.at[idx, cols].set(9.0, mode=mode),  # one value: repeated writes agree
            m.at[idx, cols].add(v, mode=mode),
            m.at[i].set(v, mode=mode),
        ]
    return [m, idx, cols, i, v], outputs


@functools.cache
def _modes_function(backend):
    inputs, outputs = _modes_graph()
    return rk.function(inputs, outputs, backend=backend)


def _jnp_reference(a, rows, columns, k, values):
    """The same with ``jax.numpy``'s ``.at[...]`` (the oracle of the modes)."""
    a = jnp.asarray(a)
    out = []
    for mode, drop in (("clip", "clip"), ("fill", "drop")):
        out += [
            a.at[rows, columns].get(mode=mode),
            a.at[:, columns].get(mode=mode, fill_value=-1.0),
            a.at[k, columns].get(mode=mode),
            a.at[rows, columns].set(9.0, mode=drop),
            a.at[rows, columns].add(values, mode=drop),
            a.at[k].set(values, mode=drop),
        ]
    return out


@settings(max_examples=25)
@given(
    rows=st.lists(st.integers(-6, 5), min_size=4, max_size=4),
    columns=st.lists(st.integers(-7, 6), min_size=4, max_size=4),
    k=st.integers(-5, 4),
)
def test_clip_and_fill_agree_across_backends_and_with_jax_numpy(rows, columns, k):
    args = (M, np.array(rows), np.array(columns), k, np.array([1.0, 2.0, 4.0, 8.0]))
    numpy_values = _modes_function("numpy")(*args)
    jax_values = _modes_function("jax")(*args)
    with jax.enable_x64(True):
        expected = _jnp_reference(*args)
    for ours, theirs, reference in zip(numpy_values, jax_values, expected, strict=True):
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(ours, np.asarray(reference))


def test_take_modes_follow_numpy_and_jax_numpy():
    for backend in BACKENDS:
        f = rk.function(
            [x, idx],
            [rt.take(x, idx, mode=mode) for mode in ("wrap", "clip", "fill")],
            backend=backend,
        )
        k = np.array([-7, -1, 2, 6])
        wrapped, clipped, filled = f(X, k)
        np.testing.assert_array_equal(wrapped, np.take(X, k, mode="wrap"))
        np.testing.assert_array_equal(clipped, np.take(X, k, mode="clip"))  # -1 -> 0
        np.testing.assert_array_equal(filled, [np.nan, 4.0, 2.0, np.nan])


def test_modes_of_an_axis_of_length_zero():
    empty = np.zeros((0, 3))
    for backend in BACKENDS:
        filled = rk.function([m, i], rt.getitem(m, i, "fill", 7.0), backend=backend)
        np.testing.assert_array_equal(filled(empty, 0), [7.0, 7.0, 7.0])
        dropped = rk.function([m, i], m.at[i].set(1.0, mode="drop"), backend=backend)
        assert np.asarray(dropped(empty, 0)).shape == (0, 3)
        clipped = rk.function([m, i], rt.getitem(m, i, "clip"), backend=backend)
        with pytest.raises(GraphIndexError, match="mode 'clip' cannot clamp an index into axis 0"):
            clipped(empty, 0)


def test_mode_and_fill_value_errors_name_the_function():
    with pytest.raises(GraphTypeError, match="getitem: mode must be 'raise', 'clip' or 'fill'"):
        rt.getitem(x, i, mode="wrap")
    with pytest.raises(GraphTypeError, match="set_subtensor: mode must be 'raise', 'clip' or"):
        x.at[i].set(1.0, mode="promise_in_bounds")
    with pytest.raises(GraphTypeError, match=r"getitem: fill_value nan does not fit int64"):
        rt.getitem(idx, i, mode="fill", fill_value=np.nan)
    with pytest.raises(GraphTypeError, match="getitem: fill_value must be a static scalar"):
        rt.getitem(x, i, mode="fill", fill_value=v)


def test_static_indices_out_of_a_static_length_are_defined_by_the_modes():
    s = rt.vector("s", shape=(3,))
    assert rt.getitem(s, 7, "fill").type.shape == ()
    f = rk.function([s], [rt.getitem(s, 7, "clip"), s.at[[0, 5]].add(1.0, mode="drop")])
    clipped, added = f(np.arange(3.0))
    assert float(clipped) == 2.0
    np.testing.assert_array_equal(added, [1.0, 1.0, 2.0])


# --- gradients --------------------------------------------------------------------------


READ, SET, ADD = np.array([0, 7, -6, 2]), np.array([0, 7, -2]), np.array([4, 9, -6, 4])
WEIGHTS = np.arange(1.0, 6.0)


def _costs(mode):
    """A cost reading, setting and adding at indices out of bounds: ours and jax.numpy's."""
    fill = 0.0 if mode == "fill" else None
    w = rt.constant(WEIGHTS)
    ours = (
        rt.sum(rt.getitem(x, idx[:4], mode, fill) * w[:4])
        + rt.sum(rt.sin(x.at[idx[4:7]].set(v[:3], mode=mode)) * w)
        + rt.sum(rt.cos(x.at[idx[7:]].add(v * v, mode=mode)) * w)
    )
    drop = "drop" if mode == "fill" else mode

    def theirs(a, b):
        return (
            jnp.sum(a.at[READ].get(mode=mode, fill_value=fill) * WEIGHTS[:4])
            + jnp.sum(jnp.sin(a.at[SET].set(b[:3], mode=drop)) * WEIGHTS)
            + jnp.sum(jnp.cos(a.at[ADD].add(b * b, mode=drop)) * WEIGHTS)
        )

    return ours, theirs


def _finite_differences(f, a, eps=1e-6):
    out = np.zeros_like(a)
    for k in range(a.size):
        step = np.zeros_like(a)
        step[k] = eps
        out[k] = (f(a + step) - f(a - step)) / (2 * eps)
    return out


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gradients_of_the_modes(mode):
    cost, theirs = _costs(mode)
    grads = rk.grad(cost, [x, v])
    indices, a, b = np.concatenate([READ, SET, ADD]), np.linspace(0.5, 2.0, 5), np.arange(0.5, 4.5)
    value = rk.function([x, v, idx], cost, backend="numpy")
    numpy_grads = rk.function([x, v, idx], grads, backend="numpy")(a, b, indices)
    np.testing.assert_allclose(
        numpy_grads[0], _finite_differences(lambda p: float(value(p, b, indices)), a), atol=1e-6
    )
    np.testing.assert_allclose(
        numpy_grads[1], _finite_differences(lambda p: float(value(a, p, indices)), b), atol=1e-6
    )
    jax_grads = rk.function([x, v, idx], grads)(a, b, indices)
    with jax.enable_x64(True):
        expected = jax.grad(theirs, argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
    for ours, reference in zip(jax_grads, expected, strict=True):
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-12)
    if mode == "clip":  # the clamped reads and writes carry gradient to the edge elements
        assert numpy_grads[0][4] != 0.0
