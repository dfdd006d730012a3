"""JAX implementations of the indexing Ops (``rewritekit.tensor.subtensor``).

Slice bounds must be static under ``jax.jit``: a bound computed from a traced value is an
error naming the Op. Integer indices and index arrays may be traced (dynamic indexing).
Unlike NumPy, JAX does not raise for out-of-range run-time indices: reads clamp them and
updates drop them. For ``set_subtensor`` with a repeated index, which write wins is
unspecified in JAX (NumPy keeps the last).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from rewritekit.backends.jax import jax_funcify
from rewritekit.backends.jax.shapes import static_ints
from rewritekit.ir import Apply
from rewritekit.tensor.subtensor import IncSubtensor, SetSubtensor, Subtensor, make_index


def _index(op: Subtensor | SetSubtensor | IncSubtensor, parts: tuple[Any, ...]) -> tuple:
    def bound(value: Any) -> int:
        return static_ints(value, op.name, "slice bounds")[0]

    return make_index(op.index, parts, bound)


@jax_funcify.register(Subtensor)
def _subtensor(op: Subtensor, node: Apply) -> Callable[..., Any]:
    return lambda x, *parts: jnp.asarray(x)[_index(op, parts)]


@jax_funcify.register(SetSubtensor)
def _set_subtensor(op: SetSubtensor, node: Apply) -> Callable[..., Any]:
    return lambda x, value, *parts: jnp.asarray(x).at[_index(op, parts)].set(value)


@jax_funcify.register(IncSubtensor)
def _inc_subtensor(op: IncSubtensor, node: Apply) -> Callable[..., Any]:
    if node.outputs[0].dtype == "bool":
        # NumPy adds bools as logical or; JAX's scatter-add refuses bool, scatter-max is or.
        return lambda x, value, *parts: jnp.asarray(x).at[_index(op, parts)].max(value)
    if all(isinstance(e, (tuple, int)) for e in op.index):
        return lambda x, value, *parts: _add_to_window(jnp.asarray(x), value, _index(op, parts))
    return lambda x, value, *parts: jnp.asarray(x).at[_index(op, parts)].add(value)


def _add_to_window(x: Any, value: Any, index: tuple) -> Any:
    """``x.at[index].add(value)`` for an index of static ints and unit-step slices, as a
    ``dynamic_update_slice`` of the window: no scatter (which XLA guards with bounds
    checks, costly under ``vmap``). The gradient of a slice, ``inc_subtensor(zeros, g)``,
    is this case."""
    from jax import lax

    starts, window, kept = [], [], []
    for axis, entry in enumerate(index):
        length = x.shape[axis]
        if isinstance(entry, slice):
            start, stop, step = entry.indices(length)
            if step != 1:
                return x.at[index].add(value)
            starts.append(start)
            window.append(max(stop - start, 0))
            kept.append(axis)
        else:
            if not -length <= entry < length:
                return x.at[index].add(value)  # let JAX report it as it would
            starts.append(entry % length)
            window.append(1)
    starts += [0] * (x.ndim - len(index))
    window += list(x.shape[len(index) :])
    kept += list(range(len(index), x.ndim))
    current = lax.slice(x, starts, [s + w for s, w in zip(starts, window, strict=True)])
    shape = [window[a] for a in kept]
    update = jnp.broadcast_to(jnp.asarray(value), shape).astype(x.dtype)
    return lax.dynamic_update_slice(x, current + update.reshape(window), starts)
