"""Tensor types: a dtype and a static shape, with NumPy 2 promotion and broadcasting.

A ``TensorType`` is interned: ``TensorType("float64", (None,)) is TensorType("float64",
(None,))``, so a million nodes of one type share one object and type equality is identity.
A static shape entry is an ``int`` (known length) or ``None`` (known only at run time).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from rewritekit.errors import BroadcastError, DTypeError

__all__ = [
    "SUPPORTED_DTYPES",
    "TensorType",
    "broadcast_shapes",
    "normalize_dtype",
    "result_dtype",
]

SUPPORTED_DTYPES: frozenset[str] = frozenset(
    ["bool"]
    + [f"int{b}" for b in (8, 16, 32, 64)]
    + [f"uint{b}" for b in (8, 16, 32, 64)]
    + ["float16", "float32", "float64", "complex64", "complex128"]
)

_PY_SCALARS = (bool, int, float, complex)


def normalize_dtype(dtype: Any) -> str:
    """Return the canonical name of ``dtype`` (``"float64"``, ``"int32"``, ...).

    Accepts anything ``numpy.dtype`` accepts (``float``, ``np.float32``, ``"f8"``).

    Raises:
        DTypeError: the dtype is not one rewritekit computes with (object, str, datetime).

    Example:
        >>> normalize_dtype(float)
        'float64'
    """
    if isinstance(dtype, str) and dtype in SUPPORTED_DTYPES:
        return dtype  # the common case, without asking NumPy
    if isinstance(dtype, np.dtype):  # the next most common: an array's; NumPy's .name is slow
        name = _DTYPE_NAMES.get(dtype)
        if name is not None:
            return name
    return _normalize_dtype(dtype)


# The names of the NumPy dtypes met so far (``np.dtype.name`` costs about 2 µs a call).
_DTYPE_NAMES: dict[np.dtype, str] = {}


def _normalize_dtype(dtype: Any) -> str:
    try:
        name = np.dtype(dtype).name
    except TypeError as exc:
        raise DTypeError(f"unknown dtype {dtype!r}: {exc}") from None
    if name not in SUPPORTED_DTYPES:
        raise DTypeError(
            f"unsupported dtype {name!r}; expected one of {', '.join(sorted(SUPPORTED_DTYPES))}"
        )
    if isinstance(dtype, np.dtype) and dtype.isnative:
        _DTYPE_NAMES[dtype] = name
    return name


def _normalize_shape(shape: Any) -> tuple[int | None, ...]:
    if isinstance(shape, (int, np.integer)) or shape is None:
        shape = (shape,)
    try:
        entries = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of int or None, got {shape!r}") from None
    out: list[int | None] = []
    for entry in entries:
        if entry is None:
            out.append(None)
        elif isinstance(entry, (int, np.integer)) and not isinstance(entry, bool) and entry >= 0:
            out.append(int(entry))
        else:
            raise TypeError(
                f"shape entries must be non-negative int or None, got {entry!r} in {shape!r}"
            )
    return tuple(out)


class TensorType:
    """The type of a tensor variable: ``dtype`` and static ``shape``.

    Instances are interned and immutable; compare them with ``==`` or ``is``.

    Args:
        dtype: anything ``numpy.dtype`` accepts; stored as its canonical name.
        shape: one entry per axis, ``int`` for a static length or ``None`` for unknown.

    Example:
        >>> t = TensorType("float32", (None, 3))
        >>> str(t), t.ndim
        ('float32[?,3]', 2)
    """

    __slots__ = ("__weakref__", "dtype", "shape")
    dtype: str
    shape: tuple[int | None, ...]

    _table: dict[tuple[Any, Any], TensorType] = {}
    _lock = threading.Lock()

    def __new__(cls, dtype: Any = "float64", shape: Any = ()) -> TensorType:
        # Always normalized first: a raw-argument cache would equate (True,) with (1,).
        key = (normalize_dtype(dtype), _normalize_shape(shape))
        found = cls._table.get(key)
        if found is None:
            with cls._lock:
                found = cls._table.get(key)
                if found is None:
                    found = object.__new__(cls)
                    object.__setattr__(found, "dtype", key[0])
                    object.__setattr__(found, "shape", key[1])
                    cls._table[key] = found
        return found

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"TensorType is immutable; cannot set {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (TensorType, (self.dtype, self.shape))

    @property
    def ndim(self) -> int:
        """Number of axes."""
        return len(self.shape)

    @property
    def kind(self) -> str:
        """NumPy's one-letter kind: ``b`` bool, ``i``/``u`` integer, ``f`` float, ``c`` complex."""
        return np.dtype(self.dtype).kind

    def with_shape(self, shape: Iterable[int | None]) -> TensorType:
        """This dtype with another static shape."""
        return TensorType(self.dtype, tuple(shape))

    def is_refined_by(self, other: TensorType) -> bool:
        """True when ``other`` may stand where ``self`` is expected.

        Same dtype and rank; each static length of ``self`` is kept by ``other``, and
        ``other`` may know lengths that ``self`` leaves as ``None``.
        """
        if self is other:
            return True
        if self.dtype != other.dtype or self.ndim != other.ndim:
            return False
        return all(a is None or a == b for a, b in zip(self.shape, other.shape, strict=True))

    def is_compatible(self, other: TensorType) -> bool:
        """True when some concrete array could have both types."""
        if self.dtype != other.dtype or self.ndim != other.ndim:
            return False
        return all(
            a is None or b is None or a == b for a, b in zip(self.shape, other.shape, strict=True)
        )

    def __str__(self) -> str:
        dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.dtype}[{dims}]"

    def __repr__(self) -> str:
        return f"TensorType(dtype={self.dtype!r}, shape={self.shape!r})"


def result_dtype(*items: Any) -> str:
    """The dtype NumPy 2 gives to an operation over ``items``.

    Each item is a dtype (string, NumPy type, ``TensorType``) or a Python scalar value
    (``bool``/``int``/``float``/``complex``). Python scalars are *weak*: they take the kind of
    the other operands where they can, so ``result_dtype("float32", 5.0) == "float32"`` and
    ``result_dtype("int64", 0.5) == "float64"``. With only weak items the default dtype of
    their kind is used (``float64``, ``int64``).

    Example:
        >>> result_dtype("int8", "float32"), result_dtype("float32", 2.0)
        ('float32', 'float32')
    """
    key: list[Any] = []
    for item in items:
        if isinstance(item, TensorType):
            key.append(item.dtype)
        elif isinstance(item, _PY_SCALARS):
            key.append(type(item))  # a weak scalar's value does not change the result
        else:
            key.append(normalize_dtype(item))
    if not key:
        raise DTypeError("result_dtype needs at least one dtype or scalar")
    return _result_dtype(tuple(key))


_WEAK_EXAMPLE = {bool: False, int: 0, float: 0.0, complex: 0j}


@functools.lru_cache(maxsize=4096)
def _result_dtype(key: tuple[Any, ...]) -> str:
    args = [_WEAK_EXAMPLE[k] if k in _WEAK_EXAMPLE else np.dtype(k) for k in key]
    return normalize_dtype(np.result_type(*args))


def broadcast_shapes(
    *shapes: Sequence[int | None],
    op: str = "broadcast",
    names: Sequence[str | None] | None = None,
) -> tuple[int | None, ...]:
    """Broadcast static shapes by NumPy's rules, with ``None`` for lengths known at run time.

    A ``None`` against a static length ``n > 1`` gives ``n`` (the run-time length must be 1
    or ``n``); ``None`` against 1 or ``None`` stays ``None``.

    Args:
        shapes: the operands' static shapes.
        op: the Op's name, used in the error message.
        names: the operands' names, used in the error message.

    Raises:
        BroadcastError: two static lengths differ and neither is 1.

    Example:
        >>> broadcast_shapes((None, 1), (3,))
        (None, 3)
    """
    first = shapes[0] if shapes else ()
    if all(shape == first for shape in shapes):
        return tuple(first)
    ndim = max(len(s) for s in shapes)
    out: list[int | None] = []
    for axis in range(-ndim, 0):
        length: int | None = 1
        for shape in shapes:
            if len(shape) < -axis:
                continue
            entry = shape[axis]
            if entry == 1:
                continue
            if length == 1:
                length = entry
            elif entry is None:
                continue
            elif length is None:
                length = entry
            elif entry != length:
                raise BroadcastError(_broadcast_message(op, shapes, names))
        out.append(length)
    return tuple(out)


def _broadcast_message(
    op: str, shapes: Sequence[Sequence[int | None]], names: Sequence[str | None] | None
) -> str:
    shown = " and ".join(shape_str(s) for s in shapes)
    message = f"{op}: cannot broadcast shapes {shown}"
    if names is not None:
        message += " (inputs " + ", ".join(repr(n) if n else "<unnamed>" for n in names) + ")"
    return message


def shape_str(shape: Sequence[int | None]) -> str:
    """A static shape as error messages show it: ``(?, 3)``, ``(4,)``."""
    entries = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(entries) + ("," if len(entries) == 1 else "") + ")"
