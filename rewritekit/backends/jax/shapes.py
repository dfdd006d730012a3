"""JAX implementations of the shape Ops (``rewritekit.tensor.shapes``).

Shapes are static in XLA: ``Shape`` and ``ShapeI`` give concrete NumPy values even under
``jax.jit`` (so shape arithmetic runs in NumPy while tracing), and ``Reshape`` and
``BroadcastTo`` need their shape input concrete; a shape computed from traced values is
an error that names the Op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rewritekit.backends.jax import jax_funcify
from rewritekit.errors import ShapeError
from rewritekit.ir import Apply
from rewritekit.tensor.shapes import (
    BroadcastTo,
    Concatenate,
    ExpandDims,
    MakeVector,
    Reshape,
    Shape,
    ShapeI,
    Squeeze,
    Transpose,
)

_TRACED = (
    jax.errors.TracerArrayConversionError,
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
)


def concrete(value: Any, name: str, what: str = "shape") -> np.ndarray:
    """``value`` as a NumPy array, or a ShapeError naming ``name`` if it is traced.

    Example:
        >>> concrete(np.int64(3), "arange", "stop")
        array(3)
    """
    try:
        return np.asarray(value)
    except _TRACED:
        raise ShapeError(
            f"{name}: the {what} must be known when the graph is compiled, but it depends on "
            "a traced value (a function input); compute it from static shapes or constants, "
            "or use the numpy backend"
        ) from None


def static_ints(value: Any, name: str, what: str = "shape") -> tuple[int, ...]:
    """A concrete integer vector (or scalar) as a tuple of Python ints (see ``concrete``).

    Example:
        >>> static_ints(np.array([2, 3]), "reshape")
        (2, 3)
    """
    return tuple(int(d) for d in concrete(value, name, what).reshape(-1))


@jax_funcify.register(Shape)
def _shape(op: Shape, node: Apply) -> Callable[..., Any]:
    return lambda x: np.asarray(x.shape, dtype=np.int64).reshape(-1)


@jax_funcify.register(ShapeI)
def _shape_i(op: ShapeI, node: Apply) -> Callable[..., Any]:
    return lambda x: np.asarray(x.shape[op.axis], dtype=np.int64)


@jax_funcify.register(MakeVector)
def _make_vector(op: MakeVector, node: Apply) -> Callable[..., Any]:
    return lambda *scalars: jnp.stack([jnp.asarray(s).astype(jnp.int64) for s in scalars])


@jax_funcify.register(Reshape)
def _reshape(op: Reshape, node: Apply) -> Callable[..., Any]:
    return lambda x, shape: jnp.reshape(x, static_ints(shape, "reshape"))


@jax_funcify.register(BroadcastTo)
def _broadcast_to(op: BroadcastTo, node: Apply) -> Callable[..., Any]:
    return lambda x, shape: jnp.broadcast_to(x, static_ints(shape, "broadcast_to"))


@jax_funcify.register(Transpose)
def _transpose(op: Transpose, node: Apply) -> Callable[..., Any]:
    return lambda x: jnp.transpose(x, op.axes)


@jax_funcify.register(ExpandDims)
def _expand_dims(op: ExpandDims, node: Apply) -> Callable[..., Any]:
    return lambda x: jnp.expand_dims(x, op.axes)


@jax_funcify.register(Squeeze)
def _squeeze(op: Squeeze, node: Apply) -> Callable[..., Any]:
    return lambda x: jnp.squeeze(x, axis=op.axes)


@jax_funcify.register(Concatenate)
def _concatenate(op: Concatenate, node: Apply) -> Callable[..., Any]:
    out = node.outputs[0].dtype

    def run(*xs: Any) -> Any:
        # jnp promotes by JAX's lattice; cast to NumPy's result dtype first.
        return jnp.concatenate([jnp.asarray(x).astype(out) for x in xs], axis=op.axis)

    return run
