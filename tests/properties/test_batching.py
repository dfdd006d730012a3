"""Batching: a graph vectorized over a batch (``rk.vectorize``) equals the graph computed
for each element of the batch, for every op record, with some inputs batched and some not.

The elementwise Ops share one rule (``Elemwise.batch``, checked on its own below); every
other Op has its rule in ``rewritekit.vectorize`` or takes the ``Blockwise`` fallback, which
``test_which_ops_take_the_fallback`` keeps an explicit account of."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import Phase, assume, given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.backends.numpy import NumpyBackend
from rewritekit.tensor import linalg as la
from rewritekit.tensor.random import RandomVariable
from rewritekit.tensor.ufunc import Elemwise
from rewritekit.vectorize import fallback_ops
from tests.properties.test_backends import assert_close
from tests.records import OpRecord, collect

CHECKED_NUMPY = NumpyBackend(check_types=True)
RECORDS = collect()

#: Records not checked against a loop, and why.
EXCLUDED: dict[str, str] = {}

#: Records whose batching rule disagrees with a loop: bugs in the rules, to be fixed (then
#: the record comes off this list).
KNOWN_WRONG: dict[str, str] = {}

#: Ops whose records draw structured matrices (positive definite, diagonally dominant,
#: triangular), which a shuffle would break.
STRUCTURED = (la.Cholesky, la.Det, la.Inv, la.Slogdet, la.Solve, la.SolveTriangular)

CHECKED = [i for i, r in enumerate(RECORDS) if r.name not in EXCLUDED and r.name not in KNOWN_WRONG]


def _dtype(record: OpRecord) -> str:
    return "float64" if "float64" in record.dtypes else record.dtypes[0]


def _as_list(value) -> list:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _core_inputs(record: OpRecord, signature: tuple) -> list[rk.Var]:
    return [
        rt.tensor(f"x{i}", shape=shape if record.static_shapes else (None,) * len(shape), dtype=d)
        for i, (shape, d) in enumerate(signature)
    ]


@functools.cache
def _compiled(index: int, signature: tuple, which: tuple[bool, ...], backend: str):
    """The record's graph for one element (``which`` all False) or vectorized over the
    inputs ``which`` marks, compiled once per record, input signature and backend."""
    record = RECORDS[index]
    inputs = _core_inputs(record, signature)
    outputs = _as_list(record.build(*inputs))
    if any(which):
        replace = {
            x: rt.tensor(f"b{i}", shape=(None, *x.type.shape), dtype=x.dtype)
            for i, (x, b) in enumerate(zip(inputs, which, strict=True))
            if b
        }
        outputs = rk.vectorize(outputs, replace)
        inputs = [replace.get(x, x) for x in inputs]
    target = CHECKED_NUMPY if backend == "numpy" else "jax"
    return rk.function(inputs, outputs, backend=target, rules=None)


def _signature(record: OpRecord, arrays: list[np.ndarray]) -> tuple:
    # Static shapes are part of the graph; unknown ones only need the rank.
    return tuple((a.shape if record.static_shapes else (0,) * a.ndim, a.dtype.name) for a in arrays)


def _alike(draw: list[np.ndarray], first: list[np.ndarray]) -> bool:
    return all(a.shape == b.shape and a.dtype == b.dtype for a, b in zip(draw, first, strict=True))


def _input_sets(
    record: OpRecord, data: st.DataObject, dtype: str, smallest: int = 1
) -> list[list[np.ndarray]]:
    """One input set per batch element (``smallest`` to 3 of them), all of the first set's
    shapes and dtypes. A later set is a fresh draw where one of a few has them (a record
    draws its inputs together: an index fits its array's shape), else the first set
    shuffled."""
    size = data.draw(st.integers(smallest, 3), label="batch")
    first = record.draw(data, dtype)
    sets = [first]
    for _ in range(size - 1):
        tries = (record.draw(data, dtype) for _ in range(3))
        fresh = next((d for d in tries if _alike(d, first)), None)
        sets.append(fresh if fresh is not None else _shuffled(record, data, first))
    return sets


def _shuffled(record: OpRecord, data: st.DataObject, arrays: list[np.ndarray]) -> list:
    """Each array's entries in a drawn order: each entry stays in the Op's domain (an index
    stays in range), so the elements of a batch differ. Structured matrices (``STRUCTURED``)
    are scaled by a power of two instead, which keeps their structure."""
    if any(issubclass(op, STRUCTURED) for op in record.ops):
        scale = data.draw(st.sampled_from([0.5, 2.0]), label="scale")
        return [a * a.dtype.type(scale) if a.dtype.kind in "fc" else a for a in arrays]
    return [a.ravel()[data.draw(st.permutations(range(a.size)))].reshape(a.shape) for a in arrays]


def _batched_arrays(sets: list[list[np.ndarray]], which: list[bool]) -> list[np.ndarray]:
    """A batched input stacks its arrays of every set; an unbatched one is the first set's,
    shared by the elements."""
    return [np.stack([d[i] for d in sets]) if b else sets[0][i] for i, b in enumerate(which)]


def _element(arrays: list[np.ndarray], which: list[bool], k: int) -> list[np.ndarray]:
    return [a[k] if b else a for a, b in zip(arrays, which, strict=True)]


def _which(data: st.DataObject, n: int) -> list[bool]:
    """The batched inputs: a non-empty subset."""
    return data.draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any), label="batched")


@pytest.mark.parametrize("index", CHECKED, ids=[RECORDS[i].name for i in CHECKED])
@settings(max_examples=5)
@given(data=st.data())
def test_vectorize_matches_a_loop(index: int, data: st.DataObject):
    """The vectorized graph on the NumPy backend against the graph called per element."""
    record = RECORDS[index]
    sets = _input_sets(record, data, _dtype(record))
    which = _which(data, len(sets[0]))
    arrays = _batched_arrays(sets, which)
    signature = _signature(record, sets[0])
    single = _compiled(index, signature, (False,) * len(which), "numpy")
    elements = [single(*_element(arrays, which, k)) for k in range(len(sets))]
    expected = [np.stack(outs) for outs in zip(*elements, strict=True)]
    result = _compiled(index, signature, tuple(which), "numpy")(*arrays)
    # an output that does not vary over the batch keeps its core shape
    shared = [
        np.broadcast_to(r, e.shape) if np.ndim(r) < e.ndim else r
        for r, e in zip(result, expected, strict=True)
    ]
    assert_close(shared, expected, record, "vectorized vs a loop")


# checked on JAX one graph each (the others: tests/properties/test_random_records.py)
ALONE = [i for i in CHECKED if not RECORDS[i].jax_together]


@pytest.mark.parametrize("index", ALONE, ids=[RECORDS[i].name for i in ALONE])
@settings(max_examples=1)
@given(data=st.data())
def test_vectorized_jax_matches_numpy(index: int, data: st.DataObject):
    """The same graphs on the JAX backend, one batch of elements that differ per record (a
    JAX compile per graph and batch size costs more than the NumPy checks above)."""
    record = RECORDS[index]
    sets = _input_sets(record, data, _dtype(record), smallest=2)
    which = tuple(_which(data, len(sets[0])))
    arrays = _batched_arrays(sets, list(which))
    assume(
        any(
            not np.array_equal(a[k], a[0], equal_nan=True)
            for a, b in zip(arrays, which, strict=True)
            if b
            for k in range(1, len(sets))
        )
    )
    signature = _signature(record, sets[0])
    expected = _compiled(index, signature, which, "numpy")(*arrays)
    actual = [np.asarray(v) for v in _compiled(index, signature, which, "jax")(*arrays)]
    assert_close(actual, expected, record, "vectorized: jax vs numpy")


def test_excluded_records_exist():
    names = {r.name for r in RECORDS}
    assert set(EXCLUDED) <= names, sorted(set(EXCLUDED) - names)
    assert set(KNOWN_WRONG) <= names, sorted(set(KNOWN_WRONG) - names)


# Ops vectorized whole, as a Blockwise node, by the records' graphs: the keys made from
# batched keys or data (jax.vmap of JAX's own split and fold_in; NumPy loops), by design,
# as a random variable's batched key (which is not batched here).
FALLBACK = {"FoldIn", "SplitKey"}


def _batchable(record: OpRecord, n: int) -> list[int]:
    """The inputs batched by ``test_which_ops_take_the_fallback``: not a random variable's
    key (its first input), which goes through a Blockwise by design: a batched key gives
    every element its own stream (``random_rules``)."""
    key = any(issubclass(op, RandomVariable) for op in record.ops)
    return list(range(1 if key else 0, n))


def _fallbacks(record: OpRecord) -> set[str]:
    """The Ops taking the fallback in ``record``'s graph vectorized over its first input,
    then over all of them, for the input types of a few draws."""
    found: set[str] = set()

    @settings(max_examples=4, phases=[Phase.generate], database=None)
    @given(data=st.data())
    def vectorize(data: st.DataObject) -> None:
        arrays = record.draw(data, _dtype(record))
        positions = _batchable(record, len(arrays))
        for which in {tuple(positions[:1]), tuple(positions)} - {()}:
            inputs = _core_inputs(record, _signature(record, arrays))
            replace = {
                inputs[i]: rt.tensor(
                    f"b{i}", shape=(None, *inputs[i].type.shape), dtype=inputs[i].dtype
                )
                for i in which
            }
            found.update(fallback_ops(rk.vectorize(_as_list(record.build(*inputs)), replace)))

    vectorize()
    return found


def test_which_ops_take_the_fallback():
    found: dict[str, list[str]] = {}
    for i in CHECKED:
        for name in _fallbacks(RECORDS[i]):
            found.setdefault(name, []).append(RECORDS[i].name)
    assert set(found) == FALLBACK, found


# --- the elementwise rule, Op.batch ------------------------------------------------------


def _elementwise_node(record: OpRecord, inputs: list[rk.Var]) -> rk.Apply | None:
    """The record's node when it is one elementwise Apply on exactly the input Vars."""
    out = record.build(*inputs)
    node = getattr(out, "owner", None)
    if node is None or not isinstance(node.op, Elemwise) or list(node.inputs) != inputs:
        return None
    return node


def _one_node(record: OpRecord) -> bool:
    inputs = [rt.vector(f"x{i}") for i in range(record.ops[0].nin)]
    return _elementwise_node(record, inputs) is not None


ELEMENTWISE = [
    r
    for r in RECORDS
    if all(issubclass(op, Elemwise) for op in r.ops)
    and "float64" in r.dtypes
    and not r.static_shapes
    and _one_node(r)
]


def test_every_elementwise_op_is_covered():
    covered = {op for r in ELEMENTWISE for op in r.ops}
    assert len(covered) >= 60, sorted(op.__name__ for op in covered)


@pytest.mark.parametrize("record", ELEMENTWISE, ids=lambda r: r.name)
@settings(max_examples=8)
@given(data=st.data())
def test_elementwise_batch_matches_a_loop(record: OpRecord, data: st.DataObject):
    sets = _input_sets(record, data, "float64")
    inputs = [
        rt.tensor(f"x{i}", shape=(None,) * a.ndim, dtype=a.dtype) for i, a in enumerate(sets[0])
    ]
    node = _elementwise_node(record, inputs)
    which = _which(data, len(inputs))
    arrays = _batched_arrays(sets, which)
    batched = [
        rt.tensor(f"b{i}", shape=(None,) * a.ndim, dtype=a.dtype) for i, a in enumerate(arrays)
    ]
    (out,) = node.op.batch(node, tuple(batched))
    result = rk.function(batched, out, backend=CHECKED_NUMPY, rules=None)(*arrays)
    single = rk.function(inputs, node.outputs[0], backend=CHECKED_NUMPY, rules=None)
    expected = np.stack([single(*_element(arrays, which, k)) for k in range(len(sets))])
    assert_close(result, expected, record, "batched")


def test_an_op_without_a_batching_method_says_so():
    """``Op.batch`` is the rule of Ops that state it as a method (the elementwise Ops); the
    others' rules are in ``rewritekit.vectorize``'s table (``Sum``'s too)."""
    x = rt.matrix("x")
    node = rt.sum(x, axis=0).owner
    with pytest.raises(NotImplementedError, match=r"Sum.*has no batching rule"):
        node.op.batch(node, (rt.tensor("b", shape=(None, None, None)),))
