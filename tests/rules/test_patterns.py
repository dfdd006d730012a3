"""Patterns: pattern variables and terms written with the tensor API."""

import numpy as np
import pytest
from etuples import etuple, etuplize, rands, rator
from etuples.core import ExpressionTuple
from unification import unify, var

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, RuleError
from rewritekit.rules import Nth, Pattern, lvar, rule
from rewritekit.rules.patterns import analyse_call, pattern_str

a, b = lvar("a"), lvar("b")


def test_tensor_functions_build_patterns_from_pattern_variables():
    p = rt.log(1 + a)
    assert isinstance(p, Pattern) and isinstance(p, ExpressionTuple)
    assert p == etuple(rt.log, etuple(rt.add, 1, a))
    assert str(p) == "log(1 + a)"


def test_operators_and_methods_on_patterns():
    assert rt.exp(a) + rt.exp(b) == etuple(rt.add, etuple(rt.exp, a), etuple(rt.exp, b))
    assert 2 * rt.exp(a) == etuple(rt.multiply, 2, etuple(rt.exp, a))
    assert -a == etuple(rt.negative, a)
    assert (a / b) ** 2 == etuple(rt.power, etuple(rt.true_divide, a, b), 2)
    assert a.sum(axis=0) == Pattern((rt.sum, a), axis=0)
    assert str(rt.exp(a) - 1) == "exp(a) - 1"


def test_tuple_concatenation_used_by_cons_still_works():
    p = rt.exp(a)
    assert p[1:] == (a,)
    assert type(p)((p[0],)) + p[1:] == p  # how cons rebuilds a term
    assert (rt.exp,) + p[1:] == p  # noqa: RUF005 - the concatenation is the point


def test_parameters_can_be_pattern_variables():
    ax = lvar("ax")
    p = rt.sum(a, axis=ax)
    assert str(p) == "sum(a, axis=ax)"
    parts = analyse_call(rt.sum, [a], {"axis": ax})
    assert parts.props == {"axis": ax}


def test_multi_output_functions_give_one_pattern_per_output():
    sign, logdet = rt.linalg.slogdet(a)
    assert sign[0] == Nth(0) and logdet[0] == Nth(1)
    assert str(logdet) == "slogdet(a)[1]"


def test_lvar_names_share_a_variable_and_stay_apart_from_unification_vars():
    assert lvar("a") is a
    assert lvar() is not lvar()
    assert lvar("q") != var("q")
    assert unify(rt.exp(a), etuple(rt.exp, 3)) == {a: 3}


def test_bad_lvar_name():
    with pytest.raises(RuleError, match="lvar: the name must be a non-empty str, got 3"):
        lvar(3)


def test_a_pattern_is_not_a_graph_node():
    x = rt.vector("x")
    with pytest.raises(GraphTypeError, match="exp\\(a\\) is a rule pattern, not a graph node"):
        rt.as_tensor(rt.exp(a))
    import rewritekit as rk

    with pytest.raises(GraphTypeError, match="is a rule pattern"):
        rk.function([x], rt.exp(a))


def test_functions_that_build_several_nodes_only_go_on_the_right():
    with pytest.raises(RuleError, match=r"rt\.zeros_like cannot be matched on the left side"):
        rule(rt.zeros_like(a), a, name="bad")
    x = rule(a - a, rt.zeros_like(a), name="fine")
    assert str(x) == "a - a -> zeros_like(a)"


def test_a_pattern_in_a_parameter_that_is_not_an_op_parameter():
    with pytest.raises(RuleError, match=r"rt\.swapaxes: parameter 'axis1' holds ax, which cannot"):
        rule(rt.swapaxes(a, lvar("ax"), 1), a, name="bad")


def test_nodes_are_terms_for_etuples():
    x, y = rt.vector("x"), rt.vector("y")
    z = rt.exp(x) + y
    assert rator(z) == rt.add and rands(z) == (rt.exp(x), y)
    e = etuplize(z)
    assert e == etuple(rt.add, etuple(rt.exp, x), y)
    assert e._evaled_obj is z
    rebuilt = etuple(rt.add, etuple(rt.exp, x), y).evaled_obj  # evaluates into the node
    assert rebuilt is z
    _, logdet = rt.linalg.slogdet(rt.matrix("m"))
    assert rator(logdet) == Nth(1) and rator(rands(logdet)[0]) == rt.linalg.Slogdet()


def test_pattern_str_shows_constants_and_graph_vars():
    x = rt.vector("x")
    assert pattern_str(etuple(rt.add, x, np.float32(2))) == "x + np.float32(2.0)"
    assert pattern_str(rt.add(x, 2.0)) == "x + 2.0"  # a graph node
    assert pattern_str(etuple(rt.add, x, a)) == "x + a"
