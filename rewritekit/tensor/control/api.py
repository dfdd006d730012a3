"""Loops and branches from Python functions: ``scan``, ``fori_loop``, ``map``,
``while_loop``, ``cond`` (``jax.lax``'s API).

Each function is traced once on fresh Vars of the argument types; ``close_over`` makes the
result an inner graph over placeholders, and the Vars it read from outside become inputs of
the node (``rewritekit.tensor.control.ops``).

Example:
    >>> x = rt.vector("x")
    >>> total, partial = scan(lambda c, xi: (c + xi, c + xi), 0.0, x)  # cumsum
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Var, apply_op, as_var
from rewritekit.ir.inner import close_over
from rewritekit.ir.pytree import TreeDef, flatten, leaf_paths, unflatten
from rewritekit.tensor.arithmetic import maximum, minimum, where
from rewritekit.tensor.control.ops import Cond, Scan, While
from rewritekit.tensor.creation import arange
from rewritekit.tensor.logic import less, logical_and

__all__ = ["cond", "fori_loop", "map", "scan", "switch", "while_loop"]


def _traced(fn: Callable[..., Any], what: str, *trees: Any) -> tuple[list[Var], list[Any], Any]:
    """Trace ``fn`` on fresh Vars shaped like ``trees``: (fresh leaves, result leaves, result
    structure)."""
    fresh: list[Var] = []
    args = []
    for tree in trees:
        leaves, treedef = tree
        vs = [Var(t) for t in leaves]
        fresh.extend(vs)
        args.append(unflatten(treedef, vs))
    result = fn(*args)
    leaves, treedef = flatten(result)
    return fresh, leaves, treedef


def _leaves_as_vars(tree: Any, what: str) -> tuple[list[Var], TreeDef]:
    leaves, treedef = flatten(tree)
    paths = leaf_paths(treedef)
    return [as_var(v, context=f"{what}{p}") for v, p in zip(leaves, paths, strict=True)], treedef


def _checked_carry(
    what: str, init: list[Var], init_def: TreeDef, new: list[Any], new_def: TreeDef
) -> list[Var]:
    """The returned carry as Vars of the initial carry's types, or an error naming the
    carry's path and both types."""
    if new_def != init_def:
        raise GraphTypeError(
            f"{what}: the carry returned has structure {_shown(new_def)}, but the initial "
            f"carry has {_shown(init_def)}"
        )
    out = []
    for path, start, value in zip(leaf_paths(init_def), init, new, strict=True):
        var = as_var(value, dtype=start.dtype, context=f"{what}: carry{path}")
        if var.type is not start.type:
            raise GraphTypeError(
                f"{what}: carry{path or ''} changes type from {start.type} (initial) to "
                f"{var.type} (returned by the body); make the body return the same dtype "
                "and static shape (rt.cast, rt.reshape)"
            )
        out.append(var)
    return out


def _shown(treedef: TreeDef) -> str:
    return repr(unflatten(treedef, ["*"] * treedef.num_leaves)).replace("'*'", "*")


def _static_length(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise GraphTypeError(f"{what}: length must be a non-negative Python int, got {value!r}")
    if value < 0:
        raise ShapeError(f"{what}: length must be non-negative, got {value}")
    return int(value)


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    checkpoint: bool = False,
) -> tuple[Any, Any]:
    """Loop ``f`` over the leading axis of ``xs``, threading a carry: ``jax.lax.scan``.

    Semantics, with ``ys`` stacked along a new leading axis::

        carry = init
        for x in xs:                 # reversed(xs) with reverse=True (ys keep xs' order)
            carry, y = f(carry, x)
        return carry, stack(ys)

    ``f`` is traced once into one ``Scan`` node; the input Vars it reads from outside
    become inputs of the loop. An expression of them that the body reads (computed in
    ``f`` or before) is traced into the body: ``rules="default"`` hoists it out of the
    loop, so that it runs once; with ``rules=None`` it runs at every step. Random draws
    inside ``f`` work when the key is threaded through the carry.

    Args:
        f: ``(carry, x) -> (carry, y)``; carries and ``y`` are Vars or pytrees of them
            (tuples, lists, dicts, None). The carry must keep its types (dtype and static
            shape) from step to step.
        init: the initial carry (Vars, arrays or numbers; a pytree).
        xs: the sequences (a pytree of Vars with a common leading length), or None.
        length: the number of steps; needed only when ``xs`` is None.
        reverse: run from the end of ``xs`` to the start.
        checkpoint: let reverse-mode derivatives store the carry only every
            ``ceil(sqrt(T))`` steps (T steps) and recompute the others, block by block,
            while going back: memory O(sqrt(T)) carries instead of O(T), for about two more
            forward sweeps of ``f``. The forward itself is unchanged.

    Returns:
        ``(final_carry, ys)``, of the structures of ``init`` and of ``f``'s ``y``.

    Raises:
        GraphTypeError: a carry changes type (the message names its path and both types),
            or ``f`` returns something other than a pair.
        ShapeError: sequences of different static lengths, or ``length`` disagrees.

    Example:
        >>> x = rt.vector("x")
        >>> total, running = scan(lambda c, xi: (c + xi, c + xi), 0.0, x)
    """
    return _scan("scan", f, init, xs, length, reverse, checkpoint)


def _scan(
    what: str,
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any,
    length: int | None,
    reverse: bool,
    checkpoint: bool,
) -> tuple[Any, Any]:
    """``scan``, its errors named after ``what`` (``scan``, or the API built on it)."""
    if not callable(f):
        raise GraphTypeError(f"{what}: f must be a function (carry, x) -> (carry, y), got {f!r}")
    carry, carry_def = _leaves_as_vars(init, f"{what}: init")
    seqs, seq_def = _leaves_as_vars(xs, f"{what}: xs")
    if length is not None:
        length = _static_length(length, what)
    if not seqs and length is None:
        raise GraphTypeError(f"{what}: give xs or length (the number of steps)")
    slices = []
    for path, seq in zip(leaf_paths(seq_def), seqs, strict=True):
        if seq.ndim == 0:
            raise ShapeError(f"{what}: xs{path} is a scalar; sequences need a leading axis")
        slices.append(seq.type.with_shape(seq.type.shape[1:]))
    _check_lengths(seqs, seq_def, length)
    fresh, result, result_def = _traced(
        f, what, ([c.type for c in carry], carry_def), (slices, seq_def)
    )
    if result_def.kind not in ("tuple", "list") or len(result_def.children) != 2:
        raise GraphTypeError(f"{what}: f must return a pair (carry, y), got {_shown(result_def)}")
    n_new = result_def.children[0].num_leaves
    new = _checked_carry(
        what, fresh[: len(carry)], carry_def, result[:n_new], result_def.children[0]
    )
    ys, y_def = _leaves_as_vars(unflatten(result_def.children[1], result[n_new:]), f"{what}: y")
    graph, free = close_over(fresh, [*new, *ys])
    op = Scan(graph, len(carry), len(seqs), length, bool(reverse), bool(checkpoint))
    outs = apply_op(op, (*carry, *seqs, *free))
    final = unflatten(carry_def, outs[: len(carry)])
    return final, unflatten(y_def, outs[len(carry) :])


def _check_lengths(seqs: list[Var], seq_def: TreeDef, length: int | None) -> None:
    known = {}
    for path, seq in zip(leaf_paths(seq_def), seqs, strict=True):
        lead = seq.type.shape[0]
        if lead is not None:
            known[f"xs{path}"] = lead
    if length is not None:
        known["length"] = length
    if len(set(known.values())) > 1:
        shown = ", ".join(f"{k} = {v}" for k, v in known.items())
        raise ShapeError(f"scan: the sequences' leading lengths differ: {shown}")


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``: ``jax.lax.fori_loop``.

    With Python ints as bounds it is a ``scan`` of ``upper - lower`` steps (differentiable
    in reverse mode); with symbolic bounds a ``while_loop``. ``i`` is an int64 scalar.

    Example:
        >>> fori_loop(0, 5, lambda i, v: v * 2.0, 1.0)  # 32.0 when run
    """
    if _is_int(lower) and _is_int(upper):
        steps = max(int(upper) - int(lower), 0)
        if steps == 0:
            return init_val
        final, _ = _scan(
            "fori_loop",
            lambda v, i: (body_fun(i, v), None),
            init_val,
            arange(int(lower), int(upper)),
            None,
            False,
            False,
        )
        return final
    lo, hi = as_var(lower, context="fori_loop: lower"), as_var(upper, context="fori_loop: upper")
    for name, bound in (("lower", lo), ("upper", hi)):
        if bound.ndim != 0 or bound.type.kind not in "iu":
            raise GraphTypeError(f"fori_loop: {name} must be an integer scalar, got {bound.type}")
    _, val = while_loop(
        lambda s: less(s[0], hi),
        lambda s: (s[0] + 1, body_fun(s[0], s[1])),
        (lo, init_val),
    )
    return val


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def map(f: Callable[[Any], Any], xs: Any) -> Any:
    """``f`` applied to each slice of ``xs`` along its leading axis, stacked:
    ``jax.lax.map``.

    Example:
        >>> rows = map(lambda r: rt.sum(r ** 2), rt.matrix("m"))
    """
    _, ys = _scan("map", lambda c, x: (c, f(x)), None, xs, None, False, False)
    return ys


def while_loop(
    cond_fun: Callable[[Any], Any],
    body_fun: Callable[[Any], Any],
    init_val: Any,
    max_steps: int | None = None,
) -> Any:
    """``while cond_fun(val): val = body_fun(val)``: ``jax.lax.while_loop``.

    Args:
        cond_fun: ``val -> bool scalar``.
        body_fun: ``val -> val`` of the same structure and types.
        init_val: the initial state (a pytree).
        max_steps: a bound on the number of steps. Without it the loop is one ``While``
            node: forward mode (``rk.jvp``) differentiates it, reverse mode raises. With
            it the loop is a ``scan`` of ``max_steps`` steps whose state stops changing once
            ``cond_fun`` is false (a done-mask): reverse mode works, and every run costs
            ``max_steps`` evaluations of ``body_fun``. If ``cond_fun`` is still true after
            ``max_steps`` steps, the state after ``max_steps`` steps is returned.

    Example:
        >>> n = while_loop(lambda v: v < 100.0, lambda v: v * 2.0, 1.0)  # 128.0 when run
    """
    if not callable(cond_fun) or not callable(body_fun):
        raise GraphTypeError("while_loop: cond_fun and body_fun must be functions of the state")
    state, state_def = _leaves_as_vars(init_val, "while_loop: init_val")
    types = [v.type for v in state]
    if max_steps is not None:
        return _bounded_while(cond_fun, body_fun, state, state_def, max_steps)
    fresh_c, pred, _ = _traced(cond_fun, "while_loop", (types, state_def))
    pred_var = _checked_pred("while_loop: cond_fun", pred)
    fresh_b, new, new_def = _traced(body_fun, "while_loop", (types, state_def))
    new_vars = _checked_carry("while_loop", state, state_def, new, new_def)
    body_graph, free_b = close_over(fresh_b, new_vars)
    cond_graph, free = close_over(fresh_c, [pred_var], extra=free_b)
    body_graph, free = close_over(fresh_b, new_vars, extra=free)
    op = While(cond_graph, body_graph, len(state))
    outs = apply_op(op, (*state, *free))
    return unflatten(state_def, outs)


def _bounded_while(
    cond_fun: Callable[[Any], Any],
    body_fun: Callable[[Any], Any],
    state: list[Var],
    state_def: TreeDef,
    max_steps: Any,
) -> Any:
    steps = _static_length(max_steps, "while_loop: max_steps")

    def step(carry: Any, _: Any) -> Any:
        active, val = carry
        go = logical_and(active, _checked_pred("while_loop: cond_fun", flatten(cond_fun(val))[0]))
        new, new_def = flatten(body_fun(val))
        old = flatten(val)[0]
        kept = _checked_carry("while_loop", old, state_def, new, new_def)
        moved = [where(go, n, o) for n, o in zip(kept, old, strict=True)]
        return (go, unflatten(state_def, moved)), None

    if steps == 0:
        return unflatten(state_def, state)
    (_, final), _ = scan(step, (as_var(True), unflatten(state_def, state)), length=steps)
    return final


def _checked_pred(what: str, leaves: list[Any]) -> Var:
    if len(leaves) != 1:
        raise GraphTypeError(f"{what} must return one bool scalar, got {len(leaves)} values")
    pred = as_var(leaves[0], context=what)
    if pred.ndim != 0 or pred.dtype != "bool":
        raise DTypeError(f"{what} must return a bool scalar, got {pred.type}")
    return pred


def _branch_outputs(a: Any, b: Any, path: str) -> tuple[Var, Var]:
    """The two branches' outputs at ``path`` as Vars; a number or array on one side takes
    the dtype of a Var on the other, whichever side that is."""
    if isinstance(b, Var) and not isinstance(a, Var):
        b_var = as_var(b, context=f"cond: false branch output{path}")
        return as_var(a, dtype=b_var.dtype, context=f"cond: true branch output{path}"), b_var
    a_var = as_var(a, context=f"cond: true branch output{path}")
    return a_var, as_var(b, dtype=a_var.dtype, context=f"cond: false branch output{path}")


def cond(
    pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any
) -> Any:
    """``true_fun(*operands) if pred else false_fun(*operands)``: ``jax.lax.cond``.

    Lazy: only the branch taken is evaluated (NumPy runs one branch; JAX lowers to
    ``lax.cond``). ``rt.where`` stays eager (both sides are computed). Outer Vars used by
    either branch are closed over. Gradients flow through the branch taken.

    Args:
        pred: a bool scalar.
        true_fun: a function of the operands returning a pytree.
        false_fun: a function of the operands returning a pytree of the same structure
            and types as ``true_fun``'s.
        operands: the values passed to the branch (pytrees allowed).

    Raises:
        DTypeError: ``pred`` is not a bool scalar.
        GraphTypeError: the branches return different structures or types.

    Example:
        >>> y = cond(x > 0.0, lambda v: rt.log(v), lambda v: v, x)
    """
    p = as_var(pred, context="cond: pred")
    if p.ndim != 0 or p.dtype != "bool":
        raise DTypeError(f"cond: pred must be a bool scalar, got {p.type}")
    if not callable(true_fun) or not callable(false_fun):
        raise GraphTypeError("cond: true_fun and false_fun must be functions of the operands")
    ops, ops_def = _leaves_as_vars(tuple(operands), "cond: operands")
    types = [v.type for v in ops]
    results = []
    for fn in (true_fun, false_fun):
        fresh = [Var(t) for t in types]
        out = fn(*unflatten(ops_def, fresh))
        leaves, out_def = flatten(out)
        results.append((fresh, leaves, out_def))
    (ft, lt, dt), (ff, lf, df) = results
    if dt != df:
        raise GraphTypeError(
            f"cond: the true branch returns {_shown(dt)}, the false branch {_shown(df)}; "
            "both must return the same structure"
        )
    paths = leaf_paths(dt)
    pairs = [_branch_outputs(a, b, p) for a, b, p in zip(lt, lf, paths, strict=True)]
    lt, lf = [a for a, _ in pairs], [b for _, b in pairs]
    for path, a, b in zip(paths, lt, lf, strict=True):
        if not a.type.is_compatible(b.type):
            raise GraphTypeError(
                f"cond: output{path} is {a.type} in the true branch and {b.type} in the false "
                "branch; both branches must return the same types"
            )
    if not lt:
        return unflatten(dt, [])
    _, free_t = close_over(ft, lt)
    f_graph, free = close_over(ff, lf, extra=free_t)
    t_graph, free_t2 = close_over(ft, lt, extra=free)
    if free_t2 != free:
        raise GraphTypeError("cond: internal error: the branches closed over different values")
    outs = apply_op(Cond(t_graph, f_graph), (p, *ops, *free))
    return unflatten(dt, outs)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[index](*operands)``: ``jax.lax.switch``. ``index`` (an integer scalar) is
    clamped into range first, as JAX does; only the branch taken runs (a balanced tree of
    ``cond``s, one level per halving).

    Raises:
        DTypeError: ``index`` is not an integer scalar.
        GraphTypeError: no branches, or branches that return different structures or types.

    Example:
        >>> y = switch(i, [lambda v: v, lambda v: 2 * v, rt.exp], x)
    """
    i = as_var(index, context="switch: index")
    if i.ndim != 0 or i.type.kind not in "iu":
        raise DTypeError(f"switch: index must be an integer scalar, got {i.type}")
    branches = list(branches)
    if not branches or not all(callable(b) for b in branches):
        raise GraphTypeError("switch: branches must be a non-empty sequence of functions")
    clamped = i if len(branches) == 1 else minimum(maximum(i, 0), len(branches) - 1)

    def choose(lo: int, hi: int, *ops: Any) -> Any:
        if hi - lo == 1:
            return branches[lo](*ops)
        mid = (lo + hi) // 2
        return cond(
            clamped < mid,
            lambda *o: choose(lo, mid, *o),
            lambda *o: choose(mid, hi, *o),
            *ops,
        )

    return choose(0, len(branches), *operands)
