"""Rule sets as values: names, tags, composition, selection, priority."""

import pytest

import rewritekit.tensor as rt
from rewritekit.errors import RuleError
from rewritekit.rules import RuleSet, as_ruleset, default, lvar, rewrite, rule

a = lvar("a")
x = rt.vector("x")
log1p = rule(rt.log(1 + a), rt.log1p(a), name="log1p", tags={"numerics"})
exp_log = rule(rt.exp(rt.log(a)), a, name="exp_log")
to_sin = rule(rt.exp(a), rt.sin(a), name="to_sin")
to_cos = rule(rt.exp(a), rt.cos(a), name="to_cos")


def test_rules_take_the_name_and_tags_of_their_first_set():
    stabilize = RuleSet([log1p], name="stabilize", tags={"stabilize"})
    (r,) = stabilize
    assert r.qualname == "stabilize.log1p" and r.tags == {"numerics", "stabilize"}
    assert log1p.qualname == "log1p" and log1p.tags == {"numerics"}  # the original is a value
    outer = RuleSet([stabilize], name="default")
    assert [r.qualname for r in outer] == ["stabilize.log1p"]
    assert stabilize["log1p"] is r and stabilize["stabilize.log1p"] is r
    with pytest.raises(KeyError, match="no rule named 'nope' in rule set 'stabilize'"):
        stabilize["nope"]


def test_composition_and_selection():
    one = RuleSet([log1p, exp_log], name="one")
    two = RuleSet([to_sin], name="two", tags={"trig"})
    both = one + two
    assert [r.qualname for r in both] == ["one.log1p", "one.exp_log", "two.to_sin"]
    assert [r.name for r in both.excluding("trig")] == ["log1p", "exp_log"]
    assert [r.name for r in both.excluding("one.exp_log", "numerics")] == ["to_sin"]
    assert [r.name for r in both.including("numerics", "to_sin")] == ["log1p", "to_sin"]
    assert [r.name for r in one.including(two)] == ["log1p", "exp_log", "to_sin"]
    assert [r.name for r in (two + [to_cos])] == ["to_sin", "to_cos"]  # noqa: RUF005
    assert len(RuleSet([log1p, log1p, RuleSet([log1p])])) == 1
    with pytest.raises(RuleError, match="excluding: expected rule names or tags, got 3"):
        both.excluding(3)


def test_order_is_priority_in_composed_sets():
    assert rewrite(rt.exp(x), RuleSet([to_sin]) + RuleSet([to_cos])) is rt.sin(x)
    assert rewrite(rt.exp(x), RuleSet([to_cos]) + RuleSet([to_sin])) is rt.cos(x)


def test_rules_arguments():
    assert as_ruleset(None).rules == ()
    assert as_ruleset("default") is default
    assert as_ruleset(log1p).rules == (log1p,)
    assert "log1p: log(1 + a) -> log1p(a)" in str(RuleSet([log1p], name="s"))
    with pytest.raises(RuleError, match="expected rules or rule sets, got str 'x'"):
        RuleSet(["x"])


def test_str_of_a_rule_shows_its_equation():
    assert str(log1p) == "log(1 + a) -> log1p(a)"
    guarded = rule(rt.exp(a), a, name="g", when=lambda m: False)
    assert str(guarded) == "exp(a) -> a  when <lambda>"
    assert str(rule(rt.exp(a), lambda m: m.a, name="f")) == "exp(a) -> <function>"
