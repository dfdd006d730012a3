"""The standard rule library and the named pipelines that ``rules="..."`` refers to.

One module per theme, each exporting ``rules`` (a ``RuleSet`` named after its phase):

- ``folding``: constant folding through the NumPy reference, static shapes, shape
  inference (phase ``fold``; the shape table is ``shape_inference``);
- ``canonical``, ``filling``, ``algebra``, ``structural``: identities, arrays of one value,
  inverse pairs, the cancelling sum/product canonicaliser, and shape/index/reduction
  simplifications (``canonicalize``);
- ``loops``: loop-invariant hoisting, tidy loop inputs, loops to vectorized code, folded
  branches and while loops (``canonicalize``, tag ``loops``), and ``simplify_loops``, the
  pass (not a rule) that merges twin scans and drops unused loop outputs;
- ``stabilizing``: numerically stable forms (``stabilize``);
- ``specializing``: cheaper forms (``specialize``).

The pipelines are single rule sets, and the engine normalises every node against all of
their rules at once, so the phases reach one joint fixpoint: a rule of one phase is never
stranded by the output of a later one (PyTensor's #1476). Set order is priority at a node:
fold, then canonicalize, stabilize, specialize.
"""

from __future__ import annotations

from rewritekit.rules.library import (
    algebra,
    canonical,
    filling,
    folding,
    loops,
    specializing,
    stabilizing,
    structural,
)
from rewritekit.rules.library.loop_pass import rewrite_for_lowering, simplify_loops
from rewritekit.rules.ruleset import RuleSet

__all__ = [
    "NAMED",
    "canonicalize",
    "default",
    "fast_compile",
    "fold",
    "rewrite_for_lowering",
    "simplify_loops",
    "specialize",
    "stabilize",
    "stabilize_pipeline",
]

#: Constant folding, static-shape folding and shape inference.
fold = RuleSet([folding.rules], name="fold")
#: Algebraic identities, inverse pairs, the sum/product canonicaliser, shape simplification,
#: loop clean-up (hoisting, tidy inputs, vectorized scans, folded branches).
canonicalize = RuleSet(
    [canonical.rules, filling.rules, algebra.rules, structural.rules, loops.rules],
    name="canonicalize",
)
#: Numerically stable forms: log1p, softplus, logsumexp, log_softmax, ...
stabilize = RuleSet([stabilizing.rules], name="stabilize")
#: Cheaper forms: square, sqrt, reciprocal, solve, dot, ...
specialize = RuleSet([specializing.rules], name="specialize")

#: The default pipeline of ``rk.function`` and ``rk.rewrite``.
default = RuleSet([fold, canonicalize, stabilize, specialize], name="default")
#: ``rules="fast_compile"``: constant and shape folding only.
fast_compile = RuleSet([fold], name="fast_compile")
#: ``rules="stabilize"`` (and what ``rk.grad`` runs on a cost): fold, canonicalize, stabilize.
stabilize_pipeline = RuleSet([fold, canonicalize, stabilize], name="stabilize")

#: Rule sets by the names ``rules=`` accepts.
NAMED: dict[str, RuleSet] = {
    "default": default,
    "fast_compile": fast_compile,
    "stabilize": stabilize_pipeline,
    "fold": fold,
    "canonicalize": canonicalize,
    "specialize": specialize,
}
