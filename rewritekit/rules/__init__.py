"""Declarative rewrite rules on miniKanren and etuples, and the engine that applies them.

Patterns are written with the tensor API and pattern variables; a rule reads as the math::

    import rewritekit.tensor as rt
    from rewritekit.rules import lvar, rule

    a = lvar("a")
    log1p = rule(rt.log(1 + a), rt.log1p(a), name="log1p")

``relation`` states a rule as a kanren goal (``conde``, ``eq``, custom goals) where a
pattern is not enough. ``RuleSet`` collects rules; ``rewrite`` applies them to a fixpoint.
See docs/rules.md.

Example:
    >>> x = rt.vector("x")
    >>> rewrite(rt.log(1 + x), [log1p]) is rt.log1p(x)
    True
"""

from kanren import conde, lall, lany

# the library imports the modules above; import it last
from rewritekit.rules import library
from rewritekit.rules.engine import Rewriter, rewrite
from rewritekit.rules.goals import eq, guard
from rewritekit.rules.library import default
from rewritekit.rules.patterns import Nth, Pattern, PatternVar, lvar, pattern_str
from rewritekit.rules.relation import Relation, relation
from rewritekit.rules.rule import Bindings, Rule, rule
from rewritekit.rules.ruleset import RuleSet, as_ruleset
from rewritekit.rules.trace import RewriteTrace, TraceEntry, explain, term_str

__all__ = [
    "Bindings",
    "Nth",
    "Pattern",
    "PatternVar",
    "Relation",
    "RewriteTrace",
    "Rewriter",
    "Rule",
    "RuleSet",
    "TraceEntry",
    "as_ruleset",
    "conde",
    "default",
    "eq",
    "explain",
    "guard",
    "lall",
    "lany",
    "library",
    "lvar",
    "pattern_str",
    "relation",
    "rewrite",
    "rule",
    "term_str",
]
