"""Standard library rules: numerically stable forms (phase ``stabilize``).

Each rule replaces a naive formula by a special function that keeps its precision where
the formula overflows, underflows or cancels: ``log(1 + x)`` at ``x = 1e-20`` is 0.0 but
``log1p(x)`` is 1e-20; ``log(sum(exp(x)))`` at ``[1000, 1000]`` is inf but ``logsumexp`` is
1000.69. Plain JAX/XLA does none of this, so these rules are what make a rewritten JAX
callable more accurate than the hand-written one.

Conventions of this module:

- The stable functions are real (``log1p``, ``softplus``, ... reject complex inputs), so
  every rule is guarded to real inputs; a rule whose left side does arithmetic on an input
  itself (``1 + x``, ``-x``) is guarded to float inputs, where that arithmetic cannot wrap
  (elsewhere an integer input is cast to float64 before a negation).
- A number in a pattern matches a constant of any shape and dtype, so rules whose constant
  could widen the result's dtype or static shape are guarded to keep the matched type.
- A negation on the right side is built by ``_negate``, which strips a negation instead
  of stacking one: ``log(sigmoid(-x))`` becomes ``-softplus(x)``, not ``-softplus(--x)``,
  without waiting for the ``canonicalize`` phase.
- Values match NumPy's on the rule's domain, NaN and inf included; the one deliberate
  change is ``xlogy`` (0 where ``x == 0``). No rule needs the ``shape_unsafe`` tag: every
  replacement broadcasts its inputs as the matched node did.

Example:
    >>> from rewritekit.rules.library.stabilizing import rules
    >>> x = rt.vector("x")
    >>> rk.rewrite(rt.log(1 - rt.sigmoid(x)), rules) is -rt.softplus(x)
    True
"""

from __future__ import annotations

from rewritekit.rules.library import (
    stable_algebra,
    stable_erf,
    stable_logistic,
    stable_logs,
    stable_logsumexp,
    stable_special,
    stable_where,
)
from rewritekit.rules.ruleset import RuleSet

__all__ = ["rules"]

#: Order is priority at a node: the logistic forms (log(1 + exp(x))) before the general
#: ones (log(1 + x)).
rules = RuleSet(
    [
        *stable_where.rules,
        *stable_logistic.rules,
        *stable_special.rules,
        *stable_logs.rules,
        *stable_logsumexp.rules,
        *stable_erf.rules,
        *stable_algebra.rules,
    ],
    name="stabilize",
    tags={"stabilize"},
)
