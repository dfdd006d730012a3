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
