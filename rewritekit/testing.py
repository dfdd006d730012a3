"""Testing helpers for users writing their own Ops and rules: ``verify_grad`` checks a
gradient against finite differences; ``check_rule`` checks a rewrite rule numerically.

Example:
    >>> verify_grad(lambda x: rt.sum(rt.sin(x) * x), [np.array([0.1, 0.5, 2.0])])
    >>> check_rule(rule(rt.log(1 + a), rt.log1p(a), name="log1p"), domain={"a": "positive"})
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rewritekit.errors import RewritekitError
from rewritekit.ir import as_var

__all__ = [
    "SAMPLERS",
    "GradientMismatch",
    "RuleMismatch",
    "check_rule",
    "draw_inputs",
    "example_graph",
    "rule_tolerance",
    "verify_grad",
]

# (step, relative tolerance, absolute tolerance) of central differences per dtype
_DEFAULTS = {"float64": (1e-6, 1e-5, 1e-7), "float32": (1e-3, 5e-2, 1e-3)}


class GradientMismatch(RewritekitError, AssertionError):
    """A symbolic gradient disagrees with finite differences (``verify_grad``)."""


class RuleMismatch(RewritekitError, AssertionError):
    """A rule does not fire on its example, changes its type, or changes its value
    (``check_rule``)."""


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


# --- check_rule ------------------------------------------------------------------------


Sampler = Callable[[np.random.Generator, tuple[int, ...], str], np.ndarray]


def _spd(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"the 'spd' sampler needs square matrices, got shape {shape}")
    a = rng.normal(size=shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _nonzero(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.25, 4.0, size=shape)


#: Named input domains for ``check_rule`` and rules' ``domain=``: ``(rng, shape, dtype)``
#: to values (cast to the input's dtype afterwards).
SAMPLERS: dict[str, Sampler] = {
    "real": lambda rng, shape, dtype: rng.normal(0.0, 2.0, size=shape),
    "positive": lambda rng, shape, dtype: rng.uniform(0.1, 4.0, size=shape),
    "negative": lambda rng, shape, dtype: -rng.uniform(0.1, 4.0, size=shape),
    "nonzero": _nonzero,
    "unit": lambda rng, shape, dtype: rng.uniform(0.05, 0.95, size=shape),
    "symmetric_unit": lambda rng, shape, dtype: rng.uniform(-0.95, 0.95, size=shape),
    "greater_than_one": lambda rng, shape, dtype: rng.uniform(1.05, 5.0, size=shape),
    "small": lambda rng, shape, dtype: rng.normal(0.0, 0.25, size=shape),
    "int": lambda rng, shape, dtype: rng.integers(-5, 6, size=shape),
    "natural": lambda rng, shape, dtype: rng.integers(1, 6, size=shape),
    "bool": lambda rng, shape, dtype: rng.random(size=shape) < 0.5,
    "spd": _spd,
}

# (rtol, atol) by dtype for comparing a rule's two sides
_RULE_TOLERANCES = {
    "float64": (1e-7, 1e-10),
    "complex128": (1e-7, 1e-10),
    "float32": (1e-4, 1e-5),
    "complex64": (1e-4, 1e-5),
    "float16": (1e-2, 1e-3),
}


def rule_tolerance(dtype: str) -> tuple[float, float]:
    """The (rtol, atol) with which ``check_rule`` compares values of ``dtype`` (exact for
    integers and bools)."""
    return _RULE_TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))


def check_rule(
    rule: Any,
    *,
    seed: int = 0,
    example: Callable[[], Any] | None = None,
    domain: Any = None,
    length: int = 3,
    rtol: float | None = None,
    atol: float | None = None,
) -> Any:
    """Check a rewrite rule numerically: it fires on its example, keeps the example's type,
    and both sides agree on random inputs drawn inside the rule's domain.

    The example is ``example``, else the rule's own ``example``, else the rule's left side
    with one float64 vector (of ``length`` elements) per pattern variable, named after
    the variable. The rule alone is applied to a fixpoint, and the example and its rewrite
    are evaluated on the NumPy backend at the same drawn inputs; NaN equals NaN.

    Args:
        rule: the rule.
        seed: seeds the draw (one draw per call; property tests vary it).
        example: a function of no arguments returning the graph to rewrite.
        domain: overrides the rule's ``domain``: input name -> sampler name (a key of
            ``SAMPLERS``) or function ``(rng, shape, dtype) -> array``. Inputs it does
            not name are drawn from ``"real"`` (integers from ``"int"``, bools from
            ``"bool"``).
        length: the length given to axes whose static length is unknown.
        rtol, atol: the tolerances (by default from the dtype: 1e-7/1e-10 for float64,
            1e-4/1e-5 for float32, exact for integers and bools).

    Returns:
        The rewritten example.

    Raises:
        RuleMismatch: names the rule and says what went wrong (did not fire, changed the
            type, or the element, inputs and both values where the sides disagree).
    """
    import rewritekit as rk
    from rewritekit.ir import Constant, graph_inputs
    from rewritekit.rules import RuleSet

    label = f"rule {getattr(rule, 'qualname', rule)!r}"
    graph = example_graph(rule, example, label)
    rewritten, trace = rk.rewrite(graph, RuleSet([rule]), trace=True)
    if not any(entry.rule == rule.qualname for entry in trace):
        raise RuleMismatch(f"{label} does not fire on its example {rk.rules.term_str(graph)}")
    if rewritten.type != graph.type:
        raise RuleMismatch(f"{label} changes the type {graph.type} to {rewritten.type}")
    domain = rule.domain if domain is None else domain
    inputs, values = draw_inputs(graph, domain, seed=seed, length=length, label=label)
    known = set(inputs)
    extra = [v for v in graph_inputs(rewritten) if not isinstance(v, Constant) and v not in known]
    if extra:
        raise RuleMismatch(f"{label}: the rewrite depends on {extra[0]!r}, not an input")
    f = rk.function(inputs, [graph, rewritten], backend="numpy", rules=None)
    before, after = (np.asarray(v) for v in f(*values))
    r, a = rule_tolerance(graph.dtype)
    r, a = (r if rtol is None else rtol), (a if atol is None else atol)
    if before.shape != after.shape:
        raise RuleMismatch(
            f"{label} changes the shape {before.shape} to {after.shape} on inputs "
            f"{_inputs_text(inputs, values)}"
        )
    same = np.isclose(before, after, rtol=r, atol=a, equal_nan=True)
    if not same.all():
        index = tuple(int(i) for i in np.argwhere(~same)[0])
        raise RuleMismatch(
            f"{label} changes the value: at element {index} the original "
            f"{rk.rules.term_str(graph)} gives {before[index]!r} but the rewrite "
            f"{rk.rules.term_str(rewritten)} gives {after[index]!r} (rtol={r}, atol={a}); "
            f"inputs {_inputs_text(inputs, values)}"
        )
    return rewritten


def example_graph(rule: Any, example: Callable[[], Any] | None = None, label: str = "") -> Any:
    """The graph ``check_rule`` rewrites: ``example()``, else ``rule.example_graph()`` (the
    rule's own example, or its left side instantiated with float64 vectors)."""
    from rewritekit.errors import RuleError
    from rewritekit.ir import Var

    label = label or f"rule {getattr(rule, 'qualname', rule)!r}"
    try:
        graph = example() if example is not None else rule.example_graph()
    except RuleError as exc:
        raise RuleMismatch(str(exc)) from exc
    if not isinstance(graph, Var):
        raise RuleMismatch(f"{label}: its example must return a Var, got {type(graph).__name__}")
    return graph


def draw_inputs(
    graph: Any, domain: Any = None, *, seed: int = 0, length: int = 3, label: str = "draw_inputs"
) -> tuple[list[Any], list[np.ndarray]]:
    """The free inputs of ``graph`` and one random value for each, drawn as ``check_rule``
    draws them (``domain``: input name -> sampler name or function)."""
    from rewritekit.ir import Constant, graph_inputs

    inputs = [v for v in graph_inputs(graph) if not isinstance(v, Constant)]
    rng = np.random.default_rng(seed)
    values = [_draw(rng, v, (domain or {}).get(v.name), length, label) for v in inputs]
    return inputs, values


def _draw(rng: np.random.Generator, var: Any, spec: Any, length: int, label: str) -> np.ndarray:
    shape = tuple(length if n is None else n for n in var.type.shape)
    dtype = var.dtype
    if spec is None:
        spec = {"b": "bool", "i": "int", "u": "natural"}.get(np.dtype(dtype).kind, "real")
    sampler = SAMPLERS.get(spec) if isinstance(spec, str) else spec
    if not callable(sampler):
        raise RuleMismatch(
            f"{label}: unknown domain {spec!r} for input {var.name!r}; known: "
            f"{', '.join(sorted(SAMPLERS))} (or a function (rng, shape, dtype) -> array)"
        )
    return np.asarray(sampler(rng, shape, dtype)).astype(dtype)


def _inputs_text(inputs: list[Any], values: list[np.ndarray]) -> str:
    with np.printoptions(precision=6, threshold=20):
        return ", ".join(f"{v.name}={a!r}" for v, a in zip(inputs, values, strict=True))
