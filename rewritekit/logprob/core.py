"""``logprob`` and ``joint_logprob``: from a model graph to its log-density graph.

``joint_logprob`` also sums out the bounded discrete draws that have no value (by
enumeration, one element at a time: ``logprob_terms``) and adds ``potential`` terms.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Constant, Var, as_var, replace, short_name
from rewritekit.logprob import (
    composite,
    joins,
    loops,
    measurable,
    structure,
    transforms,
    truncation,
)
from rewritekit.logprob.marginal import (
    MAX_SUPPORT,
    Term,
    describe,
    in_graph_order,
    shared_latents,
    sum_out_latents,
)
from rewritekit.logprob.measurable import (
    LogDensity,
    draws_in,
    is_random,
    key_standin,
    local_ancestors,
    log_density,
)
from rewritekit.logprob.transforms import Transform
from rewritekit.random.composite import BUILTIN
from rewritekit.rules import as_ruleset, rewrite
from rewritekit.tensor import random as rv
from rewritekit.tensor.custom_random import CustomRV
from rewritekit.tensor.random import RandomVariable
from rewritekit.tensor.reduction import sum as _sum

__all__ = [
    "MAX_SUPPORT",
    "Potential",
    "default_transform",
    "joint_logprob",
    "logprob",
    "logprob_terms",
    "potential",
]

_LOG = (
    rv.HalfCauchyRV,
    rv.ExponentialRV,
    rv.GammaRV,
    rv.InverseGammaRV,
    rv.WeibullRV,
    rv.ChiSquareRV,
    rv.WaldRV,
    rv.HalfStudentTRV,
)

# the built-in composites (rr.custom) on the positive reals
_LOG_COMPOSITES = (BUILTIN["halfnormal"], BUILTIN["lognormal"])


def default_transform(x: Var) -> Transform | None:
    """The transform that maps ``x``'s support onto unconstrained reals, or None.

    ``log`` for positive distributions (halfnormal, halfcauchy, exponential, gamma,
    inverse_gamma, lognormal, weibull, chisquare, wald, half_student_t), ``logodds`` for
    beta, ``interval(low, high)`` for uniform (its own parameters), ``lower_bound(scale)``
    for pareto, ``interval(mu - pi, mu + pi)`` for von_mises, ``simplex`` for dirichlet,
    ``cholesky_corr`` for lkj_cholesky; for truncated_normal and a continuous
    ``truncate(x, lower, upper)``, ``interval``, ``lower_bound`` or ``upper_bound`` as the
    bounds are finite (a constant infinity is infinite; a symbolic bound is taken as
    finite); None for the rest (real-valued and discrete ones, and variables that are not
    a random variable's draw). A stacked output
    of a scan gets the transform of the draw it stacks, where that computes nothing from
    the loop (an ``interval`` whose bounds the body computes gets None).

    Example:
        >>> _, tau = rr.halfcauchy(rr.key(), 5.0)
        >>> default_transform(tau)
        log
    """
    if loops.is_scan_output(x):
        return loops.step_transform(x, default_transform)
    found = truncation.parts(x)
    if found is not None:
        base, lower, upper = found
        return _bounded(lower, upper) if base.type.kind == "f" else None
    if not is_random(x):
        return None
    op, params = x.owner.op, x.owner.inputs[2:]
    if isinstance(op, _LOG) or (isinstance(op, CustomRV) and op.spec in _LOG_COMPOSITES):
        return transforms.log
    if isinstance(op, rv.BetaRV):
        return transforms.logodds
    if isinstance(op, rv.UniformRV):
        return transforms.interval(*params)
    if isinstance(op, rv.DirichletRV):
        return transforms.simplex
    if isinstance(op, rv.ParetoRV):
        return transforms.lower_bound(params[1])
    if isinstance(op, rv.TruncatedNormalRV):
        return _bounded(params[2], params[3])
    if isinstance(op, rv.VonMisesRV):
        return transforms.interval(params[0] - math.pi, params[0] + math.pi)
    if isinstance(op, rv.LKJCholeskyRV):
        return transforms.cholesky_corr
    return None


def _bounded(lower: Var, upper: Var) -> Transform | None:
    """``interval``, ``lower_bound`` or ``upper_bound`` for the bounds that are finite: a
    bound counts as infinite where it is a constant holding an infinity."""
    low, high = (not _infinite(b) for b in (lower, upper))
    if low and high:
        return transforms.interval(lower, upper)
    if low or high:
        return transforms.lower_bound(lower) if low else transforms.upper_bound(upper)
    return None


def _infinite(bound: Var) -> bool:
    return isinstance(bound, Constant) and bool(np.any(np.isinf(bound.data)))


# the rules that find densities: composites first (their names may be built-ins'), then
# inversions and discrete results, order statistics and structure, joins and affine maps
_STANDARD = composite.rules + measurable.rules + structure.rules + joins.rules


def logprob(x: Var, value: Any, *, rules: Any = None) -> Var:
    """The log-density of the random quantity ``x`` at ``value``, elementwise.

    ``x`` is a random variable's draw, or an image of one that the rules of
    ``rewritekit.logprob.measurable`` invert (``exp``, shifts and scalings by parameters,
    negation), each with its change-of-variables Jacobian. The result has ``x``'s batch
    shape (multivariate distributions reduce their core axis) and the value's float dtype;
    it is ``-inf`` outside the support and for invalid parameters.

    ``rules`` adds inversions of your own (rules whose left side is
    ``log_density(pattern, v)``), tried before the standard ones.

    ``x`` may also be a stacked ``y`` output of a ``scan`` that draws at each step: the
    result is then the scan of the per-step densities, each conditioned on the values of
    the steps before it (``rewritekit.logprob.loops``), shape ``(steps, *batch)``.

    Raises:
        GraphTypeError: no density was found for ``x``.
        ShapeError: ``value``'s rank differs from ``x``'s.

    Example:
        >>> _, x = rr.normal(rr.key(), 0.0, 2.0)
        >>> y = rt.exp(x)  # log-normal
        >>> lp = logprob(y, rt.scalar("y"))
    """
    if not isinstance(x, Var):
        raise GraphTypeError(f"logprob: x must be a Var, got {type(x).__name__}")
    value = as_var(value, context="logprob: value")
    if value.ndim != x.ndim:
        raise ShapeError(
            f"logprob: the value {short_name(value)} ({value.type}) must have the rank of "
            f"{describe(x)} ({x.type})"
        )
    if loops.is_scan_output(x):
        return loops.scan_logprob(x, value, {}, _step_logprob(rules))
    ruleset = _STANDARD if rules is None else as_ruleset(rules) + _STANDARD
    found = rewrite(log_density(_cut_keys(x), value), ruleset)
    left = _placeholders_left(found)
    if left:
        raise GraphTypeError(
            f"logprob: found no log-density for {describe(left[0].owner.inputs[0])}: it "
            "is not a random variable's draw, nor exp, a shift, scaling or negation of one "
            "(by parameters that hold no other random draw), nor an invertible elementwise "
            "function of a continuous one (log, sigmoid, abs, sqrt, integer powers...: "
            "rl.invertible.INVERSES), a comparison with a parameter or a floor, ceil or "
            "round of one, a censored one (clip, maximum, minimum with bounds "
            "that hold no draw), a truncated one (rl.truncate), a mixture (a draw "
            "indexed by a Bernoulli or categorical draw), the max or min of i.i.d. draws, a "
            "cumsum, reshape, transpose or static index of one, a concatenation or stack of "
            "independent ones, an affine map of a multivariate normal, or a composite "
            "(rr.custom) whose inner graph is one of these"
        )
    return found


def _placeholders_left(found: Var) -> list[Var]:
    """The ``log_density`` placeholders no rule replaced, in inner graphs too (the
    per-element density of a composite random variable)."""
    left, stack, seen = [], [found], set()
    while stack:
        for var in local_ancestors(stack.pop()):
            owner = var.owner
            if owner is None or owner in seen:
                continue
            seen.add(owner)
            if isinstance(owner.op, LogDensity):
                left.append(var)
            for graph in getattr(owner.op, "inner_graphs", ()):
                stack.extend(graph.outputs)
    return left


def logprob_terms(
    values: Mapping[Var, Any],
    *,
    transforms: Any = None,
    rules: Any = None,
    potentials: Sequence[Potential] = (),
) -> dict[str, Var]:
    """One log-density term per random quantity and per potential, each summed to a scalar.

    Each random quantity ``x`` (a key of ``values``) is replaced by its value variable
    wherever it appears (``replace``; the model graph itself is unchanged and still draws),
    so the terms are conditional densities whose sum is the joint log-density.

    A key may be a stacked ``y`` output of a ``scan`` that draws at each step (a time
    series): its term is a scan of the per-step densities, conditioned on the values of
    the earlier steps and of the scan's other valued outputs (``rewritekit.logprob.loops``).

    A bounded discrete draw ``z`` (bernoulli, categorical, discrete_uniform, binomial with a
    constant ``n``; at most ``MAX_SUPPORT`` values) that has no value but that terms depend
    on is summed out: the terms that read ``z`` and ``log P(z)`` are computed at each value
    ``k`` of the support, and their ``logsumexp`` over ``k`` replaces them, one element of
    ``z`` at a time (each element of a term must read one element of ``z``, at the same
    position: ``y[i] ~ Normal(mu[z[i]], s)``, or a ``z`` with one element). The merged
    term is named after the terms it replaces, joined by ``+`` (``"y"``, ``"y1+y2"``).

    Args:
        values: ``{x: value}``; a value is a Var or an array (observed data). With a
            transform, the value variable is on the unconstrained scale.
        transforms: None (none), ``"default"`` (``default_transform`` of each ``x``), or a
            dict ``{x: Transform or None}`` (missing entries get none).
        rules: extra inversion rules, as in ``logprob``.
        potentials: ``potential(name, term)`` objects: user terms added to the density,
            their random quantities replaced by their values like every other term's.

    Returns:
        ``{name: term}`` in the order of ``values``, named after the value variable (an
        unnamed value, such as observed data, is ``"value_<position>"``), then the
        potentials by name.

    Raises:
        GraphTypeError: a term depends on a random draw that has no value and is not summed
            out, or whose terms do not factor over its elements; a key is not a random
            quantity; one value variable is given for two random quantities; two value
            variables or potentials share a name.
        ShapeError: a value's shape does not fit its variable (after its transform).
    """
    pairs = _pairs(values)
    names = _names(pairs)
    chosen = _transforms(pairs, transforms)
    found = _potentials(potentials, names)
    stacked = _scan_values(pairs, chosen)
    lifted = {x: loops.lift_draws(x) for x in stacked}
    # a latent read by several terms stands for one value in all of them while they are
    # found (a mixture rule would otherwise sum it out of one term alone), then is summed out
    readers = [x.owner.inputs[2:] if is_random(x) else (x,) for x in pairs]
    shared = shared_latents(readers + [(p.term,) for p in found], pairs)
    conditioned: dict[Var, Var] = dict(shared)  # x -> its value on the constrained scale
    terms: dict[Var, Term] = {}
    for x in in_graph_order([lifted.get(x, x) for x in pairs], list(pairs)):
        value, transform = pairs[x], chosen[x]
        x_given = _given(lifted.get(x, x), conditioned)
        constrained, term = _term(x, x_given, value, transform, conditioned, stacked, rules)
        conditioned[x] = conditioned[lifted.get(x, x)] = constrained
        if is_random(x):  # its key, mapped to itself, stops replace at x's node
            conditioned[x.owner.outputs[0]] = x.owner.outputs[0]
        what = f"the log-density of {describe(x)} (value {short_name(value)})"
        terms[x] = Term(names[x], what, term)
    extra = [Term(p.name, f"the potential {p.name!r}", _given(p.term, conditioned)) for p in found]
    plain = {k: v for k, v in conditioned.items() if k not in shared}
    summed = sum_out_latents(
        [terms[x] for x in pairs] + extra,
        shared,
        given=lambda v: _given(v, plain),
        density=lambda z, value: logprob(z, value, rules=rules),
    )
    return {t.name: _sum(t.graph) for t in summed}


def joint_logprob(
    values: Mapping[Var, Any],
    *,
    transforms: Any = None,
    rules: Any = None,
    potentials: Sequence[Potential] = (),
) -> Var:
    """The joint log-density of the random quantities in ``values`` at their values, plus
    the ``potentials``: the sum of ``logprob_terms(values, ...)``, with bounded discrete
    draws that have no value summed out (see ``logprob_terms``).

    Example:
        >>> k, mu = rr.normal(rr.key(), 0.0, 5.0)
        >>> k, y = rr.normal(k, mu, 1.0, size=(3,))
        >>> lp = joint_logprob({mu: rt.scalar("mu"), y: np.array([0.5, 1.0, 1.5])})
        >>> lp.type
        TensorType(dtype='float64', shape=())
    """
    terms = list(
        logprob_terms(values, transforms=transforms, rules=rules, potentials=potentials).values()
    )
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def _pairs(values: Mapping[Var, Any]) -> dict[Var, Var]:
    if not isinstance(values, Mapping) or not values:
        raise GraphTypeError("joint_logprob: values must be a non-empty dict {x: value}")
    pairs: dict[Var, Var] = {}
    for x, value in values.items():
        if not isinstance(x, Var) or not (draws_in(x) or loops.draws_inside(x)):
            raise GraphTypeError(
                f"joint_logprob: key {x!r} is not a random quantity (it depends on no "
                "random variable's draw)"
            )
        pairs[x] = as_var(value, context=f"joint_logprob: value of {describe(x)}")
    return pairs


def _names(pairs: dict[Var, Var]) -> dict[Var, str]:
    """Each random quantity's term name: its value's (see ``logprob_terms``), all distinct."""
    names: dict[Var, str] = {}
    first: dict[str, tuple[int, Var]] = {}  # name -> (position, x) of its first use
    for i, (x, value) in enumerate(pairs.items()):
        name = names[x] = _name(value, i)
        if name not in first:
            first[name] = (i, x)
            continue
        j, other = first[name]
        if pairs[other] is value:
            raise GraphTypeError(
                f"joint_logprob: the same value variable {name!r} is given for two random "
                f"variables, {describe(other)} (key {j} of values) and {describe(x)} "
                f"(key {i}); give each its own value variable"
            )
        raise GraphTypeError(f"joint_logprob: two value variables are named {name!r}")
    return names


def _transforms(pairs: dict[Var, Var], spec: Any) -> dict[Var, Transform | None]:
    if spec is None:
        return dict.fromkeys(pairs)
    if isinstance(spec, str):
        if spec != "default":
            raise GraphTypeError(
                f"joint_logprob: transforms must be None, 'default' or a dict, got {spec!r}"
            )
        return {x: default_transform(x) for x in pairs}
    if not isinstance(spec, Mapping):
        raise GraphTypeError(
            f"joint_logprob: transforms must be None, 'default' or a dict, "
            f"got {type(spec).__name__}"
        )
    unknown = [k for k in spec if k not in pairs]
    if unknown:
        raise GraphTypeError(
            f"joint_logprob: transforms names {describe(unknown[0])}, which has no value"
        )
    for k, t in spec.items():
        if t is not None and not isinstance(t, Transform):
            raise GraphTypeError(
                f"joint_logprob: the transform of {describe(k)} must be a Transform or "
                f"None, got {t!r}"
            )
    return {x: spec.get(x) for x in pairs}


def _term(
    x: Var,
    x_given: Var,
    value: Var,
    transform: Transform | None,
    conditioned: dict[Var, Var],
    stacked: dict[Var, Var],
    rules: Any,
) -> tuple[Var, Var]:
    """``x``'s value on the constrained scale, and its log-density term at ``value``
    (``x_given``: ``x`` with the random quantities before it replaced by their values)."""
    if x in stacked:  # a scan's output: its other valued outputs condition its steps too
        given = {o.index: v for o, v in stacked.items() if o.owner is x.owner and o is not x}
        _check_fits(x, value, transform)
        constrained = stacked[x]
        logp = loops.scan_logprob(x_given, constrained, given, _step_logprob(rules))
    else:
        if transform is not None:
            transform = _condition(transform, conditioned)
        _check_fits(x, value, transform)
        constrained = value if transform is None else transform.backward(value)
        logp = logprob(x_given, constrained, rules=rules)
    if transform is None:
        return constrained, logp
    return constrained, _plus_jacobian(logp, transform.log_jac_det(value))


def _scan_values(pairs: dict[Var, Var], chosen: dict[Var, Transform | None]) -> dict[Var, Var]:
    """The values of the scans' outputs among ``pairs``, on their constrained scale."""
    return {
        x: value if chosen[x] is None else chosen[x].backward(value)
        for x, value in pairs.items()
        if loops.is_scan_output(x)
    }


def _step_logprob(rules: Any) -> loops.StepLogprob:
    """``logprob`` with the user's ``rules``, for the draws of a scan's steps."""
    return lambda y, value: logprob(y, value, rules=rules)


def _condition(transform: Transform, conditioned: dict[Var, Var]) -> Transform:
    """An interval whose bounds hold random quantities, with their values instead."""
    if isinstance(transform, transforms.Interval) and conditioned:
        lower, upper = (
            _given(b, conditioned) if isinstance(b, Var) else b
            for b in (transform.lower, transform.upper)
        )
        return transforms.interval(lower, upper)
    return transform


def _cut_keys(x: Var) -> Var:
    """``x`` with each draw it is computed from taking its key from a stand-in input.

    The rules see the same structure and parameters, but the graph they rewrite ends at
    those draws instead of running down the chain of keys through every earlier random
    variable of the model (which made ``joint_logprob`` quadratic in its size). The
    stand-ins are distinct (one per key, in a fixed order), so ``stack([x1, x2])`` of two
    draws with the same parameters is two draws, not one drawn twice.
    """
    mapping: dict[Var, Var] = {}
    keys: dict[Var, Var] = {}  # one stand-in per key: rl.truncate's uniform shares x's
    for draw in draws_in(x):
        node = draw.owner
        key = keys.setdefault(node.inputs[0], key_standin(len(keys)))
        next_key, stand_in = node.op(key, *node.inputs[1:])
        mapping[draw], mapping[node.outputs[0]] = stand_in, next_key
    return replace(x, mapping) if mapping else x


def _given(var: Var, conditioned: dict[Var, Var]) -> Var:
    """``var`` with the random quantities it reads replaced by their values.

    Only the replacements ``var`` can reach are passed to ``replace`` (with the full map,
    each call would check every earlier value: quadratic in the model's size): through its
    Ops and the parameters of the unvalued draws it reads (an image such as ``exp(z)``),
    not through keys. ``replace`` itself would walk down the chain of keys behind every
    draw it meets; each draw met that needs no substitution inside (a valued one, or one
    that only handed an unvalued one its key) is mapped whole, to its values or to
    itself, which stops the walk there.
    """
    if var in conditioned:
        return conditioned[var]
    if not conditioned:
        return var
    draws = [var] if is_random(var) else []
    near: set[Var] = set()
    stack = list(var.owner.inputs) if draws else [var]
    while stack:
        for v in local_ancestors(stack.pop()):
            if v in near:
                continue
            near.add(v)
            if is_random(v) and v not in conditioned:
                draws.append(v)
                stack.extend(v.owner.inputs[2:])
    mapping = {v: conditioned[v] for v in near if v in conditioned}
    if not mapping:
        return var
    # the draws met: those read, and those that handed the unvalued ones their keys
    met = {v.owner for v in near if is_random(v)}
    met.update(d.owner.inputs[0].owner for d in draws)
    for node in met:
        if node is None or not isinstance(node.op, RandomVariable):
            continue
        if all(out in conditioned or out not in near for out in node.outputs):
            for out in node.outputs:
                mapping.setdefault(out, conditioned.get(out, out))
    return replace(var, mapping)


def _check_fits(x: Var, value: Var, transform: Transform | None) -> None:
    expected = x.type if transform is None else transform.forward(x).type
    shape = value.type.shape
    if len(shape) != expected.ndim or any(
        a is not None and b is not None and a != b
        for a, b in zip(expected.shape, shape, strict=True)
    ):
        scale = "" if transform is None else f" on the unconstrained scale of {transform}"
        raise ShapeError(
            f"joint_logprob: the value {short_name(value)} ({value.type}) does not fit "
            f"{describe(x)}, which is {expected}{scale}"
        )


def _plus_jacobian(logp: Var, log_jac: Var) -> Var:
    """``logp + log_jac``, the one with more axes first summed over its trailing extra
    axes: a transform's event axes (``ordered`` on a vector of normal draws) need not be the
    distribution's (``log`` on a multivariate draw), and broadcasting would count the
    smaller one once per element of the larger."""
    if logp.ndim > log_jac.ndim:
        logp = _sum(logp, axis=tuple(range(log_jac.ndim, logp.ndim)))
    elif log_jac.ndim > logp.ndim:
        log_jac = _sum(log_jac, axis=tuple(range(logp.ndim, log_jac.ndim)))
    return logp + log_jac


def _name(value: Var, position: int) -> str:
    return value.name if value.name and not value.owner else f"value_{position}"


# --- potentials -------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Potential:
    """A named term added to a joint log-density (made by ``potential``): ``name`` and
    ``term`` (a float graph).

    Example:
        >>> potential("penalty", -rt.scalar("x") ** 2).name
        'penalty'
    """

    name: str
    term: Var

    def __repr__(self) -> str:
        return f"potential({self.name!r}, {short_name(self.term)})"


def potential(name: str, term: Any) -> Potential:
    """A user term added to the joint log-density, as PyMC's ``pm.Potential``: a soft
    constraint, a prior on a function of several variables, a likelihood written by hand.

    Pass it to ``joint_logprob(values, potentials=[...])``: the random quantities in
    ``term`` are replaced by their values as in every other term, the term is summed to a
    scalar and appears under ``name`` in ``logprob_terms``. A term that reads a draw with
    no value is an error naming it, as for a density (a bounded discrete draw is summed
    out, the potential then being one of its terms).

    Args:
        name: the term's name (not a value variable's, nor another potential's).
        term: a real (float or integer) graph of the model's random quantities, any shape.

    Raises:
        GraphTypeError: ``name`` is not a non-empty string, or ``term`` is not a graph.
        DTypeError: ``term`` is not real.

    Example:
        >>> k, x = rr.normal(rr.key(), 0.0, 1.0, size=(3,))
        >>> near_zero_sum = potential("sum_near_zero", -0.5 * (rt.sum(x) / 0.01) ** 2)
        >>> lp = joint_logprob({x: rt.vector("x")}, potentials=[near_zero_sum])
    """
    if not isinstance(name, str) or not name:
        raise GraphTypeError(f"potential: name must be a non-empty string, got {name!r}")
    term = as_var(term, context=f"potential {name!r}: term")
    if term.type.kind not in "iuf":
        raise DTypeError(
            f"potential {name!r}: the term must be real (float or integer), got {term.type}"
        )
    if term.type.kind != "f":
        term = rt.cast(term, "float64")
    return Potential(name, term)


def _potentials(potentials: Any, names: dict[Var, str]) -> list[Potential]:
    """The potentials, checked: ``Potential`` objects whose names are all new."""
    if isinstance(potentials, Potential) or not isinstance(potentials, Sequence):
        raise GraphTypeError(
            f"joint_logprob: potentials must be a list of potential(name, term) objects, "
            f"got {type(potentials).__name__}"
        )
    taken = set(names.values())
    for p in potentials:
        if not isinstance(p, Potential):
            raise GraphTypeError(
                f"joint_logprob: potentials must be a list of potential(name, term) "
                f"objects, got an item {p!r}"
            )
        if p.name in taken:
            raise GraphTypeError(
                f"joint_logprob: two terms are named {p.name!r} (a value variable or "
                "another potential); give the potential another name"
            )
        taken.add(p.name)
    return list(potentials)
