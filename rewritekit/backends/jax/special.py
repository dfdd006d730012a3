"""JAX implementations of the special functions (``rewritekit.tensor.special``).

Piecewise functions are written so that ``jax.grad`` never meets a
NaN from the branch a ``where`` does not take: ``softplus`` has its own derivative (below),
and ``log1mexp``, ``xlogy`` and ``erfcx`` feed each branch only the inputs that branch is
valid for (the double-``where`` trick).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.tensor import special as sf


@jax.custom_jvp
def _softplus(x: jax.Array) -> jax.Array:
    """``log(1 + exp(x))`` as ``max(x, 0) + log1p(exp(-|x|))``, with derivative
    ``sigmoid(x)``.

    Six operations where ``jnp.logaddexp(0, x)`` (what ``jax.nn.softplus`` is) lowers to
    about ten, with a NaN test and a select. The custom derivative keeps
    ``softplus'(0) = 0.5``, which the formula's ``max`` and ``abs`` would not give under
    ``jax.grad``.
    """
    return jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x)))


@_softplus.defjvp
def _softplus_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _softplus(x), jax.nn.sigmoid(x) * t


def _xlogy(x: jax.Array, y: jax.Array) -> jax.Array:
    # x == 0 gives 0 for every y but NaN (as SciPy: 0 * log(0), 0 * log(inf) and
    # 0 * log(-1) would be NaN); elsewhere x * log(y) is right, including its derivative
    # log(y) at x == 0.
    zero = (x == 0) & ((y == 0) | jnp.isinf(y) | (y < 0))
    safe_y = jnp.where(zero, 1.0, y)
    return jnp.where(zero, jnp.zeros_like(x), x * jnp.log(safe_y))


#: Where erfcx switches from exp(x**2) * erfc(x) to its asymptotic series, by dtype: erfc
#: underflows near 26.5 in float64 and 9.2 in float32, and the series' terms are exact to
#: rounding above the switch (the first term left out is 2e-19 of the sum at 10, 2e-10 at 5).
_ERFCX_SWITCH = {"float32": 5.0, "float64": 10.0}
_ERFCX_TERMS = 14
_INV_SQRT_PI = 1 / math.sqrt(math.pi)  # a Python float: weak, keeps float32 float32


def _erfcx_tail(x: jax.Array) -> jax.Array:
    """erfcx(x) for large x: 1 / (x sqrt(pi)) * sum_n (-1)**n (2n-1)!! / (2 x**2)**n,
    nested as 1 - u (1 - 3u (1 - 5u (1 - ...))) with u = 1 / (2 x**2)."""
    u = 0.5 / x / x  # not 0.5 / (x * x): x * x overflows, and its derivative with it
    nested = 1 - (2 * _ERFCX_TERMS - 1) * u
    for n in range(_ERFCX_TERMS - 1, 0, -1):
        nested = 1 - (2 * n - 1) * u * nested
    return _INV_SQRT_PI / x * nested


def _erfcx(x: jax.Array) -> jax.Array:
    """exp(x**2) * erfc(x) below the switch (XLA's erfc computes exp(-x*x) from the same
    rounded square, so the product keeps full precision), the asymptotic series above;
    float16 and bfloat16 compute in float32, where exp(x**2) does not overflow early."""
    if x.dtype not in (jnp.float32, jnp.float64):
        return _erfcx(x.astype(jnp.float32)).astype(x.dtype)
    switch = _ERFCX_SWITCH[x.dtype.name]
    below = x < switch
    small = jnp.where(below, x, switch)
    large = jnp.where(below, switch, x)
    return jnp.where(below, jnp.exp(small * small) * jsp.erfc(small), _erfcx_tail(large))


# JAX's own forms of the functions the NumPy backend takes from SciPy (see above)
TABLE = elementwise.special_functions(jnp, jsp) | {
    sf.Erfcx: _erfcx,
    sf.Sigmoid: jax.nn.sigmoid,
    sf.Softplus: _softplus,
    sf.LogSigmoid: lambda x: -_softplus(-x),
    sf.Logit: lambda p: jnp.log(p) - jnp.log1p(-p),
    sf.Xlogy: _xlogy,
}
register(jax_funcify, elementwise.special(jnp, jsp, TABLE))
