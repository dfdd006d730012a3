"""Log-densities of scans that draw random variables: time series.

A model written with ``rk.scan`` draws a random variable at each step (the key threaded
through the carry) and stacks the draws into a ``y`` output of the loop. Given a value for
that stacked output (one array, the steps along its first axis), its log-density is a scan
too: at step ``t`` it is the density of the body's draw at the value's slice ``t``, and the
carry that the next step starts from is computed from the *values*, not the draws (each
valued draw is replaced by its value slice inside the body). So the density of step ``t`` is
conditioned on the values of the steps before it, and the sum over the steps is the joint
log-density of the path.

The scan this builds (``scan_logprob``):

- takes each valued ``y``'s value as a new sequence, and computes the log-density of every
  valued ``y`` of the loop, conditioned on all of their values (the terms of ``h`` and ``y``
  in a stochastic-volatility model are the two outputs of one loop);
- keeps only the carries those densities need (the key, whose next value only the draws
  read, goes);
- turns a carry that the body computes from values alone (``x_t`` in a random walk, AR(1)
  or a latent path) into a sequence: the initial carry followed by the values shifted by
  one step. Then the body reads no carry, and the loop rules of ``rules="default"``
  (``vectorize_scan``) turn the loop into elementwise operations on whole arrays and a sum.
  A true recurrence (GARCH's volatility, computed from its own previous value) stays a loop.

Example:
    >>> key = rr.key()
    >>> def step(carry, _):
    ...     k, x = carry
    ...     k, x = rr.normal(k, x, 1.0)  # a Gaussian random walk
    ...     return (k, x), x
    >>> _, path = rk.scan(step, (key, 0.0), length=100)
    >>> lp = rl.joint_logprob({path: rt.vector("path")})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Apply, Var, apply_op, graph_inputs, replace, short_name, toposort
from rewritekit.ir.inner import close_over
from rewritekit.logprob.transforms import Interval, Transform
from rewritekit.random import is_draw
from rewritekit.tensor.control import Scan
from rewritekit.tensor.random import RandomVariable

__all__ = [
    "describe",
    "draws_inside",
    "is_scan_output",
    "lift_draws",
    "scan_logprob",
    "step_transform",
]

StepLogprob = Callable[[Var, Var], Var]
Pairs = list[tuple[Var, Var]]  # (a body's fresh Var, the outer Var it stands for)


def is_scan_output(x: object) -> bool:
    """True when ``x`` is an output of a ``Scan`` node (a final carry or a stacked ``y``)."""
    owner = getattr(x, "owner", None)
    return owner is not None and isinstance(owner.op, Scan)


def draws_inside(x: Var) -> bool:
    """True when ``x`` is an output of a scan whose body draws a random variable."""
    return is_scan_output(x) and _has_draws(x.owner.op.body.outputs)


def describe(x: Var) -> str:
    """Text naming a scan output in errors: ``y 1 of the scan (its output 3)``."""
    node = x.owner
    nc = node.op.n_carry
    if x.index < nc:
        return f"the final carry {x.index} of the scan"
    return f"y {x.index - nc} of the scan (its output {x.index})"


def scan_logprob(x: Var, value: Var, given: Mapping[int, Var], step_logprob: StepLogprob) -> Var:
    """The log-density of the stacked ``y`` output ``x`` of a scan at ``value``, per step.

    Args:
        x: a stacked ``y`` output of a ``Scan`` whose body computes a random quantity for
            that ``y`` at each step (a draw, or an image of one that ``logprob`` inverts).
        value: its value, shape ``(steps, ...)``.
        given: the values of other stacked outputs of the same scan node, by output index:
            the body is conditioned on them as on ``value``.
        step_logprob: ``(body quantity, value slice) -> log-density`` (``logprob``).

    Returns:
        The log-densities of the steps, stacked: shape ``(steps, *batch)``.

    Raises:
        GraphTypeError: ``x`` is a final carry; the density of a step depends on a draw
            inside the body that has no value; no density is found for the body's ``y``.
    """
    node = x.owner
    if x.index < node.op.n_carry:
        raise GraphTypeError(
            f"joint_logprob: {describe(x)} cannot take a value; give values to the scan's "
            "stacked y outputs (the draws of every step) instead"
        )
    steps = x.type.shape[0]
    values = {i: _with_length(v, steps) for i, v in {**given, x.index: value}.items()}
    return _density_scan(lift_draws(x).owner, values, step_logprob)[x.index]


def _with_length(value: Var, steps: int | None) -> Var:
    """``value`` with the loop's static number of steps as its static leading length (a
    reshape, which checks it at run time), so that the loop rules see equal lengths."""
    if steps is None or value.ndim == 0 or value.type.shape[0] is not None:
        return value
    rest = [d if d is not None else rt.shape_i(value, a) for a, d in enumerate(value.type.shape)]
    return rt.reshape(value, (steps, *rest[1:]))


def step_transform(x: Var, choose: Callable[[Var], Transform | None]) -> Transform | None:
    """The transform ``choose`` gives the body's draw of the stacked output ``x``, to apply
    to the whole stacked value: None where it reads a value of the body (the bounds of an
    ``interval`` that the body computes), or ``x`` is a final carry."""
    op = x.owner.op
    if x.index < op.n_carry:
        return None
    transform = choose(op.body.outputs[x.index])
    if isinstance(transform, Interval):
        bounds = [b for b in (transform.lower, transform.upper) if isinstance(b, Var)]
        if bounds and graph_inputs(bounds):
            return None
    return transform


def lift_draws(x: Var) -> Var:
    """``x``, an output of a scan, with the draws its body reads but computes from no carry
    or sequence (such as a model's parameter ``sigma ~ HalfNormal``, which the body closed
    over and tracing copied into it) read from outside the loop instead.

    Both compute the same values (the same key gives the same draw at every step), but only
    outside the loop is the draw the model's ``sigma``, the Var that ``joint_logprob``
    replaces by its value.
    """
    node = x.owner
    op: Scan = node.op  # type: ignore[assignment]
    nc, ns = op.n_carry, op.n_seq
    fresh = [Var(t) for t in op.body.input_types]
    outs = op.body.apply(fresh)
    fixed = _invariant_draws(outs, fresh[: nc + ns])
    if not fixed:
        return x
    outer = replace(fixed, dict(zip(fresh[nc + ns :], node.inputs[nc + ns :], strict=True)))
    stand_ins = [Var(v.type) for v in fixed]
    moved = replace(list(outs), dict(zip(fixed, stand_ins, strict=True)))
    graph, free = close_over([*fresh, *stand_ins], moved)
    lifted = Scan(graph, nc, ns, op.length, op.reverse, op.checkpoint)
    return apply_op(lifted, (*node.inputs, *outer, *free))[x.index]


def _invariant_draws(outs: list[Var], moving: list[Var]) -> list[Var]:
    """The body values that hold a draw, read no ``moving`` input, and are read by a value
    that does (or are outputs): what ``lift_draws`` reads from outside."""
    variant = set(moving)
    drawn: set[Var] = set()
    order = toposort(outs)
    for inner in order:
        if any(i in variant for i in inner.inputs):
            variant.update(inner.outputs)
        elif _draws(inner.op) or any(i in drawn for i in inner.inputs):
            drawn.update(inner.outputs)
    found: dict[Var, None] = {}
    for inner in order:
        if inner.outputs[0] in variant:
            found.update((i, None) for i in inner.inputs if i in drawn)
    found.update((o, None) for o in outs if o in drawn)
    return list(found)


def _has_draws(outputs: Sequence[Var]) -> bool:
    return any(_draws(node.op) for node in toposort(list(outputs)))


def _draws(op: object) -> bool:
    """Whether nodes of ``op`` draw: a random variable, or a loop or branch holding one."""
    if isinstance(op, RandomVariable):
        return True
    graphs = getattr(op, "inner_graphs", None) or ()
    return any(_has_draws(g.outputs) for g in graphs)


def _slice_of(value: Var, like: Var) -> Var:
    """A fresh Var for one step of ``value`` (its first axis dropped)."""
    if value.ndim != like.ndim + 1:
        raise ShapeError(
            f"joint_logprob: the value {short_name(value)} ({value.type}) must have one more "
            f"axis than each step's draw ({like.type}): the steps first"
        )
    return Var(value.type.with_shape(value.type.shape[1:]), f"{short_name(value)}[t]")


def _standing_for(v: Var, y: Var) -> Var:
    """The value slice ``v`` in the type of the body's ``y`` it replaces."""
    if v.dtype != y.dtype:
        v = rt.cast(v, y.dtype)
    if v.type.shape != y.type.shape and None not in y.type.shape:
        v = rt.reshape(v, y.type.shape)
    return v


def _density_scan(node: Apply, values: Mapping[int, Var], step: StepLogprob) -> dict[int, Var]:
    """The per-step log-densities of the valued outputs of ``node`` (by output index), the
    ``y`` outputs of one scan conditioned on all of the values."""
    op: Scan = node.op  # type: ignore[assignment]
    nc = op.n_carry
    order = sorted(values)
    carry_pairs, seqs, consts, outs = _opened(node)
    carries = [fresh for fresh, _ in carry_pairs]
    ys = {i: outs[i] for i in order}  # output index i of the node is body output i
    v_t = {i: _slice_of(values[i], ys[i]) for i in order}
    stand_in: dict[Var, Var] = {}
    for i in order:
        if ys[i] in stand_in:
            raise GraphTypeError(
                f"joint_logprob: {describe(node.outputs[i])} is the same body value as "
                "another valued y of the scan; give it one value"
            )
        stand_in[ys[i]] = _standing_for(v_t[i], ys[i])
    new_carries = replace(list(outs[:nc]), stand_in) if nc else []
    logps = []
    for i in order:
        others = {k: w for k, w in stand_in.items() if k is not ys[i]}
        y_given = replace(ys[i], others) if others else ys[i]
        logps.append(_step_density(node.outputs[i], y_given, v_t[i], step))
    live = _needed_carries(carries, new_carries, logps)
    _check_no_draws_left(node, outs, [new_carries[c] for c in live] + logps)
    density = _scan(
        op,
        [carry_pairs[c] for c in live],
        [*seqs, *((v_t[i], values[i]) for i in order)],
        consts,
        [*(new_carries[c] for c in live), *logps],
    )
    stacked = _without_value_carries(density)
    return dict(zip(order, stacked, strict=True))


def _step_density(x: Var, y: Var, v: Var, step: StepLogprob) -> Var:
    try:
        return step(y, v)
    except GraphTypeError as exc:
        raise GraphTypeError(
            f"logprob: found no log-density for {describe(x)}: at each step, {exc}"
        ) from None


def _needed_carries(carries: list[Var], new: list[Var], logps: list[Var]) -> list[int]:
    """The carries the densities read, directly or through other needed carries."""
    position = {c: n for n, c in enumerate(carries)}
    live: set[int] = set()
    frontier = list(logps)
    while frontier:
        found = {position[v] for v in graph_inputs(frontier) if v in position} - live
        live |= found
        frontier = [new[c] for c in found]
    return sorted(live)


def _check_no_draws_left(node: Apply, outs: list[Var], results: list[Var]) -> None:
    """Raise if a density (or a carry it needs) still reads a draw of the body."""
    for inner in toposort(results):
        if not _draws(inner.op):
            continue
        drawn = [o for o in inner.outputs if is_draw(o)] or list(inner.outputs)
        named = [j for j in range(node.op.n_carry, len(outs)) if outs[j] in drawn]
        which = (
            f"the draw of {describe(node.outputs[named[0]])}, which has no value; give it one"
            if named
            else f"a {inner.op.name} draw inside the body that is not one of its stacked y "
            "outputs (only those can take values)"
        )
        raise GraphTypeError(
            f"joint_logprob: the log-density of the scan's valued outputs depends on {which}"
        )


def _without_value_carries(node: Apply) -> list[Var]:
    """The stacked ``y`` outputs of the scan ``node``, rebuilt so that every carry whose
    new value the body computes without reading a carry becomes a sequence: the initial
    carry, then that value at each step but the last (shifted the other way when the loop
    runs in reverse). Repeated, so carries computed from those follow."""
    while True:
        op: Scan = node.op  # type: ignore[assignment]
        body, nc = op.body, op.n_carry
        carry_inputs = set(body.inputs[:nc])
        moved = [
            c for c in range(nc) if not carry_inputs.intersection(graph_inputs([body.outputs[c]]))
        ]
        if not moved:
            return list(node.outputs[nc:])
        node = _carries_as_sequences(node, moved)


def _carries_as_sequences(node: Apply, moved: list[int]) -> Apply:
    op: Scan = node.op  # type: ignore[assignment]
    nc = op.n_carry
    carries, seqs, consts, outs = _opened(node)
    kept = [c for c in range(nc) if c not in moved]
    shifted = [_shifted(node.inputs[c], _new_values(op, outs[c], seqs, consts), op) for c in moved]
    return _scan(
        op,
        [carries[c] for c in kept],
        [*seqs, *((carries[c][0], s) for c, s in zip(moved, shifted, strict=True))],
        consts,
        [*(outs[c] for c in kept), *outs[nc:]],
    )


def _new_values(op: Scan, new: Var, seqs: Pairs, consts: Pairs) -> Var:
    """The values the body gives a carry at every step, stacked, where it reads no carry:
    a sequence itself, or a loop-free scan (a map) over the sequences."""
    for fresh, outer in seqs:
        if new is fresh:
            return outer
    return _scan(op, [], seqs, consts, [new]).outputs[0]


def _shifted(init: Var, values: Var, op: Scan) -> Var:
    """The carry each step starts from: ``init`` at the first step, then the value the
    step before gave it."""
    first = rt.expand_dims(init, 0)
    if op.reverse:
        return rt.concatenate([values, first])[1:]
    return rt.concatenate([first, values])[:-1]


def _opened(node: Apply) -> tuple[Pairs, Pairs, Pairs, list[Var]]:
    """The body of the scan ``node`` over fresh Vars: (carries, sequences, closed-over
    values) as pairs (fresh Var, the outer Var it stands for), and the body's outputs."""
    op: Scan = node.op  # type: ignore[assignment]
    nc, ns = op.n_carry, op.n_seq
    fresh = [Var(t) for t in op.body.input_types]
    pairs = list(zip(fresh, node.inputs, strict=True))
    return pairs[:nc], pairs[nc : nc + ns], pairs[nc + ns :], op.body.apply(fresh)


def _scan(op: Scan, carries: Pairs, seqs: Pairs, consts: Pairs, results: list[Var]) -> Apply:
    """The scan node, like ``op``, of the body ``results`` (new carries, then ys) over the
    fresh Vars of ``carries``, ``seqs`` and ``consts``; the sequences and closed-over values
    the body does not read are left out (one sequence stays if it gives the length)."""
    read = set(graph_inputs(results))
    length = op.length
    if length is None:
        length = next((o.type.shape[0] for _, o in seqs if o.type.shape[0] is not None), None)
    kept_seqs = [(f, o) for f, o in seqs if f in read] or (seqs[:1] if length is None else [])
    kept_consts = [(f, o) for f, o in consts if f in read]
    args = [f for f, _ in (*carries, *kept_seqs, *kept_consts)]
    graph, free = close_over(args, results)
    new_op = Scan(graph, len(carries), len(kept_seqs), length, op.reverse, op.checkpoint)
    outer = [o for _, o in (*carries, *kept_seqs, *kept_consts)]
    return apply_op(new_op, (*outer, *free))[0].owner
