"""The elementwise family in one namespace: the base classes and dtype rules (``ufunc``),
logic, bitwise operations, transcendental functions and arithmetic. The backends implement
the family in one table each (``rewritekit/backends/<backend>/elemwise.py``); the special
and Bessel functions (``special``, ``bessel``) are elementwise too, with tables of their
own.
"""

# ruff: noqa: F401 (the Op classes are this namespace's too: ew.Exp, ew.Equal)
from rewritekit.tensor.arithmetic import *  # noqa: F403
from rewritekit.tensor.arithmetic import (
    Abs,
    Add,
    Cast,
    Ceil,
    Clip,
    Extremum,
    Floor,
    FloorDivide,
    Maximum,
    Minimum,
    Mod,
    Multiply,
    Negative,
    Power,
    Reciprocal,
    Round,
    Sign,
    Square,
    Subtract,
    TrueDivide,
    Where,
)
from rewritekit.tensor.arithmetic import __all__ as _arithmetic
from rewritekit.tensor.bitwise import *  # noqa: F403
from rewritekit.tensor.bitwise import (
    BitcastConvert,
    Bitwise,
    BitwiseAnd,
    BitwiseNot,
    BitwiseOr,
    BitwiseXor,
    LeftShift,
    RightShift,
)
from rewritekit.tensor.bitwise import __all__ as _bitwise
from rewritekit.tensor.logic import *  # noqa: F403
from rewritekit.tensor.logic import (
    Equal,
    Greater,
    GreaterEqual,
    Isfinite,
    Isinf,
    Isnan,
    Less,
    LessEqual,
    LogicalAnd,
    LogicalNot,
    LogicalOr,
    NotEqual,
)
from rewritekit.tensor.logic import __all__ as _logic
from rewritekit.tensor.transcendental import *  # noqa: F403
from rewritekit.tensor.transcendental import (
    Arccos,
    Arccosh,
    Arcsin,
    Arcsinh,
    Arctan,
    Arctan2,
    Arctanh,
    Cos,
    Cosh,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log1p,
    Log2,
    Log10,
    Logaddexp,
    Sin,
    Sinh,
    Sqrt,
    Tan,
    Tanh,
)
from rewritekit.tensor.transcendental import __all__ as _transcendental
from rewritekit.tensor.ufunc import (
    ComplexFloatElemwise,
    Elemwise,
    FloatElemwise,
    Logical,
    Predicate,
    defvjp,
    float_dtype,
)

__all__ = sorted([*_arithmetic, *_bitwise, *_logic, *_transcendental])
