"""JAX implementations of ``rewritekit.tensor.sorting``.

``jnp.sort`` and ``jnp.argsort`` are stable and, like NumPy, put NaN last and treat -0.0
and 0.0 as equal, so ``argsort`` agrees with NumPy's ``kind="stable"`` on ties.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor.sorting import Argsort, Sort


@jax_funcify.register(Sort)
def _sort(op: Sort, node: Apply) -> Callable[..., Any]:
    return lambda x: jnp.sort(jnp.asarray(x), axis=op.axis, stable=True)


@jax_funcify.register(Argsort)
def _argsort(op: Argsort, node: Apply) -> Callable[..., Any]:
    return lambda x: jnp.argsort(jnp.asarray(x), axis=op.axis, stable=True).astype(jnp.int64)
