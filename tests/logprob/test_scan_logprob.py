"""Time series: random draws inside ``rk.scan`` bodies, and the log-densities that
``joint_logprob`` finds for them, against NumPy/SciPy references on both backends."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import toposort
from rewritekit.tensor.control import Scan

BACKENDS = ["numpy", "jax"]
T = 12
RNG = np.random.default_rng(0)


def _scans(graph) -> list:
    return [node for node in toposort(graph) if isinstance(node.op, Scan)]


# --- sampling ---------------------------------------------------------------------------


def _walks(n: int, steps: int):
    """``n`` Gaussian random walks of ``steps`` steps from 0, one key threaded through."""
    key = rr.key("key")

    def step(carry, _):
        k, x = carry
        k, x = rr.normal(k, x, 1.0)
        return (k, x), x

    (last_key, _), paths = rk.scan(step, (key, np.zeros(n)), length=steps)
    return key, last_key, paths


@pytest.mark.parametrize("backend", BACKENDS)
def test_draws_in_a_scan_body_follow_the_key(backend):
    key, last_key, paths = _walks(2000, 10)
    f = rk.function([key], [last_key, paths], backend=backend)
    next_key, first = f(rr.seed(1))
    _, again = f(rr.seed(1))
    _, other = f(rr.seed(2))
    first, again, other = map(np.asarray, (first, again, other))
    assert first.shape == (10, 2000)
    np.testing.assert_array_equal(first, again)
    assert not np.any(first == other)
    assert not np.array_equal(np.asarray(next_key), rr.seed(1))
    steps = np.diff(first, axis=0, prepend=0.0)  # independent Normal(0, 1) increments
    assert abs(steps.mean()) < 4 / np.sqrt(steps.size)
    assert steps.std() == pytest.approx(1.0, abs=0.03)
    assert first[-1].var() == pytest.approx(10.0, rel=0.15)  # Var x_T = T
    assert np.corrcoef(first[4], first[9])[0, 1] == pytest.approx(np.sqrt(5 / 10), abs=0.06)


# --- the models and their references ---------------------------------------------------


def _normal(x, loc, scale):
    return st.norm(loc, scale).logpdf(x)


def random_walk():
    """sigma ~ HalfNormal(1); x_t ~ Normal(x_{t-1}, sigma), x_0 = 0.5 (sigma closed over)."""
    key = rr.key("key")
    k, sigma = rr.halfnormal(key, 1.0)

    def step(carry, _):
        k, x = carry
        k, x = rr.normal(k, x, sigma)
        return (k, x), x

    _, path = rk.scan(step, (k, 0.5), length=T)
    s_v, path_v = rt.scalar("sigma"), rt.vector("path")
    logp = rl.joint_logprob({sigma: s_v, path: path_v})

    def reference(s, x):
        prev = np.concatenate([[0.5], x[:-1]])
        return st.halfnorm.logpdf(s) + _normal(x, prev, s).sum()

    args = [0.7, np.cumsum(RNG.normal(0, 0.7, T))]
    return [s_v, path_v], logp, reference, args


def ar1():
    """x_t = c + phi x_{t-1} + sigma eps_t, eps_t ~ Normal(0, 1): a shifted and scaled draw
    (the inversion rules run inside the body); c, phi, sigma, x_0 are inputs."""
    key = rr.key("key")
    c, phi, sigma, x0 = (rt.scalar(n) for n in ("c", "phi", "sigma", "x0"))

    def step(carry, _):
        k, x = carry
        k, eps = rr.normal(k, 0.0, 1.0)
        x = c + phi * x + sigma * eps
        return (k, x), x

    _, xs = rk.scan(step, (key, x0), length=T)
    xs_v = rt.vector("x")
    logp = rl.joint_logprob({xs: xs_v})

    def reference(x, c, phi, sigma, x0):
        prev = np.concatenate([[x0], x[:-1]])
        return _normal(x, c + phi * prev, sigma).sum()

    args = [RNG.normal(1.0, 0.5, T), 0.3, 0.8, 0.5, 1.2]
    return [xs_v, c, phi, sigma, x0], logp, reference, args


def garch():
    """y_t ~ Normal(mu, s_t), s_t = sqrt(a0 + a1 (y_{t-1} - mu)^2 + b1 s_{t-1}^2)."""
    key = rr.key("key")
    mu, a0, a1, b1, s0, y0 = (rt.scalar(n) for n in ("mu", "a0", "a1", "b1", "s0", "y0"))

    def step(carry, _):
        k, s, y_prev = carry
        s = rt.sqrt(a0 + a1 * (y_prev - mu) ** 2 + b1 * s**2)
        k, y = rr.normal(k, mu, s)
        return (k, s, y), y

    _, ys = rk.scan(step, (key, s0, y0), length=T)
    ys_v = rt.vector("y")
    logp = rl.joint_logprob({ys: ys_v})

    def reference(y, mu, a0, a1, b1, s0, y0):
        s, prev, total = s0, y0, 0.0
        for t in range(T):
            s = np.sqrt(a0 + a1 * (prev - mu) ** 2 + b1 * s**2)
            total += _normal(y[t], mu, s)
            prev = y[t]
        return total

    args = [RNG.normal(0.05, 0.2, T), 0.05, 0.01, 0.15, 0.8, 0.2, 0.0]
    return [ys_v, mu, a0, a1, b1, s0, y0], logp, reference, args


def sv_model(steps: int = T):
    """Stochastic volatility: mu, phi, sigma, h_0 drawn; a scan draws h_t and y_t."""
    key = rr.key("key")
    k, mu = rr.normal(key, 0.0, 5.0)
    k, phi = rr.uniform(k, -1.0, 1.0)
    k, sigma = rr.halfnormal(k, 1.0)
    k, h0 = rr.normal(k, mu, sigma / rt.sqrt(1.0 - phi**2))

    def step(carry, _):
        k, h_prev = carry
        k, h = rr.normal(k, mu + phi * (h_prev - mu), sigma)
        k, y = rr.normal(k, 0.0, rt.exp(h / 2.0))
        return (k, h), (h, y)

    _, (h, y) = rk.scan(step, (k, h0), length=steps)
    return (mu, phi, sigma, h0, h), y


def stochastic_volatility():
    (mu, phi, sigma, h0, h), y = sv_model()
    names = ("mu", "phi", "sigma", "h0")
    inputs = [*(rt.scalar(n) for n in names), rt.vector("h"), rt.vector("y")]
    logp = rl.joint_logprob(dict(zip((mu, phi, sigma, h0, h, y), inputs, strict=True)))

    def reference(mu, phi, sigma, h0, h, y):
        prev = np.concatenate([[h0], h[:-1]])
        return (
            _normal(mu, 0, 5)
            + st.uniform(-1, 2).logpdf(phi)
            + st.halfnorm.logpdf(sigma)
            + _normal(h0, mu, sigma / np.sqrt(1 - phi**2))
            + _normal(h, mu + phi * (prev - mu), sigma).sum()
            + _normal(y, 0.0, np.exp(h / 2)).sum()
        )

    h_values = -0.5 + 0.3 * RNG.standard_normal(T)
    args = [-0.4, 0.9, 0.3, -0.6, h_values, RNG.normal(0, np.exp(h_values / 2))]
    return inputs, logp, reference, args


MODELS = {
    "random_walk": random_walk,
    "ar1": ar1,
    "garch": garch,
    "stochastic_volatility": stochastic_volatility,
}


@pytest.fixture(scope="module", params=list(MODELS))
def model(request):
    inputs, logp, reference, args = MODELS[request.param]()
    grads = rk.grad(logp, inputs)
    compiled = {b: rk.function(inputs, [logp, *grads], backend=b) for b in BACKENDS}
    return request.param, inputs, logp, reference, args, compiled


@pytest.mark.parametrize("backend", BACKENDS)
def test_scan_density_is_the_reference(model, backend):
    _, _, _, reference, args, compiled = model
    value, *grads = compiled[backend](*args)
    assert float(value) == pytest.approx(reference(*args), rel=1e-12)
    assert all(np.isfinite(np.asarray(g)).all() for g in grads)


def test_backends_agree_on_the_gradient(model):
    _, _, _, _, args, compiled = model
    ours = compiled["numpy"](*args)
    theirs = compiled["jax"](*args)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(b), a, rtol=1e-10, atol=1e-12)


def test_garch_gradient_matches_finite_differences():
    inputs, logp, reference, args = garch()
    grads = rk.function(inputs, rk.grad(logp, inputs), backend="numpy")(*args)
    for position, (arg, grad) in enumerate(zip(args, grads, strict=True)):
        x = np.array(arg, dtype=float)
        numeric = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            eps = 1e-6 * max(1.0, abs(x[i]))
            up, down = x.copy(), x.copy()
            up[i] += eps
            down[i] -= eps
            high = reference(*args[:position], up, *args[position + 1 :])
            low = reference(*args[:position], down, *args[position + 1 :])
            numeric[i] = (high - low) / (2 * eps)
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


# --- what the density graph is ----------------------------------------------------------


def test_valued_outputs_of_one_scan_share_one_loop_that_becomes_vectorized():
    inputs, logp, reference, args = stochastic_volatility()
    (loop,) = _scans(logp)  # the h and y terms: two outputs of one loop
    assert loop.op.n_carry == 0  # h_{t-1} is a shifted value sequence; the key is gone
    assert not any(isinstance(n.op, rr.RandomVariable) for n in toposort(loop.op.body.outputs))
    as_built = rk.function(inputs, logp, backend="numpy", rules=None)  # the loop itself
    assert float(as_built(*args)) == pytest.approx(reference(*args), rel=1e-12)
    assert _scans(rk.rewrite(logp, "default")) == []  # vectorize_scan: whole arrays and a sum


def test_a_true_recurrence_stays_a_loop():
    inputs, logp, reference, args = garch()
    (loop,) = _scans(logp)
    assert loop.op.n_carry == 1  # s_t; y_{t-1} became a sequence, the key went
    assert len(_scans(rk.rewrite(logp, "default"))) == 1
    as_built = rk.function(inputs, logp, backend="numpy", rules=None)
    assert float(as_built(*args)) == pytest.approx(reference(*args), rel=1e-12)


def test_logprob_of_a_scan_output_is_per_step():
    key = rr.key("key")

    def step(carry, _):
        k, x = carry
        k, x = rr.normal(k, 2.0 * x, 0.5)
        return (k, x), x

    _, path = rk.scan(step, (key, 1.0), length=4)
    v = rt.vector("v")
    lp = rl.logprob(path, v)
    assert lp.type.shape == (4,)
    values = np.array([1.5, 2.5, 5.5, 10.0])
    expected = _normal(values, 2.0 * np.array([1.0, 1.5, 2.5, 5.5]), 0.5)
    np.testing.assert_allclose(rk.function([v], lp, backend="numpy")(values), expected)


def test_a_reverse_scan_conditions_on_the_later_values():
    key = rr.key("key")

    def step(carry, _):
        k, x = carry
        k, x = rr.normal(k, x, 2.0)
        return (k, x), x

    _, path = rk.scan(step, (key, 3.0), length=5, reverse=True)
    v = rt.vector("v")
    f = rk.function([v], rl.joint_logprob({path: v}), backend="numpy")
    x = np.array([0.1, 0.4, -0.3, 1.0, 2.0])
    expected = _normal(x, np.append(x[1:], 3.0), 2.0).sum()
    assert float(f(x)) == pytest.approx(expected, rel=1e-13)


def test_per_step_draws_take_the_default_transform():
    key = rr.key("key")

    def step(carry, _):
        k, scale = carry
        k, s = rr.halfnormal(k, scale)
        return (k, s), s

    _, scales = rk.scan(step, (key, 1.0), length=4)
    assert rl.default_transform(scales) is rl.transforms.log
    u = rt.vector("u")
    f = rk.function([u], rl.joint_logprob({scales: u}, transforms="default"), backend="numpy")
    x = np.array([0.1, -0.3, 0.5, 2.0])
    prev = np.exp(np.concatenate([[0.0], x[:-1]]))  # each draw is the next step's scale
    expected = (st.halfnorm(scale=prev).logpdf(np.exp(x)) + x).sum()
    assert float(f(x)) == pytest.approx(expected, rel=1e-13)


# --- errors -----------------------------------------------------------------------------


def test_a_draw_without_a_value_is_named():
    (mu, phi, sigma, h0, _), y = sv_model()
    values = {mu: 0.0, phi: 0.5, sigma: 1.0, h0: 0.0, y: np.zeros(T)}
    with pytest.raises(
        GraphTypeError,
        match=r"depends on the draw of y 0 of the scan \(its "
        r"output 2\), which has no value",
    ):
        rl.joint_logprob(values)


def test_a_final_carry_cannot_take_a_value():
    key = rr.key("key")
    (_, last), _ = rk.scan(lambda c, _: ((rr.normal(c[0], c[1], 1.0)), None), (key, 0.0), length=3)
    with pytest.raises(GraphTypeError, match="the final carry 1 of the scan cannot take a value"):
        rl.joint_logprob({last: rt.scalar("x")})


def test_a_deterministic_y_has_no_density():
    key = rr.key("key")

    def step(carry, _):
        k, x = carry
        k, x = rr.normal(k, x, 1.0)
        return (k, x), (x, x * x)

    _, (_, squares) = rk.scan(step, (key, 0.0), length=3)
    with pytest.raises(GraphTypeError, match="found no log-density for y 1 of the scan"):
        rl.joint_logprob({squares: rt.vector("s")})


def test_a_value_must_stack_the_steps():
    _, path = _walks(1, 3)[1:]
    with pytest.raises(ShapeError, match="does not fit y 0 of the scan"):
        rl.joint_logprob({path: rt.vector("flat")})


def test_a_scan_without_draws_is_not_random():
    x = rt.vector("x")
    _, running = rk.scan(lambda c, xi: (c + xi, c + xi), 0.0, x)
    with pytest.raises(GraphTypeError, match="is not a random quantity"):
        rl.joint_logprob({running: rt.vector("r")})
