"""Ops that differentiation needs: ``stop_gradient``, ``sum_to`` and ``Jacobian``.

- ``StopGradient``: the identity in the forward pass; no gradient flows through it.
- ``SumTo``: a gradient summed back to the shape of the input that was broadcast (at run
  time for lengths that are unknown statically: an axis of unknown length may be 1 and
  broadcast).
- ``Jacobian``: holds a vector-Jacobian product graph ``g(u, ...)`` and evaluates it for
  every one-hot cotangent ``u`` (``jax.vmap`` in JAX, a loop in NumPy): the Jacobian of
  a graph whose output size is known only at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Constant, Grads, Op, TensorType, Var, Vars, as_var
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.elemwise import cast
from rewritekit.tensor.reduction import sum as reduce_sum
from rewritekit.tensor.shapes import as_shape_vector, broadcast_to, shape

__all__ = ["input_grad", "stop_gradient", "sum_to"]


class StopGradient(Op):
    """``x`` itself, with no gradient: ``d stop_gradient(x) / dx = 0`` (PyTensor's
    ``disconnected_grad``, JAX's ``lax.stop_gradient``)."""

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        return (x,)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        return [None]


@pattern_function(StopGradient)
def stop_gradient(x: Any) -> Var:
    """``x``, through which no gradient flows (the forward value is unchanged).

    Example:
        >>> x = rt.scalar("x")
        >>> rk.grad(x * rt.stop_gradient(x), x)  # d/dx [x * c] with c = x held fixed
    """
    return StopGradient()(as_var(x, context="stop_gradient: input 0"))


class SumTo(Op):
    """``g`` summed over the axes it has beyond ``shape`` and over the axes where
    ``shape`` has length 1 and ``g`` does not: the transpose of broadcasting.

    Inputs: ``g`` and the int64 shape vector; ``shape`` (the parameter) is its static
    shape. The result has that shape.
    """

    __props__ = ("shape",)

    def __init__(self, shape: Sequence[int | None]) -> None:
        super().__init__(tuple(None if d is None else int(d) for d in shape))

    def infer_types(self, g: TensorType, vector: TensorType) -> tuple[TensorType, ...]:
        if vector.ndim != 1 or vector.shape[0] != len(self.shape) or vector.kind not in "iu":
            raise GraphTypeError(
                f"sum_to: the shape input must be an int vector of length {len(self.shape)}, "
                f"got {vector}"
            )
        if g.ndim < len(self.shape):
            raise ShapeError(
                f"sum_to: cannot sum a {g.ndim}-d input to the {len(self.shape)}-d shape "
                f"{self.shape}"
            )
        return (TensorType(g.dtype, self.shape),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # summing is linear: its transpose broadcasts the cotangent back
        return [broadcast_to(cotangents[0], shape(inputs[0])), None]


@pattern_function(SumTo, inputs=("g",))
def sum_to(g: Any, x: Var) -> Var:
    """``g`` summed back to ``x``'s shape, undoing the broadcasting of ``x`` (``g``'s own
    shape must be ``x``'s broadcast with something).

    Axes that broadcasting provably added or stretched are summed with ``rt.sum``; axes
    of unknown length in ``x`` go through ``SumTo``, which decides at run time. ``g`` itself
    comes back when nothing can have been broadcast.

    Example:
        >>> g = rt.matrix("g", shape=(4, 3))
        >>> sum_to(g, rt.vector("b", shape=(3,))).type.shape
        (3,)
    """
    g = as_var(g, context="sum_to: input 0")
    target = x.type.shape
    lead = g.ndim - len(target)
    if lead < 0:
        raise ShapeError(f"sum_to: cannot sum {g.type} to the shape of {x.type}")
    if lead:
        g = reduce_sum(g, axis=tuple(range(lead)))
    pairs = list(zip(target, g.type.shape, strict=True))
    stretched = tuple(axis for axis, (want, have) in enumerate(pairs) if want == 1 and have != 1)
    if stretched:
        g = reduce_sum(g, axis=stretched, keepdims=True)
    # an axis of unknown length in x may be 1 at run time and have been broadcast
    if any(want is None and have != 1 for want, have in pairs):
        op = _SUM_TO.get(target)
        if op is None:
            op = _SUM_TO[target] = SumTo(target)
        g = op(g, shape(x))
    return g


_SUM_TO: dict[tuple[int | None, ...], SumTo] = {}  # one Op per target: built per gradient


def input_grad(g: Var, x: Var) -> Var | None:
    """The cotangent ``g`` of an elementwise result as the gradient of its input ``x``:
    summed back over broadcasting and cast to ``x``'s dtype; None for an integer or bool
    ``x`` (no gradient). The differentiator applies it to every gradient that the ``vjp``
    of an Op that ``broadcasts`` returns (the elementwise Ops, ``broadcast_to``, ``alloc``).

    Example:
        >>> x, y = rt.vector("x", shape=(3,)), rt.matrix("y", shape=(2, 3))
        >>> input_grad(y, x).type.shape  # the cotangent of x + y, summed back
        (3,)
    """
    if x.type.kind not in "fc" or isinstance(x, Constant):  # constants have no gradient
        return None
    g = sum_to(g, x)
    return g if g.dtype == x.dtype else cast(g, x.dtype)


class Jacobian(Op):
    """The Jacobian of a graph, one row per element of its output, computed from a
    vector-Jacobian product graph ``g`` of a cotangent ``u`` (a free input of ``g``).

    Parameters (held by the Op, compared by identity of the graph nodes):
        cotangent: the input ``u`` of the inner graph, of the output's type.
        inner_inputs: the other free inputs of ``g``, in the order of the node's inputs.
        vjp: ``g``, the vector-Jacobian product, of the type of the variable differentiated.

    Inputs: the values of ``inner_inputs``, then the output's shape vector (the number of
    rows is its product). Output: ``output_shape + wrt_shape``.
    """

    __props__ = ("cotangent", "inner_inputs", "vjp_graph")

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        *values, vector = input_types
        if len(values) != len(self.inner_inputs):
            raise GraphTypeError(
                f"jacobian: expected {len(self.inner_inputs)} inner inputs, got {len(values)}"
            )
        u, g = self.cotangent.type, self.vjp_graph.type
        if vector.ndim != 1 or vector.shape[0] != u.ndim:
            raise GraphTypeError(f"jacobian: bad shape input {vector} for an output {u}")
        return (TensorType(g.dtype, (*u.shape, *g.shape)),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        raise NotImplementedError(
            "jacobian: third derivatives (the gradient of a Jacobian) are not supported"
        )


def jacobian_node(output_shape: Var, cotangent: Var, vjp_graph: Var, inputs: list[Var]) -> Var:
    """The ``Jacobian`` of the vjp graph ``vjp_graph(cotangent, *inputs)``."""
    vector = as_shape_vector(output_shape, "jacobian")
    op = Jacobian(cotangent, tuple(inputs), vjp_graph)
    return op(*inputs, vector)
