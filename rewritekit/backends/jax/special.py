"""JAX implementations of the special functions (``rewritekit.tensor.special``).

Piecewise functions are written so that ``jax.grad`` never meets a
NaN from the branch a ``where`` does not take: ``softplus`` has its own derivative (below),
and ``log1mexp`` and ``xlogy`` feed each branch only the inputs that branch is valid for
(the double-``where`` trick).
"""

from __future__ import annotations

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


# JAX's own forms of the functions the NumPy backend takes from SciPy (see above)
TABLE = elementwise.special_functions(jnp, jsp) | {
    sf.Sigmoid: jax.nn.sigmoid,
    sf.Softplus: _softplus,
    sf.LogSigmoid: lambda x: -_softplus(-x),
    sf.Logit: lambda p: jnp.log(p) - jnp.log1p(-p),
    sf.Xlogy: _xlogy,
}
register(jax_funcify, elementwise.special(jnp, jsp, TABLE))
