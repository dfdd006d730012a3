"""Tensors made from a shape: ``zeros``, ``ones``, ``full`` (and ``*_like``), ``arange``,
``eye``.

``zeros((1000, 1000))`` is an ``Alloc`` node (a fill value and a shape vector), not a
million-element constant in the graph; its static shape comes from the shape argument
where that is known (see ``rewritekit.tensor.shapes.as_shape_vector``). ``arange`` of Python
numbers is a constant; of Vars, an ``Arange`` node whose length is known only at run time.
Dtypes follow NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import (
    Constant,
    Grads,
    Op,
    TensorType,
    Var,
    Vars,
    as_var,
    constant,
    normalize_dtype,
    short_name,
)
from rewritekit.ir import result_dtype as _result_dtype
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import is_int
from rewritekit.tensor.elemwise import cast
from rewritekit.tensor.shape_vectors import check_shape_input, static_param
from rewritekit.tensor.shapes import (
    as_shape_vector,
    broadcast_to,
    check_nonnegative,
    shape,
    static_shape_of,
)

__all__ = [
    "arange",
    "eye",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]

_PY_NUMBERS = (bool, int, float, complex, np.generic)


def _scalar_inputs(name: str, labels: tuple[str, ...], types: tuple[TensorType, ...]) -> None:
    """Check an Op's scalar inputs: real numbers for arange, integers for eye."""
    kinds, what = ("biuf", "a real number") if name == "arange" else ("iu", "an integer")
    if len(types) != len(labels):
        raise GraphTypeError(f"{name}: expected {len(labels)} inputs {labels}, got {len(types)}")
    for label, t in zip(labels, types, strict=True):
        if t.ndim != 0:
            raise ShapeError(f"{name}: {label} must be a scalar, got {t}")
        if t.kind not in kinds:
            raise DTypeError(f"{name}: {label} must be {what}, got dtype {t.dtype}")


# --- alloc ------------------------------------------------------------------------------


class Alloc(Op):
    """A tensor of shape ``shape`` filled with a scalar ``value`` (of the result's dtype).

    Inputs: the 0-d value and the int64 shape vector; ``shape`` (the parameter) is the
    static shape the vector implies (None where an entry is known only at run time).
    """

    __props__ = ("shape",)
    broadcasts = True

    def __init__(self, shape: Any) -> None:
        super().__init__(static_param(self.name, shape))

    def infer_types(self, value: TensorType, vector: TensorType) -> tuple[TensorType, ...]:
        if value.ndim != 0:
            raise ShapeError(f"alloc: the fill value must be a scalar, got {value}")
        check_shape_input(self.name, vector, len(self.shape))
        return (value.with_shape(self.shape),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # every element is the fill value: its gradient is the sum of g (the differentiator
        # sums it back); none for the shape
        return [cotangents[0], None]


def _dtype(name: str, dtype: Any) -> str:
    try:
        return normalize_dtype(dtype)
    except DTypeError as exc:
        raise DTypeError(f"{name}: {exc}") from None


def _fill(name: str, value: Any, dtype: Any) -> Var:
    """The fill value as a Var of ``dtype`` (None: the value's own, NumPy's defaults)."""
    dtype = None if dtype is None else _dtype(name.split(":")[0], dtype)
    if isinstance(value, Var):
        return value if dtype is None else cast(value, dtype)
    # np.array(2.7, dtype="int64") truncates, as np.full does.
    return as_var(value, dtype=dtype, context=name)


def _alloc(name: str, fill: Var, vector: Var) -> Var:
    target = static_shape_of(vector)
    check_nonnegative(name, target)
    if fill.ndim != 0:  # np.full broadcasts an array fill value
        return broadcast_to(fill, vector)
    return Alloc(target)(fill, vector)


@pattern_function(Alloc, inputs=("fill_value", "shape"))
def full(shape: Any, fill_value: Any, dtype: Any = None) -> Var:
    """A tensor of ``shape`` filled with ``fill_value``, as ``np.full``.

    ``dtype=None`` takes the fill value's dtype (``int64`` for a Python int, ``float64``
    for a float). An array fill value is broadcast to ``shape``.

    Example:
        >>> rt.full((2, 3), 7).type
        TensorType(dtype='int64', shape=(2, 3))
    """
    return _full("full", shape, fill_value, dtype)


def _full(name: str, shape: Any, fill_value: Any, dtype: Any) -> Var:
    vector = as_shape_vector(shape, name)
    return _alloc(name, _fill(f"{name}: fill_value", fill_value, dtype), vector)


@pattern_function(Alloc, inputs=("", "shape"))
def zeros(shape: Any, dtype: Any = "float64") -> Var:
    """A tensor of ``shape`` filled with 0, as ``np.zeros``.

    Example:
        >>> rt.zeros((rt.scalar("n", dtype="int64"), 3)).type.shape
        (None, 3)
    """
    return _full("zeros", shape, 0, "float64" if dtype is None else dtype)


@pattern_function(Alloc, inputs=("", "shape"))
def ones(shape: Any, dtype: Any = "float64") -> Var:
    """A tensor of ``shape`` filled with 1, as ``np.ones``.

    Example:
        >>> rt.ones(3, dtype="int32").type
        TensorType(dtype='int32', shape=(3,))
    """
    return _full("ones", shape, 1, "float64" if dtype is None else dtype)


@pattern_function()
def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Var:
    """A tensor of ``x``'s shape filled with ``fill_value``, as ``np.full_like``.

    ``dtype=None`` takes ``x``'s dtype (the fill value is cast to it, as in NumPy).

    Example:
        >>> rt.full_like(rt.vector("x", dtype="int32"), 2.5).dtype
        'int32'
    """
    x = as_var(x, context="full_like: input 'x'")
    fill = _fill("full_like: fill_value", fill_value, x.dtype if dtype is None else dtype)
    return _alloc("full_like", fill, shape(x))


@pattern_function()
def zeros_like(x: Any, dtype: Any = None) -> Var:
    """A tensor of ``x``'s shape (and dtype, by default) filled with 0.

    Example:
        >>> rt.zeros_like(rt.matrix("x")).type
        TensorType(dtype='float64', shape=(None, None))
    """
    return full_like(x, 0, dtype)


@pattern_function()
def ones_like(x: Any, dtype: Any = None) -> Var:
    """A tensor of ``x``'s shape (and dtype, by default) filled with 1.

    Example:
        >>> rt.ones_like(rt.vector("x"), dtype="bool").dtype
        'bool'
    """
    return full_like(x, 1, dtype)


# --- arange -----------------------------------------------------------------------------


class Arange(Op):
    """The numbers ``start, start + step, ...`` below ``stop`` (above, for a negative step),
    in ``dtype``, as ``np.arange``. The length is known only at run time.

    Domain: step != 0. Under the JAX backend the inputs must be known when the graph is
    compiled (constants or functions of static shapes).
    """

    __props__ = ("dtype",)

    def __init__(self, dtype: Any) -> None:
        super().__init__(normalize_dtype(dtype))

    def infer_types(self, *inputs: TensorType) -> tuple[TensorType, ...]:
        _scalar_inputs("arange", ("start", "stop", "step"), inputs)
        return (TensorType(self.dtype, (None,)),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # start, stop and step set the grid (its length is not differentiable, and JAX
        # needs them concrete): no gradient flows to them, though the result may be float
        return [None, None, None]


def _is_number(value: Any) -> bool:
    if isinstance(value, Constant):
        return value.ndim == 0
    return isinstance(value, _PY_NUMBERS)


@pattern_function(Arange, inputs=("start", "stop", "step"))
def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Var:
    """Evenly spaced numbers in ``[start, stop)``, as ``np.arange``.

    With Python numbers (or constants) only, the result is a constant. Otherwise it is an
    ``Arange`` node with static shape ``(None,)``. Without ``dtype`` the dtype is NumPy's:
    the promotion of ``int64`` with the arguments' dtypes (so ``float64`` for any float).

    Raises:
        ShapeError: a constant ``step`` of 0, or arguments NumPy rejects.
        DTypeError: an argument is complex or not a number.

    Example:
        >>> rt.arange(rt.scalar("n", dtype="int32")).type
        TensorType(dtype='int64', shape=(None,))
    """
    if stop is None:
        start, stop = 0, start
    args = (start, stop, step)
    if all(_is_number(a) for a in args):
        values = [a.data if isinstance(a, Constant) else a for a in args]
        try:
            data = np.arange(*values, dtype=None if dtype is None else _dtype("arange", dtype))
        except (ZeroDivisionError, ValueError, TypeError) as exc:
            raise ShapeError(f"arange: cannot make arange{tuple(values)!r}: {exc}") from None
        return constant(data)
    names = ("start", "stop", "step")
    vars_ = [as_var(a, context=f"arange: {n}") for a, n in zip(args, names, strict=True)]
    for var, n in zip(vars_, names, strict=True):
        if var.ndim != 0 or var.type.kind not in "biuf":
            raise DTypeError(
                f"arange: {n} must be a real scalar, got {var.type} ({short_name(var)})"
            )
    if dtype is not None:
        out = _dtype("arange", dtype)
    else:  # NumPy's rule: at least int64
        out = _result_dtype("int64", *[v.type for v in vars_])
    return Arange(out)(*vars_)


# --- eye --------------------------------------------------------------------------------


class Eye(Op):
    """An ``n`` x ``m`` matrix of ``dtype`` with ones on diagonal ``k`` (k > 0: above the
    main diagonal), as ``np.eye``.

    Inputs: the int scalars ``n``, ``m``, ``k``; ``shape`` (the parameter) is the static
    ``(n, m)`` (None where known only at run time). Under the JAX backend ``n`` and ``m``
    must be known when the graph is compiled; ``k`` may be traced.
    """

    __props__ = ("dtype", "shape")

    def __init__(self, dtype: Any, shape: Any) -> None:
        entries = static_param(self.name, shape)
        if len(entries) != 2:
            raise GraphTypeError(f"eye: shape must have two entries (n, m), got {shape!r}")
        super().__init__(normalize_dtype(dtype), entries)

    def infer_types(self, *inputs: TensorType) -> tuple[TensorType, ...]:
        _scalar_inputs("eye", ("n", "m", "k"), inputs)
        return (TensorType(self.dtype, self.shape),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # n, m and k are integers that set the grid: a float result has no gradient to give
        return [None, None, None]


def _eye_arg(value: Any, label: str) -> Var:
    if not (is_int(value) or isinstance(value, Var)):
        raise GraphTypeError(
            f"eye: {label} must be an int or an integer scalar Var, got "
            f"{type(value).__name__} {value!r}"
        )
    var = as_var(value, dtype=None if isinstance(value, Var) else "int64", context=f"eye: {label}")
    if var.ndim != 0 or var.type.kind not in "iu":
        raise DTypeError(f"eye: {label} must be an integer scalar, got {var.type}")
    return var


@pattern_function(Eye, inputs=("n", "m", "k"))
def eye(n: Any, m: Any = None, k: Any = 0, dtype: Any = "float64") -> Var:
    """A 2-d tensor with ones on the ``k``-th diagonal and zeros elsewhere, as ``np.eye``.

    ``n``, ``m`` and ``k`` may be ints or integer scalar Vars (``m`` defaults to ``n``).

    Raises:
        ShapeError: a static ``n`` or ``m`` is negative.

    Example:
        >>> rt.eye(3, 4, k=1, dtype="int32").type
        TensorType(dtype='int32', shape=(3, 4))
    """
    m = n if m is None else m
    args = [_eye_arg(v, label) for v, label in zip((n, m, k), ("n", "m", "k"), strict=True)]
    static = tuple(int(v.data) if isinstance(v, Constant) else None for v in args[:2])
    check_nonnegative("eye", static)
    return Eye(_dtype("eye", "float64" if dtype is None else dtype), static)(*args)
