"""Every Op record: NumPy backend vs NumPy/SciPy, JAX backend vs NumPy backend."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.backends.numpy import NumpyBackend
from tests.records import OpRecord, collect

RECORDS = collect()
CHECKED_NUMPY = NumpyBackend(check_types=True)


def _inputs(record: OpRecord, arrays: list[np.ndarray]) -> list[rk.Var]:
    return [
        rt.tensor(
            f"x{i}",
            shape=a.shape if record.static_shapes else (None,) * a.ndim,
            dtype=a.dtype,
        )
        for i, a in enumerate(arrays)
    ]


def _as_list(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def assert_close(actual, expected, record: OpRecord, what: str) -> None:
    for i, (a, e) in enumerate(zip(_as_list(actual), _as_list(expected), strict=True)):
        a, e = np.asarray(a), np.asarray(e)
        rtol, atol = record.tolerance(e.dtype.name)
        assert a.shape == e.shape, (
            f"{record.name} ({what}) output {i}: shape {a.shape} != {e.shape}"
        )
        assert a.dtype == e.dtype, (
            f"{record.name} ({what}) output {i}: dtype {a.dtype} != {e.dtype}"
        )
        np.testing.assert_allclose(
            a, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{record.name} ({what})"
        )


@functools.cache
def _compiled(record_index: int, signature: tuple, backend: str):
    """One compiled function per record, dtype/rank signature and backend (jit caches shapes)."""
    record = RECORDS[record_index]
    arrays = [np.zeros(shape, dtype) for shape, dtype in signature]
    inputs = _inputs(record, arrays)
    outputs = record.build(*inputs)
    target = CHECKED_NUMPY if backend == "numpy" else "jax"
    return rk.function(inputs, list(_as_list(outputs)), backend=target, rules=None)


def _signature(record: OpRecord, arrays):
    # Static shapes are part of the graph; unknown ones only need the rank.
    return tuple((a.shape if record.static_shapes else (0,) * a.ndim, a.dtype.name) for a in arrays)


@pytest.mark.parametrize("index", range(len(RECORDS)), ids=[r.name for r in RECORDS])
@settings(max_examples=25)
@given(data=st.data())
def test_numpy_backend_matches_numpy(index, data):
    record = RECORDS[index]
    dtype = data.draw(st.sampled_from(record.dtypes), label="dtype")
    arrays = record.draw(data, dtype)
    f = _compiled(index, _signature(record, arrays), "numpy")
    with np.errstate(all="ignore"):
        expected = record.reference(*arrays)
    assert_close(f(*arrays), expected, record, "numpy backend vs reference")


# the records checked on JAX one graph each; the random variables are checked on JAX batched,
# all in one graph (tests/properties/test_random_records.py), and unbatched by the laws of
# their draws (tests/random/test_random.py)
ALONE = [i for i, r in enumerate(RECORDS) if not r.jax_together]


@pytest.mark.parametrize("index", ALONE, ids=[RECORDS[i].name for i in ALONE])
@settings(max_examples=10)
@given(data=st.data())
def test_jax_backend_matches_numpy_backend(index, data):
    record = RECORDS[index]
    dtype = data.draw(st.sampled_from(record.dtypes), label="dtype")
    arrays = record.draw(data, dtype)
    signature = _signature(record, arrays)
    expected = _compiled(index, signature, "numpy")(*arrays)
    actual = [np.asarray(v) for v in _compiled(index, signature, "jax")(*arrays)]
    assert_close(actual, expected, record, "jax backend vs numpy backend")
