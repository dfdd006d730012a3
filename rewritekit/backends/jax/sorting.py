"""JAX implementations of ``rewritekit.tensor.sorting`` (stable sorts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from rewritekit.backends.common import arrays, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor.searching import Nonzero

register(jax_funcify, arrays.sorting(jnp))


@jax_funcify.register(Nonzero)
def _nonzero(op: Nonzero, node: Apply) -> Callable[..., Any]:
    def run(x: Any) -> Any:
        found = jnp.nonzero(jnp.asarray(x), size=op.size, fill_value=op.fill_value)
        found = tuple(p.astype(jnp.int64) for p in found)
        return found[0] if len(found) == 1 else found  # one output: its array

    return run
