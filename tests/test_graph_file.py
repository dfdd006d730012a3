"""Graph files (``rk.save``/``rk.load``, ``rk.dumps``/``rk.loads``): every Op record and the
benchmark workloads round-trip to the very same nodes; hostile files load nothing and
name the place that is wrong; graphs that hold code refuse to be saved."""

from __future__ import annotations

import base64
import builtins
import copy
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.random as rr
import rewritekit.tensor as rt
from bench.workloads import WORKLOADS
from rewritekit.graphfile import MAX_GRAPH_DEPTH, MAX_NESTING
from rewritekit.tensor.sharding import Shard
from tests.records import collect

RECORDS = collect()


def _as_list(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _record_graph(record, data):
    dtype = data.draw(st.sampled_from(record.dtypes), label="dtype")
    arrays = record.draw(data, dtype)
    inputs = [
        rt.tensor(
            f"x{i}", shape=a.shape if record.static_shapes else (None,) * a.ndim, dtype=a.dtype
        )
        for i, a in enumerate(arrays)
    ]
    return arrays, inputs, record.build(*inputs)


def _same(a, b):
    return a is b if isinstance(a, rk.Var) else type(a) is type(b) and all(map(_same, a, b))


def _run(inputs, outputs, arrays):
    f = rk.function(inputs, _as_list(outputs), backend="numpy", rules=None)
    return [np.asarray(v) for v in f(*arrays)]


# --- round trips ---------------------------------------------------------------------------


@settings(max_examples=1, deadline=None, phases=[Phase.generate])  # no shrinking: 1000s of draws
@given(data=st.data())
def test_every_op_record_round_trips_to_the_same_nodes(data):
    """Given the same inputs, loading gives back the original nodes; over new inputs, the
    same graph (it saves to the same text); a sample also computes the same values."""
    wrong = []
    for k, record in enumerate(RECORDS):
        arrays, inputs, outputs = _record_graph(record, data)
        if Shard in record.ops:  # a JAX sharding is no value a file holds
            with pytest.raises(rk.GraphFileError, match=r"parameter 'spec'.*NamedSharding"):
                rk.dumps(outputs, inputs=inputs)
            continue
        text = rk.dumps(outputs, inputs=inputs)
        if not _same(rk.loads(text, inputs=inputs).outputs, outputs):
            wrong.append(record.name)
        fresh = rk.loads(text)
        assert [v.name for v in fresh.inputs] == [v.name for v in inputs]
        if rk.dumps(fresh.outputs, inputs=fresh.inputs) != text:
            wrong.append(f"{record.name} (new inputs)")
        if k % 12 == 0:
            with np.errstate(all="ignore"):
                expected = _run(inputs, outputs, arrays)
                got = _run(fresh.inputs, fresh.outputs, arrays)
            for a, e in zip(got, expected, strict=True):
                np.testing.assert_array_equal(a, e, err_msg=record.name)
    assert not wrong, f"records that do not round-trip: {wrong}"


WORKLOAD_SIZES = {"W1": 10, "W2": 10, "W3": 1, "W4": 1, "W5": 1, "W6": 30}


@pytest.mark.parametrize("name", sorted(WORKLOAD_SIZES))
def test_workloads_round_trip_and_compute_the_same(name, tmp_path):
    """W1-W6: W3, W5 and W6 are gradient graphs, W6's of a scan."""
    workload = WORKLOADS[name]
    inputs, outputs = workload.rewritekit(WORKLOAD_SIZES[name])
    path = tmp_path / f"{name}.json"
    rk.save(outputs, path, inputs=inputs)
    assert _same(rk.load(path, inputs=inputs).outputs, outputs)
    fresh_inputs, fresh_outputs = rk.load(path)
    assert all(a is not b for a, b in zip(fresh_inputs, inputs, strict=True))
    arrays = workload.data(WORKLOAD_SIZES[name])
    expected = _run(inputs, outputs, arrays)
    for a, e in zip(_run(fresh_inputs, fresh_outputs, arrays), expected, strict=True):
        np.testing.assert_array_equal(a, e)


def _control_graph():
    """A scan holding a scan, a bounded and an unbounded while loop, a cond, and a gradient
    through the scans."""
    x, s = rt.vector("x"), rt.scalar("s")

    def outer(c, xi):
        inner, _ = rk.scan(lambda d, t: (d * t + xi, d), c, x)
        return rt.tanh(inner), inner * xi

    c, ys = rk.scan(outer, s, x)
    n = rk.while_loop(lambda v: v < 100.0, lambda v: v * 2.0 + s, rt.abs(s) + 1.0)
    bounded = rk.while_loop(lambda v: v < 10.0, lambda v: v + rt.exp(s), s, max_steps=5)
    branch = rk.cond(s > 0.0, lambda v: rt.log1p(v), lambda v: v * s, rt.abs(c))
    total = rt.sum(ys) + c + n + bounded + branch
    return [x, s], [total, *rk.grad(rt.sum(ys) + branch + bounded, [x, s])]


def test_loops_and_branches_and_their_gradients_round_trip():
    inputs, outputs = _control_graph()
    text = rk.dumps(outputs, inputs=inputs)
    assert '"name":"tensor.control.ops.While"' in text and '"graph":' in text
    assert _same(rk.loads(text, inputs=inputs).outputs, outputs)
    fresh = rk.loads(text)
    arrays = [np.array([0.3, -0.2, 0.5]), np.array(0.7)]
    expected = _run(inputs, outputs, arrays)
    for a, e in zip(_run(*fresh, arrays), expected, strict=True):
        np.testing.assert_array_equal(a, e)


def test_built_in_composites_are_saved_by_name():
    key, scale = rr.key("key"), rt.scalar("scale")
    k, h = rr.halfnormal(key, scale, size=(3,))
    _, g = rr.lognormal(k, 0.0, scale)
    text = rk.dumps([h, g], inputs=[key, scale])
    assert '{"composite":"halfnormal"}' in text and '{"composite":"lognormal"}' in text
    assert _same(rk.loads(text, inputs=[key, scale]).outputs, [h, g])


def test_structure_names_and_constants_come_back():
    x = rt.vector("x", dtype="float32")
    named = rt.constant(np.arange(3, dtype=np.int8), name="steps")
    big = rt.constant(np.linspace(0.0, 1.0, 500))  # interned by a content hash
    flags = rt.constant(np.array([True, False]))
    z = rt.constant(np.array([1 + 2j], dtype=np.complex64))
    y = rt.sum(x) + rt.sum(named) + rt.sum(big) + rt.sum(rt.where(flags, 1.0, 2.0)) + rt.real(z)
    for outputs in (y, [y, x], (x, y), [named], []):
        loaded = rk.loads(rk.dumps(outputs))
        assert type(loaded.outputs) is type(outputs)
    (x2,), y2 = rk.loads(rk.dumps(y))
    assert x2.name == "x" and x2.type is x.type and x2 is not x
    constants = [v for v in rk.ancestors(y2) if isinstance(v, rk.Constant)]
    assert {id(c) for c in constants} >= {id(named), id(big), id(flags), id(z)}
    assert rk.loads(rk.dumps(named)).outputs is named  # nothing to rebuild over


def test_inputs_order_and_binding():
    x, y, unused = rt.vector("x"), rt.scalar("y"), rt.matrix("unused")
    out = rt.exp(x) * y
    text = rk.dumps(out, inputs=[y, unused, x])
    assert rk.loads(text, inputs=[y, unused, x]).outputs is out
    assert [v.name for v in rk.loads(text).inputs] == ["y", "unused", "x"]
    with pytest.raises(rk.GraphFileError, match=r"inputs: the file has 3 inputs, 2 given"):
        rk.loads(text, inputs=[y, x])
    with pytest.raises(rk.GraphFileError, match=r"inputs\[2\]: the file's input 'x' is"):
        rk.loads(text, inputs=[y, unused, rt.matrix("m")])
    with pytest.raises(TypeError, match=r"save: the outputs read .*'x'.* which inputs does"):
        rk.dumps(out, inputs=[y])
    with pytest.raises(TypeError, match=r"save: inputs\[0\] must be a graph input Var"):
        rk.dumps(out, inputs=[rt.exp(x), y])


simple_ops = st.sampled_from(
    [
        ("unary", rt.exp),
        ("unary", rt.tanh),
        ("unary", lambda v: rt.log1p(rt.abs(v))),
        ("unary", lambda v: rt.cast(v, "float32")),
        ("binary", rt.add),
        ("binary", rt.multiply),
        ("binary", rt.maximum),
        ("binary", lambda a, b: rt.where(a > b, a, b)),
        ("reduce", lambda v: rt.sum(v, axis=-1, keepdims=True) if v.ndim else v),
        ("reduce", lambda v: rt.max(v)),
        ("reduce", lambda v: rt.mean(v, axis=0) if v.ndim else -v),
        ("constant", None),
    ]
)


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.tuples(simple_ops, st.integers(0, 99), st.integers(0, 99)), max_size=12))
def test_random_small_graphs_survive_dumps_and_loads(steps):
    inputs = [rt.vector("x", shape=(3,)), rt.matrix("A", shape=(2, 3)), rt.scalar("s")]
    pool = list(inputs)
    for (kind, fn), i, j in steps:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        if kind == "constant":
            pool.append(a * float(j - 50) / 7.0)
        else:
            pool.append(fn(a, b) if kind == "binary" else fn(a))
    outputs = pool[-2:]
    text = rk.dumps(outputs, inputs=inputs)
    assert _same(rk.loads(text, inputs=inputs).outputs, outputs)
    fresh = rk.loads(text)
    assert rk.dumps(fresh.outputs, inputs=fresh.inputs) == text


# --- graphs that hold code are refused at save time -------------------------------------------


def test_a_user_composite_distribution_is_refused_naming_the_node():
    def folded(key, scale):
        key, z = rr.normal(key, 0.0, scale)
        return key, rt.abs(z)

    sampler = rr.custom(folded, name="folded", logp=lambda v, scale: -v / scale)
    _, draw = sampler(rr.key("key"), rt.scalar("scale"))
    with pytest.raises(
        rk.GraphFileError,
        match=r"cannot save nodes\[0\] \(folded\{.*parameter 'spec'.*user distribution "
        r"'folded' from rr.custom.*logp is a Python callable",
    ):
        rk.dumps(rt.exp(draw))


def test_every_tensor_op_has_a_registered_name():
    names = rk.graphfile.registry.NAMES
    ops = {op for record in RECORDS for op in record.ops}
    assert not sorted(op.__name__ for op in ops if op not in names)
    assert names[type(rt.exp(rt.vector("x")).owner.op)] == "tensor.transcendental.Exp"


@pytest.fixture
def own_registry(monkeypatch):
    """Ops registered in the test are forgotten after it."""
    registry = rk.graphfile.registry
    classes, names = dict(registry.CLASSES), dict(registry.NAMES)
    for module, name, table in [
        (registry, "CLASSES", classes),
        (registry, "NAMES", names),
        (rk.graphfile.reader, "CLASSES", classes),
        (rk.graphfile.writer, "NAMES", names),
    ]:
        monkeypatch.setattr(module, name, table)


def test_callables_unregistered_ops_and_foreign_objects_are_refused(own_registry):
    class Scale(rk.Op):
        __props__ = ("factor",)

        def infer_types(self, x):
            return (x,)

    x = rt.vector("x")
    with pytest.raises(rk.GraphFileError, match=r"nodes\[1\] \(Scale.*is not registered"):
        rk.dumps(Scale(2.0)(rt.exp(x)))
    with pytest.raises(rk.GraphFileError, match=r"parameter 'factor'.*a Python callable"):
        rk.dumps(Scale(np.exp)(x))
    rk.register_op(Scale, "tests.Scale")
    y = Scale(np.float32(2.5))(Scale((1, None, "a", 2.0, True))(x))
    assert rk.loads(rk.dumps(y), inputs=[x]).outputs is y
    with pytest.raises(rk.GraphFileError, match=r"'tensor.transcendental.Exp' already names"):
        rk.register_op(Scale, "tensor.transcendental.Exp")
    with pytest.raises(TypeError, match=r"register_op: expected a concrete Op class"):
        rk.register_op(print)


def test_imported_jax_equations_and_shardings_are_refused():
    jax = pytest.importorskip("jax")
    from jax.sharding import PartitionSpec

    def fn(key, z):
        return z + jax.random.normal(key, (3,))

    with jax.enable_x64(True):
        _, y = rk.from_jax(fn, jax.random.key(0), np.zeros(3), opaque=True)
    with pytest.raises(
        rk.GraphFileError, match=r"cannot save nodes\[\d+\] \(OpaqueJax\{.*parameter 'equation'"
    ):
        rk.dumps(y)
    with pytest.raises(rk.GraphFileError, match=r"parameter 'spec': it is a jax\."):
        rk.dumps(rt.shard(rt.vector("x"), PartitionSpec("data")))


# --- hostile and malformed files ------------------------------------------------------------


def _doc(outputs, inputs=None):
    return json.loads(rk.dumps(outputs, inputs=inputs))


def _loads(doc):
    return rk.loads(doc if isinstance(doc, str) else json.dumps(doc))


def _exp_doc():
    x = rt.vector("x")
    return _doc(rt.exp(x) + rt.constant(np.zeros(4)))


@pytest.fixture
def nothing_runs(monkeypatch):
    """os.system, eval and Popen fail the test if called; no module may be imported."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"called with {args}")

    monkeypatch.setattr(os, "system", refuse)
    monkeypatch.setattr(builtins, "eval", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    before = set(sys.modules)
    yield
    assert set(sys.modules) == before


@pytest.mark.parametrize(
    "name", ["os.system", "builtins.eval", "subprocess.Popen", "antigravity.fly", "pickle.loads"]
)
def test_an_op_name_outside_the_registry_loads_nothing(name, nothing_runs):
    doc = _exp_doc()
    doc["ops"][0]["name"] = name
    doc["ops"][0]["params"] = {"command": {"str": "echo pwned"}}
    with pytest.raises(rk.GraphFileError, match=rf"ops\[0\]\.name: unknown Op '{name}'"):
        _loads(doc)


EXPLODED = []


def _explode(*args):
    EXPLODED.append(args)


class _Payload:
    def __reduce__(self):
        return (_explode, ("unpickled",))


def test_a_pickle_in_a_constant_is_only_bytes(nothing_runs):
    payload = pickle.dumps(_Payload())
    payload += b"." * (-len(payload) % 8)  # past STOP: pickle would ignore the padding
    doc = _exp_doc()
    doc["constants"][0].update(shape=[len(payload) // 8], data=base64.b64encode(payload).decode())
    doc["types"].append({"dtype": "float64", "shape": [len(payload) // 8]})
    doc["nodes"][-1]["types"] = [len(doc["types"]) - 1]
    _, out = _loads(doc)
    (const,) = [v for v in out.owner.inputs if isinstance(v, rk.Constant)]
    assert const.data.tobytes() == payload and const.dtype == "float64"
    doc["constants"][0]["shape"] = [len(payload) // 8 + 1]
    with pytest.raises(rk.GraphFileError, match=r"constants\[0\]\.data: \d+ base64 characters"):
        _loads(doc)
    assert not EXPLODED


@pytest.mark.parametrize("dtype", ["object", "O", "V8", "<U3", "datetime64[s]", "float96"])
def test_object_and_other_foreign_dtypes_are_refused(dtype, nothing_runs):
    doc = _exp_doc()
    doc["constants"][0]["dtype"] = dtype
    with pytest.raises(rk.GraphFileError, match=r"constants\[0\]\.dtype: .* is not a dtype"):
        _loads(doc)
    doc = _exp_doc()
    doc["types"][0]["dtype"] = dtype
    with pytest.raises(rk.GraphFileError, match=r"types\[0\]\.dtype: .* is not a dtype"):
        _loads(doc)


@pytest.mark.parametrize("shape", [[10**12], [2**40, 2**40], [0, 10**30], [10**30, 10**30]])
def test_a_huge_shape_with_short_data_is_refused(shape):
    doc = _exp_doc()
    doc["constants"][0]["shape"] = shape
    with pytest.raises(rk.GraphFileError, match=r"constants\[0\]\.data: 44 base64 characters"):
        _loads(doc)
    if 0 in shape:  # no bytes at all, and a length NumPy cannot make
        doc["constants"][0]["data"] = ""
        with pytest.raises(rk.GraphFileError, match=r"constants\[0\]\.data: "):
            _loads(doc)


def test_nesting_bombs_are_refused():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(rk.GraphFileError, match="file: the JSON is nested too deeply"):
        rk.loads('{"format": "rewritekit.graph", "version": 1, "types": ' + deep + "}")
    x = rt.vector("x")
    doc = _doc(rt.sum(x, axis=0))
    axis = {"int": 0}
    for _ in range(MAX_NESTING + 5):
        axis = {"tuple": [axis]}
    doc["ops"][0]["params"]["axis"] = axis
    with pytest.raises(rk.GraphFileError, match=r"ops\[0\]\.params\.axis(\.tuple\[0\])+: tuples"):
        _loads(doc)
    _loads(_nested_scans(10))  # loops in loops are fine up to the bound
    with pytest.raises(
        rk.GraphFileError,
        match=rf"ops\[{MAX_GRAPH_DEPTH + 1}\]\.params\.body\.graph: inner graphs nested over",
    ):
        _loads(_nested_scans(MAX_GRAPH_DEPTH + 5))


def _nested_scans(depth):
    """A file of scans, each of whose body runs the scan before it (the first runs exp)."""
    ops = [{"name": "tensor.transcendental.Exp", "params": {}}]
    for k in range(depth):
        body = {"inputs": [0], "nodes": [{"op": k, "inputs": [["arg", 0]], "types": [0]}]}
        body["outputs"] = [["node", 0]]
        params = {"body": {"graph": body}, "n_carry": {"int": 1}, "n_seq": {"int": 0}}
        params |= {"length": {"int": 1}, "reverse": {"bool": False}}
        ops.append(
            {"name": "tensor.control.ops.Scan", "params": params | {"checkpoint": {"bool": False}}}
        )
    return {
        "format": "rewritekit.graph",
        "version": 1,
        "structure": "var",
        "inputs": [{"name": "x", "type": 0}],
        "outputs": [["node", 0]],
        "types": [{"dtype": "float64", "shape": []}],
        "constants": [],
        "ops": ops,
        "nodes": [{"op": depth, "inputs": [["in", 0]], "types": [0]}],
    }


def _edit(doc, *edits):
    for path, value in edits:
        target = doc
        for key in path[:-1]:
            target = target[key]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return doc


def _two_input_doc():
    x, y = rt.vector("x", shape=(3,)), rt.vector("y")
    return _doc(rt.exp(x) + rt.sum(y, axis=0, keepdims=True), inputs=[x, y])


MALFORMED = [
    (["version"], 2, r"version: the file has format version 2; this rewritekit reads version 1"),
    (["version"], "1", r"version: expected an int, got \"1\""),
    (["format"], "pytensor", r"format: expected 'rewritekit.graph', got 'pytensor'"),
    (["nodes"], KeyError, r"^nodes: missing"),
    (["nodes", 0, "op"], True, r"nodes\[0\]\.op: expected an int, got true"),
    (["nodes", 0, "op"], 99, r"nodes\[0\]\.op: expected an index into ops \(0 to 2\), got 99"),
    (["nodes", 0, "inputs", 0], ["node", 0], r"nodes\[0\]\.inputs\[0\]: reads node 0, which is"),
    (["nodes", 0, "inputs", 0], ["node", 2], r"nodes\[0\]\.inputs\[0\]: reads node 2, which is"),
    (["nodes", 0, "inputs", 0], ["arg", 0], r"nodes\[0\]\.inputs\[0\]: .* are read at its top"),
    (
        ["nodes", 0, "inputs", 0],
        ["in", 5],
        r"nodes\[0\]\.inputs\[0\]: expected an index into inputs \(0 to 1\), got 5",
    ),
    (["nodes", 0, "inputs", 0], "x", r"nodes\[0\]\.inputs\[0\]: expected a reference"),
    (["nodes", 0, "inputs", 0], ["eval", 0], r"nodes\[0\]\.inputs\[0\]: unknown reference"),
    (["nodes", 0, "types"], [1], r"nodes\[0\]\.types: the file says float64\[1\], Exp gives"),
    (["types", 1, "shape"], [4], r"nodes\[1\]\.types: the file says float64\[4\], Sum\{"),
    (["types", 0, "shape"], [-1], r"types\[0\]\.shape\[0\]: expected a length >= 0"),
    (["ops", 1, "params"], {"axis": {"tuple": [{"int": 0}]}}, r"ops\[1\]\.params: Sum takes"),
    (["ops", 1, "params", "axis"], {"tuple": [{"int": 5}]}, r"nodes\[1\]: Sum\{axis=\(5,\)"),
    (["ops", 1, "params", "keepdims"], {"pickle": "gASV"}, r"keepdims: unknown tag 'pickle'"),
    (["ops", 1, "params", "keepdims"], {"bool": 1}, r"keepdims\.bool: expected a bool, got 1"),
    (["ops", 1, "params", "keepdims"], True, r"keepdims: expected an object with one tag"),
    (["ops", 1, "params", "axis"], {"str": "0"}, r"ops\[1\]\.params: Sum rejects them"),
    (["structure"], "dict", r"structure: expected one of \['var', 'list', 'tuple'\]"),
    (["inputs", 1, "name"], 3, r"inputs\[1\]\.name: expected a string or null, got 3"),
    (["outputs"], [["node", 1], ["node", 2]], r"outputs: structure 'var' needs one output"),
]


@pytest.mark.parametrize(
    ("path", "value", "message"), MALFORMED, ids=[m[2][:40] for m in MALFORMED]
)
def test_malformed_files_name_the_place(path, value, message):
    with pytest.raises(rk.GraphFileError, match=message):
        _loads(_edit(_two_input_doc(), (path, value)))


def test_a_type_that_infer_types_rejects_names_the_node():
    doc = _edit(
        _two_input_doc(), (["types", 2, "shape"], [4]), (["nodes", 2, "inputs", 1], ["in", 1])
    )
    with pytest.raises(
        rk.GraphFileError,
        match=r"nodes\[2\]: Add rejects inputs of types \(float64\[3\], float64\[4\]\): add",
    ):
        _loads(doc)


def test_malformed_constants_and_json_name_the_place():
    doc = _doc(rt.sum(rt.constant(np.array([True, False]))))
    doc["constants"][0]["data"] = base64.b64encode(b"\x01\x07").decode()
    with pytest.raises(rk.GraphFileError, match=r"constants\[0\]\.data: bool data holds bytes"):
        _loads(doc)
    doc["constants"][0]["data"] = "AQ!="
    with pytest.raises(rk.GraphFileError, match=r"constants\[0\]\.data: not base64"):
        _loads(doc)
    doc["constants"][0]["shape"] = [True]
    with pytest.raises(rk.GraphFileError, match=r"constants\[0\]\.shape: expected lengths >= 0"):
        _loads(doc)
    with pytest.raises(rk.GraphFileError, match=r"file: not valid JSON"):
        rk.loads('{"format": "rewritekit.graph", "version": 1,')
    with pytest.raises(rk.GraphFileError, match=r"file: not valid JSON: NaN is not JSON"):
        rk.loads('{"format": NaN}')
    with pytest.raises(rk.GraphFileError, match=r"file: expected an object, got \[\]"):
        rk.loads("[]")
    with pytest.raises(rk.GraphFileError, match=r"file: not valid JSON"):
        rk.loads(b"\xff\xfe{")
    doc = copy.deepcopy(_exp_doc())
    doc["ops"][0]["params"] = {"extra": {"int": 1}}
    with pytest.raises(rk.GraphFileError, match=r"ops\[0\]\.params: Exp takes the parameters \[\]"):
        _loads(doc)
