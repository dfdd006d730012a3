"""The persistent graph IR: types, Ops, hash-consed nodes, traversal, replace, printing.

Nothing here imports the rest of rewritekit; every other layer builds on this one.
"""

from rewritekit.ir.intern import InternStats, intern_stats
from rewritekit.ir.nodes import Apply, Constant, Var, apply_op, as_var, constant, short_name
from rewritekit.ir.op import Grads, Op, Vars
from rewritekit.ir.printing import dprint
from rewritekit.ir.traversal import ancestors, clients, graph_inputs, replace, toposort
from rewritekit.ir.types import (
    SUPPORTED_DTYPES,
    TensorType,
    broadcast_shapes,
    normalize_dtype,
    result_dtype,
)

__all__ = [
    "SUPPORTED_DTYPES",
    "Apply",
    "Constant",
    "Grads",
    "InternStats",
    "Op",
    "TensorType",
    "Var",
    "Vars",
    "ancestors",
    "apply_op",
    "as_var",
    "broadcast_shapes",
    "clients",
    "constant",
    "dprint",
    "graph_inputs",
    "intern_stats",
    "normalize_dtype",
    "replace",
    "result_dtype",
    "short_name",
    "toposort",
]
