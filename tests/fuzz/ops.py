"""The Ops a drawn graph applies (``tests/fuzz/graphs.py``), by family: each function
draws its operands among a ``Builder``'s nodes, applies one Op and records the node with
its concrete shape and exactness, or returns None where nothing fits.

``OPS`` maps a family name to its function; ``tools/fuzz.py --families`` picks among them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

import rewritekit.tensor as rt
from rewritekit.ir import Var
from tests.fuzz.builder import (
    DTYPES,
    Builder,
    Node,
    broadcasts,
    integer,
    number,
    settled,
    shape_of,
)

__all__ = ["OPS"]

# --- elementwise -----------------------------------------------------------------------------

_INEXACT = """
    exp exp2 expm1 log log2 log10 log1p cbrt sin cos tan arcsin arccos arctan sinh cosh tanh
    arcsinh arccosh arctanh erf erfc erfinv erfcx gammaln digamma gamma sigmoid softplus
    log_sigmoid logit log1mexp ndtr log_ndtr ndtri i0 i1 i0e i1e log1pexp
"""
# name -> (function, exact): exact when correctly rounded (the same bits in NumPy and XLA)
UNARY_FLOAT: dict[str, tuple[Callable[[Var], Var], bool]] = {
    "sqrt": (rt.sqrt, True),
    "reciprocal": (rt.reciprocal, True),
    **{name: (getattr(rt, name), False) for name in _INEXACT.split()},
    "polygamma1": (lambda x: rt.polygamma(1, x), False),
}
#: Functions that a last-bit change of their input can take from a finite value to NaN or an
#: infinity, or to the other side of a pole: arccos(1 + ulp) is NaN (XLA's i0(0) in float32
#: is 1 + ulp), digamma(6e-17) is -1.6e16 where digamma(0) is -inf (a rewrite computes
#: cos(arccos(0)) exactly). They read settled values only, as the discrete Ops do.
EDGY = frozenset(
    {"arccos", "arcsin", "arccosh", "arctanh", "logit", "erfinv", "ndtri", "log1mexp"}
    | {"gamma", "digamma", "polygamma1"}
)
# name -> (function, exact, discrete): discrete Ops read only settled values
UNARY_ANY: dict[str, tuple[Callable[[Var], Var], bool, bool]] = {
    "abs": (rt.abs, True, False),
    "negative": (rt.negative, True, False),
    "square": (rt.square, True, False),
    "sign": (rt.sign, True, True),
    "floor": (rt.floor, True, True),
    "ceil": (rt.ceil, True, True),
    "trunc": (rt.trunc, True, True),
    "rint": (rt.rint, True, True),
    "round1": (lambda x: rt.round(x, 1), False, True),
    "isnan": (rt.isnan, True, False),
    "isinf": (rt.isinf, True, False),
    "isfinite": (rt.isfinite, True, False),
    "logical_not": (rt.logical_not, True, True),
    "bitwise_not": (rt.bitwise_not, True, False),
    "nan_to_num": (rt.nan_to_num, True, False),
}
BINARY: dict[str, tuple[Callable[[Any, Any], Var], bool, bool]] = {
    "add": (rt.add, True, False),
    "subtract": (rt.subtract, True, False),
    "multiply": (rt.multiply, True, False),
    "true_divide": (rt.true_divide, True, False),
    "maximum": (rt.maximum, True, False),
    "minimum": (rt.minimum, True, False),
    "fmax": (rt.fmax, True, False),
    "fmin": (rt.fmin, True, False),
    "floor_divide": (rt.floor_divide, True, True),
    "mod": (rt.mod, True, True),
    "power": (rt.power, False, False),
    "copysign": (rt.copysign, True, True),
    "arctan2": (rt.arctan2, False, False),
    "logaddexp": (rt.logaddexp, False, False),
    "logaddexp2": (rt.logaddexp2, False, False),
    "hypot": (rt.hypot, False, False),
    "xlogy": (rt.xlogy, False, False),
    "xlog1py": (rt.xlog1py, False, False),
    "gammainc": (rt.gammainc, False, False),
    "equal": (rt.equal, True, True),
    "not_equal": (rt.not_equal, True, True),
    "less": (rt.less, True, True),
    "less_equal": (rt.less_equal, True, True),
    "greater": (rt.greater, True, True),
    "greater_equal": (rt.greater_equal, True, True),
    "logical_and": (rt.logical_and, True, True),
    "logical_or": (rt.logical_or, True, True),
    "logical_xor": (rt.logical_xor, True, True),
}
BITWISE: dict[str, Callable[[Any, Any], Var]] = {
    "bitwise_and": rt.bitwise_and,
    "bitwise_or": rt.bitwise_or,
    "bitwise_xor": rt.bitwise_xor,
    "left_shift": rt.left_shift,
    "right_shift": rt.right_shift,
}
# Python scalars: weak in promotion (NumPy 2), some out of range for small integer dtypes
SCALARS = (0, 1, -1, 2, 3, 300, -129, 0.5, -2.5, 1e300, float("inf"), float("nan"), True)


#: Ops that tell -0 from +0 (1/-0 is -inf, gamma(-0) is -inf, arctan2(-0, -1) is -pi), and
#: the positions of their operands that do: those read a zero of a known sign only
#: (``plain_zero``; see ``builder.MOVES``)
SIGN_READERS = {
    "reciprocal": (0,),
    "gamma": (0,),
    "digamma": (0,),
    "polygamma1": (0,),
    "true_divide": (1,),
    "floor_divide": (1,),
    "mod": (0, 1),
    "copysign": (1,),
    "arctan2": (0, 1),
    "power": (0,),
}


def plain_zero(node: Node) -> Var:
    """``node``'s Var, with -0 made +0 where a zero's sign may differ between backends."""
    if node.kind != "f" or node.zero_sign:
        return node.var
    return rt.where(rt.equal(node.var, 0), 0.0, node.var)


def _operand(name: str, position: int, node: Node) -> Var:
    return plain_zero(node) if position in SIGN_READERS.get(name, ()) else node.var


def _unary_float(b: Builder) -> Node | None:
    name = b.choice(sorted(UNARY_FLOAT))
    fn, exact = UNARY_FLOAT[name]
    x = b.pick(lambda n: n.kind != "b" and (name not in EDGY or settled(n)))
    if x is None:
        return None
    return b.add(name, lambda: fn(_operand(name, 0, x)), x.shape, exact, [x])


def _unary_any(b: Builder) -> Node | None:
    name = b.choice(sorted(UNARY_ANY))
    fn, exact, discrete = UNARY_ANY[name]
    x = b.pick(settled if discrete else lambda n: True)
    if x is None:
        return None
    return b.add(name, lambda: fn(x.var), x.shape, exact, [x])


def _binary(b: Builder) -> Node | None:
    name = b.choice(sorted(BINARY))
    fn, exact, discrete = BINARY[name]
    want = settled if discrete else (lambda n: True)
    x = b.pick(want)
    if x is None:
        return None
    if b.draw(st.integers(0, 3)) == 0:  # a Python scalar, on either side
        scalar = b.choice(SCALARS)
        swap = b.draw(st.booleans())
        if name == "power" and not swap and isinstance(scalar, int):
            scalar = abs(scalar)  # integer ** negative integer: see below

        def with_scalar() -> Var:
            if not swap:
                return fn(_operand(name, 0, x), scalar)
            if name == "power" and x.kind in "iub":
                return fn(scalar, rt.maximum(x.var, 0))
            return fn(scalar, _operand(name, 1, x))

        return b.add(f"{name}(scalar)", with_scalar, x.shape, exact, [x])
    y = b.partner(x, want)
    if y is None:
        return None
    shape = np.broadcast_shapes(x.shape, y.shape)
    if name == "power" and x.kind in "iub" and y.kind in "iub":
        # integer ** negative integer: NumPy raises, JAX returns garbage, and a JAX error
        # on values needs run-time checks (docs/reliability.md): exponents >= 0 only
        return b.add(
            "power(int, max(y, 0))", lambda: fn(x.var, rt.maximum(y.var, 0)), shape, exact, [x, y]
        )
    return b.add(name, lambda: fn(_operand(name, 0, x), _operand(name, 1, y)), shape, exact, [x, y])


def _bitwise(b: Builder) -> Node | None:
    x = b.pick(integer)
    if x is None:
        return None
    name = b.choice(sorted(BITWISE))
    y = b.partner(x, integer)
    if y is None:
        return None
    shape = np.broadcast_shapes(x.shape, y.shape)
    return b.add(name, lambda: BITWISE[name](x.var, y.var), shape, True, [x, y])


def _where(b: Builder) -> Node | None:
    cond = b.pick(lambda n: n.kind == "b")
    if cond is None:
        return None
    x = b.partner(cond)
    if x is None:
        return None
    y = b.partner(x, lambda n: broadcasts(n.shape, cond.shape))
    other = y.var if y is not None and b.draw(st.booleans()) else b.choice(SCALARS[:9])
    shapes = [cond.shape, x.shape] + ([y.shape] if y is not None and other is y.var else [])
    shape = np.broadcast_shapes(*shapes)
    reads = [cond, x] + ([y] if y is not None and other is y.var else [])
    return b.add("where", lambda: rt.where(cond.var, x.var, other), shape, True, reads)


def _clip(b: Builder) -> Node | None:
    x = b.pick(number)
    if x is None:
        return None
    lo, hi = b.choice((-1, 0, 0.5, -np.inf)), b.choice((1, 2, 100, np.inf, -2))
    return b.add("clip", lambda: rt.clip(x.var, lo, hi), x.shape, True, [x])


def _cast(b: Builder) -> Node | None:
    dtype = b.choice(DTYPES)
    to_integer = np.dtype(dtype).kind in "iub"
    x = b.pick(settled if to_integer else lambda n: True)
    if x is None:
        return None
    return b.add(f"cast_{dtype}", lambda: rt.cast(x.var, dtype), x.shape, True, [x])


# --- reductions, cumulative Ops, sorting ---------------------------------------------------

# name -> (function, exact for floats, discrete, takes a tuple of axes)
REDUCTIONS: dict[str, tuple[Callable[..., Var], bool, bool, bool]] = {
    "sum": (rt.sum, False, False, True),
    "prod": (rt.prod, False, False, True),
    "max": (rt.max, True, False, True),
    "min": (rt.min, True, False, True),
    "mean": (rt.mean, False, False, True),
    "var": (rt.var, False, False, True),
    "std": (rt.std, False, False, True),
    "logsumexp": (rt.logsumexp, False, False, True),
    "any": (rt.any, True, True, True),
    "all": (rt.all, True, True, True),
    "argmax": (rt.argmax, True, True, False),
    "argmin": (rt.argmin, True, True, False),
}


def _axes(b: Builder, ndim: int, several: bool) -> Any:
    options: list[Any] = [None, *range(-ndim, ndim)]
    if several and ndim:
        options.append(())
        options.append(tuple(range(ndim)))
        if ndim >= 2:
            options.append((0, -1))
    return b.choice(options)


def _reduction(b: Builder) -> Node | None:
    name = b.choice(sorted(REDUCTIONS))
    fn, exact, discrete, several = REDUCTIONS[name]
    x = b.pick(settled if discrete else lambda n: True)
    if x is None:
        return None
    axis = _axes(b, len(x.shape), several)
    keepdims = b.draw(st.booleans())
    # integer results are exact whatever the order of the sum (wrapping addition associates)
    exact = exact or (name in ("sum", "prod") and x.kind != "f")
    shape = shape_of(lambda a: np.sum(a, axis=axis, keepdims=keepdims), x.shape)
    return b.add(
        f"{name}(axis={axis}, keepdims={keepdims})",
        lambda: fn(x.var, axis=axis, keepdims=keepdims),
        shape,
        exact,
        [x],
    )


def _cumulative(b: Builder) -> Node | None:
    name = b.choice(("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"))
    x = b.pick(lambda n: n.shape != ())
    if x is None:
        return None
    ndim = len(x.shape)
    if name in ("cummax", "cummin"):
        axis = b.choice(range(-ndim, ndim))
        reverse = b.draw(st.booleans())
        fn = getattr(rt, name)
        return b.add(
            f"{name}(axis={axis}, reverse={reverse})",
            lambda: fn(x.var, axis=axis, reverse=reverse),
            x.shape,
            True,
            [x],
        )
    axis = b.choice([None, *range(-ndim, ndim)])
    shape = (int(np.prod(x.shape)),) if axis is None else x.shape
    exact = x.kind != "f" and name != "logcumsumexp"
    fn = getattr(rt, name)
    return b.add(f"{name}(axis={axis})", lambda: fn(x.var, axis=axis), shape, exact, [x])


def _sort(b: Builder) -> Node | None:
    arg = b.draw(st.booleans())
    x = b.pick(lambda n: n.shape != () and (settled(n) or not arg))
    if x is None:
        return None
    ndim = len(x.shape)
    axis = b.choice([None, *range(-ndim, ndim)])
    shape = (int(np.prod(x.shape)),) if axis is None else x.shape
    fn = rt.argsort if arg else rt.sort
    return b.add(f"{fn.__name__}(axis={axis})", lambda: fn(x.var, axis=axis), shape, True, [x])


# --- shapes ---------------------------------------------------------------------------------


def _factorizations(size: int, ndim: int) -> list[tuple[int, ...]]:
    if ndim == 0:
        return [()] if size == 1 else []
    found = []
    for first in range(0 if size == 0 else 1, size + 1 if size else 3):
        if first == 0 or (size % first == 0):
            rest_size = size // first if first else 0
            if first == 0 and size != 0:
                continue
            found.extend((first, *rest) for rest in _factorizations(rest_size, ndim - 1))
    return found


def _reshape(b: Builder) -> Node | None:
    x = b.pick()
    if x is None:
        return None
    size = int(np.prod(x.shape))
    targets = [t for ndim in range(4) for t in _factorizations(size, ndim)][:40]
    if not targets:
        return None
    target = b.choice(targets)
    shape = target
    if size and target and b.draw(st.booleans()):  # one length as -1
        position = b.draw(st.integers(0, len(target) - 1))
        target = (*target[:position], -1, *target[position + 1 :])
    return b.add(f"reshape{target}", lambda: rt.reshape(x.var, target), shape, True, [x])


def _transpose(b: Builder) -> Node | None:
    x = b.pick(lambda n: len(n.shape) >= 2)
    if x is None:
        return None
    ndim = len(x.shape)
    perm = tuple(b.draw(st.permutations(range(ndim))))
    kind = b.choice(("transpose", "swapaxes", "moveaxis"))
    if kind == "transpose":
        return b.add(
            f"transpose{perm}",
            lambda: rt.transpose(x.var, perm),
            tuple(x.shape[p] for p in perm),
            True,
            [x],
        )
    i, j = perm[0], perm[1]
    fn = rt.swapaxes if kind == "swapaxes" else rt.moveaxis
    reference = np.swapaxes if kind == "swapaxes" else np.moveaxis
    shape = shape_of(lambda a: reference(a, i, j), x.shape)
    return b.add(f"{kind}({i}, {j})", lambda: fn(x.var, i, j), shape, True, [x])


def _dims(b: Builder) -> Node | None:
    x = b.pick()
    if x is None:
        return None
    ndim = len(x.shape)
    ones = [i for i, n in enumerate(x.shape) if n == 1]
    if ones and b.draw(st.booleans()):
        axis = b.choice([None, *ones])
        # axis=None removes the axes *statically* of length 1 (rt.squeeze's rule)
        static = tuple(i for i, n in enumerate(x.var.type.shape) if n == 1)
        shape = shape_of(lambda a: np.squeeze(a, static if axis is None else axis), x.shape)
        return b.add(f"squeeze({axis})", lambda: rt.squeeze(x.var, axis), shape, True, [x])
    axis = b.choice(range(-ndim - 1, ndim + 1))
    shape = shape_of(lambda a: np.expand_dims(a, axis), x.shape)
    return b.add(f"expand_dims({axis})", lambda: rt.expand_dims(x.var, axis), shape, True, [x])


def _broadcast_to(b: Builder) -> Node | None:
    x = b.pick(lambda n: len(n.shape) <= 2)
    if x is None:
        return None
    lead = b.choice(((), (2,), (1,), (0,)))
    target = (*lead, *[b.choice((1, 2)) if n == 1 else n for n in x.shape])
    return b.add(f"broadcast_to{target}", lambda: rt.broadcast_to(x.var, target), target, True, [x])


def _flip_roll(b: Builder) -> Node | None:
    x = b.pick(lambda n: n.shape != ())
    if x is None:
        return None
    ndim = len(x.shape)
    axis = b.choice([None, *range(-ndim, ndim)])
    if b.draw(st.booleans()):
        return b.add(f"flip({axis})", lambda: rt.flip(x.var, axis), x.shape, True, [x])
    shift = b.choice((1, -1, 2, 5))
    return b.add(f"roll({shift}, {axis})", lambda: rt.roll(x.var, shift, axis), x.shape, True, [x])


def _join(b: Builder) -> Node | None:
    x = b.pick(lambda n: n.shape != ())
    if x is None:
        return None
    ndim = len(x.shape)
    stack = b.draw(st.booleans())
    if stack:
        y = b.pick(lambda n: n.shape == x.shape)
        axis = b.choice(range(-ndim - 1, ndim + 1))
        shape = shape_of(lambda p, q: np.stack([p, q], axis), x.shape, x.shape)
        return b.add(f"stack({axis})", lambda: rt.stack([x.var, y.var], axis), shape, True, [x, y])
    axis = b.choice(range(-ndim, ndim))
    k = axis % ndim

    def fits(n: Node) -> bool:
        return len(n.shape) == ndim and all(
            a == c for i, (a, c) in enumerate(zip(n.shape, x.shape, strict=True)) if i != k
        )

    y = b.pick(fits)
    shape = shape_of(lambda p, q: np.concatenate([p, q], axis), x.shape, y.shape)
    return b.add(
        f"concatenate({axis})",
        lambda: rt.concatenate([x.var, y.var], axis),
        shape,
        True,
        [x, y],
    )


# --- indexing -------------------------------------------------------------------------------


def _position(b: Builder, length: int, unique_of: set[int] | None = None) -> int:
    """An index for an axis of ``length``: in bounds (either sign) mostly, out sometimes."""
    if length and b.draw(st.integers(0, 3)):
        return b.draw(st.integers(-length, length - 1))
    return b.choice((length, length + 1, -length - 1, -length - 2))


def _in_bounds(index: Any, length: int) -> bool:
    return bool(np.all((-length <= np.asarray(index)) & (np.asarray(index) < length)))


def _slice(b: Builder, length: int) -> slice:
    bounds = st.one_of(st.none(), st.integers(-length - 2, length + 2))
    step = b.choice((None, 1, 2, -1, -2))
    return slice(b.draw(bounds), b.draw(bounds), step)


def _index(b: Builder, x: Node) -> tuple[list[Any], list[Any], bool, str] | None:
    """An index of ``x``: the entries for the graph, the entries NumPy computes the shape
    with (out-of-bounds positions brought in), whether one is out of bounds, a label."""
    entries: list[Any] = []
    shaped: list[Any] = []
    out = False
    labels = []
    axes = b.draw(st.integers(1, len(x.shape)))
    count = b.draw(st.integers(0, 3))  # one length for every index array: they broadcast
    for axis in range(axes):
        length = x.shape[axis]
        kind = b.choice(("int", "slice", "array", "scalar_input", "array_input"))
        if kind == "slice":
            item = _slice(b, length)
            entries.append(item)
            shaped.append(item)
            labels.append(f"{item.start}:{item.stop}:{item.step}")
            continue
        if kind in ("int", "scalar_input"):
            position = _position(b, length)
            value: Any = position
            if kind == "scalar_input":
                dtype = b.choice(("int64", "int32", "uint8"))
                if dtype == "uint8" and not 0 <= position < 256:
                    dtype = "int64"
                value = b.new_input(dtype, (), np.asarray(position, dtype)).var
        else:
            positions = np.array([_position(b, length) for _ in range(count)], dtype=np.int64)
            position = positions
            value = rt.constant(positions)
            if kind == "array_input":
                value = b.new_input("int64", positions.shape, positions).var
        out = out or not _in_bounds(position, length)
        entries.append(value)
        shaped.append(np.asarray(position) % max(length, 1))
        labels.append(f"{kind}={np.asarray(position).tolist()}")
    return entries, shaped, out, ", ".join(labels)


def _index_shape(shape: tuple[int, ...], shaped: list[Any]) -> tuple[int, ...]:
    """The shape of ``x[shaped]``, with axes indexed by positions taken as length >= 1."""
    dummy_shape = tuple(
        max(n, 1) if i < len(shaped) and not isinstance(shaped[i], slice) else n
        for i, n in enumerate(shape)
    )
    return np.zeros(dummy_shape)[tuple(shaped)].shape


def _getitem(b: Builder) -> Node | None:
    x = b.pick(lambda n: n.shape != ())
    if x is None:
        return None
    entries, shaped, out, label = _index(b, x)
    shape = _index_shape(x.shape, shaped)
    return b.add(
        f"getitem[{label}]",
        lambda: x.var[tuple(entries)],
        shape,
        True,
        [x],
        out_of_bounds=out,
    )


def _update(b: Builder) -> Node | None:
    x = b.pick(lambda n: n.shape != ())
    if x is None:
        return None
    entries, shaped, out, label = _index(b, x)
    selected = _index_shape(x.shape, shaped)
    add = b.draw(st.booleans())
    arrays = [
        np.asarray(e) % max(x.shape[i], 1) for i, e in enumerate(shaped) if not isinstance(e, slice)
    ]
    if not add and any(len(np.unique(a)) != a.size for a in arrays if a.ndim):
        return None  # set with a repeated position: which write wins is unspecified (JAX)

    def fits(n: Node) -> bool:  # a float value into an integer x is cast: settled only
        same = broadcasts(n.shape, selected) and np.broadcast_shapes(n.shape, selected) == selected
        return same and (x.kind == "f" or settled(n))

    value_node = b.pick(fits)
    value: Any = value_node.var if value_node is not None else b.choice(SCALARS[:9])
    fn = rt.inc_subtensor if add else rt.set_subtensor
    reads = [x] + ([value_node] if value_node is not None else [])
    return b.add(
        f"{fn.__name__}[{label}]",
        lambda: fn(x.var[tuple(entries)], value),
        x.shape,
        not add or x.kind != "f",
        reads,
        out_of_bounds=out,
    )


def _take(b: Builder) -> Node | None:
    x = b.pick(lambda n: n.shape != ())
    if x is None:
        return None
    ndim = len(x.shape)
    if b.draw(st.booleans()):  # take_along_axis with an argsort: always in bounds
        if not settled(x):
            return None
        axis = b.choice(range(-ndim, ndim))
        order = rt.argsort(x.var, axis=axis)
        return b.add(
            f"take_along_axis({axis})",
            lambda: rt.take_along_axis(x.var, order, axis),
            x.shape,
            True,
            [x],
        )
    axis = b.choice(range(-ndim, ndim))
    length = x.shape[axis]
    count = b.draw(st.integers(0, 3))
    positions = np.array([_position(b, length) for _ in range(count)], dtype=np.int64)
    shape = shape_of(
        lambda a: np.take(a, positions % max(length, 1), axis),
        tuple(max(n, 1) if i == axis % ndim else n for i, n in enumerate(x.shape)),
    )
    return b.add(
        f"take({positions.tolist()}, {axis})",
        lambda: rt.take(x.var, rt.constant(positions), axis),
        shape,
        True,
        [x],
        out_of_bounds=not _in_bounds(positions, length),
    )


# --- products -------------------------------------------------------------------------------


def _matmul(b: Builder) -> Node | None:
    x = b.pick(lambda n: n.kind in "iuf" and len(n.shape) in (1, 2))
    if x is None:
        return None
    inner = x.shape[-1]
    y = b.pick(lambda n: n.kind in "iuf" and len(n.shape) in (1, 2) and n.shape[0] == inner)
    other, y_shape, reads = (y.var, y.shape, [x, y]) if y is not None else (None, None, [x])
    if other is None:  # x with itself: x @ x.T, or x . x for a vector
        other = x.var.T if len(x.shape) == 2 else x.var
        y_shape = x.shape[::-1]
    fn = b.choice((rt.matmul, rt.dot))
    shape = shape_of(lambda p, q: np.matmul(p, q), x.shape, y_shape)
    exact = x.kind != "f" and all(r.kind != "f" for r in reads)
    return b.add(f"{fn.__name__}", lambda: fn(x.var, other), shape, exact, reads)


OPS: dict[str, Callable[[Builder], Node | None]] = {
    "unary_float": _unary_float,
    "unary_any": _unary_any,
    "binary": _binary,
    "bitwise": _bitwise,
    "where": _where,
    "clip": _clip,
    "cast": _cast,
    "reduction": _reduction,
    "cumulative": _cumulative,
    "sort": _sort,
    "reshape": _reshape,
    "transpose": _transpose,
    "dims": _dims,
    "broadcast_to": _broadcast_to,
    "flip_roll": _flip_roll,
    "join": _join,
    "getitem": _getitem,
    "update": _update,
    "take": _take,
    "matmul": _matmul,
}
