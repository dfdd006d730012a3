"""NumPy 2's other names are the same functions: the same graph either way."""

import pytest

import rewritekit.tensor as rt

PAIRS = {
    "absolute": "abs",
    "acos": "arccos",
    "acosh": "arccosh",
    "asin": "arcsin",
    "asinh": "arcsinh",
    "atan": "arctan",
    "atan2": "arctan2",
    "atanh": "arctanh",
    "amax": "max",
    "amin": "min",
    "around": "round",
    "concat": "concatenate",
    "permute_dims": "transpose",
    "pow": "power",
    "ravel": "flatten",
}


@pytest.mark.parametrize(("alias", "name"), sorted(PAIRS.items()))
def test_an_alias_is_the_function(alias, name):
    assert getattr(rt, alias) is getattr(rt, name)


def test_every_alias_is_listed():
    from rewritekit.tensor import aliases

    assert set(aliases.__all__) == set(PAIRS)
    x = rt.vector("x")
    assert rt.pow(x, 2.0) is rt.power(x, 2.0)
