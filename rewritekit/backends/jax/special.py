"""JAX implementations of the special functions (``rewritekit.tensor.special``).

Piecewise functions are written so that ``jax.grad`` never meets a
NaN from the branch a ``where`` does not take: ``softplus`` and ``xlogy`` have their own
derivatives (below), and ``log1mexp`` and ``erfcx`` feed each branch only the inputs that
branch is valid for (the double-``where`` trick). The forward forms are chosen for XLA's
compile time on deep chains as well (``bench/xla_depth.py``; docs/backends.md).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.backends.jax.elemwise import expensive_identity
from rewritekit.tensor import special as sf


@jax.custom_jvp
def _softplus(x: jax.Array) -> jax.Array:
    """``log(1 + exp(x))`` as ``max(x, 0) + log1p(exp(-|x|))``, ended on
    ``expensive_identity``; derivative ``sigmoid(x)``.

    The ``max`` is a path of cheap operations from ``x`` to the result, which XLA's fusion
    copies into every use: a deep chain with its gradient compiled 10.8 s at K = 100
    (``bench/xla_depth.py``, case ``softplus``); ending on a divide cuts the copies (see
    docs/backends.md, "What XLA punishes"). The custom derivative keeps
    ``softplus'(0) = 0.5``, which the formula's ``max`` and ``abs`` would not give under
    ``jax.grad``.
    """
    return expensive_identity(jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x))))


@_softplus.defjvp
def _softplus_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _softplus(x), jax.nn.sigmoid(x) * t


def _xlogy_guarded(x: jax.Array, y: jax.Array) -> jax.Array:
    # x == 0 gives 0 for every y but NaN (as SciPy: 0 * log(0), 0 * log(inf) and
    # 0 * log(-1) would be NaN); elsewhere x * log(y) is right, including its derivative
    # log(y) at x == 0. Only jax.grad reads this form (see _xlogy).
    zero = (x == 0) & ((y == 0) | jnp.isinf(y) | (y < 0))
    safe_y = jnp.where(zero, 1.0, y)
    return jnp.where(zero, jnp.zeros_like(x), x * jnp.log(safe_y))


@jax.custom_jvp
def _xlogy(x: jax.Array, y: jax.Array) -> jax.Array:
    """``x * log(y)``, 0 where ``x == 0`` and ``y`` is not NaN (SciPy's values).

    The ``where`` is applied last, to the product: with the safe ``y`` of
    ``_xlogy_guarded`` feeding ``log`` (a path of cheap operations into the result), a deep
    chain with its gradient compiled 16.2 s at K = 100, this form 2.6 s
    (``bench/xla_depth.py``, case ``xlogy``). ``jax.grad`` differentiates
    ``_xlogy_guarded``, whose unselected branch stays finite.
    """
    return jnp.where((x == 0) & ~jnp.isnan(y), jnp.zeros_like(x), x * jnp.log(y))


@_xlogy.defjvp
def _xlogy_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    return _xlogy(*primals), jax.jvp(_xlogy_guarded, primals, tangents)[1]


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
    float16 and bfloat16 compute in float32, where exp(x**2) does not overflow early.
    The result goes through ``expensive_identity`` (see docs/backends.md, "What XLA
    punishes")."""
    if x.dtype not in (jnp.float32, jnp.float64):
        return _erfcx(x.astype(jnp.float32)).astype(x.dtype)
    switch = _ERFCX_SWITCH[x.dtype.name]
    below = x < switch
    small = jnp.where(below, x, switch)
    large = jnp.where(below, switch, x)
    value = jnp.where(below, jnp.exp(small * small) * jsp.erfc(small), _erfcx_tail(large))
    # XLA expands erfc into polynomials of cheap ops; ending on a divide keeps its fusion
    # from copying them into every use (a deep chain compiled 35 s at K = 25 without)
    return expensive_identity(value)


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
