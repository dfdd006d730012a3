"""The random variables' op records on the JAX backend, all in one graph per check.

A JAX sampler compiles in 1-3 s (the gamma family's rejection loops most), so compiling each
random variable's record on its own cost more than a minute of the suite. Here the records
that set ``jax_together`` are output groups of one graph, compiled once: vectorized over
drawn inputs (batched parameters broadcast against unbatched ones, as
``test_batching.py`` checks the other records) and compared with the NumPy backend record
by record; six of them also round-trip through JAX (``tests/jaxpr/test_round_trip.py``
imports every one). Their draws differ between backends, so the records compare what must
agree: each draw's shape and that it lies in the support. The unbatched JAX samplers are
checked by ``tests/random/test_random.py`` (every sampler's law, on both backends, in one
graph), and every NumPy-side check of these records stays per record.
"""

from __future__ import annotations

import jax
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.tensor.random import RandomVariable
from tests.properties.test_backends import _as_list, assert_close
from tests.properties.test_batching import (
    CHECKED_NUMPY,
    _batched_arrays,
    _dtype,
    _input_sets,
    _which,
)
from tests.records import collect

RECORDS = [r for r in collect() if r.jax_together]


def _graph(arrays_per_record, which_per_record=None, only=None):
    """Inputs, outputs and each record's slice of the outputs: one graph of every record
    (or of those at the positions ``only``), each with its own inputs (vectorized over the
    inputs ``which`` marks)."""
    inputs, outputs, slices = [], [], []
    for k, (record, arrays) in enumerate(zip(RECORDS, arrays_per_record, strict=True)):
        if only is not None and k not in only:
            slices.append(None)
            continue
        which = which_per_record[k] if which_per_record else [False] * len(arrays)
        mine = [
            rt.tensor(f"r{k}_{i}", shape=a.shape[1:] if b else a.shape, dtype=a.dtype)
            for i, (a, b) in enumerate(zip(arrays, which, strict=True))
        ]
        outs = list(_as_list(record.build(*mine)))
        if any(which):
            batched = {
                x: rt.tensor(f"b{k}_{i}", shape=a.shape, dtype=a.dtype)
                for i, (x, a, b) in enumerate(zip(mine, arrays, which, strict=True))
                if b
            }
            outs = list(rk.vectorize(outs, batched))
            mine = [batched.get(x, x) for x in mine]
        slices.append(slice(len(outputs), len(outputs) + len(outs)))
        inputs += mine
        outputs += outs
    return inputs, outputs, slices


def _flat(arrays_per_record):
    return [a for arrays in arrays_per_record for a in arrays]


def _compare(got, expected, slices, what, only=None):
    for k, (record, part) in enumerate(zip(RECORDS, slices, strict=True)):
        if only is None or k in only:
            assert_close([np.asarray(v) for v in got[part]], expected[part], record, what)


@settings(max_examples=1, deadline=None)
@given(data=st.data())
def test_vectorized_jax_matches_numpy(data):
    arrays, which = [], []
    for record in RECORDS:
        sets = _input_sets(record, data, _dtype(record), smallest=2)
        which.append(_which(data, len(sets[0])))
        arrays.append(_batched_arrays(sets, which[-1]))
    inputs, outputs, slices = _graph(arrays, which)
    expected = rk.function(inputs, outputs, backend=CHECKED_NUMPY, rules=None)(*_flat(arrays))
    got = rk.function(inputs, outputs, backend="jax", rules=None)(*_flat(arrays))
    _compare(got, expected, slices, "vectorized: jax vs numpy")


#: The records whose imported graphs are run: samplers without rejection loops, whose JAX
#: functions compile in well under a second (every record's graph is imported, with its key
#: primitives opaque, in tests/jaxpr/test_round_trip.py; the loops' primitives, while and
#: scan, are round-tripped there by the control-flow records).
ROUND_TRIP = {"normal", "uniform", "bernoulli", "categorical", "multivariate_normal", "laplace"}


@settings(max_examples=1, deadline=None)
@given(data=st.data())
def test_imported_jax_implementation_draws_what_jax_draws(data):
    """The JAX function of the ``ROUND_TRIP`` records, imported back with its key
    primitives opaque, compiled, draws what the JAX function draws."""
    chosen = [k for k, record in enumerate(RECORDS) if record.name in ROUND_TRIP]
    assert len(chosen) == len(ROUND_TRIP)
    arrays = [
        record.draw(data, _dtype(record)) if k in chosen else [] for k, record in enumerate(RECORDS)
    ]
    inputs, outputs, slices = _graph(arrays, only=chosen)
    fn = rk.function(inputs, outputs, backend="jax", rules=None).jax_fn
    flat = _flat(arrays)
    with jax.enable_x64(True):
        expected = [np.asarray(v) for v in jax.jit(fn)(*flat)]
        imported_inputs, imported = rk.from_jax(fn, *flat, opaque=True)
        got = rk.function(list(imported_inputs), list(imported), backend="jax", rules=None)(*flat)
    _compare(got, expected, slices, "imported from JAX, on JAX", only=chosen)


def test_every_random_variable_is_checked_here():
    def subclasses(cls):
        return {cls} | {s for sub in cls.__subclasses__() for s in subclasses(sub)}

    concrete = {c for c in subclasses(RandomVariable) if not c.abstract}
    assert concrete <= {op for record in RECORDS for op in record.ops}
