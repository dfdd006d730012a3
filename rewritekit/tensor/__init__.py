"""The NumPy-like tensor API: ``import rewritekit.tensor as rt``.

Example:
    >>> import rewritekit.tensor as rt
    >>> x = rt.vector("x")
    >>> y = rt.exp(x) * 2.0 + 1.0
    >>> y.dtype
    'float64'
"""

from rewritekit.tensor.basic import as_tensor, constant, matrix, scalar, tensor, vector
from rewritekit.tensor.elemwise import (
    add,
    exp,
    log,
    log1p,
    multiply,
    negative,
    subtract,
    true_divide,
)
from rewritekit.tensor.variable import install_operators

install_operators()

__all__ = [
    "add",
    "as_tensor",
    "constant",
    "exp",
    "log",
    "log1p",
    "matrix",
    "multiply",
    "negative",
    "scalar",
    "subtract",
    "tensor",
    "true_divide",
    "vector",
]
