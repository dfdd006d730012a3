"""Elementwise transforms of a draw, as data: each invertible Op's inverse and Jacobian.

An entry of ``INVERSES`` says how an elementwise Op ``y = f(x)`` maps a draw ``x`` onto
``y``: the image of ``f`` (where ``y`` can lie), and one branch per preimage: ``x =
inverse(y)`` with ``log |d inverse / dy|``. One rule (``invertible_of_random``) uses every
entry: the density of ``y`` at ``v`` is

    logsumexp over the branches of  log_density(x, inverse(v)) + log |d inverse / dv|

inside the image, ``-inf`` outside it. Monotone Ops have one branch (``log``, ``sigmoid``,
``tanh``, ``sqrt``, odd powers, ...); ``abs`` and even powers have two (``x = v`` and ``x =
-v``: the folded distribution, and ``x**2`` of a normal is a chi-square with one degree of
freedom). A branch outside ``x``'s support contributes ``-inf``, so ``square`` of a positive
draw is its one branch in effect. A discrete ``x`` is mapped only by injective Ops, with no
Jacobian (a bijection keeps the probabilities). ``exp``, shifts, scalings and negation
have their own rules in ``measurable`` (they came first), in the same form.

Each entry's functions see only inputs inside the image (the rule feeds the others a safe
point, then puts ``-inf`` there), so no NaN reaches a value or a gradient.

Example:
    >>> k, z = rr.normal(rr.key(), 0.0, 1.0)
    >>> lp = rl.logprob(rt.sigmoid(z), rt.scalar("v"))  # the logit-normal density
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Constant, Var
from rewritekit.tensor.arithmetic import Abs, Power, Reciprocal, Square
from rewritekit.tensor.special import Logit, Sigmoid, Softplus
from rewritekit.tensor.transcendental import Arctanh, Expm1, Log, Log1p, Sqrt, Tanh

__all__ = ["INVERSES", "Branch", "Inverse", "inverse_of"]

Fn = Callable[[Var], Var]


@dataclass(frozen=True)
class Branch:
    """One preimage of ``y``: ``x = inverse(y)``, ``log_jac(y) = log |d inverse / dy|``."""

    inverse: Fn
    log_jac: Fn


@dataclass(frozen=True)
class Inverse:
    """How an elementwise Op maps onto its image: ``image(v)`` (a bool graph: ``v`` can be
    a value of the Op), ``safe`` (a point inside the image, given to the branches where
    ``v`` is outside it) and the branches (one for an injective Op)."""

    image: Fn
    safe: float
    branches: tuple[Branch, ...]

    @property
    def injective(self) -> bool:
        return len(self.branches) == 1


def _everywhere(v: Var) -> Var:
    return rt.isfinite(v)


def _positive(v: Var) -> Var:
    return v > 0


def _nonnegative(v: Var) -> Var:
    return v >= 0


def _unit(v: Var) -> Var:
    return rt.logical_and(v > 0, v < 1)


def _open_unit_ball(v: Var) -> Var:
    return rt.abs(v) < 1


def _log_one_minus_tanh_squared(v: Var) -> Var:
    """log(1 - tanh(v)**2) = 2 (log 2 - |v| - softplus(-2 |v|)): finite far out."""
    a = rt.abs(v)
    return 2 * (math.log(2.0) - a - rt.softplus(-2 * a))


INVERSES: dict[type, Inverse] = {
    Log: Inverse(_everywhere, 0.0, (Branch(rt.exp, lambda v: v),)),
    Log1p: Inverse(_everywhere, 0.0, (Branch(rt.expm1, lambda v: v),)),
    Expm1: Inverse(lambda v: v > -1, 0.0, (Branch(rt.log1p, lambda v: -rt.log1p(v)),)),
    Sigmoid: Inverse(_unit, 0.5, (Branch(rt.logit, lambda v: -rt.log(v) - rt.log1p(-v)),)),
    Logit: Inverse(
        _everywhere,
        0.0,
        (Branch(rt.sigmoid, lambda v: rt.log_sigmoid(v) + rt.log_sigmoid(-v)),),
    ),
    Tanh: Inverse(_open_unit_ball, 0.0, (Branch(rt.arctanh, lambda v: -rt.log1p(-rt.square(v))),)),
    Arctanh: Inverse(_everywhere, 0.0, (Branch(rt.tanh, _log_one_minus_tanh_squared),)),
    Sqrt: Inverse(_nonnegative, 1.0, (Branch(rt.square, lambda v: math.log(2.0) + rt.log(v)),)),
    Reciprocal: Inverse(
        lambda v: rt.logical_and(rt.isfinite(v), rt.not_equal(v, 0)),
        1.0,
        (Branch(rt.reciprocal, lambda v: -2 * rt.log(rt.abs(v))),),
    ),
    # softplus^-1(v) = v + log(-expm1(-v)); its derivative 1 / (1 - exp(-v))
    Softplus: Inverse(
        _positive,
        1.0,
        (Branch(lambda v: v + rt.log(-rt.expm1(-v)), lambda v: -rt.log(-rt.expm1(-v))),),
    ),
    Abs: Inverse(
        _nonnegative,
        1.0,
        (Branch(lambda v: v, lambda v: 0 * v), Branch(rt.negative, lambda v: 0 * v)),
    ),
    Square: Inverse(
        _nonnegative,
        1.0,
        (
            Branch(rt.sqrt, lambda v: -math.log(2.0) - 0.5 * rt.log(v)),
            Branch(lambda v: -rt.sqrt(v), lambda v: -math.log(2.0) - 0.5 * rt.log(v)),
        ),
    ),
}


def _power(exponent: int) -> Inverse | None:
    """``x ** n`` for a nonzero integer constant ``n``: one branch for odd ``n`` (a signed
    root), two for even ``n`` (``+-`` the root of ``v >= 0``); ``log |d x / dv| = -log |n|
    + (1/n - 1) log |v|``."""
    root = 1.0 / exponent

    def log_jac(v: Var) -> Var:
        return -math.log(abs(exponent)) + (root - 1) * rt.log(rt.abs(v))

    if exponent % 2:

        def signed_root(v: Var) -> Var:
            return rt.sign(v) * rt.abs(v) ** root

        image = _everywhere if exponent > 0 else (lambda v: rt.not_equal(v, 0))
        return Inverse(image, 1.0, (Branch(signed_root, log_jac),))

    def root_of(v: Var) -> Var:
        return v**root

    image = _nonnegative if exponent > 0 else _positive
    return Inverse(image, 1.0, (Branch(root_of, log_jac), Branch(lambda v: -(v**root), log_jac)))


def inverse_of(y: Var) -> tuple[Inverse, Var] | None:
    """``(entry, x)`` when ``y`` is an invertible elementwise Op of ``x`` (``INVERSES``, or
    ``x ** n`` for a nonzero integer constant ``n``), else None."""
    node = y.owner
    if node is None:
        return None
    op_type = type(node.op)
    if op_type in INVERSES:
        return INVERSES[op_type], node.inputs[0]
    if op_type is Power and isinstance(node.inputs[1], Constant):
        n = np.asarray(node.inputs[1].data)
        if n.ndim == 0 and float(n).is_integer() and 0 < abs(float(n)) <= 64:
            return _power(int(float(n))), node.inputs[0]
    return None
