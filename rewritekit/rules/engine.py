"""The rewrite engine: bottom-up normalisation to a fixpoint, memoised, iterative.

Every distinct node is normalised once per rewrite: its inputs first, then the rules
indexed under its Op, in rule-set order; the first rule that applies replaces the node, and
the replacement is normalised in turn (its new subterms too). A node's normal form is
memoised, so shared subexpressions cost once, and nothing is ever mutated: the result
shares every unchanged subgraph with the input.

An explicit stack replaces recursion, so graph depth is limited by memory only. A node
that is rewritten back into a form still being normalised, or a chain of more than
``max_steps`` nested rewrites, raises ``RewriteCycleError`` naming the rules involved.
"""

from __future__ import annotations

from typing import Any

from rewritekit.errors import GraphTypeError, RewriteCycleError
from rewritekit.ir import Var, apply_op
from rewritekit.ir.collector import gc_paused
from rewritekit.rules.rule import Rule
from rewritekit.rules.ruleset import RuleSet, as_ruleset
from rewritekit.rules.trace import RewriteTrace, TraceEntry, term_str

__all__ = ["Rewriter", "rewrite"]

DEFAULT_MAX_STEPS = 1000


class _Pending:
    """A stack frame: ``var`` (normalised inputs: ``cand``) was rewritten by ``rule`` to
    ``replacement``; once the replacement is normal, so is ``var``."""

    __slots__ = ("cand", "replacement", "rule", "var")

    def __init__(self, var: Var, cand: Var, replacement: Var, rule: Rule) -> None:
        self.var = var
        self.cand = cand
        self.replacement = replacement
        self.rule = rule


class Rewriter:
    """One rewrite's state: the rule set, the memo of normal forms and the trace.

    Args:
        rules: the rule set.
        max_steps: the longest chain of nested rewrites before giving up.
        kanren: match plain rules through kanren instead of the compiled matchers.
    """

    def __init__(
        self, rules: RuleSet, *, max_steps: int = DEFAULT_MAX_STEPS, kanren: bool = False
    ) -> None:
        self.rules = rules
        self.max_steps = max_steps
        self.kanren = kanren
        self.normal: dict[Var, Var] = {}
        self.trace = RewriteTrace()
        self._scope: list[str] = []  # the inner graphs being rewritten, outermost first
        self._inner: dict[Any, Any] = {}  # InnerGraph -> its rewritten InnerGraph

    def normalize(self, root: Var) -> Var:
        """The normal form of ``root``."""
        normal = self.normal
        found = normal.get(root)
        if found is not None:
            return found
        active: dict[Var, Rule] = {}  # nodes whose rewrite is being normalised
        stack: list[Any] = [root]
        while stack:
            item = stack[-1]
            if type(item) is _Pending:
                stack.pop()
                result = normal[item.replacement]
                normal[item.var] = normal[item.cand] = result
                del active[item.cand]
                continue
            if item in normal:
                stack.pop()
                continue
            node = item.owner
            if node is None:
                normal[item] = item
                stack.pop()
                continue
            inputs = node.inputs
            waiting = False
            for inp in inputs:
                if inp not in normal:
                    stack.append(inp)
                    waiting = True
            if waiting:
                continue
            stack.pop()
            cand = self._rebuilt(item, inputs)
            if getattr(cand.owner.op, "inner_graphs", None):
                cand = self._with_inner_rewritten(cand)
            if cand is not item:
                done = normal.get(cand)
                if done is not None:
                    normal[item] = done
                    continue
            if cand in active:
                self._cycle(cand, active)
            self.trace.nodes += 1
            rewritten = self._rewrite_top(cand)
            if rewritten is None:
                normal[cand] = normal[item] = cand
                continue
            replacement, rule = rewritten
            if replacement in active or replacement is cand:
                self._cycle(replacement, {**active, cand: rule})
            active[cand] = rule
            if len(active) > self.max_steps:
                self._diverged(active)
            stack.append(_Pending(item, cand, replacement, rule))
            stack.append(replacement)
        return normal[root]

    def _rebuilt(self, var: Var, inputs: tuple[Var, ...]) -> Var:
        normal = self.normal
        new_inputs = tuple([normal[i] for i in inputs])
        for old, new in zip(inputs, new_inputs, strict=True):
            if old is not new:
                return apply_op(var.owner.op, new_inputs)[var.index]  # type: ignore[union-attr,index]
        return var

    def _with_inner_rewritten(self, var: Var) -> Var:
        """``var`` of a node whose inner graphs (loop bodies, branches) are rewritten with
        the same rules; the trace names the graph each rewrite happened in."""
        node = var.owner
        op = node.op  # type: ignore[union-attr]
        graphs = op.inner_graphs
        names = getattr(op, "_graph_props", ()) or [f"graph {i}" for i in range(len(graphs))]
        new = []
        for graph, name in zip(graphs, names, strict=False):
            done = self._inner.get(graph)
            if done is None:
                self._scope.append(f"{op.name} {name}")
                try:
                    outputs = [self.normalize(o) for o in graph.outputs]
                finally:
                    self._scope.pop()
                changed = any(a is not b for a, b in zip(outputs, graph.outputs, strict=True))
                done = self._inner[graph] = graph.with_outputs(outputs) if changed else graph
            new.append(done)
        if all(a is b for a, b in zip(new, graphs, strict=True)):
            return var
        return apply_op(op.with_inner_graphs(new), node.inputs)[var.index]  # type: ignore[union-attr,index]

    def _rewrite_top(self, var: Var) -> tuple[Var, Rule] | None:
        trace = self.trace
        for rule in self.rules.rules_for_node(var.owner):  # type: ignore[arg-type]
            trace.attempts += 1
            new = rule.apply(var, kanren=self.kanren)
            if new is not None:
                scope = " > ".join(self._scope)
                trace.append(TraceEntry(rule.qualname, var, new, scope))
                return new, rule
        return None

    def _cycle(self, var: Var, active: dict[Var, Rule]) -> None:
        chain = list(active)
        start = chain.index(var) if var in active else 0
        names = list(dict.fromkeys(active[v].qualname for v in chain[start:]))
        raise RewriteCycleError(
            f"rewrite does not converge: rewriting {term_str(var, depth=3)} leads back to "
            f"it; cycling rules: {', '.join(names)}"
        )

    def _diverged(self, active: dict[Var, Rule]) -> None:
        names = list(dict.fromkeys(rule.qualname for rule in active.values()))
        raise RewriteCycleError(
            f"rewrite did not converge after {self.max_steps} steps; rules involved: "
            f"{', '.join(names)} (raise max_steps if the graph really needs more)"
        )


@gc_paused
def rewrite(
    outputs: Any,
    rules: Any = "default",
    *,
    trace: bool = False,
    max_steps: int = DEFAULT_MAX_STEPS,
    kanren: bool = False,
) -> Any:
    """``outputs`` rewritten to a fixpoint of ``rules``; the input graph is unchanged.

    Args:
        outputs: a Var, or a list/tuple of Vars; the result has the same structure.
        rules: a rule, a list of rules, a ``RuleSet``, a name such as ``"default"``, or None.
        trace: also return the ``RewriteTrace`` (rule, before, after per application).
        max_steps: the longest chain of nested rewrites before ``RewriteCycleError``.
        kanren: match plain rules through kanren unification instead of the compiled
            matchers (slower; the two agree).

    Returns:
        The rewritten outputs, or ``(outputs, trace)`` with ``trace=True``.

    Raises:
        RewriteCycleError: the rules do not converge (the message names them).
        RuleTypeError: a rule's replacement would change a node's type.

    Example:
        >>> a = lvar("a")
        >>> log1p = rule(rt.log(1 + a), rt.log1p(a), name="log1p")
        >>> rk.rewrite(rt.log(1 + x), log1p) is rt.log1p(x)
        True
    """
    ruleset = as_ruleset(rules)
    outs = output_list(outputs, "rewrite")
    rewriter = Rewriter(ruleset, max_steps=max_steps, kanren=kanren)
    results = [rewriter.normalize(o) for o in outs] if ruleset.rules else outs
    value = like_outputs(outputs, results)
    return (value, rewriter.trace) if trace else value


def output_list(outputs: Any, what: str) -> list[Var]:
    """``outputs`` (a Var, or a list or tuple of them) as a list, or an error naming the
    position of one that is not a Var."""
    outs = [outputs] if isinstance(outputs, Var) else list(outputs)
    for position, out in enumerate(outs):
        if not isinstance(out, Var):
            raise GraphTypeError(
                f"{what}: output {position} must be a Var, got {type(out).__name__}"
            )
    return outs


def like_outputs(outputs: Any, results: list[Var]) -> Any:
    """``results`` in the structure ``outputs`` had: one Var, a tuple or a list."""
    if isinstance(outputs, Var):
        return results[0]
    return tuple(results) if isinstance(outputs, tuple) else results
