"""Indexing: ``x[idx]`` (NumPy's basic and integer-array indexing) and its updates.

The Ops hold the static part of the index in their parameter ``index`` (its entries are
described in ``rewritekit.tensor.indexing``). The inputs are ``x`` (then the value, for
updates), then the run-time parts in index order, so ``x[1:3] is x[1:3]`` and
``x[0, :] is x[0]`` (trailing full slices are dropped).

Advanced indexing follows NumPy: the index arrays (and, when there is one, every integer
index) broadcast together; if they are adjacent their broadcast shape replaces them in
place, otherwise it comes first. Boolean masks are refused: the result's shape would
depend on the data (use ``rt.where``).

Out of bounds: an integer index or index array entry ``i`` of an axis of length ``n`` is
in bounds when ``-n <= i < n`` (a negative one counts from the end, as in NumPy); slices
never are out of bounds (NumPy clips them). What an index out of bounds does is the Op's
parameter ``mode``, the same on every backend:

- ``"raise"`` (the default, ``x[i]``): a compiled function raises ``rk.GraphIndexError``
  naming the Op, the graph inputs the index comes from, the axis, the index and the
  length. ``f.jax_fn`` (which cannot raise on a value) reads as ``"fill"`` instead;
- ``"clip"``: a negative index counts from the end, then the index is clamped into
  ``[0, n - 1]`` (``jax.numpy``'s ``.at[i].get(mode="clip")``); updates land on the
  clamped element;
- ``"fill"``: a read out of bounds gives ``fill_value`` (by default NaN for floats, the
  smallest value for signed integers, the largest for unsigned ones, True for bools, as
  ``jax.numpy``); an update out of bounds is dropped (``jax.numpy``'s "drop").

An integer index into an axis of length 0 is out of bounds in every mode ("clip" raises:
there is no element to clamp to). ``set_subtensor`` with a repeated index keeps the last
write in NumPy; in JAX which write wins is unspecified, so avoid repeats there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import BroadcastError, DTypeError, GraphTypeError
from rewritekit.ir import Grads, Op, TensorType, Var, Vars, as_var, constant
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import shape_str
from rewritekit.tensor.creation import arange, zeros_like
from rewritekit.tensor.dynamic import (
    DynamicSlice,
    DynamicUpdateSlice,
    dynamic_slice,
    dynamic_update_slice,
    window_of,
)
from rewritekit.tensor.elemwise import cast, equal, where
from rewritekit.tensor.gradient import input_grad
from rewritekit.tensor.indexing import (  # noqa: F401 (helpers for the backends and rules)
    ARRAY,
    SCALAR,
    canonical_index,
    entry_axes,
    index_str,
    make_index,
    parse_index,
    selected_shape,
)
from rewritekit.tensor.shapes import broadcast_to, reshape, shape, size

__all__ = ["dynamic_slice", "dynamic_update_slice", "getitem", "inc_subtensor", "set_subtensor"]


# --- Ops --------------------------------------------------------------------------------


#: What an index out of bounds does (see the module docstring).
MODES = ("raise", "clip", "fill")


def index_mode(name: str, mode: str) -> str:
    """``mode`` checked; ``"drop"`` (``jax.numpy``'s name for updates) is ``"fill"``."""
    if mode == "drop":
        return "fill"
    if mode not in MODES:
        raise GraphTypeError(
            f"{name}: mode must be 'raise', 'clip' or 'fill' ('drop' is 'fill'), got {mode!r}"
        )
    return mode


def default_fill_value(dtype: str) -> Any:
    """What mode "fill" reads out of bounds unless told (``jax.numpy``'s defaults)."""
    kind = np.dtype(dtype).kind
    if kind in "fc":
        return np.nan
    if kind == "b":
        return True
    return int(np.iinfo(dtype).min if kind == "i" else np.iinfo(dtype).max)


def _fill_value(name: str, dtype: str, value: Any) -> Any:
    """``value`` as a Python scalar of ``dtype``, or None for the default (NaN included)."""
    if value is None:
        return None
    if isinstance(value, Var) or np.ndim(value) != 0:
        raise GraphTypeError(f"{name}: fill_value must be a static scalar, got {value!r}")
    try:
        item = np.array(value, dtype=dtype).item()
    except (OverflowError, TypeError, ValueError):
        raise GraphTypeError(f"{name}: fill_value {value!r} does not fit {dtype}") from None
    default = default_fill_value(dtype)
    if item != item or (not isinstance(default, float) and item == default):
        return None  # NaN (the float default), or the integer or bool default
    return item


def _canonical_mode(name: str, index: tuple[Any, ...], mode: str) -> str:
    """``mode`` checked; "raise" for an index of slices and new axes only (nothing in it
    can be out of bounds, so equal selections are one Op)."""
    mode = index_mode(name, mode)
    if any(isinstance(e, int) or e in (SCALAR, ARRAY) for e in index):
        return mode
    return "raise"


class IndexOp(Op):
    """Base of the indexing Ops: the ``index`` parameter, the out-of-bounds ``mode``, and
    the selection's shape."""

    abstract = True

    __props__ = ("index", "mode")

    def __init__(self, index: Any, mode: str = "raise") -> None:
        index = canonical_index(self.name, index)
        super().__init__(index, _canonical_mode(self.name, index, mode))

    @property
    def is_advanced(self) -> bool:
        """True when the index holds an integer array (the result is a copy, not a view)."""
        return ARRAY in self.index

    def with_index(self, index: Any) -> IndexOp:
        """The same Op (class, mode, fill value) over another index."""
        extra = {p: getattr(self, p) for p in type(self).__props__ if p != "index"}
        return type(self)(index, **extra)

    def __str__(self) -> str:
        fill = getattr(self, "fill_value", None)
        shown = "" if fill is None else f", fill_value={fill!r}"
        mode = "" if self.mode == "raise" else f"{{mode={self.mode}{shown}}}"
        return f"{type(self).__name__}{index_str(self.index)}{mode}"


class Subtensor(IndexOp):
    """``x[index]``: NumPy's basic and integer-array indexing (see the module docstring).

    Inputs: ``x``, then the run-time parts of the index in order. Integer indices and
    index arrays out of ``[-n, n)`` for an axis of length ``n`` raise, are clamped, or read
    ``fill_value`` (None: the dtype's default), by ``mode``.
    """

    name = "getitem"

    __props__ = ("index", "mode", "fill_value")

    def __init__(self, index: Any, mode: str = "raise", fill_value: Any = None) -> None:
        index = canonical_index(self.name, index)
        mode = _canonical_mode(self.name, index, mode)
        if mode != "fill" or fill_value != fill_value:  # NaN: the float default
            fill_value = None
        Op.__init__(self, index, mode, fill_value)

    def infer_types(self, x: TensorType, *parts: TensorType) -> tuple[TensorType, ...]:
        checked = self.mode == "raise"
        return (x.with_shape(selected_shape(self.name, self.index, x, parts, checked)),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # each selected element of x receives g once per time it was read: scatter-add g
        # into zeros (a repeated index array entry accumulates); "clip" adds at the clamped
        # element, "fill" drops the elements it filled
        (x, *parts), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None] * len(inputs)
        gx = IncSubtensor(self.index, self.mode)(zeros_like(x), g, *parts)
        return [gx, *[None] * len(parts)]


class UpdateSubtensor(IndexOp):
    """Base of ``SetSubtensor`` and ``IncSubtensor``: inputs ``x``, the value (of ``x``'s
    dtype, broadcastable to the selected shape), then the index's run-time parts."""

    abstract = True

    def infer_types(
        self, x: TensorType, value: TensorType, *parts: TensorType
    ) -> tuple[TensorType, ...]:
        selected = selected_shape(self.name, self.index, x, parts, self.mode == "raise")
        if value.dtype != x.dtype:
            raise DTypeError(
                f"{self.name}: the value has dtype {value.dtype} but x has {x.dtype}; "
                "cast it (the functions do)"
            )
        fits = value.ndim <= len(selected) and all(
            v in (1, None) or s in (None, v)
            for v, s in zip(value.shape[::-1], selected[::-1], strict=False)
        )
        if not fits:
            raise BroadcastError(
                f"{self.name}: cannot broadcast a value of shape {shape_str(value.shape)} "
                f"to the selected shape {shape_str(selected)}"
            )
        return (x,)


class SetSubtensor(UpdateSubtensor):
    """``x`` with ``x[index]`` replaced by the value; with a repeated index the last write
    wins in NumPy (JAX leaves the order unspecified)."""

    name = "set_subtensor"

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # x keeps only the elements the value does not overwrite; the value gets g where
        # its writes land and survive (NumPy: the last of repeated writes wins)
        (x, value, *parts), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None] * len(inputs)
        zero = constant(np.zeros((), dtype=g.dtype))
        gx = SetSubtensor(self.index, self.mode)(g, zero, *parts)
        selected = _read(self, g, parts, 0)
        if self.is_advanced:
            selected = _surviving(self, g, selected, parts)
        return [gx, input_grad(selected, value), *[None] * len(parts)]


class IncSubtensor(UpdateSubtensor):
    """``x`` with the value added at ``x[index]``; a repeated index adds every time
    (``np.add.at``)."""

    name = "inc_subtensor"

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # x passes through unchanged; each write of the value adds at its place
        (x, value, *parts), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None] * len(inputs)
        return [g, input_grad(_read(self, g, parts, 0), value), *[None] * len(parts)]


def _read(op: IndexOp, g: Var, parts: Sequence[Var], dropped: Any) -> Var:
    """``g`` read where ``op`` writes, in its mode; a write that "fill" drops reads
    ``dropped``."""
    return Subtensor(op.index, op.mode, _fill_value(op.name, g.dtype, dropped))(g, *parts)


def _surviving(op: SetSubtensor, g: Var, selected: Var, parts: Sequence[Var]) -> Var:
    """``selected`` (``g[index]``) zeroed where a write of ``set_subtensor`` is overwritten
    by a later one to the same element (a repeated index array entry, or two indices that
    "clip" clamps alike).

    Each write gets an id; setting the ids and reading them back shows which survived (as
    ``jax.grad`` of a scatter does); a dropped write reads back -1.
    """

    ids = reshape(arange(size(selected)), shape(selected))
    written = SetSubtensor(op.index, op.mode)(zeros_like(g, "int64"), ids, *parts)
    survived = equal(_read(op, written, parts, -1), ids)
    return where(survived, selected, zeros_like(selected))


# --- user functions ---------------------------------------------------------------------


@pattern_function(Subtensor)
def getitem(x: Any, index: Any, mode: str = "raise", fill_value: Any = None) -> Var:
    """``x[index]`` with NumPy's semantics for basic and integer-array indexing.

    ``index`` may hold Python or NumPy ints, integer scalar Vars, slices (bounds: ints,
    None or integer scalar Vars), ``None``, ``...``, and integer arrays (NumPy arrays,
    lists, integer Vars with ndim >= 1), alone or in a tuple. ``Var.__getitem__`` calls it
    (``x.at[index].get(mode=...)`` too).

    ``mode`` says what an integer index or index array entry out of ``[-n, n)`` does (the
    module docstring): ``"raise"`` (a compiled function raises ``rk.GraphIndexError``),
    ``"clip"`` (clamped into the axis, after a negative index counts from the end) or
    ``"fill"`` (reads ``fill_value``, a static scalar; by default NaN for floats, the
    smallest value for signed integers, the largest for unsigned ones, True for bools).

    Raises:
        GraphTypeError: a boolean mask (use ``rt.where``) or an entry of another kind; an
            unknown mode or a fill value that is not a static scalar of ``x``'s dtype.
        DTypeError: a Var entry that is not of an integer dtype.
        ShapeError: too many indices, a zero step, or (mode "raise") a static index out
            of range.
        BroadcastError: index arrays whose static shapes do not broadcast.

    Example:
        >>> x = rt.tensor("x", shape=(5, 4))
        >>> x[1:4, [0, 2, 2]].type.shape
        (3, 3)
        >>> rt.getitem(x, (7, 0), mode="fill", fill_value=0.0).type.shape
        ()
    """
    x = as_var(x, context="getitem: input 'x'")
    mode = index_mode("getitem", mode)
    fill = _fill_value("getitem", x.dtype, fill_value) if mode == "fill" else None
    window, index = _windows(x, index)
    if window is not x and isinstance(index, tuple) and not index:
        return window  # x[i:i + k]: the window, nothing more
    x = window
    parameter, parts = parse_index("getitem", index, x, mode == "raise")
    return Subtensor(parameter, mode, fill)(x, *parts)


def _windows(x: Var, index: Any) -> tuple[Var, Any]:
    """``x[i:i + k]`` (``i`` an integer Var, ``k`` a static int) as a dynamic slice of
    static size ``k`` (``rewritekit.tensor.dynamic``: the start clamped, as JAX's
    ``lax.dynamic_slice``); the rest of the index applies to the window."""
    items = list(index) if isinstance(index, tuple) else [index]
    axis = 0
    found: list[tuple[int, int, Var]] = []
    for position, item in enumerate(items):
        if item is Ellipsis:
            break  # the axes after it are counted from the end: left to getitem
        if isinstance(item, slice) and item.step in (None, 1):
            size = window_of(item.start, item.stop)
            if size is not None:
                found.append((axis, size, item.start))
                items[position] = slice(None)
        axis += item is not None
    if not found:
        return x, index
    axes, sizes, starts = zip(*found, strict=True)
    window = DynamicSlice(axes, sizes)(x, *starts)
    while items and isinstance(items[-1], slice) and items[-1] == slice(None):
        items.pop()
    return window, tuple(items)


def _update(
    name: str,
    op_class: type[UpdateSubtensor],
    x_sub: Any,
    value: Any,
    in_window: bool = False,
    mode: str | None = None,
) -> Var:
    """``x_sub = x[idx]`` updated in ``x``; ``in_window``: ``x`` may be a dynamic window
    (``at_update`` writes it back); ``mode``: None for ``x_sub``'s."""
    owner = x_sub.owner if isinstance(x_sub, Var) else None
    if owner is not None and isinstance(owner.op, DynamicSlice):  # x[i:i + k]
        x, *starts = owner.inputs
        update = broadcast_to(_value(name, value, x), shape(x_sub))
        if op_class is IncSubtensor:
            update = x_sub + update
        return DynamicUpdateSlice(owner.op.axes)(x, update, *starts)
    window = owner.inputs[0].owner if owner is not None and owner.inputs else None
    if (
        not in_window
        and window is not None
        and isinstance(window.op, DynamicSlice)
        and isinstance(owner.op, Subtensor)
    ):
        raise GraphTypeError(
            f"{name}: {x_sub!r} indexes a dynamic window (x[i:i + k, ...]); update x with "
            f"x.at[...].{'set' if op_class is SetSubtensor else 'add'}(value), or the window "
            "with rt.dynamic_update_slice"
        )
    if owner is None or not isinstance(owner.op, Subtensor):
        shown = repr(x_sub) if isinstance(x_sub, Var) else type(x_sub).__name__
        raise GraphTypeError(
            f"{name}: {shown} is not the result of indexing; pass x[idx] (or use "
            f"x.at[idx].{'set' if op_class is SetSubtensor else 'add'}(value))"
        )
    x, *parts = owner.inputs
    mode = owner.op.mode if mode is None else index_mode(name, mode)
    return op_class(owner.op.index, mode)(x, _value(name, value, x), *parts)


def at_update(x: Var, index: Any, value: Any, add: bool, mode: str = "raise") -> Var:
    """``x.at[index].set(value, mode=...)`` (``add``: ``.add``), dynamic windows included:
    the window is updated, then written back at its clamped starts."""
    name, op_class = ("inc_subtensor", IncSubtensor) if add else ("set_subtensor", SetSubtensor)
    mode = index_mode(name, mode)
    window, rest = _windows(x, index)
    if window is x:
        return _update(name, op_class, getitem(x, index, mode), value)
    if rest == ():  # x[i:i + k]: the window itself
        return _update(name, op_class, window, value)
    node = window.owner
    x, *starts = node.inputs
    written = _update(name, op_class, getitem(window, rest, mode), value, in_window=True)
    return DynamicUpdateSlice(node.op.axes)(x, written, *starts)


def _value(name: str, value: Any, x: Var) -> Var:
    """The value cast to ``x``'s dtype; a Python scalar becomes a constant of it (weak)."""
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        if isinstance(value, int) and x.type.kind in "iu":
            info = np.iinfo(x.dtype)
            if not info.min <= value <= info.max:
                raise GraphTypeError(
                    f"{name}: Python int {value} is out of bounds for {x.dtype} "
                    f"[{info.min}, {info.max}]"
                )
        return as_var(value, dtype=x.dtype, context=f"{name}: the value")
    return cast(as_var(value, context=f"{name}: the value"), x.dtype)


@pattern_function()
def set_subtensor(x_sub: Var, value: Any, mode: str | None = None) -> Var:
    """``x`` with the elements ``x_sub = x[idx]`` selects replaced by ``value``.

    ``value`` broadcasts to ``x_sub``'s shape and is cast to ``x``'s dtype. ``x`` itself
    is unchanged (a new graph). With a repeated index the last write wins in NumPy; JAX
    does not specify which. ``x.at[idx].set(value)`` is the same.

    ``mode`` (by default ``x_sub``'s) says what an index out of bounds does: ``"raise"``
    (a compiled function raises ``rk.GraphIndexError``), ``"clip"`` (the write lands on
    the clamped element) or ``"fill"`` (alias ``"drop"``: the write is dropped), as
    ``x.at[idx].set(value, mode=...)`` in ``jax.numpy``. A static index out of bounds of
    a static length is refused when ``x[idx]`` is built: use
    ``x.at[idx].set(value, mode=...)`` for it.

    Raises:
        GraphTypeError: ``x_sub`` is not the result of indexing; an unknown mode.
        BroadcastError: ``value`` does not broadcast to the selected shape.

    Example:
        >>> x = rt.vector("x", shape=(5,))
        >>> rt.set_subtensor(x[1:3], 0.0) is x.at[1:3].set(0.0)
        True
    """
    return _update("set_subtensor", SetSubtensor, x_sub, value, mode=mode)


@pattern_function()
def inc_subtensor(x_sub: Var, value: Any, mode: str | None = None) -> Var:
    """``x`` with ``value`` added at the elements ``x_sub = x[idx]`` selects.

    A repeated index adds every time (``np.add.at``). ``value`` broadcasts to ``x_sub``'s
    shape and is cast to ``x``'s dtype (NumPy's ``+=`` would refuse, e.g., float into
    int). ``x.at[idx].add(value)`` is the same. ``mode`` as in ``set_subtensor``.

    Raises:
        GraphTypeError: ``x_sub`` is not the result of indexing; an unknown mode.
        BroadcastError: ``value`` does not broadcast to the selected shape.

    Example:
        >>> x = rt.vector("x", shape=(5,))
        >>> rt.inc_subtensor(x[[0, 0]], 1.0).type.shape
        (5,)
    """
    return _update("inc_subtensor", IncSubtensor, x_sub, value, mode=mode)
