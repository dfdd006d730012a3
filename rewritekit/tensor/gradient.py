"""Ops that differentiation needs, ``stop_gradient`` and ``sum_to``, and the masked
cotangents of ``where``.

- ``StopGradient``: the identity in the forward pass; no gradient flows through it.
- ``SumTo``: a gradient summed back to the shape of the input that was broadcast (at run
  time for lengths that are unknown statically: an axis of unknown length may be 1 and
  broadcast).
- Jacobians are no Op: ``rk.jacobian`` vectorizes the vjp (or jvp) graph over the one-hot
  basis (``rewritekit.vectorize``), so the rules see and simplify it.
- Masked cotangents: ``where(c, 0, h)`` or ``where(c, h, 0)``, the cotangent a ``where``
  sends to each branch. The differentiator applies an elementwise Op's vjp to ``h`` and
  masks the result again (``split_masks``, ``masked``, ``masked_input_grad``,
  ``sum_cotangents``), so the branch not taken gets an exact zero whatever its
  derivative is there (``0 * nan`` would be NaN).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Constant, Grads, Op, TensorType, Var, Vars, as_var, broadcast_shapes
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.complex_parts import real
from rewritekit.tensor.creation import ones_like
from rewritekit.tensor.elemwise import Where, add, cast, equal, where
from rewritekit.tensor.reduction import sum as reduce_sum
from rewritekit.tensor.shapes import broadcast_to, shape
from rewritekit.tensor.ufunc import Elemwise

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
    return _dtype_of(sum_to(g, x), x)


def _dtype_of(g: Var, x: Var) -> Var:
    """``g`` in ``x``'s dtype; of a complex ``g`` and a real ``x``, the real part (JAX's
    convention for the gradient of a real input)."""
    if g.type.kind == "c" and x.type.kind != "c":
        g = real(g)
    return g if g.dtype == x.dtype else cast(g, x.dtype)


# --- masked cotangents --------------------------------------------------------------------
#
# A mask ``(c, True)`` stands for ``where(c, 0, h)`` and ``(c, False)`` for ``where(c, h, 0)``.
# Every vjp is linear in its cotangent, and an elementwise Op's vjp at a position reads only
# the cotangent at that position, so ``vjp(where(c, 0, h)) = where(c, 0, vjp(h))`` except
# that the right side is an exact 0 where ``vjp`` has an infinite or NaN factor (the
# derivative of the branch ``where`` did not take, evaluated where it is undefined).

Mask = tuple[Var, bool]


def _is_zero(var: Var) -> bool:
    return isinstance(var, Constant) and var.data.size > 0 and not np.any(var.data)


def split_masks(g: Var) -> tuple[list[Mask], Var]:
    """The masks around the cotangent ``g`` (outermost first) and the cotangent they mask.

    ``where(c, 0, h)`` gives ``([(c, True)], h)`` and ``where(c, h, 0)`` gives
    ``([(c, False)], h)``; nested masks all come off. A ``where`` is a mask only when its
    zero branch (a constant of zeros) neither widens its shape nor changes its dtype.

    Example:
        >>> c, h = rt.vector("c", dtype="bool"), rt.vector("h")
        >>> split_masks(rt.where(c, 0, h)) == ([(c, True)], h)
        True
    """
    masks: list[Mask] = []
    while (node := g.owner) is not None and isinstance(node.op, Where):
        c, a, b = node.inputs
        if _is_zero(a):
            mask, inner = (c, True), b
        elif _is_zero(b):
            mask, inner = (c, False), a
        else:
            break
        if inner.dtype != g.dtype or broadcast_shapes(c.type.shape, inner.type.shape) != (
            g.type.shape
        ):
            break
        masks.append(mask)
        g = inner
    return masks, g


def masked(g: Any, masks: Sequence[Mask]) -> Var:
    """``g`` with ``masks`` applied (the last innermost): exact zeros where a mask says so.

    Example:
        >>> masked(h, [(c, True)]) is rt.where(c, 0, h)
        True
    """
    for c, zero_where_true in reversed(masks):
        g = where(c, 0, g) if zero_where_true else where(c, g, 0)
    return g


def _has(masks: Sequence[Mask], mask: Mask) -> bool:
    return any(c is mask[0] and side == mask[1] for c, side in masks)


def sum_cotangents(parts: Sequence[Var]) -> Var:
    """The sum of the cotangents of a Var's uses, with the masks they share kept outermost:
    ``where(c, 0, a) + where(c, 0, b)`` is ``where(c, 0, a + b)``, so the next vjp still
    sees the mask. Parts masked differently are added as they are (their exact zeros add).

    Example:
        >>> sum_cotangents([rt.where(c, 0, a), rt.where(c, 0, b)]) is rt.where(c, 0, a + b)
        True
    """
    total = parts[0]
    if len(parts) == 1:
        return total
    split = [split_masks(p) for p in parts]
    common = [m for m in split[0][0] if all(_has(ms, m) for ms, _ in split[1:])]
    if common:
        parts = [masked(core, [m for m in ms if not _has(common, m)]) for ms, core in split]
        total = parts[0]
    for part in parts[1:]:
        total = add(total, part)
    return masked(total, common)


def masked_input_grad(
    g: Any, x: Var, masks: Sequence[Mask], *, same_shape: bool = False
) -> Var | None:
    """``input_grad(masked(g, masks), x)`` with the masks kept outermost where they survive.

    ``g`` is what a vjp rule computed from the unmasked cotangent; masks around ``g``
    itself (a rule may mask, as ``where``'s does) join ``masks``. When nothing is summed
    over broadcasting (``same_shape``: the caller knows ``x`` has the result's run-time
    shape), the masks go around the cast ``g``. When broadcasting is summed away and ``x``
    is computed by an elementwise Op (the only vjp that looks for masks), the result is an
    exact zero where every summed element was masked: a mask whose condition is constant
    along the summed axes stays as it is, the others become one mask ``count == 0``, where
    ``count`` sums the unmasked positions back to ``x``. Otherwise the masked cotangent is
    summed as it is (its masked positions are zeros all the same).

    Example:
        >>> b, v, h = rt.scalar("b"), rt.vector("v"), rt.vector("h")
        >>> c = rt.scalar("c", dtype="bool")  # b's cotangent in where(c, b * v, 0)
        >>> masked_input_grad(h * v, b, [(c, False)])  # where(c, sum(where(c, h * v, 0)), 0)
    """
    inner, g = split_masks(as_var(g, context="masked_input_grad: input 0"))
    masks = [*masks, *inner]
    if not masks:
        return input_grad(g, x)
    if x.type.kind not in "fc" or isinstance(x, Constant):
        return None
    full = masked(g, masks)
    summed = full if same_shape else sum_to(full, x)
    if summed is full:  # nothing summed: g has x's shape, or broadcasts to it with the masks
        return masked(_dtype_of(g, x), masks)
    if x.owner is None or not isinstance(x.owner.op, Elemwise):
        return _dtype_of(summed, x)
    kept = [m for m in masks if _constant_along_sums(m[0], full, x)]
    others = [m for m in masks if not _has(kept, m)]
    if others:
        count = sum_to(masked(ones_like(full), others), x)
        kept.append((equal(count, 0), True))
    return masked(_dtype_of(summed, x), kept)


def _constant_along_sums(c: Var, full: Var, x: Var) -> bool:
    """Whether the condition ``c`` has length 1 along every axis that summing ``full``
    back to ``x``'s shape may sum (the leading axes and those broadcast from 1)."""
    if c.ndim > x.ndim:
        return False
    lead = full.ndim - x.ndim
    for axis, want in enumerate(x.type.shape):
        have = full.type.shape[lead + axis]
        position = axis - (x.ndim - c.ndim)
        may_sum = want in (1, None) and have != 1
        if may_sum and position >= 0 and c.type.shape[position] != 1:
            return False
    return True
