import pickle

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Var, constant, dprint, graph_inputs, toposort
from tests.conftest import shallow_recursion
from tests.ir.helpers import MinMax, Scale


def test_round_trip_keeps_the_structure():
    x, s = rt.vector("x"), rt.scalar("s")
    y = rt.log(1.0 + rt.exp(x) * s) + Scale(2.0)(x)
    y2 = pickle.loads(pickle.dumps(y))
    assert dprint(y2) == dprint(y)
    assert [str(n.op) for n in toposort(y2)] == [str(n.op) for n in toposort(y)]
    x2, s2 = graph_inputs(y2)
    assert (x2.name, s2.name) == ("x", "s") and x2 is not x


def test_unpickled_nodes_re_intern():
    x = rt.vector("x")
    y2 = pickle.loads(pickle.dumps(rt.exp(x) + rt.log(x)))
    (x2,) = graph_inputs(y2)
    assert rt.exp(x2) + rt.log(x2) is y2
    assert y2.owner.inputs[0] is rt.exp(x2)


def test_input_only_and_constant_graphs():
    c = rt.exp(constant(np.arange(3.0)))
    assert pickle.loads(pickle.dumps(c)) is c  # nothing new: constants and ops re-intern
    assert pickle.loads(pickle.dumps(constant(2.0))) is constant(2.0)
    x = rt.vector("x")
    x2 = pickle.loads(pickle.dumps(x))
    assert isinstance(x2, Var) and x2.name == "x" and x2.type is x.type and x2 is not x


def test_outputs_pickled_together_share_their_inputs():
    x = rt.vector("x")
    e = rt.exp(x)
    a, b, e2 = pickle.loads(pickle.dumps([e + 1.0, e * 2.0, e]))
    assert a.owner.inputs[0] is e2 and b.owner.inputs[0] is e2


def test_multi_output_nodes_and_apply_nodes_pickle():
    x = rt.vector("x")
    lo, hi = MinMax()(x)
    lo2, hi2 = pickle.loads(pickle.dumps((lo, hi)))
    assert lo2.owner is hi2.owner and hi2.index == 1
    node = pickle.loads(pickle.dumps(lo.owner))
    assert str(node.op) == "MinMax" and node.nout == 2


def test_op_hash_caches_do_not_travel():
    op = Scale(2.0)
    hash(op)
    x = rt.vector("x")
    op(x)
    state = pickle.loads(pickle.dumps(op)).__dict__
    assert state == {"factor": 2.0}


def test_deep_graphs_pickle_without_recursion():
    x = rt.vector("x")
    y = x
    for _ in range(100_000):
        y = rt.exp(y)
    with shallow_recursion():
        data = pickle.dumps(y)
        y2 = pickle.loads(data)
    assert len(toposort(y2)) == 100_000
