"""JAX implementations of the indexing Ops (``rewritekit.tensor.subtensor``).

Slice bounds must be static under ``jax.jit`` (integer indices and index arrays may be
traced). An index out of bounds follows the Op's mode, as on NumPy: "clip" and "fill" are
``jax.numpy``'s ``.at[...]`` modes ("fill" is "drop" for updates); "raise" states its
checks (``index_checks``) and indexes as ``x[idx]`` where checks are on, and reads as
"fill" in ``f.jax_fn``. An integer index into an axis of length 0 ("fill") goes to ``x``
padded by one element of the fill value (``jax.numpy`` refuses it). For
``set_subtensor`` with a repeated index, which write wins is unspecified in JAX (NumPy
keeps the last).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from rewritekit.backends.common import bounds
from rewritekit.backends.common.arrays import index
from rewritekit.backends.jax import index_checks, jax_funcify
from rewritekit.errors import GraphIndexError
from rewritekit.ir import Apply
from rewritekit.tensor.dynamic import DynamicSlice, DynamicUpdateSlice
from rewritekit.tensor.subtensor import (
    IncSubtensor,
    IndexOp,
    SetSubtensor,
    Subtensor,
    default_fill_value,
)

_CONCRETE = (int, np.integer, np.ndarray)


def _template(op: IndexOp, position: bounds.Position, n: int) -> str:
    """The error message of ``position`` as a format string with ``{}`` for the index."""
    text = bounds.message(op, position, "\0", n)
    return text.replace("{", "{{").replace("}", "}}").replace("\0", "{}")


def _plan(
    op: IndexOp, checks: Sequence[bounds.Position], where: tuple, shape: tuple[int, ...]
) -> tuple[str | None, list[int]]:
    """How to index: ``jax.numpy``'s mode (None: as ``x[where]``, every index in bounds)
    and the axes of length 0 to pad by one element ("fill")."""
    if op.mode == "raise" and index_checks.active():
        for position in checks:
            n = shape[position.axis]
            index_checks.check(where[position.entry], n, _template(op, position, n))
        # an index into an axis of length 0 fails its check when the call runs, but JAX
        # cannot trace a gather from that axis: pad it, as "fill" does (the values go unused)
        empty = [p.axis for p in checks if shape[p.axis] == 0 and np.size(where[p.entry])]
        return ("fill", empty) if empty else (None, [])
    inside = True
    for position in checks:
        value = where[position.entry]
        inside = inside and isinstance(value, _CONCRETE)
        inside = inside and bool(bounds.bounds(np, value, shape[position.axis])[0])
    if inside:
        return None, []
    empty = [p for p in checks if shape[p.axis] == 0 and np.size(where[p.entry])]
    if op.mode == "clip":
        if empty:
            raise GraphIndexError(bounds.clip_message(op, empty[0]))
        return "clip", []
    return "fill", [p.axis for p in empty]  # "fill", and "raise" in f.jax_fn


def _pad(x: Any, axes: list[int], value: Any) -> Any:
    return jnp.pad(
        x, [(0, 1) if a in axes else (0, 0) for a in range(x.ndim)], constant_values=value
    )


@jax_funcify.register(Subtensor)
def _subtensor(op: Subtensor, node: Apply) -> Callable[..., Any]:
    checks = bounds.positions(op, node)
    fill = default_fill_value(node.inputs[0].dtype) if op.fill_value is None else op.fill_value

    def run(x: Any, *parts: Any) -> Any:
        x = jnp.asarray(x)
        where = index(op, parts)
        mode, padded = _plan(op, checks, where, x.shape)
        if mode is None:
            return x[where]
        x = _pad(x, padded, fill) if padded else x
        return x.at[where].get(mode=mode, fill_value=fill if mode == "fill" else None)

    return run


def _updater(
    op: SetSubtensor | IncSubtensor, node: Apply, write: Callable[[Any, tuple, Any, Any], Any]
) -> Callable[..., Any]:
    """An update by ``write(x, where, value, mode)`` (mode None, "clip" or "drop"); an axis
    of length 0 is padded, written (or not) and cut off."""
    checks = bounds.positions(op, node)

    def run(x: Any, value: Any, *parts: Any) -> Any:
        x = jnp.asarray(x)
        where = index(op, parts)
        mode, padded = _plan(op, checks, where, x.shape)
        mode = "drop" if mode == "fill" else mode
        if not padded:
            return write(x, where, value, mode)
        out = write(_pad(x, padded, 0), where, value, mode)
        return out[tuple(slice(0, n) for n in x.shape)]

    return run


@jax_funcify.register(SetSubtensor)
def _set_subtensor(op: SetSubtensor, node: Apply) -> Callable[..., Any]:
    return _updater(op, node, lambda x, where, value, mode: x.at[where].set(value, mode=mode))


@jax_funcify.register(IncSubtensor)
def _inc_subtensor(op: IncSubtensor, node: Apply) -> Callable[..., Any]:
    if node.outputs[0].dtype == "bool":
        # NumPy adds bools as logical or; JAX's scatter-add refuses bool, scatter-max is or.
        return _updater(op, node, lambda x, where, v, mode: x.at[where].max(v, mode=mode))
    if all(isinstance(e, (tuple, int)) for e in op.index):
        return _updater(op, node, _add_static)
    return _updater(op, node, lambda x, where, v, mode: x.at[where].add(v, mode=mode))


def _add_static(x: Any, where: tuple, value: Any, mode: str | None) -> Any:
    """``x.at[where].add(value)`` for static ints and slices: in bounds, a window update."""
    if mode is None:
        return _add_to_window(x, value, where)
    return x.at[where].add(value, mode=mode)


def _add_to_window(x: Any, value: Any, where: tuple) -> Any:
    """``x.at[where].add(value)`` for an index of static ints and unit-step slices, as a
    ``dynamic_update_slice`` of the window: no scatter (which XLA guards with bounds
    checks, costly under ``vmap``). The gradient of a slice, ``inc_subtensor(zeros, g)``,
    is this case."""
    starts, window, kept = [], [], []
    for axis, entry in enumerate(where):
        length = x.shape[axis]
        if isinstance(entry, slice):
            start, stop, step = entry.indices(length)
            if step != 1:
                return x.at[where].add(value)
            starts.append(start)
            window.append(max(stop - start, 0))
            kept.append(axis)
        else:
            if not -length <= entry < length:
                return x.at[where].add(value)  # let JAX report it as it would
            starts.append(entry % length)
            window.append(1)
    starts += [0] * (x.ndim - len(where))
    window += list(x.shape[len(where) :])
    kept += list(range(len(where), x.ndim))
    current = lax.slice(x, starts, [s + w for s, w in zip(starts, window, strict=True)])
    shape = [window[a] for a in kept]
    update = jnp.broadcast_to(jnp.asarray(value), shape).astype(x.dtype)
    return lax.dynamic_update_slice(x, current + update.reshape(window), starts)


def _starts(x: Any, axes: tuple[int, ...], starts: Any) -> list[Any]:
    """A start per axis of ``x``: the given ones on ``axes`` (lax wraps negative ones and
    clamps them), 0 elsewhere; one integer type for all, as lax wants."""
    dtype = jnp.result_type(*starts) if starts else jnp.int32
    full: list[Any] = [jnp.zeros((), dtype)] * x.ndim
    for axis, start in zip(axes, starts, strict=True):
        full[axis] = jnp.asarray(start, dtype)
    return full


@jax_funcify.register(DynamicSlice)
def _dynamic_slice(op: DynamicSlice, node: Apply) -> Callable[..., Any]:
    def run(x: Any, *starts: Any) -> Any:
        x = jnp.asarray(x)
        sizes = list(x.shape)
        for axis, size in zip(op.axes, op.sizes, strict=True):
            sizes[axis] = size
        return lax.dynamic_slice(x, _starts(x, op.axes, starts), sizes)

    return run


@jax_funcify.register(DynamicUpdateSlice)
def _dynamic_update_slice(op: DynamicUpdateSlice, node: Apply) -> Callable[..., Any]:
    def run(x: Any, update: Any, *starts: Any) -> Any:
        x = jnp.asarray(x)
        return lax.dynamic_update_slice(
            x, jnp.asarray(update, x.dtype), _starts(x, op.axes, starts)
        )

    return run
