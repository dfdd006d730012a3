"""The density of a composite random variable (``rr.custom``): its author's, or derived.

``log_density(draw, v)`` for a ``CustomRV`` draw is, in order:

- the author's ``logp(v, *params)`` where the distribution has one;
- ``log_density(value, v)`` of the sampling graph itself, for a draw without batch axes
  (the core graph applied to the node's key and parameters) and for an elementwise core
  (applied to the broadcast parameters: ``abs(normal(key, 0, s, size=batch))``); the other
  rules then find it (``abs`` of a normal is a half-normal through its two branches);
- otherwise a ``Blockwise`` over the batch axes whose core is ``log_density(core value,
  core v)`` over the core's own parameters: the rules engine rewrites that inner graph
  with the same rules, so each element's density is derived once, for all elements.

Where no rule finds the core's density, ``logprob`` names the draw inside the composite
where derivation stopped.
"""

from __future__ import annotations

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Var, as_var, constant
from rewritekit.ir.inner import close_over
from rewritekit.logprob.measurable import _as_type_of, is_random, log_density
from rewritekit.rules import RuleSet, lvar, rule
from rewritekit.rules.rule import Bindings
from rewritekit.tensor.control import Blockwise
from rewritekit.tensor.custom_random import CustomRV, broadcast_params
from rewritekit.tensor.random import KEY_TYPE, batch_lengths

__all__ = ["rules"]

# the key of the draws inside a per-element density: any key (a density reads none)
_KEY = constant(np.zeros(2, dtype=np.uint32))
assert _KEY.type == KEY_TYPE


def _composite(b: Bindings) -> Var | None:
    """the author's logp(v, *params), or log_density(sampling graph, v)"""
    x = b.a
    if not is_random(x) or not isinstance(x.owner.op, CustomRV):
        return None
    op: CustomRV = x.owner.op
    key, size, *params = x.owner.inputs
    if op.spec.logp is not None:
        logp = as_var(op.spec.logp(b.v, *params), context=f"{op.name}: logp")
        if op.size is not None:  # size= may make the draw larger than its parameters
            logp = logp + rt.zeros(size, dtype=logp.dtype)
        return _as_type_of(logp, b.term)
    batch = op._batch_shape(tuple(p.type for p in params))
    if (not batch and op.size is None) or op.elementwise:
        return _as_type_of(
            _summed(log_density(op.expand(key, size, *params)[1], b.v), b.term.ndim), b.term
        )
    return _as_type_of(_per_element(op, x, b.v, size, params), b.term)


def _per_element(op: CustomRV, x: Var, v: Var, size: Var, params: list[Var]) -> Var:
    """A ``Blockwise`` over the batch axes of ``log_density(core value, core v)``."""
    nb = x.ndim - op.ndim_supp
    core_params = [Var(t) for t in op.core.input_types[1:]]
    value = op.core.apply([_KEY, *core_params])[1]
    core_v = Var(value.type)
    graph, free = close_over([core_v, *core_params], [_summed(log_density(value, core_v), 0)])
    assert not free  # the core reads its placeholders and constants only
    # the batch's lengths from the parameters and size (not from x: that reads its key)
    lengths = batch_lengths(op, size, params)
    value_core = [rt.shape(v)[a] for a in range(nb, v.ndim)]
    inputs, batched = broadcast_params(op, lengths, params)
    inputs, batched = [rt.broadcast_to(v, [*lengths, *value_core]), *inputs], [True, *batched]
    return Blockwise(graph, batched, nb)(*inputs)  # type: ignore[return-value]


def _summed(logp: Var, ndim: int) -> Var:
    """``logp`` summed over its trailing axes down to rank ``ndim``: the value's elements
    that the sampling graph draws independently (a walk's steps) make one draw here."""
    if logp.ndim == ndim:
        return logp
    return rt.sum(logp, axis=tuple(range(ndim, logp.ndim)))


a, v = lvar("a"), lvar("v")

rules = RuleSet(
    [rule(log_density(a, v), _composite, name="composite_random_variable")],
    name="logprob_composite",
    tags={"logprob"},
)
