"""JAX implementations of the indexing Ops (``rewritekit.tensor.subtensor``).

Slice bounds must be static under ``jax.jit`` (integer indices and index arrays may be
traced). Unlike NumPy, JAX does not raise for out-of-range run-time indices: reads clamp them and
updates drop them. For ``set_subtensor`` with a repeated index, which write wins is
unspecified in JAX (NumPy keeps the last).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
from jax import lax

from rewritekit.backends.common import arrays, register
from rewritekit.backends.common.arrays import index
from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor.dynamic import DynamicSlice, DynamicUpdateSlice
from rewritekit.tensor.subtensor import IncSubtensor, SetSubtensor

register(jax_funcify, arrays.subtensor(jnp))


@jax_funcify.register(SetSubtensor)
def _set_subtensor(op: SetSubtensor, node: Apply) -> Callable[..., Any]:
    return lambda x, value, *parts: jnp.asarray(x).at[index(op, parts)].set(value)


@jax_funcify.register(IncSubtensor)
def _inc_subtensor(op: IncSubtensor, node: Apply) -> Callable[..., Any]:
    if node.outputs[0].dtype == "bool":
        # NumPy adds bools as logical or; JAX's scatter-add refuses bool, scatter-max is or.
        return lambda x, value, *parts: jnp.asarray(x).at[index(op, parts)].max(value)
    if all(isinstance(e, (tuple, int)) for e in op.index):
        return lambda x, value, *parts: _add_to_window(jnp.asarray(x), value, index(op, parts))
    return lambda x, value, *parts: jnp.asarray(x).at[index(op, parts)].add(value)


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
