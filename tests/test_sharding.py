"""``rk.function``'s ``jax.jit`` options (``in_shardings``, ``out_shardings``,
``donate_argnums``): passed through on the JAX backend, refused by the others; a
log-density over data sharded 8 ways, and eight schools' vectorized density of 8 chains
with one chain per device, equal to the one-device values (8 simulated CPU devices, in one
subprocess)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError

ROOT = pathlib.Path(__file__).resolve().parents[1]
x = rt.vector("x", shape=(4,))


def test_the_numpy_backend_refuses_jit_options_naming_them():
    with pytest.raises(GraphTypeError, match=r"'numpy' backend does not take donate_argnums"):
        rk.function([x], rt.exp(x), backend="numpy", donate_argnums=0)


def test_a_sharding_per_input_must_match_the_inputs():
    with pytest.raises(GraphTypeError, match=r"in_shardings has 2 entries for 1 inputs"):
        rk.function([x], rt.exp(x), in_shardings=(None, None))
    with pytest.raises(GraphTypeError, match=r"donate_argnums 3 is not an input position"):
        rk.function([x], rt.exp(x), donate_argnums=(3,))


def test_donated_inputs_compute_the_same_and_are_cached_apart():
    f = rk.function([x], rt.exp(x) * 2.0, donate_argnums=(0,))
    plain = rk.function([x], rt.exp(x) * 2.0)
    assert f._compiled.fn is not plain._compiled.fn
    assert rk.function([x], rt.exp(x) * 2.0, donate_argnums=(0,))._compiled.fn is f._compiled.fn
    np.testing.assert_allclose(f(np.arange(4.0)), 2 * np.exp(np.arange(4.0)))


def test_shard_is_the_identity_on_numpy_with_its_gradient_and_is_never_folded():
    from jax.sharding import PartitionSpec as P

    y = rt.shard(x * x, P())
    f = rk.function([x], [y, rk.grad(rt.sum(y), x)], backend="numpy")
    value, grad = f(np.arange(4.0))
    np.testing.assert_array_equal(value, np.arange(4.0) ** 2)
    np.testing.assert_array_equal(grad, 2 * np.arange(4.0))
    folded = rk.rewrite(rt.shard(rt.constant(np.ones(3)) * 2, P()))
    assert folded.owner is not None and type(folded.owner.op).__name__ == "Shard"


def test_vectorize_leaves_the_batch_axes_unpartitioned():
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    xs = rt.matrix("xs", shape=(2, 4))
    assert rk.vectorize(rt.shard(x, P("a")), {x: xs}).owner.op.spec == P(None, "a")
    mesh = jax.make_mesh((1,), ("a",), axis_types=(jax.sharding.AxisType.Auto,))
    batched = rk.vectorize(rt.shard(x, NamedSharding(mesh, P("a"))), {x: xs})
    assert batched.owner.op.spec.spec == P(None, "a")


def test_a_spec_that_cannot_be_hashed_is_refused():
    with pytest.raises(GraphTypeError, match="shard: the spec must be"):
        rt.shard(x, ["data"])


_SHARDED = textwrap.dedent(
    """
    import json
    import jax
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P

    import rewritekit as rk
    import rewritekit.tensor as rt
    from examples import eight_schools as es

    assert len(jax.devices()) == 8, jax.devices()
    auto = (jax.sharding.AxisType.Auto,)

    def gap(a, b):  # as NumPy arrays: JAX's float64 outside enable_x64 would be float32
        return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))

    X, y, w = rt.matrix("X", shape=(4096, 5)), rt.vector("y", shape=(4096,)), rt.vector("w")
    mesh = jax.make_mesh((8,), ("data",), axis_types=auto)
    rows, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    logits = rt.shard(X @ w, rows)  # a constraint inside the graph too
    logp = rt.sum(y * logits - rt.log1p(rt.exp(logits)))  # logistic regression
    outputs = [logp, rk.grad(logp, w)]
    sharded = rk.function(
        [X, y, w], outputs, in_shardings=(rows, rows, replicated), out_shardings=replicated
    )
    single = rk.function([X, y, w], outputs)

    rng = np.random.default_rng(0)
    data = [rng.normal(size=(4096, 5)), (rng.uniform(size=4096) < 0.5) * 1.0,
            rng.normal(size=5) * 0.1]
    with jax.enable_x64(True):
        placed = [jax.device_put(d, s) for d, s in zip(data, (rows, rows, replicated))]
    got, want = sharded(*placed), single(*data)

    # eight schools, 8 chains vectorized (rk.vectorize), one chain per device
    batch = es.chains_density(es.model(), chains=8)
    by_chain = NamedSharding(jax.make_mesh((8,), ("chains",), axis_types=auto), P("chains"))
    chains = rk.function(batch.inputs, batch.outputs, in_shardings=(by_chain,))
    starts = rng.uniform(-2.0, 2.0, size=(8, 10))
    with jax.enable_x64(True):
        spread = jax.device_put(starts, by_chain)
    (logps, grads), (want_logps, want_grads) = chains(spread), batch(starts)
    print(json.dumps({
        "devices": len(placed[0].sharding.device_set),
        "logp": [float(got[0]), float(want[0])],
        "grad_error": gap(got[1], want[1]),
        "grad_scale": float(np.max(np.abs(want[1]))),
        "chain_devices": [len(spread.sharding.device_set), len(logps.sharding.device_set)],
        "chain_shapes": [list(logps.shape), list(grads.shape)],
        "chain_logp_error": gap(logps, want_logps),
        "chain_logp_scale": float(np.max(np.abs(want_logps))),
        "chain_grad_error": gap(grads, want_grads),
        "chain_grad_scale": float(np.max(np.abs(want_grads))),
    }))
    """
)


@pytest.fixture(scope="module")
def sharded_run() -> dict:
    """The figures of ``_SHARDED``, run once on 8 simulated CPU devices."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    done = subprocess.run(
        [sys.executable, "-c", _SHARDED],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,  # examples/ is imported from the repository root
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_log_density_over_data_sharded_8_ways_equals_one_device(sharded_run):
    row = sharded_run
    assert row["devices"] == 8
    sharded, single = row["logp"]
    assert sharded == pytest.approx(single, rel=1e-12)
    assert row["grad_error"] <= 1e-12 * max(1.0, row["grad_scale"])


def test_eight_schools_chains_one_per_device_equal_the_one_device_batch(sharded_run):
    row = sharded_run
    assert row["chain_devices"] == [8, 8]  # the chains went to, and stayed on, 8 devices
    assert row["chain_shapes"] == [[8], [8, 10]]
    assert row["chain_logp_error"] <= 1e-12 * max(1.0, row["chain_logp_scale"])
    assert row["chain_grad_error"] <= 1e-12 * max(1.0, row["chain_grad_scale"])
