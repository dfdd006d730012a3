"""Logistic regression, MAP estimate: a model written with ``rewritekit.random``, its
log-density from ``rewritekit.logprob`` compiled to JAX with its gradient, maximized with
optax's L-BFGS, and checked against an exact Newton solve written in NumPy.

Run: ``.venv/bin/python examples/logistic_map.py [--rows 5000] [--cols 20] [--seed 0]``
(needs the ``examples`` extra: optax).

The model, with a standard normal prior on the weights (so the MAP estimate is the
L2-regularized maximum-likelihood one, penalty ``|w|^2 / 2``)::

    w ~ Normal(0, 1) x cols
    y ~ Bernoulli(logit = X @ w)    (observed; X given)

The synthetic data are drawn from the model itself: ``X`` standard normal (NumPy, fixed
seed), then the true weights and ``y`` by compiling the model's forward sampler.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.ir import Var


@dataclass(frozen=True)
class Model:
    """The model's graph: inputs ``key`` and ``X``, random variables ``w`` and ``y``."""

    key: Var
    X: Var
    w: Var
    y: Var


def model(cols: int) -> Model:
    """``w ~ Normal(0, 1)`` (``cols`` weights), ``y ~ Bernoulli(logit=X @ w)``.

    Example:
        >>> m = model(3)
        >>> m.y.dtype
        'int64'
    """
    key, X = rr.key("key"), rt.tensor("X", shape=(None, cols))
    k, w = rr.normal(key, 0.0, 1.0, size=(cols,))
    k, y = rr.bernoulli(k, logit=X @ w)
    return Model(key, X, w, y)


def synthetic_data(m: Model, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, w_true)``: X from NumPy, then one forward draw of the model for w and y."""
    X = np.random.default_rng(seed).standard_normal((rows, m.X.type.shape[1]))
    w_true, y = rk.function([m.key, m.X], [m.w, m.y])(rr.seed(seed), X)
    return X, np.asarray(y), np.asarray(w_true)


def log_posterior(m: Model, y: np.ndarray) -> rk.CompiledFunction:
    """``(w, X) -> [logp, d logp / dw]``: the joint log-density given the observed ``y``
    (JAX backend). ``X`` stays an input, so the compiled function does not embed the data.

    Example:
        >>> m = model(2)
        >>> f = log_posterior(m, np.array([0, 1, 1, 0]))
        >>> logp, grad = f(np.zeros(2), np.ones((4, 2)))
    """
    w_v = rt.tensor("w", shape=m.w.type.shape)
    logp = rl.joint_logprob({m.w: w_v, m.y: y})
    return rk.function([w_v, m.X], [logp, rk.grad(logp, w_v)])


def jax_objective(f: rk.CompiledFunction, X: np.ndarray) -> Any:
    """``w -> -logp`` in JAX, differentiated by rewritekit's gradient (a custom VJP)."""

    def fn(w: jax.Array) -> Any:
        return f.jax_fn(w, X)

    @jax.custom_vjp
    def objective(w: jax.Array) -> jax.Array:
        return -fn(w)[0]

    def forward(w: jax.Array) -> tuple[jax.Array, jax.Array]:
        value, grad = fn(w)
        return -value, -grad

    def backward(grad: jax.Array, cotangent: jax.Array) -> tuple[jax.Array]:
        return (cotangent * grad,)

    objective.defvjp(forward, backward)
    return objective


def lbfgs(objective: Any, w0: np.ndarray, max_steps: int = 500, tol: float = 1e-9) -> Any:
    """Minimize ``objective`` with optax's L-BFGS (zoom line search) until the gradient's
    norm is below ``tol``; the loop is one ``jax.lax.while_loop`` under ``jax.jit``.

    Returns:
        ``(w, steps)``.
    """
    import optax
    import optax.tree_utils as otu

    optimizer = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(objective)

    def step(carry: tuple[Any, Any]) -> tuple[Any, Any]:
        w, state = carry
        value, grad = value_and_grad(w, state=state)
        updates, state = optimizer.update(
            grad, state, w, value=value, grad=grad, value_fn=objective
        )
        return optax.apply_updates(w, updates), state

    def going(carry: tuple[Any, Any]) -> jax.Array:
        count = otu.tree_get(carry[1], "count")
        norm = otu.tree_norm(otu.tree_get(carry[1], "grad"))
        return (count == 0) | ((count < max_steps) & (norm >= tol))

    @jax.jit
    def solve(w0: jax.Array) -> tuple[jax.Array, jax.Array]:
        w, state = jax.lax.while_loop(going, step, (w0, optimizer.init(w0)))
        return w, otu.tree_get(state, "count")

    return solve(jnp.asarray(w0))


def newton(X: np.ndarray, y: np.ndarray, tol: float = 1e-12, max_steps: int = 50) -> np.ndarray:
    """The exact MAP estimate by Newton's method, gradient and Hessian written in NumPy.

    ``log p(w) = sum(y * z - log(1 + exp(z))) - |w|^2 / 2 + const`` with ``z = X @ w``;
    its gradient is ``X.T @ (y - sigmoid(z)) - w`` and its Hessian
    ``-X.T @ diag(sigmoid'(z)) @ X - I`` (negative definite: one maximum, and Newton's
    steps converge to it quadratically).
    """
    w = np.zeros(X.shape[1])
    for _ in range(max_steps):
        p = 0.5 * (1.0 + np.tanh(0.5 * (X @ w)))  # sigmoid, without overflow in exp
        grad = X.T @ (y - p) - w
        hessian = -(X.T * (p * (1.0 - p))) @ X - np.eye(len(w))
        delta = np.linalg.solve(hessian, grad)
        w = w - delta
        if np.max(np.abs(delta)) < tol:
            return w
    raise RuntimeError(f"newton: no convergence in {max_steps} steps (last step {delta})")


def numpy_logp(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """The log-density in NumPy, normalizing constant included (a check on ours)."""
    z = X @ w
    return float(
        np.sum(y * z - np.logaddexp(0.0, z)) - 0.5 * w @ w - 0.5 * len(w) * np.log(2 * np.pi)
    )


def main(rows: int = 5000, cols: int = 20, seed: int = 0) -> dict[str, Any]:
    """Fit the MAP estimate both ways and print how far apart they are.

    Returns:
        ``{"w_optax", "w_newton", "w_true", "max_abs_diff", "logp_optax", "logp_newton",
        "steps"}``.
    """
    m = model(cols)
    X, y, w_true = synthetic_data(m, rows, seed)
    f = log_posterior(m, y)
    with jax.enable_x64(True):  # f.jax_fn follows the caller's setting: the model is float64
        w_optax, steps = lbfgs(jax_objective(f, X), np.zeros(cols))
    w_optax = np.asarray(w_optax)
    w_newton = newton(X, y)
    result = {
        "w_optax": w_optax,
        "w_newton": w_newton,
        "w_true": w_true,
        "max_abs_diff": float(np.max(np.abs(w_optax - w_newton))),
        "logp_optax": float(f(w_optax, X)[0]),
        "logp_newton": float(f(w_newton, X)[0]),
        "logp_newton_numpy": numpy_logp(X, y, w_newton),
        "steps": int(steps),
    }
    print(f"logistic regression MAP, {rows} rows x {cols} predictors, {y.mean():.0%} ones")
    print(f"optax L-BFGS: {result['steps']} steps, logp {result['logp_optax']:.10f}")
    print(f"NumPy Newton:            logp {result['logp_newton']:.10f}")
    print(f"max |w_optax - w_newton| = {result['max_abs_diff']:.2e}")
    print(f"max |w_newton - w_true|  = {np.max(np.abs(w_newton - w_true)):.3f}")
    return result


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--cols", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(args.rows, args.cols, args.seed)


if __name__ == "__main__":
    _cli()
