"""Comparisons, tests and logical connectives: elementwise Ops with bool results, which
carry no gradient."""

from __future__ import annotations

from rewritekit.tensor.ufunc import Logical, Predicate

__all__ = [
    "equal",
    "greater",
    "greater_equal",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "logical_and",
    "logical_not",
    "logical_or",
    "not_equal",
]


class Equal(Predicate):
    """x == y."""

    nin = 2
    commutative = True


class NotEqual(Predicate):
    """x != y."""

    nin = 2
    commutative = True


class Less(Predicate):
    """x < y."""

    nin = 2
    kinds = "biuf"


class LessEqual(Predicate):
    """x <= y."""

    nin = 2
    kinds = "biuf"


class Greater(Predicate):
    """x > y."""

    nin = 2
    kinds = "biuf"


class GreaterEqual(Predicate):
    """x >= y."""

    nin = 2
    kinds = "biuf"


class Isnan(Predicate):
    """True where x is NaN."""


class Isinf(Predicate):
    """True where x is +inf or -inf."""


class Isfinite(Predicate):
    """True where x is neither NaN nor infinite."""


class LogicalAnd(Logical):
    """x and y, by truth value."""

    nin = 2
    commutative = True


class LogicalOr(Logical):
    """x or y, by truth value."""

    nin = 2
    commutative = True


class LogicalNot(Logical):
    """not x, by truth value."""


equal = Equal()
not_equal = NotEqual()
less = Less()
less_equal = LessEqual()
greater = Greater()
greater_equal = GreaterEqual()
isnan = Isnan()
isinf = Isinf()
isfinite = Isfinite()
logical_and = LogicalAnd()
logical_or = LogicalOr()
logical_not = LogicalNot()
