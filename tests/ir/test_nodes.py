import gc
import threading
import weakref

import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.ir import Apply, Constant, TensorType, Var, apply_op, constant, intern_stats
from tests.ir.helpers import BadTypes, MinMax, Pair, Scale


def test_the_same_expression_is_the_same_object():
    x = rt.vector("x")
    assert rt.exp(x) is rt.exp(x)
    assert rt.exp(x) + 1.0 is rt.exp(x) + 1.0
    assert rt.exp(x).owner is rt.exp(x).owner
    assert Apply(rt.exp, [x]) is rt.exp(x).owner
    assert rt.exp(x) is not rt.log(x)
    assert rt.add(x, rt.exp(x)) is not rt.add(rt.exp(x), x)


def test_inputs_are_distinct_even_with_the_same_name():
    a, b = rt.vector("x"), rt.vector("x")
    assert a is not b
    assert rt.exp(a) is not rt.exp(b)


def test_ops_compare_and_hash_by_parameters():
    x = rt.vector("x")
    assert Scale(2.0) == Scale(factor=2.0)
    assert hash(Scale(2.0)) == hash(Scale(2.0))
    assert Scale(2.0) != Scale(3.0)
    assert Scale(2) != Scale(2.0) and Scale(True) != Scale(1)
    assert Scale(2.0)(x) is Scale(2.0)(x)
    assert Scale(2.0)(x) is not Scale(3.0)(x)
    assert str(Scale(2.0)) == "Scale{factor=2.0}"
    assert Scale.name == "scale"


def test_op_default_constructor_checks_parameters():
    with pytest.raises(TypeError, match=r"Scale: missing parameters \['factor'\]"):
        Scale()
    with pytest.raises(TypeError, match="Scale: unknown parameter 'size'"):
        Scale(size=2)
    with pytest.raises(TypeError, match="Scale takes 1 parameters"):
        Scale(1.0, 2.0)
    with pytest.raises(TypeError, match="parameter 'factor' given twice"):
        Scale(1.0, factor=2.0)


def test_var_attributes():
    x = rt.tensor("t", shape=(None, 3), dtype="int64")
    assert x.type is TensorType("int64", (None, 3))
    assert (x.dtype, x.ndim, x.name, x.owner, x.index) == ("int64", 2, "t", None, None)
    y = rt.exp(x)
    assert y.owner.op is rt.exp and y.owner.inputs == (x,)
    assert y.index == 0 and y.name is None
    assert repr(x) == "<Var 't' int64[?,3]>"


def test_nodes_are_immutable():
    x = rt.vector("x")
    y = rt.exp(x)
    with pytest.raises(AttributeError, match="Var is immutable; cannot set 'name'"):
        x.name = "z"
    with pytest.raises(AttributeError, match="immutable"):
        del y.owner
    with pytest.raises(AttributeError, match="Apply is immutable"):
        y.owner.inputs = ()
    with pytest.raises(ValueError, match="read-only"):
        constant(np.zeros(3)).data[0] = 1.0


def test_a_var_has_no_truth_value_and_is_not_iterable():
    x = rt.vector("x")
    with pytest.raises(TypeError, match="truth value of symbolic <Var 'x'"):
        bool(x)
    with pytest.raises(TypeError, match="cannot iterate"):
        list(x)


def test_constants_intern_by_dtype_shape_and_bytes():
    assert constant([1.0, 2.0]) is constant(np.array([1.0, 2.0]))
    assert constant([1.0, 2.0]) is not constant([1.0, 2.0], dtype="float32")
    assert constant([1.0, 2.0]) is not constant([[1.0, 2.0]])
    assert constant(0.0) is not constant(-0.0)
    assert constant(np.nan) is constant(float("nan"))
    assert constant(1.0, name="one") is not constant(1.0)
    assert constant(2).dtype == "int64" and constant(2.0).dtype == "float64"
    assert constant(True).dtype == "bool"
    assert constant(np.float32(1)).type is TensorType("float32", ())


def test_large_constants_intern_by_content_hash():
    data = np.arange(100_000, dtype="float64")
    first = constant(data)
    assert constant(data.copy()) is first
    changed = data.copy()
    changed[-1] += 1
    assert constant(changed) is not first
    assert first.type is TensorType("float64", (100_000,))


def test_constants_copy_their_value():
    data = np.zeros(3)
    c = constant(data)
    data[0] = 5.0
    assert c.data[0] == 0.0
    assert Constant(c.data) is c


def test_values_become_constants_when_an_op_is_called():
    y = rt.exp(np.ones(3))
    assert isinstance(y.owner.inputs[0], Constant)
    assert y.owner.inputs[0] is constant(np.ones(3))
    assert rt.exp(2.0).owner.inputs[0] is constant(2.0)


def test_bad_inputs_name_the_op_and_the_input():
    with pytest.raises(GraphTypeError, match="exp: input 0: cannot use list"):
        rt.exp(["a", "b"])
    with pytest.raises(GraphTypeError, match="exp: input 0: cannot use object"):
        rt.exp(object())
    with pytest.raises(GraphTypeError, match="Exp: input 0 must be a Var, got int"):
        apply_op(rt.exp, (1,))
    with pytest.raises(GraphTypeError, match=r"constant: .* is symbolic"):
        constant(rt.vector("x"))
    with pytest.raises(GraphTypeError, match="Var: type must be a TensorType"):
        Var("float64")


def test_type_errors_from_infer_types_name_the_inputs():
    a, b = rt.vector("a"), rt.vector("b", dtype="float32")
    with pytest.raises(
        GraphTypeError, match=r"pair: dtypes differ: float64 and float32 \(inputs 'a', 'b'\)"
    ):
        Pair()(a, b)
    with pytest.raises(GraphTypeError, match="BadTypes: infer_types must return"):
        BadTypes()(a)


def test_multi_output_nodes():
    x = rt.vector("x")
    lo, hi = MinMax()(x)
    assert (lo.index, hi.index) == (0, 1)
    assert lo.owner is hi.owner
    assert lo.owner.outputs == (lo, hi)
    assert lo.owner.nout == 2
    assert MinMax()(x) == (lo, hi)


def test_freed_outputs_are_rebuilt_on_demand():
    x = rt.vector("x")
    lo, hi = MinMax()(x)
    node = lo.owner
    hi_ref = weakref.ref(hi)
    del hi
    assert hi_ref() is None  # freed by reference counting alone
    hi2 = node.outputs[1]
    assert hi2.owner is node and hi2.index == 1 and hi2.type is TensorType("float64", ())
    assert MinMax()(x)[1] is hi2


def test_unreferenced_nodes_are_freed_without_the_cycle_collector():
    gc.disable()
    try:
        x = rt.vector("x")
        live = intern_stats().applies_live
        y = rt.log(rt.exp(x) + 1.0)
        refs = [weakref.ref(node) for node in rk.toposort(y)]
        assert intern_stats().applies_live == live + 3
        del y
        assert all(ref() is None for ref in refs)
        assert intern_stats().applies_live == live
    finally:
        gc.enable()


def test_the_intern_table_does_not_keep_graphs_alive():
    x = rt.vector("x")
    y = x
    for _ in range(1000):
        y = rt.exp(y)
    first = weakref.ref(rk.toposort(y)[0])
    del y
    assert first() is None
    # Building again gives fresh nodes, which are interned again.
    assert rt.exp(rt.exp(x)) is rt.exp(rt.exp(x))


def _build_in_threads(build, count=8):
    barrier = threading.Barrier(count)
    results = [None] * count

    def work(i):
        barrier.wait()
        results[i] = build()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_concurrent_construction_from_eight_threads_gives_one_object():
    x = rt.vector("x")

    def build():
        y = x
        for _ in range(300):
            y = rt.exp(y) * 2.0
        return y

    results = _build_in_threads(build)
    assert all(r is results[0] for r in results)
    nodes = rk.toposort(results[0])
    assert len(nodes) == 600
    assert len({id(n) for n in nodes}) == 600


def test_concurrent_construction_of_constants_and_multi_output_nodes():
    x = rt.vector("x")
    results = _build_in_threads(lambda: (constant(np.arange(50.0)), MinMax()(x)))
    assert all(r[0] is results[0][0] for r in results)
    assert all(r[1][0] is results[0][1][0] and r[1][1] is results[0][1][1] for r in results)


def test_threads_building_overlapping_graphs_keep_the_table_consistent():
    x, z = rt.vector("x"), rt.vector("z")

    def build():
        values = [x, z]
        for i in range(400):
            a, b = values[i % len(values)], values[(i * 7 + 3) % len(values)]
            values.append(rt.exp(a) + b if i % 3 else rt.log(a * b))
        return values

    results = _build_in_threads(build)
    for column in zip(*results, strict=True):
        assert all(v is column[0] for v in column)
    for node in rk.toposort(results[0][-1]):
        assert apply_op(node.op, node.inputs) == node.outputs
