"""Composite random variables (``rr.custom``): one node holding the user's sampling graph,
sampled by that graph on both backends, batched by ``size=``; its errors."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy import stats

import rewritekit as rk
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.random import is_draw
from rewritekit.tensor.control import Blockwise
from rewritekit.tensor.custom_random import CustomRV

N, P_MIN = 4000, 1e-3


def _folded(key, loc, scale):
    key, z = rr.normal(key, loc, scale)
    return key, rt.abs(z)


def _walk(key, mu):
    key, steps = rr.normal(key, mu, 1.0, size=(6,))
    return key, rt.cumsum(steps)


folded_normal = rr.custom(_folded, name="folded_normal")
walk = rr.custom(_walk, name="walk")
KEY = rr.key()


def test_a_call_is_one_random_variable_node_with_its_name():
    k, x = folded_normal(KEY, 1.0, 2.0, size=(3,))
    assert is_draw(x) and isinstance(x.owner.op, CustomRV)
    assert x.type == rt.tensor("t", shape=(3,)).type and k.type == rr.KEY_TYPE
    assert x.owner.op.name == "folded_normal" and x.owner.op.params == ("loc", "scale")
    assert "folded_normal{size=(3,)" in rk.dprint(x)
    # hash-consed: the same call is the same node (same key, same draw)
    assert folded_normal(KEY, 1.0, 2.0, size=(3,))[1] is x
    _, w = walk(KEY, rt.vector("mu"))
    assert w.type.shape == (None, 6) and w.owner.op.ndim_supp == 1


def test_parameters_take_their_dtype_and_dtype_casts_them():
    _, x = folded_normal(KEY, rt.scalar("m", dtype="float32"), 1.0)
    assert x.dtype == "float32"
    _, y = rr.halfnormal(KEY, 1.0, dtype="float32")
    assert y.dtype == "float32"


@functools.cache
def _draws(backend):
    key = rr.key()
    k, a = folded_normal(key, 1.0, 2.0, size=(N,))  # elementwise: one broadcast draw
    k, w = walk(k, np.array([0.0, 3.0]), size=(N, 2))  # per element, own keys
    k, h = rr.halfnormal(k, 1.5, size=(N,))
    k, ln = rr.lognormal(k, 0.3, 0.5, size=(N,))
    f = rk.function([key], [a, w, h, ln, k], backend=backend)
    first, second = f(rr.seed(7)), f(rr.seed(7))
    for p, q in zip(first, second, strict=True):
        np.testing.assert_array_equal(p, q)  # the same key gives the same draws
    return first


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_draws_follow_the_distributions(backend):
    a, w, h, ln, _ = _draws(backend)
    assert stats.kstest(a, stats.foldnorm(0.5, scale=2.0).cdf).pvalue > P_MIN
    assert stats.kstest(h, stats.halfnorm(scale=1.5).cdf).pvalue > P_MIN
    assert stats.kstest(ln, stats.lognorm(0.5, scale=np.exp(0.3)).cdf).pvalue > P_MIN
    assert w.shape == (N, 2, 6)
    steps = np.diff(w, axis=-1, prepend=0.0)  # each element its own walk
    for j, mu in enumerate([0.0, 3.0]):
        assert stats.kstest(steps[:, j].ravel(), stats.norm(mu).cdf).pvalue > P_MIN
    # elements are independent: neighbouring walks do not correlate
    assert abs(np.corrcoef(w[:-1, 0, -1], w[1:, 0, -1])[0, 1]) < 5 / np.sqrt(N)


def test_a_batch_known_at_run_time_folds_the_index_into_the_key():
    mu = rt.vector("mu")
    key = rr.key()
    _, w = walk(key, mu)
    for backend in ("numpy", "jax"):
        out = rk.function([key, mu], w, backend=backend)(rr.seed(1), np.array([0.0, 1e3]))
        assert out.shape == (2, 6) and np.all(np.abs(out[0]) < 50)
        np.testing.assert_allclose(out[1], 1e3 * np.arange(1, 7), atol=50)
    expanded = w.owner.op.expand(*w.owner.inputs)[1]
    assert any(isinstance(n.op, Blockwise) for n in rk.ir.toposort([expanded]))


def test_rewriting_reaches_the_inner_graph():
    def soft(key, s):
        key, z = rr.normal(key, 0.0, s)
        return key, rt.log(1 + rt.exp(z))  # softplus, rewritten inside the node

    _, x = rr.custom(soft, name="soft")(KEY, 1.0)
    f = rk.function([KEY], x)
    assert "stabilize.softplus_of_log_one_plus_exp" in [entry.rule for entry in f.trace]


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda key, s: rr.normal(key, 0.0, s)[1], "must return \\(next_key, value\\)"),
        (lambda key, s: (key, s * 2.0), "draws nothing"),
        (lambda key, s: (key, rr.normal(key, 0.0, s)[1]), "returned the key it was given"),
        (lambda key, s: (rr.normal(key, 0.0, s)[1], s), "must be a key"),
        (lambda key, s: (*rr.normal(key, OUTER, s),), "reads 'OUTER'"),
    ],
    ids=["no-pair", "no-draw", "same-key", "not-a-key", "closure"],
)
def test_a_bad_build_is_an_error_naming_the_distribution(build, match):
    with pytest.raises(GraphTypeError, match=f"mine: .*{match}"):
        rr.custom(build, name="mine")(KEY, 1.0)


OUTER = rt.scalar("OUTER")


def test_bad_names_and_parameter_counts_are_errors():
    with pytest.raises(GraphTypeError, match="'normal' is a built-in"):
        rr.custom(_folded, name="normal")
    with pytest.raises(GraphTypeError, match="identifier"):
        rr.custom(_folded, name="folded normal")
    with pytest.raises(GraphTypeError, match="folded_normal: expected 2 parameters"):
        folded_normal(KEY, 1.0)
    with pytest.raises(GraphTypeError, match="params="):
        rr.custom(lambda key, *ps: rr.normal(key, *ps), name="star")
    with pytest.raises(GraphTypeError, match="needs at least 1 axes"):
        rr.custom(_folded, name="vec", ndims_params=(1, 0))(KEY, 1.0, 1.0)
