"""Dynamic slices: windows of static size at run-time starts (``lax.dynamic_slice`` and
``lax.dynamic_update_slice``), and ``x[i:i + k]`` with ``i`` traced and ``k`` static.

JAX's semantics on both backends: a negative start counts from the end (``n + start``),
then each start is clamped so the window fits the axis, ``0 <= start <= n - size``, so
the result always has the static size; NumPy's ``x[i:i + k]`` would be shorter near the
end (and empty for ``x[-1:1]``).
A size larger than its axis is an error where both lengths are static.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Constant, Grads, Op, TensorType, Var, Vars, as_var
from rewritekit.tensor.arithmetic import Add
from rewritekit.tensor.axes import is_int
from rewritekit.tensor.creation import zeros_like
from rewritekit.tensor.elemwise import cast

__all__ = ["dynamic_slice", "dynamic_update_slice"]


def _check_starts(name: str, starts: Sequence[TensorType]) -> None:
    for position, t in enumerate(starts):
        if t.ndim != 0 or t.kind not in "iu":
            raise DTypeError(f"{name}: start {position} must be an integer scalar, got {t}")


class DynamicSlice(Op):
    """The window of ``x`` of static ``sizes`` along ``axes`` (the other axes whole), at
    run-time starts (negative ones from the end) clamped into ``[0, n - size]``.

    Inputs: ``x``, then one integer scalar start per axis of ``axes``."""

    __props__ = ("axes", "sizes")

    axes: tuple[int, ...]
    sizes: tuple[int, ...]

    def __init__(self, axes: Sequence[int], sizes: Sequence[int]) -> None:
        axes, sizes = tuple(int(a) for a in axes), tuple(int(k) for k in sizes)
        if len(axes) != len(sizes) or any(k < 0 for k in sizes):
            raise ShapeError(f"dynamic_slice: {len(axes)} axes for sizes {sizes}")
        super().__init__(axes, sizes)

    def infer_types(self, x: TensorType, *starts: TensorType) -> tuple[TensorType, ...]:
        _check_axes("dynamic_slice", self.axes, x, len(starts))
        _check_starts("dynamic_slice", starts)
        shape = list(x.shape)
        for axis, size in zip(self.axes, self.sizes, strict=True):
            if x.shape[axis] is not None and size > x.shape[axis]:
                raise ShapeError(
                    f"dynamic_slice: size {size} is larger than axis {axis} of length "
                    f"{x.shape[axis]}"
                )
            shape[axis] = size
        return (x.with_shape(shape),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # the window's elements go back where they were read (the same clamped starts)
        (x, *starts), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None] * len(inputs)
        return [DynamicUpdateSlice(self.axes)(zeros_like(x), g, *starts), *[None] * len(starts)]


class DynamicUpdateSlice(Op):
    """``x`` with the window at the run-time starts along ``axes`` replaced by ``update``
    (of ``x``'s dtype and rank, the other axes whole), each start (negative ones from the
    end) clamped into ``[0, n - update length]``.

    Inputs: ``x``, ``update``, then one start per axis."""

    __props__ = ("axes",)

    axes: tuple[int, ...]

    def __init__(self, axes: Sequence[int]) -> None:
        super().__init__(tuple(int(a) for a in axes))

    def infer_types(
        self, x: TensorType, update: TensorType, *starts: TensorType
    ) -> tuple[TensorType, ...]:
        name = "dynamic_update_slice"
        _check_axes(name, self.axes, x, len(starts))
        _check_starts(name, starts)
        if update.dtype != x.dtype or update.ndim != x.ndim:
            raise DTypeError(f"{name}: the update must be {x.dtype} of {x.ndim} axes, got {update}")
        for axis, (n, u) in enumerate(zip(x.shape, update.shape, strict=True)):
            if axis in self.axes:
                if u is None:
                    raise ShapeError(
                        f"{name}: the update's length along axis {axis} must be static "
                        f"(JAX's windows have static sizes), got {update}"
                    )
                if n is not None and u > n:
                    raise ShapeError(f"{name}: the update {update} does not fit in {x}")
            elif n is not None and u is not None and n != u:
                raise ShapeError(
                    f"{name}: the update's axis {axis} has length {u}, x's {n} (only the "
                    f"axes {self.axes} are windowed)"
                )
        return (x,)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # x keeps g outside the window; the update gets g's window
        (x, update, *starts), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None] * len(inputs)
        sizes = [update.type.shape[a] for a in self.axes]
        gx = DynamicUpdateSlice(self.axes)(g, zeros_like(update), *starts)
        return [gx, DynamicSlice(self.axes, sizes)(g, *starts), *[None] * len(starts)]


def _check_axes(name: str, axes: tuple[int, ...], x: TensorType, n_starts: int) -> None:
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"{name}: axes {axes} are not distinct axes of {x}")
    if n_starts != len(axes):
        raise GraphTypeError(f"{name}: {len(axes)} axes need {len(axes)} starts, got {n_starts}")


def _start(name: str, value: Any, position: int) -> Var:
    start = as_var(
        value, dtype="int64" if is_int(value) else None, context=f"{name}: start {position}"
    )
    if start.ndim != 0 or start.type.kind not in "iu":
        raise DTypeError(f"{name}: start {position} must be an integer scalar, got {start.type}")
    return start


def dynamic_slice(x: Any, starts: Sequence[Any], sizes: Sequence[int]) -> Var:
    """The window of ``x`` of static ``sizes`` at ``starts`` (JAX's ``lax.dynamic_slice``):
    one start (an int or integer scalar Var) and one size (an int) per axis of ``x``;
    starts are clamped so the window fits.

    Example:
        >>> x, i = rt.vector("x", shape=(5,)), rt.scalar("i", dtype="int64")
        >>> dynamic_slice(x, [i], [2]).type.shape
        (2,)
    """
    x = as_var(x, context="dynamic_slice: input 'x'")
    if len(starts) != x.ndim or len(sizes) != x.ndim:
        raise ShapeError(
            f"dynamic_slice: {x.type} needs {x.ndim} starts and sizes, got {len(starts)} "
            f"and {len(sizes)}"
        )
    if not all(is_int(k) for k in sizes):
        raise ShapeError(f"dynamic_slice: sizes must be Python ints (static), got {sizes!r}")
    values = [_start("dynamic_slice", s, i) for i, s in enumerate(starts)]
    return DynamicSlice(range(x.ndim), sizes)(x, *values)


def dynamic_update_slice(x: Any, update: Any, starts: Sequence[Any]) -> Var:
    """``x`` with ``update`` written at ``starts`` (JAX's ``lax.dynamic_update_slice``): one
    start per axis, clamped so the update fits; ``update`` is cast to ``x``'s dtype.

    Example:
        >>> x, i = rt.vector("x", shape=(5,)), rt.scalar("i", dtype="int64")
        >>> dynamic_update_slice(x, rt.zeros(2), [i]).type.shape
        (5,)
    """
    x = as_var(x, context="dynamic_update_slice: input 'x'")
    update = cast(as_var(update, context="dynamic_update_slice: input 'update'"), x.dtype)
    if len(starts) != x.ndim:
        raise ShapeError(f"dynamic_update_slice: {x.type} needs {x.ndim} starts, got {len(starts)}")
    values = [_start("dynamic_update_slice", s, i) for i, s in enumerate(starts)]
    return DynamicUpdateSlice(range(x.ndim))(x, update, *values)


def window_of(start: Any, stop: Any) -> int | None:
    """``k`` where the slice ``start:stop`` is ``i:i + k`` with ``i`` a Var and ``k`` a
    static int >= 0 (what ``x[i:i + k]`` turns into a dynamic slice), else None."""
    if not isinstance(start, Var) or not isinstance(stop, Var) or stop.owner is None:
        return None
    if not isinstance(stop.owner.op, Add):
        return None
    left, right = stop.owner.inputs
    other = right if left is start else left if right is start else None
    if not isinstance(other, Constant) or other.ndim != 0 or other.type.kind not in "iu":
        return None
    k = int(other.data)
    return k if k >= 0 else None
