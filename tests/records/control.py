"""Op records for the control-flow Ops (``rewritekit.tensor.control``): ``Scan``, ``While``
and ``Cond``, each built with the user API (``rk.scan``, ``rk.while_loop``, ``rk.cond``)
and computed by the reference with plain Python loops and branches over NumPy."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.tensor import control as cf
from tests.records import OpRecord, values


def _stacked(ys, dtype, shape=()):
    """``ys`` stacked along a new axis, of ``dtype`` (an empty loop stacks nothing)."""
    return np.stack(ys).astype(dtype) if ys else np.zeros((0, *shape), dtype)


# --- scan -------------------------------------------------------------------------------


def _recurrence(x, w):
    return rk.scan(lambda c, xi: (c * rt.tanh(w) + rt.sin(xi), c * xi), w, x)


def _recurrence_reference(x, w):
    c, ys = w, []
    for xi in x:
        ys.append(c * xi)
        c = c * np.tanh(w) + np.sin(xi)
    return np.asarray(c, x.dtype), _stacked(ys, x.dtype)


def _vector_and_scalar(min_size):
    def draw(data, dtype):
        n = data.draw(st.integers(min_size, 4), label="steps")
        return [values(data, dtype, (n,), -2.0, 2.0), values(data, dtype, (), -1.0, 1.0)]

    return draw


def _reversed_pytree(m, v):
    """A reversed scan over two sequences, a dict carry holding an int counter, and a y
    that is a tuple holding None."""

    def body(carry, xs):
        acc = rt.sin(carry["acc"]) * xs["row"] + xs["lead"]
        return {"acc": acc, "k": carry["k"] + 1}, (carry["acc"] * xs["row"], None)

    final, (ys, _) = rk.scan(body, {"acc": v, "k": 0}, {"row": m, "lead": m[:, 0]}, reverse=True)
    return final["acc"], final["k"], ys


def _reversed_pytree_reference(m, v):
    acc, k, ys = v, 0, [None] * len(m)
    for t in reversed(range(len(m))):
        ys[t] = acc * m[t]
        acc, k = np.sin(acc) * m[t] + m[t, 0], k + 1
    return np.asarray(acc, m.dtype), np.int64(k), _stacked(ys, m.dtype, v.shape)


def _matrix_and_row(data, dtype):
    steps, width = data.draw(st.integers(0, 3), label="steps"), data.draw(st.integers(1, 3))
    return [values(data, dtype, (steps, width), -2.0, 2.0), values(data, dtype, (width,), -1, 1)]


def _counted(w):
    return rk.scan(lambda c, _: (c * 0.5 + rt.cos(c), c), w, length=3)


def _counted_reference(w):
    c, ys = w, []
    for _ in range(3):
        ys.append(c)
        c = c * 0.5 + np.cos(c)
    return np.asarray(c, w.dtype), _stacked(ys, w.dtype)


def _scalar(data, dtype):
    return [values(data, dtype, (), -2.0, 2.0)]


# --- while_loop -------------------------------------------------------------------------


def _grow(v):
    return rk.while_loop(
        lambda s: rt.sum(s[0]) < 20.0, lambda s: (s[0] * 1.5 + 0.5, s[1] + 1), (v, 0)
    )


def _grow_reference(v):
    n = 0
    while v.sum() < 20.0:
        v, n = v * 1.5 + 0.5, n + 1
    return v, np.int64(n)


def _positive_vector(data, dtype):
    n = data.draw(st.integers(1, 3), label="length")  # not empty: the sum must grow
    return [values(data, dtype, (n,), 0.5, 3.0)]


def _bounded(v, bound):
    return rk.while_loop(lambda s: s < bound, lambda s: s * 1.5 + 0.25, v, max_steps=6)


def _bounded_reference(v, bound):
    for _ in range(6):
        if not v < bound:
            break
        v = v * 1.5 + 0.25
    return np.asarray(v, bound.dtype)


# --- cond -------------------------------------------------------------------------------


def _branches(p, x, w):
    """Pytree outputs; the true branch closes over w, both read the operands."""
    first, second = rk.cond(
        p,
        lambda a, b: (rt.exp(rt.tanh(a)) * w, {"m": rt.sum(a) * b}),
        lambda a, b: (a - rt.sin(b), {"m": b * 2.0}),
        x,
        w * 0.5,
    )
    return first, second["m"]


def _branches_reference(p, x, w):
    b = w * 0.5
    if p:
        return (np.exp(np.tanh(x)) * w).astype(x.dtype), np.asarray(np.sum(x) * b, x.dtype)
    return (x - np.sin(b)).astype(x.dtype), np.asarray(b * 2.0, x.dtype)


def _pred_vector_scalar(data, dtype):
    n = data.draw(st.integers(0, 3), label="length")
    return [
        values(data, "bool", ()),
        values(data, dtype, (n,), -2.0, 2.0),
        values(data, dtype, (), -2.0, 2.0),
    ]


def _blockwise(rows, m):
    """``einsum`` (no batching rule yet) vectorized over the rows: one ``Blockwise`` node
    with ``m`` shared."""
    core = rk.Var(rows.type.with_shape(rows.type.shape[1:]), "row")
    return rk.vectorize(rt.einsum("ij,j->i", m, core) * rt.sum(core), {core: rows})


def _blockwise_reference(rows, m):
    return ((rows @ m.T) * rows.sum(axis=1, keepdims=True)).astype(rows.dtype)


def _rows_and_matrix(data, dtype):
    batch, width = data.draw(st.integers(1, 4), label="batch"), data.draw(st.integers(1, 3))
    height = data.draw(st.integers(1, 3))
    return [values(data, dtype, (batch, width), -2, 2), values(data, dtype, (height, width), -2, 2)]


RECORDS = [
    OpRecord(
        "blockwise_einsum",
        (cf.Blockwise,),
        _blockwise,
        _blockwise_reference,
        _rows_and_matrix,
        notes="a batched input and a shared one; the vjp sums the shared one's over rows",
    ),
    OpRecord(
        "scan_recurrence",
        (cf.Scan,),
        _recurrence,
        _recurrence_reference,
        _vector_and_scalar(0),
        grad_draw=_vector_and_scalar(1),
        notes="a closed-over value, the carry read by y; zero steps drawn too",
    ),
    OpRecord(
        "scan_reversed_pytree",
        (cf.Scan,),
        _reversed_pytree,
        _reversed_pytree_reference,
        _matrix_and_row,
    ),
    OpRecord("scan_length_without_xs", (cf.Scan,), _counted, _counted_reference, _scalar),
    OpRecord(
        "while_grow",
        (cf.While,),
        _grow,
        _grow_reference,
        _positive_vector,
        # an unbounded while loop has no reverse-mode derivative (While.vjp raises and
        # names max_steps); its forward mode is tested in tests/control/test_gradients.py
        grad=False,
    ),
    OpRecord(
        "while_max_steps",
        (cf.Scan,),
        _bounded,
        _bounded_reference,
        lambda data, dtype: [values(data, dtype, (), 0.1, 2.0), values(data, dtype, (), 0.0, 10.0)],
        fd=False,
        notes="a masked scan; the number of steps taken jumps with v and bound",
    ),
    OpRecord("cond_branches", (cf.Cond,), _branches, _branches_reference, _pred_vector_scalar),
]
