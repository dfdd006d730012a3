"""rewritekit: a tensor-expression compiler with a persistent graph IR.

Example:
    >>> import rewritekit as rk
    >>> import rewritekit.tensor as rt
    >>> x = rt.vector("x")
    >>> rt.exp(x) is rt.exp(x)
    True
"""

from rewritekit import rules, tensor
from rewritekit.autodiff import grad, hessian, jacobian, jvp, vjp
from rewritekit.compile import CompiledFunction, function
from rewritekit.compile import clear_cache as clear_compile_cache
from rewritekit.errors import (
    BroadcastError,
    DTypeError,
    GraphFileError,
    GraphIndexError,
    GraphRuntimeError,
    GraphTypeError,
    GraphvizNotFoundError,
    NonFiniteError,
    ReplaceError,
    RewriteCycleError,
    RewritekitError,
    RewriteMismatch,
    RuleError,
    RuleTypeError,
)
from rewritekit.graphfile import dumps, load, loads, register_op, save
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
from rewritekit.jaxpr import from_jax, optimize
from rewritekit.pictures import draw, draw_rewrite, to_dot
from rewritekit.rules import RuleSet, explain, lvar, relation, rewrite, rule
from rewritekit.tensor.control import cond, fori_loop, map, scan, while_loop
from rewritekit.tensor.control.api import switch
from rewritekit.vectorize import vectorize, vmap

__version__ = "0.1.0"

__all__ = [
    "Apply",
    "BroadcastError",
    "CompiledFunction",
    "Constant",
    "DTypeError",
    "GraphFileError",
    "GraphIndexError",
    "GraphRuntimeError",
    "GraphTypeError",
    "GraphvizNotFoundError",
    "NonFiniteError",
    "Op",
    "ReplaceError",
    "RewriteCycleError",
    "RewriteMismatch",
    "RewritekitError",
    "RuleError",
    "RuleSet",
    "RuleTypeError",
    "TensorType",
    "Var",
    "ancestors",
    "clear_compile_cache",
    "cond",
    "dprint",
    "draw",
    "draw_rewrite",
    "dumps",
    "explain",
    "fori_loop",
    "from_jax",
    "function",
    "grad",
    "graph_inputs",
    "hessian",
    "intern_stats",
    "jacobian",
    "jvp",
    "load",
    "loads",
    "lvar",
    "map",
    "optimize",
    "register_op",
    "relation",
    "replace",
    "rewrite",
    "rule",
    "rules",
    "save",
    "scan",
    "switch",
    "tensor",
    "to_dot",
    "toposort",
    "vectorize",
    "vjp",
    "vmap",
    "while_loop",
]
