"""The standard rule library and the named pipelines ``rules="..."`` refers to.

The library's rules (canonicalize, stabilize, specialize, fold) are the subject of their own
issue; until they land, ``"default"`` is the empty rule set, so ``rk.function`` compiles the
graph as written.
"""

from __future__ import annotations

from rewritekit.rules.ruleset import RuleSet

__all__ = ["NAMED", "default"]

#: The default pipeline of ``rk.function`` and ``rk.rewrite``.
default = RuleSet([], name="default")

#: Rule sets by the names ``rules=`` accepts.
NAMED: dict[str, RuleSet] = {"default": default}
