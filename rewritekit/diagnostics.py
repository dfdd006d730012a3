"""Run-time diagnostics of compiled functions: the rewrite rule that made a node, and the
NaN hunter of ``rk.function(..., debug_nans=True)``.

Both run only when something went wrong (a ``GraphRuntimeError``, or a non-finite output
in debug mode), so a call that succeeds pays nothing for them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from rewritekit.backends.lowering import describe_value
from rewritekit.errors import NonFiniteError
from rewritekit.ir import Apply, Constant, Var, short_name, toposort
from rewritekit.rules import TraceEntry, term_str

__all__ = ["non_finite_error", "rule_makers"]


def rule_makers(outputs: Sequence[Var], trace: Sequence[TraceEntry]) -> dict[Apply, str]:
    """The rule that made each node of the rewritten graph that a rule's replacement made.

    A node is made by the first trace entry whose replacement (``after``) holds it while
    neither the original graph of ``outputs`` nor an earlier entry's terms did; nodes that
    the engine rebuilt around a replaced child (and the original ones) map to no rule.
    Every node is visited once over the whole trace.

    Example:
        >>> f = rk.function([x], rt.log(1 + x), backend="numpy")
        >>> rule_makers([rt.log(1 + x)], f.trace)[f.graph.owner]
        'stabilize.log1p_of_one_plus'
    """
    seen = set(toposort(list(outputs)))
    made: dict[Apply, str] = {}
    for entry in trace:
        _new_nodes(entry.before, seen)
        for node in _new_nodes(entry.after, seen):
            made[node] = entry.rule
    return made


def _new_nodes(var: Var, seen: set[Apply]) -> list[Apply]:
    """The nodes of ``var``'s graph not in ``seen``, found without entering ``seen`` nodes
    (added to it)."""
    new: list[Apply] = []
    stack = [var]
    while stack:
        node = stack.pop().owner
        if node is None or node in seen:
            continue
        seen.add(node)
        new.append(node)
        stack.extend(node.inputs)
    return new


# --- the NaN hunter ----------------------------------------------------------------------

Implement = Callable[[Apply], Callable[..., Any]]


def non_finite_error(
    inputs: Sequence[Var],
    graph: Sequence[Var],
    args: Sequence[Any],
    values: Sequence[Any],
    makers: Callable[[], Mapping[Apply, str]],
    backend: str,
) -> NonFiniteError | None:
    """The ``NonFiniteError`` of a call whose ``values`` (the outputs of ``graph``) hold NaN
    or ±inf while ``args`` (the values of ``inputs``) are finite; None otherwise.

    The graph is run again node by node with the NumPy reference (and, for the JAX backend
    where that finds nothing, with the JAX implementations, eagerly), and the error names
    the first node that made a non-finite value from finite inputs, or raised. ``makers``
    gives the rule that made each node (``rule_makers``), asked only for the culprit.
    """
    bad = [i for i, v in enumerate(values) if not _all_finite(v)]
    if not bad or not all(_all_finite(a) for a in args):
        return None
    found = _first_non_finite(inputs, graph, args, _numpy_implement, np.asarray)
    where = "the NumPy reference"
    if found is None and backend == "jax":
        found = _first_non_finite_jax(inputs, graph, args)
        where = "the JAX implementations, eagerly"
    outs = ", ".join(f"output {i} ({_counts(np.asarray(values[i]))})" for i in bad)
    if found is None:
        return NonFiniteError(
            f"debug_nans: non-finite outputs from finite inputs ({outs}), but no node made "
            "a NaN or inf from finite inputs when the graph ran node by node with the NumPy "
            f"reference{' and the JAX implementations' if backend == 'jax' else ''}: a "
            "constant holds one, or the compiled code computed a node differently"
        )
    return NonFiniteError(
        f"{_culprit(*found, makers)}\n(debug_nans: {outs} from finite inputs; found by "
        f"running the graph again node by node with {where})"
    )


def _culprit(
    node: Apply,
    in_values: list[Any],
    out_values: list[Any],
    exc: Exception | None,
    makers: Callable[[], Mapping[Apply, str]],
) -> str:
    """What the NaN hunter says of the node it found: the Op, the node as an expression,
    each input's summary, its outputs' non-finite counts, the rule that made it."""
    if exc is None:
        head = f"{node.op} produced NaN or inf from finite inputs"
    else:
        head = f"{node.op} raised {type(exc).__name__} ({str(exc).strip()}) on finite inputs"
    lines = [head, f"  node:   {term_str(node.outputs[0], depth=3)}"]
    for position, (var, value) in enumerate(zip(node.inputs, in_values, strict=True)):
        label = "  inputs: " if position == 0 else "          "
        lines.append(f"{label}{short_name(var)}: {summarize(value)}")
    if out_values:
        lines.append(f"  output: {'; '.join(_counts(np.asarray(v)) for v in out_values)}")
    rule = makers().get(node)
    if rule:
        lines.append(f"  made by rule {rule!r}")
    return "\n".join(lines)


def summarize(value: Any) -> str:
    """A value's dtype and shape, its range and how many elements are not finite:
    ``float64[3], min -2, max 1, 0 non-finite``."""
    array = np.asarray(value)
    text = describe_value(array)
    if array.size and array.dtype.kind in "biuf":
        finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array.ravel()
        if finite.size:
            text += f", min {_number(finite.min())}, max {_number(finite.max())}"
    if array.dtype.kind in "fc":
        text += f", {int(array.size - np.isfinite(array).sum())} non-finite"
    return text


def _number(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, np.floating) else str(value)


def _counts(array: np.ndarray) -> str:
    """``float64[3]: 1 NaN, 2 -inf`` (the kinds that occur)."""
    if array.dtype.kind not in "fc":
        return describe_value(array)
    parts = []
    for label, count in (
        ("NaN", np.isnan(array).sum()),
        ("+inf", np.isposinf(array.real).sum() + np.isposinf(array.imag).sum()),
        ("-inf", np.isneginf(array.real).sum() + np.isneginf(array.imag).sum()),
    ):
        if count:
            parts.append(f"{int(count)} {label}")
    return f"{describe_value(array)}: {', '.join(parts) or 'finite'}"


def _all_finite(value: Any) -> bool:
    try:
        array = np.asarray(value)
    except Exception:  # not an array of numbers (a typed key): nothing to check
        return True
    return array.dtype.kind not in "fc" or bool(np.isfinite(array).all())


def _numpy_implement(node: Apply) -> Callable[..., Any]:
    from rewritekit.backends.numpy import numpy_funcify  # the backend loads SciPy: lazily

    return numpy_funcify(node.op, node)


def _first_non_finite_jax(
    inputs: Sequence[Var], graph: Sequence[Var], args: Sequence[Any]
) -> tuple[Apply, list[Any], list[Any], Exception | None] | None:
    import jax
    import jax.numpy as jnp

    from rewritekit.backends.jax import jax_funcify

    with jax.enable_x64(True):
        return _first_non_finite(
            inputs, graph, args, lambda node: jax_funcify(node.op, node), jnp.asarray
        )


def _first_non_finite(
    inputs: Sequence[Var],
    graph: Sequence[Var],
    args: Sequence[Any],
    implement: Implement,
    asarray: Callable[[Any], Any],
) -> tuple[Apply, list[Any], list[Any], Exception | None] | None:
    """The first node (in graph order) whose inputs are finite and whose outputs are not,
    or that raises: (node, input values, output values, the exception or None)."""
    nodes = toposort(list(graph))
    uses: dict[Var, int] = {}
    for node in nodes:
        for var in node.inputs:
            uses[var] = uses.get(var, 0) + 1
    keep = set(graph)
    env: dict[Var, Any] = {v: asarray(a) for v, a in zip(inputs, args, strict=True)}
    finite: dict[Var, bool] = {}
    with np.errstate(all="ignore"):
        for node in nodes:
            ins = [v.data if isinstance(v, Constant) else env[v] for v in node.inputs]
            clean = all(
                _finite_var(v, value, finite) for v, value in zip(node.inputs, ins, strict=True)
            )
            try:
                fn = implement(node)
            except NotImplementedError:  # an Op this backend lacks: it cannot tell
                return None
            try:
                value = fn(*ins)
            except Exception as exc:
                # on non-finite inputs (from a constant): nothing to blame on this node
                return (node, ins, [], exc) if clean else None
            outs = [value] if node.nout == 1 else list(value)
            if clean and not all(_all_finite(v) for v in outs):
                return node, ins, outs, None
            for var, value in zip(node.outputs, outs, strict=True):
                env[var] = value
            for var in node.inputs:  # drop what no later node reads
                uses[var] -= 1
                if not uses[var] and var not in keep:
                    env.pop(var, None)
    return None


def _finite_var(var: Var, value: Any, finite: dict[Var, bool]) -> bool:
    known = finite.get(var)
    if known is None:
        known = finite[var] = _all_finite(value)
    return known
