"""JAX implementations of the creation Ops (``rewritekit.tensor.creation``).

Lengths are static in XLA: ``Alloc``'s shape, ``Arange``'s start/stop/step and ``Eye``'s
``n`` and ``m`` must be concrete while tracing (they are when they come from constants or
static shapes); a traced one is an error naming the Op. ``Eye``'s offset ``k`` may be traced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from rewritekit.backends.jax import jax_funcify
from rewritekit.backends.jax.shapes import concrete, static_ints
from rewritekit.ir import Apply
from rewritekit.tensor.creation import Alloc, Arange, Eye


@jax_funcify.register(Alloc)
def _alloc(op: Alloc, node: Apply) -> Callable[..., Any]:
    out = node.outputs[0].dtype
    return lambda value, shape: jnp.full(static_ints(shape, "alloc"), value, dtype=out)


@jax_funcify.register(Arange)
def _arange(op: Arange, node: Apply) -> Callable[..., Any]:
    out = np.dtype(op.dtype)

    def run(start: Any, stop: Any, step: Any) -> Any:
        values = [concrete(v, "arange", "start, stop and step") for v in (start, stop, step)]
        return jnp.asarray(np.arange(*values, dtype=out))

    return run


@jax_funcify.register(Eye)
def _eye(op: Eye, node: Apply) -> Callable[..., Any]:
    out = node.outputs[0].dtype

    def run(n: Any, m: Any, k: Any) -> Any:
        (rows,), (cols,) = static_ints(n, "eye", "n"), static_ints(m, "eye", "m")
        # k may be traced: compare the column - row offsets with it.
        offset = jnp.arange(cols)[None, :] - jnp.arange(rows)[:, None]
        return (offset == jnp.asarray(k)).astype(out)

    return run
