"""Testing helpers for users writing their own Ops: ``verify_grad``.

Example:
    >>> verify_grad(lambda x: rt.sum(rt.sin(x) * x), [np.array([0.1, 0.5, 2.0])])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rewritekit.errors import RewritekitError
from rewritekit.ir import as_var

__all__ = ["GradientMismatch", "verify_grad"]

# (step, relative tolerance, absolute tolerance) of central differences per dtype
_DEFAULTS = {"float64": (1e-6, 1e-5, 1e-7), "float32": (1e-3, 5e-2, 1e-3)}


class GradientMismatch(RewritekitError, AssertionError):
    """A symbolic gradient disagrees with finite differences (``verify_grad``)."""


def verify_grad(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    *,
    eps: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    seed: int = 0,
) -> None:
    """Check the symbolic gradient of ``fn`` at ``inputs`` against central differences.

    ``fn`` takes one Var per input (float arrays; their dtypes and shapes define the Vars)
    and returns a Var of any shape; the checked scalar is ``sum(fn(...) * w)`` with fixed
    random weights ``w``, so every output element counts. The gradient is built with
    ``rk.grad`` and both sides run on the NumPy backend.

    Args:
        fn: builds the graph from input Vars.
        inputs: the point, one float array (or number) per input.
        eps: the finite-difference step (default 1e-6 in float64, 1e-3 in float32).
        rtol, atol: the tolerances (defaults 1e-5 and 1e-7 in float64; 5e-2 and 1e-3 in
            float32).
        seed: seeds the weights ``w``.

    Raises:
        GradientMismatch: names the input, the element, and both values.
    """
    import rewritekit as rk
    import rewritekit.tensor as rt

    arrays = [np.asarray(a, dtype=np.float64) if np.isscalar(a) else np.asarray(a) for a in inputs]
    for position, a in enumerate(arrays):
        if a.dtype.kind != "f":
            raise TypeError(f"verify_grad: input {position} must be a float array, got {a.dtype}")
    variables = [rt.tensor(f"x{i}", shape=a.shape, dtype=a.dtype) for i, a in enumerate(arrays)]
    out = as_var(fn(*variables), context="verify_grad: fn's result")
    if out.type.kind != "f":
        raise TypeError(f"verify_grad: fn must return a float Var, got {out.type}")
    out_shape = rk.function(variables, out, backend="numpy", rules=None)(*arrays).shape
    weights = np.random.default_rng(seed).uniform(0.5, 1.5, size=out_shape).astype(out.dtype)
    cost = rt.sum(out * weights)
    grads = rk.grad(cost, variables, disconnected="zero")
    f_cost = rk.function(variables, cost, backend="numpy", rules=None)
    f_grad = rk.function(variables, grads, backend="numpy", rules=None)
    symbolic = f_grad(*arrays)
    dtype = np.result_type(*arrays).name
    step, r, a_tol = _DEFAULTS.get(dtype, _DEFAULTS["float64"])
    step = eps or step
    r = r if rtol is None else rtol
    a_tol = a_tol if atol is None else atol
    for position, (array, g) in enumerate(zip(arrays, symbolic, strict=True)):
        numeric = _central_differences(f_cost, arrays, position, step)
        g = np.asarray(g, dtype=np.float64)
        bad = ~np.isclose(g, numeric, rtol=r, atol=a_tol)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            raise GradientMismatch(
                f"verify_grad: input {position} (shape {array.shape}), element {index}: the "
                f"symbolic gradient is {g[index]!r} but finite differences give "
                f"{numeric[index]!r} (eps={step}, rtol={r}, atol={a_tol}; "
                f"{int(bad.sum())} of {bad.size} elements differ)"
            )


def _central_differences(
    f: Callable[..., Any], arrays: list[np.ndarray], position: int, step: float
) -> np.ndarray:
    base = arrays[position]
    flat = base.astype(np.float64).ravel()
    out = np.empty_like(flat)
    for i in range(flat.size):
        shifted = []
        for sign in (1.0, -1.0):
            point = flat.copy()
            point[i] += sign * step
            args = list(arrays)
            args[position] = point.reshape(base.shape).astype(base.dtype)
            shifted.append(float(f(*args)))
        out[i] = (shifted[0] - shifted[1]) / (2 * step)
    return out.reshape(base.shape)
