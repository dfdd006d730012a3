"""The index parameter of the indexing Ops (``rewritekit.tensor.subtensor``).

An indexing Op holds the static part of the index in its parameter ``index``, a tuple with
one entry per index position:

- an ``int``: a static integer index;
- ``SCALAR``: an integer index known at run time, read from the next input;
- ``(start, stop, step)``: a slice; each bound is an ``int``, ``None`` or ``SCALAR``;
- ``None``: a new axis of length 1;
- ``ARRAY``: an integer index array, read from the next input (advanced indexing);
- ``Ellipsis``: the axes no other entry reads. ``parse_index`` expands it into full slices
  and keeps it only where it stands for no axes between two advanced indices, since it
  then decides where NumPy puts the broadcast axes (``x[:, [0], ..., [0]]``).

This module gives the parameter's canonical form and notation, the static shape it
selects, the parsing of a user's index into it, and the NumPy index a backend builds from
it at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rewritekit.errors import BroadcastError, DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Constant, TensorType, Var, broadcast_shapes, constant, short_name
from rewritekit.tensor.axes import is_int

__all__: list[str] = []  # helpers for the indexing Ops; nothing user-facing

#: An index entry (or slice bound) read from an integer scalar input.
SCALAR = "scalar"
#: An index entry read from an integer array input (advanced indexing).
ARRAY = "array"

_PARTS = (SCALAR, ARRAY)
_FULL = (None, None, None)
_ADVANCED = object()  # where an advanced index sat in a result shape being built


# --- the parameter ----------------------------------------------------------------


def _canonical_slice(name: str, bounds: Sequence[Any]) -> tuple[Any, ...]:
    """A slice parameter with equal slices spelled alike: ``0:n:1`` is ``:n``."""
    start, stop, step = (int(b) if is_int(b) else b for b in bounds)
    for bound in (start, stop, step):
        if bound is not None and bound != SCALAR and not isinstance(bound, int):
            raise GraphTypeError(f"{name}: a slice bound must be an int, None or SCALAR")
    if step == 0:
        raise ShapeError(f"{name}: slice step cannot be zero")
    if step == 1:
        step = None
    if start == 0 and step is None:
        start = None
    return (start, stop, step)


def canonical_index(name: str, index: Any) -> tuple[Any, ...]:
    if not isinstance(index, tuple):
        raise GraphTypeError(f"{name}: index must be a tuple of entries, got {index!r}")
    entries: list[Any] = []
    for entry in index:
        if is_int(entry):
            entries.append(int(entry))
        elif isinstance(entry, tuple) and len(entry) == 3:
            entries.append(_canonical_slice(name, entry))
        elif entry is None or entry is Ellipsis or (isinstance(entry, str) and entry in _PARTS):
            entries.append(entry)
        else:
            raise GraphTypeError(
                f"{name}: index entries must be ints, (start, stop, step) tuples, None, "
                f"Ellipsis, SCALAR or ARRAY, got {entry!r}"
            )
    if entries.count(Ellipsis) > 1:
        raise ShapeError(f"{name}: an index can have only one Ellipsis")
    while entries and entries[-1] == _FULL:
        entries.pop()
    return tuple(entries)


def n_parts(index: tuple[Any, ...]) -> int:
    count = sum(1 for e in index if isinstance(e, str))
    return count + sum(b == SCALAR for e in index if isinstance(e, tuple) for b in e)


def _bound_str(bound: Any) -> str:
    return "" if bound is None else "?" if bound == SCALAR else str(bound)


def index_str(index: tuple[Any, ...]) -> str:
    """An index parameter in NumPy's notation, ``?`` marking run-time parts.

    Example:
        >>> index_str((1, (None, SCALAR, 2), None, ARRAY))
        '[1, :?:2, None, <array>]'
    """
    shown = []
    for entry in index:
        if isinstance(entry, tuple):
            start, stop, step = (_bound_str(b) for b in entry)
            shown.append(f"{start}:{stop}" + (f":{step}" if step else ""))
        elif entry is Ellipsis:
            shown.append("...")
        else:
            shown.append({SCALAR: "?", ARRAY: "<array>"}.get(entry, str(entry)))  # type: ignore[arg-type]
    return "[" + ", ".join(shown) + "]"


# --- static result shapes ---------------------------------------------------------------


def _check_int_part(name: str, t: TensorType, what: str) -> None:
    if t.kind not in "iu":
        raise DTypeError(f"{name}: {what} must have an integer dtype, got {t}")
    if t.ndim != 0:
        raise ShapeError(f"{name}: {what} must be a scalar, got {t}")


def _slice_length(entry: tuple[Any, ...], length: int | None) -> int | None:
    if length is None or SCALAR in entry:
        return None
    return len(range(*slice(*entry).indices(length)))


def entry_axes(index: tuple[Any, ...], ndim: int) -> list[int | None]:
    """The axis of ``x`` each index entry reads (None for ``None`` and ``...``).

    Example:
        >>> entry_axes((0, Ellipsis, None, 1), 4)
        [0, None, None, 3]
    """
    consumed = sum(1 for e in index if e is not None and e is not Ellipsis)
    axes: list[int | None] = []
    axis = 0
    for entry in index:
        if entry is Ellipsis:
            axis += ndim - consumed
        axes.append(None if entry is None or entry is Ellipsis else axis)
        axis += axes[-1] is not None
    return axes


def selected_shape(
    name: str,
    index: tuple[Any, ...],
    x: TensorType,
    parts: Sequence[TensorType],
    checked: bool = True,
) -> tuple[int | None, ...]:
    """The static shape of ``x[index]``, given the types of the run-time parts.
    ``checked``: a static integer index must lie in its axis (False for the modes "clip"
    and "fill", which define the others).

    Raises:
        ShapeError: too many indices, or (``checked``) a static integer index out of range.
        DTypeError: a run-time part is not of an integer dtype (a mask raises
            ``GraphTypeError``).
        BroadcastError: the index arrays do not broadcast together.

    Example:
        >>> selected_shape("getitem", (0, (1, None, None)), TensorType("float64", (3, 4)), [])
        (3,)
    """
    consumed = sum(1 for e in index if e is not None and e is not Ellipsis)
    if consumed > x.ndim:
        raise ShapeError(f"{name}: too many indices for a {x.ndim}-d input: {consumed} were given")
    if len(parts) != n_parts(index):
        raise GraphTypeError(
            f"{name}: the index {index_str(index)} reads {n_parts(index)} run-time parts, "
            f"got {len(parts)}"
        )
    has_array = ARRAY in index
    feed = iter(parts)
    out: list[Any] = []
    adv_shapes: list[tuple[int | None, ...]] = []
    adv_positions: list[int] = []
    done = 0  # the axes of x read so far
    for position, (entry, axis) in enumerate(zip(index, entry_axes(index, x.ndim), strict=True)):
        if axis is None:
            if entry is None:
                out.append(1)
            continue
        out.extend(x.shape[done:axis])  # the axes an Ellipsis stands for
        done = axis + 1
        length = x.shape[axis]
        if isinstance(entry, tuple):
            for what, bound in zip(("start", "stop", "step"), entry, strict=True):
                if bound == SCALAR:
                    _check_int_part(name, next(feed), f"the slice {what} of axis {axis}")
            out.append(_slice_length(entry, length))
            continue
        if entry == ARRAY:
            adv_shapes.append(_check_array_part(name, next(feed), axis).shape)
        elif entry == SCALAR:
            _check_int_part(name, next(feed), f"the index for axis {axis}")
        elif checked and length is not None and not -length <= entry < length:
            raise ShapeError(
                f"{name}: index {entry} is out of range for axis {axis} with length {length}"
            )
        if has_array:
            adv_positions.append(position)
            out.append(_ADVANCED)
    out.extend(x.shape[done:])
    if has_array:
        return _place_advanced(name, out, adv_shapes, adv_positions)
    return tuple(out)


def _check_array_part(name: str, t: TensorType, axis: int) -> TensorType:
    if t.kind == "b":
        raise GraphTypeError(mask_message(name, f"the index array for axis {axis}"))
    if t.kind not in "iu":
        raise DTypeError(f"{name}: the index array for axis {axis} must be integers, got {t}")
    return t


def _place_advanced(
    name: str, out: list[Any], adv_shapes: list[tuple[int | None, ...]], positions: list[int]
) -> tuple[int | None, ...]:
    try:
        broadcast = broadcast_shapes(*adv_shapes, op=name)
    except BroadcastError as exc:
        raise BroadcastError(f"{exc} (the index arrays)") from None
    rest = [d for d in out if d is not _ADVANCED]
    if positions == list(range(positions[0], positions[-1] + 1)):
        at = out.index(_ADVANCED)  # adjacent: in place of the first one
        return (*rest[:at], *broadcast, *rest[at:])
    return (*broadcast, *rest)


def mask_message(name: str, what: str) -> str:
    return (
        f"{name}: {what} is a boolean mask known only at run time, so the result's shape "
        "would depend on the data; as in JAX, give a static size: "
        "x[rt.nonzero(mask, size=n, fill_value=0)], or select elementwise with "
        "rt.where(mask, x, other) (a constant mask works as it is)"
    )


def _constant_mask(item: Any) -> np.ndarray | None:
    """A boolean mask known when the graph is built (an array, a list, a constant), else
    None."""
    if isinstance(item, Constant):
        data = item.data
    elif isinstance(item, (list, np.ndarray)):
        data = np.asarray(item)
    else:
        return None
    return data if data.dtype == np.bool_ and data.ndim >= 1 else None


def _check_mask(name: str, mask: np.ndarray, x: Var, axis: int | None, position: int) -> None:
    if axis is None:
        return  # after an Ellipsis: NumPy checks the lengths at run time
    lengths = x.type.shape[axis : axis + mask.ndim]
    if len(lengths) < mask.ndim or any(
        n is not None and n != m for n, m in zip(lengths, mask.shape, strict=False)
    ):
        raise ShapeError(
            f"{name}: the boolean mask at index {position} has shape {mask.shape}, which does "
            f"not match the axes {axis}.. of {x.type} it covers"
        )


# --- a user's index ---------------------------------------------------------------------


def _entry(name: str, entry: Any, position: int) -> tuple[Any, list[Var]]:
    """One user index entry as (parameter entry, run-time parts)."""
    if entry is None or entry is Ellipsis:
        return entry, []
    if isinstance(entry, slice):
        bounds = [_bound(name, b, position) for b in (entry.start, entry.stop, entry.step)]
        parts = [b for b in bounds if isinstance(b, Var)]
        return tuple(SCALAR if isinstance(b, Var) else b for b in bounds), parts
    if isinstance(entry, (bool, np.bool_)):
        raise GraphTypeError(mask_message(name, f"index {position}"))
    if is_int(entry):
        return int(entry), []
    if isinstance(entry, Var):
        return _var_entry(name, entry, position)
    if isinstance(entry, (list, tuple, np.ndarray)):
        array = np.asarray(entry)
        if array.size == 0 and array.dtype.kind == "f":
            array = array.astype(np.int64)  # x[[]] selects nothing, as in NumPy
        if array.dtype.kind in "biu":
            return _var_entry(name, constant(array), position)
    raise GraphTypeError(
        f"{name}: index {position} must be an int, a slice, None, ..., an integer array or "
        f"an integer Var, got {type(entry).__name__} {entry!r}"
    )


def _var_entry(name: str, var: Var, position: int) -> tuple[Any, list[Var]]:
    if var.type.kind == "b":
        raise GraphTypeError(mask_message(name, f"index {position}"))
    if var.type.kind not in "iu":
        raise DTypeError(f"{name}: index {position} must have an integer dtype, got {var!r}")
    if var.ndim == 0:
        return (int(var.data), []) if isinstance(var, Constant) else (SCALAR, [var])
    return ARRAY, [var]


def _bound(name: str, bound: Any, position: int) -> int | Var | None:
    if bound is None or is_int(bound):
        return None if bound is None else int(bound)
    if isinstance(bound, np.ndarray) and bound.ndim == 0 and bound.dtype.kind in "iu":
        return int(bound)
    if isinstance(bound, Var):
        if bound.type.kind not in "iu":
            raise DTypeError(
                f"{name}: slice bounds must have an integer dtype, got {bound!r} (index {position})"
            )
        if bound.ndim != 0:
            raise ShapeError(
                f"{name}: slice bounds must be scalars, got {bound!r} (index {position})"
            )
        return int(bound.data) if isinstance(bound, Constant) else bound
    raise GraphTypeError(
        f"{name}: slice bounds must be ints, None or integer scalar Vars, got "
        f"{type(bound).__name__} {bound!r} (index {position})"
    )


def _expand_ellipsis(name: str, entries: list[Any], x: Var) -> list[Any]:
    consumed = sum(1 for e in entries if e is not None and e is not Ellipsis)
    if consumed > x.ndim:
        raise ShapeError(
            f"{name}: too many indices for a {x.ndim}-d input: {consumed} were given "
            f"(input {short_name(x)})"
        )
    if entries.count(Ellipsis) > 1:
        raise ShapeError(f"{name}: an index can have only one Ellipsis ('...')")
    if Ellipsis not in entries:
        return entries
    at = entries.index(Ellipsis)
    fill = [_FULL] * (x.ndim - consumed)
    has_array = ARRAY in entries
    advanced = [i for i, e in enumerate(entries) if e == ARRAY or (has_array and _is_point(e))]
    if not fill and advanced and advanced[0] < at < advanced[-1]:
        fill = [Ellipsis]  # no axes, but it still separates the advanced indices
    return entries[:at] + fill + entries[at + 1 :]


def _is_point(entry: Any) -> bool:
    return isinstance(entry, int) or entry == SCALAR


def _check_constant_arrays(name: str, index: tuple[Any, ...], parts: list[Var], x: Var) -> None:
    """Index arrays known now must lie in range of a static axis (NumPy raises later)."""
    feed = iter(parts)
    for entry, axis in zip(index, entry_axes(index, x.ndim), strict=True):
        reads = [next(feed) for _ in range(n_parts((entry,)))]
        length = None if axis is None else x.type.shape[axis]
        if entry != ARRAY or length is None or not isinstance(reads[0], Constant):
            continue
        data = reads[0].data
        bad = data[(data < -length) | (data >= length)]
        if bad.size:
            raise ShapeError(
                f"{name}: index {int(bad.flat[0])} in the index array for axis {axis} is out "
                f"of range for length {length} (input {short_name(x)})"
            )


def parse_index(
    name: str, index: Any, x: Var, checked: bool = True
) -> tuple[tuple[Any, ...], list[Var]]:
    """A user's index of ``x`` as (index parameter, run-time parts), checked (``checked``:
    constant index arrays must lie in their axes; False for the modes "clip" and "fill").

    Raises:
        GraphTypeError: a boolean mask (use ``rt.where``) or an entry of another kind.
        DTypeError: a Var entry that is not of an integer dtype.
        ShapeError: too many indices, two Ellipses, a constant index array out of range.
    """
    entries: list[Any] = []
    parts: list[Var] = []
    axis: int | None = 0  # the axis the next entry reads (None after an Ellipsis)
    for position, item in enumerate(index if isinstance(index, tuple) else (index,)):
        mask = _constant_mask(item)
        if mask is not None:  # its positions: one index array per axis it covers
            _check_mask(name, mask, x, axis, position)
            for positions in np.nonzero(mask):
                entries.append(ARRAY)
                parts.append(constant(positions.astype(np.int64)))
            axis = None if axis is None else axis + mask.ndim
            continue
        if item is Ellipsis:
            axis = None
        elif item is not None and axis is not None:
            axis += 1
        entry, entry_parts = _entry(name, item, position)
        entries.append(entry)
        parts.extend(entry_parts)
    parameter = canonical_index(name, tuple(_expand_ellipsis(name, entries, x)))
    if checked:
        _check_constant_arrays(name, parameter, parts, x)
    return parameter, parts


# --- at run time ------------------------------------------------------------------------


def make_index(
    index: tuple[Any, ...], parts: Sequence[Any], bound: Callable[[Any], int] = int
) -> tuple[Any, ...]:
    """The NumPy index tuple of an Op's ``index`` with the run-time ``parts`` filled in.

    Integer and array parts are used as given; slice bounds go through ``bound`` (a
    backend that needs them static passes a checking function).

    Example:
        >>> make_index((0, (SCALAR, None, None), None, ARRAY), [np.int64(2), np.array([1])])
        (0, slice(2, None, None), None, array([1]))
    """
    feed = iter(parts)
    out: list[Any] = []
    for entry in index:
        if isinstance(entry, tuple):
            out.append(slice(*(bound(next(feed)) if b == SCALAR else b for b in entry)))
        elif isinstance(entry, str):  # SCALAR or ARRAY
            out.append(next(feed))
        else:
            out.append(entry)
    return tuple(out)
