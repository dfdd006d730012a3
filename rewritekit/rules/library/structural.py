"""Standard library rules: structural (tag ``canonicalize``).

Shape, index and reduction simplifications: nested transposes, reshapes, broadcasts,
``expand_dims``/``squeeze`` pairs and slices merge into one node; nodes that change nothing
(an identity transpose, a reshape or broadcast to the input's own shape, ``x[:]``, a squeeze
of no axes) disappear; nested reductions of one kind merge, and reductions over axes of
static length 1 drop them.

Rules that match Op parameters use the node patterns below (``transpose_node``, ...): they
match every node of their Op, where ``rt.transpose(x, axes=p)`` matches only nodes that
``rt.transpose`` would build (never an identity permutation, which it skips). Every rule
keeps the matched node's type; a computed right side that cannot declines (None).

Example:
    >>> x = rt.tensor("x", shape=(2, 3, 4))
    >>> rk.rewrite(rt.transpose(rt.transpose(x, (1, 0, 2)), (1, 0, 2)), rules) is x
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import rewritekit.tensor as rt
from rewritekit.ir import Constant, Var
from rewritekit.ir.patterns import pattern_function
from rewritekit.rules.library._support import x, y
from rewritekit.rules.patterns import lvar
from rewritekit.rules.rule import Bindings, Rule, rule
from rewritekit.rules.ruleset import RuleSet
from rewritekit.tensor.reduction import Reduce
from rewritekit.tensor.shapes import (
    BroadcastTo,
    ExpandDims,
    MakeVector,
    Reshape,
    Shape,
    ShapeI,
    Squeeze,
    Transpose,
    static_shape_of,
)
from rewritekit.tensor.subtensor import Subtensor

__all__ = [
    "broadcast_to_node",
    "expand_dims_node",
    "reshape_node",
    "rules",
    "squeeze_node",
    "subtensor_node",
    "transpose_node",
]

ax, ax2 = lvar("ax"), lvar("ax2")  # axes parameters
kd, kd2 = lvar("kd"), lvar("kd2")  # keepdims parameters
s, t = lvar("s"), lvar("t")  # shape vectors
st, st2 = lvar("st"), lvar("st2")  # static shape parameters
ix, ix2 = lvar("ix"), lvar("ix2")  # index parameters
dd = lvar("dd")  # ddof

FULL = (None, None, None)  # the full slice, as an index parameter holds it


# --- node patterns ----------------------------------------------------------------------


@pattern_function(Transpose)
def transpose_node(x: Any, axes: Any) -> Var:
    """``Transpose(axes)(x)``, also for the identity permutation (a pattern head).

    Example:
        >>> transpose_node(rt.matrix("x"), (0, 1)).owner.op.axes
        (0, 1)
    """
    return Transpose(axes)(x)


@pattern_function(ExpandDims)
def expand_dims_node(x: Any, axes: Any) -> Var:
    """``ExpandDims(axes)(x)``, also for no axes (a pattern head)."""
    return ExpandDims(axes)(x)


@pattern_function(Squeeze)
def squeeze_node(x: Any, axes: Any) -> Var:
    """``Squeeze(axes)(x)``, also for no axes (a pattern head)."""
    return Squeeze(axes)(x)


@pattern_function(Reshape, inputs=("x", "vector"))
def reshape_node(x: Any, vector: Var, shape: Any) -> Var:
    """``Reshape(shape)(x, vector)``, also when it changes nothing (a pattern head)."""
    return Reshape(shape)(x, vector)


@pattern_function(BroadcastTo, inputs=("x", "vector"))
def broadcast_to_node(x: Any, vector: Var, shape: Any) -> Var:
    """``BroadcastTo(shape)(x, vector)``, also when it changes nothing (a pattern head)."""
    return BroadcastTo(shape)(x, vector)


@pattern_function(Subtensor)
def subtensor_node(x: Any, index: Any) -> Var:
    """``Subtensor(index)(x)`` for a static index (no run-time parts; a pattern head)."""
    return Subtensor(index)(x)


# --- helpers ----------------------------------------------------------------------------


def _kept(new: Var, term: Var) -> Var | None:
    """``new`` when it has ``term``'s dtype and rank and every static length ``term``
    knows; else None (the rule declines)."""
    old, got = term.type, new.type
    if got.dtype != old.dtype or got.ndim != old.ndim:
        return None
    if any(a is not None and a != b for a, b in zip(old.shape, got.shape, strict=True)):
        return None
    return new


def _is_shape_of(vector: Var, v: Var) -> bool:
    """The int shape vector provably holds ``v``'s shape: it is ``shape(v)``, or each
    entry is ``v``'s static length there or ``shape_i(v, axis)``."""
    owner = vector.owner
    if owner is not None and isinstance(owner.op, Shape) and owner.inputs[0] is v:
        return True
    if vector.type.shape != (v.ndim,):
        return False
    static = static_shape_of(vector)
    made = owner is not None and isinstance(owner.op, MakeVector)
    for axis, length in enumerate(static):
        if length is not None:
            if length != v.type.shape[axis]:
                return False
        elif not made or not _is_shape_i(owner.inputs[axis], v, axis):  # type: ignore[union-attr]
            return False
    return True


def _is_shape_i(entry: Var, v: Var, axis: int) -> bool:
    owner = entry.owner
    return (
        owner is not None
        and isinstance(owner.op, ShapeI)
        and owner.op.axis == axis
        and owner.inputs[0] is v
    )


def _is_inferred_own_shape(vector: Var, v: Var) -> bool:
    """``vector`` is a constant with one -1 and, elsewhere, ``v``'s static lengths, all
    positive: the -1 can only be ``v``'s own length (a 0 would make NumPy raise)."""
    if not isinstance(vector, Constant) or vector.type.shape != (v.ndim,):
        return False
    lengths = [int(d) for d in vector.data]
    return lengths.count(-1) == 1 and all(
        d == -1 or (d > 0 and d == v.type.shape[axis]) for axis, d in enumerate(lengths)
    )


# --- transposes, expand_dims and squeeze ------------------------------------------------


def _compose_transposes(b: Bindings) -> Var:
    """transpose(transpose(x, p), q) -> transpose(x, p[q]) (x itself for the identity)"""
    # result axis i is the inner result's axis q[i], which is x's axis p[q[i]]
    return rt.transpose(b.x, tuple(b.ax[i] for i in b.ax2))


def _squeeze_expanded(b: Bindings) -> Var | None:
    """squeeze(expand_dims(x, new), gone): the new axes squeezed again cancel"""
    # x's own axes in `gone` stay squeezed (and keep their run-time length-1 check)
    new, gone = set(b.ax), set(b.ax2)
    if not new & gone:
        return None
    rest = iter(range(b.x.ndim))
    origin = [None if a in new else next(rest) for a in range(b.x.ndim + len(new))]
    kept = [o for a, o in enumerate(origin) if a not in gone]
    squeezed = tuple(o for a, o in enumerate(origin) if a in gone and o is not None)
    inserted = tuple(position for position, o in enumerate(kept) if o is None)
    return rt.expand_dims(rt.squeeze(b.x, squeezed), inserted)


def _merge_expand_dims(b: Bindings) -> Var:
    """expand_dims(expand_dims(x, p), q) -> expand_dims(x, p and q as result axes)"""
    # the inner result's axes sit, in order, where the outer inserts nothing
    ndim = b.x.ndim + len(b.ax) + len(b.ax2)
    others = [a for a in range(ndim) if a not in b.ax2]
    return rt.expand_dims(b.x, tuple(sorted({*b.ax2, *(others[p] for p in b.ax)})))


def _merge_squeezes(b: Bindings) -> Var:
    """squeeze(squeeze(x, p), q) -> squeeze(x, p and q as axes of x)"""
    rest = [a for a in range(b.x.ndim) if a not in b.ax]
    return rt.squeeze(b.x, tuple(sorted({*b.ax, *(rest[p] for p in b.ax2)})))


def _squeezed_unit_axes(b: Bindings) -> bool:
    """The axes put back are the ones squeezed, and x knows they have length 1."""
    return b.ax == b.ax2 and all(b.x.type.shape[a] == 1 for a in b.ax)


def _is_identity(b: Bindings) -> bool:
    return bool(b.ax == tuple(range(len(b.ax))))


def _no_axes(b: Bindings) -> bool:
    return not b.ax


_EXAMPLE_3D = (2, 3, 4)


def _tensor(shape: tuple[int | None, ...] = _EXAMPLE_3D, dtype: str = "float64") -> Var:
    return rt.tensor("x", shape=shape, dtype=dtype)


axes_rules = [
    rule(
        transpose_node(transpose_node(x, axes=ax), axes=ax2),
        _compose_transposes,
        name="merge_nested_transpose",
        example=lambda: rt.transpose(rt.transpose(_tensor(), (1, 2, 0)), (0, 2, 1)),
    ),
    rule(
        transpose_node(x, axes=ax),
        x,
        name="drop_identity_transpose",
        when=_is_identity,
        example=lambda: transpose_node(_tensor(), (0, 1, 2)),
    ),
    rule(
        squeeze_node(x, axes=ax),
        x,
        name="drop_squeeze_of_no_axes",
        when=_no_axes,
        example=lambda: squeeze_node(_tensor(), ()),
    ),
    rule(
        expand_dims_node(x, axes=ax),
        x,
        name="drop_expand_dims_of_no_axes",
        when=_no_axes,
        example=lambda: expand_dims_node(_tensor(), ()),
    ),
    rule(
        squeeze_node(expand_dims_node(x, axes=ax), axes=ax2),
        _squeeze_expanded,
        name="cancel_squeeze_of_expand_dims",
        example=lambda: rt.squeeze(rt.expand_dims(rt.vector("x"), (0, 2)), 0),
    ),
    rule(
        expand_dims_node(squeeze_node(x, axes=ax), axes=ax2),
        x,
        name="cancel_expand_dims_of_squeeze",
        when=_squeezed_unit_axes,
        example=lambda: rt.expand_dims(rt.squeeze(_tensor((2, 1, None)), 1), 1),
    ),
    rule(
        expand_dims_node(expand_dims_node(x, axes=ax), axes=ax2),
        _merge_expand_dims,
        name="merge_nested_expand_dims",
        example=lambda: rt.expand_dims(rt.expand_dims(rt.vector("x"), 0), (0, -1)),
    ),
    rule(
        squeeze_node(squeeze_node(x, axes=ax), axes=ax2),
        _merge_squeezes,
        name="merge_nested_squeeze",
        example=lambda: rt.squeeze(rt.squeeze(_tensor((1, 3, 1, 1)), 0), 2),
    ),
]


# --- reshape and broadcast_to -----------------------------------------------------------


def _reshape_once(b: Bindings) -> Var | None:
    """reshape(reshape(x, s), t) -> reshape(x, t)"""
    # NumPy would reject a bad inner shape that the outer one hides: "shape_unsafe"
    direct = _kept(rt.reshape(b.x, b.t), b.term)
    if direct is None and None not in b.term.type.shape:
        direct = rt.reshape(b.x, b.term.type.shape)  # the inner reshape knew more
    return direct


def _broadcast_once(b: Bindings) -> Var | None:
    """broadcast_to(broadcast_to(x, s), t) -> broadcast_to(x, t)"""
    # x broadcasts to s and s to t, so x broadcasts to t with the same result; an x that
    # does not broadcast to s at run time raises only in the original: "shape_unsafe"
    return _kept(rt.broadcast_to(b.x, b.t), b.term)


def _reshapes_to_own_shape(b: Bindings) -> bool:
    return _is_shape_of(b.s, b.x) or _is_inferred_own_shape(b.s, b.x)


def _broadcasts_to_own_shape(b: Bindings) -> bool:
    return _is_shape_of(b.s, b.x)


def _to_own_shape(fn: Callable[[Var, Var], Var]) -> Var:
    v = _tensor((None, 3))
    return fn(v, rt.shape(v))


shape_rules = [
    rule(
        reshape_node(reshape_node(x, s, shape=st), t, shape=st2),
        _reshape_once,
        name="merge_nested_reshape",
        tags={"shape_unsafe"},
        example=lambda: rt.reshape(rt.reshape(_tensor((2, 6)), (3, 4)), (4, 3)),
    ),
    rule(
        reshape_node(x, s, shape=st),
        x,
        name="drop_reshape_to_own_shape",
        when=_reshapes_to_own_shape,
        example=lambda: _to_own_shape(rt.reshape),
    ),
    rule(
        broadcast_to_node(broadcast_to_node(x, s, shape=st), t, shape=st2),
        _broadcast_once,
        name="merge_nested_broadcast_to",
        tags={"shape_unsafe"},
        example=lambda: rt.broadcast_to(rt.broadcast_to(rt.vector("x"), (2, 3)), (4, 2, 3)),
    ),
    rule(
        broadcast_to_node(x, s, shape=st),
        x,
        name="drop_broadcast_to_own_shape",
        when=_broadcasts_to_own_shape,
        example=lambda: _to_own_shape(rt.broadcast_to),
    ),
]


# --- indexing ---------------------------------------------------------------------------


def _is_whole(entry: Any, length: int | None) -> bool:
    """The index entry selects a whole axis of ``length``, in order."""
    if entry == FULL:
        return True
    if not isinstance(entry, tuple) or length is None:
        return False
    return range(*slice(*entry).indices(length)) == range(length)


def _selects_all(b: Bindings) -> bool:
    """Every entry of the index is a slice selecting its whole axis (x[:], x[0:3] of 3)."""
    shape = b.x.type.shape  # a None entry (new axis) is not whole, nor one past the axes
    return len(b.ix) <= len(shape) and all(_is_whole(e, shape[a]) for a, e in enumerate(b.ix))


def _as_entry(r: range) -> tuple[Any, ...]:
    """The slice (an index entry) selecting the indices ``r`` of an axis."""
    if not r:
        return (0, 0, None)
    return (r.start, r.stop if r.stop >= 0 else None, r.step)  # stop < 0: through index 0


def _compose(first: tuple[Any, ...], second: Any, length: int | None) -> Any:
    """One index entry equal to ``second`` applied after the slice ``first`` on an axis of
    ``length`` (None: unknown), or None when it would depend on the unknown length."""
    if first == FULL:
        return second
    if second == FULL:
        return first
    if length is not None:  # exact: Python ranges slice and index like NumPy axes
        selected = range(*slice(*first).indices(length))
        if isinstance(second, int):
            return selected[second] if -len(selected) <= second < len(selected) else None
        return _as_entry(selected[slice(*second)])
    if first == (None, None, -1):  # x[::-1][k] = x[-1 - k]; x[::-1][::-t] = x[::t]
        if isinstance(second, int):
            return -1 - second
        negative = second[2] is not None and second[2] < 0
        return (None, None, -second[2]) if second[:2] == (None, None) and negative else None
    return _compose_forward(first, second)


def _compose_forward(first: tuple[Any, ...], second: Any) -> Any:
    """``_compose`` for an unknown length: both entries must count from the start (starts
    and stops >= 0, steps > 0). x[a:b:s] holds x[a + s*j] for a + s*j < min(b, n), so its
    [c:d:u] is x[a + s*c : min(b, a + s*d) : s*u], and its [k] is x[a + s*k]."""
    start, stop, step = first[0] or 0, first[1], first[2] or 1
    if start < 0 or step < 0 or (stop is not None and stop < 0):
        return None
    if isinstance(second, int):
        index = start + step * second
        # past b the original always raises: keep it
        return index if second >= 0 and (stop is None or index < stop) else None
    c, d, u = second[0] or 0, second[1], second[2] or 1
    if c < 0 or u < 0 or (d is not None and d < 0):
        return None
    if d is not None:
        stop = start + step * d if stop is None else min(stop, start + step * d)
    return (start + step * c, stop, step * u)


def _merge_subtensors(b: Bindings) -> Var | None:
    """x[i][j] -> x[k], for static slices and integers, where k is known without x's
    length"""
    inner, outer = b.ix, b.ix2
    if not all(isinstance(e, tuple | int) for e in (*inner, *outer)):
        return None  # None (new axes) and Ellipsis stay
    following = iter(outer)
    merged: list[Any] = []
    for axis, length in enumerate(b.x.type.shape):
        first = inner[axis] if axis < len(inner) else FULL
        if isinstance(first, int):  # the axis is gone before the outer index
            merged.append(first)
            continue
        entry = _compose(first, next(following, FULL), length)
        if entry is None:
            return None
        merged.append(entry)
    index = tuple(slice(*e) if isinstance(e, tuple) else e for e in merged)
    return rt.getitem(b.x, index)


index_rules = [
    rule(
        subtensor_node(x, index=ix),
        x,
        name="drop_full_slice_subtensor",
        when=_selects_all,
        example=lambda: rt.vector("x")[:],
    ),
    rule(
        subtensor_node(subtensor_node(x, index=ix), index=ix2),
        _merge_subtensors,
        name="merge_nested_subtensor",
        example=lambda: rt.vector("x")[1:][::2],
    ),
]


# --- reductions -------------------------------------------------------------------------


def _merge_reductions(fn: Callable[..., Var]) -> Callable[[Bindings], Var]:
    """fn(fn(x, ax, kd), ax2, kd2) as one fn over the union of the axes. An axis of x
    stays (length 1) in the result when the last reduction over it kept dims."""

    def merge(b: Bindings) -> Var:
        behind = list(range(b.x.ndim)) if b.kd else [a for a in range(b.x.ndim) if a not in b.ax]
        again = {behind[p] for p in b.ax2}
        axes = tuple(sorted({*b.ax, *again}))
        dropped = tuple(a for a in axes if not (b.kd2 if a in again else b.kd))
        if not dropped:
            return fn(b.x, axis=axes, keepdims=True)
        if dropped == axes:
            return fn(b.x, axis=axes, keepdims=False)
        return rt.squeeze(fn(b.x, axis=axes, keepdims=True), dropped)

    name = fn.__name__
    merge.__name__ = f"merge_{name}"
    merge.__doc__ = f"{name}({name}(x, p), q) -> {name}(x, p and q)"
    return merge


def _without_unit_axes(fn: Callable[..., Var], itself: bool) -> Callable[[Bindings], Var | None]:
    """fn(x, ax) over axes of static length 1 (or axis=()): with keepdims, those axes are
    not reduced; reducing only such axes gives x itself (squeezed without keepdims) when
    ``itself`` (one element reduces to itself) and fn keeps x's dtype."""

    def drop(b: Bindings) -> Var | None:
        unit = tuple(a for a in b.ax if b.x.type.shape[a] == 1)
        rest = tuple(a for a in b.ax if a not in unit)
        if b.ax and not unit:
            return None
        params = {"ddof": b["dd"]} if "dd" in b else {}
        if not rest:
            keep = itself and b.term.dtype == b.x.dtype
            return (b.x if b.kd else rt.squeeze(b.x, unit)) if keep else None
        # without keepdims, fn(squeeze(x), rest) would only trade axes for a node
        return fn(b.x, axis=rest, keepdims=True, **params) if b.kd else None

    name = fn.__name__
    drop.__name__ = f"{name}_without_unit_axes"
    drop.__doc__ = f"{name}(x, p) -> {name}(x, p without length-1 axes), or x"
    return drop


def _unkeep(b: Bindings) -> Var | None:
    """squeeze(fn(x, axes, keepdims=True), axes) -> fn(x, axes), for any reduction fn"""
    node = b.y.owner
    if node is None or not isinstance(node.op, Reduce) or not node.op.keepdims:
        return None
    op = node.op
    if not b.ax or b.ax != op.axis:
        return None
    params = {p: getattr(op, p) for p in type(op).__props__}
    return type(op)(**{**params, "keepdims": False})(node.inputs[0])


# (function, nested calls merge, one element reduces to itself)
_REDUCTIONS: Sequence[tuple[Callable[..., Var], bool, bool]] = (
    (rt.sum, True, True),
    (rt.prod, True, True),
    (rt.max, True, True),
    (rt.min, True, True),
    (rt.all, True, True),
    (rt.any, True, True),
    (rt.mean, True, True),
    (rt.logsumexp, True, True),
    (rt.var, False, False),  # var of one element is 0 (NaN at inf): only other axes stay
    (rt.std, False, False),
)


def _may_have_unit_axes(b: Bindings) -> bool:
    """The quick test of ``_without_unit_axes``: no axes, or a reduced axis of static
    length 1. Asked before the match is confirmed by rebuilding the node (a reduction of
    no such axis, the common one, is declined without that rebuild)."""
    axes, shape = b.ax, b.x.type.shape
    if not isinstance(axes, tuple) or not axes:
        return True
    try:
        return any(shape[a] == 1 for a in axes)
    except (IndexError, TypeError):
        return True  # left to the right side (it declines what it cannot read)


def _unit_axes_example(fn: Callable[..., Var], itself: bool) -> Var:
    if not itself:
        return fn(_tensor((2, 1, 3)), axis=(1, 2), keepdims=True)
    return fn(_tensor((2, 1, 3), "bool" if fn in (rt.all, rt.any) else "float64"), axis=1)


def _reduction_rules() -> list[Rule]:
    merges, drops = [], []
    for fn, mergeable, itself in _REDUCTIONS:
        name = fn.__name__
        params = {"ddof": dd} if name in ("var", "std") else {}
        if mergeable:
            merges.append(
                rule(
                    fn(fn(x, axis=ax, keepdims=kd), axis=ax2, keepdims=kd2),
                    _merge_reductions(fn),
                    name=f"merge_nested_{name}",
                    example=lambda fn=fn: fn(fn(_tensor(), axis=1), axis=(0, 1)),
                )
            )
        drops.append(
            rule(
                fn(x, axis=ax, keepdims=kd, **params),
                _without_unit_axes(fn, itself),
                name=f"{name}_over_unit_axes",
                when=_may_have_unit_axes,
                example=lambda fn=fn, itself=itself: _unit_axes_example(fn, itself),
            )
        )
    unkeep = rule(
        squeeze_node(y, axes=ax),
        _unkeep,
        name="squeeze_of_keepdims_reduction",
        example=lambda: rt.squeeze(rt.sum(_tensor(), axis=(0, 2), keepdims=True), (0, 2)),
    )
    return [*merges, *drops, unkeep]


reduction_rules = _reduction_rules()

rules = RuleSet(
    [*axes_rules, *shape_rules, *index_rules, *reduction_rules],
    name="canonicalize",
    tags={"canonicalize"},
)
