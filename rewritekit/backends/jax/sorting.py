"""JAX implementations of the sorting family: ``rewritekit.tensor.sorting`` (stable
sorts), ``searching`` (nonzero positions, searchsorted) and ``extremes`` (running maxima
and minima, ``jax.lax.cummax``/``cummin``, which refuse bool: it runs as uint8)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from rewritekit.backends.common import arrays, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor.extremes import Cummax, Cummin, RunningExtreme
from rewritekit.tensor.searching import Nonzero

register(jax_funcify, arrays.sorting(jnp))
register(jax_funcify, arrays.searching(jnp))


@jax_funcify.register(Nonzero)
def _nonzero(op: Nonzero, node: Apply) -> Callable[..., Any]:
    def run(x: Any) -> Any:
        found = jnp.nonzero(jnp.asarray(x), size=op.size, fill_value=op.fill_value)
        found = tuple(p.astype(jnp.int64) for p in found)
        return found[0] if len(found) == 1 else found  # one output: its array

    return run


@jax_funcify.register(Cummax)
@jax_funcify.register(Cummin)
def _running(op: RunningExtreme, node: Apply) -> Callable[..., Any]:
    scan = jax.lax.cummax if isinstance(op, Cummax) else jax.lax.cummin

    def run(x: Any) -> Any:
        x = jnp.asarray(x)
        if x.dtype == jnp.bool_:
            return scan(x.astype(jnp.uint8), axis=op.axis).astype(jnp.bool_)
        return scan(x, axis=op.axis)

    return run
