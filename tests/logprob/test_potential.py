"""Potentials: named user terms added to a joint log-density, their random quantities
replaced by their values; checked against closed forms and SciPy on both backends, with
gradients against finite differences, and their errors."""

import functools
import re

import numpy as np
import pytest
import scipy.stats as ss

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, GraphTypeError
from rewritekit.logprob.core import Potential, potential

X_V, LOG_TAU_V = rt.tensor("x", shape=(3,)), rt.scalar("log_tau")


def model():
    """x ~ Normal(0, tau) (3,), tau ~ HalfNormal(1) on the log scale, and two potentials:
    a soft sum-to-zero constraint on x and a term in tau itself (its constrained value)."""
    k, tau = rr.halfnormal(rr.key(), 1.0)
    k, x = rr.normal(k, 0.0, tau, size=(3,))
    potentials = [
        potential("prior_on_sum", -0.5 * rt.sum(x) ** 2),
        potential("tau_penalty", -2.0 * tau),
    ]
    return {tau: LOG_TAU_V, x: X_V}, potentials


def reference(log_tau, x):
    tau = np.exp(log_tau)
    return [
        ss.halfnorm.logpdf(tau) + log_tau,
        ss.norm(0, tau).logpdf(x).sum(),
        -0.5 * np.sum(x) ** 2,
        -2.0 * tau,
    ]


@functools.cache
def _compiled(backend):
    values, potentials = model()
    terms = rl.logprob_terms(values, transforms="default", potentials=potentials)
    joint = rl.joint_logprob(values, transforms="default", potentials=potentials)
    outputs = [*terms.values(), joint, *rk.grad(joint, [LOG_TAU_V, X_V])]
    return list(terms), rk.function([LOG_TAU_V, X_V], outputs, backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_potentials_are_named_terms_of_the_values(backend):
    names, f = _compiled(backend)
    assert names == ["log_tau", "x", "prior_on_sum", "tau_penalty"]
    h = 1e-6
    for log_tau, x in [(0.3, np.array([0.5, -1.0, 2.0])), (-1.2, np.array([0.1, 0.2, 0.3]))]:
        out = [np.asarray(v) for v in f(log_tau, x)]
        expected = reference(log_tau, x)
        np.testing.assert_allclose(out[:4], expected, rtol=1e-12)
        np.testing.assert_allclose(out[4], sum(expected), rtol=1e-12)
        d_tau = (sum(reference(log_tau + h, x)) - sum(reference(log_tau - h, x))) / (2 * h)
        d_x = [
            (sum(reference(log_tau, x + e)) - sum(reference(log_tau, x - e))) / (2 * h)
            for e in np.eye(3) * h
        ]
        np.testing.assert_allclose(out[5], d_tau, rtol=1e-6)
        np.testing.assert_allclose(out[6], d_x, rtol=1e-6)


def test_a_potential_on_a_summed_out_latent_joins_its_terms():
    k, z = rr.bernoulli(rr.key(), 0.3)
    k, y = rr.normal(k, rt.cast(z, "float64"), 1.0)
    bonus = potential("bonus", 2.0 * z)  # an integer graph times a float: float64
    v = rt.scalar("y")
    terms = rl.logprob_terms({y: v}, potentials=[bonus])
    assert list(terms) == ["y+bonus"]
    f = rk.function([v], terms["y+bonus"], backend="numpy")
    expected = np.logaddexp(
        np.log(0.7) + ss.norm.logpdf(0.4), np.log(0.3) + ss.norm(1).logpdf(0.4) + 2
    )
    np.testing.assert_allclose(f(0.4), expected, rtol=1e-13)


def test_a_potential_of_values_alone_and_an_integer_potential():
    _, x = rr.normal(rr.key(), 0.0, 1.0)
    v, w = rt.scalar("x"), rt.scalar("w", dtype="int64")
    counted = potential("counted", w)  # cast to float64
    assert counted.term.dtype == "float64"
    assert repr(potential("free", v)) == "potential('free', 'x')"
    lp = rl.joint_logprob({x: v}, potentials=[counted, potential("free", -(v**2))])
    f = rk.function([v, w], lp, backend="numpy")
    np.testing.assert_allclose(f(0.5, 3), ss.norm.logpdf(0.5) + 3 - 0.25, rtol=1e-14)


def test_a_potential_on_a_draw_without_a_value_is_the_usual_error():
    k, mu = rr.normal(rr.key(), 0.0, 1.0)
    _, x = rr.normal(k, 0.0, 1.0)
    message = (
        "joint_logprob: the potential 'on_mu' depends on the normal draw, which has no value; "
        "give it a value variable in the dict"
    )
    with pytest.raises(GraphTypeError, match=re.escape(message)):
        rl.joint_logprob({x: rt.scalar("x")}, potentials=[potential("on_mu", -(mu**2))])


def test_bad_potentials_are_errors_naming_them():
    _, x = rr.normal(rr.key(), 0.0, 1.0)
    values = {x: rt.scalar("x")}
    with pytest.raises(GraphTypeError, match="potential: name must be a non-empty string, got ''"):
        potential("", x)
    with pytest.raises(GraphTypeError, match="potential: name must be a non-empty string, got 3"):
        potential(3, x)
    with pytest.raises(DTypeError, match=re.escape("potential 'c': the term must be real")):
        potential("c", rt.scalar("c", dtype="complex128"))
    with pytest.raises(GraphTypeError, match=re.escape("two terms are named 'x'")):
        rl.joint_logprob(values, potentials=[potential("x", x)])
    with pytest.raises(GraphTypeError, match=re.escape("two terms are named 'p'")):
        rl.joint_logprob(values, potentials=[potential("p", x), potential("p", -x)])
    with pytest.raises(
        GraphTypeError, match=r"potentials must be a list of potential.*got Potential"
    ):
        rl.joint_logprob(values, potentials=potential("p", x))
    with pytest.raises(GraphTypeError, match=r"potentials must be a list .* got an item 1\.0"):
        rl.joint_logprob(values, potentials=[1.0])
    assert isinstance(potential("p", x), Potential)
