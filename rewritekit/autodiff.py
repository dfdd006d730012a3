"""Symbolic differentiation: ``grad``, ``vjp``, ``jvp``, ``jacobian``, ``hessian``.

The backward graph is built in one reverse sweep over the nodes between the variables
differentiated and the outputs: each node gets the sum of its outputs' cotangents once,
and its Op's ``vjp`` gives one cotangent per input. Shared subexpressions are therefore
differentiated once, the backward graph's size is linear in the forward graph's, and the
result is ordinary IR (gradients of gradients work).

Forward mode (``jvp``) transposes the whole vjp where it can; through loops and branches
it is one forward sweep (``forward``): an Op with a ``jvp`` rule (``Scan``, ``Cond``,
``While``: a loop over values and tangents) gives its outputs' tangents, and every other
node's come from transposing its own vjp, built on fresh inputs so the cost stays linear.
A ``while_loop`` without ``max_steps`` has forward mode only.

Conventions (as JAX):

- Only inexact (float, complex) values carry gradients. Differentiating with respect to
  an integer or bool variable is an error, and no gradient flows through integer or bool
  intermediates (``rt.cast(x, "int64")``, ``rt.argmax``, comparisons).
- ``rt.stop_gradient(x)`` is ``x`` with no gradient.
- Ties are split equally: ``max``/``maximum``/``clip`` at a tie give each tied input its
  share (see each Op's ``vjp``).

One deliberate difference: the branch a ``where`` does not take gets exact zeros, whatever
its derivative is there (JAX gives ``0 * nan = nan``). A masked cotangent ``where(c, 0, h)``
reaches an elementwise Op's vjp as ``h``, and the Op's input cotangents are masked again
(``tensor/gradient.py``), so ``grad(where(x < 7, x, sqrt(x - 7)))`` is 1 at x = 5.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Apply, Constant, Var, apply_op, as_var, graph_inputs, replace, toposort
from rewritekit.ir.collector import gc_paused
from rewritekit.ir.pytree import TreeDef, flatten, unflatten
from rewritekit.tensor import (
    add,
    broadcast_to,
    eye,
    moveaxis,
    multiply,
    ones_like,
    reshape,
    size,
    zeros_like,
)
from rewritekit.tensor import sum as reduce_sum
from rewritekit.tensor.control import set_differentiator
from rewritekit.tensor.gradient import (
    Mask,
    masked,
    masked_input_grad,
    split_masks,
    sum_cotangents,
)
from rewritekit.tensor.shape_vectors import lengths
from rewritekit.tensor.ufunc import Elemwise, shape_sources
from rewritekit.vectorize import vectorize

__all__ = ["grad", "hessian", "jacobian", "jvp", "vjp"]

_DISCONNECTED = ("raise", "zero", "none")


def _inexact(var: Var) -> bool:
    return var.type.kind in "fc"


def _as_list(value: Any) -> tuple[list[Any], bool, Any]:
    """``value`` as a list, whether it was a single item, and its structure: the sequence
    type of a flat list/tuple, else the ``TreeDef`` of a pytree (dicts, nesting)."""
    if isinstance(value, Var) or not isinstance(value, list | tuple | dict):
        return [value], True, None
    if isinstance(value, dict) or any(
        v is None or isinstance(v, list | tuple | dict) for v in value
    ):
        leaves, tree = flatten(value)
        return leaves, False, tree
    return list(value), False, type(value)


def _restore(items: list[Any], single: bool, kind: Any) -> Any:
    if single:
        return items[0]
    if isinstance(kind, TreeDef):
        return unflatten(kind, items)
    return kind(items) if kind is tuple else list(items)


def _checked_wrt(wrt: list[Any], what: str) -> list[Var]:
    for position, var in enumerate(wrt):
        if not isinstance(var, Var):
            raise GraphTypeError(f"{what}: wrt {position} must be a Var, got {type(var).__name__}")
        if isinstance(var, Constant):
            raise GraphTypeError(
                f"{what}: wrt {position} is a constant ({var!r}); differentiate with respect "
                "to a variable such as rt.vector('x')"
            )
        if not _inexact(var):
            raise GraphTypeError(
                f"{what}: cannot differentiate with respect to {_name(var)} of dtype "
                f"{var.dtype}; only float and complex variables have gradients (as in JAX), "
                "cast it to a float type first"
            )
    return wrt


def _name(var: Var) -> str:
    if var.name:
        return repr(var.name)
    return repr(var)


def backward(
    outputs: Sequence[Var], cotangents: Sequence[Var], wrt: Sequence[Var]
) -> list[Var | None]:
    """The cotangents of ``wrt`` given those of ``outputs``: one reverse sweep.

    Returns None for a variable that the outputs do not depend on (through inexact values).
    """
    wanted = set(wrt)
    order = toposort(list(outputs))
    # the Vars that depend on a wrt variable through inexact values
    live: set[Var] = set(wrt)
    for node in order:
        if any(i in live for i in node.inputs):
            live.update(o for o in node.outputs if _inexact(o))
    sources = shape_sources(order)
    pending: dict[Var, list[Var]] = {}
    for out, ct in zip(outputs, cotangents, strict=True):
        if out in live:
            pending.setdefault(out, []).append(ct)
    totals: dict[Var, Var] = {}

    def total(var: Var) -> Var | None:
        found = totals.get(var)
        if found is None and var in pending:
            found = totals[var] = sum_cotangents(pending.pop(var))
        return found

    for node in reversed(order):
        outs = node.outputs
        cts = [total(o) for o in outs]
        if all(ct is None for ct in cts):
            continue
        if not any(i in live for i in node.inputs):
            continue
        cts = [zeros_like(o) if ct is None else ct for o, ct in zip(outs, cts, strict=True)]
        masks, grads = _node_vjp(node, cts)
        elementwise = isinstance(node.op, Elemwise)
        for position, (inp, g) in enumerate(zip(node.inputs, grads, strict=True)):
            if g is None or inp not in live:
                continue
            # an elementwise input of the result's run-time shape: nothing to sum back
            same = elementwise and sources.get(inp, inp) is sources.get(outs[0], outs[0])
            g = _input_cotangent(node.op, inp, g, masks, same)
            if g is not None:
                pending.setdefault(inp, []).append(_checked_grad(node, position, inp, g))
    return [total(w) if w in wanted else None for w in wrt]


def forward(
    outputs: Sequence[Var], wrt: Sequence[Var], tangents: Sequence[Var | None]
) -> list[Var | None]:
    """The tangents of ``outputs`` given those of ``wrt``: one forward sweep.

    A node whose Op has a ``jvp(inputs, outputs, tangents)`` rule (loops, branches) uses
    it; any other node transposes its vjp locally (``_transposed``). Returns None for an
    output that does not depend on ``wrt`` (through inexact values).
    """
    seeds: dict[Var, Var] = {}
    for var, t in zip(wrt, tangents, strict=True):
        if t is not None and _inexact(var):
            seeds[var] = add(seeds[var], t) if var in seeds else t
    found = dict(seeds)
    for node in toposort(list(outputs)):
        ins = [found.get(i) for i in node.inputs]
        if not node.op.differentiable or all(t is None for t in ins):
            continue
        rule = getattr(node.op, "jvp", None)
        outs = rule(node.inputs, node.outputs, ins) if rule else _transposed(node, ins)
        for position, (out, t) in enumerate(zip(node.outputs, outs, strict=True)):
            if t is None or not _inexact(out):
                continue
            t = _checked_tangent(node, position, out, t)
            found[out] = add(seeds[out], t) if out in seeds else t
    return [found.get(o) for o in outputs]


set_differentiator(backward, forward)  # loops and branches differentiate their bodies so


def _transposed(node: Apply, tangents: list[Var | None]) -> list[Var | None]:
    """The tangents of ``node``'s outputs: its vjp ``u -> J^T u`` transposed, ``J t``.

    Built on a copy of the node over fresh inputs (constants kept), so both sweeps stay
    within the node; the result is then placed over the node's inputs and tangents.
    """
    fresh = [i if isinstance(i, Constant) else Var(i.type) for i in node.inputs]
    outs = apply_op(node.op, tuple(fresh))
    diff = [
        i
        for i, t in enumerate(tangents)
        if t is not None and _inexact(node.inputs[i]) and not isinstance(fresh[i], Constant)
    ]
    wanted = [m for m, o in enumerate(outs) if _inexact(o)]
    us = [Var(outs[m].type) for m in wanted]
    grads = backward([outs[m] for m in wanted], us, [fresh[i] for i in diff])
    ts = {i: Var(tangents[i].type) for i in diff}  # type: ignore[union-attr]
    inner = None
    for i, g in zip(diff, grads, strict=True):
        if g is not None:
            term = reduce_sum(multiply(g, ts[i]))
            inner = term if inner is None else add(inner, term)
    result: list[Var | None] = [None] * len(outs)
    if inner is None:
        return result
    found = backward([inner], [ones_like(inner)], us)
    mapping: dict[Var, Var] = {f: i for f, i in zip(fresh, node.inputs, strict=True) if f is not i}
    mapping.update((ts[i], tangents[i]) for i in diff)  # type: ignore[misc]
    # J t does not depend on u; any leftover use (a term multiplied by zero) reads zeros
    mapping.update((u, zeros_like(node.outputs[m])) for u, m in zip(us, wanted, strict=True))
    kept = [(m, t) for m, t in zip(wanted, found, strict=True) if t is not None]
    placed = replace([t for _, t in kept], mapping)
    for (m, _), t in zip(kept, placed, strict=True):
        result[m] = t
    return result


def _checked_tangent(node: Apply, position: int, out: Var, t: Any) -> Var:
    t = as_var(t, dtype=out.dtype, context=f"{node.op}.jvp")
    if t.dtype != out.dtype or not out.type.is_compatible(t.type):
        raise GraphTypeError(
            f"{node.op}: jvp gave output {position} a tangent of type {t.type}, but the "
            f"output is {out.type} (a tangent has its output's dtype and shape)"
        )
    return t


def _node_vjp(node: Any, cts: list[Var]) -> tuple[list[Mask], list[Any]]:
    """The node's ``vjp``, and the masks its input cotangents are to be given.

    An elementwise Op whose cotangent is masked (``where(c, 0, h)``, what ``where`` sends
    to a branch) gets ``h`` instead, and its gradients are masked again: the vjp is linear
    in the cotangent and reads it position by position, so the masked positions become
    exact zeros instead of ``0 * f'(x)``, which is NaN where the branch not taken has no
    derivative.
    """
    masks: list[Mask] = []
    if isinstance(node.op, Elemwise) and len(cts) == 1:
        masks, core = split_masks(cts[0])
        cts = [core]
    try:
        grads = node.op.vjp(node.inputs, node.outputs, tuple(cts))
    except NotImplementedError as exc:
        raise GraphTypeError(f"grad: {exc}") from None
    if len(grads) != len(node.inputs):
        raise GraphTypeError(
            f"{node.op}: vjp returned {len(grads)} gradients for {len(node.inputs)} inputs"
        )
    return masks, list(grads)


def _input_cotangent(op: Any, inp: Var, g: Any, masks: list[Mask], same_shape: bool) -> Var | None:
    """A rule's gradient ``g`` as the cotangent of ``inp``: zeros for a rule's ``0``, summed
    back over broadcasting (and cast) for an Op that ``broadcasts``, with ``masks`` applied
    (kept outermost where the summation lets them survive; ``same_shape``: ``inp`` provably
    has the result's shape, so nothing is summed)."""
    if isinstance(g, int) and not isinstance(g, bool) and g == 0:
        return zeros_like(inp)
    if op.broadcasts:
        return masked_input_grad(g, inp, masks, same_shape=same_shape)
    return masked(g, masks) if masks else g


def _checked_grad(node: Any, position: int, inp: Var, g: Any) -> Var:
    g = as_var(g, dtype=inp.dtype, context=f"{node.op}.vjp")
    if g.dtype != inp.dtype or g.ndim != inp.ndim:
        raise GraphTypeError(
            f"{node.op}: vjp gave input {position} a gradient of type {g.type}, but the input "
            f"is {inp.type} (a gradient has its input's dtype and shape)"
        )
    for axis, (want, have) in enumerate(zip(inp.type.shape, g.type.shape, strict=True)):
        if want is not None and have is not None and want != have:
            raise GraphTypeError(
                f"{node.op}: vjp gave input {position} a gradient of type {g.type}, but the "
                f"input is {inp.type} (axis {axis})"
            )
    return g


def _finish(
    grads: list[Var | None], wrt: list[Var], disconnected: str, what: str
) -> list[Var | None]:
    out: list[Var | None] = []
    for var, g in zip(wrt, grads, strict=True):
        if g is None:
            if disconnected == "raise":
                raise GraphTypeError(
                    f"{what}: the output does not depend on {_name(var)} (or only through "
                    "integer values or stop_gradient); pass disconnected='zero' or 'none'"
                )
            g = zeros_like(var) if disconnected == "zero" else None
        out.append(g)
    return out


def _check_disconnected(disconnected: str, what: str) -> None:
    if disconnected not in _DISCONNECTED:
        raise ValueError(
            f"{what}: disconnected must be one of {', '.join(map(repr, _DISCONNECTED))}, "
            f"got {disconnected!r}"
        )


@gc_paused
def grad(
    cost: Var, wrt: Any, *, disconnected: str = "raise", stabilize: bool = True, roll: bool = True
) -> Any:
    """The gradient of the scalar ``cost`` with respect to ``wrt``.

    The cost is first rewritten with the ``"stabilize"`` rules (fold, canonicalize,
    stabilize), after rolling its chains of at least 8 equal steps (an unrolled Python
    loop) into scans (``rewritekit.rules.library.rolling``), so the gradient is as stable
    as the compiled forward, and the gradient of a loop is a loop: the gradient of
    ``log(1 - sigmoid(x))`` is that of ``-softplus(x)``, ``-sigmoid(x)``, which is -1 at
    x = 40 where the literal chain rule gives NaN.

    Args:
        cost: a 0-d float Var.
        wrt: a Var, or a list/tuple of Vars (the result has the same structure). Any Var
            of the graph may be differentiated, inputs or intermediates.
        disconnected: what a variable the cost does not depend on gets: ``"raise"`` (an
            error naming it), ``"zero"`` (zeros of its type) or ``"none"`` (None).
        stabilize: rewrite the cost with the stabilize rules first (default); False
            differentiates the graph exactly as written.
        roll: with ``stabilize``, roll chains of equal steps into scans first (default).

    Raises:
        GraphTypeError: the cost is not a float scalar, a wrt is integer or bool (as in
            JAX), or (with ``"raise"``) the cost does not depend on a wrt.

    Example:
        >>> x = rt.vector("x")
        >>> g = grad(rt.sum(x ** 2), x)  # 2 * x
    """
    _check_disconnected(disconnected, "grad")
    if not isinstance(cost, Var):
        raise GraphTypeError(f"grad: the cost must be a Var, got {type(cost).__name__}")
    if cost.ndim != 0 or cost.type.kind != "f":
        raise GraphTypeError(
            f"grad: the cost must be a float scalar, got {cost.type}; sum it (rt.sum) or use "
            "rk.vjp for non-scalar outputs"
        )
    items, single, kind = _as_list(wrt)
    variables = _checked_wrt(items, "grad")
    if stabilize:
        cost = _stabilized(cost, variables, roll)
    grads = backward([cost], [ones_like(cost)], variables)
    return _restore(_finish(grads, variables, disconnected, "grad"), single, kind)


def _stabilized(cost: Var, wrt: list[Var], roll: bool = True) -> Var:
    """``cost`` rewritten by the stabilize pipeline, keeping every ``wrt`` in the graph.

    A wrt computed by the graph is swapped for a placeholder during the rewrite, so no rule
    can fold it away; if the rewrite disconnects a wrt the cost depended on (``x - x``),
    the cost is differentiated as written.
    """
    from rewritekit.rules import rewrite
    from rewritekit.rules.library import stabilize_pipeline
    from rewritekit.rules.library.rolling import roll_chains
    from rewritekit.rules.trace import RewriteTrace

    inner = {v: Var(v.type, name=v.name) for v in dict.fromkeys(wrt) if v.owner is not None}
    graph = replace(cost, inner) if inner else cost
    # chains of equal steps become scans before the rules run, while their steps are still
    # equal (the rules drop the + 0 of a step whose constant is 0), so the gradient of an
    # unrolled loop is a loop too
    rolled = roll_chains([graph], RewriteTrace())[0] if roll else graph
    rewritten = rewrite(rolled, stabilize_pipeline)
    if rewritten is graph:
        return cost
    leaves = set(graph_inputs(rewritten))
    before = set(graph_inputs(graph))
    if any(inner.get(v, v) in before and inner.get(v, v) not in leaves for v in wrt):
        return cost
    return replace(rewritten, {p: v for v, p in inner.items()}) if inner else rewritten


def vjp(outputs: Any, wrt: Any, cotangents: Any, *, disconnected: str = "zero") -> Any:
    """The vector-Jacobian product: ``sum_i cotangents[i] . d outputs[i] / d wrt``.

    Args:
        outputs: a Var or a list/tuple of Vars.
        wrt: a Var or a list/tuple of Vars (the result has the same structure).
        cotangents: one per output, each of its output's type (arrays and numbers become
            constants).
        disconnected: as in ``grad``; by default a disconnected wrt gets zeros.

    Example:
        >>> y = rt.sin(x)
        >>> vjp(y, x, rt.ones_like(y))  # cos(x)
    """
    _check_disconnected(disconnected, "vjp")
    outs, _, _ = _as_list(outputs)
    cts, _, _ = _as_list(cotangents)
    if len(outs) != len(cts):
        raise GraphTypeError(f"vjp: {len(outs)} outputs but {len(cts)} cotangents")
    checked = []
    for position, (out, ct) in enumerate(zip(outs, cts, strict=True)):
        if not isinstance(out, Var):
            raise GraphTypeError(f"vjp: output {position} must be a Var")
        ct = as_var(ct, dtype=out.dtype, context=f"vjp: cotangent {position}")
        if ct.dtype != out.dtype or not out.type.is_compatible(ct.type):
            raise GraphTypeError(
                f"vjp: cotangent {position} has type {ct.type}, but output {position} is {out.type}"
            )
        checked.append(ct)
    items, single, kind = _as_list(wrt)
    variables = _checked_wrt(items, "vjp")
    grads = backward(outs, checked, variables)
    return _restore(_finish(grads, variables, disconnected, "vjp"), single, kind)


def jvp(outputs: Any, wrt: Any, tangents: Any) -> Any:
    """The Jacobian-vector product (forward mode): ``sum_j d outputs / d wrt[j] . tangents[j]``.

    Built by transposing the vjp: the vjp ``g(u) = J^T u`` is linear in the cotangent
    ``u``, so its own vjp with cotangent ``t`` is ``J t``. Every differentiable Op thus has
    forward mode without a second rule per Op; the cost is a graph about twice the vjp's,
    which rewriting and XLA trim. A graph with loops or branches (``rk.scan``, ``rk.cond``,
    ``rk.while_loop``) is differentiated in one forward sweep instead (``forward``): a
    loop's tangents are a loop over values and tangents, so a ``while_loop`` without
    ``max_steps``, which has no reverse mode, has forward mode.

    Args:
        outputs: a Var or a list/tuple of Vars (the result has the same structure).
        wrt: a Var or a list/tuple of Vars.
        tangents: one per wrt, of its type.

    Example:
        >>> jvp(rt.sin(x), x, rt.ones_like(x))  # cos(x)
    """
    outs, single, kind = _as_list(outputs)
    items, _, _ = _as_list(wrt)
    tans, _, _ = _as_list(tangents)
    variables = _checked_wrt(items, "jvp")
    if len(tans) != len(variables):
        raise GraphTypeError(f"jvp: {len(variables)} variables but {len(tans)} tangents")
    tans = [
        as_var(t, dtype=v.dtype, context=f"jvp: tangent {i}")
        for i, (v, t) in enumerate(zip(variables, tans, strict=True))
    ]
    if any(hasattr(node.op, "jvp") for node in toposort(outs)):
        swept = forward(outs, variables, tans)
        results = [zeros_like(o) if r is None else r for o, r in zip(outs, swept, strict=True)]
        return _restore(results, single, kind)
    dummies = [Var(o.type, f"_cotangent{i}") for i, o in enumerate(outs)]
    gs = backward(outs, dummies, variables)
    inner = None
    for g, t in zip(gs, tans, strict=True):
        if g is None:
            continue
        term = reduce_sum(multiply(g, t))
        inner = term if inner is None else add(inner, term)
    if inner is None:
        return _restore([zeros_like(o) for o in outs], single, kind)
    results = backward([inner], [ones_like(inner)], dummies)
    results = [zeros_like(o) if r is None else r for o, r in zip(outs, results, strict=True)]
    # J t does not depend on u; any leftover use (a term multiplied by zero) reads zeros
    results = replace(results, {u: zeros_like(o) for u, o in zip(dummies, outs, strict=True)})
    return _restore(list(results), single, kind)


def jacobian(y: Var, x: Var, mode: str = "rev") -> Var:
    """The Jacobian ``d y / d x`` of shape ``y.shape + x.shape``, also when the sizes are
    known only at run time.

    It is the vjp graph ``g(u) = u . dy/dx`` vectorized (``rk.vectorize``) over the
    one-hot ``u``, the rows of an identity matrix: an ordinary graph that the rules
    simplify (``Blockwise`` nodes, ``jax.vmap`` in JAX and a loop in NumPy, only where an
    Op has no batching rule); it composes with ``rk.function``, rewriting and ``jax.jit``.
    For a 0-d ``y`` there is one row, so the Jacobian is the vjp with ``u = 1`` itself, of
    ``x``'s shape (as ``jax.jacobian``).

    ``mode`` chooses the sweep: ``"rev"`` (default) vectorizes the vjp over one-hot rows
    (one row per element of ``y``), ``"fwd"`` the jvp over one-hot tangents (one column
    per element of ``x``: cheaper where ``x`` is smaller than ``y``), ``"auto"`` takes
    forward mode where ``x`` has fewer elements than ``y`` (both static) and reverse
    otherwise, as ``jax.jacfwd``/``jax.jacrev`` would be chosen.

    Example:
        >>> jacobian(rt.sin(x), x).type.shape
        (None, None)
    """
    if not isinstance(y, Var):
        raise GraphTypeError(f"jacobian: y must be a Var, got {type(y).__name__}")
    (x,) = _checked_wrt([x], "jacobian")
    if not _inexact(y):
        raise GraphTypeError(f"jacobian: y must be float or complex, got {y.type}")
    if mode not in ("rev", "fwd", "auto"):
        raise GraphTypeError(f"jacobian: mode must be 'rev', 'fwd' or 'auto', got {mode!r}")
    if mode == "auto":
        sizes = [None if None in v.type.shape else math.prod(v.type.shape) for v in (x, y)]
        mode = "fwd" if None not in sizes and sizes[0] < sizes[1] else "rev"  # type: ignore[operator]
    if mode == "fwd":
        return _forward_jacobian(y, x)
    if y.ndim == 0:
        (g,) = _finish(backward([y], [ones_like(y)], [x]), [x], "zero", "jacobian")
        return g
    u = Var(y.type, "_cotangent")
    (g,) = backward([y], [u], [x])
    if g is None:
        g = zeros_like(x)
    return reshape(_over_one_hot(g, u, y), (*lengths(y), *lengths(x)))


def _over_one_hot(value: Var, dummy: Var, like: Var) -> Var:
    """``value``, linear in ``dummy`` (of ``like``'s type), vectorized over the one-hot
    ``dummy``: the rows of an identity matrix laid out in ``like``'s shape. The result has
    one leading entry per element of ``like`` (``value`` broadcast where it does not read
    ``dummy``)."""
    n = size(like)
    batched = vectorize(value, {dummy: reshape(eye(n, dtype=like.dtype), (n, *lengths(like)))})
    return batched if batched is not value else broadcast_to(value, (n, *lengths(value)))


def _forward_jacobian(y: Var, x: Var) -> Var:
    """The jvp ``J t`` vectorized over the one-hot ``t``: the columns of the Jacobian,
    moved behind ``y``'s axes."""
    t = Var(x.type, "_tangent")
    columns = _over_one_hot(jvp(y, x, t), t, x)  # (size(x), *y.shape)
    flat = moveaxis(columns, 0, -1) if y.ndim else columns
    return reshape(flat, (*lengths(y), *lengths(x)))


def hessian(cost: Var, x: Var) -> Var:
    """The Hessian of the scalar ``cost`` with respect to ``x``: ``jacobian(grad(cost, x), x)``,
    of shape ``x.shape + x.shape``.

    Example:
        >>> hessian(rt.sum(x ** 3), x)  # diag(6 x)
    """
    return jacobian(grad(cost, x, disconnected="zero"), x)
