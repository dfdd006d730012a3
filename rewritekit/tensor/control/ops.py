"""The Ops of control flow: ``Scan``, ``While`` and ``Cond``.

A loop or branch is one node whose parameters hold its inner graphs
(``rewritekit.ir.inner``: graphs over canonical placeholders, hash-consed like the rest)
and whose inputs are the outer Vars: initial carries, scanned sequences, and the values
the traced functions closed over. ``rewritekit.tensor.control.api`` builds them from
Python functions; their derivatives are in ``rewritekit.tensor.control.derivatives``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Grads, Op, TensorType, Var, Vars, apply_op, toposort
from rewritekit.ir.inner import InnerGraph
from rewritekit.tensor.control.derivatives import (
    checkpointed_vjp,
    cond_jvp,
    cond_vjp,
    scan_jvp,
    scan_vjp,
    while_jvp,
)

__all__ = ["Cond", "Scan", "While"]


def _pure(graphs: Sequence[InnerGraph]) -> bool:
    """True when no node of the graphs is marked ``foldable = False`` (a random draw)."""
    return all(getattr(node.op, "foldable", True) for g in graphs for node in toposort(g.outputs))


class _Control(Op):
    """What loops and branches share: inner graphs, purity, rebuilding."""

    abstract = True
    _graph_props: tuple[str, ...] = ()

    @property
    def inner_graphs(self) -> tuple[InnerGraph, ...]:
        """The graphs this Op holds, in the order ``with_inner_graphs`` takes them."""
        return tuple(getattr(self, p) for p in self._graph_props)

    def with_inner_graphs(self, graphs: Sequence[InnerGraph]) -> _Control:
        """This Op around other inner graphs of the same input and output types."""
        values = {p: getattr(self, p) for p in type(self).__props__}
        values.update(zip(self._graph_props, graphs, strict=True))
        return type(self)(**values)

    def __str__(self) -> str:  # the inner graphs are printed beneath the node (dprint)
        shown = ", ".join(
            f"{p}={getattr(self, p)!r}" for p in type(self).__props__ if p not in self._graph_props
        )
        return f"{type(self).__name__}{{{shown}}}" if shown else type(self).__name__

    @property
    def foldable(self) -> bool:
        """Constant-folded only when no random draw runs inside."""
        cache = self.__dict__
        found = cache.get("_rk_pure")
        if found is None:
            found = cache["_rk_pure"] = _pure(self.inner_graphs)
        return found


def _check_inputs(what: str, expected: Sequence[TensorType], given: Sequence[TensorType]) -> None:
    for position, (want, have) in enumerate(zip(expected, given, strict=True)):
        if not want.is_compatible(have):
            raise GraphTypeError(
                f"{what}: input {position} has type {have}, but the inner graph expects {want}"
            )


class Scan(_Control):
    """A loop over the leading axis of sequences, with carried state (``lax.scan``).

    Parameters:
        body: the inner graph ``(*carry, *x_slices, *consts) -> (*new_carry, *ys)``.
        n_carry: how many carries; n_seq: how many sequences.
        length: the number of steps when known statically (required without sequences).
        reverse: run from the last element to the first.
        checkpoint: the reverse-mode derivative stores the carry only every
            ``ceil(sqrt(length))`` steps and recomputes the others block by block (the
            forward itself is unchanged).

    Inputs: the initial carries, the sequences, the closed-over values. Outputs: the final
    carries, then each ``y`` stacked along a new leading axis of the loop's length.
    """

    __props__ = ("body", "n_carry", "n_seq", "length", "reverse", "checkpoint")
    _graph_props = ("body",)
    #: never evaluated while rewriting (constant folding): a loop's cost has no bound
    foldable = False
    body: InnerGraph
    n_carry: int
    n_seq: int
    length: int | None
    reverse: bool
    checkpoint: bool

    def __init__(
        self,
        body: InnerGraph,
        n_carry: int,
        n_seq: int,
        length: int | None,
        reverse: bool,
        checkpoint: bool = False,
    ) -> None:
        super().__init__(body, n_carry, n_seq, length, reverse, checkpoint)

    def __str__(self) -> str:  # checkpoint shown only when set
        shown = ", ".join(f"{p}={getattr(self, p)!r}" for p in self.__props__[1:5])
        return f"Scan{{{shown}{', checkpoint=True' if self.checkpoint else ''}}}"

    def infer_types(self, *types: TensorType) -> tuple[TensorType, ...]:
        body, nc, ns = self.body, self.n_carry, self.n_seq
        if len(types) != len(body.inputs):
            raise GraphTypeError(f"scan: expected {len(body.inputs)} inputs, got {len(types)}")
        carry_t = body.input_types[:nc]
        slice_t = body.input_types[nc : nc + ns]
        seqs = types[nc : nc + ns]
        _check_inputs("scan", carry_t, types[:nc])
        _check_inputs("scan", body.input_types[nc + ns :], types[nc + ns :])
        length = self.length
        for position, (seq, want) in enumerate(zip(seqs, slice_t, strict=True)):
            if seq.ndim == 0:
                raise ShapeError(f"scan: sequence {position} is a scalar; it needs a leading axis")
            if not want.is_compatible(seq.with_shape(seq.shape[1:])):
                raise GraphTypeError(
                    f"scan: sequence {position} has type {seq}, whose slices do not have the "
                    f"body's type {want}"
                )
            lead = seq.shape[0]
            if lead is not None and length is not None and lead != length:
                raise ShapeError(
                    f"scan: sequence {position} has leading length {lead}, but the loop "
                    f"runs {length} steps"
                )
            length = lead if length is None else length
        ys = body.output_types[nc:]
        return (*carry_t, *(t.with_shape((length, *t.shape)) for t in ys))

    def history(self, inputs: Vars) -> list[Var]:
        """The carry each step starts from, stacked (length, *carry): what a reverse sweep
        of a checkpointed loop reads."""
        return self.stored(inputs, self.body.inputs[: self.n_carry])

    def stored(self, inputs: Vars, values: Sequence[Var]) -> list[Var]:
        """``values`` (Vars of the body, over its placeholders) at every step, stacked
        (length, *value). The scan that answers them is this one with ``values`` added to
        its ``ys``, so its other outputs are this node's (``merge_scans`` keeps one of the
        two)."""
        if not values:
            return []
        body = self.body
        wider = body.with_outputs([*body.outputs, *values])
        outs = apply_op(
            Scan(wider, self.n_carry, self.n_seq, self.length, self.reverse), tuple(inputs)
        )
        return list(outs[len(outs) - len(values) :])

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        if self.checkpoint:
            return checkpointed_vjp(self, inputs, cotangents)
        return scan_vjp(self, inputs, cotangents)

    def jvp(self, inputs: Vars, outputs: Vars, tangents: Sequence[Var | None]) -> list[Var | None]:
        """A scan of (carry, tangent carry) whose body is this body and its jvp; it outputs
        the final tangents and the ys' tangents."""
        return scan_jvp(self, inputs, tangents)


class While(_Control):
    """``while cond(state): state = body(state)`` (``lax.while_loop``).

    Parameters:
        cond_graph: ``(*state, *consts) -> pred`` (a bool scalar).
        body_graph: ``(*state, *consts) -> new state``.
        n_state: how many state values.

    Inputs: the initial state, then the closed-over values. Outputs: the final state.
    Forward-mode derivatives only (``jvp``); reverse mode needs ``max_steps``.
    """

    __props__ = ("cond_graph", "body_graph", "n_state")
    _graph_props = ("cond_graph", "body_graph")
    foldable = False  # as Scan's
    cond_graph: InnerGraph
    body_graph: InnerGraph
    n_state: int

    def infer_types(self, *types: TensorType) -> tuple[TensorType, ...]:
        if len(types) != len(self.body_graph.inputs):
            raise GraphTypeError(
                f"while_loop: expected {len(self.body_graph.inputs)} inputs, got {len(types)}"
            )
        _check_inputs("while_loop", self.body_graph.input_types, types)
        return self.body_graph.input_types[: self.n_state]

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        raise NotImplementedError(
            "while_loop has no reverse-mode derivative without a bound on its steps: pass "
            "max_steps=N to rk.while_loop (it then runs as a scan of N steps with a done-mask "
            "and reverse mode works), or use rk.jvp (forward mode)"
        )

    def jvp(self, inputs: Vars, outputs: Vars, tangents: Sequence[Var | None]) -> list[Var | None]:
        """A while loop over (state, tangent state) under the same condition, whose body is
        this body and its jvp."""
        return while_jvp(self, inputs, tangents)


class Cond(_Control):
    """``true_graph(*operands) if pred else false_graph(*operands)``, lazily
    (``lax.cond``): only the branch taken runs.

    Parameters:
        true_graph, false_graph: inner graphs over the same inputs
            ``(*operands, *consts)``, with outputs of the same types.

    Inputs: ``pred`` (a bool scalar), then the operands and closed-over values.
    """

    __props__ = ("true_graph", "false_graph")
    _graph_props = ("true_graph", "false_graph")
    true_graph: InnerGraph
    false_graph: InnerGraph

    def infer_types(self, pred: TensorType, *types: TensorType) -> tuple[TensorType, ...]:
        if pred.ndim != 0 or pred.dtype != "bool":
            raise DTypeError(f"cond: pred must be a bool scalar, got {pred}")
        if len(types) != len(self.true_graph.inputs):
            raise GraphTypeError(
                f"cond: expected {len(self.true_graph.inputs)} operands, got {len(types)}"
            )
        _check_inputs("cond", self.true_graph.input_types, types)
        return _merged_types(self.true_graph.output_types, self.false_graph.output_types)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        """The cond, under the same predicate, of the branches' vjps."""
        return cond_vjp(self, inputs, outputs, cotangents)

    def jvp(self, inputs: Vars, outputs: Vars, tangents: Sequence[Var | None]) -> list[Var | None]:
        """The cond, under the same predicate, of the branches' jvps."""
        return cond_jvp(self, inputs, outputs, tangents)


def _merged_types(a: Sequence[TensorType], b: Sequence[TensorType]) -> tuple[TensorType, ...]:
    if len(a) != len(b):
        raise GraphTypeError(f"cond: the branches return {len(a)} and {len(b)} values")
    merged = []
    for position, (s, t) in enumerate(zip(a, b, strict=True)):
        if not s.is_compatible(t):
            raise GraphTypeError(
                f"cond: output {position} is {s} in the true branch and {t} in the false "
                "branch; both branches must return the same types"
            )
        shape = (x if x == y else None for x, y in zip(s.shape, t.shape, strict=True))
        merged.append(s.with_shape(shape))
    return tuple(merged)
