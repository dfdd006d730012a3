"""The Python examples in README.md run as written."""

import itertools
import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _blocks(relative: str) -> list[str]:
    text = (README.parent / relative).read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def _run_in_order(relative: str, blocks: list[str]) -> dict:
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, relative, "exec"), namespace)  # our own docs, in order
    return namespace


def test_readme_examples_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # our own README
    assert "add: cannot broadcast shapes (3,) and (4,) (inputs 'a', 'b')" in capsys.readouterr().out


def test_backend_walkthrough_runs():
    namespace = _run_in_order("docs/backends.md", _blocks("docs/backends.md")[-1:])
    assert namespace["backend"].calls == 1


def test_new_elementwise_op_walkthrough_runs():
    (block,) = [b for b in _blocks("docs/backends.md") if "class Cbrt" in b]
    lines = [line for line in block.splitlines() if line.strip()]
    code = [line for line in lines if not line.startswith(("import", "from"))]
    assert (len(code), len(lines)) == (5, 10), block  # as the guide says
    namespace = _run_in_order("docs/backends.md", [block])
    import rewritekit as rk
    import rewritekit.tensor as rt

    x = rt.vector("x")
    y = namespace["Cbrt"]()(x)
    g = rk.grad(rt.sum(y * x), x)  # cbrt(x) + x / (3 cbrt(x)^2) = 4/3 cbrt(x)
    values = np.array([8.0, -27.0, 0.125])
    for backend in ("numpy", "jax"):
        f = rk.function([x], [y, g], backend=backend)
        out, grad = f(values)
        np.testing.assert_allclose(np.asarray(out), np.cbrt(values), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(grad), 4 / 3 * np.cbrt(values), rtol=1e-12)
    batched = rt.matrix("b")
    (yb,) = y.owner.op.batch(y.owner, (batched,))
    rows = np.array([[8.0, 1.0], [27.0, -8.0]])
    np.testing.assert_allclose(rk.function([batched], yb, backend="numpy")(rows), np.cbrt(rows))


def test_rules_guide_runs(capsys):
    blocks = _blocks("docs/rules.md")
    assert len(blocks) >= 9
    namespace = _run_in_order("docs/rules.md", blocks)
    out = capsys.readouterr().out
    assert "cycling rules: sin_to_cos, cos_to_sin" in out
    assert "rule 'add_zero' changes float64[?] to int64[?]" in out
    assert namespace["f"].trace.fired() == {"stabilize.log1p": 1}
    assert float(namespace["value"][0]) == 1e-20


def test_gradients_guide_runs(capsys):
    blocks = _blocks("docs/gradients.md")
    assert len(blocks) >= 5
    _run_in_order("docs/gradients.md", blocks)
    out = capsys.readouterr().out
    assert "grad: cannot differentiate with respect to 'n' of dtype int64" in out
    assert "float64[?,?] float64[?,?]" in out


def test_ppl_guide_runs(capsys):
    blocks = _blocks("docs/ppl.md")
    assert len(blocks) >= 8
    namespace = _run_in_order("docs/ppl.md", blocks)
    out = capsys.readouterr().out
    assert "found no log-density" in out
    assert np.isfinite(namespace["posterior_mean"]).all()
    values, grads = namespace["values"], namespace["grads"]  # every chain at once
    assert grads.shape == (4, 10) and values[0] == values[3]
    np.testing.assert_allclose(values[0], -42.480126, atol=1e-6)


def test_control_flow_guide_runs(capsys):
    namespace = _run_in_order("docs/control-flow.md", _blocks("docs/control-flow.md"))
    printed = capsys.readouterr().out
    assert "scan: carry changes type from float32[] (initial) to float64[]" in printed
    assert "┆ body(%0: float64[], %1: float64[]) ->" in printed
    # the GARCH(1,1) log-likelihood against a plain NumPy loop
    data, (mu, a0, a1, b1) = namespace["data"], (0.0, 1e-5, 0.1, 0.8)
    s, total = data.std(), 0.0
    for prev, now in itertools.pairwise(data):
        s = np.sqrt(a0 + a1 * (prev - mu) ** 2 + b1 * s**2)
        total += -0.5 * ((now - mu) / s) ** 2 - np.log(s) - 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(float(namespace["value"]), total, rtol=1e-10)
    assert all(np.isfinite(np.asarray(g)) for g in namespace["gradient"])


def test_performance_guide_runs():
    blocks = _blocks("docs/performance.md")
    persistent = [b for b in blocks if "jax_compilation_cache_dir" in b]
    assert len(persistent) == 1  # it sets a process-wide JAX option: shown, not run here
    namespace = _run_in_order("docs/performance.md", [b for b in blocks if b not in persistent])
    assert namespace["g"]._fn is namespace["f"]._fn and namespace["h"]._fn is not namespace["f"]._fn
    assert float(namespace["value"]) == float(namespace["f"](namespace["data"]))


def test_vectorization_walkthrough_runs():
    namespace = _run_in_order("docs/vectorization.md", _blocks("docs/vectorization.md"))
    assert namespace["values"].shape == (8,)
    assert namespace["grads"].shape == (8, 3)
    assert namespace["out"].type.shape == (3, 5)


def test_scaling_walkthrough_runs():
    namespace = _run_in_order("docs/scaling.md", _blocks("docs/scaling.md"))
    assert float(namespace["value"]) < 0
    assert namespace["grad"].shape == (3,)


def test_tensor_guide_runs():
    namespace = _run_in_order("docs/tensor.md", _blocks("docs/tensor.md"))
    np.testing.assert_array_equal(namespace["w"], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(namespace["p"], [3, 4, 5, -1, -1, -1])


def test_jax_guide_runs(capsys):
    from rewritekit.jaxpr import PRIMITIVES

    saved = dict(PRIMITIVES)
    try:
        namespace = _run_in_order("docs/jax.md", _blocks("docs/jax.md"))
        assert PRIMITIVES["reduce_window_max"] is not None  # the guide's mapping, run there
    finally:
        PRIMITIVES.clear()  # the guide's registration must not outlive it
        PRIMITIVES.update(saved)
    assert "reduce_window_max" not in PRIMITIVES
    assert np.isclose(float(namespace["value"]), -1600.474076984, rtol=1e-12)
    assert "softplus" in capsys.readouterr().out


def test_reliability_guide_runs(capsys):
    blocks = _blocks("docs/reliability.md")
    assert len(blocks) >= 5
    _run_in_order("docs/reliability.md", blocks)
    out = capsys.readouterr().out
    assert "index 5 is out of bounds for axis 0 with length 5 (index from input 'i')" in out


def test_pictures_guide_runs(capsys):
    namespace = _run_in_order("docs/pictures.md", _blocks("docs/pictures.md"))
    printed = capsys.readouterr().out
    assert printed.startswith("digraph rewritekit {\n")
    assert "1\n" in printed and "True\n" in printed
    assert "apt-get install graphviz" in printed or printed.count(".svg") == 1
    assert namespace["part"].count("exp") == 0 and "overflows past 709" in namespace["marked"]
