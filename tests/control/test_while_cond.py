"""``rk.while_loop`` (with and without ``max_steps``) and ``rk.cond``: values on both backends
against plain Python, pytrees, closures, laziness of ``cond``, the build-time errors, and
the nodes in the IR (hash-consing, printing, pickling, ``replace``, ``jax.jit``/``vmap``)."""

import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.tensor.control import Cond, Scan, While
from tests.control.test_scan import BACKENDS, both, close, run

# --- while_loop ---------------------------------------------------------------------------


def _doublings(v, bound):
    """How the loop ``while v < bound: v = v * 2 + 1`` ends, in Python."""
    steps = 0
    while v < bound:
        v, steps = v * 2.0 + 1.0, steps + 1
    return v, steps


def test_while_loop_with_a_pytree_state_and_closed_over_values():
    v, bound, step = rt.scalar("v"), rt.scalar("bound"), rt.scalar("step")
    out = rk.while_loop(
        lambda s: s["v"] < bound,  # closes over bound
        lambda s: {"v": s["v"] * 2.0 + step, "n": [s["n"][0] + 1]},  # closes over step
        {"v": v, "n": [np.int32(0)]},
    )
    node = out["v"].owner
    assert isinstance(node.op, While) and node is out["n"][0].owner
    assert set(node.inputs[2:]) == {bound, step} and len(node.inputs) == 4
    assert out["n"][0].dtype == "int32"
    for start, limit in [(1.0, 100.0), (0.5, 3.0), (7.0, 2.0)]:  # the last runs no step
        got = both([v, bound, step], [out["v"], out["n"][0]], start, limit, 1.0)
        close(got, _doublings(start, limit))


def test_while_loop_over_vectors_and_several_dtypes():
    x = rt.vector("x")
    total, count = rk.while_loop(
        lambda s: rt.sum(s[0]) < 50.0, lambda s: (s[0] * 1.5 + 0.5, s[1] + 1), (x, 0)
    )
    assert total.type == x.type and count.dtype == "int64"
    values, n = np.array([0.5, 1.0, 2.0]), 0
    while values.sum() < 50.0:
        values, n = values * 1.5 + 0.5, n + 1
    close(both([x], [total, count], np.array([0.5, 1.0, 2.0])), [values, n])


@pytest.mark.parametrize(("start", "limit"), [(1.0, 100.0), (7.0, 2.0), (0.5, 1e6)])
def test_max_steps_runs_a_masked_scan(start, limit):
    """Finished within the bound: as the unbounded loop; not finished: the state after
    ``max_steps`` steps."""
    v, bound = rt.scalar("v"), rt.scalar("bound")
    out = rk.while_loop(lambda s: s < bound, lambda s: s * 2.0 + 1.0, v, max_steps=8)
    assert isinstance(out.owner.op, Scan) and out.owner.op.length == 8
    expected = start
    for _ in range(8):
        expected = expected * 2.0 + 1.0 if expected < limit else expected
    assert expected == _doublings(start, limit)[0] or limit == 1e6  # the last one is cut
    close([both([v, bound], out, start, limit)], [expected])
    unbounded = rk.while_loop(lambda s: s < bound, lambda s: s * 2.0 + 1.0, v)
    if limit < 1e6:
        close([both([v, bound], unbounded, start, limit)], [expected])


def test_max_steps_zero_and_a_pytree_state():
    v = rt.scalar("v")
    assert rk.while_loop(lambda s: s < 10.0, lambda s: s + 1.0, v, max_steps=0) is v
    out = rk.while_loop(
        lambda s: s[1] < 3, lambda s: (s[0] * 2.0, s[1] + 1), (v, np.int32(0)), max_steps=5
    )
    assert out[1].dtype == "int32"
    close(both([v], list(out), 1.5), [12.0, 3])


def test_while_loop_errors_name_what_is_wrong():
    v = rt.scalar("v")
    with pytest.raises(
        DTypeError, match=r"while_loop: cond_fun must return a bool scalar, got float64\[\]"
    ):
        rk.while_loop(lambda s: s, lambda s: s, v)
    with pytest.raises(DTypeError, match=r"bool scalar, got bool\[\?\]"):
        rk.while_loop(lambda s: s > 0.0, lambda s: s, rt.vector("x"))
    with pytest.raises(GraphTypeError, match=r"cond_fun must return one bool scalar, got 2 values"):
        rk.while_loop(lambda s: (s > 0.0, s > 1.0), lambda s: s, v)
    with pytest.raises(DTypeError, match=r"cond_fun must return a bool scalar, got float64\[\]"):
        rk.while_loop(lambda s: s, lambda s: s, v, max_steps=3)
    for max_steps in (None, 4):
        with pytest.raises(
            GraphTypeError,
            match=r"while_loop: carry\[1\]\['a'\] changes type from float64\[\] "
            r"\(initial\) to float32\[\]",
        ):
            rk.while_loop(
                lambda s: s[0] < 3,
                lambda s: (s[0] + 1, {"a": rt.cast(s[1]["a"], "float32")}),
                (0, {"a": v}),
                max_steps=max_steps,
            )
        with pytest.raises(
            GraphTypeError, match=r"structure \[\*\], but the initial carry has \(\*,\)"
        ):
            rk.while_loop(lambda s: s[0] < 3.0, lambda s: [s[0]], (v,), max_steps=max_steps)
    with pytest.raises(
        ShapeError, match="while_loop: max_steps: length must be non-negative, got -1"
    ):
        rk.while_loop(lambda s: s < 1.0, lambda s: s, v, max_steps=-1)
    with pytest.raises(GraphTypeError, match="max_steps: length must be a non-negative Python int"):
        rk.while_loop(lambda s: s < 1.0, lambda s: s, v, max_steps=2.0)
    with pytest.raises(GraphTypeError, match="cond_fun and body_fun must be functions"):
        rk.while_loop(lambda s: s < 1.0, None, v)
    with pytest.raises(
        GraphTypeError, match=r"fori_loop: upper must be an integer scalar, got float64\[\]"
    ):
        rk.fori_loop(0, v, lambda i, s: s, v)


# --- cond ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_cond_is_lazy_the_untaken_branch_never_runs(backend):
    """The untaken branch is a loop that would never end: only the taken one runs."""
    p, x = rt.scalar("p", dtype="bool"), rt.vector("x")
    forever = lambda v: rk.while_loop(lambda s: s > -1.0, lambda s: s + 1.0, v)  # noqa: E731
    y = rk.cond(p, forever, lambda v: v * 2.0, rt.sum(x))
    z = rk.cond(p, lambda v: v * 3.0, forever, rt.sum(x))
    assert float(run([p, x], y, False, np.arange(3.0), backend=backend)) == 6.0
    assert float(run([p, x], z, True, np.arange(3.0), backend=backend)) == 9.0


def test_cond_on_numpy_does_not_evaluate_a_branch_that_would_raise():
    x, n = rt.vector("x"), rt.scalar("n", dtype="int64")
    y = rk.cond(n < 3, lambda: x[n], lambda: rt.sum(x))
    f = rk.function([x, n], y, backend="numpy", rules=None)
    assert f(np.arange(3.0), 1) == 1.0 and f(np.arange(3.0), 7) == 3.0
    eager = rk.function([x, n], rt.where(n < 3, x[n], rt.sum(x)), backend="numpy", rules=None)
    with pytest.raises(IndexError):  # where evaluates both sides
        eager(np.arange(3.0), 7)


def test_cond_with_pytrees_and_values_closed_over_by_either_branch():
    p, a, b = rt.scalar("p", dtype="bool"), rt.scalar("a"), rt.vector("b")
    u, w = rt.scalar("u"), rt.vector("w")

    def yes(pair, d):
        return {"s": pair[0] * u, "v": [pair[1] + d["k"], None]}  # closes over u

    def no(pair, d):
        return {"s": pair[0] - 1.0, "v": [w * d["k"], None]}  # closes over w

    out = rk.cond(p, yes, no, (a, b), {"k": 2.0})
    node = out["s"].owner
    assert isinstance(node.op, Cond) and out["v"][1] is None and isinstance(out["v"], list)
    assert node.inputs[:3] == (p, a, b) and set(node.inputs[4:]) == {u, w}
    ins, args = [p, a, b, u, w], [1.5, np.array([1.0, 2.0]), 4.0, np.array([3.0, 5.0])]
    close(both(ins, [out["s"], out["v"][0]], True, *args), [6.0, [3.0, 4.0]])
    close(both(ins, [out["s"], out["v"][0]], False, *args), [0.5, [6.0, 10.0]])


def test_cond_without_operands_with_constant_outputs_and_weak_numbers():
    p, v = rt.scalar("p", dtype="bool"), rt.scalar("v", dtype="float32")
    one = rk.cond(p, lambda: 1.0, lambda: 2.0)
    assert one.owner.inputs == (p,)
    assert both([p], one, True) == 1.0 and both([p], one, False) == 2.0
    for y in (rk.cond(p, lambda: v, lambda: 1.5), rk.cond(p, lambda: 1.5, lambda: v)):
        assert y.dtype == "float32"  # a number takes the other branch's dtype
    assert rk.cond(p, lambda: None, lambda: None) is None
    assert rk.cond(p, lambda: (), lambda: ()) == ()
    merged = rk.cond(p, lambda: rt.vector("s", shape=(3,)), lambda: rt.vector("t"))
    assert merged.type.shape == (None,)  # shapes known in one branch only are unknown


def test_cond_errors_name_what_is_wrong():
    w, p = rt.scalar("w"), rt.scalar("p", dtype="bool")
    for pred, shown in [
        (w, r"float64\[\]"),
        (rt.vector("b", dtype="bool"), r"bool\[\?\]"),
        (1, r"int64\[\]"),
    ]:
        with pytest.raises(DTypeError, match=rf"cond: pred must be a bool scalar, got {shown}"):
            rk.cond(pred, lambda: w, lambda: w)
    cases = [
        (
            lambda: (w, w),
            lambda: [w, w],
            r"true branch returns \(\*, \*\), the false branch \[\*, \*\]",
        ),
        (lambda: (w, w), lambda: (w,), r"returns \(\*, \*\), the false branch \(\*,\)"),
        (lambda: {"a": w}, lambda: {"b": w}, r"returns \{'a': \*\}, the false branch \{'b': \*\}"),
        (lambda: w, lambda: None, r"returns \*, the false branch None"),
    ]
    for yes, no, message in cases:
        with pytest.raises(GraphTypeError, match=message + "; both must return the same structure"):
            rk.cond(p, yes, no)
    typed = [
        (
            lambda: {"a": w},
            lambda: {"a": rt.cast(w, "int64")},
            r"output\['a'\] is float64\[\] in the true branch and int64\[\]",
        ),
        (
            lambda: [w, w],
            lambda: [w, rt.vector("x")],
            r"output\[1\] is float64\[\] in the true branch and float64\[\?\]",
        ),
        (
            lambda: rt.vector("s", shape=(2,)),
            lambda: rt.vector("t", shape=(3,)),
            r"output is float64\[2\] in the true .* float64\[3\]",
        ),
    ]
    for yes, no, message in typed:
        with pytest.raises(GraphTypeError, match="cond: " + message):
            rk.cond(p, yes, no)
    with pytest.raises(GraphTypeError, match="cond: true_fun and false_fun must be functions"):
        rk.cond(p, w, lambda: w)


# --- in the IR ----------------------------------------------------------------------------


def test_cond_and_while_traced_twice_are_the_same_node_and_print_their_graphs():
    p, v, u = rt.scalar("p", dtype="bool"), rt.scalar("v"), rt.scalar("u")
    make = lambda: rk.cond(p, lambda a: rt.exp(a) * u, lambda a: a - 1.0, v)  # noqa: E731
    assert make() is make()
    other = rk.cond(p, lambda a: rt.exp(a) * v, lambda a: a - 1.0, v)
    assert other is not make() and other.owner.op is make().owner.op  # same graphs, inputs differ
    loop = lambda: rk.while_loop(lambda s: s < u, lambda s: s * 2.0, v)  # noqa: E731
    assert loop() is loop()
    assert rk.dprint(make()) == "\n".join(
        [
            "Cond float64[]",
            "┆ true_graph(%0: float64[], %1: float64[]) ->",
            "┆   Multiply float64[]",
            "┆   ├─ Exp float64[]",
            "┆   │  └─ %0 float64[]",
            "┆   └─ %1 float64[]",
            "┆ false_graph(%0: float64[], %1: float64[]) ->",
            "┆   Subtract float64[]",
            "┆   ├─ %0 float64[]",
            "┆   └─ 1.0 float64[]",
            "├─ p bool[]",
            "├─ v float64[]",
            "└─ u float64[]",
        ]
    )
    assert rk.dprint(loop()) == "\n".join(
        [
            "While{n_state=1} float64[]",
            "┆ cond_graph(%0: float64[], %1: float64[]) ->",
            "┆   Less bool[]",
            "┆   ├─ %0 float64[]",
            "┆   └─ %1 float64[]",
            "┆ body_graph(%0: float64[], %1: float64[]) ->",
            "┆   Multiply float64[]",
            "┆   ├─ %0 float64[]",
            "┆   └─ 2.0 float64[]",
            "├─ v float64[]",
            "└─ u float64[]",
        ]
    )


def test_pickling_replace_and_traversal_of_cond_and_while():
    p, v, u = rt.scalar("p", dtype="bool"), rt.scalar("v"), rt.scalar("u")
    branch = rk.cond(p, lambda a: rt.exp(a) * u, lambda a: a - u, rt.sin(v))
    loop = rk.while_loop(lambda s: s < u * 10.0, lambda s: s * 2.0 + u, rt.abs(branch) + 0.1)
    kinds = [type(n.op).__name__ for n in rk.toposort(loop)]
    assert kinds == ["Sin", "Cond", "Abs", "Add", "While"]  # the graphs' nodes stay inside
    assert rk.graph_inputs(loop) == [p, v, u]
    ins2, (loop2, branch2) = pickle.loads(pickle.dumps([[p, v, u], [loop, branch]]))
    assert loop2.owner.op == loop.owner.op and branch2.owner.op == branch.owner.op
    assert loop2.owner.inputs[1] is ins2[2]  # the closed-over u is the unpickled u
    assert rk.dprint([loop2, branch2]) == rk.dprint([loop, branch])
    for args in [(True, 0.5, 0.8), (False, 0.5, 0.8)]:
        close(run(ins2, [loop2, branch2], *args), run([p, v, u], [loop, branch], *args))
    k = rt.scalar("k")
    replaced = rk.replace(loop, {u: k})
    assert replaced.owner.op is loop.owner.op and replaced.owner.inputs[1] is k
    assert replaced is rk.while_loop(
        lambda s: s < k * 10.0,
        lambda s: s * 2.0 + k,
        rt.abs(rk.cond(p, lambda a: rt.exp(a) * k, lambda a: a - k, rt.sin(v))) + 0.1,
    )
    close([both([p, v, k], replaced, False, 0.5, 0.8)], [both([p, v, u], loop, False, 0.5, 0.8)])


def test_jax_fn_of_cond_and_while_under_jit_and_vmap():
    p, v, u = rt.scalar("p", dtype="bool"), rt.scalar("v"), rt.scalar("u")
    branch = rk.cond(p, lambda a: rt.exp(a) * u, lambda a: a - u, v)
    loop = rk.while_loop(lambda s: s < u, lambda s: s * 2.0 + 1.0, v)
    f = rk.function([p, v, u], [branch, loop], rules=None)
    preds, vs = np.array([True, False, True]), np.array([0.5, -0.5, 3.0])
    with jax.enable_x64(True):
        jitted = jax.jit(f.jax_fn)(True, 0.5, 20.0)
        mapped = jax.vmap(f.jax_fn, in_axes=(0, 0, None))(jnp.asarray(preds), jnp.asarray(vs), 20.0)
    close([np.asarray(a) for a in jitted], f(True, 0.5, 20.0))
    for i in range(3):
        close(
            [np.asarray(m)[i] for m in mapped],
            run([p, v, u], [branch, loop], preds[i], vs[i], 20.0),
        )
