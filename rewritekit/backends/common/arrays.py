"""Making and rearranging arrays over an array module ``xp``: the shape Ops
(``rewritekit.tensor.shapes``), creation (``creation``), the index tuple of indexing
(``subtensor``; each backend has its own Ops, for out-of-bounds indices), sorts
(``sorting``) and searches (``searching``), and the batch shape of a random draw (``random``).

Shapes are static in XLA: ``Shape`` and ``ShapeI`` give concrete NumPy values even under
``jax.jit`` (so shape arithmetic runs in NumPy while tracing); ``Reshape``'s and
``BroadcastTo``'s shape, ``Alloc``'s shape, ``Arange``'s start/stop/step, ``Eye``'s ``n``
and ``m`` and slice bounds must be concrete while tracing (they are when they come from
constants or static shapes): a traced one is an error naming the Op (``static_ints``).
``Eye``'s offset ``k``, integer indices and index arrays may be traced.

In NumPy, reshape, transpose, expand_dims, squeeze, broadcast_to and basic indexing return
views of their input, as NumPy does; nothing in a compiled graph writes to its values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.common import Table, concrete, static_ints
from rewritekit.errors import ShapeError
from rewritekit.ir import Apply
from rewritekit.ir.types import shape_str
from rewritekit.tensor import creation as cr
from rewritekit.tensor import random as rv
from rewritekit.tensor import searching as se
from rewritekit.tensor import shapes as sh
from rewritekit.tensor import sorting as so
from rewritekit.tensor import subtensor as st


def shapes(xp: Any) -> Table:
    """The shape Ops over ``xp``, all but ``MakeVector``."""

    def concatenate(op: sh.Concatenate, node: Apply) -> Callable[..., Any]:
        out = np.dtype(node.outputs[0].dtype)
        # each input cast to the result's dtype first: jnp would promote by JAX's lattice
        return lambda *xs: xp.concatenate([xp.asarray(x, dtype=out) for x in xs], axis=op.axis)

    def specify_shape(op: sh.SpecifyShape, node: Apply) -> Callable[..., Any]:
        def run(x: Any) -> Any:
            # the lengths: concrete in NumPy, static under jax.jit (checked when traced)
            have = np.shape(x)
            if any(w is not None and w != h for h, w in zip(have, op.shape, strict=True)):
                raise ValueError(
                    f"specify_shape: {node.inputs[0]!r} has shape {tuple(have)} at run time, "
                    f"not {shape_str(op.shape)}"
                )
            return x

        return run

    return {
        sh.SpecifyShape: specify_shape,
        sh.Shape: lambda op, node: lambda x: np.asarray(np.shape(x), dtype=np.int64).reshape(-1),
        sh.ShapeI: lambda op, node: lambda x: np.asarray(np.shape(x)[op.axis], dtype=np.int64),
        sh.Reshape: lambda op, node: lambda x, shape: xp.reshape(x, static_ints(shape, "reshape")),
        sh.BroadcastTo: lambda op, node: (
            lambda x, shape: xp.broadcast_to(x, static_ints(shape, "broadcast_to"))
        ),
        sh.Transpose: lambda op, node: lambda x: xp.transpose(x, op.axes),
        sh.ExpandDims: lambda op, node: lambda x: xp.expand_dims(x, op.axes),
        sh.Squeeze: lambda op, node: lambda x: xp.squeeze(x, axis=op.axes),
        sh.Concatenate: concatenate,
    }


def creation(xp: Any) -> Table:
    """The creation Ops over ``xp``."""

    def alloc(op: cr.Alloc, node: Apply) -> Callable[..., Any]:
        out = np.dtype(node.outputs[0].dtype)
        return lambda value, shape: xp.full(static_ints(shape, "alloc"), value, dtype=out)

    def arange(op: cr.Arange, node: Apply) -> Callable[..., Any]:
        def run(start: Any, stop: Any, step: Any) -> Any:
            values = [concrete(v, "arange", "start, stop and step") for v in (start, stop, step)]
            return xp.asarray(np.arange(*values, dtype=np.dtype(op.dtype)))

        return run

    def eye(op: cr.Eye, node: Apply) -> Callable[..., Any]:
        def run(n: Any, m: Any, k: Any) -> Any:
            (rows,), (cols,) = static_ints(n, "eye", "n"), static_ints(m, "eye", "m")
            # k may be traced: compare the column - row offsets with it.
            offset = xp.arange(cols)[None, :] - xp.arange(rows)[:, None]
            return (offset == xp.asarray(k)).astype(node.outputs[0].dtype)

        return run

    return {cr.Alloc: alloc, cr.Arange: arange, cr.Eye: eye}


def index(op: st.Subtensor | st.SetSubtensor | st.IncSubtensor, parts: tuple[Any, ...]) -> tuple:
    """The index tuple of ``op`` with the run-time ``parts`` filled in (static slice bounds)."""

    def bound(value: Any) -> int:
        try:
            return static_ints(value, op.name, "slice bounds")[0]
        except ShapeError as exc:
            raise ShapeError(
                f"{exc}; a window of static length k at a traced start i is x[i:i + k] "
                "(as JAX's lax.dynamic_slice)"
            ) from None

    return st.make_index(op.index, parts, bound)


def sorting(xp: Any) -> Table:
    """The stable sorts over ``xp``.

    ``jnp.sort`` and ``jnp.argsort``, like NumPy's, put NaN last and treat -0.0 and 0.0 as
    equal, so JAX's ``argsort`` agrees with NumPy's on ties.
    """
    return {
        so.Sort: lambda op, node: lambda x: xp.sort(xp.asarray(x), axis=op.axis, stable=True),
        so.Argsort: lambda op, node: (
            lambda x: xp.asarray(
                xp.argsort(xp.asarray(x), axis=op.axis, stable=True), dtype=np.int64
            )
        ),
    }


def searching(xp: Any) -> Table:
    """``Searchsorted`` over ``xp``: both inputs in their NumPy-promoted dtype (``jnp`` would
    promote int64 with float32 to float32 by JAX's lattice), NaN sorting last in both."""

    def searchsorted(op: se.Searchsorted, node: Apply) -> Callable[..., Any]:
        common = np.result_type(*(v.dtype for v in node.inputs))
        return lambda a, v: xp.asarray(
            xp.searchsorted(xp.asarray(a, dtype=common), xp.asarray(v, dtype=common), op.side),
            dtype=np.int64,
        )

    return {se.Searchsorted: searchsorted}


def batch_shape(op: rv.RandomVariable, size: Any, params: tuple[Any, ...]) -> tuple:
    """A draw's run-time batch shape: the size, or the parameters' broadcast batch shape.

    ``size`` is concrete (also in JAX: it must be static) and ``params`` are NumPy or JAX
    arrays.

    Raises:
        ShapeError: the parameters do not broadcast to the size (known only now when the
            size or a parameter's length was unknown at build time).
    """
    batches = [
        np.shape(p)[: np.ndim(p) - core] for p, core in zip(params, op.ndims_params, strict=True)
    ]
    size = None if op.size is None else tuple(int(d) for d in size)
    try:
        batch = np.broadcast_shapes(*batches)
        if size is not None and np.broadcast_shapes(size, batch) != size:
            raise ValueError
    except ValueError:
        shown = ", ".join(f"{n} {b}" for n, b in zip(op.params, batches, strict=True))
        raise ShapeError(
            f"{op.name}: the parameters' batch shapes ({shown}) do not broadcast to the size {size}"
        ) from None
    return batch if size is None else size
