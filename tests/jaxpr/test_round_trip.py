"""Round trip through JAX: every Op record's graph, lowered by the JAX backend to a pure JAX
function, imported back with ``rk.from_jax``, computes the record's reference values on the
NumPy backend, and on the JAX backend (run eagerly, op by op: no XLA compile) for every
tenth record (the op records check every Op on both backends already). The random records'
key primitives stay opaque (``OpaqueJax``, JAX only): every one imports here, and the
imported graph of all the random variables' records together must draw what the JAX
function draws (``tests/properties/test_random_records.py``: eager JAX runs a sampler's
loops step by step, seconds each)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from tests.properties.test_backends import _as_list, assert_close
from tests.records import collect

RECORDS = collect()


def _jax_function(record, arrays):
    inputs = [rt.tensor(f"x{i}", shape=a.shape, dtype=a.dtype) for i, a in enumerate(arrays)]
    outputs = list(_as_list(record.build(*inputs)))
    return rk.function(inputs, outputs, backend="jax", rules=None).jax_fn


def _random(record) -> bool:
    return "random" in record.build.__module__ or any(
        "random" in op.__module__ for op in record.ops
    )


@pytest.mark.parametrize("index", range(len(RECORDS)), ids=[r.name for r in RECORDS])
@settings(max_examples=1)
@given(data=st.data())
def test_imported_jax_implementation_matches_the_reference(index, data):
    record = RECORDS[index]
    dtype = data.draw(st.sampled_from(record.dtypes), label="dtype")
    arrays = record.draw(data, dtype)
    fn = _jax_function(record, arrays)
    with jax.enable_x64(True):
        inputs, outputs = rk.from_jax(fn, *arrays, opaque=_random(record))
        if record.jax_together:
            return  # imported (opaque keys) without error; run in test_random_records.py
        if _random(record) or index % 10 == 0:
            eager = rk.function(list(inputs), list(outputs), backend="jax", rules=None).jax_fn
            got_jax = [np.asarray(v) for v in eager(*arrays)]
        if _random(record):
            assert_close(got_jax, fn(*arrays), record, "imported from JAX, on JAX")
            return
        got = rk.function(list(inputs), list(outputs), backend="numpy", rules=None)(*arrays)
        with np.errstate(all="ignore"):
            expected = record.reference(*arrays)
    assert_close(got, expected, record, "imported from JAX, on NumPy")
    if index % 10 == 0:
        assert_close(got_jax, expected, record, "imported from JAX, on JAX")
