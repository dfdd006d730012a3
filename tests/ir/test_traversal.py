import gc
import sys

import pytest

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.ir import ancestors, clients, constant, dprint, graph_inputs, toposort
from tests.conftest import shallow_recursion
from tests.ir.helpers import MinMax


def _diamond():
    x, s = rt.vector("x"), rt.scalar("s")
    e = rt.exp(x)
    y = rt.log(e) + e * s
    return x, s, e, y


def test_toposort_puts_each_node_after_its_inputs_once():
    _x, _s, _e, y = _diamond()
    order = toposort(y)
    assert [str(n.op) for n in order] == ["Exp", "Log", "Multiply", "Add"]
    position = {node: i for i, node in enumerate(order)}
    for node in order:
        for inp in node.inputs:
            if inp.owner is not None:
                assert position[inp.owner] < position[node]
    assert toposort(y) == order  # deterministic


def test_toposort_of_several_outputs_shares_nodes():
    x, _s, e, y = _diamond()
    order = toposort([y, e, x])
    assert len(order) == 4 and order[0] is e.owner
    assert toposort(x) == []


def test_ancestors_and_graph_inputs():
    x, s, e, y = _diamond()
    found = ancestors(y)
    assert found[-1] is y and set(found) >= {x, s, e}
    assert found.index(x) < found.index(e)
    assert graph_inputs(y) == [x, s]
    z = x * 2.0
    assert graph_inputs(z) == [x]
    assert graph_inputs(z, include_constants=True) == [x, constant(2.0)]


def test_clients_lists_every_reader():
    x, _s, e, y = _diamond()
    readers = clients(y)
    assert sorted(str(node.op) for node, _ in readers[e]) == ["Log", "Multiply"]
    assert readers[x] == [(e.owner, 0)]


def test_traversals_reject_non_vars():
    with pytest.raises(GraphTypeError, match="toposort: output 0 must be a Var, got int"):
        toposort([3])


def test_million_node_chain_needs_no_recursion():
    x = rt.vector("x")
    y = x
    for _ in range(1_000_000):
        y = rt.exp(y)
    limit = sys.getrecursionlimit()
    with shallow_recursion():
        assert len(toposort(y)) == 1_000_000
        assert len(ancestors(y)) == 1_000_001
        assert graph_inputs(y) == [x]
        text = dprint(y, max_depth=3)
        assert text.count("\n") == 4
        del y  # freeing a deep chain must not recurse either
        gc.collect()
    assert sys.getrecursionlimit() == limit


def test_multi_output_nodes_in_traversals():
    x = rt.vector("x")
    lo, hi = MinMax()(x)
    y = lo + hi
    assert len(toposort(y)) == 2
    assert ancestors(y).count(lo) == 1
