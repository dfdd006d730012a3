"""Running extremes: ``Cummax`` and ``Cummin`` along one axis, the Ops of ``rt.cummax`` and
``rt.cummin`` (``jax.lax.cummax``'s names; NumPy spells them ``np.maximum.accumulate``).
The sorting family's backends implement them.

NaN propagates: from the first NaN of a line on, the running extreme is NaN (as
``np.maximum.accumulate`` and ``jax.lax.cummax``). The result has the input's dtype.
"""

from __future__ import annotations

from rewritekit.errors import DTypeError, ShapeError
from rewritekit.ir import Grads, Op, TensorType, Var, Vars
from rewritekit.tensor.axes import axis_param
from rewritekit.tensor.creation import arange, zeros_like
from rewritekit.tensor.elemwise import equal, where
from rewritekit.tensor.layout import expand_dims
from rewritekit.tensor.shape_vectors import shape_i
from rewritekit.tensor.subtensor import inc_subtensor

__all__: list[str] = []  # the user functions are rt.cummax and rt.cummin (``ordering``)


class RunningExtreme(Op):
    """A running maximum or minimum along ``axis`` (a non-negative int)."""

    abstract = True

    __props__ = ("axis",)

    axis: int

    def __init__(self, axis: int) -> None:
        found = axis_param(self.name, axis)
        if found is None:
            raise ShapeError(f"{self.name}: axis must be a non-negative int, got None")
        super().__init__(found)

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        if x.kind not in "biuf":
            raise DTypeError(
                f"{self.name}: input has dtype {x.dtype}, which {self.name} does not support "
                "(expected bool, int, uint or float)"
            )
        if self.axis >= x.ndim:
            raise ShapeError(
                f"{self.name}: axis {self.axis} is out of range for a {x.ndim}-d input"
            )
        return (x,)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # out[i] = x[j(i)], j(i) the nearest position <= i where x equals the running
        # extreme (x[j] == out[j]): each g[i] goes to x[j(i)]. JAX's gradient agrees where
        # values are distinct; at ties it splits g[i] by the tree of its parallel scan
        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "f":
            return [None]
        axis = self.axis
        position = _along(arange(shape_i(x, axis)), axis, x.ndim)
        source = Cummax(axis)(where(equal(x, out), position, 0))
        index = tuple(
            source if k == axis else _along(arange(shape_i(x, k)), k, x.ndim) for k in range(x.ndim)
        )
        return [inc_subtensor(zeros_like(x)[index], g)]


class Cummax(RunningExtreme):
    """max(x[0], ..., x[i]) at each position i along ``axis``."""


class Cummin(RunningExtreme):
    """min(x[0], ..., x[i]) at each position i along ``axis``."""


def _along(v: Var, axis: int, ndim: int) -> Var:
    """The vector ``v`` along ``axis`` of an ``ndim``-d array (length 1 on the others)."""
    others = tuple(a for a in range(ndim) if a != axis)
    return expand_dims(v, others) if others else v
