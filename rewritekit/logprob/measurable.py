"""Finding log-densities with rules: the ``LogDensity`` placeholder and its rule set.

``log_density(x, value)`` is an unevaluated node: "the log-density of the random quantity
``x`` at ``value``". The rules below rewrite it until only ordinary tensor graphs remain:

- ``log_density(draw, v)``, where ``draw`` is a random variable's draw: its density
  (``rewritekit.logprob.densities``); a Bernoulli whose ``p`` is ``sigmoid(z)`` gets the
  logit density at ``z``, exact where ``sigmoid(z)`` rounds to 0 or 1, and one whose ``p``
  is ``ndtr(z)`` the probit density (``log_ndtr``);
- ``log_density(exp(a), v) = log_density(a, log v) - log v``: a log-normal-like variable;
- ``log_density(c + a, v) = log_density(a, v - c)`` and ``a - c``, ``c - a``: shifts;
- ``log_density(c * a, v) = log_density(a, v / c) - log|c|`` and ``a / c``: scalings;
- ``log_density(-a, v) = log_density(a, -v)``: negation;
- ``log_density(f(a), v)`` for the invertible elementwise Ops ``f`` of
  ``rewritekit.logprob.invertible`` (a table of inverses, Jacobians and branches: ``log``,
  ``sigmoid``, ``logit``, ``tanh``, ``arctanh``, ``sqrt``, ``reciprocal``, ``softplus``,
  ``log1p``, ``expm1``, integer powers; ``abs`` and ``square`` by their two branches);
- discrete results: ``a > c`` (and ``>=``, ``<``, ``<=``, either order) is a Bernoulli with
  the CDF's probabilities; ``floor``, ``ceil`` and ``round`` of a continuous draw give
  differences of CDFs in log space (``rewritekit.logprob.cdfs``);
- censoring: ``clip(x, lo, hi)``, ``maximum(x, c)``, ``minimum(x, c)`` of a draw ``x`` with
  bounds that hold no draw: ``log P(X <= lo)`` at ``lo``, ``log P(X >= hi)`` at ``hi`` (for a
  discrete ``x``, ``log P(X > hi - 1)``), ``x``'s density between, ``-inf`` outside
  (``rewritekit.logprob.cdfs``);
- truncation: ``truncate(x, lower, upper)`` (``rewritekit.logprob.truncation``);
- mixtures: ``where(z, a1, a0)``, ``stack([a_0, ...])[z]`` (scalars) and
  ``stack([a_0, ...])[z, arange(n)]`` (vectors), with ``z`` an unvalued Bernoulli or
  categorical draw: ``logsumexp_k(log P(z = k) + log_density(a_k, v))`` elementwise. The
  components may be images of draws. Every element must stand for its own ``z`` and its
  own component elements (no component or ``z`` broadcast to more elements: then the
  elements are dependent and no rule fires); ``z``'s parameters must hold no unvalued
  draw, and no component may read ``z``. A ``z`` that holds no draw (given a value by
  ``joint_logprob``) selects the component's density instead.

Each inversion carries its change-of-variables Jacobian (none for discrete ``a``, whose
probabilities a bijection keeps). ``c`` must not depend on a random draw (``a``'s own or
another unvalued one) and must not broadcast ``a`` to more elements: then the variable is
not a bijective image of ``a`` and no rule fires, so ``logprob`` reports that it found no
density. A length of ``c`` known only at run time is checked at run time against ``a``'s
static length (``c`` is broadcast to ``a``'s shape, which raises there if it does not fit).
Users add their own inversions with ``rule(log_density(pattern, v), ...)``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Constant, Op, TensorType, Var, as_var
from rewritekit.ir.patterns import pattern_function
from rewritekit.ir.types import result_dtype
from rewritekit.logprob import cdfs, densities, truncation
from rewritekit.logprob.invertible import inverse_of
from rewritekit.random import is_draw
from rewritekit.random.composite import BUILTIN
from rewritekit.rules import RuleSet, lvar, rule
from rewritekit.rules.rule import Bindings
from rewritekit.tensor.custom_random import CustomRV
from rewritekit.tensor.joining import Concatenate
from rewritekit.tensor.layout import ExpandDims
from rewritekit.tensor.random import KEY_TYPE, RandomVariable
from rewritekit.tensor.special import Ndtr, Sigmoid
from rewritekit.tensor.subtensor import ARRAY, SCALAR, Subtensor
from rewritekit.tensor.transcendental import Exp

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
    seen = {var: None}  # a dict: the order is the walk's, the same on every call
    stack = [var]
    while stack:
        owner = stack.pop().owner
        if owner is None or isinstance(owner.op, RandomVariable):
            continue
        for inp in owner.inputs:
            if inp not in seen:
                seen[inp] = None
                stack.append(inp)
    return list(seen)


def draws_in(var: Var) -> list[Var]:
    """The random draws ``var`` is computed from, directly (not through another draw)."""
    return [v for v in local_ancestors(var) if is_random(v)]


# --- the rules ----------------------------------------------------------------------

a, c, v = lvar("a"), lvar("c"), lvar("v")


def _density(b: Bindings) -> Var | None:
    """the density of a random variable's draw (rewritekit.logprob.densities)"""
    if not is_random(b.a) or isinstance(b.a.owner.op, CustomRV):  # composites: composite.py
        return None
    return _as_type_of(_draw_density(b.a, b.v), b.term)


def has_closed_density(draw: Var) -> bool:
    """True when ``_draw_density`` gives the draw's density directly: a built-in's, or a
    composite's (``rr.custom``) author's ``logp`` or built-in closed form; a composite
    without either has its density derived by the rules (``composite.py``) instead."""
    op = draw.owner.op
    return not isinstance(op, CustomRV) or op.spec.logp is not None or op.spec in _BUILTINS


_BUILTINS = set(BUILTIN.values())


def _draw_density(draw: Var, value: Any) -> Var:
    node = draw.owner
    name, params = node.op.name, node.inputs[2:]
    if isinstance(node.op, CustomRV) and node.op.spec.logp is not None:
        return as_var(node.op.spec.logp(value, *params), context=f"{name}: logp")
    p = params[0]
    if name == "bernoulli" and p.owner is not None and isinstance(p.owner.op, Sigmoid):
        name, params = "bernoulli_logit", p.owner.inputs  # exact where sigmoid(z) rounds to 1
    if name == "bernoulli" and p.owner is not None and isinstance(p.owner.op, Ndtr):
        name, params = "bernoulli_probit", p.owner.inputs  # exact where ndtr(z) rounds to 1
    return getattr(densities, name)(value, *params)


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
    return _fitted(b.c, b.a)


def _fitted(c: Var, a: Var) -> Var | None:
    """``c`` as a parameter of ``a``'s image (``_parameter``), or None."""
    if c.ndim > a.ndim or draws_in(c):
        return None
    tail = a.type.shape[a.ndim - c.ndim :]
    pairs = list(zip(c.type.shape, tail, strict=True))
    if not all(d == 1 or d == e or d is None for d, e in pairs):
        return None
    if not any(d is None and e is not None for d, e in pairs):
        return c
    lengths = rt.shape(c)  # c's own lengths, where a's are unknown too
    target = tuple(
        e if e is not None else d if d is not None else lengths[i] for i, (d, e) in enumerate(pairs)
    )
    return rt.broadcast_to(c, target)


def _continuous(b: Bindings) -> bool:
    return b.a.type.kind == "f"


def _jacobian(b: Bindings, log_scale: Var) -> Var:
    log_scale = _over_core(log_scale, b)
    return log_scale if _continuous(b) else rt.zeros_like(log_scale)


def _over_core(term: Var, b: Bindings, reduce: Any = rt.sum) -> Var:
    """``term``, elementwise in the value ``b.v``, as a term of ``b.a``'s log-density: for a
    multivariate draw, broadcast to the value's shape and reduced over its core axes (a
    log-Jacobian summed, ``K log|c|`` for a scalar ``c``; a mask by ``rt.all``)."""
    core = _core_ndim(b.a)
    if not core:
        return term
    full = rt.broadcast_to(term, rt.shape(b.v))
    return reduce(full, axis=tuple(range(full.ndim - core, full.ndim)))


def _exp(b: Bindings) -> Var | None:
    """log_density(a, log v) - log v, and -inf where v <= 0"""
    if not _continuous(b):
        return None
    owner = b.v.owner
    if owner is not None and isinstance(owner.op, Exp):  # v = exp(w): log v is w, exactly
        w = owner.inputs[0]  # (log(lognormal) at 1e3: exp(1e3) overflows, w does not)
        return log_density(b.a, w) - _over_core(w, b)
    positive = b.v > 0
    safe = rt.where(positive, b.v, 1)  # no NaN from log(v <= 0), nor from its gradient
    inner = log_density(b.a, rt.log(safe)) - _over_core(rt.log(safe), b)
    return rt.where(_over_core(positive, b, rt.all), inner, -np.inf)


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


# --- censoring: clip, maximum and minimum of a draw --------------------------------------

lo, hi = lvar("lo"), lvar("hi")


def _censored(b: Bindings) -> Var | None:
    """log P(X <= lo) at lo, log P(X >= hi) at hi, log_density(a, v) between, -inf outside"""
    return _censor(b, b.lo, b.hi)


def _censored_below(b: Bindings) -> Var | None:
    """log P(X <= c) at c, log_density(a, v) above, -inf below"""
    return _censor(b, b.c, None)


def _censored_above(b: Bindings) -> Var | None:
    """log P(X >= c) at c, log_density(a, v) below, -inf above"""
    return _censor(b, None, b.c)


def _censor(b: Bindings, lower: Var | None, upper: Var | None) -> Var | None:
    """The censored density of the draw ``b.a`` (aeppl's and PyMC's ``Censored``): the mass
    beyond each bound sits on the bound. A discrete draw's mass at ``upper`` is
    P(X > ceil(upper) - 1). Bounds must be parameters (``_fitted``)."""
    x, v = b.a, b.v
    if not is_random(x) or x.owner.op.ndim_supp:
        return None
    fitted = [None if c is None else _fitted(c, x) for c in (lower, upper)]
    if any(f is None and c is not None for f, c in zip(fitted, (lower, upper), strict=True)):
        return None
    lower, upper = fitted
    logp = log_density(x, v)
    if upper is not None:
        edge = upper if _continuous(b) else _ceil(upper) - 1
        at_upper = _nan_to_ninf(truncation.log_cdfs(x, edge)[1])
        logp = rt.where(rt.equal(v, upper), at_upper, rt.where(v > upper, -np.inf, logp))
    if lower is not None:
        at_lower = _nan_to_ninf(truncation.log_cdfs(x, lower)[0])
        logp = rt.where(rt.equal(v, lower), at_lower, rt.where(v < lower, -np.inf, logp))
    return _as_type_of(logp, b.term)


def _ceil(c: Var) -> Var:
    return rt.ceil(c) if c.type.kind == "f" else c


def _nan_to_ninf(logp: Var) -> Var:
    """-inf where a probability is NaN (invalid parameters): a term of a sum, as densities"""
    return rt.where(rt.isnan(logp), -np.inf, logp)


# --- discrete results of draws: comparisons and rounding --------------------------------


def _has_cdf(x: Var) -> bool:
    if not is_random(x) or x.owner.op.ndim_supp:
        return False
    op = x.owner.op
    return op.name in cdfs.LOGCDF or (isinstance(op, CustomRV) and op.spec.logcdf is not None)


def _comparison(above: bool, strict: bool) -> Any:
    """The Bernoulli of ``a > c`` (``above``; ``a < c`` otherwise), ``>=``/``<=`` with
    ``strict`` False: log P(true) and log P(false) from the draw's log-CDFs."""

    def compare(b: Bindings) -> Var | None:
        x, c = b.a, _parameter(b)
        if c is None or not _has_cdf(x):
            return None
        # the point whose CDF splits true from false: P(X > e) is "above"; for a discrete
        # X, X >= c is X > ceil(c) - 1 and X < c is X <= ceil(c) - 1
        edge = c if _continuous(b) or strict == above else _ceil(c) - 1
        log_f, log_s = (_nan_to_ninf(p) for p in truncation.log_cdfs(x, edge))
        true, false = (log_s, log_f) if above else (log_f, log_s)
        v = b.v
        logp = rt.where(rt.equal(v, 1), true, rt.where(rt.equal(v, 0), false, -np.inf))
        return _as_type_of(logp, b.term)

    sign = (">" if above else "<") + ("" if strict else "=")
    compare.__doc__ = f"a Bernoulli: log P(a {sign} c) at 1, its complement at 0"
    return compare


def _rounding(offsets: tuple[float, float], what: str) -> Any:
    """The discretized density of ``floor``/``ceil``/``round`` of a continuous draw: log P(k +
    lo <= X <= k + hi) at an integer k (a log-diff-exp of log-CDFs, from the upper tail
    where that keeps the digits), -inf at non-integers."""

    def discretized(b: Bindings) -> Var | None:
        x = b.a
        if not _continuous(b) or not _has_cdf(x):
            return None
        k = b.v
        integer = rt.logical_and(rt.equal(rt.floor(k), k), rt.isfinite(k))
        safe = rt.where(integer, k, 0)
        mass = _nan_to_ninf(truncation.log_mass(x, safe + offsets[0], safe + offsets[1]))
        return _as_type_of(rt.where(integer, mass, -np.inf), b.term)

    discretized.__doc__ = f"log P({what}) at an integer k, -inf elsewhere"
    return discretized


# --- truncation (rewritekit.logprob.truncation) ------------------------------------------


def _truncated(b: Bindings) -> Var | None:
    """log_density(x, v) - log P(lower <= X <= upper) inside the bounds, -inf outside"""
    found = truncation.parts(b.a)
    if found is None:
        return None
    x, lower, upper = found
    mass = truncation.log_mass(x, lower, upper)
    inside = rt.logical_and(rt.logical_and(b.v >= lower, b.v <= upper), mass > -np.inf)
    return _as_type_of(rt.where(inside, log_density(x, b.v) - mass, -np.inf), b.term)


# --- mixtures: a draw chosen by an unvalued discrete draw --------------------------------

z, a0, a1 = lvar("z"), lvar("a0"), lvar("a1")
_INDICES = {"bernoulli": 2, "bernoulli_logit": 2, "categorical": None}  # None: p's length


def _switch(b: Bindings) -> Var | None:
    """logaddexp over k of log P(z = k) + log_density(a_k, v) (a z with no draw: a choice)

    For a Bernoulli draw ``z``; a ``z`` that holds no draw (a value, a parameter) selects:
    ``where(z, log_density(a1, v), log_density(a0, v))``.
    """
    chosen = b.term.owner.inputs[0]
    if truncation.parts(chosen) is not None:
        return None
    return _choice(b, b.z, [b.a0, b.a1], chosen, lambda logps: rt.where(b.z, *logps[::-1]))


def _indexed(b: Bindings) -> Var | None:
    """logsumexp over k of log P(z = k) + log_density(a_k, v), for stack(a_k)[z]

    ``stack([a_0, ...])[z]`` with scalars, or ``stack([a_0, ...])[z, arange(n)]`` with
    vectors of length n; ``z`` a categorical (or Bernoulli, two components) draw. A ``z``
    that holds no draw picks by the same index from the stacked log-densities.
    """
    found = _stacked_choice(b.a)
    if found is None:
        return None
    index, rest, comps = found
    op = b.a.owner.op
    return _choice(b, index, comps, b.a, lambda logps: op(rt.stack(logps), index, *rest))


def _choice(b: Bindings, index: Var, comps: list[Var], chosen: Var, select: Any) -> Var | None:
    """The density of ``chosen``, the element of ``comps`` that ``index`` picks: a mixture
    over an unvalued bounded discrete draw, or a selection by a known ``index``. Every
    component (and a drawn index) must stand one to one with ``chosen``'s elements."""
    if not _elementwise(comps, chosen):
        return None
    if not is_random(index):
        if draws_in(index):
            return None
        return _as_type_of(select([log_density(c, b.v) for c in comps]), b.term)
    weights = _mixture_weights(index, comps, chosen)
    if weights is None:
        return None
    terms = [w + log_density(c, b.v) for w, c in zip(weights, comps, strict=True)]
    mixed = rt.logaddexp(*terms) if len(terms) == 2 else rt.logsumexp(rt.stack(terms), axis=0)
    return _as_type_of(mixed, b.term)


def _mixture_weights(index: Var, comps: list[Var], chosen: Var) -> list[Var] | None:
    """log P(index = k) per component, or None where ``index`` is not a bernoulli or a
    categorical over exactly the components, is not one to one with ``chosen``, has
    parameters holding other draws, or is read by a component."""
    op, params = index.owner.op, index.owner.inputs[2:]
    if op.name not in _INDICES or not _elementwise([index], chosen):
        return None
    count = _INDICES[op.name] or params[0].type.shape[-1]
    if count != len(comps) or any(draws_in(p) for p in params):
        return None
    if any(_reads(c, index) for c in comps):
        return None
    return [_draw_density(index, k) for k in range(len(comps))]


def _elementwise(parts: list[Var], whole: Var) -> bool:
    """True when each of ``parts`` has ``whole``'s rank and is not broadcast to more
    elements in it (a length 1 against another); lengths known only at run time are
    taken as they are."""
    return all(
        part.ndim == whole.ndim
        and not any(
            d == 1 and e != 1 for d, e in zip(part.type.shape, whole.type.shape, strict=True)
        )
        for part in parts
    )


def _stacked_choice(var: Var) -> tuple[Var, list[Var], list[Var]] | None:
    """``(index, other index parts, components)`` for ``stack(components)[index]`` with
    scalar components and index, or ``stack(components)[index, arange(n)]`` with vectors
    of length n; else None."""
    node = var.owner
    if node is None or not isinstance(node.op, Subtensor):
        return None
    comps = _stacked(node.inputs[0])
    if comps is None or len(node.inputs) < 2:  # not a stack, or a static slice of one
        return None
    index, rest = node.inputs[1], list(node.inputs[2:])
    if index.ndim != comps[0].ndim:
        return None
    if node.op.index == (SCALAR,) and index.ndim == 0:
        return index, rest, comps
    if node.op.index == (ARRAY, ARRAY) and index.ndim == 1 and _is_iota(rest[0], comps):
        return index, rest, comps
    return None


def _stacked(var: Var) -> list[Var] | None:
    """The inputs of ``stack(inputs)`` (axis 0), else None."""
    node = var.owner
    if node is None or not isinstance(node.op, Concatenate) or node.op.axis != 0:
        return None
    parts = [p.owner for p in node.inputs]
    if not all(p is not None and isinstance(p.op, ExpandDims) and p.op.axes == (0,) for p in parts):
        return None
    return [p.inputs[0] for p in parts]


def _is_iota(var: Var, comps: list[Var]) -> bool:
    """True when ``var`` is the constant ``arange(n)``, n the components' static length."""
    n = comps[0].type.shape[0]
    return (
        isinstance(var, Constant)
        and n is not None
        and np.array_equal(var.data, np.arange(n))
        and all(c.type.shape[0] in (n, None) for c in comps)
    )


# Draws' keys are irrelevant to their densities: ``logprob`` gives the draws it sees
# stand-in keys, which cut the chain of keys (``core._cut_keys``). Each draw gets its own,
# so two independent draws of one distribution stay two nodes.
_KEY_STANDINS: list[Var] = []


def key_standin(position: int) -> Var:
    """The stand-in key of the ``position``-th draw ``logprob`` sees (one Var each)."""
    while len(_KEY_STANDINS) <= position:
        _KEY_STANDINS.append(Var(KEY_TYPE, "key"))
    return _KEY_STANDINS[position]


def _reads(var: Var, target: Var) -> bool:
    """True when ``var`` is computed from the draw ``target``, through other draws'
    parameters too (not their keys, which carry no value). A draw of ``target``'s
    distribution with its size and parameters counts as ``target`` whatever its key
    (``logprob`` gives the draws it sees a stand-in key, not those behind other draws),
    unless both keys are stand-ins: then they are two draws."""
    seen, stack = {var}, [var]
    op, rest = target.owner.op, target.owner.inputs[1:]
    key = target.owner.inputs[0]
    cut = key in _KEY_STANDINS
    while stack:
        current = stack.pop()
        owner = current.owner
        if owner is None:
            continue
        if is_random(current) and owner.op == op and _same(owner.inputs[1:], rest):
            other = owner.inputs[0]
            if other is key or not (cut and other in _KEY_STANDINS):
                return True
        inputs = owner.inputs[2:] if isinstance(owner.op, RandomVariable) else owner.inputs
        for inp in inputs:
            if inp not in seen:
                seen.add(inp)
                stack.append(inp)
    return False


def _same(xs: tuple[Var, ...], ys: tuple[Var, ...]) -> bool:
    return len(xs) == len(ys) and all(x is y for x, y in zip(xs, ys, strict=True))


_plus = _shift("log_density(a, v - c)", lambda v, c: v - c)
_minus = _shift("log_density(a, v + c)", lambda v, c: v + c)
_from = _shift("log_density(a, c - v)", lambda v, c: c - v)


def _invertible(b: Bindings) -> Var | None:
    """logsumexp over the branches of log_density(x, inverse(v)) + log|d inverse / dv|, and
    -inf outside the image (rewritekit.logprob.invertible)"""
    found = inverse_of(b.a)
    if found is None or found[1].type.kind != "f" or not draws_in(found[1]):
        return None
    entry, x = found
    if len(entry.branches) > 1 and _core_ndim(x):  # 2**K preimages, not a sum per element
        return None
    inside = entry.image(b.v)
    safe = rt.where(inside, b.v, entry.safe)  # the branches never see v outside the image
    terms = [
        _as_type_of(
            log_density(x, branch.inverse(safe)) + _over_core(branch.log_jac(safe), b), b.term
        )
        for branch in entry.branches
    ]
    return rt.where(_over_core(inside, b, rt.all), functools.reduce(rt.logaddexp, terms), -np.inf)


rules = RuleSet(
    [
        rule(log_density(a, v), _truncated, name="truncated"),
        rule(log_density(a, v), _density, name="random_variable_density"),
        rule(log_density(rt.exp(a), v), _exp, name="exp_of_random"),
        rule(log_density(c + a, v), _plus, name="shift_of_random"),
        rule(log_density(a - c, v), _minus, name="random_minus"),
        rule(log_density(c - a, v), _from, name="minus_random"),
        rule(log_density(c * a, v), _scale, name="scale_of_random"),
        rule(log_density(a / c, v), _divide, name="random_over"),
        rule(log_density(-a, v), _negate, name="negated_random"),
        rule(log_density(rt.clip(a, lo, hi), v), _censored, name="censored"),
        rule(log_density(rt.maximum(a, c), v), _censored_below, name="censored_below"),
        rule(log_density(rt.minimum(a, c), v), _censored_above, name="censored_above"),
        rule(log_density(rt.where(z, a1, a0), v), _switch, name="switch_mixture"),
        rule(log_density(a, v), _indexed, name="indexed_mixture"),
        rule(log_density(a, v), _invertible, name="invertible_of_random"),
        rule(log_density(rt.greater(a, c), v), _comparison(True, True), name="greater"),
        rule(log_density(rt.greater_equal(a, c), v), _comparison(True, False), name="at_least"),
        rule(log_density(rt.less(a, c), v), _comparison(False, True), name="less"),
        rule(log_density(rt.less_equal(a, c), v), _comparison(False, False), name="at_most"),
        rule(log_density(rt.less(c, a), v), _comparison(True, True), name="greater_than_c"),
        rule(log_density(rt.less_equal(c, a), v), _comparison(True, False), name="at_least_c"),
        rule(log_density(rt.greater(c, a), v), _comparison(False, True), name="less_than_c"),
        rule(log_density(rt.greater_equal(c, a), v), _comparison(False, False), name="at_most_c"),
        rule(log_density(rt.floor(a), v), _rounding((0.0, 1.0), "k <= a < k + 1"), name="floor"),
        rule(log_density(rt.ceil(a), v), _rounding((-1.0, 0.0), "k - 1 < a <= k"), name="ceil"),
        rule(
            log_density(rt.round(a), v),
            _rounding((-0.5, 0.5), "k - 1/2 <= a <= k + 1/2"),
            name="round",
        ),
    ],
    name="logprob",
    tags={"logprob"},
)
