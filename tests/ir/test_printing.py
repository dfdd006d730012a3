import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import dprint
from tests.conftest import shallow_recursion
from tests.ir.helpers import MinMax


def test_dprint_shows_types_and_shared_nodes_once():
    x = rt.vector("x")
    y = rt.exp(x) * rt.exp(x) + 1.0
    assert dprint(y) == "\n".join(
        [
            "Add float64[?]",
            "├─ Multiply float64[?]",
            "│  ├─ Exp [id A] float64[?]",
            "│  │  └─ x float64[?]",
            "│  └─ Exp [id A] ···",
            "└─ 1.0 float64[]",
        ]
    )


def test_ids_are_shared_across_several_outputs():
    x = rt.vector("x")
    e = rt.exp(x)
    text = dprint([e + 1.0, rt.log(e)])
    assert text.count("Exp [id A] float64[?]") == 1
    assert text.count("Exp [id A] ···") == 1
    assert text.splitlines()[-2:] == ["Log float64[?]", "└─ Exp [id A] ···"]


def test_distinct_inputs_with_one_name_are_told_apart():
    a, b = rt.scalar("x"), rt.scalar("x")
    text = dprint(a + b)
    assert "├─ x float64[]" in text and "└─ x#2 float64[]" in text


def test_constants_multi_outputs_and_depth_limit():
    x = rt.vector("x")
    big = np.arange(10.0)
    lo, hi = MinMax()(x)
    text = dprint(lo * big + hi * big)
    assert "MinMax.0 [id A] float64[]" not in text  # each output is its own line
    assert "MinMax.0 float64[]" in text and "MinMax.1 float64[]" in text
    assert "constant [id A] float64[10]" in text and "constant [id A] ···" in text
    assert dprint(rt.constant([1.0, 2.0])) == "[1., 2.] float64[2]"
    assert dprint(rt.constant(3, name="three")) == "three int64[]"
    assert dprint(rt.exp(rt.exp(x)), max_depth=1) == "\n".join(
        ["Exp float64[?]", "└─ Exp float64[?]", "   └─ ..."]
    )


def test_dprint_of_a_deep_graph_is_iterative():
    x = rt.vector("x")
    y = x
    for _ in range(20_000):
        y = rt.exp(y)
    with shallow_recursion():
        lines = dprint(y, max_depth=50).splitlines()
    assert len(lines) == 52
