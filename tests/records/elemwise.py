"""Op records for the elementwise Ops."""

from __future__ import annotations

import numpy as np

import rewritekit.tensor as rt
from rewritekit.tensor import elemwise as ew
from tests.records import OpRecord, broadcastable_shapes, draw_in, values

FLOATS = ("float64", "float32")
NUMBERS = ("float64", "float32", "int64", "int32")


def _unary(name, op_class, fn, reference, lo=-5.0, hi=5.0, dtypes=FLOATS, **kw):
    return OpRecord(name, (op_class,), fn, reference, draw_in((lo, hi)), dtypes, **kw)


def _binary(name, op_class, fn, reference, a=(-5.0, 5.0), b=(-5.0, 5.0), dtypes=NUMBERS, **kw):
    return OpRecord(name, (op_class,), fn, reference, draw_in(a, b), dtypes, **kw)


def _as_float(reference):
    """NumPy's function computed in our float rule: integer inputs in float64."""

    def run(*arrays):
        return reference(*[a if a.dtype.kind == "f" else a.astype("float64") for a in arrays])

    return run


def _nonzero(lo, hi):
    """Draws for a divisor: values in [lo, hi] with magnitude at least 0.5."""

    def draw(data, dtype):
        sx, sy = data.draw(broadcastable_shapes(2))
        x = values(data, dtype, sx, -6, 6)
        y = values(data, dtype, sy, lo, hi)
        y = np.where(np.abs(y) < 0.5, np.asarray(1, dtype=dtype), y).astype(dtype)
        return [x, y]

    return draw


def _bools(n):
    def draw(data, dtype):
        return [values(data, "bool", s) for s in data.draw(broadcastable_shapes(n))]

    return draw


def _grid(n):
    """Small integers as floats or ints, so that ties occur."""

    def draw(data, dtype):
        return [values(data, dtype, s, -2, 2).round() for s in data.draw(broadcastable_shapes(n))]

    return draw


def _integers(*ranges):
    """Integer (or bool) draws, one array per range; unsigned dtypes draw from 0 up."""

    def draw(data, dtype):
        unsigned = np.dtype(dtype).kind == "u"
        shapes = data.draw(broadcastable_shapes(len(ranges)))
        return [
            values(data, dtype, s, max(lo, 0) if unsigned else lo, hi)
            for s, (lo, hi) in zip(shapes, ranges, strict=True)
        ]

    return draw


BITS = ("int64", "int32", "uint8", "bool")


# --- gradient draws: away from the points where finite differences are meaningless -------


def _clip_grid(data, dtype):
    """Integers with lo < 0 < hi: x ties with lo or hi often, with both never."""
    x, lo, hi = draw_in((-3, 3), (-2, -1), (1, 2))(data, dtype)
    return [x.round(), lo.round(), hi.round()]


def _midpoints(step):
    """Unary draws halfway between multiples of ``step`` (k/2 + 1/4 for ``step=0.5``), away
    from the jumps and kinks of sign, abs, floor, ceil and round."""

    def draw(data, dtype):
        (x,) = draw_in((-5, 5))(data, dtype)
        return [np.asarray((np.floor(x / step) + 0.5) * step, dtype=dtype)]

    return draw


def _fractional_quotient(data, dtype):
    """Divisor draws with x / y at least 0.1 away from an integer, where mod and
    floor_divide jump (x takes the broadcast shape)."""
    x, y = _nonzero(-4, 4)(data, dtype)
    q = x / y
    fraction = np.clip(q - np.floor(q), 0.1, 0.9)
    return [np.asarray((np.floor(q) + fraction) * y, dtype=dtype), y]


def _arctan2_draw(data, dtype):
    """x1 with magnitude at least 0.5: arctan2 jumps across x1 = 0 for x2 < 0 and has no
    derivative at the origin."""
    x2, x1 = _nonzero(-4, 4)(data, dtype)
    return [x1, x2]


RECORDS = [
    _binary("add", ew.Add, lambda x, y: x + y, np.add),
    _binary("subtract", ew.Subtract, lambda x, y: x - y, np.subtract),
    _binary("multiply", ew.Multiply, lambda x, y: x * y, np.multiply),
    OpRecord(
        "true_divide",
        (ew.TrueDivide,),
        lambda x, y: x / y,
        _as_float(np.true_divide),
        _nonzero(-4, 4),
        NUMBERS,
    ),
    OpRecord(
        "floor_divide",
        (ew.FloorDivide,),
        lambda x, y: x // y,
        np.floor_divide,
        _nonzero(-4, 4),
        NUMBERS,
        grad_draw=_fractional_quotient,
    ),
    OpRecord(
        "mod",
        (ew.Mod,),
        lambda x, y: x % y,
        np.mod,
        _nonzero(-4, 4),
        NUMBERS,
        atol=1e-5,
        grad_draw=_fractional_quotient,
    ),
    _binary(
        "power", ew.Power, lambda x, y: x**y, np.power, a=(0.1, 3.0), b=(-2.0, 2.0), dtypes=FLOATS
    ),
    _binary(
        "power_int",
        ew.Power,
        lambda x, y: x**y,
        np.power,
        a=(0, 4),
        b=(0, 3),
        dtypes=("int64", "int32"),
    ),
    _unary("negative", ew.Negative, lambda x: -x, np.negative, dtypes=NUMBERS),
    _unary(
        "abs",
        ew.Abs,
        lambda x: abs(x),
        np.abs,
        dtypes=NUMBERS,
        grad_draw=_midpoints(0.5),
        notes="abs'(0) = 0 (the subgradient central differences give); jax.grad of "
        "jnp.abs gives 1 at 0, so gradients are drawn away from 0",
    ),
    _unary("sign", ew.Sign, rt.sign, np.sign, dtypes=NUMBERS, grad_draw=_midpoints(0.5)),
    _unary("square", ew.Square, rt.square, np.square, dtypes=NUMBERS),
    _unary("reciprocal", ew.Reciprocal, rt.reciprocal, lambda x: 1.0 / x, lo=0.2, hi=5.0),
    # ties split the gradient equally, which central differences agree with; near-ties
    # closer than their step do not, hence the grid
    _binary("maximum", ew.Maximum, rt.maximum, np.maximum, grad_draw=_grid(2)),
    _binary("minimum", ew.Minimum, rt.minimum, np.minimum, grad_draw=_grid(2)),
    OpRecord(
        "clip",
        (ew.Clip,),
        rt.clip,
        np.clip,
        draw_in((-5, 5), (-3, 0), (0, 3)),
        NUMBERS,
        grad_draw=_clip_grid,
    ),
    OpRecord(
        "where",
        (ew.Where,),
        rt.where,
        np.where,
        lambda data, dtype: [
            values(data, "bool", s) if i == 0 else values(data, dtype, s)
            for i, s in enumerate(data.draw(broadcastable_shapes(3)))
        ],
        NUMBERS,
    ),
    _unary("floor", ew.Floor, rt.floor, np.floor, dtypes=NUMBERS, grad_draw=_midpoints(0.5)),
    _unary("ceil", ew.Ceil, rt.ceil, np.ceil, dtypes=NUMBERS, grad_draw=_midpoints(0.5)),
    _unary("round", ew.Round, rt.round, np.round, dtypes=NUMBERS, grad_draw=_midpoints(0.5)),
    _unary(
        "round_2",
        ew.Round,
        lambda x: rt.round(x, 2),
        lambda x: np.round(x, 2),
        grad_draw=_midpoints(0.005),
    ),
    _unary(
        "cast_f32",
        ew.Cast,
        lambda x: rt.cast(x, "float32"),
        lambda x: x.astype("float32"),
        dtypes=NUMBERS,
        rtol=2e-5,
        atol=1e-6,
        fd=False,
        notes="float32 is too coarse for central differences; cast_f32_f64 checks them",
    ),
    _unary(
        "cast_f32_f64",
        ew.Cast,
        lambda x: rt.cast(rt.cast(x, "float32"), "float64"),
        lambda x: x.astype("float32").astype("float64"),
        fd=False,
        notes="rounding to float32 makes the function a staircase too fine for central "
        "differences; jax.grad is compared",
    ),
    _unary(
        "cast_i32",
        ew.Cast,
        lambda x: x.astype("int32"),
        lambda x: x.astype("int32"),
        dtypes=NUMBERS,
        grad=False,
        notes="integer output: no gradient",
    ),
    _unary("exp", ew.Exp, rt.exp, _as_float(np.exp), dtypes=NUMBERS),
    _unary("exp2", ew.Exp2, rt.exp2, _as_float(np.exp2)),
    _unary("expm1", ew.Expm1, rt.expm1, _as_float(np.expm1)),
    _unary("log", ew.Log, rt.log, _as_float(np.log), lo=0.01, hi=10.0),
    _unary("log2", ew.Log2, rt.log2, _as_float(np.log2), lo=0.01, hi=10.0),
    _unary("log10", ew.Log10, rt.log10, _as_float(np.log10), lo=0.01, hi=10.0),
    _unary("log1p", ew.Log1p, rt.log1p, _as_float(np.log1p), lo=-0.9, hi=5.0),
    _unary(
        "sqrt",
        ew.Sqrt,
        rt.sqrt,
        _as_float(np.sqrt),
        lo=0.0,
        hi=10.0,
        dtypes=NUMBERS,
        grad_draw=draw_in((0.01, 10.0)),  # sqrt'(0) is infinite
    ),
    _unary("sin", ew.Sin, rt.sin, np.sin),
    _unary("cos", ew.Cos, rt.cos, np.cos),
    _unary("tan", ew.Tan, rt.tan, np.tan, lo=-1.4, hi=1.4),
    _unary("arcsin", ew.Arcsin, rt.arcsin, np.arcsin, lo=-0.99, hi=0.99),
    _unary("arccos", ew.Arccos, rt.arccos, np.arccos, lo=-0.99, hi=0.99),
    _unary("arctan", ew.Arctan, rt.arctan, np.arctan),
    _binary(
        "arctan2",
        ew.Arctan2,
        rt.arctan2,
        _as_float(np.arctan2),
        dtypes=FLOATS,
        grad_draw=_arctan2_draw,
    ),
    _unary("sinh", ew.Sinh, rt.sinh, np.sinh),
    _unary("cosh", ew.Cosh, rt.cosh, np.cosh),
    _unary("tanh", ew.Tanh, rt.tanh, np.tanh),
    _unary("arcsinh", ew.Arcsinh, rt.arcsinh, np.arcsinh),
    _unary("arccosh", ew.Arccosh, rt.arccosh, np.arccosh, lo=1.01, hi=10.0),
    _unary("arctanh", ew.Arctanh, rt.arctanh, np.arctanh, lo=-0.99, hi=0.99),
    _binary(
        "logaddexp",
        ew.Logaddexp,
        rt.logaddexp,
        np.logaddexp,
        a=(-50, 50),
        b=(-50, 50),
        dtypes=FLOATS,
    ),
    OpRecord("equal", (ew.Equal,), rt.equal, np.equal, _grid(2), NUMBERS),
    OpRecord("not_equal", (ew.NotEqual,), rt.not_equal, np.not_equal, _grid(2), NUMBERS),
    OpRecord("less", (ew.Less,), lambda x, y: x < y, np.less, _grid(2), NUMBERS),
    OpRecord("less_equal", (ew.LessEqual,), lambda x, y: x <= y, np.less_equal, _grid(2), NUMBERS),
    OpRecord("greater", (ew.Greater,), lambda x, y: x > y, np.greater, _grid(2), NUMBERS),
    OpRecord(
        "greater_equal",
        (ew.GreaterEqual,),
        lambda x, y: x >= y,
        np.greater_equal,
        _grid(2),
        NUMBERS,
    ),
    OpRecord("isnan", (ew.Isnan,), rt.isnan, np.isnan, draw_in((-5, 5), special=True)),
    OpRecord("isinf", (ew.Isinf,), rt.isinf, np.isinf, draw_in((-5, 5), special=True)),
    OpRecord("isfinite", (ew.Isfinite,), rt.isfinite, np.isfinite, draw_in((-5, 5), special=True)),
    OpRecord(
        "logical_and", (ew.LogicalAnd,), lambda x, y: x & y, np.logical_and, _bools(2), ("bool",)
    ),
    OpRecord(
        "logical_or", (ew.LogicalOr,), lambda x, y: x | y, np.logical_or, _bools(2), ("bool",)
    ),
    OpRecord("logical_not", (ew.LogicalNot,), lambda x: ~x, np.logical_not, _bools(1), ("bool",)),
    OpRecord(
        "logical_and_numbers", (ew.LogicalAnd,), rt.logical_and, np.logical_and, _grid(2), NUMBERS
    ),
    # bitwise: on ints and bools (where they are the logical operations); the operators
    # (& | ^ ~ << >>) build these on integer Vars (tests/tensor/test_everyday.py)
    OpRecord(
        "bitcast_convert_type",
        (ew.BitcastConvert,),
        lambda x: rt.bitcast_convert_type(rt.bitcast_convert_type(x, "int64"), "float64") * 2,
        lambda x: x.view(np.int64).view(np.float64) * 2,
        draw_in((-5.0, 5.0)),
        dtypes=("float64",),
        grad=False,
    ),
    OpRecord(
        "bitwise_and",
        (ew.BitwiseAnd,),
        rt.bitwise_and,
        np.bitwise_and,
        _integers((-100, 100), (-100, 100)),
        BITS,
    ),
    OpRecord(
        "bitwise_or",
        (ew.BitwiseOr,),
        rt.bitwise_or,
        np.bitwise_or,
        _integers((-9, 9), (-9, 9)),
        BITS,
    ),
    OpRecord(
        "bitwise_xor",
        (ew.BitwiseXor,),
        rt.bitwise_xor,
        np.bitwise_xor,
        _integers((-100, 100), (-100, 100)),
        BITS,
    ),
    OpRecord("bitwise_not", (ew.BitwiseNot,), rt.invert, np.invert, _integers((-100, 100)), BITS),
    OpRecord(
        "left_shift",
        (ew.LeftShift,),
        lambda x, y: x << y,
        np.left_shift,
        _integers((-100, 100), (0, 7)),
        BITS[:3],
    ),
    OpRecord(
        "right_shift",
        (ew.RightShift,),
        lambda x, y: x >> y,
        np.right_shift,
        _integers((-100, 100), (0, 7)),
        BITS[:3],
    ),
]
