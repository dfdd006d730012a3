"""Order statistics and structure of random draws: the densities of ``max`` and ``min`` over
axes, ``cumsum``, ``reshape``, ``transpose`` and static indexing of draws.

- ``log_density(max(x, axes), v)`` for a scalar draw ``x`` whose parameters do not vary
  along ``axes`` (the reduced elements are i.i.d.) and whose distribution has CDFs
  (``rewritekit.logprob.cdfs``), ``n`` the number of reduced elements: continuous,
  ``log n + (n - 1) log F(v) + log f(v)``; discrete, ``log(F(v)^n - F(v - 1)^n)`` in log
  space. ``min`` likewise with the survival function ``S(v) = P(X > v)``:
  ``log n + (n - 1) log S(v) + log f(v)`` and ``log(S(v - 1)^n - S(v)^n)``. ``-inf``
  wherever one element's density is. F and f are evaluated at the value with length-1
  axes in the reduced places, so the parameters broadcast without making ``n`` copies;
- ``log_density(cumsum(a, k), v) = log_density(a, diff(v, k) with v's first slice kept)``:
  a bijection with unit Jacobian, for any ``a`` the rules handle (a random walk);
- ``log_density(reshape(a), v)``, for an ``a`` without core axes, is ``a``'s density at
  ``v`` laid out in ``a``'s shape, laid out in ``v``'s shape again; ``transpose(a, axes)``
  (``swapaxes``, ``moveaxis``, ``.T``) that keeps ``a``'s core axes last: ``a``'s density
  at the inversely transposed value, transposed as the batch axes;
- ``log_density(x[index], v)`` for a draw ``x`` and an index of its batch axes that holds
  no draw and repeats no element (ints, slices, ``None``, run-time integers, constant
  integer arrays without duplicates): the density of a new draw of ``x``'s distribution
  whose parameters are ``x``'s, broadcast to its batch shape and indexed alike.

A rule whose conditions do not hold declines, and ``logprob`` reports that it found no
density: parameters that vary along the reduced axes (the elements are not identically
distributed), an index holding a draw (``stack(components)[z]`` is a mixture:
``rewritekit.logprob.measurable``), a transpose that moves a core axis.

Example:
    >>> k, x = rr.normal(rr.key(), 0.0, 1.0, size=(5,))
    >>> lp = rl.logprob(rt.max(x), rt.scalar("v"))  # 5 Phi(v)^4 phi(v), in logs
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Constant, Var, constant
from rewritekit.logprob import truncation
from rewritekit.logprob.measurable import (
    _as_type_of,
    _core_ndim,
    _draw_density,
    _has_cdf,
    _nan_to_ninf,
    draws_in,
    has_closed_density,
    is_random,
    log_density,
)
from rewritekit.rules import RuleSet, lvar, rule
from rewritekit.rules.rule import Bindings
from rewritekit.tensor.random import batch_lengths
from rewritekit.tensor.special import Ndtr, Sigmoid
from rewritekit.tensor.subtensor import ARRAY, SCALAR, Subtensor, entry_axes

__all__ = ["rules"]

a, c, v, ax, kd = lvar("a"), lvar("c"), lvar("v"), lvar("ax"), lvar("kd")

Shape = tuple[Any, ...]  # static lengths, or scalar Vars where a length is known at run time


# --- max and min of i.i.d. draws -----------------------------------------------------------


def _extreme(largest: bool) -> Any:
    """The density of ``max`` (``largest``) or ``min`` of a draw over the axes ``ax``."""

    def extreme(b: Bindings) -> Var | None:
        x, axes = b.a, b.ax
        if not _has_cdf(x) or not has_closed_density(x) or not _constant_along(x, axes):
            return None
        value = b.v if b.kd else rt.expand_dims(b.v, axes)
        plain = _unsized(x, x.owner.inputs[2:])  # its parameters' shape, not the size's
        n = _count(x, axes)
        if x.type.kind == "f":
            logp = _continuous_extreme(plain, value, n, largest)
        else:
            logp = _discrete_extreme(plain, value, n, largest)
        return _as_type_of(logp if b.kd else rt.squeeze(logp, axes), b.term)

    name = "max" if largest else "min"
    cdf, lower, upper = ("F", "F(v - 1)", "F(v)") if largest else ("S", "S(v)", "S(v - 1)")
    extreme.__doc__ = (
        f"{name} of n i.i.d. draws: log n + (n - 1) log {cdf}(v) + log f(v) (continuous), "
        f"log({upper}^n - {lower}^n) (discrete)"
    )
    return extreme


def _constant_along(x: Var, axes: tuple[int, ...]) -> bool:
    """True when every parameter of the scalar draw ``x``, right-aligned against its shape,
    has length 1 (statically) or is absent on each of ``axes``."""
    for p in x.owner.inputs[2:]:
        offset = x.ndim - p.ndim
        if any(axis >= offset and p.type.shape[axis - offset] != 1 for axis in axes):
            return False
    return True


def _count(x: Var, axes: tuple[int, ...]) -> int | Var:
    """The number of elements over ``axes``: an int where their lengths are static."""
    lengths = [_batch_lengths(x)[axis] for axis in axes]
    if not any(isinstance(n, Var) for n in lengths):
        return math.prod(lengths)
    return functools.reduce(operator.mul, lengths)


def _continuous_extreme(x: Var, value: Var, n: int | Var, largest: bool) -> Var:
    log_f = _draw_density(x, value)
    if isinstance(n, int) and n == 1:
        return log_f
    log_cdf = _nan_to_ninf(truncation.log_cdfs(x, value)[0 if largest else 1])
    rest = (n - 1) * log_cdf
    if isinstance(n, Var):  # one element: no CDF term (0 * -inf is NaN)
        rest = rt.where(rt.equal(n, 1), 0.0, rest)
    log_n = math.log(n) if isinstance(n, int) else rt.log(rt.cast(n, log_f.dtype))
    return log_n + rest + log_f


def _discrete_extreme(x: Var, value: Var, n: int | Var, largest: bool) -> Var:
    """log(F(v)^n - F(v - 1)^n) for the max, log(S(v - 1)^n - S(v)^n) for the min: the
    larger term times log1mexp of the ratio; -inf where one element has no mass."""
    index = 0 if largest else 1
    at, below = (_nan_to_ninf(truncation.log_cdfs(x, e)[index]) for e in (value, value - 1))
    high, low = (n * at, n * below) if largest else (n * below, n * at)
    ok = high > low
    logp = rt.where(ok, high + rt.log1mexp(rt.where(ok, low - high, -1.0)), -np.inf)
    return rt.where(_draw_density(x, value) > -np.inf, logp, -np.inf)


# --- cumsum, reshape and transpose -------------------------------------------------------


def _cumsum(b: Bindings) -> Var | None:
    """log_density(a, concatenate([v[:1], diff(v)])) along the axis (unit Jacobian)"""
    axis = b.ax
    if axis is None and b.a.ndim == 1:
        axis = 0  # the flattened vector is the vector
    if axis is None or not draws_in(b.a):
        return None
    head = b.v[(slice(None),) * axis + (slice(0, 1),)]
    steps = rt.concatenate([head, rt.diff(b.v, axis=axis)], axis=axis)
    return _as_type_of(log_density(b.a, steps), b.term)


def _reshaped(b: Bindings) -> Var | None:
    """reshape(log_density(a, reshape(v, shape(a))), c), for an a without core axes

    An ``a`` whose lengths are known only at run time must be a draw: they are read from
    its size or parameters (``_batch_lengths``)."""
    x = b.a
    if not draws_in(x) or _core_ndim(x):
        return None
    if None in x.type.shape and not is_random(x):
        return None  # its lengths would be read from the draw, which needs the key
    logp = log_density(x, rt.reshape(b.v, _batch_lengths(x) if is_random(x) else x.type.shape))
    return _as_type_of(rt.reshape(logp, b.c), b.term)


def _transposed(b: Bindings) -> Var | None:
    """transpose(log_density(a, transpose(v, argsort(ax))), ax[:batch]) (core axes last)"""
    x, axes = b.a, tuple(b.ax)
    batch = x.ndim - _core_ndim(x)
    if not draws_in(x) or axes[batch:] != tuple(range(batch, x.ndim)):
        return None
    logp = log_density(x, rt.transpose(b.v, tuple(int(i) for i in np.argsort(axes))))
    return _as_type_of(rt.transpose(logp, axes[:batch]), b.term)


# --- static indexing of a draw -------------------------------------------------------------


def _indexed_draw(b: Bindings) -> Var | None:
    """log_density(rv(broadcast_to(params, batch)[i]), v) for a = x[i], x = rv(params)

    ``i`` indexes batch axes only, holds no draw and picks no element twice."""
    node = b.a.owner
    if node is None or not isinstance(node.op, Subtensor) or not is_random(node.inputs[0]):
        return None
    x, parts, index = node.inputs[0], node.inputs[1:], node.op.index
    op = x.owner.op
    batch = x.ndim - op.ndim_supp
    if Ellipsis in index or any(draws_in(p) for p in parts):
        return None
    if any(axis is not None and axis >= batch for axis in entry_axes(index, x.ndim)):
        return None  # it reads a core axis
    if not _distinct(index, parts, x):
        return None
    batch_shape = _batch_lengths(x)
    params = [
        _indexed_parameter(p, node.op, parts, batch_shape, core)
        for p, core in zip(x.owner.inputs[2:], op.ndims_params, strict=True)
    ]
    return _as_type_of(log_density(_unsized(x, params), b.v), b.term)


def _indexed_parameter(p: Var, op: Subtensor, parts: Any, batch: Shape, core: int) -> Var:
    """``p`` broadcast to ``batch`` (and its core shape) and indexed by ``op``; through a
    ``sigmoid`` or ``ndtr``, so that a Bernoulli's logit or probit density still applies."""
    if p.owner is not None and isinstance(p.owner.op, (Sigmoid, Ndtr)):
        return p.owner.op(_indexed_parameter(p.owner.inputs[0], op, parts, batch, core))
    return op(rt.broadcast_to(p, batch + _lengths(p, p.ndim - core, p.ndim)), *parts)


def _distinct(index: tuple[Any, ...], parts: Any, x: Var) -> bool:
    """True when the index arrays are constants that pick no element twice (ints and slices
    never do)."""
    remaining, axes = iter(parts), entry_axes(index, x.ndim)
    arrays = []
    for entry, axis in zip(index, axes, strict=True):
        bounds = entry if isinstance(entry, tuple) else (entry,)
        for bound in bounds:
            if bound in (SCALAR, ARRAY):
                part = next(remaining)
                if bound == ARRAY:
                    arrays.append((part, x.type.shape[axis]))
    if not arrays:
        return True
    if any(not isinstance(p, Constant) or n is None for p, n in arrays):
        return False
    picked = np.broadcast_arrays(*(np.mod(p.data, n) for p, n in arrays))
    rows = np.stack([i.ravel() for i in picked], axis=-1)
    return len(np.unique(rows, axis=0)) == len(rows)


def _lengths(x: Var, start: int, stop: int) -> Shape:
    """``x``'s lengths from ``start`` to ``stop``, scalar Vars where known at run time."""
    static = x.type.shape[start:stop]
    if None not in static:
        return static
    dims = rt.shape(x)
    return tuple(dims[i] if d is None else d for i, d in enumerate(static, start))


def _batch_lengths(x: Var) -> Shape:
    """The batch lengths of the draw ``x``, scalar Vars where known at run time
    (``batch_lengths``: not ``rt.shape(x)``, which reads the draw, so the density would
    depend on its key)."""
    node = x.owner
    return tuple(batch_lengths(node.op, node.inputs[1], node.inputs[2:]))


def _unsized(x: Var, params: Any) -> Var:
    """A draw of ``x``'s distribution, with ``x``'s key, of ``params`` and their shape."""
    op = x.owner.op
    props = [getattr(op, name) for name in type(op).__props__[2:]]
    empty = constant(np.zeros(0, dtype=np.int64))
    return type(op)(None, op.dtype, *props)(x.owner.inputs[0], empty, *params)[1]


rules = RuleSet(
    [
        rule(log_density(rt.max(a, axis=ax, keepdims=kd), v), _extreme(True), name="max"),
        rule(log_density(rt.min(a, axis=ax, keepdims=kd), v), _extreme(False), name="min"),
        rule(log_density(rt.cumsum(a, axis=ax), v), _cumsum, name="cumsum"),
        rule(log_density(rt.reshape(a, c), v), _reshaped, name="reshape"),
        rule(log_density(rt.transpose(a, ax), v), _transposed, name="transpose"),
        rule(log_density(a, v), _indexed_draw, name="indexed_draw"),
    ],
    name="logprob_structure",
    tags={"logprob"},
)
