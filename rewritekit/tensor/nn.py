"""``rt.nn``: the activation and normalization functions of ``jax.nn``, with its names,
arguments and values (derivatives included: ``relu``'s is 0 at 0, as JAX's), built from
the elementwise and reduction Ops.

One name means another thing here than at ``rt``'s top level: ``rt.nn.log1mexp(x)`` is
JAX's ``log(1 - exp(-x))`` (for x >= 0), while ``rt.log1mexp(x)`` is PyTensor's
``log(1 - exp(x))`` (for x <= 0); the first is the second at ``-x``.

Example:
    >>> x = rt.vector("x")
    >>> rt.nn.one_hot(rt.vector("i", dtype="int64"), 4).type.shape
    (None, 4)
"""

from __future__ import annotations

import math
from typing import Any

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Var, as_var
from rewritekit.ir.nodes import short_name
from rewritekit.tensor.axes import axis_index, is_int
from rewritekit.tensor.creation import arange
from rewritekit.tensor.elemwise import (
    abs,
    cast,
    equal,
    expm1,
    float_dtype,
    greater,
    greater_equal,
    less_equal,
    log,
    maximum,
    minimum,
    sqrt,
    tanh,
    where,
)
from rewritekit.tensor.layout import expand_dims
from rewritekit.tensor.reduction import mean as _mean
from rewritekit.tensor.shape_vectors import shape_i
from rewritekit.tensor.special import erf, log_sigmoid, sigmoid, softplus
from rewritekit.tensor.special import log1mexp as _log1mexp_of_negative
from rewritekit.tensor.statistics import log_softmax, logsumexp, softmax
from rewritekit.tensor.subtensor import getitem

__all__ = [
    "celu",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]


def _x(name: str, x: Any) -> Var:
    x = as_var(x, context=f"nn.{name}: input 'x'")
    return x if x.type.kind in "fc" else cast(x, float_dtype(x.dtype))


def identity(x: Any) -> Var:
    """``x`` unchanged."""
    return as_var(x, context="nn.identity: input 'x'")


def relu(x: Any) -> Var:
    """max(x, 0); the derivative is 0 at 0 (as ``jax.nn.relu``)."""
    x = _x("relu", x)
    return where(greater(x, 0), x, 0)


def relu6(x: Any) -> Var:
    """min(max(x, 0), 6); the derivative is 0 at 0 and at 6 (as ``jax.nn.relu6``)."""
    x = _x("relu6", x)
    return where(greater(x, 0), where(greater_equal(x, 6), 6, x), 0)


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Var:
    """x where x >= 0, ``negative_slope * x`` below."""
    x = _x("leaky_relu", x)
    return where(greater_equal(x, 0), x, negative_slope * x)


def elu(x: Any, alpha: Any = 1.0) -> Var:
    """x where x > 0, ``alpha * expm1(x)`` elsewhere."""
    x = _x("elu", x)
    return where(greater(x, 0), x, alpha * expm1(where(greater(x, 0), 0, x)))


def celu(x: Any, alpha: Any = 1.0) -> Var:
    """max(x, 0) + alpha * min(expm1(x / alpha), 0)."""
    x = _x("celu", x)
    return maximum(x, 0) + alpha * expm1(minimum(x, 0) / alpha)


def selu(x: Any) -> Var:
    """The scaled ``elu`` of Klambauer et al. (2017), JAX's constants."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * elu(_x("selu", x), alpha)


def silu(x: Any) -> Var:
    """x * sigmoid(x) (``swish``)."""
    x = _x("silu", x)
    return x * sigmoid(x)


swish = silu


def gelu(x: Any, approximate: bool = True) -> Var:
    """The Gaussian error linear unit: x * Phi(x), by JAX's tanh approximation unless
    ``approximate=False`` (then with ``erf``)."""
    x = _x("gelu", x)
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
        return 0.5 * x * (1 + tanh(inner))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def mish(x: Any) -> Var:
    """x * tanh(softplus(x))."""
    x = _x("mish", x)
    return x * tanh(softplus(x))


def soft_sign(x: Any) -> Var:
    """x / (|x| + 1)."""
    x = _x("soft_sign", x)
    return x / (abs(x) + 1)


def squareplus(x: Any, b: Any = 4) -> Var:
    """(x + sqrt(x**2 + b)) / 2."""
    x = _x("squareplus", x)
    return (x + sqrt(x * x + b)) / 2


def hard_tanh(x: Any) -> Var:
    """x clipped to [-1, 1] (derivative 1 inside, 0 outside, as JAX)."""
    x = _x("hard_tanh", x)
    return where(greater(x, 1), 1, where(greater(-1, x), -1, x))


def hard_sigmoid(x: Any) -> Var:
    """relu6(x + 3) / 6."""
    return relu6(_x("hard_sigmoid", x) + 3.0) / 6.0


def hard_silu(x: Any) -> Var:
    """x * hard_sigmoid(x) (``hard_swish``)."""
    x = _x("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def sparse_plus(x: Any) -> Var:
    """0 for x <= -1, (x + 1)**2 / 4 for -1 < x < 1, x for x >= 1 (``jax.nn.sparse_plus``)."""
    x = _x("sparse_plus", x)
    middle = (x + 1) * (x + 1) / 4
    return where(less_equal(x, -1), 0, where(greater_equal(x, 1), x, middle))


def sparse_sigmoid(x: Any) -> Var:
    """The derivative of ``sparse_plus``: 0, (x + 1) / 2, 1 on its three pieces."""
    x = _x("sparse_sigmoid", x)
    return where(less_equal(x, -1), 0, where(greater_equal(x, 1), 1, (x + 1) / 2))


def log1mexp(x: Any) -> Var:
    """log(1 - exp(-x)) for x >= 0, as ``jax.nn.log1mexp`` (NaN below 0); accurate near 0
    and for large x (``rt.log1mexp(-x)``)."""
    return _log1mexp_of_negative(-_x("log1mexp", x))


def logmeanexp(x: Any, axis: Any = None, keepdims: bool = False) -> Var:
    """log(mean(exp(x))) along ``axis``, without overflow: logsumexp minus log(n)."""
    x = _x("logmeanexp", x)
    axes = range(x.ndim) if axis is None else (axis,) if is_int(axis) else axis
    count = 1
    for a in axes:
        count = count * shape_i(x, axis_index("nn.logmeanexp", a, x.ndim, x))
    return logsumexp(x, axis=axis, keepdims=keepdims) - log(cast(count, x.dtype))


def standardize(
    x: Any, axis: Any = -1, mean: Any = None, variance: Any = None, epsilon: Any = 1e-5
) -> Var:
    """(x - mean) / sqrt(variance + epsilon) along ``axis`` (the mean and the variance of
    ``x`` there unless given)."""
    x = _x("standardize", x)
    if mean is None:
        mean = _mean(x, axis=axis, keepdims=True)
    if variance is None:
        centred = x - _mean(x, axis=axis, keepdims=True)
        variance = _mean(centred * centred, axis=axis, keepdims=True)
    return (x - mean) / sqrt(variance + epsilon)


def glu(x: Any, axis: int = -1) -> Var:
    """The gated linear unit: ``a * sigmoid(b)`` for the two halves a, b of ``x`` along
    ``axis``.

    Raises:
        ShapeError: the length of ``axis`` is odd or unknown.
    """
    x = _x("glu", x)
    axis = axis_index("nn.glu", axis, x.ndim, x)
    n = x.type.shape[axis]
    if n is None or n % 2:
        raise ShapeError(
            f"nn.glu: axis {axis} of {short_name(x)} ({x.type}) must have an even static length"
        )
    before = (slice(None),) * axis
    a = getitem(x, (*before, slice(0, n // 2)))
    b = getitem(x, (*before, slice(n // 2, n)))
    return a * sigmoid(b)


def one_hot(x: Any, num_classes: int, *, dtype: Any = "float64", axis: int = -1) -> Var:
    """1 where the new axis ``axis`` (of length ``num_classes``) equals ``x``'s value, 0
    elsewhere (out-of-range and negative values give all zeros), as ``jax.nn.one_hot``.

    Raises:
        GraphTypeError: ``num_classes`` is not a static int.
    """
    x = as_var(x, context="nn.one_hot: input 'x'")
    if not is_int(num_classes):
        raise GraphTypeError(
            f"nn.one_hot: num_classes must be a static int, got {num_classes!r} (JAX needs it "
            "static too)"
        )
    axis = axis_index("nn.one_hot", axis, x.ndim + 1, x)
    classes = arange(int(num_classes), dtype=x.dtype if x.type.kind in "iu" else "int64")
    classes = expand_dims(classes, tuple(a for a in range(x.ndim + 1) if a != axis))
    return cast(equal(expand_dims(x, axis), classes), dtype)
