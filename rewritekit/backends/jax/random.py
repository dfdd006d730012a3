"""JAX implementations of ``rewritekit.tensor.random``: ``jax.random`` draws.

A key is a raw ``uint32[2]`` key; ``jax.random.split`` gives the next key and this draw's
key. The size must be static when JAX traces the graph (a constant, or computed from
static shapes such as ``x.shape``); a size that depends on input values is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rewritekit.backends.common.arrays import batch_shape
from rewritekit.backends.jax import jax_funcify
from rewritekit.errors import ShapeError
from rewritekit.ir import Apply
from rewritekit.tensor import random as rv

jr = jax.random


def _categorical(k: Any, s: tuple, dt: Any, p: Any) -> Any:
    return jr.categorical(k, jnp.log(p), axis=-1, shape=s)


def _multivariate_normal(k: Any, s: tuple, dt: Any, mean: Any, cov: Any) -> Any:
    chol = jnp.linalg.cholesky(cov)
    z = jr.normal(k, s + mean.shape[-1:], dt)
    return mean + jnp.einsum("...ij,...j->...i", chol, z)


def _dirichlet(k: Any, s: tuple, dt: Any, alpha: Any) -> Any:
    return jr.dirichlet(k, alpha, s, dt)


# (key, batch shape, float dtype, *params) -> draws of that batch shape (plus core axes)
SAMPLERS: dict[type[rv.RandomVariable], Callable[..., Any]] = {
    rv.NormalRV: lambda k, s, dt, loc, scale: loc + scale * jr.normal(k, s, dt),
    rv.HalfNormalRV: lambda k, s, dt, scale: scale * jnp.abs(jr.normal(k, s, dt)),
    rv.CauchyRV: lambda k, s, dt, loc, scale: loc + scale * jr.cauchy(k, s, dt),
    rv.HalfCauchyRV: lambda k, s, dt, scale: scale * jnp.abs(jr.cauchy(k, s, dt)),
    rv.ExponentialRV: lambda k, s, dt, scale: scale * jr.exponential(k, s, dt),
    rv.GammaRV: lambda k, s, dt, alpha, scale: scale * jr.gamma(k, alpha, s, dt),
    rv.InverseGammaRV: lambda k, s, dt, alpha, scale: scale / jr.gamma(k, alpha, s, dt),
    rv.BetaRV: lambda k, s, dt, a, b: jr.beta(k, a, b, s, dt),
    rv.UniformRV: lambda k, s, dt, low, high: low + (high - low) * jr.uniform(k, s, dt),
    rv.StudentTRV: lambda k, s, dt, df, loc, scale: loc + scale * jr.t(k, df, s, dt),
    rv.LogNormalRV: lambda k, s, dt, loc, scale: jnp.exp(loc + scale * jr.normal(k, s, dt)),
    rv.BernoulliRV: lambda k, s, dt, p: jr.uniform(k, s, dt) < p,
    rv.BernoulliLogitRV: lambda k, s, dt, logit: jr.uniform(k, s, dt) < jax.nn.sigmoid(logit),
    rv.PoissonRV: lambda k, s, dt, lam: jr.poisson(k, lam, s),
    rv.BinomialRV: lambda k, s, dt, n, p: jr.binomial(k, n, p, s, dt),
    rv.CategoricalRV: _categorical,
    rv.MultivariateNormalRV: _multivariate_normal,
    rv.DirichletRV: _dirichlet,
}


def _batch_shape(op: rv.RandomVariable, size: Any, params: tuple[Any, ...]) -> tuple:
    if op.size is not None and not isinstance(size, (np.ndarray, np.generic)):
        raise ShapeError(
            f"{op.name}: the size of a draw must be known when JAX traces the graph (a "
            "constant, or computed from static shapes); this one depends on input values"
        )
    return batch_shape(op, size, params)


def _implement(op: rv.RandomVariable, node: Apply) -> Callable[..., Any]:
    sample = SAMPLERS[type(op)]
    dtype = np.dtype(op.dtype)
    # the float dtype the sampler computes in: the draw's, or the parameters' for ints
    work = (
        dtype if op.kind == "f" else np.result_type(*(i.dtype for i in node.inputs[2:]), np.float32)
    )

    def run(key: Any, size: Any, *params: Any) -> tuple[Any, Any]:
        keys = jr.split(jnp.asarray(key, dtype=jnp.uint32))
        params = tuple(jnp.asarray(p) for p in params)
        draw = sample(keys[1], _batch_shape(op, size, params), work, *params)
        return keys[0], jnp.asarray(draw).astype(dtype)

    return run


for _cls in SAMPLERS:
    jax_funcify.register(_cls, _implement)


@jax_funcify.register(rv.SplitKey)
def _split_key(op: rv.SplitKey, node: Apply) -> Callable[..., Any]:
    return lambda key: jax.random.split(jnp.asarray(key, dtype=jnp.uint32), op.n)


@jax_funcify.register(rv.FoldIn)
def _fold_in(op: rv.FoldIn, node: Apply) -> Callable[..., Any]:
    # the data's low 32 bits, as uint32 (XLA's conversion keeps them; so does NumPy's side)
    def run(key: Any, data: Any) -> Any:
        wrapped = jnp.asarray(data).astype(jnp.uint32)
        return jax.random.fold_in(jnp.asarray(key, dtype=jnp.uint32), wrapped)

    return run
