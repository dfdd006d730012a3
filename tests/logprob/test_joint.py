"""logprob, joint_logprob, the measurable-transform rules, transforms in joint_logprob, and
packing."""

from __future__ import annotations

import functools
import re

import jax
import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.logprob import transforms as tr
from rewritekit.rules import lvar, rule

SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])


def eight_schools():
    key = rr.key("key")
    k, mu = rr.normal(key, 0.0, 5.0)
    k, tau = rr.halfcauchy(k, 5.0)
    k, theta_tilde = rr.normal(k, 0.0, 1.0, size=(8,))
    k, y = rr.normal(k, mu + tau * theta_tilde, SIGMA)
    return key, mu, tau, theta_tilde, y


def eight_schools_reference(mu, log_tau, theta_tilde):
    tau = np.exp(log_tau)
    return (
        ss.norm(0, 5).logpdf(mu)
        + ss.halfcauchy(scale=5).logpdf(tau)
        + log_tau
        + ss.norm.logpdf(theta_tilde).sum()
        + ss.norm(mu + tau * theta_tilde, SIGMA).logpdf(Y).sum()
    )


VALUES = (rt.scalar("mu"), rt.scalar("tau"), rt.tensor("theta_tilde", shape=(8,)))


@functools.cache
def compiled_eight_schools(backend):
    _, mu, tau, theta_tilde, y = eight_schools()
    values = dict(zip((mu, tau, theta_tilde), VALUES, strict=True)) | {y: Y}
    logp = rl.joint_logprob(values, transforms="default")
    return rk.function(list(VALUES), [logp, *rk.grad(logp, list(VALUES))], backend=backend)


# --- joint_logprob ----------------------------------------------------------------------


@settings(max_examples=20)
@given(
    mu=st.floats(-10, 10),
    log_tau=st.floats(-3, 3),
    theta=st.lists(st.floats(-3, 3), min_size=8, max_size=8),
)
def test_eight_schools_matches_scipy(mu, log_tau, theta):
    logp, *_ = compiled_eight_schools("numpy")(mu, log_tau, np.array(theta))
    np.testing.assert_allclose(
        logp, eight_schools_reference(mu, log_tau, np.array(theta)), rtol=1e-12
    )


def test_eight_schools_gradient_matches_jax_grad_on_both_backends():
    point = (1.3, 0.4, np.linspace(-1.0, 1.0, 8))
    numpy_out = compiled_eight_schools("numpy")(*point)
    jax_fn = compiled_eight_schools("jax")
    jax_out = jax_fn(*point)
    with jax.enable_x64(True):
        through_jax = jax.grad(lambda *a: jax_fn.jax_fn(*a)[0], argnums=(0, 1, 2))(*point)
    for ours, theirs in zip(numpy_out, jax_out, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    for ours, theirs in zip(numpy_out[1:], through_jax, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_terms_are_named_after_their_values_and_sum_to_the_joint():
    _, mu, tau, theta_tilde, y = eight_schools()
    values = dict(zip((mu, tau, theta_tilde), VALUES, strict=True)) | {y: Y}
    terms = rl.logprob_terms(values)
    assert list(terms) == ["mu", "tau", "theta_tilde", "value_3"]
    assert all(t.type == rk.TensorType("float64", ()) for t in terms.values())
    f = rk.function(list(VALUES), [*terms.values(), rl.joint_logprob(values)], backend="numpy")
    *parts, total = f(0.5, 2.0, np.zeros(8))
    np.testing.assert_allclose(sum(parts), total, rtol=1e-14)
    np.testing.assert_allclose(parts[1], ss.halfcauchy(scale=5).logpdf(2.0), rtol=1e-12)


def test_the_model_graph_still_samples_after_joint_logprob():
    key, mu, tau, theta_tilde, y = eight_schools()
    before = rk.function([key], [mu, y], backend="numpy")(rr.seed(3))
    rl.joint_logprob(dict(zip((mu, tau, theta_tilde), VALUES, strict=True)) | {y: Y})
    after = rk.function([key], [mu, y], backend="numpy")(rr.seed(3))
    np.testing.assert_array_equal(before[1], after[1])
    assert y.owner.op.name == "normal"


def test_values_are_substituted_into_dependent_parameters():
    k, mu = rr.normal(rr.key(), 0.0, 1.0)
    k, x = rr.normal(k, mu, 2.0)
    m, v = rt.scalar("m"), rt.scalar("v")
    f = rk.function([m, v], rl.joint_logprob({mu: m, x: v}), backend="numpy")
    np.testing.assert_allclose(f(0.3, -1.0), ss.norm.logpdf(0.3) + ss.norm(0.3, 2).logpdf(-1.0))


def test_an_unvalued_draw_is_an_error_naming_it():
    k, mu = rr.normal(rr.key(), 0.0, 1.0)
    k, x = rr.normal(k, mu, 2.0)
    with pytest.raises(GraphTypeError, match="depends on the normal draw, which has no value"):
        rl.joint_logprob({x: rt.scalar("v")})


def test_bad_values_and_transforms_are_errors():
    k, mu = rr.normal(rr.key(), 0.0, 1.0)
    _, tau = rr.halfnormal(k, 1.0)
    with pytest.raises(GraphTypeError, match="non-empty dict"):
        rl.joint_logprob({})
    with pytest.raises(GraphTypeError, match="not a random quantity"):
        rl.joint_logprob({rt.scalar("z"): 1.0})
    with pytest.raises(ShapeError, match="does not fit the normal draw"):
        rl.joint_logprob({mu: rt.vector("m")})
    with pytest.raises(GraphTypeError, match="'default' or a dict, got 'auto'"):
        rl.joint_logprob({mu: rt.scalar("m")}, transforms="auto")
    with pytest.raises(GraphTypeError, match="must be a Transform or None"):
        rl.joint_logprob({mu: rt.scalar("m")}, transforms={mu: "log"})
    with pytest.raises(GraphTypeError, match="has no value"):
        rl.joint_logprob({mu: rt.scalar("m")}, transforms={tau: tr.log})
    with pytest.raises(GraphTypeError, match="two value variables are named 'm'"):
        rl.joint_logprob({mu: rt.scalar("m"), tau: rt.scalar("m")})


def test_one_value_variable_for_two_random_variables_is_an_error_naming_all_three():
    k, mu = rr.normal(rr.key(), 0.0, 1.0)
    _, tau = rr.halfnormal(k, 1.0)
    x = rt.scalar("x")
    message = (
        "joint_logprob: the same value variable 'x' is given for two random variables, "
        "the normal draw (key 0 of values) and the halfnormal draw (key 1)"
    )
    with pytest.raises(GraphTypeError, match=re.escape(message)):
        rl.joint_logprob({mu: x, tau: x})
    with pytest.raises(GraphTypeError, match=re.escape(message)):
        rl.logprob_terms({mu: x, tau: x}, transforms="default")


# --- transforms in joint_logprob ---------------------------------------------------------


def test_default_transforms():
    k = rr.key()
    low = rt.scalar("low")
    assert rl.default_transform(rr.halfnormal(k, 1.0)[1]) is tr.log
    assert rl.default_transform(rr.gamma(k, 2.0)[1]) is tr.log
    assert rl.default_transform(rr.beta(k, 2.0, 3.0)[1]) is tr.logodds
    assert rl.default_transform(rr.dirichlet(k, np.ones(3))[1]) is tr.simplex
    assert str(rl.default_transform(rr.uniform(k, low, 4.0)[1])) == "interval(low, 4.0)"
    assert rl.default_transform(rr.normal(k)[1]) is None
    assert rl.default_transform(rr.poisson(k, 3.0)[1]) is None
    assert rl.default_transform(rt.exp(rr.normal(k)[1])) is None


def test_default_transforms_of_the_bounded_distributions():
    k = rr.key()
    scale = rt.scalar("scale")
    for draw in (rr.weibull(k, 2.0), rr.chisquare(k, 3.0), rr.wald(k, 1.0, 2.0)):
        assert rl.default_transform(draw[1]) is tr.log
    assert rl.default_transform(rr.half_student_t(k, 3.0)[1]) is tr.log
    assert str(rl.default_transform(rr.pareto(k, 2.0, scale)[1])) == "lower_bound(scale)"
    assert rl.default_transform(rr.lkj_cholesky(k, 3, 2.0)[1]) is tr.cholesky_corr
    bounded = {
        (-1.0, 2.0): "interval(-1.0, 2.0)",
        (0.0, np.inf): "lower_bound(0.0)",
        (-np.inf, 1.0): "upper_bound(1.0)",
        (-np.inf, np.inf): "None",
    }
    z = rr.normal(k)[1]
    for (lower, upper), expected in bounded.items():
        assert str(rl.default_transform(rr.truncated_normal(k, 0.0, 1.0, lower, upper)[1])) == (
            expected
        )
        assert str(rl.default_transform(rl.truncate(z, lower, upper))) == expected
    assert rl.default_transform(rl.truncate(rr.geometric(k, 0.2)[1], upper=3)) is None
    vm = rl.default_transform(rr.von_mises(k, 0.5, 2.0)[1])
    assert isinstance(vm, tr.Interval)


@pytest.mark.parametrize(
    ("make", "value", "reference"),
    [
        (lambda k: rr.gamma(k, 2.5, 0.5), 0.3, lambda x: ss.gamma(2.5, scale=0.5).logpdf(x)),
        (lambda k: rr.beta(k, 2.0, 5.0), -0.4, lambda x: ss.beta(2, 5).logpdf(x)),
        (lambda k: rr.uniform(k, -1.0, 3.0), 0.7, lambda x: ss.uniform(-1, 4).logpdf(x)),
        (lambda k: rr.pareto(k, 2.0, 1.5), 0.2, lambda x: ss.pareto(2.0, scale=1.5).logpdf(x)),
        (
            lambda k: rr.truncated_normal(k, 0.5, 2.0, lower=-1.0),
            -0.3,
            lambda x: ss.truncnorm(-0.75, np.inf, 0.5, 2.0).logpdf(x),
        ),
    ],
    ids=["gamma-log", "beta-logodds", "uniform-interval", "pareto-lower", "truncnorm-lower"],
)
def test_transformed_term_is_the_density_of_the_unconstrained_value(make, value, reference):
    """log p_Y(y) = log p_X(x(y)) + log|dx/dy|, with the derivative by finite differences."""
    _, x = make(rr.key())
    u = rt.scalar("u")
    transform = rl.default_transform(x)
    f = rk.function(
        [u],
        [rl.joint_logprob({x: u}, transforms="default"), transform.backward(u)],
        backend="numpy",
    )
    logp, constrained = f(value)
    h = 1e-6
    slope = (f(value + h)[1] - f(value - h)[1]) / (2 * h)
    np.testing.assert_allclose(logp, reference(constrained) + np.log(slope), rtol=1e-8)


def test_uniform_bounds_from_other_random_variables_are_conditioned():
    k, low = rr.normal(rr.key(), 0.0, 1.0)
    k, x = rr.uniform(k, low, low + 2.0)
    lo, u = rt.scalar("low"), rt.scalar("u")
    f = rk.function(
        [lo, u], rl.joint_logprob({low: lo, x: u}, transforms="default"), backend="numpy"
    )
    x_value = 0.5 + 2.0 / (1 + np.exp(-0.3))
    jacobian = np.log(2.0) - np.log1p(np.exp(-0.3)) - np.log1p(np.exp(0.3))
    expected = ss.norm.logpdf(0.5) + ss.uniform(0.5, 2.0).logpdf(x_value) + jacobian
    np.testing.assert_allclose(f(0.5, 0.3), expected, rtol=1e-12)


def test_dirichlet_with_the_simplex_transform_takes_k_minus_one_values():
    _, w = rr.dirichlet(rr.key(), np.array([1.0, 2.0, 3.0]))
    u = rt.tensor("u", shape=(2,))
    f = rk.function(
        [u],
        [
            rl.joint_logprob({w: u}, transforms="default"),
            tr.simplex.backward(u),
            tr.simplex.log_jac_det(u),
        ],
        backend="numpy",
    )
    logp, point, jacobian = f(np.array([0.2, -0.5]))
    np.testing.assert_allclose(logp, ss.dirichlet([1, 2, 3]).logpdf(point) + jacobian, rtol=1e-12)
    with pytest.raises(ShapeError, match="unconstrained scale of simplex"):
        rl.joint_logprob({w: rt.tensor("u3", shape=(3,))}, transforms="default")


def test_an_explicit_transform_dict():
    _, x = rr.normal(rr.key(), 0.0, 1.0)
    u = rt.scalar("u")
    f = rk.function(
        [u], rl.joint_logprob({x: u}, transforms={x: tr.interval(-1, 1)}), backend="numpy"
    )
    x_value = -1 + 2 / (1 + np.exp(-0.4))
    jacobian = np.log(2.0) - np.log1p(np.exp(-0.4)) - np.log1p(np.exp(0.4))
    np.testing.assert_allclose(f(0.4), ss.norm.logpdf(x_value) + jacobian, rtol=1e-12)


# --- measurable transforms found by rules ------------------------------------------------

V = rt.scalar("v")


@functools.cache
def measurable_functions():
    k, z = rr.normal(rr.key(), 0.5, 2.0)
    _, n = rr.poisson(k, 3.0)
    loc, scale = rt.scalar("loc"), rt.scalar("scale")
    graphs = [
        rl.logprob(rt.exp(z), V),
        rl.logprob(loc + scale * z, V),
        rl.logprob(z * scale - loc, V),
        rl.logprob(loc - z, V),
        rl.logprob(-z, V),
        rl.logprob(z / scale, V),
        rl.logprob(rt.exp(3.0 * z + 1.0), V),
        rl.logprob(n + 2, V),
    ]
    return rk.function([V, loc, scale], graphs, backend="numpy")


@settings(max_examples=30)
@given(v=st.floats(0.01, 20), loc=st.floats(-5, 5), scale=st.floats(0.1, 5) | st.floats(-5, -0.1))
def test_measurable_transforms_match_scipy(v, loc, scale):
    got = measurable_functions()(v, loc, scale)
    a = abs(scale)
    expected = [
        ss.lognorm(2.0, scale=np.exp(0.5)).logpdf(v),
        ss.norm(loc + scale * 0.5, a * 2.0).logpdf(v),
        ss.norm(scale * 0.5 - loc, a * 2.0).logpdf(v),
        ss.norm(loc - 0.5, 2.0).logpdf(v),
        ss.norm(-0.5, 2.0).logpdf(v),
        ss.norm(0.5 / scale, 2.0 / a).logpdf(v),
        ss.lognorm(6.0, scale=np.exp(2.5)).logpdf(v),
        ss.poisson(3.0).logpmf(v - 2),
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_exp_of_a_normal_is_minus_inf_at_non_positive_values_with_finite_gradients():
    _, z = rr.normal(rr.key(), 0.0, 1.0)
    logp = rl.logprob(rt.exp(z), V)
    f = rk.function([V], [logp, rk.grad(logp, V)], backend="numpy")
    assert f(0.0)[0] == -np.inf and f(-1.0)[0] == -np.inf
    assert np.isfinite(f(-1.0)[1])


def test_no_density_for_quantities_the_rules_cannot_invert():
    k, a = rr.normal(rr.key(), 0.0, 1.0)
    _, b = rr.normal(k, 0.0, 1.0)
    with pytest.raises(GraphTypeError, match="found no log-density for the add output"):
        rl.logprob(a + b, V)
    with pytest.raises(GraphTypeError, match="found no log-density for the sin output"):
        rl.logprob(rt.sin(a), V)
    with pytest.raises(GraphTypeError, match="found no log-density for the add output"):
        rl.logprob(a + np.ones(3), rt.vector("w"))  # broadcasts one draw to three
    with pytest.raises(ShapeError, match="must have the rank of the normal draw"):
        rl.logprob(a, rt.vector("w"))


@functools.cache
def run_time_length_shift(backend):
    """``loc + scale * x`` for a draw x of static size 2 and loc, scale of run-time length."""
    _, x = rr.normal(rr.key(), 0.5, 2.0, size=(2,))
    loc, scale, y = rt.vector("loc"), rt.vector("scale"), rt.vector("y")
    logp = rl.joint_logprob({loc + scale * x: y})
    return rk.function([loc, scale, y], logp, backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize(
    ("loc", "scale"),
    [([0.3, -1.2], [1.5]), ([0.3], [1.5, -0.4]), ([0.3, -1.2], [1.5, -0.4])],
    ids=["loc-2-scale-1", "loc-1-scale-2", "both-2"],
)
def test_a_shift_and_scale_of_run_time_length_match_scipy(backend, loc, scale):
    loc, scale, y = np.array(loc), np.array(scale), np.array([0.1, 0.9])
    expected = ss.norm(loc + scale * 0.5, np.abs(scale) * 2.0).logpdf(y).sum()
    got = run_time_length_shift(backend)(loc, scale, y)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def not_broadcast(backend, got, wanted):
    """NumPy's and JAX's wording of "the parameter of length ``got`` does not broadcast to
    the draw's length ``wanted``"."""
    if backend == "numpy":
        return rf"could not be broadcast .*\({got},\)\s+and requested shape \({wanted},\)"
    return (
        rf"Incompatible types for broadcasting: input type=float64\[{got}\] and requested "
        rf"type=float64\[{wanted}\]"
    )


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_parameter_of_run_time_length_that_does_not_broadcast_fails_at_run_time(backend):
    f = run_time_length_shift(backend)
    with pytest.raises(ValueError, match=not_broadcast(backend, 3, 2)):
        f(np.zeros(3), np.ones(1), np.zeros(2))  # loc of length 3 against a draw of size 2
    with pytest.raises(ValueError, match=not_broadcast(backend, 3, 2)):
        f(np.zeros(2), np.ones(3), np.zeros(2))  # the same for scale


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_run_time_length_that_would_widen_the_draw_fails_at_run_time(backend):
    """A draw of size 1 shifted by three values is not a bijective image of it: the density
    must not silently count the draw three times."""
    _, x = rr.normal(rr.key(), 0.0, 1.0, size=(1,))
    loc, y = rt.vector("loc"), rt.vector("y")
    f = rk.function([loc, y], rl.joint_logprob({loc - x: y}), backend=backend)
    np.testing.assert_allclose(f(np.array([0.5]), np.array([1.0])), ss.norm.logpdf(0.5 - 1.0))
    with pytest.raises(ValueError, match=not_broadcast(backend, 3, 1)):
        f(np.zeros(3), np.ones(3))


def test_the_gradient_through_a_parameter_of_run_time_length_matches_jax_grad():
    _, x = rr.normal(rr.key(), 0.5, 2.0, size=(2,))
    loc, scale, y = rt.vector("loc"), rt.vector("scale"), rt.vector("y")
    logp = rl.joint_logprob({loc + scale * x: y})
    f = rk.function([loc, scale, y], rk.grad(logp, [loc, scale]), backend="numpy")
    g = rk.function([loc, scale, y], logp, backend="jax")
    point = (np.array([0.3, -1.2]), np.array([1.5]), np.array([0.1, 0.9]))
    with jax.enable_x64(True):
        through_jax = jax.grad(g.jax_fn, argnums=(0, 1))(*point)
    for ours, theirs in zip(f(*point), through_jax, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_user_rules_extend_the_inversions():
    a, v = lvar("a"), lvar("v")
    sinh = rule(
        rl.log_density(rt.sinh(a), v),
        lambda b: rl.log_density(b.a, rt.arcsinh(b.v)) - 0.5 * rt.log1p(b.v**2),
        name="sinh_of_random",
    )
    _, z = rr.normal(rr.key(), 0.0, 1.0)
    with pytest.raises(GraphTypeError, match="no log-density for the sinh output"):
        rl.logprob(rt.sinh(z), V)
    f = rk.function([V], rl.logprob(rt.sinh(z), V, rules=[sinh]), backend="numpy")
    np.testing.assert_allclose(
        f(1.7), ss.norm.logpdf(np.arcsinh(1.7)) - 0.5 * np.log1p(1.7**2), rtol=1e-12
    )


# --- stability through joint_logprob ------------------------------------------------------


def test_bernoulli_logit_800_is_exact_with_gradient_minus_one_on_both_backends():
    logit = rt.scalar("logit")
    _, y = rr.bernoulli(rr.key(), logit=logit)
    logp = rl.joint_logprob({y: 0})
    outputs = [logp, rk.grad(logp, logit)]
    for backend in ("numpy", "jax"):
        value, slope = rk.function([logit], outputs, backend=backend)(800.0)
        assert (float(value), float(slope)) == (-800.0, -1.0), backend
    f = rk.function([logit], logp, backend="jax")
    with jax.enable_x64(True):
        assert float(jax.grad(f.jax_fn)(800.0)) == -1.0


# --- packing --------------------------------------------------------------------------------


def test_packing_round_trips_with_batch_axes():
    packing = rl.flatten_values([VALUES[0], VALUES[2], VALUES[1]])
    assert packing.size == 10 and packing.flat.type == rk.TensorType("float64", (10,))
    arrays = {"mu": 1.0, "tau": 2.0, "theta_tilde": np.arange(8.0)}
    flat = packing.pack(arrays)
    np.testing.assert_array_equal(flat, [1.0, *range(8), 2.0])
    batch = np.stack([flat, flat + 1])
    unpacked = packing.unpack(batch)
    assert unpacked["theta_tilde"].shape == (2, 8) and unpacked["mu"].shape == (2,)
    np.testing.assert_array_equal(packing.pack(unpacked), batch)


def test_substituted_logp_on_the_flat_vector_matches():
    packing = rl.flatten_values(list(VALUES))
    _, mu, tau, theta_tilde, y = eight_schools()
    values = dict(zip((mu, tau, theta_tilde), VALUES, strict=True)) | {y: Y}
    logp = packing.substitute(rl.joint_logprob(values, transforms="default"))
    f = rk.function([packing.flat], [logp, rk.grad(logp, packing.flat)], backend="numpy")
    point = (0.7, -0.2, np.linspace(-2, 2, 8))
    value, gradient = f(packing.pack(dict(zip(["mu", "tau", "theta_tilde"], point, strict=True))))
    expected = compiled_eight_schools("numpy")(*point)
    np.testing.assert_allclose(value, expected[0], rtol=1e-14)
    np.testing.assert_allclose(gradient, np.concatenate([np.ravel(g) for g in expected[1:]]))


def test_packing_errors():
    with pytest.raises(GraphTypeError, match="at least one"):
        rl.flatten_values([])
    with pytest.raises(ShapeError, match="give it a static shape"):
        rl.flatten_values([rt.vector("w")])
    with pytest.raises(GraphTypeError, match="distinct names"):
        rl.flatten_values([rt.scalar("a"), rt.scalar("a")])
    with pytest.raises(GraphTypeError, match="float input Var"):
        rl.flatten_values([rt.scalar("n", dtype="int64")])
    packing = rl.flatten_values([rt.scalar("a"), rt.tensor("b", shape=(2,))])
    with pytest.raises(GraphTypeError, match="no array for the value 'b'"):
        packing.pack({"a": 1.0})
    with pytest.raises(ShapeError, match="expected \\(2,\\)"):
        packing.pack({"a": 1.0, "b": np.ones(3)})
    with pytest.raises(ShapeError, match="last axis has length 3"):
        packing.unpack(np.ones(4))


def test_bernoulli_with_p_a_sigmoid_uses_the_logit_density():
    z = rt.scalar("z")
    _, y = rr.bernoulli(rr.key(), rt.sigmoid(z))
    logp = rl.joint_logprob({y: 0})
    f = rk.function([z], [logp, rk.grad(logp, z)], backend="numpy")
    assert [float(v) for v in f(800.0)] == [-800.0, -1.0]
    np.testing.assert_allclose(f(0.3), [np.log1p(-1 / (1 + np.exp(-0.3))), -1 / (1 + np.exp(-0.3))])


def test_a_transform_with_other_event_axes_than_its_variable_counts_each_term_once():
    k, x = rr.normal(rr.key(), 0.0, 2.0, size=(3,))
    _, w = rr.multivariate_normal(k, np.ones(2), np.eye(2) * 0.5)
    u, v = rt.tensor("u", shape=(3,)), rt.tensor("v", shape=(2,))
    outputs = [
        rl.joint_logprob({x: u}, transforms={x: tr.ordered}),
        rl.joint_logprob({w: v}, transforms={w: tr.log}),
    ]
    f = rk.function([u, v], outputs, backend="numpy")
    point, other = np.array([-0.5, 0.2, 1.0]), np.array([0.3, -0.4])
    ordered_point = np.cumsum([point[0], *np.exp(point[1:])])
    expected = [
        ss.norm(0, 2).logpdf(ordered_point).sum() + point[1:].sum(),
        ss.multivariate_normal(np.ones(2), np.eye(2) * 0.5).logpdf(np.exp(other)) + other.sum(),
    ]
    np.testing.assert_allclose(f(point, other), expected, rtol=1e-12)


def test_a_long_chain_of_random_variables_is_conditioned_link_by_link():
    key = k = rr.key()
    draws, previous = [], 0.0
    for _ in range(50):
        k, previous = rr.normal(k, previous, 1.5)
        draws.append(previous)
    values = [rt.scalar(f"v{i}") for i in range(50)]
    logp = rl.joint_logprob(dict(zip(draws, values, strict=True)))
    point = np.linspace(-2.0, 3.0, 50)
    expected = ss.norm(np.concatenate([[0.0], point[:-1]]), 1.5).logpdf(point).sum()
    np.testing.assert_allclose(rk.function(values, logp, backend="numpy")(*point), expected)
    assert rk.function([key], draws[-1], backend="numpy")(rr.seed(0)).shape == ()


def test_a_probit_bernoulli_gets_the_exact_probit_density():
    eta, y = rt.vector("eta"), rt.vector("y")
    _, draw = rr.bernoulli(rr.key(), rt.ndtr(eta))
    logp = rl.logprob(draw, y)
    f = rk.function([eta, y], [logp, rk.grad(rt.sum(logp), eta)], backend="numpy")
    e, v = np.array([40.0, -40.0, 0.3, 2.0]), np.array([0.0, 1.0, 1.0, 0.0])
    value, grad = f(e, v)
    expected = np.where(v == 1, sc.log_ndtr(e), sc.log_ndtr(-e))
    np.testing.assert_allclose(value, expected, rtol=1e-13)  # -804.6, not -inf
    assert np.all(np.isfinite(grad))
