"""Static shapes stated mid-graph: ``specify_shape`` (PyTensor's), an identity that refines
its input's static shape and checks it when the graph runs, and ``get_vector_length``,
the static length of a shape vector.
"""

from __future__ import annotations

from typing import Any

from rewritekit.errors import ShapeError
from rewritekit.ir import Constant, Grads, Op, TensorType, Var, Vars, as_var
from rewritekit.tensor.axes import is_int, shape_str
from rewritekit.tensor.shape_vectors import MakeVector, Shape

__all__ = ["get_vector_length", "specify_shape"]


class SpecifyShape(Op):
    """``x`` itself, with the static ``shape`` (an int per known length, None where it stays
    unknown); a run whose ``x`` has another shape raises, naming both."""

    __props__ = ("shape",)

    shape: tuple[int | None, ...]

    def __init__(self, shape: Any) -> None:
        entries = tuple(None if n is None else int(n) for n in shape)
        if any(n is not None and n < 0 for n in entries):
            raise ShapeError(f"specify_shape: lengths must be >= 0, got {shape_str(entries)}")
        super().__init__(entries)

    def infer_types(self, x: TensorType) -> tuple[TensorType, ...]:
        if x.ndim != len(self.shape):
            raise ShapeError(
                f"specify_shape: {x} has {x.ndim} axes, the shape {shape_str(self.shape)} "
                f"{len(self.shape)}"
            )
        refined = []
        for axis, (have, want) in enumerate(zip(x.shape, self.shape, strict=True)):
            if have is not None and want is not None and have != want:
                raise ShapeError(f"specify_shape: axis {axis} of {x} has length {have}, not {want}")
            refined.append(have if want is None else want)
        return (x.with_shape(refined),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        return [cotangents[0]]  # the identity


def specify_shape(x: Any, shape: Any) -> Var:
    """``x`` with the static shape ``shape`` (ints, and None for lengths left unknown): the
    lengths it gives become static for every Op after it (``jax.jit`` needs them), and each
    run checks them (NumPy when called, JAX when traced).

    Raises:
        ShapeError: ``shape`` has another number of axes than ``x``, or contradicts a
            length ``x`` already has.

    Example:
        >>> x = rt.vector("x")
        >>> specify_shape(x, (3,)).type.shape
        (3,)
    """
    x = as_var(x, context="specify_shape: input 'x'")
    if is_int(shape):
        shape = (shape,)
    if not all(n is None or is_int(n) for n in shape):
        raise ShapeError(
            f"specify_shape: the shape must hold ints and None, got {shape!r} (a length "
            "known only at run time is None)"
        )
    return SpecifyShape(tuple(shape))(x)


def get_vector_length(v: Any) -> int:
    """The static length of the 1-d ``v`` (a shape vector, say): from its type, a constant,
    ``shape(x)`` (``x.ndim``) or the scalars a vector was made of.

    Raises:
        ShapeError: ``v`` is not 1-d, or its length is known only at run time.

    Example:
        >>> get_vector_length(rt.shape(rt.matrix("m")))
        2
    """
    v = as_var(v, context="get_vector_length: input 'v'")
    if v.ndim != 1:
        raise ShapeError(f"get_vector_length: {v!r} is not a vector ({v.type})")
    if v.type.shape[0] is not None:
        return v.type.shape[0]
    if isinstance(v, Constant):
        return len(v.data)
    owner = v.owner
    if owner is not None and isinstance(owner.op, Shape):
        return owner.inputs[0].ndim
    if owner is not None and isinstance(owner.op, MakeVector):
        return len(owner.inputs)
    raise ShapeError(f"get_vector_length: the length of {v!r} is known only at run time")
