"""The benchmark harness (bench/compare.py) keeps working: a worker measures one system in
its own process, and the report computes the ratios and flags disagreeing outputs. CI has
no PyTensor, so only the rewritekit and JAX workers run here."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _compare():
    spec = importlib.util.spec_from_file_location("bench_compare", BENCH / "compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("system", ["rewritekit", "jax"])
def test_a_worker_measures_one_system_in_its_own_process(system):
    done = subprocess.run(
        [sys.executable, str(BENCH / "compare.py"), "--worker", system, "W2", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["nodes_before"] > 0
    assert result["calls"] >= 20
    assert result["compile_s"] >= 0 and result["first_call_s"] > 0 and result["per_call_s"] > 0
    sys.path.insert(0, str(BENCH))
    try:
        from workloads import WORKLOADS
    finally:
        sys.path.remove(str(BENCH))
    a = WORKLOADS["W2"].data(3)
    assert result["checksum"] == pytest.approx([sum(float(v * v + np.sin(v)) for v in a)])


def test_the_report_gives_ratios_and_flags_disagreement():
    compare = _compare()
    base = {"workload": "W1", "n": 10, "nodes_before": 10, "nodes_after": 5, "build_s": 0.0}
    rows = [
        {
            **base,
            "system": "rewritekit",
            "compile_s": 0.01,
            "first_call_s": 0.1,
            "per_call_s": 0.002,
            "checksum": [1.0],
        },
        {
            **base,
            "system": "pytensor_jax",
            "compile_s": 1.0,
            "first_call_s": 0.1,
            "per_call_s": 0.001,
            "checksum": [1.0],
        },
        {**base, "system": "pytensor_c", "error": "RecursionError: maximum recursion depth"},
        {
            **base,
            "system": "jax",
            "compile_s": 0.0,
            "first_call_s": 0.2,
            "per_call_s": 0.004,
            "checksum": [2.0],
        },
    ]
    text = compare.report(rows)
    assert "| W1 | 10 | 0.01 | - | 0.55 | 2 | **no** |" in text
    assert "failed: RecursionError" in text


def test_w6_garch_matches_its_numpy_reference_and_a_disagreement_fails():
    import jax

    import rewritekit as rk

    compare = _compare()
    sys.path.insert(0, str(BENCH))
    try:
        from workloads import WORKLOADS
    finally:
        sys.path.remove(str(BENCH))
    w6 = WORKLOADS["W6"]
    data = w6.data(30)
    expected = w6.reference(data)
    inputs, outputs = w6.rewritekit(30)
    f = rk.function(inputs, outputs, backend="numpy")  # the bench runs JAX; this is fast
    assert compare._check_reference(f(*data), expected) <= 1e-8
    with jax.enable_x64(True):
        assert compare._check_reference(jax.jit(w6.jax(30))(*data), expected) <= 1e-8
    wrong = [*expected[:-1], expected[-1] * (1 + 1e-6)]
    with pytest.raises(AssertionError, match="output 4 disagrees"):
        compare._check_reference(wrong, expected)


def test_the_first_call_worker_splits_rewrite_trace_and_xla():
    done = subprocess.run(
        [sys.executable, str(BENCH / "first_call.py"), "--worker", "W2", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    row = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(row) == {"rewrite", "trace", "xla", "jax_trace", "jax_xla"}
    assert all(value > 0 for value in row.values())


@pytest.mark.parametrize("system", ["rewritekit", "jax"])
def test_the_vectorize_worker_gives_per_example_gradients(system):
    done = subprocess.run(
        [sys.executable, str(BENCH / "vectorize.py"), "--worker", "mlp", system, "--batch", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    row = json.loads(done.stdout.strip().splitlines()[-1])
    assert row["first"] > 0 and row["per_call"] > 0
    assert row["fallback"] == []
    assert np.isfinite(row["checksum"])


def test_the_sharding_bench_runs_its_three_setups_and_they_agree():
    tiny = ["--rows", "64", "--warmup", "1", "--repeats", "2"]
    done = subprocess.run(
        [sys.executable, str(BENCH / "sharding.py"), *tiny],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [line.split(" | ")[1] for line in table[1:]] == ["1 of 1", "1 of 8", "8 of 8"]
    assert all(line.endswith("| yes |") for line in table[1:])


def test_the_jax_import_bench_times_each_family_and_the_calls_agree():
    only = "normal,l2_loss,mlp (weights inputs)"
    tiny = ["--only", only, "--workloads", "W1:3", "--repeat", "1", "--budget", "0.01"]
    done = subprocess.run(
        [sys.executable, str(BENCH / "jax_import.py"), *tiny],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    rows = {
        cells[0]: cells[1:]
        for line in done.stdout.splitlines()
        if line.startswith("| ") and not line.startswith("| family")
        for cells in [line.strip("| ").split(" | ")]
    }
    for family in ("NumPyro log_prob", "optax losses", "Equinox MLP"):
        functions, _, mapped, *_ = rows[family]
        assert (functions, mapped) == ("1", "100%")
    for row in ("W1, N=3", "W1, N=3, roll=True"):  # jax.jit(rk.optimize(f)) agrees with jax.jit(f)
        assert float(rows[row][-1]) <= 1e-12
