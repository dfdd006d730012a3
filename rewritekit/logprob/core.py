"""``logprob`` and ``joint_logprob``: from a model graph to its log-density graph."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Var, as_var, replace, short_name, toposort
from rewritekit.logprob import loops, measurable, transforms
from rewritekit.logprob.measurable import (
    LogDensity,
    draws_in,
    is_random,
    local_ancestors,
    log_density,
)
from rewritekit.logprob.transforms import Transform
from rewritekit.rules import as_ruleset, rewrite
from rewritekit.tensor import random as rv
from rewritekit.tensor.reduction import sum as _sum

__all__ = ["default_transform", "joint_logprob", "logprob", "logprob_terms"]

_LOG = (
    rv.HalfNormalRV,
    rv.HalfCauchyRV,
    rv.ExponentialRV,
    rv.GammaRV,
    rv.InverseGammaRV,
    rv.LogNormalRV,
)


def default_transform(x: Var) -> Transform | None:
    """The transform that maps ``x``'s support onto unconstrained reals, or None.

    ``log`` for positive distributions (halfnormal, halfcauchy, exponential, gamma,
    inverse_gamma, lognormal), ``logodds`` for beta, ``interval(low, high)`` for uniform
    (its own parameters), ``simplex`` for dirichlet; None for the rest (real-valued and
    discrete ones, and variables that are not a random variable's draw). A stacked output
    of a scan gets the transform of the draw it stacks, where that computes nothing from
    the loop (an ``interval`` whose bounds the body computes gets None).

    Example:
        >>> _, tau = rr.halfcauchy(rr.key(), 5.0)
        >>> default_transform(tau)
        log
    """
    if loops.is_scan_output(x):
        return loops.step_transform(x, default_transform)
    if not is_random(x):
        return None
    op, params = x.owner.op, x.owner.inputs[2:]
    if isinstance(op, _LOG):
        return transforms.log
    if isinstance(op, rv.BetaRV):
        return transforms.logodds
    if isinstance(op, rv.UniformRV):
        return transforms.interval(*params)
    if isinstance(op, rv.DirichletRV):
        return transforms.simplex
    return None


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
            f"{_describe(x)} ({x.type})"
        )
    if loops.is_scan_output(x):
        return loops.scan_logprob(x, value, {}, _step_logprob(rules))
    ruleset = measurable.rules if rules is None else as_ruleset(rules) + measurable.rules
    found = rewrite(log_density(_cut_keys(x), value), ruleset)
    left = [
        v
        for v in local_ancestors(found)
        if v.owner is not None and isinstance(v.owner.op, LogDensity)
    ]
    if left:
        raise GraphTypeError(
            f"logprob: found no log-density for {_describe(left[0].owner.inputs[0])}: it "
            "is not a random variable's draw, nor exp, a shift, scaling or negation of one "
            "(by parameters that hold no other random draw)"
        )
    return found


def logprob_terms(
    values: Mapping[Var, Any], *, transforms: Any = None, rules: Any = None
) -> dict[str, Var]:
    """One log-density term per random quantity, each summed to a scalar.

    Each random quantity ``x`` (a key of ``values``) is replaced by its value variable
    wherever it appears (``replace``; the model graph itself is unchanged and still draws),
    so the terms are conditional densities whose sum is the joint log-density.

    A key may be a stacked ``y`` output of a ``scan`` that draws at each step (a time
    series): its term is a scan of the per-step densities, conditioned on the values of
    the earlier steps and of the scan's other valued outputs (``rewritekit.logprob.loops``).

    Args:
        values: ``{x: value}``; a value is a Var or an array (observed data). With a
            transform, the value variable is on the unconstrained scale.
        transforms: None (none), ``"default"`` (``default_transform`` of each ``x``), or a
            dict ``{x: Transform or None}`` (missing entries get none).
        rules: extra inversion rules, as in ``logprob``.

    Returns:
        ``{name: term}`` in the order of ``values``, named after the value variable (an
        unnamed value, such as observed data, is ``"value_<position>"``).

    Raises:
        GraphTypeError: a term depends on a random draw that has no value, a key is not a
            random quantity, one value variable is given for two random quantities, or
            two value variables share a name.
        ShapeError: a value's shape does not fit its variable (after its transform).
    """
    pairs = _pairs(values)
    names = _names(pairs)
    chosen = _transforms(pairs, transforms)
    stacked = _scan_values(pairs, chosen)
    lifted = {x: loops.lift_draws(x) for x in stacked}
    conditioned: dict[Var, Var] = {}  # x -> its value on the constrained scale
    terms: dict[Var, Var] = {}
    for x in _in_graph_order([lifted.get(x, x) for x in pairs], list(pairs)):
        value, transform = pairs[x], chosen[x]
        x_given = _given(lifted.get(x, x), conditioned)
        constrained, term = _term(x, x_given, value, transform, conditioned, stacked, rules)
        conditioned[x] = conditioned[lifted.get(x, x)] = constrained
        if is_random(x):  # its key, mapped to itself, stops replace at x's node
            conditioned[x.owner.outputs[0]] = x.owner.outputs[0]
        _check_no_free_draws(term, x, value)
        terms[x] = _sum(term)
    return {names[x]: terms[x] for x in pairs}


def joint_logprob(values: Mapping[Var, Any], *, transforms: Any = None, rules: Any = None) -> Var:
    """The joint log-density of the random quantities in ``values`` at their values: the
    sum of ``logprob_terms(values, transforms=transforms, rules=rules)``.

    Example:
        >>> k, mu = rr.normal(rr.key(), 0.0, 5.0)
        >>> k, y = rr.normal(k, mu, 1.0, size=(3,))
        >>> lp = joint_logprob({mu: rt.scalar("mu"), y: np.array([0.5, 1.0, 1.5])})
        >>> lp.type
        TensorType(dtype='float64', shape=())
    """
    terms = list(logprob_terms(values, transforms=transforms, rules=rules).values())
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
        pairs[x] = as_var(value, context=f"joint_logprob: value of {_describe(x)}")
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
                f"variables, {_describe(other)} (key {j} of values) and {_describe(x)} "
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
            f"joint_logprob: transforms names {_describe(unknown[0])}, which has no value"
        )
    for k, t in spec.items():
        if t is not None and not isinstance(t, Transform):
            raise GraphTypeError(
                f"joint_logprob: the transform of {_describe(k)} must be a Transform or "
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


def _describe(x: Var) -> str:
    return loops.describe(x) if loops.is_scan_output(x) else rv.describe(x)


def _in_graph_order(graphs: list[Var], xs: list[Var]) -> list[Var]:
    """``xs`` with every variable after those it depends on, as ``graphs`` (one per ``x``,
    its graph with the draws a scan reads lifted out of its body) compute them."""
    position = {node: i for i, node in enumerate(toposort(graphs))}
    where = {x: position.get(g.owner, -1) for x, g in zip(xs, graphs, strict=True)}
    return sorted(xs, key=where.__getitem__)


def _condition(transform: Transform, conditioned: dict[Var, Var]) -> Transform:
    """An interval whose bounds hold random quantities, with their values instead."""
    if isinstance(transform, transforms.Interval) and conditioned:
        lower, upper = (
            _given(b, conditioned) if isinstance(b, Var) else b
            for b in (transform.lower, transform.upper)
        )
        return transforms.interval(lower, upper)
    return transform


# Draws' keys are irrelevant to their densities; a stand-in cuts the chain of keys.
_KEY_STANDIN = Var(rv.KEY_TYPE, "key")


def _cut_keys(x: Var) -> Var:
    """``x`` with each draw it is computed from taking its key from a stand-in input.

    The rules see the same structure and parameters, but the graph they rewrite ends at
    those draws instead of running down the chain of keys through every earlier random
    variable of the model (which made ``joint_logprob`` quadratic in its size).
    """
    mapping: dict[Var, Var] = {}
    for draw in draws_in(x):
        node = draw.owner
        next_key, stand_in = node.op(_KEY_STANDIN, *node.inputs[1:])
        mapping[draw], mapping[node.outputs[0]] = stand_in, next_key
    return replace(x, mapping) if mapping else x


def _given(var: Var, conditioned: dict[Var, Var]) -> Var:
    """``var`` with the random quantities it reads replaced by their values.

    Only the replacements ``var`` can reach locally are passed to ``replace`` (with the
    full map, each call would check every earlier value: quadratic in the model's size). A
    draw reads the earlier ones through its parameters and its key; an image of an
    unvalued draw (``exp(z)``) gets the full map, since ``replace`` walks through ``z``.
    """
    if var in conditioned:
        return conditioned[var]
    if not conditioned:
        return var
    roots = var.owner.inputs if is_random(var) else (var,)
    near = {v for root in roots for v in local_ancestors(root)}
    if not is_random(var) and any(is_random(v) and v not in conditioned for v in near):
        return replace(var, conditioned)
    mapping = {v: conditioned[v] for v in near if v in conditioned}
    return replace(var, mapping) if mapping else var


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
            f"{_describe(x)}, which is {expected}{scale}"
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


def _check_no_free_draws(term: Var, x: Var, value: Var) -> None:
    free = draws_in(term)
    if free:
        raise GraphTypeError(
            f"joint_logprob: the log-density of {_describe(x)} (value "
            f"{short_name(value)}) depends on {_describe(free[0])}, which has no value; "
            "give it a value variable in the dict"
        )


def _name(value: Var, position: int) -> str:
    return value.name if value.name and not value.owner else f"value_{position}"
