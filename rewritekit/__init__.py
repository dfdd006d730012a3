"""rewritekit: a tensor-expression compiler with a persistent graph IR.

Example:
    >>> import rewritekit as rk
    >>> import rewritekit.tensor as rt
    >>> x = rt.vector("x")
    >>> rt.exp(x) is rt.exp(x)
    True
"""

from rewritekit import tensor
from rewritekit.compile import CompiledFunction, function
from rewritekit.errors import (
    BroadcastError,
    DTypeError,
    GraphTypeError,
    ReplaceError,
    RewritekitError,
)
from rewritekit.ir import (
    Apply,
    Constant,
    Op,
    TensorType,
    Var,
    ancestors,
    dprint,
    graph_inputs,
    intern_stats,
    replace,
    toposort,
)

__version__ = "0.1.0"

__all__ = [
    "Apply",
    "BroadcastError",
    "CompiledFunction",
    "Constant",
    "DTypeError",
    "GraphTypeError",
    "Op",
    "ReplaceError",
    "RewritekitError",
    "TensorType",
    "Var",
    "ancestors",
    "dprint",
    "function",
    "graph_inputs",
    "intern_stats",
    "replace",
    "tensor",
    "toposort",
]
