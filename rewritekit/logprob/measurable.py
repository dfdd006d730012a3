"""Finding log-densities with rules: the ``LogDensity`` placeholder and its rule set.

``log_density(x, value)`` is an unevaluated node: "the log-density of the random quantity
``x`` at ``value``". The rules below rewrite it until only ordinary tensor graphs remain:

- ``log_density(draw, v)``, where ``draw`` is a random variable's draw: its density
  (``rewritekit.logprob.densities``); a Bernoulli whose ``p`` is ``sigmoid(z)`` gets the
  logit density at ``z``, exact where ``sigmoid(z)`` rounds to 0 or 1;
- ``log_density(exp(a), v) = log_density(a, log v) - log v``: a log-normal-like variable;
- ``log_density(c + a, v) = log_density(a, v - c)`` and ``a - c``, ``c - a``: shifts;
- ``log_density(c * a, v) = log_density(a, v / c) - log|c|`` and ``a / c``: scalings;
- ``log_density(-a, v) = log_density(a, -v)``: negation.

Each inversion carries its change-of-variables Jacobian (none for discrete ``a``, whose
probabilities a bijection keeps). ``c`` must not depend on a random draw (``a``'s own or
another unvalued one) and must not broadcast ``a`` to more elements: then the variable is
not a bijective image of ``a`` and no rule fires, so ``logprob`` reports that it found no
density. A length of ``c`` known only at run time is checked at run time against ``a``'s
static length (``c`` is broadcast to ``a``'s shape, which raises there if it does not fit).
Users add their own inversions with ``rule(log_density(pattern, v), ...)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Op, TensorType, Var, as_var
from rewritekit.ir.patterns import pattern_function
from rewritekit.ir.types import result_dtype
from rewritekit.logprob import densities
from rewritekit.random import is_draw
from rewritekit.rules import RuleSet, lvar, rule
from rewritekit.rules.rule import Bindings
from rewritekit.tensor.random import RandomVariable
from rewritekit.tensor.special import Sigmoid

__all__ = ["LogDensity", "is_random", "log_density", "rules"]


class LogDensity(Op):
    """The unevaluated log-density of ``x`` at ``value`` (inputs ``x``, ``value``).

    Parameters: ``dtype`` (the float dtype of the value's log-density) and ``ndim`` (its
    rank: ``x``'s batch rank). It has no implementation: the rules in ``rules`` replace it,
    and ``logprob`` reports any that is left.
    """

    __props__ = ("dtype", "ndim")

    def infer_types(self, x: TensorType, value: TensorType) -> tuple[TensorType, ...]:
        return (TensorType(self.dtype, (None,) * self.ndim),)

    def vjp(self, inputs: Any, outputs: Any, cotangents: Any) -> list[Var | None]:
        raise NotImplementedError(
            "log_density is a placeholder; call rewritekit.logprob.logprob to get a graph"
        )


@pattern_function(LogDensity, inputs=("x", "value"))
def log_density(x: Any, value: Any) -> Var:
    """The placeholder node ``log_density(x, value)`` (see the module docstring).

    Its dtype is the float dtype of ``x`` and ``value`` (float64 for integer ones); its
    rank is ``x``'s rank less the core axes of the random variable it is built on.
    """
    x, value = as_var(x, context="log_density: x"), as_var(value, context="log_density: value")
    kinds = [t.type for t in (x, value) if t.type.kind == "f"]
    dtype = result_dtype(*kinds, 0.0)
    return LogDensity(dtype, x.ndim - _core_ndim(x))(x, value)


def _core_ndim(x: Var) -> int:
    return max((v.owner.op.ndim_supp for v in draws_in(x)), default=0)


is_random = is_draw  # the draw (second output) of a random variable


def local_ancestors(var: Var) -> list[Var]:
    """``var`` and the Vars it is computed from, not entering random variables: their
    outputs are listed, but not their keys and parameters. A model's random variables are
    chained through their keys, so a plain ``ancestors`` walk from any one of them would
    cross the whole model, and doing that per variable made ``joint_logprob`` quadratic."""
    seen = {var}
    stack = [var]
    while stack:
        owner = stack.pop().owner
        if owner is None or isinstance(owner.op, RandomVariable):
            continue
        for inp in owner.inputs:
            if inp not in seen:
                seen.add(inp)
                stack.append(inp)
    return list(seen)


def draws_in(var: Var) -> list[Var]:
    """The random draws ``var`` is computed from, directly (not through another draw)."""
    return [v for v in local_ancestors(var) if is_random(v)]


# --- the rules ----------------------------------------------------------------------

a, c, v = lvar("a"), lvar("c"), lvar("v")


def _density(b: Bindings) -> Var | None:
    """the density of a random variable's draw (rewritekit.logprob.densities)"""
    if not is_random(b.a):
        return None
    node = b.a.owner
    name, params = node.op.name, node.inputs[2:]
    p = params[0]
    if name == "bernoulli" and p.owner is not None and isinstance(p.owner.op, Sigmoid):
        name, params = "bernoulli_logit", p.owner.inputs  # exact where sigmoid(z) rounds to 1
    density = getattr(densities, name)(b.v, *params)
    return _as_type_of(density, b.term)


def _as_type_of(graph: Var, term: Var) -> Var:
    return graph if graph.dtype == term.dtype else rt.cast(graph, term.dtype)


def _parameter(b: Bindings) -> Var | None:
    """``c`` as the inversion uses it, or None where ``c`` holds a random draw or broadcasts
    ``a`` to more elements (then the variable is not a bijective image of ``a``).

    Static lengths are checked here. A length of ``c`` known only at run time, against a
    static length of ``a``, is checked at run time: ``c`` is broadcast to ``a``'s trailing
    shape there, which raises if it does not fit. Against a length of ``a`` that is also
    unknown, there is nothing to check it against, and it is taken as it is.
    """
    if b.c.ndim > b.a.ndim or draws_in(b.c):
        return None
    tail = b.a.type.shape[b.a.ndim - b.c.ndim :]
    pairs = list(zip(b.c.type.shape, tail, strict=True))
    if not all(d == 1 or d == e or d is None for d, e in pairs):
        return None
    if not any(d is None and e is not None for d, e in pairs):
        return b.c
    lengths = rt.shape(b.c)  # c's own lengths, where a's are unknown too
    target = tuple(
        e if e is not None else d if d is not None else lengths[i] for i, (d, e) in enumerate(pairs)
    )
    return rt.broadcast_to(b.c, target)


def _continuous(b: Bindings) -> bool:
    return b.a.type.kind == "f"


def _jacobian(b: Bindings, log_scale: Var) -> Var:
    return log_scale if _continuous(b) else rt.zeros_like(log_scale)


def _exp(b: Bindings) -> Var | None:
    """log_density(a, log v) - log v, and -inf where v <= 0"""
    if not _continuous(b):
        return None
    positive = b.v > 0
    safe = rt.where(positive, b.v, 1)  # no NaN from log(v <= 0), nor from its gradient
    inner = log_density(b.a, rt.log(safe)) - rt.log(safe)
    return rt.where(positive, inner, -np.inf)


def _shift(equation: str, value_of: Any) -> Any:
    def shift(b: Bindings) -> Var | None:
        c = _parameter(b)
        return None if c is None else log_density(b.a, value_of(b.v, c))

    shift.__doc__ = f"{equation} (a shift: no Jacobian)"
    return shift


def _scale(b: Bindings) -> Var | None:
    """log_density(a, v / c) - log|c|"""
    c = _parameter(b)
    if c is None:
        return None
    return log_density(b.a, b.v / c) - _jacobian(b, rt.log(rt.abs(c)))


def _divide(b: Bindings) -> Var | None:
    """log_density(a, v * c) + log|c|"""
    c = _parameter(b)
    if c is None:
        return None
    return log_density(b.a, b.v * c) + _jacobian(b, rt.log(rt.abs(c)))


def _negate(b: Bindings) -> Var:
    """log_density(a, -v)"""
    return log_density(b.a, -b.v)


_plus = _shift("log_density(a, v - c)", lambda v, c: v - c)
_minus = _shift("log_density(a, v + c)", lambda v, c: v + c)
_from = _shift("log_density(a, c - v)", lambda v, c: c - v)

rules = RuleSet(
    [
        rule(log_density(a, v), _density, name="random_variable_density"),
        rule(log_density(rt.exp(a), v), _exp, name="exp_of_random"),
        rule(log_density(c + a, v), _plus, name="shift_of_random"),
        rule(log_density(a - c, v), _minus, name="random_minus"),
        rule(log_density(c - a, v), _from, name="minus_random"),
        rule(log_density(c * a, v), _scale, name="scale_of_random"),
        rule(log_density(a / c, v), _divide, name="random_over"),
        rule(log_density(-a, v), _negate, name="negated_random"),
    ],
    name="logprob",
    tags={"logprob"},
)
