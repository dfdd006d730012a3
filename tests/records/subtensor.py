"""Op records for the indexing Ops: getitem, set_subtensor, inc_subtensor.

Most records use one index *form* (``lambda *parts: index``) for both the graph and the
NumPy reference, so the reference is plain NumPy indexing; run-time parts (integer
scalars, index arrays) are drawn inside the axis they index, ``[-n, n)`` (NumPy raises
for other indices and JAX clamps them).

The ``*_random`` records draw the index itself: a record's ``build`` sees only the input
Vars, so the draw passes a seed as the static shape of an empty ``key`` input,
``(0, seed)``, and ``build`` and ``reference`` both derive the same random index from the
seed and the static shape of ``x``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.tensor.dynamic import DynamicSlice, DynamicUpdateSlice
from rewritekit.tensor.subtensor import IncSubtensor, SetSubtensor, Subtensor
from tests.records import OpRecord, values

ALL = ("float64", "float32", "int64", "int32", "bool")
NUMBERS = ("float64", "float32", "int64", "int32")
ALL_SLICE = slice(None)

# A part spec: ("int", axis) for an integer scalar indexing ``axis``, ("array", axis,
# shape) for an index array, ("unique", axis, k) for k distinct indices of ``axis``.
Part = tuple[Any, ...]


def _x(data: st.DataObject, dtype: str, min_sides: Sequence[int], extra: int = 3) -> np.ndarray:
    shape = tuple(data.draw(st.integers(m, m + extra)) for m in min_sides)
    return values(data, dtype, shape)


def _part(data: st.DataObject, x: np.ndarray, spec: Part) -> np.ndarray:
    kind, axis, *rest = spec
    n = x.shape[axis]
    dtype = data.draw(st.sampled_from(["int64", "int32"]))
    if kind == "unique":  # distinct positions, some written as negative indices
        chosen = np.array(data.draw(st.permutations(range(n)))[: rest[0]], dtype=dtype)
        negative = values(data, "bool", chosen.shape)
        return np.where(negative, chosen - n, chosen).astype(dtype)
    shape = () if kind == "int" else rest[0]
    return values(data, dtype, shape, -n, n - 1)


def _value(data: st.DataObject, dtype: str, selected: tuple[int, ...]) -> np.ndarray:
    """A value that broadcasts to ``selected``: some leading axes dropped, some set to 1."""
    drop = data.draw(st.integers(0, len(selected)))
    shape = [1 if data.draw(st.booleans()) else d for d in selected[drop:]]
    return values(data, dtype, shape)


def _draw(
    min_sides: Sequence[int],
    parts: Sequence[Part] = (),
    form: Callable[..., Any] | None = None,
    value_dtype: str | None = None,
) -> Callable[..., list[np.ndarray]]:
    """Draws x, its index parts, and (with ``form``) a value for the selection."""

    def draw(data: st.DataObject, dtype: str) -> list[np.ndarray]:
        x = _x(data, dtype, min_sides)
        drawn = [_part(data, x, spec) for spec in parts]
        if form is None:
            return [x, *drawn]
        selected = x[form(*drawn)].shape
        return [x, _value(data, value_dtype or dtype, selected), *drawn]

    return draw


def _get(
    name: str,
    form: Callable[..., Any],
    min_sides: Sequence[int],
    parts: Sequence[Part] = (),
    dtypes: tuple[str, ...] = ALL,
    static: bool = False,
) -> OpRecord:
    """``x[form(*parts)]`` in the graph and in NumPy."""
    return OpRecord(
        name,
        (Subtensor,),
        lambda x, *p: x[form(*p)],
        lambda x, *p: x[form(*p)],
        _draw(min_sides, parts),
        dtypes,
        static_shapes=static,
    )


def _np_set(x: np.ndarray, value: np.ndarray, index: Any) -> np.ndarray:
    out = x.copy()
    out[index] = value
    return out


def _np_add(x: np.ndarray, value: np.ndarray, index: Any) -> np.ndarray:
    out = x.copy()
    np.add.at(out, index, value)  # repeated indices add every time
    return out


def _update(
    name: str,
    op: type,
    form: Callable[..., Any],
    min_sides: Sequence[int],
    parts: Sequence[Part] = (),
    dtypes: tuple[str, ...] = NUMBERS,
    static: bool = False,
    value_dtype: str | None = None,
) -> OpRecord:
    """``set_subtensor``/``inc_subtensor`` of ``x[form(*parts)]`` in the graph and NumPy."""
    if op is SetSubtensor:
        build = lambda x, v, *p: x.at[form(*p)].set(v)  # noqa: E731
        reference = lambda x, v, *p: _np_set(x, v, form(*p))  # noqa: E731
    else:
        build = lambda x, v, *p: rt.inc_subtensor(x[form(*p)], v)  # noqa: E731
        reference = lambda x, v, *p: _np_add(x, v.astype(x.dtype), form(*p))  # noqa: E731
    return OpRecord(
        name,
        (op,),
        build,
        reference,
        _draw(min_sides, parts, form, value_dtype),
        dtypes,
        static_shapes=static,
    )


def _draw_repeated_set(data: st.DataObject, dtype: str) -> list[np.ndarray]:
    """x (n, m), a value of shape (m,), (1, m) or (), and 5 indices of axis 0 (repeats
    likely): every write to one element writes the same value, so the result is defined
    in JAX too."""
    x = _x(data, dtype, [1, 0])
    value_shape = data.draw(st.sampled_from([(x.shape[1],), (1, x.shape[1]), ()]))
    return [x, values(data, dtype, value_shape), _part(data, x, ("array", 0, (5,)))]


# --- randomly drawn indices (see the module docstring) ---------------------------------


def _random_index(seed: int, shape: Sequence[int], advanced: bool) -> tuple[Any, ...]:
    """A random index for ``shape`` (every side >= 1): ints, slices (also with bounds
    out of range and negative steps), new axes, an Ellipsis and, with ``advanced``,
    integer arrays (NumPy arrays of broadcastable shapes)."""
    rng = np.random.default_rng(seed)
    ndim = len(shape)
    count = int(rng.integers(0, ndim + 1))
    ellipsis = rng.random() < 0.4
    front = int(rng.integers(0, count + 1)) if ellipsis else count
    axes = [*range(front), *range(ndim - (count - front), ndim)]
    common = tuple(int(d) for d in rng.integers(1, 4, size=int(rng.integers(1, 3))))
    entries: list[Any] = []
    for axis in axes:
        n = shape[axis]
        kind = int(rng.integers(0, 4 if advanced else 3))
        if kind == 0:
            entries.append(int(rng.integers(-n, n)))
        elif kind == 1:
            entries.append(ALL_SLICE)
        elif kind == 2:
            bounds = [
                None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3)) for _ in "ab"
            ]
            step = [None, 1, 2, 3, -1, -2][int(rng.integers(0, 6))]
            entries.append(slice(*bounds, step))
        else:  # an array shaped like a suffix of `common`, some lengths 1
            suffix = common[int(rng.integers(0, len(common) + 1)) :]
            entries.append(
                rng.integers(-n, n, size=[1 if rng.random() < 0.3 else d for d in suffix])
            )
    if ellipsis:
        entries.insert(front, Ellipsis)
    for _ in range(int(rng.integers(0, 3))):
        entries.insert(int(rng.integers(0, len(entries) + 1)), None)
    return tuple(entries)


def _key(data: st.DataObject, x: np.ndarray, advanced: bool, unique: bool) -> np.ndarray:
    seeds = st.integers(0, 2**16)
    if unique:  # set_subtensor: no element selected twice (JAX's order is unspecified)
        cells = np.arange(x.size).reshape(x.shape)
        seeds = seeds.filter(
            lambda s: (
                len(set(np.ravel(cells[_random_index(s, x.shape, advanced)])))
                == np.size(cells[_random_index(s, x.shape, advanced)])
            )
        )
    return np.zeros((0, data.draw(seeds, label="seed")), dtype=np.int8)


def _random(name: str, op: type, advanced: bool, dtypes: tuple[str, ...]) -> OpRecord:
    def index_of(x: Any, key: Any) -> tuple[Any, ...]:
        # each may be a Var or an array (finite differences pass the int key as an array)
        x_shape, key_shape = (v.type.shape if isinstance(v, Var) else v.shape for v in (x, key))
        return _random_index(key_shape[1], x_shape, advanced)

    def draw(data: st.DataObject, dtype: str) -> list[np.ndarray]:
        x = values(data, dtype, data.draw(st.lists(st.integers(1, 5), max_size=4)))
        key = _key(data, x, advanced, unique=op is SetSubtensor)
        if op is Subtensor:
            return [x, key]
        return [x, key, _value(data, dtype, x[index_of(x, key)].shape)]

    if op is Subtensor:
        build = reference = lambda x, key: x[index_of(x, key)]
    elif op is SetSubtensor:
        build = lambda x, key, v: rt.set_subtensor(x[index_of(x, key)], v)  # noqa: E731
        reference = lambda x, key, v: _np_set(x, v, index_of(x, key))  # noqa: E731
    else:
        build = lambda x, key, v: x.at[index_of(x, key)].add(v)  # noqa: E731
        reference = lambda x, key, v: _np_add(x, v, index_of(x, key))  # noqa: E731
    return OpRecord(name, (op,), build, reference, draw, dtypes, static_shapes=True)


RECORDS = [
    # --- getitem: basic indexing, unknown and static shapes ---
    _get("getitem_int", lambda: 1, [2]),
    _get("getitem_negative_ints", lambda: (-1, 1), [1, 2, 0]),
    _get("getitem_ints_all_axes", lambda: (0, -2), [1, 2], static=True),
    _get("getitem_slice", lambda: slice(1, None), [0, 1]),
    _get("getitem_slice_static", lambda: slice(1, -1), [0, 1], static=True),
    _get("getitem_slice_step", lambda: (ALL_SLICE, slice(-2, None, 2)), [1, 0]),
    _get("getitem_reverse", lambda: slice(None, None, -1), [0, 2], static=True),
    _get("getitem_slice_out_of_range", lambda: slice(-10, 10, 3), [0]),
    _get("getitem_negative_step_bounds", lambda: (slice(3, 0, -2), 0), [0, 1]),
    _get("getitem_newaxis", lambda: (None, ALL_SLICE, None), [0, 0], static=True),
    _get("getitem_ellipsis_int", lambda: (Ellipsis, 0), [0, 0, 1]),
    _get("getitem_ellipsis_newaxis", lambda: (None, Ellipsis, None, 1), [0, 2], static=True),
    _get("getitem_mixed", lambda: (slice(1, 3), None, -1), [0, 1], static=True),
    _get("getitem_empty_tuple", lambda: (), [0, 0]),
    _get("getitem_ellipsis_only", lambda: Ellipsis, [], static=True),
    _get("getitem_dynamic_int", lambda i: i, [1, 0], [("int", 0)]),
    _get(
        "getitem_dynamic_ints", lambda i, j: (i, ALL_SLICE, j), [1, 0, 1], [("int", 0), ("int", 2)]
    ),
    _get("getitem_dynamic_int_static", lambda i: (Ellipsis, i), [0, 1], [("int", 1)], static=True),
    OpRecord(
        "getitem_slice_bound_from_shape",
        (Subtensor,),
        lambda x: x[: x.shape[0] // 2, 1:],
        lambda x: x[: x.shape[0] // 2, 1:],
        _draw([0, 0]),
        ALL,
    ),
    # --- getitem: integer-array (advanced) indexing ---
    _get("getitem_array", lambda i: i, [1, 0], [("array", 0, (4,))]),
    _get("getitem_array_2d", lambda i: (ALL_SLICE, i), [0, 1], [("array", 1, (2, 3))]),
    _get(
        "getitem_array_static", lambda i: (ALL_SLICE, i), [0, 1], [("array", 1, (3,))], static=True
    ),
    _get(
        "getitem_arrays_broadcast",
        lambda i, j: (i, j),
        [1, 1, 0],
        [("array", 0, (3, 1)), ("array", 1, (2,))],
        static=True,
    ),
    _get(
        "getitem_arrays_adjacent",
        lambda i, j: (ALL_SLICE, i, j),
        [0, 1, 1],
        [("array", 1, (2,)), ("array", 2, (1,))],
    ),
    _get(
        "getitem_arrays_apart",  # not adjacent: the broadcast axes come first
        lambda i, j: (i, ALL_SLICE, j),
        [1, 0, 1],
        [("array", 0, (2,)), ("array", 2, (3, 1))],
        static=True,
    ),
    _get(
        "getitem_int_and_array_apart", lambda i: (1, ALL_SLICE, i), [2, 0, 1], [("array", 2, (2,))]
    ),
    _get(
        "getitem_int_and_array_adjacent",
        lambda i: (ALL_SLICE, -1, i),
        [0, 1, 1],
        [("array", 2, (2,))],
    ),
    _get(
        "getitem_dynamic_int_and_array",
        lambda k, i: (k, ALL_SLICE, i),
        [1, 0, 1],
        [("int", 0), ("array", 2, (2,))],
    ),
    _get(
        "getitem_array_newaxis", lambda i: (i, None, slice(1, None)), [1, 1], [("array", 0, (2,))]
    ),
    _get(
        "getitem_arrays_split_by_newaxis",
        lambda i, j: (i, None, j),
        [1, 1],
        [("array", 0, (2,)), ("array", 1, (2,))],
        static=True,
    ),
    _get(
        "getitem_arrays_split_by_empty_ellipsis",
        lambda i, j: (ALL_SLICE, i, Ellipsis, j),
        [0, 1, 1],
        [("array", 1, (1,)), ("array", 2, (2,))],
        static=True,
    ),
    _get("getitem_constant_list", lambda: [0, -1, 0], [1, 0], static=True),
    _get("getitem_constant_array", lambda: (Ellipsis, np.array([[0], [-1]])), [0, 1]),
    _get("getitem_empty_list", lambda: (ALL_SLICE, []), [0, 0]),
    _random("getitem_random_basic", Subtensor, False, ALL),
    _random("getitem_random_advanced", Subtensor, True, ALL),
    # --- set_subtensor ---
    _update("set_subtensor_slice", SetSubtensor, lambda: slice(1, None), [1, 0], dtypes=ALL),
    _update("set_subtensor_static", SetSubtensor, lambda: (ALL_SLICE, -1), [0, 1], static=True),
    _update(
        "set_subtensor_step_newaxis", SetSubtensor, lambda: (None, slice(None, None, -2)), [0, 1]
    ),
    _update(
        "set_subtensor_dynamic_int", SetSubtensor, lambda i: (Ellipsis, i), [0, 1], [("int", 1)]
    ),
    _update("set_subtensor_array", SetSubtensor, lambda i: i, [1, 0], [("unique", 0, 2)]),
    _update(
        "set_subtensor_arrays_apart",
        SetSubtensor,
        lambda i, j: (i, ALL_SLICE, j),
        [2, 0, 1],
        [("unique", 0, 2), ("array", 2, (1,))],
        static=True,
    ),
    _update(
        "set_subtensor_cast",  # a float64 value cast to x's dtype, as NumPy's x[idx] = v
        SetSubtensor,
        lambda: slice(None, 2),
        [0, 1],
        dtypes=("float32", "int64", "int32"),
        value_dtype="float64",
    ),
    OpRecord(
        "set_subtensor_repeated",  # the value's gradient counts each element set once
        (SetSubtensor,),
        lambda x, v, i: x.at[i].set(v),
        lambda x, v, i: _np_set(x, v, i),
        _draw_repeated_set,
        NUMBERS,
    ),
    OpRecord(
        "set_subtensor_python_scalar",
        (SetSubtensor,),
        lambda x: rt.set_subtensor(x[1:], 2),
        lambda x: _np_set(x, 2, slice(1, None)),
        _draw([0]),
        ALL,
    ),
    _random("set_subtensor_random_basic", SetSubtensor, False, ALL),
    _random("set_subtensor_random_advanced", SetSubtensor, True, NUMBERS),
    # --- inc_subtensor ---
    _update(
        "inc_subtensor_slice",
        IncSubtensor,
        lambda: (ALL_SLICE, slice(1, None, 2)),
        [0, 0],
        dtypes=ALL,
    ),
    _update("inc_subtensor_int_static", IncSubtensor, lambda: -1, [1, 0], static=True),
    _update(
        "inc_subtensor_repeated",  # every occurrence of a repeated index adds
        IncSubtensor,
        lambda i: i,
        [1, 0],
        [("array", 0, (5,))],
        dtypes=ALL,  # bool: NumPy adds as logical or
    ),
    _update(
        "inc_subtensor_arrays_broadcast",
        IncSubtensor,
        lambda i, j: (i, None, j),
        [1, 1],
        [("array", 0, (3, 1)), ("array", 1, (2,))],
        static=True,
    ),
    _update(
        "inc_subtensor_dynamic_int_and_array",
        IncSubtensor,
        lambda k, i: (ALL_SLICE, k, i),
        [0, 1, 1],
        [("int", 1), ("array", 2, (4,))],
    ),
    _update(
        "inc_subtensor_cast",
        IncSubtensor,
        lambda i: i,
        [1],
        [("array", 0, (3,))],
        dtypes=("float32",),
        value_dtype="float64",
    ),
    _random("inc_subtensor_random", IncSubtensor, True, ALL),
]


# --- dynamic windows: JAX's lax.dynamic_slice and dynamic_update_slice -------------------


def _window(shape: Sequence[int], starts: Sequence[Any], sizes: Sequence[int]) -> tuple:
    """JAX's window: a negative start counts from the end, then clamps into [0, n - size]."""
    where = []
    for n, start, size in zip(shape, starts, sizes, strict=True):
        first = int(start) + n if int(start) < 0 else int(start)
        first = min(max(first, 0), n - size)
        where.append(slice(first, first + size))
    return tuple(where)


def _starts(data: st.DataObject, x: np.ndarray) -> list[np.ndarray]:
    """One start per axis, beyond the axis on both sides (the clamping is exercised)."""
    return [values(data, "int64", (), -n - 2, n + 2) for n in x.shape]


def _draw_window(data: st.DataObject, dtype: str) -> list[np.ndarray]:
    x = _x(data, dtype, [2, 1])
    return [x, *_starts(data, x)]


def _draw_update(data: st.DataObject, dtype: str) -> list[np.ndarray]:
    x = _x(data, dtype, [2, 1])
    return [x, values(data, dtype, (2, x.shape[1])), *_starts(data, x)]


def _np_update(x: np.ndarray, u: np.ndarray, *starts: Any) -> np.ndarray:
    out = x.copy()
    out[_window(x.shape, starts, u.shape)] = u
    return out


def _window_of(x: Any, i: Any) -> Var:
    i = rt.as_tensor(i)  # a traced start (the gradient tests pass arrays)
    return x[1:, i : i + 1] * 2


def _add_at_window(x: Any, u: Any, i: Any) -> Var:
    i = rt.as_tensor(i)
    return x.at[i : i + 2].add(u)


RECORDS += [
    OpRecord(
        "dynamic_slice",
        (DynamicSlice,),
        lambda x, i, j: rt.dynamic_slice(x, [i, j], [2, 1]),
        lambda x, i, j: x[_window(x.shape, [i, j], [2, 1])],
        _draw_window,
        NUMBERS,
    ),
    OpRecord(
        "getitem_window",
        (DynamicSlice,),
        lambda x, i, j: _window_of(x, i),
        lambda x, i, j: (x[1:] * 2)[:, _window(x.shape, [0, i], [1, 1])[1]],
        _draw_window,
        ("float64", "float32"),
    ),
    OpRecord(
        "dynamic_update_slice",
        (DynamicUpdateSlice,),
        lambda x, u, i, j: rt.dynamic_update_slice(x, u, [i, j]),
        _np_update,
        _draw_update,
        NUMBERS,
        static_shapes=True,
    ),
    OpRecord(
        "at_window_add",
        (DynamicUpdateSlice, DynamicSlice),
        lambda x, u, i, j: _add_at_window(x, u, i),
        lambda x, u, i, j: _np_update(x, x[_window(x.shape, [i, 0], u.shape)] + u, i, 0),
        _draw_update,
        ("float64", "float32"),
        static_shapes=True,
    ),
]
