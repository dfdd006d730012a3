"""The benchmark workloads W1-W6, each built three ways: rewritekit, PyTensor and
hand-written ``jax.numpy``.

The definitions are fixed (issue 7) so results compare across versions:

- W1 elemwise chain: ``x`` a float64 vector of 1000; ``y = x``; N times
  ``y = 0.5*log(1 + exp(y)) + y/2 - exp(-y*y)*0.1``; output ``sum(y)``.
- W2 wide graph: N float64 scalars ``a_i``; output ``sum_i (a_i*a_i + sin(a_i))``, built as
  a Python-level sum.
- W3 MLP loss and gradient: X (256x784), one-hot y (256x10), W1 (784x512), b1, W2
  (512x512), b2, W3 (512x10), b3; tanh; softmax cross-entropy written with exp/log/sum;
  outputs the loss and its gradients with respect to the six parameters.
- W4 repeated subexpression: ``exp(x)*sin(x)`` written 200 times in one sum (x a vector of
  1000); output its sum.
- W5 gradient-heavy: ``cost = sum_i log(1 + exp(x*w[i] - i)) + sigmoid(x*i)**2`` for i in
  range(200); outputs the cost and ``grad(cost, [x, w])``.
- W6 GARCH(1,1) with scan: ``y`` a float64 series of length N (T) simulated from a GARCH(1,1)
  process with a fixed seed; ``s_0 = std(y)``, ``s_t = sqrt(a0 + a1*(y_(t-1) - mu)**2 +
  b1*s_(t-1)**2)`` for t = 1..T-1, one loop (``rk.scan``, PyTensor's ``scan``,
  ``jax.lax.scan``) carrying ``s`` over the pairs ``(y[:-1], y[1:])``; outputs the
  log-likelihood ``sum_t log N(y_t; mu, s_t)`` and its gradient with respect to
  ``(mu, a0, a1, b1)``. ``reference`` computes the same in NumPy (forward-mode derivatives
  by hand), and the bench checks every system against it before timing.

Each builder imports its own library, so a worker process loads only the system it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Workload:
    """One workload: its sizes and its three builders.

    ``rewritekit(n)`` and ``pytensor(n)`` return ``(inputs, outputs)`` symbolic lists;
    ``jax(n)`` returns a function of the arrays returning the list of outputs; ``data(n)``
    returns the input arrays (seeded). ``reference(data)``, where given, returns the expected
    outputs, computed in NumPy; every system must match it (rtol 1e-8) before it is timed.
    """

    name: str
    title: str
    sizes: tuple[int, ...]
    rewritekit: Callable[[int], tuple[list[Any], list[Any]]]
    pytensor: Callable[[int], tuple[list[Any], list[Any]]]
    jax: Callable[[int], Callable[..., Any]]
    data: Callable[[int], list[np.ndarray]]
    reference: Callable[[list[np.ndarray]], list[np.ndarray]] | None = None


def _rng() -> np.random.Generator:
    return np.random.default_rng(20261123)


def w1_step(y: Any, log: Any, exp: Any) -> Any:
    """One step of W1 (``log``/``exp`` from the system's namespace)."""
    return 0.5 * log(1 + exp(y)) + y / 2 - exp(-y * y) * 0.1


# --- W1 -------------------------------------------------------------------------------


def _w1_rk(n: int) -> tuple[list[Any], list[Any]]:
    import rewritekit.tensor as rt

    x = rt.vector("x", shape=(1000,))
    y = x
    for _ in range(n):
        y = w1_step(y, rt.log, rt.exp)
    return [x], [rt.sum(y)]


def _w1_pt(n: int) -> tuple[list[Any], list[Any]]:
    import pytensor.tensor as pt

    x = pt.dvector("x", shape=(1000,))
    y = x
    for _ in range(n):
        y = w1_step(y, pt.log, pt.exp)
    return [x], [pt.sum(y)]


def _w1_jax(n: int) -> Callable[..., Any]:
    import jax.numpy as jnp

    def f(x: Any) -> list[Any]:
        y = x
        for _ in range(n):
            y = w1_step(y, jnp.log, jnp.exp)
        return [jnp.sum(y)]

    return f


def _w1_data(n: int) -> list[np.ndarray]:
    return [_rng().normal(size=1000)]


# --- W2 -------------------------------------------------------------------------------


def _w2_rk(n: int) -> tuple[list[Any], list[Any]]:
    import rewritekit.tensor as rt

    a = [rt.scalar(f"a{i}") for i in range(n)]
    total = a[0] * a[0] + rt.sin(a[0])
    for v in a[1:]:
        total = total + (v * v + rt.sin(v))
    return a, [total]


def _w2_pt(n: int) -> tuple[list[Any], list[Any]]:
    import pytensor.tensor as pt

    a = [pt.dscalar(f"a{i}") for i in range(n)]
    total = a[0] * a[0] + pt.sin(a[0])
    for v in a[1:]:
        total = total + (v * v + pt.sin(v))
    return a, [total]


def _w2_jax(n: int) -> Callable[..., Any]:
    import jax.numpy as jnp

    def f(*a: Any) -> list[Any]:
        total = a[0] * a[0] + jnp.sin(a[0])
        for v in a[1:]:
            total = total + (v * v + jnp.sin(v))
        return [total]

    return f


def _w2_data(n: int) -> list[np.ndarray]:
    return [np.asarray(v) for v in _rng().normal(size=n)]


# --- W3 -------------------------------------------------------------------------------

_SIZES = (784, 512, 512, 10)


def _mlp_loss(X: Any, Y: Any, params: list[Any], ops: Any) -> Any:
    tanh, exp, log, total, mean = ops
    h = X
    for i in range(3):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < 2:
            h = tanh(h)
    log_p = h - log(total(exp(h), axis=1, keepdims=True))
    return -mean(total(Y * log_p, axis=1))


def _w3_rk(n: int) -> tuple[list[Any], list[Any]]:
    import rewritekit as rk
    import rewritekit.tensor as rt

    X, Y = rt.matrix("X", shape=(256, 784)), rt.matrix("Y", shape=(256, 10))
    params = []
    for i in range(3):
        params.append(rt.matrix(f"W{i + 1}", shape=(_SIZES[i], _SIZES[i + 1])))
        params.append(rt.vector(f"b{i + 1}", shape=(_SIZES[i + 1],)))
    loss = _mlp_loss(X, Y, params, (rt.tanh, rt.exp, rt.log, rt.sum, rt.mean))
    return [X, Y, *params], [loss, *rk.grad(loss, params)]


def _w3_pt(n: int) -> tuple[list[Any], list[Any]]:
    import pytensor
    import pytensor.tensor as pt

    X, Y = pt.dmatrix("X", shape=(256, 784)), pt.dmatrix("Y", shape=(256, 10))
    params = []
    for i in range(3):
        params.append(pt.dmatrix(f"W{i + 1}", shape=(_SIZES[i], _SIZES[i + 1])))
        params.append(pt.dvector(f"b{i + 1}", shape=(_SIZES[i + 1],)))
    loss = _mlp_loss(X, Y, params, (pt.tanh, pt.exp, pt.log, pt.sum, pt.mean))
    return [X, Y, *params], [loss, *pytensor.grad(loss, params)]


def _w3_jax(n: int) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def loss(params: list[Any], X: Any, Y: Any) -> Any:
        return _mlp_loss(X, Y, params, (jnp.tanh, jnp.exp, jnp.log, jnp.sum, jnp.mean))

    value_and_grad = jax.value_and_grad(loss)

    def f(X: Any, Y: Any, *params: Any) -> list[Any]:
        value, grads = value_and_grad(list(params), X, Y)
        return [value, *grads]

    return f


def _w3_data(n: int) -> list[np.ndarray]:
    rng = _rng()
    X = rng.normal(size=(256, 784))
    Y = np.eye(10)[rng.integers(0, 10, size=256)]
    params = []
    for i in range(3):
        params.append(rng.normal(size=(_SIZES[i], _SIZES[i + 1])) / np.sqrt(_SIZES[i]))
        params.append(np.zeros(_SIZES[i + 1]))
    return [X, Y, *params]


# --- W4 -------------------------------------------------------------------------------

_W4_COPIES = 200


def _w4_rk(n: int) -> tuple[list[Any], list[Any]]:
    import rewritekit.tensor as rt

    x = rt.vector("x", shape=(1000,))
    total = rt.exp(x) * rt.sin(x)
    for _ in range(_W4_COPIES - 1):
        total = total + rt.exp(x) * rt.sin(x)
    return [x], [rt.sum(total)]


def _w4_pt(n: int) -> tuple[list[Any], list[Any]]:
    import pytensor.tensor as pt

    x = pt.dvector("x", shape=(1000,))
    total = pt.exp(x) * pt.sin(x)
    for _ in range(_W4_COPIES - 1):
        total = total + pt.exp(x) * pt.sin(x)
    return [x], [pt.sum(total)]


def _w4_jax(n: int) -> Callable[..., Any]:
    import jax.numpy as jnp

    def f(x: Any) -> list[Any]:
        total = jnp.exp(x) * jnp.sin(x)
        for _ in range(_W4_COPIES - 1):
            total = total + jnp.exp(x) * jnp.sin(x)
        return [jnp.sum(total)]

    return f


# --- W5 -------------------------------------------------------------------------------

_W5_TERMS = 200


def w5_cost(x: Any, w: Any, ops: Any, terms: int = _W5_TERMS) -> Any:
    """W5's cost over ``terms`` terms (``ops``: the system's log, exp and sigmoid)."""
    log, exp, sigmoid = ops
    cost = None
    for i in range(terms):
        term = log(1 + exp(x * w[i] - i)) + sigmoid(x * i) ** 2
        cost = term if cost is None else cost + term
    return cost


def _w5_rk(n: int) -> tuple[list[Any], list[Any]]:
    import rewritekit as rk
    import rewritekit.tensor as rt

    x, w = rt.scalar("x"), rt.vector("w", shape=(_W5_TERMS,))
    cost = w5_cost(x, w, (rt.log, rt.exp, rt.sigmoid))
    return [x, w], [cost, *rk.grad(cost, [x, w])]


def _w5_pt(n: int) -> tuple[list[Any], list[Any]]:
    import pytensor
    import pytensor.tensor as pt

    x, w = pt.dscalar("x"), pt.dvector("w", shape=(_W5_TERMS,))
    cost = w5_cost(x, w, (pt.log, pt.exp, pt.sigmoid))
    return [x, w], [cost, *pytensor.grad(cost, [x, w])]


def _w5_jax(n: int) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def cost(x: Any, w: Any) -> Any:
        return w5_cost(x, w, (jnp.log, jnp.exp, jax.nn.sigmoid))

    value_and_grad = jax.value_and_grad(cost, argnums=(0, 1))

    def f(x: Any, w: Any) -> list[Any]:
        value, (gx, gw) = value_and_grad(x, w)
        return [value, gx, gw]

    return f


def _w5_data(n: int) -> list[np.ndarray]:
    rng = _rng()
    return [np.asarray(0.3), rng.normal(size=_W5_TERMS)]


# --- W6 -------------------------------------------------------------------------------

W6_TRUE = (0.1, 0.05, 0.1, 0.85)  # (mu, a0, a1, b1) the series is simulated from
W6_AT = (0.05, 0.08, 0.15, 0.8)  # where the log-likelihood and gradient are evaluated
_HALF_LOG_2PI = 0.5 * float(np.log(2 * np.pi))


def garch_step(s: Any, pair: Any, params: Any, ops: Any) -> tuple[Any, Any]:
    """One GARCH(1,1) step: the new sd from the previous one and ``y_(t-1)``, and the
    log-density of ``y_t`` (``ops``: the system's sqrt and log)."""
    sqrt, log = ops
    mu, a0, a1, b1 = params
    y_prev, y_now = pair
    s = sqrt(a0 + a1 * (y_prev - mu) ** 2 + b1 * s**2)
    return s, -0.5 * ((y_now - mu) / s) ** 2 - log(s) - _HALF_LOG_2PI


def _w6_rk(n: int) -> tuple[list[Any], list[Any]]:
    import rewritekit as rk
    import rewritekit.tensor as rt

    y = rt.vector("y", shape=(n,))
    params = [rt.scalar(name) for name in ("mu", "a0", "a1", "b1")]

    def step(s: Any, pair: Any) -> tuple[Any, Any]:
        return garch_step(s, pair, params, (rt.sqrt, rt.log))

    _, terms = rk.scan(step, rt.std(y), (y[:-1], y[1:]))
    loglik = rt.sum(terms)
    return [y, *params], [loglik, *rk.grad(loglik, params)]


def _w6_pt(n: int) -> tuple[list[Any], list[Any]]:
    import pytensor
    import pytensor.tensor as pt

    y = pt.dvector("y", shape=(n,))
    params = [pt.dscalar(name) for name in ("mu", "a0", "a1", "b1")]

    def step(y_prev: Any, y_now: Any, s: Any, *params: Any) -> tuple[Any, Any]:
        return garch_step(s, (y_prev, y_now), params, (pt.sqrt, pt.log))

    _, terms = pytensor.scan(
        step,
        sequences=[y[:-1], y[1:]],
        outputs_info=[pt.std(y), None],
        non_sequences=params,
        return_updates=False,
    )
    loglik = pt.sum(terms)
    return [y, *params], [loglik, *pytensor.grad(loglik, params)]


def _w6_jax(n: int) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def loglik(y: Any, *params: Any) -> Any:
        def step(s: Any, pair: Any) -> tuple[Any, Any]:
            return garch_step(s, pair, params, (jnp.sqrt, jnp.log))

        _, terms = jax.lax.scan(step, jnp.std(y), (y[:-1], y[1:]))
        return jnp.sum(terms)

    value_and_grad = jax.value_and_grad(loglik, argnums=(1, 2, 3, 4))

    def f(y: Any, mu: Any, a0: Any, a1: Any, b1: Any) -> list[Any]:
        value, grads = value_and_grad(y, mu, a0, a1, b1)
        return [value, *grads]

    return f


def _w6_data(n: int) -> list[np.ndarray]:
    mu, a0, a1, b1 = W6_TRUE
    eps = _rng().normal(size=n)
    y = np.empty(n)
    var, prev = a0 / (1 - a1 - b1), mu  # start at the stationary variance
    for t in range(n):
        var = a0 + a1 * (prev - mu) ** 2 + b1 * var
        y[t] = prev = mu + np.sqrt(var) * eps[t]
    return [y, *(np.asarray(v) for v in W6_AT)]


def _w6_reference(data: list[np.ndarray]) -> list[np.ndarray]:
    """The log-likelihood and its gradient in NumPy: the recursion run forward with the
    derivatives of ``s_t`` with respect to ``(mu, a0, a1, b1)`` carried along."""
    y = data[0]
    mu, a0, a1, b1 = (float(v) for v in data[1:])
    s, ds = float(np.std(y)), np.zeros(4)
    total, grad = 0.0, np.zeros(4)
    for y_prev, y_now in zip(y[:-1].tolist(), y[1:].tolist(), strict=True):
        e = y_prev - mu
        dv = 2 * b1 * s * ds + np.array([-2 * a1 * e, 1.0, e * e, s * s])
        s = float(np.sqrt(a0 + a1 * e * e + b1 * s * s))
        ds = dv / (2 * s)
        z = (y_now - mu) / s
        total += -0.5 * z * z - np.log(s) - _HALF_LOG_2PI
        grad += (z * z - 1) / s * ds
        grad[0] += z / s
    return [np.asarray(total), *grad]


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload("W1", "elemwise chain", (10, 100, 1000, 3000), _w1_rk, _w1_pt, _w1_jax, _w1_data),
        Workload("W2", "wide graph", (10, 100, 1000), _w2_rk, _w2_pt, _w2_jax, _w2_data),
        Workload("W3", "MLP loss and gradient", (1,), _w3_rk, _w3_pt, _w3_jax, _w3_data),
        Workload("W4", "repeated subexpression", (1,), _w4_rk, _w4_pt, _w4_jax, _w1_data),
        Workload("W5", "gradient-heavy", (1,), _w5_rk, _w5_pt, _w5_jax, _w5_data),
        Workload(
            "W6",
            "GARCH(1,1) log-likelihood and gradient, scan",
            (100, 1000, 10000),
            _w6_rk,
            _w6_pt,
            _w6_jax,
            _w6_data,
            _w6_reference,
        ),
    ]
}
