"""Every differentiable Op record: the symbolic gradient against ``jax.grad`` (rtol 1e-8 in
float64) and against central finite differences (``rewritekit.testing.verify_grad``).

For a record, the checked scalar is ``sum_k sum(out_k * w_k)`` over its float outputs, with
weights ``w_k`` drawn at random (they are inputs of the compiled functions, so one compile
serves every draw of the same signature). The gradient is taken with respect to every
float input; integer inputs (indices) stay fixed.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.backends.numpy import NumpyBackend
from rewritekit.testing import verify_grad
from tests.records import OpRecord, collect

RECORDS = [r for r in collect() if r.checks_gradient()]
CHECKED_NUMPY = NumpyBackend(check_types=True)
RTOL, ATOL = 1e-8, 1e-10


def _as_list(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _draw(record: OpRecord, data: st.DataObject) -> list[np.ndarray]:
    return (record.grad_draw or record.draw)(data, "float64")


@functools.cache
def _graph(index: int, signature: tuple):
    """Inputs, weights, cost and gradients of a record for one dtype/rank signature."""
    record = RECORDS[index]
    inputs = [
        rt.tensor(f"x{i}", shape=shape if record.static_shapes else (None,) * len(shape), dtype=d)
        for i, (shape, d) in enumerate(signature)
    ]
    outputs = [o for o in _as_list(record.build(*inputs)) if o.type.kind == "f"]
    weights = [rt.tensor(f"w{k}", shape=o.type.shape, dtype=o.dtype) for k, o in enumerate(outputs)]
    wrt = [v for v in inputs if v.type.kind == "f"]
    if not (outputs and wrt):  # nothing to differentiate for this draw (see _usable)
        return inputs, outputs, weights, None, wrt, []
    cost = rt.sum(rt.stack([rt.sum(o * w) for o, w in zip(outputs, weights, strict=True)]))
    grads = rk.grad(cost, wrt, disconnected="zero")
    return inputs, outputs, weights, cost, wrt, grads


def _weights(index, signature, arrays, seed):
    inputs, outputs, *_ = _graph(index, signature)
    forward = rk.function(inputs, outputs, backend="numpy", rules=None)(*arrays)
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 1.5, size=np.shape(v)).astype(np.asarray(v).dtype) for v in forward]


@functools.cache
def _compiled(index: int, signature: tuple, what: str):
    inputs, _, weights, cost, _, grads = _graph(index, signature)
    if what == "numpy":
        return rk.function([*inputs, *weights], grads, backend=CHECKED_NUMPY, rules=None)
    if what == "jax":
        return rk.function([*inputs, *weights], grads, backend="jax", rules=None)
    f = rk.function([*inputs, *weights], cost, backend="jax", rules=None)
    positions = [i for i, v in enumerate(inputs) if v.type.kind == "f"]
    return jax.jit(jax.grad(f.jax_fn, argnums=positions))


def _signature(record, arrays):
    return tuple((a.shape if record.static_shapes else (0,) * a.ndim, a.dtype.name) for a in arrays)


def _usable(index, signature) -> bool:
    _, outputs, _, _, wrt, _ = _graph(index, signature)
    return bool(outputs and wrt)


def _close(actual, expected, record, what):
    rtol = max(RTOL, record.grad_rtol or 0.0)
    for position, (a, e) in enumerate(zip(actual, expected, strict=True)):
        np.testing.assert_allclose(
            np.asarray(a),
            np.asarray(e),
            rtol=rtol,
            atol=ATOL,
            err_msg=f"{record.name}: gradient of input {position}, {what}",
        )


@pytest.mark.parametrize("index", range(len(RECORDS)), ids=[r.name for r in RECORDS])
@settings(max_examples=5)
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_gradient_matches_jax_grad(index, data, seed):
    record = RECORDS[index]
    arrays = _draw(record, data)
    signature = _signature(record, arrays)
    assume(_usable(index, signature))
    weights = _weights(index, signature, arrays, seed)
    symbolic = _compiled(index, signature, "numpy")(*arrays, *weights)
    with jax.enable_x64(True):
        expected = _compiled(index, signature, "jax.grad")(*arrays, *weights)
        on_jax = _compiled(index, signature, "jax")(*arrays, *weights)
    _close(symbolic, expected, record, "rk.grad (numpy backend) vs jax.grad")
    _close(on_jax, symbolic, record, "rk.grad on the jax backend vs the numpy backend")


FD_RECORDS = [i for i, r in enumerate(RECORDS) if r.fd]


@pytest.mark.parametrize("index", FD_RECORDS, ids=[RECORDS[i].name for i in FD_RECORDS])
@settings(max_examples=3)
@given(data=st.data())
def test_gradient_matches_finite_differences(index, data):
    record = RECORDS[index]
    arrays = _draw(record, data)
    signature = _signature(record, arrays)
    assume(_usable(index, signature))
    floats = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]

    def fn(*variables):
        args = list(arrays)
        for position, var in zip(floats, variables, strict=True):
            args[position] = var
        outs = [o for o in _as_list(record.build(*args)) if o.type.kind == "f"]
        return rt.concatenate([rt.reshape(o, (-1,)) for o in outs])

    verify_grad(fn, [arrays[i] for i in floats], rtol=max(1e-5, record.grad_rtol or 0.0))
