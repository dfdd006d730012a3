"""Exceptions raised by rewritekit.

Every error names the culprit (the Op, the input, the rule), then what was expected and
what was found. They subclass the builtin ``TypeError``/``ValueError`` so callers that
catch those keep working.
"""

from __future__ import annotations

__all__ = [
    "BroadcastError",
    "DTypeError",
    "GraphFileError",
    "GraphIndexError",
    "GraphRuntimeError",
    "GraphTypeError",
    "GraphvizNotFoundError",
    "NonFiniteError",
    "ReplaceError",
    "RewriteCycleError",
    "RewriteMismatch",
    "RewritekitError",
    "RuleError",
    "RuleTypeError",
    "ShapeError",
]


class RewritekitError(Exception):
    """Base class of every error rewritekit raises on purpose."""


class GraphTypeError(RewritekitError, TypeError):
    """A graph was built from values of the wrong kind (an Op got a bad input)."""


class DTypeError(RewritekitError, TypeError):
    """A dtype is unknown, unsupported, or cannot be cast safely."""


class BroadcastError(RewritekitError, ValueError):
    """Static shapes that cannot be broadcast together."""


class ReplaceError(RewritekitError, ValueError):
    """A replacement in ``replace`` would change a variable's type."""


class ShapeError(RewritekitError, ValueError):
    """An axis, length or shape argument that does not fit the input (e.g. axis 3 of a 2-d
    tensor, a reshape to a different size)."""


class RuleError(RewritekitError, ValueError):
    """A rule or rule set that cannot work as written (a pattern that cannot be matched, a
    right side with unbound variables, an unknown rule-set name)."""


class RuleTypeError(RewritekitError, TypeError):
    """A rule's replacement would change the type (dtype or a known static shape) of the
    node it replaces."""


class RewriteCycleError(RewritekitError, ValueError):
    """Rewriting did not converge: rules undo each other or keep growing a term."""


class RewriteMismatch(RewritekitError, AssertionError):
    """A rewrite changed a value on real inputs (``rk.function(..., check_rewrites=True)``)."""


class GraphIndexError(RewritekitError, IndexError):
    """An index out of bounds when a compiled function ran: names the graph input(s) the
    index came from, the axis, the index and the length."""


class GraphRuntimeError(RewritekitError, RuntimeError):
    """A failure inside a compiled function (a shape mismatch, a failed reshape, a singular
    matrix): names the Op, its inputs and their shapes, and the rule that made the node;
    the backend's exception is chained."""


class NonFiniteError(RewritekitError, FloatingPointError):
    """``debug_nans=True``: an output was NaN or infinite where the inputs were finite;
    names the first node that produced it."""


class GraphFileError(RewritekitError, ValueError):
    """A saved graph file that cannot be loaded (malformed, an unknown Op name, a constant
    whose bytes disagree with its dtype and shape): names the place in the file."""


class GraphvizNotFoundError(RewritekitError, RuntimeError):
    """Drawing a picture needs the Graphviz program ``dot``, which is not installed; names
    the command that installs it (``rk.to_dot`` gives the DOT text without it)."""
