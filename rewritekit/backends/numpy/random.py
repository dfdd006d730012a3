"""NumPy implementations of ``rewritekit.tensor.random``: ``numpy.random.Generator`` draws.

A key ``[k0, k1]`` seeds a ``SeedSequence``, which spawns two children: one gives the next
key, the other seeds the PCG64 generator of this draw. So the same key always gives the
same draw and the next key, and the two never share a stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special

from rewritekit.backends.common.arrays import batch_shape
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import random as rv


def _split(key: np.ndarray) -> tuple[np.ndarray, np.random.Generator]:
    sequence = np.random.SeedSequence([int(key[0]), int(key[1])])
    next_sequence, draw_sequence = sequence.spawn(2)
    next_key = next_sequence.generate_state(2, dtype=np.uint32)
    return next_key, np.random.Generator(np.random.PCG64(draw_sequence))


def _categorical(g: np.random.Generator, shape: tuple[int, ...], p: np.ndarray) -> Any:
    cdf = np.cumsum(p, axis=-1)
    cdf = cdf / cdf[..., -1:]
    u = g.random(shape)[..., None]
    k = np.sum(cdf <= u, axis=-1)
    return np.minimum(k, p.shape[-1] - 1)


def _multivariate_normal(
    g: np.random.Generator, shape: tuple[int, ...], mean: Any, cov: Any
) -> Any:
    chol = np.linalg.cholesky(cov)
    z = g.standard_normal(shape + mean.shape[-1:])
    return mean + np.einsum("...ij,...j->...i", chol, z)


def _dirichlet(g: np.random.Generator, shape: tuple[int, ...], alpha: Any) -> Any:
    weights = g.standard_gamma(np.broadcast_to(alpha, shape + alpha.shape[-1:]))
    return weights / np.sum(weights, axis=-1, keepdims=True)


# (generator, batch shape, *params) -> draws of that batch shape (plus core axes)
SAMPLERS: dict[type[rv.RandomVariable], Callable[..., Any]] = {
    rv.NormalRV: lambda g, s, loc, scale: g.normal(loc, scale, s),
    rv.HalfNormalRV: lambda g, s, scale: np.abs(g.normal(0.0, scale, s)),
    rv.CauchyRV: lambda g, s, loc, scale: loc + scale * g.standard_cauchy(s),
    rv.HalfCauchyRV: lambda g, s, scale: scale * np.abs(g.standard_cauchy(s)),
    rv.ExponentialRV: lambda g, s, scale: g.exponential(scale, s),
    rv.GammaRV: lambda g, s, alpha, scale: g.gamma(alpha, scale, s),
    rv.InverseGammaRV: lambda g, s, alpha, scale: scale / g.gamma(alpha, 1.0, s),
    rv.BetaRV: lambda g, s, a, b: g.beta(a, b, s),
    rv.UniformRV: lambda g, s, low, high: low + (high - low) * g.random(s),
    rv.StudentTRV: lambda g, s, df, loc, scale: loc + scale * g.standard_t(df, s),
    rv.LogNormalRV: lambda g, s, loc, scale: g.lognormal(loc, scale, s),
    rv.BernoulliRV: lambda g, s, p: g.random(s) < p,
    rv.BernoulliLogitRV: lambda g, s, logit: g.random(s) < special.expit(logit),
    rv.PoissonRV: lambda g, s, lam: g.poisson(lam, s),
    rv.BinomialRV: lambda g, s, n, p: g.binomial(n, p, s),
    rv.CategoricalRV: _categorical,
    rv.MultivariateNormalRV: _multivariate_normal,
    rv.DirichletRV: _dirichlet,
}


def _implement(op: rv.RandomVariable, node: Apply) -> Callable[..., Any]:
    sample = SAMPLERS[type(op)]
    dtype = np.dtype(op.dtype)

    def run(key: Any, size: Any, *params: Any) -> tuple[np.ndarray, np.ndarray]:
        params = tuple(np.asarray(p) for p in params)
        next_key, generator = _split(np.asarray(key))
        with np.errstate(all="ignore"):
            draw = sample(generator, batch_shape(op, size, params), *params)
        return next_key, np.asarray(draw).astype(dtype, copy=False)

    return run


for _cls in SAMPLERS:
    numpy_funcify.register(_cls, _implement)


# --- keys: JAX's numbers (threefry2x32, the partitionable split JAX uses by default) -------


def threefry2x32(
    k1: np.ndarray, k2: np.ndarray, x1: np.ndarray, x2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The Threefry-2x32 hash (20 rounds) of the counts ``(x1, x2)`` under the key
    ``(k1, k2)``, as JAX computes it: the bits behind ``split`` and ``fold_in``."""
    k1, k2 = np.uint32(k1), np.uint32(k2)
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
    x = [np.asarray(x1, np.uint32) + ks[0], np.asarray(x2, np.uint32) + ks[1]]
    with np.errstate(over="ignore"):
        for group in range(5):
            for r in rotations[group % 2]:
                x[0] = x[0] + x[1]
                x[1] = ((x[1] << np.uint32(r)) | (x[1] >> np.uint32(32 - r))) ^ x[0]
            x[0] = x[0] + ks[(group + 1) % 3]
            x[1] = x[1] + ks[(group + 2) % 3] + np.uint32(group + 1)
    return x[0], x[1]


@numpy_funcify.register(rv.SplitKey)
def _split_key(op: rv.SplitKey, node: Apply) -> Callable[..., Any]:
    def run(key: Any) -> np.ndarray:
        key = np.asarray(key, np.uint32)
        counts = np.arange(op.n, dtype=np.uint32)
        bits = threefry2x32(key[0], key[1], np.zeros_like(counts), counts)
        return np.stack(bits, axis=-1)

    return run


@numpy_funcify.register(rv.FoldIn)
def _fold_in(op: rv.FoldIn, node: Apply) -> Callable[..., Any]:
    def run(key: Any, data: Any) -> np.ndarray:
        key = np.asarray(key, np.uint32)
        count = np.array([np.asarray(data).astype(np.int64) & 0xFFFFFFFF], np.uint32)
        bits = threefry2x32(key[0], key[1], np.zeros(1, np.uint32), count)
        return np.concatenate(bits)

    return run
