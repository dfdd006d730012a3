"""posteriordb models (``bench/posteriordb_models.py``): rewritekit's log-density against the
same density written by hand in ``jax.numpy``, on both backends.

Normalizing constants may differ (Stan's ``~`` drops them, a flat prior has none), so the
check is on differences: at three points drawn on the unconstrained scale (fixed seed) around
a centre (a least-squares fit for the regressions, where zero is far in the tails; zero
elsewhere), ``logp(x_i) - logp(x_0)`` agree to 1e-8 relative. Each model's
density and gradient are compiled once per backend (``functools.cache``); JAX's gradient
is checked against ``jax.grad`` of the hand-written density.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import rewritekit as rk

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))  # the models import each other as top-level modules
try:
    import posteriordb_core as core
    import posteriordb_extra as extra
    import posteriordb_models as models
finally:
    sys.path.remove(str(BENCH))

NAMES = sorted(models.POSTERIORS)
#: The posteriors also compiled for JAX (its value and gradient against ``jax.grad`` of the
#: hand-written density): one per kind of model. The seven linear regressions, ARMA and the
#: GP regression repeat what others exercise, and each JAX compile costs about a second.
ON_JAX = {
    "eight_schools-eight_schools_noncentered",
    "arK-arK",
    "garch-garch11",
    "gp_pois_regr-gp_pois_regr",
    "kidiq-kidscore_interaction",
    "low_dim_gauss_mix-low_dim_gauss_mix",
    "hmm_example-hmm_example",
    "dogs-dogs_nonhierarchical",
    "nes_logit_data-nes_logit_model",
    "sim-probit_glm",
    "sim-ordinal",
    "sim-censored",
    "sim-truncated",
}


@functools.cache
def _case(name):
    """(data, packing, params, points (3, n), numpy f, jax f -> [logp, grad])."""
    posterior = models.POSTERIORS[name]
    data = core.load_data(name)
    packing, logp, params = core.density_graph(posterior, data)
    centre = posterior.centre(data) if posterior.centre else {}
    x0 = packing.pack(
        {n: centre.get(n, np.zeros(s)) for n, s in zip(packing.names, packing.shapes, strict=True)}
    )
    rng = np.random.default_rng(20260517)
    points = x0 + 0.3 * rng.standard_normal((3, packing.size))
    f_numpy = rk.function([packing.flat], logp, backend="numpy")
    f_jax = None
    if name in ON_JAX:
        f_jax = rk.function([packing.flat], [logp, rk.grad(logp, packing.flat)], backend="jax")
    return data, packing, params, points, f_numpy, f_jax


def _hand(name, points):
    """The hand-written density and its ``jax.grad`` at ``points`` (one jit of the batch);
    for a posterior not in ``ON_JAX``, its values only, run eagerly (no XLA compile)."""
    data, packing, *_ = _case(name)
    hand = core.hand_density(models.POSTERIORS[name], data, packing)
    with jax.enable_x64(True):
        if name not in ON_JAX:
            return np.array([float(hand(x)) for x in points]), None
        values, grads = jax.jit(jax.vmap(jax.value_and_grad(hand)))(points)
    return np.asarray(values), np.asarray(grads)


def _differences(values):
    return values[1:] - values[0]


@pytest.mark.parametrize("name", NAMES)
def test_density_differences_match_the_hand_written_density(name):
    _, _, _, points, f_numpy, f_jax = _case(name)
    hand, hand_grad = _hand(name, points)
    ours_numpy = np.array([float(f_numpy(x)) for x in points])
    assert np.all(np.isfinite(hand))
    expected = _differences(hand)
    np.testing.assert_allclose(_differences(ours_numpy), expected, rtol=1e-8, atol=0)
    if f_jax is None:
        return  # not in ON_JAX: the NumPy backend's differences only
    with jax.enable_x64(True):
        ours_jax, grads = zip(*(f_jax(x) for x in points), strict=True)
    ours = np.array([float(v) for v in ours_jax])
    np.testing.assert_allclose(_differences(ours), expected, rtol=1e-8, atol=0)
    scale = np.abs(hand_grad).max()
    np.testing.assert_allclose(np.array(grads), hand_grad, rtol=1e-8, atol=1e-10 * scale)


@pytest.mark.parametrize("name", [n for n in NAMES if models.POSTERIORS[n].has_reference])
def test_the_model_reports_every_reference_parameter(name):
    """The bench compares ``Model.params`` with the reference draws, name by name (Stan's
    ``beta[2]`` is element 1 of ``beta``)."""
    reference = core.load_reference(name)
    _, packing, params, points, *_ = _case(name)
    f = rk.function([packing.flat], list(params.values()), backend="numpy")
    named = core.stan_names(dict(zip(params, f(points[0]), strict=True)))
    assert set(reference) <= set(named)
    assert all(np.isfinite(named[k]) for k in reference)
    assert all(s["sd"] > 0 for s in reference.values())


def test_the_vendored_files_are_small_and_name_their_source():
    for path in core.DATA.glob("*.json"):
        assert path.stat().st_size < 50_000, path.name
        if path.name.endswith(".reference.json"):
            found = json.loads(path.read_text())
            assert found["source"].startswith("github.com/stan-dev/posteriordb@")
            assert found["draws"] == 10_000
    assert sum(p.has_reference for p in models.POSTERIORS.values()) >= 12


@pytest.mark.parametrize("name", sorted(extra.SIMULATIONS))
def test_the_simulated_data_are_their_seeds_draws(name):
    """The ``sim-*`` files (no posteriordb source, no reference draws) are what ``simulate``
    draws again, and hold the parameters they were drawn from, in the model's names."""
    vendored = json.loads((core.DATA / f"{name}.json").read_text())
    assert vendored == json.loads(json.dumps(extra.simulate(name)))
    assert vendored["source"].startswith("simulated by bench/posteriordb_extra.py")
    assert not models.POSTERIORS[name].has_reference
    _, _, params, *_ = _case(name)
    assert set(vendored["true"]) == set(params)


def test_an_unknown_posterior_is_named():
    with pytest.raises(
        KeyError, match=r"no posterior 'eight_schools' here; known: .*eight_schools-"
    ):
        models.posterior("eight_schools")
