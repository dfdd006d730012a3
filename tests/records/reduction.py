"""Op records for the reductions, cumulative Ops and softmax.

Each record fixes one ``axis``/``keepdims`` choice (they are Op parameters, so one compiled
graph per record) and draws inputs of enough dimensions for it. Values for sums are drawn
on a grid of eighths, so that float32 sums are exact in any order (NumPy sums pairwise,
XLA in its own order); products use magnitudes in [0.5, 2] (or 0), so no float32 product
of at most 64 factors becomes subnormal (XLA on CPU flushes those to zero).

Gradient draws: max/min and std are not differentiable at ties and at zero variance, so
their finite-difference checks draw distinct values (``_distinct``); the records that keep
ties (``max_static``, the ``special`` ones) check ties against ``jax.grad`` only.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import scipy.special as sp
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rewritekit.tensor as rt
from rewritekit.tensor import reduction as rd
from tests.records import OpRecord, values

FLOATS = ("float64", "float32")
NUMBERS = ("float64", "float32", "int64", "int32")
ALL = ("float64", "float32", "int64", "int32", "bool")


def _draw(min_dims=0, min_side=0, lo=-5.0, hi=5.0, snap=None, special=False):
    """One array of rank ``min_dims``..3, sides ``min_side``..4; ``snap`` post-processes."""

    def draw(data, dtype):
        shape = data.draw(
            hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=min_side, max_side=4),
            label="shape",
        )
        x = values(data, dtype, shape, lo, hi, special=special)
        return [snap(x) if snap is not None and x.dtype.kind == "f" else x]

    return draw


def _distinct(min_dims=0, min_side=0):
    """One array of distinct values (no ties); with ``min_side`` >= 2 at least 1-d, so that
    every slice holds two different values (a 0-d input is a single element)."""
    min_dims = max(min_dims, 1) if min_side >= 2 else min_dims

    def draw(data, dtype):
        shape = data.draw(
            hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=min_side, max_side=4)
        )
        grid = st.integers(-320, 320).map(lambda k: k / 64)  # in [-5, 5], sums exact
        return [data.draw(hnp.arrays(np.dtype(dtype), shape, elements=grid, unique=True))]

    return draw


def _eighths(x):
    return (np.round(x * 8) / 8).astype(x.dtype)


def _factors(x):
    x = np.round(x * 4) / 4
    return np.where(np.abs(x) < 0.5, 0, x).astype(x.dtype)


def _integers(x):
    """Whole numbers, so that ties occur."""
    return np.round(x).astype(x.dtype)


# (name suffix, axis, keepdims, minimum rank): None, int, negative int, tuple, () and
# both keepdims.
AXES = [
    ("all", None, False, 0),
    ("axis0_keepdims", 0, True, 1),
    ("axis_neg1", -1, False, 1),
    ("axis_tuple_keepdims", (0, -1), True, 2),
    ("axis_none_keepdims", None, True, 0),
    ("axis_tuple_neg", (-2, 0, 2), False, 3),
]
NO_AXES = ("no_axes", (), False, 0)
DDOF_AXES = [
    ("all", None, False, 1),
    ("axis0_keepdims", 0, True, 1),
    ("axis_tuple", (0, -1), False, 2),
]


def _reductions(name, op_class, fn, reference, dtypes, axes=AXES, min_side=0, distinct=None, **kw):
    """One record per axis choice; ``fn``/``reference`` take (x, axis, keepdims).

    ``distinct``: draw gradient inputs without ties, with sides of at least this length.
    """
    snap = kw.pop("snap", _eighths)
    special = kw.pop("special", False)
    return [
        OpRecord(
            f"{name}_{suffix}",
            (op_class,),
            functools.partial(_call, fn, axis, keepdims),
            functools.partial(_call, reference, axis, keepdims),
            _draw(min_dims, min_side, snap=snap, special=special),
            dtypes,
            grad_draw=None if distinct is None else _distinct(min_dims, distinct),
            **kw,
        )
        for suffix, axis, keepdims, min_dims in axes
    ]


def _call(fn, axis, keepdims, x):
    return fn(x, axis=axis, keepdims=keepdims)


def _method(name):
    """``x.name(axis=..., keepdims=...)``: the Var method."""
    return lambda x, axis, keepdims: getattr(x, name)(axis=axis, keepdims=keepdims)


def _logsumexp(x, axis, keepdims):
    """SciPy's logsumexp, in the shape of NumPy's reductions: SciPy gives a 0-d input's
    result shape (1,) under keepdims or ``axis=()``, where NumPy's rule gives ()."""
    out = sp.logsumexp(x, axis=axis, keepdims=keepdims)
    return np.reshape(out, np.sum(x, axis=axis, keepdims=keepdims).shape)


_SPECIAL_FD = "draws hold NaN and +-inf, where finite differences give NaN"


def _ddof1(fn):
    return lambda x, axis, keepdims: fn(x, axis=axis, ddof=1, keepdims=keepdims)


RECORDS = [
    *_reductions("sum", rd.Sum, _method("sum"), np.sum, ALL, [*AXES, NO_AXES]),
    *_reductions("prod", rd.Prod, _method("prod"), np.prod, ALL, snap=_factors, rtol=1e-4),
    *_reductions("max", rd.Max, _method("max"), np.max, ALL, [*AXES, NO_AXES], 1, distinct=1),
    *_reductions("min", rd.Min, _method("min"), np.min, ALL, min_side=1, distinct=1),
    *_reductions("all", rd.All, _method("all"), np.all, ALL, [*AXES, NO_AXES], snap=_integers),
    *_reductions("any", rd.Any, _method("any"), np.any, ALL, snap=_integers),
    *_reductions("mean", rd.Mean, _method("mean"), np.mean, ALL, min_side=1),
    *_reductions("var", rd.Variance, _method("var"), np.var, NUMBERS, min_side=1),
    # std at zero variance (a slice of one value) has gradient 0 / 0 = NaN, as in JAX
    *_reductions("std", rd.Std, _method("std"), np.std, NUMBERS, min_side=1, distinct=2),
    # SciPy's logsumexp fails on some empty inputs (tests/tensor covers them): sides >= 1.
    *_reductions("logsumexp", rd.Logsumexp, rt.logsumexp, _logsumexp, NUMBERS, [*AXES, NO_AXES], 1),
    # NaN propagates through max and min; -inf and +inf are ordinary values. Gradients:
    # finite differences are meaningless at NaN and inf, so only jax.grad is compared.
    *_reductions(
        "max_special",
        rd.Max,
        rt.max,
        np.max,
        FLOATS,
        AXES[:2],
        1,
        special=True,
        fd=False,
        notes=_SPECIAL_FD,
    ),
    *_reductions(
        "min_special",
        rd.Min,
        rt.min,
        np.min,
        FLOATS,
        AXES[2:4],
        1,
        special=True,
        fd=False,
        notes=_SPECIAL_FD,
    ),
    # All -inf gives -inf, +inf gives +inf, NaN gives NaN (SciPy's rules).
    *_reductions(
        "logsumexp_special",
        rd.Logsumexp,
        rt.logsumexp,
        _logsumexp,
        FLOATS,
        AXES[1:3],
        1,
        special=True,
        fd=False,
        notes=_SPECIAL_FD,
    ),
    # n - ddof >= 1: at least one axis, and every reduced axis has length 2 or more.
    *_reductions("var_ddof1", rd.Variance, _ddof1(rt.var), _ddof1(np.var), NUMBERS, DDOF_AXES, 2),
    *_reductions(
        "std_ddof1", rd.Std, _ddof1(rt.std), _ddof1(np.std), NUMBERS, DDOF_AXES, 2, distinct=2
    ),
    *_reductions("sum_static", rd.Sum, rt.sum, np.sum, NUMBERS, AXES[3:4], static_shapes=True),
    *_reductions(
        "max_static",
        rd.Max,
        rt.max,
        np.max,
        NUMBERS,
        AXES[1:2],
        1,
        static_shapes=True,
        fd=False,
        notes="draws keep ties (gradient split equally, checked against jax.grad); finite "
        "differences do not apply at a tie",
    ),
    *_reductions(
        "mean_static", rd.Mean, rt.mean, np.mean, NUMBERS, AXES[4:5], 1, static_shapes=True
    ),
]

# argmax/argmin: axis None (flattened), int, negative int; whole numbers so that ties
# occur (the first wins); with NaN the first NaN wins.
ARG_AXES = [
    ("all", None, False, 0),
    ("all_keepdims", None, True, 2),
    ("axis1_keepdims", 1, True, 2),
    ("axis_neg1", -1, False, 1),
]
RECORDS += [
    *_reductions(
        "argmax", rd.Argmax, _method("argmax"), np.argmax, ALL, ARG_AXES, 1, snap=_integers
    ),
    *_reductions(
        "argmin", rd.Argmin, _method("argmin"), np.argmin, ALL, ARG_AXES, 1, snap=_integers
    ),
    *_reductions(
        "argmax_special", rd.Argmax, rt.argmax, np.argmax, FLOATS, ARG_AXES[2:], 1, special=True
    ),
    *_reductions(
        "argmin_special", rd.Argmin, rt.argmin, np.argmin, FLOATS, ARG_AXES[:1], 1, special=True
    ),
    *_reductions(
        "argmax_static",
        rd.Argmax,
        rt.argmax,
        np.argmax,
        NUMBERS,
        ARG_AXES[1:3],
        1,
        static_shapes=True,
    ),
]


def _scan(name, op_class, fn, reference, snap, axes, **kw):
    """cumsum/cumprod records: ``axes`` holds (suffix, axis, minimum rank)."""
    return [
        OpRecord(
            f"{name}_{suffix}",
            (op_class,),
            functools.partial(_call_axis, fn, axis),
            functools.partial(_call_axis, reference, axis),
            _draw(min_dims, snap=snap),
            ALL,
            **kw,
        )
        for suffix, axis, min_dims in axes
    ]


def _logcumsumexp(x, axis=None):
    """NumPy's ``logaddexp`` accumulated in float64, in the result's float dtype."""
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    wide = np.asarray(x, dtype=np.float64)
    out = np.logaddexp.accumulate(wide.ravel() if axis is None else wide, axis=axis or 0)
    return out.astype(dtype)


def _call_axis(fn, axis, x):
    return fn(x, axis=axis)


SCAN_AXES = [("flat", None, 0), ("axis0", 0, 1), ("axis_neg1", -1, 1), ("axis1", 1, 2)]
RECORDS += [
    *_scan(
        "cumsum", rd.Cumsum, lambda x, axis: x.cumsum(axis=axis), np.cumsum, _eighths, SCAN_AXES
    ),
    *_scan(
        "cumprod",
        rd.Cumprod,
        lambda x, axis: x.cumprod(axis=axis),
        np.cumprod,
        _factors,
        SCAN_AXES,
        rtol=1e-4,
    ),
    *[
        dataclasses.replace(record, dtypes=NUMBERS)
        for record in _scan(
            "logcumsumexp", rd.Cumlogsumexp, rt.logcumsumexp, _logcumsumexp, None, SCAN_AXES
        )
    ],
    *_scan(
        "cumsum_static",
        rd.Cumsum,
        rt.cumsum,
        np.cumsum,
        _eighths,
        SCAN_AXES[:1],
        static_shapes=True,
    ),
]

# softmax/log_softmax: the default axis -1, an int, a tuple and None (all axes). Every
# side is at least 1 (SciPy's softmax rejects an empty slice; ours returns it empty).
SOFTMAX_AXES = [("default", -1, 1), ("axis0", 0, 1), ("axis_tuple", (0, -1), 2), ("all", None, 0)]


def _softmax(name, op_class, fn, reference):
    return [
        OpRecord(
            f"{name}_{suffix}",
            (op_class,),
            fn if suffix == "default" else functools.partial(_call_axis, fn, axis),
            functools.partial(_call_axis, reference, axis),
            _draw(min_dims, 1),
            NUMBERS,
        )
        for suffix, axis, min_dims in SOFTMAX_AXES
    ]


RECORDS += [
    *_softmax("softmax", rd.Softmax, rt.softmax, sp.softmax),
    *_softmax("log_softmax", rd.LogSoftmax, rt.log_softmax, sp.log_softmax),
]
