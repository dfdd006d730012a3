"""The PPL examples run end to end at small sizes, their compiled densities equal the same
densities written by hand, and the guide docs/ppl.md runs as written.

Each compiled function is built once per module; the costs are JAX/XLA compiles (NUTS is
the largest, about 3 s), so sizes stay small: one chain, 100 warm-up steps, 100 draws.
"""

from __future__ import annotations

import pathlib

import jax
import numpy as np
import pytest
import scipy.stats as st

import rewritekit.random as rr
from examples import eight_schools as es
from examples import logistic_map as lm
from examples import stochastic_volatility as sv

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def density():
    return es.density(es.model())


def _points() -> np.ndarray:
    """Points [mu, log(tau), theta_tilde x 8]: random ones, and tau near 0 and very large."""
    rng = np.random.default_rng(0)
    points = rng.normal(0.0, 2.0, size=(6, 10))
    points[4, :2] = [30.0, -8.0]
    points[5, :2] = [-30.0, 9.0]
    return points


def test_eight_schools_nuts_at_small_size(capsys):
    result = es.main(num_warmup=100, num_samples=100, chains=1, seed=0, compare=False)
    mu, tau = result["rewritekit"]["mu"], result["rewritekit"]["tau"]
    assert -5.0 < mu["mean"] < 15.0  # about 4.4 with long chains
    assert 0.5 < tau["mean"] < 15.0  # about 3.6
    assert 0.0 < mu["sd"] < 10.0 and 0.0 < tau["sd"] < 15.0
    assert result["divergences"] < 20
    assert "| mu |" in capsys.readouterr().out


def test_eight_schools_density_equals_the_hand_written_one(density):
    with jax.enable_x64(True):
        reference = jax.jit(jax.vmap(jax.value_and_grad(es.hand_logp)))
        values, grads = reference(_points())
    for point, value, grad in zip(_points(), values, grads, strict=True):
        logp, our_grad = density.logp_grad(point)
        np.testing.assert_allclose(logp, value, rtol=1e-13, atol=1e-10)
        np.testing.assert_allclose(our_grad, grad, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("chains", [6, None])
def test_every_chains_density_in_one_call_equals_each_alone(density, chains):
    f = es.chains_density(es.model(), chains=chains)
    logps, grads = f(_points())
    for point, logp, grad in zip(_points(), logps, grads, strict=True):
        alone, alone_grad = density.logp_grad(point)
        np.testing.assert_allclose(logp, alone, rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(grad, alone_grad, rtol=1e-12, atol=1e-12)


def test_the_hand_written_density_is_scipys():
    mu, tau, theta_tilde = 1.5, 2.5, np.linspace(-1.0, 1.0, 8)
    expected = (
        st.norm(0, 5).logpdf(mu)
        + st.halfcauchy(scale=5).logpdf(tau)
        + np.log(tau)  # the Jacobian of tau = exp(log_tau)
        + st.norm(0, 1).logpdf(theta_tilde).sum()
        + st.norm(mu + tau * theta_tilde, es.SIGMA).logpdf(es.Y).sum()
    )
    with jax.enable_x64(True):
        value = es.hand_logp(np.concatenate([[mu, np.log(tau)], theta_tilde]))
    assert float(value) == pytest.approx(expected, rel=1e-13)


def test_the_custom_vjp_hands_jax_our_gradient(density):
    point = _points()[0]
    with jax.enable_x64(True):
        value, grad = jax.value_and_grad(es.jax_logdensity(density))(point)
    logp, our_grad = density.logp_grad(point)
    assert float(value) == pytest.approx(float(logp), rel=1e-15)
    np.testing.assert_allclose(grad, our_grad, rtol=1e-14, atol=1e-15)  # jitted or not


def test_tau_is_mapped_back_from_the_log_scale(density):
    point = _points()[1]
    mu, tau = density.constrained(point)
    assert float(mu) == point[0]
    assert float(tau) == pytest.approx(np.exp(point[1]), rel=1e-15)
    assert density.packing.unpack(point)["tau"] == point[1]


def test_forward_sampling_is_a_function_of_the_key():
    f = es.forward_sampler(es.model())
    first, again, other = f(rr.seed(3)), f(rr.seed(3)), f(rr.seed(4))
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert float(first[0]) != float(other[0])
    _, tau, theta, y = first
    assert float(tau) > 0 and theta.shape == y.shape == (8,)


@pytest.fixture(scope="module")
def sv_density():
    y, _ = sv.simulate(60, seed=3)
    return sv.density(sv.model(60), y), y


def test_stochastic_volatility_nuts_at_small_size(capsys):
    result = sv.main(steps=100, num_warmup=100, num_samples=100, chains=1, seed=0, compare=False)
    ours = result["rewritekit"]
    assert -3.0 < ours["mu"]["mean"] < 2.0  # -0.5 generated; about -0.6 with long chains
    assert -1.0 < ours["phi"]["mean"] < 1.0 and 0.0 < ours["sigma"]["mean"] < 2.0
    assert all(0.0 < ours[name]["sd"] < 3.0 for name in sv.PARAMETERS)
    assert result["divergences"] < 10  # none expected
    assert "| sigma | 0.25 |" in capsys.readouterr().out


def test_stochastic_volatility_density_equals_the_hand_written_one(sv_density):
    density, y = sv_density
    points = np.random.default_rng(1).uniform(-2.0, 2.0, size=(3, density.packing.size))
    with jax.enable_x64(True):
        reference = jax.jit(jax.vmap(jax.value_and_grad(sv.hand_logp), in_axes=(0, None)))
        values, grads = reference(points, y)
    for point, value, grad in zip(points, values, grads, strict=True):
        logp, our_grad = density.logp_grad(point)
        np.testing.assert_allclose(logp, value, rtol=1e-12)
        np.testing.assert_allclose(our_grad, grad, rtol=1e-10, atol=1e-10)


def test_stochastic_volatility_parameters_are_mapped_back(sv_density):
    density, _ = sv_density
    point = np.zeros(density.packing.size)
    point[:3] = [0.3, 1.0, -1.0]  # mu, logit((phi + 1) / 2), log(sigma)
    mu, phi, sigma = density.constrained(point)
    assert float(mu) == 0.3
    assert float(phi) == pytest.approx(2 / (1 + np.exp(-1.0)) - 1, rel=1e-14)
    assert float(sigma) == pytest.approx(np.exp(-1.0), rel=1e-14)


def test_stochastic_volatility_series_is_a_function_of_the_seed():
    (y, h), (again, _), (other, _) = sv.simulate(50, 0), sv.simulate(50, 0), sv.simulate(50, 1)
    np.testing.assert_array_equal(y, again)
    assert y.shape == h.shape == (50,) and not np.array_equal(y, other)
    # y_t / exp(h_t / 2) are the standard normal draws of the steps
    assert abs(np.mean(y / np.exp(h / 2))) < 0.6 and 0.6 < np.std(y / np.exp(h / 2)) < 1.4


def test_logistic_map_optax_agrees_with_newton(capsys):
    result = lm.main(rows=500, cols=5, seed=1)
    assert result["max_abs_diff"] < 1e-4
    assert result["logp_optax"] == pytest.approx(result["logp_newton"], abs=1e-8)
    # our compiled log-density, normalizing constant included, is the NumPy formula
    assert result["logp_newton"] == pytest.approx(result["logp_newton_numpy"], rel=1e-12)
    assert "max |w_optax - w_newton|" in capsys.readouterr().out
