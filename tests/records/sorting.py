"""Op records for the sorting family (``rewritekit.tensor.sorting``, ``searching`` and
``extremes``).

Floats are drawn as whole numbers (so ties occur and ``argsort`` must keep their order),
sometimes with NaN and +-inf (NaN sorts last, in its original order for argsort).

Sort's gradient follows the stable permutation, ties included, as JAX's does; finite
differences at a tie see a kink instead, so the gradient checks draw distinct values
(``_distinct``), and ``sort_special`` (ties, NaN, inf) checks ties against ``jax.grad`` only.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rewritekit.tensor as rt
from rewritekit.tensor.extremes import Cummax, Cummin
from rewritekit.tensor.searching import Nonzero, Searchsorted
from rewritekit.tensor.sorting import Argsort, Sort
from tests.records import OpRecord, values

ALL = ("float64", "float32", "int64", "int32", "uint8", "bool")
FLOATS = ("float64", "float32")


def _draw(min_dims=0, special=False):
    def draw(data, dtype):
        shape = data.draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, max_side=5))
        lo = 0 if np.dtype(dtype).kind == "u" else -3
        x = values(data, dtype, shape, lo, 3, special=special)
        return [np.round(x) if x.dtype.kind == "f" else x]

    return draw


def _distinct(min_dims=0):
    def draw(data, dtype):
        shape = data.draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, max_side=5))
        whole = st.integers(-200, 200).map(float)  # at most 125 drawn
        return [data.draw(hnp.arrays(np.dtype(dtype), shape, elements=whole, unique=True))]

    return draw


def _with(fn, axis, stable=False):
    """``fn(x, axis=axis)``; with ``stable``, NumPy's stable kind (the reference)."""
    if stable:
        return lambda x: fn(x, axis=axis, kind="stable")
    return lambda x: fn(x, axis=axis)


# (suffix, axis, minimum rank, static shapes)
AXES = [
    ("default", -1, 1, False),
    ("axis0", 0, 1, False),
    ("axis1", 1, 2, False),
    ("flat", None, 0, False),
    ("flat_static", None, 0, True),
    ("axis_neg2_static", -2, 2, True),
]


def _records(name, op_class, fn, reference):
    return [
        *(
            OpRecord(
                f"{name}_{suffix}",
                (op_class,),
                fn if axis == -1 else _with(fn, axis),
                _with(reference, axis, stable=True),
                _draw(min_dims),
                ALL,
                static_shapes=static,
                grad_draw=_distinct(min_dims),
            )
            for suffix, axis, min_dims, static in AXES
        ),
        OpRecord(
            f"{name}_special",
            (op_class,),
            _with(fn, 0),
            _with(reference, 0, stable=True),
            _draw(1, special=True),
            FLOATS,
            fd=False,
            notes="ties, NaN and +-inf: finite differences see a kink or NaN there",
        ),
    ]


RECORDS = [
    *_records("sort", Sort, rt.sort, np.sort),
    *_records("argsort", Argsort, rt.argsort, np.argsort),
    OpRecord(
        "sort_method",
        (Sort,),
        lambda x: x.sort(axis=0),
        _with(np.sort, 0, stable=True),
        _draw(1),
        ALL,
        grad_draw=_distinct(1),
    ),
    OpRecord(
        "argsort_method",
        (Argsort,),
        lambda x: x.argsort(),
        _with(np.argsort, -1, stable=True),
        _draw(1),
        ALL,
    ),
]


def _np_nonzero(size, fill):
    def reference(x):
        found = []
        for positions in np.nonzero(x):
            padded = np.full(size, fill, dtype=np.int64)
            padded[: min(size, positions.size)] = positions[:size]
            found.append(padded)
        return tuple(found) if len(found) > 1 else found[0]

    return reference


RECORDS += [
    OpRecord(
        f"nonzero_size{size}",
        (Nonzero,),
        lambda x, size=size: rt.nonzero(x, size=size, fill_value=-1),
        _np_nonzero(size, -1),
        _draw(1),
        ALL,
        notes="the first `size` positions in C order, padded with the fill value",
    )
    for size in (0, 3, 7)
]


def _searchsorted_draw(data, dtype):
    """A vector (sorted by the graph: the Op's domain) and values of any shape, drawn from
    a few whole numbers so that values hit the vector's elements, and its ties."""
    a = _draw(1)(data, dtype)[0].reshape(-1)
    v = values(
        data,
        dtype,
        data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4)),
        0 if np.dtype(dtype).kind == "u" else -3,
        3,
        special=True,
    )
    return [a, np.round(v) if v.dtype.kind == "f" else v]


def _running(x):
    return np.maximum.accumulate(x, axis=0), np.flip(np.minimum.accumulate(np.flip(x, -1), -1), -1)


RECORDS += [
    OpRecord(
        "searchsorted",
        (Searchsorted,),
        lambda a, v: (rt.searchsorted(rt.sort(a), v), rt.searchsorted(rt.sort(a), v, "right")),
        lambda a, v: (np.searchsorted(np.sort(a), v), np.searchsorted(np.sort(a), v, "right")),
        _searchsorted_draw,
        ("float64", "float32", "int64", "uint8", "bool"),
        notes="NaN and +-inf among the values and the sorted vector (NaN sorts last)",
    ),
    OpRecord(
        "cummax_cummin_reverse",
        (Cummax, Cummin),
        lambda x: (rt.cummax(x, 0), rt.cummin(x, -1, reverse=True)),
        _running,
        _draw(1, special=True),
        ALL,
        grad_draw=_distinct(1),
        notes="at ties the gradient goes to the nearest tie, JAX's splits it: distinct draws",
    ),
]
