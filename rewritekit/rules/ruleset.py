"""Rule sets: ordered, tagged collections of rules that compose as values.

``RuleSet`` is what the engine runs. Order is priority: at a node, the first rule (in set
order) that applies wins. Sets compose with ``+`` and select with ``including`` and
``excluding``; there is no global rule database.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from rewritekit.errors import RuleError
from rewritekit.ir import Apply, Constant, Op
from rewritekit.rules.matcher import CONSTANT
from rewritekit.rules.rule import Rule

__all__ = ["RuleSet", "as_ruleset"]

_CHILD_CACHE_LIMIT = 1 << 14


class RuleSet:
    """An ordered collection of rules.

    Args:
        rules: rules and rule sets (flattened in order; a rule listed twice is kept once).
        name: the set's name; rules without a set take it (``stabilize.log1p``).
        tags: tags given to every rule of the set (``"stabilize"``).

    Example:
        >>> a = lvar("a")
        >>> stabilize = RuleSet([rule(rt.log(1 + a), rt.log1p(a), name="log1p")],
        ...                     name="stabilize", tags={"stabilize"})
        >>> [r.qualname for r in stabilize]
        ['stabilize.log1p']
    """

    def __init__(
        self,
        rules: Iterable[Rule | RuleSet] = (),
        *,
        name: str | None = None,
        tags: Iterable[str] = (),
    ) -> None:
        self.name = name
        self.tags = frozenset(tags)
        found: dict[int, Rule] = {}
        for item in _flatten(rules):
            found.setdefault(id(item), item)
        if name is not None or self.tags:
            found = {k: r.regrouped(name, self.tags) for k, r in found.items()}
        self.rules: tuple[Rule, ...] = tuple(found.values())
        self._by_op: dict[Op, tuple[Rule, ...]] = {}
        self._by_children: dict[tuple[int, ...], tuple[Rule, ...]] = {}
        self._index: dict[tuple[str, Any], list[int]] | None = None  # key -> rule positions

    # --- composition ----------------------------------------------------------------------

    def __add__(self, other: Any) -> RuleSet:
        return RuleSet([self, *_items(other)], name=None)

    def __radd__(self, other: Any) -> RuleSet:
        return RuleSet([*_items(other), self], name=None)

    def including(self, *items: Any) -> RuleSet:
        """A new set: with rules or rule sets appended, and/or restricted to the rules whose
        name, qualified name or tag is one of the given strings."""
        selected = [i for i in items if isinstance(i, str)]
        added = [i for i in items if not isinstance(i, str)]
        kept = [r for r in self.rules if not selected or _selected(r, selected)]
        return RuleSet([*kept, *added], name=self.name, tags=self.tags)

    def excluding(self, *names_or_tags: str) -> RuleSet:
        """A new set without the rules whose name, qualified name or tag is given."""
        for item in names_or_tags:
            if not isinstance(item, str):
                raise RuleError(f"excluding: expected rule names or tags, got {item!r}")
        kept = [r for r in self.rules if not _selected(r, names_or_tags)]
        return RuleSet(kept, name=self.name, tags=self.tags)

    # --- lookup ----------------------------------------------------------------------------

    def rules_for(self, op: Op) -> tuple[Rule, ...]:
        """The rules that could match a node of ``op`` (canonical), in set order."""
        found = self._by_op.get(op)
        if found is None:
            found = self._by_op[op] = self._indexed(op)
        return found

    def _indexed(self, op: Op) -> tuple[Rule, ...]:
        """The rules indexed under ``op`` itself (the same object), its class, or any
        node, in set order. The index of the rules by key is made once, so an Op met for
        the first time (a loop's: its body is new on every import) costs a few lookups
        instead of a test per rule."""
        index = self._index
        if index is None:
            index = {}
            for position, r in enumerate(self.rules):
                for kind, value in r.keys:
                    key = ("op", id(value)) if kind == "op" else (kind, value)
                    index.setdefault(key, []).append(position)
            self._index = index
        keys = [("op", id(op)), ("class", type(op)), ("any", None)]
        positions = sorted({p for key in keys for p in index.get(key, ())})
        return tuple(self.rules[p] for p in positions)

    def rules_for_node(self, node: Apply) -> tuple[Rule, ...]:
        """The rules that could match ``node``: indexed by its Op, then filtered by the Ops
        of its inputs, ``None`` for a graph input and ``CONSTANT`` for a constant (cached
        per combination, by identity: a node's Ops are the canonical ones, kept for good,
        and a tuple of ids hashes without calling ``Op.__hash__``)."""
        inputs = node.inputs
        # per input its Op's id, else 1 for a constant and 0 for a graph input
        key = (
            id(node.op),
            *[int(isinstance(i, Constant)) if i.owner is None else id(i.owner.op) for i in inputs],
        )
        narrowed = self._by_children.get(key)
        if narrowed is None:
            narrowed = found = self.rules_for(node.op)
            if found:
                children = tuple([_child(i) for i in inputs])
                narrowed = tuple(r for r in found if r.child_test is None or r.child_test(children))
            if len(self._by_children) > _CHILD_CACHE_LIMIT:
                self._by_children.clear()
            self._by_children[key] = narrowed
        return narrowed

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __getitem__(self, name: str) -> Rule:
        for r in self.rules:
            if name in (r.name, r.qualname):
                return r
        raise KeyError(f"no rule named {name!r} in rule set {self.name!r}")

    def __str__(self) -> str:
        count = len(self.rules)
        lines = [f"RuleSet {self.name or '<unnamed>'} ({count} rule{'' if count == 1 else 's'})"]
        lines += [f"  {r.qualname}: {r}" for r in self.rules]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<RuleSet {self.name or '<unnamed>'}: {len(self.rules)} rules>"


def _child(var: Any) -> Any:
    owner = var.owner
    if owner is None:
        return CONSTANT if isinstance(var, Constant) else None
    return owner.op


def _flatten(items: Any) -> Iterator[Rule]:
    for item in _items(items):
        if isinstance(item, RuleSet):
            yield from item.rules
        else:
            yield item


def _items(value: Any) -> list[Any]:
    if isinstance(value, Rule | RuleSet):
        return [value]
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise RuleError(f"expected rules or rule sets, got {type(value).__name__} {value!r}")
    items = list(value)
    for item in items:
        if not isinstance(item, Rule | RuleSet):
            raise RuleError(f"expected rules or rule sets, got {type(item).__name__} {item!r}")
    return items


def _selected(rule: Rule, names: Iterable[str]) -> bool:
    return any(n in (rule.name, rule.qualname) or n in rule.tags for n in names)


def as_ruleset(rules: Any) -> RuleSet:
    """``rules`` as a RuleSet: a RuleSet, a rule, a list of them, a name such as
    ``"default"``, or None (no rules).

    Raises:
        RuleError: an unknown name, or something that is not a rule.
    """
    if rules is None:
        return RuleSet()
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, str):
        from rewritekit.rules import library

        found = library.NAMED.get(rules)
        if found is None:
            raise RuleError(
                f"unknown rule set {rules!r}; known: {', '.join(sorted(library.NAMED))}"
            )
        return found
    return RuleSet(_items(rules))
