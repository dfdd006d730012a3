"""Bounded discrete draws without a value are summed out of ``joint_logprob``: mixtures
against SciPy's hand-enumerated sums and NumPyro's ``MixtureSameFamily``, both backends,
gradients against finite differences, and the errors where nothing can be summed out.

Each model is compiled once per backend (``_compiled``) and called at several points.
"""

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest
import scipy.stats as ss
from scipy.special import expit, logsumexp

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError

N = 6
CENTRES = np.array([-2.0, 0.5, 3.0])
RATES = np.array([1.5, 6.0])
Y_A = np.array([-1.2, -0.4, 0.3, 1.1, 2.6, 3.0])
Y_B = np.array([-2.5, -1.0, 0.2, 0.9, 2.8, 3.4])
Y_C = np.array([0.4, 1.9, 1.2, -0.3])
Y_D = np.array([2, 5, 7])
Y_E = np.array([0.3, -0.8])

# inputs of model A: values, then parameters, then data (named, so terms are named)
INPUTS_A = [
    rt.scalar("w"),
    rt.tensor("p", shape=(3,)),
    rt.tensor("mu", shape=(2,)),
    rt.scalar("sigma"),
    rt.scalar("a"),
    rt.tensor("y_a", shape=(N,)),
    rt.tensor("y_b", shape=(N,)),
    rt.tensor("y_c", shape=(4,)),
    rt.tensor("y_d", shape=(3,), dtype="int64"),
    rt.tensor("y_e", shape=(2,)),
]
NAMES_A = ["w", "y_a", "p", "y_b", "y_c+y_d", "y_e"]


def model_a():
    """Three latents: z (N,) Bernoulli of a Beta weight (a two-component mixture), c (N,)
    categorical of a Dirichlet weight (three components), s a scalar Bernoulli (by logit)
    shared by y_c and y_d; y_e reads none."""
    w_v, p_v, mu, sigma, a, *data = INPUTS_A
    k, w = rr.beta(rr.key(), 2.0, 2.0)
    k, z = rr.bernoulli(k, w, size=(N,))
    k, y_a = rr.normal(k, mu[z], sigma)
    k, p = rr.dirichlet(k, np.ones(3))
    k, c = rr.categorical(k, p, size=(N,))
    k, y_b = rr.normal(k, rt.constant(CENTRES)[c], 1.0)
    k, s = rr.bernoulli(k, logit=a)
    k, y_c = rr.normal(k, mu[s], 1.0, size=(4,))
    k, y_d = rr.poisson(k, rt.constant(RATES)[s], size=(3,))
    k, y_e = rr.normal(k, 0.0, sigma, size=(2,))
    v_a, v_b, *rest = data
    return dict(zip([w, y_a, p, y_b, y_c, y_d, y_e], [w_v, v_a, p_v, v_b, *rest], strict=True))


def reference_a(w, p, mu, sigma, a, y_a, y_b, y_c, y_d, y_e):
    """The terms of model A, each latent enumerated by hand (off the simplex too, for the
    finite differences: Dirichlet(1, 1, 1) is flat)."""
    mixture = np.logaddexp(
        np.log1p(-w) + ss.norm(mu[0], sigma).logpdf(y_a),
        np.log(w) + ss.norm(mu[1], sigma).logpdf(y_a),
    )
    p = p / np.sum(p)  # categorical normalises p by its sum (so p need not sum to 1 here)
    by_c = np.log(p)[:, None] + ss.norm(CENTRES[:, None], 1.0).logpdf(y_b)
    by_s = [
        np.log(q) + ss.norm(m, 1.0).logpdf(y_c).sum() + ss.poisson(r).logpmf(y_d).sum()
        for q, m, r in zip([expit(-a), expit(a)], mu, RATES, strict=True)
    ]
    return [
        ss.beta(2, 2).logpdf(w),
        mixture.sum(),
        ss.dirichlet(np.ones(3)).logpdf(p),
        logsumexp(by_c, axis=0).sum(),
        logsumexp(by_s),
        ss.norm(0, sigma).logpdf(y_e).sum(),
    ]


WRT_A = 5  # the first five inputs: w, p, mu, sigma, a


@functools.cache
def _compiled(name, backend):
    values, inputs = (model_a(), INPUTS_A) if name == "a" else (model_b(), INPUTS_B)
    terms = rl.logprob_terms(values)
    joint = rl.joint_logprob(values)
    wrt = inputs[:WRT_A] if name == "a" else inputs[:2]
    f = rk.function(inputs, [*terms.values(), *rk.grad(joint, wrt)], backend=backend)
    return list(terms), f


POINTS_A = [
    (0.3, np.array([0.2, 0.3, 0.5]), np.array([-0.5, 2.0]), 0.8, -0.4),
    (0.85, np.array([0.6, 0.1, 0.3]), np.array([1.0, -1.0]), 1.7, 2.5),
]


def _finite_differences(fn, args, count, h=1e-6):
    """Central differences of ``fn`` in each entry of its first ``count`` arguments."""
    grads = []
    for i in range(count):
        base = np.asarray(args[i], dtype=float)
        g = np.zeros(base.shape)
        for j in np.ndindex(base.shape):
            step = np.zeros(base.shape)
            step[j] = h
            up = fn(*args[:i], base + step, *args[i + 1 :])
            down = fn(*args[:i], base - step, *args[i + 1 :])
            g[j] = (up - down) / (2 * h)
        grads.append(g)
    return grads


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_mixtures_are_summed_out_as_by_hand(backend):
    names, f = _compiled("a", backend)
    assert names == NAMES_A
    for point in POINTS_A:
        args = [*point, Y_A, Y_B, Y_C, Y_D, Y_E]
        out = [np.asarray(v) for v in f(*args)]
        expected = reference_a(*args)
        np.testing.assert_allclose(out[: len(names)], expected, rtol=1e-12)
        # the gradient of the joint against central differences of the reference
        fd = _finite_differences(lambda *a: sum(reference_a(*a)), args, WRT_A)
        for got, want in zip(out[len(names) :], fd, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@jax.jit
def _numpyro_mixtures(w, p, mu, sigma):
    two = dist.MixtureSameFamily(
        dist.Categorical(probs=jnp.stack([1 - w, w])), dist.Normal(mu, sigma)
    )
    three = dist.MixtureSameFamily(dist.Categorical(probs=p), dist.Normal(CENTRES, 1.0))
    return two.log_prob(Y_A).sum(), three.log_prob(Y_B).sum()


def test_mixtures_agree_with_numpyro():
    _, f = _compiled("a", "numpy")
    for w, p, mu, sigma, a in POINTS_A:
        out = f(w, p, mu, sigma, a, Y_A, Y_B, Y_C, Y_D, Y_E)
        with jax.enable_x64(True):
            expected = _numpyro_mixtures(w, p, mu, sigma)
        np.testing.assert_allclose([out[1], out[3]], np.asarray(expected), rtol=1e-12)


# --- binomial, discrete uniform, a latent whose parameter reads another, unknown lengths ---

INPUTS_B = [
    rt.scalar("q"),
    rt.vector("probs"),  # its length is known at run time only
    rt.tensor("y_f", shape=(2,)),
    rt.tensor("y_g", shape=(3,), dtype="int64"),
    rt.scalar("y_h"),
    rt.vector("y_i"),
]


def model_b():
    q, probs, *data = INPUTS_B
    k, b = rr.binomial(rr.key(), 4, q)
    k, y_f = rr.normal(k, rt.cast(b, "float64"), 1.0, size=(2,))
    k, d = rr.discrete_uniform(k, 1, 4, size=(3,))
    k, y_g = rr.poisson(k, 1.5 * rt.cast(d, "float64"))
    k, z1 = rr.bernoulli(k, 0.4)
    k, z2 = rr.bernoulli(k, rt.constant(np.array([0.2, 0.9]))[z1])  # z2 | z1
    k, y_h = rr.normal(k, rt.constant(np.array([-1.0, 1.0]))[z2], 1.0)
    k, z3 = rr.bernoulli(k, probs)
    k, y_i = rr.normal(k, rt.constant(np.array([-3.0, 3.0]))[z3], 1.0)
    return dict(zip([y_f, y_g, y_h, y_i], data, strict=True))


def reference_b(q, probs, y_f, y_g, y_h, y_i):
    by_b = [ss.binom(4, q).logpmf(n) + ss.norm(n, 1).logpdf(y_f).sum() for n in range(5)]
    by_d = [np.log(0.25) + ss.poisson(1.5 * v).logpmf(y_g) for v in range(1, 5)]
    by_z = [
        np.log(p1 * p2) + ss.norm([-1.0, 1.0][v2], 1).logpdf(y_h)
        for p1, v1 in [(0.6, 0), (0.4, 1)]
        for p2, v2 in [(1 - [0.2, 0.9][v1], 0), ([0.2, 0.9][v1], 1)]
    ]
    by_z3 = np.logaddexp(
        np.log1p(-probs) + ss.norm(-3, 1).logpdf(y_i), np.log(probs) + ss.norm(3, 1).logpdf(y_i)
    )
    return [logsumexp(by_b), logsumexp(by_d, axis=0).sum(), logsumexp(by_z), by_z3.sum()]


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_binomial_discrete_uniform_nested_and_unknown_lengths(backend):
    names, f = _compiled("b", backend)
    assert names == ["y_f", "y_g", "y_h", "y_i"]
    probs = np.array([0.1, 0.5, 0.95])
    data = [np.array([1.5, 2.5]), np.array([0, 3, 9]), 0.4, np.array([-2.0, 0.5, 3.5])]
    for q in [0.25, 0.7]:
        out = [np.asarray(v) for v in f(q, probs, *data)]
        np.testing.assert_allclose(out[:4], reference_b(q, probs, *data), rtol=1e-12)
        fd = _finite_differences(lambda *a: sum(reference_b(*a)), [q, probs, *data], 2)
        for got, want in zip(out[4:], fd, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_latent_is_summed_out_only_from_the_terms_that_read_it():
    k, z = rr.bernoulli(rr.key(), 0.3)
    k, y1 = rr.normal(k, rt.cast(z, "float64"), 1.0)
    k, y2 = rr.normal(k, 0.0, 1.0)
    v1, v2 = rt.scalar("y1"), rt.scalar("y2")
    terms = rl.logprob_terms({y1: v1, y2: v2})
    assert list(terms) == ["y1", "y2"]
    f = rk.function([v1, v2], list(terms.values()), backend="numpy")
    expected = [
        np.logaddexp(np.log(0.7) + ss.norm.logpdf(0.2), np.log(0.3) + ss.norm(1).logpdf(0.2))
    ]
    np.testing.assert_allclose(f(0.2, -0.5), [expected[0], ss.norm.logpdf(-0.5)], rtol=1e-13)


# --- errors ------------------------------------------------------------------------------


def test_an_unbounded_discrete_draw_is_an_error_saying_what_is_summed_out():
    k, z = rr.poisson(rr.key(), 3.0)
    k, y = rr.normal(k, rt.cast(z, "float64"), 1.0)
    message = (
        "joint_logprob: the log-density of the normal draw (value 'y') depends on the poisson "
        "draw, which has no value; give it a value variable in the dict (only bounded discrete "
        "variables are summed out: bernoulli, bernoulli_logit, categorical, discrete_uniform "
        "and binomial with constant bounds, at most 128 values; it is unbounded)"
    )
    with pytest.raises(GraphTypeError, match=re.escape(message)):
        rl.joint_logprob({y: rt.scalar("y")})


@pytest.mark.parametrize(
    ("draw", "reason"),
    [
        (lambda k: rr.binomial(k, rt.scalar("n", dtype="int64"), 0.5), "its n is not an integer"),
        (lambda k: rr.discrete_uniform(k, 0, rt.scalar("u", dtype="int64")), "its bounds (lower"),
        (lambda k: rr.categorical(k, rt.vector("p")), "its number of categories is not static"),
        (lambda k: rr.categorical(k, np.ones(200)), "it takes 200 values"),
    ],
    ids=["binomial", "discrete_uniform", "categorical_unknown", "categorical_large"],
)
def test_a_discrete_draw_that_cannot_be_enumerated_is_an_error_saying_why(draw, reason):
    k, z = draw(rr.key())
    k, y = rr.normal(k, rt.cast(z, "float64"), 1.0)
    with pytest.raises(GraphTypeError, match=re.escape("are summed out: bernoulli")):
        rl.joint_logprob({y: rt.scalar("y")})
    with pytest.raises(GraphTypeError, match=re.escape(reason)):
        rl.joint_logprob({y: rt.scalar("y")})


def test_a_continuous_draw_without_a_value_is_the_error_it_was():
    k, mu = rr.normal(rr.key(), 0.0, 1.0)
    k, y = rr.normal(k, mu, 1.0)
    message = (
        "joint_logprob: the log-density of the normal draw (value 'y') depends on the normal "
        "draw, which has no value; give it a value variable in the dict"
    )
    with pytest.raises(GraphTypeError, match=re.escape(message) + "$"):
        rl.joint_logprob({y: rt.scalar("y")})


def test_a_latent_whose_parameter_has_no_value_is_an_error_naming_it():
    k, w = rr.beta(rr.key(), 1.0, 1.0)
    k, z = rr.bernoulli(k, w)
    k, y = rr.normal(k, rt.cast(z, "float64"), 1.0)
    message = "the log-probability of the bernoulli draw depends on the beta draw, which has no"
    with pytest.raises(GraphTypeError, match=re.escape(message)):
        rl.joint_logprob({y: rt.scalar("y")})


@pytest.mark.parametrize(
    ("loc", "through"),
    [
        (lambda z: rt.sum(z) * 1.0, "sum"),
        (lambda z: rt.cast(z[::-1], "float64"), "getitem"),
        (lambda z: rt.cast(z[np.array([0, 0, 1, 1])], "float64"), "getitem"),
        (lambda z: rt.cast(rt.reshape(z, (2, 2)), "float64").T.reshape((4,)), "reshape"),
    ],
    ids=["sum", "reversed", "gathered", "reshaped"],
)
def test_terms_that_do_not_factor_over_the_latent_are_an_error(loc, through):
    k, z = rr.bernoulli(rr.key(), 0.3, size=(4,))
    k, y = rr.normal(k, loc(z), 1.0, size=(4,))
    message = (
        "joint_logprob: cannot sum out the bernoulli draw (shape (4,)) element by element: the "
        "log-density of the normal draw (value 'y') does not factor over its elements (through "
        f"{through}, an element reads several elements of it, or none)"
    )
    with pytest.raises(GraphTypeError, match=re.escape(message)):
        rl.joint_logprob({y: rt.vector("y")})


def test_a_term_that_reads_only_the_latents_length_is_kept_whole():
    probs = rt.vector("probs")  # z's length is known at run time only
    k, z = rr.bernoulli(rr.key(), probs)
    k, y = rr.normal(k, rt.constant(np.array([-1.0, 1.0]))[z], 1.0)
    k, n = rr.normal(k, rt.cast(rt.shape(z)[0], "float64"), 1.0)  # Normal(len(z), 1)
    v, w = rt.vector("y"), rt.scalar("n")
    terms = rl.logprob_terms({y: v, n: w})
    assert list(terms) == ["y+n"]
    f = rk.function([probs, v, w], terms["y+n"], backend="numpy")
    p, d = np.array([0.3, 0.6, 0.9]), np.array([0.1, 0.5, -1.2])
    mixture = np.logaddexp(np.log1p(-p) + ss.norm(-1).logpdf(d), np.log(p) + ss.norm(1).logpdf(d))
    np.testing.assert_allclose(f(p, d, 0.7), mixture.sum() + ss.norm(3).logpdf(0.7), rtol=1e-13)


def test_a_latent_read_by_a_mixture_form_and_another_term_is_summed_out_once():
    # where(z, c1, c0) alone would be summed out by the mixture rule inside its own term;
    # read by y2 too, z must be one value for both terms
    k, z = rr.bernoulli(rr.key(), 0.3, size=(2,))
    k, c0 = rr.normal(k, 0.0, 1.0, size=(2,))
    k, c1 = rr.normal(k, 3.0, 1.0, size=(2,))
    k, y2 = rr.normal(k, 5.0 * z, 1.0)
    v1, v2 = rt.vector("v1"), rt.vector("v2")
    f = rk.function([v1, v2], rl.joint_logprob({rt.where(z, c1, c0): v1, y2: v2}))
    a, b = np.array([1.0, -0.5]), np.array([4.0, 0.2])
    on = np.log(0.3) + ss.norm.logpdf(a, 3, 1) + ss.norm.logpdf(b, 5, 1)
    off = np.log(0.7) + ss.norm.logpdf(a, 0, 1) + ss.norm.logpdf(b, 0, 1)
    np.testing.assert_allclose(f(a, b), np.sum(np.logaddexp(on, off)), rtol=1e-12)
