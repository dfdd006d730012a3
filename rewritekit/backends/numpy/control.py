"""NumPy implementations of the control-flow Ops (``rewritekit.tensor.control``): Python
loops and branches over the inner graphs, each lowered once with this backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.backends.lowering import lower
from rewritekit.backends.numpy import _implement, numpy_funcify
from rewritekit.errors import ShapeError
from rewritekit.ir import Apply
from rewritekit.ir.inner import InnerGraph
from rewritekit.tensor import control as cf


def _compiled(graph: InnerGraph) -> Callable[..., list[Any]]:
    return lower(graph.inputs, graph.outputs, _implement)


def _results(values: list[Any]) -> Any:
    """What the lowering expects of a node: the value itself when there is one output."""
    return values[0] if len(values) == 1 else list(values)


def _cast(values: list[Any], types: Any) -> list[np.ndarray]:
    return [np.asarray(v, dtype=t.dtype) for v, t in zip(values, types, strict=True)]


def scan_length(
    op: cf.Scan, node: Apply, seqs: list[Any], shape: Callable[[Any], tuple[int, ...]]
) -> int:
    """The number of steps: the sequences' common leading length (or ``op.length``); an
    error naming the sequences (by position, and by name where the outer Var has one) and
    their lengths where they differ."""
    lengths = [shape(s)[0] for s in seqs]
    if op.length is not None:
        lengths.append(op.length)
    if len(set(lengths)) > 1:
        outer = node.inputs[op.n_carry : op.n_carry + op.n_seq]
        shown = ", ".join(
            f"sequence {i}{_named(v)}: {n}"
            for i, (v, n) in enumerate(zip(outer, lengths[: len(seqs)], strict=True))
        )
        extra = f", length: {op.length}" if op.length is not None else ""
        raise ShapeError(f"scan: the sequences' leading lengths differ ({shown}{extra})")
    return lengths[0]


def _named(var: Any) -> str:
    name = getattr(var, "name", None)
    shown = name and var.owner is None and not name.startswith("%")  # not a placeholder
    return f" ({name!r})" if shown else ""


@numpy_funcify.register(cf.Scan)
def _scan(op: cf.Scan, node: Apply) -> Callable[..., Any]:
    body = _compiled(op.body)
    nc, ns = op.n_carry, op.n_seq
    carry_types = op.body.input_types[:nc]
    y_types = op.body.output_types[nc:]

    def run(*args: Any) -> list[Any]:
        carry = _cast(list(args[:nc]), carry_types)
        seqs = [np.asarray(s) for s in args[nc : nc + ns]]
        consts = list(args[nc + ns :])
        length = scan_length(op, node, seqs, np.shape)
        steps = range(length - 1, -1, -1) if op.reverse else range(length)
        ys: list[list[Any]] = [[None] * length for _ in y_types]
        for t in steps:
            outs = body(*carry, *(s[t] for s in seqs), *consts)
            carry = _cast(outs[:nc], carry_types)
            for store, y, ty in zip(ys, outs[nc:], y_types, strict=True):
                store[t] = np.asarray(y, dtype=ty.dtype)
        if length == 0 and y_types:
            stacked = _empty_ys(y_types, lambda: body(*carry, *_probe(seqs), *consts)[nc:])
        else:
            stacked = [np.stack(store) if store else None for store in ys]
        return _results([*carry, *stacked])

    return run


def _empty_ys(types: Any, evaluate: Callable[[], list[Any]]) -> list[np.ndarray]:
    """The stacked ys of a scan that ran no step: their static shapes where the types give
    them; else one evaluation of the body (at zero slices) tells them, which runs only
    then (a body may not end at zero slices, a while loop in it for one)."""
    if all(None not in t.shape for t in types):
        return [np.zeros((0, *t.shape), t.dtype) for t in types]
    outs = evaluate()
    return [np.zeros((0, *np.shape(y)), t.dtype) for y, t in zip(outs, types, strict=True)]


def _probe(seqs: list[np.ndarray]) -> list[np.ndarray]:
    return [np.zeros(s.shape[1:], s.dtype) for s in seqs]


@numpy_funcify.register(cf.While)
def _while(op: cf.While, node: Apply) -> Callable[..., Any]:
    cond = _compiled(op.cond_graph)
    body = _compiled(op.body_graph)
    n = op.n_state
    types = op.body_graph.input_types[:n]

    def run(*args: Any) -> list[Any]:
        state = _cast(list(args[:n]), types)
        consts = list(args[n:])
        while bool(cond(*state, *consts)[0]):
            state = _cast(body(*state, *consts), types)
        return _results(state)

    return run


@numpy_funcify.register(cf.Cond)
def _cond(op: cf.Cond, node: Apply) -> Callable[..., Any]:
    branches = (_compiled(op.false_graph), _compiled(op.true_graph))
    types = [o.type for o in node.outputs]

    def run(pred: Any, *operands: Any) -> list[Any]:
        return _results(_cast(branches[bool(pred)](*operands), types))

    return run


@numpy_funcify.register(cf.Blockwise)
def _blockwise(op: cf.Blockwise, node: Apply) -> Callable[..., Any]:
    """The core, run once per element of the batch axes; the results stacked."""
    body = _compiled(op.core)
    nb = op.batch_ndim
    core_types = op.core.output_types

    def run(*args: Any) -> Any:
        arrays = [np.asarray(a) for a in args]
        batched = [i for i, b in enumerate(op.batched) if b]
        shape = arrays[batched[0]].shape[:nb]
        for i in batched[1:]:
            if arrays[i].shape[:nb] != shape:
                raise ShapeError(
                    f"blockwise: input {batched[0]} has batch shape {shape} and input {i} "
                    f"{arrays[i].shape[:nb]}"
                )
        results = [
            _cast(
                body(*[a[index] if b else a for a, b in zip(arrays, op.batched, strict=True)]),
                core_types,
            )
            for index in np.ndindex(*shape)
        ]
        if not results:
            if any(None in t.shape for t in core_types):
                raise ShapeError("blockwise: an empty batch needs static core output shapes")
            return _results([np.empty((*shape, *t.shape), t.dtype) for t in core_types])
        return _results(
            [
                np.stack([r[m] for r in results]).reshape(*shape, *results[0][m].shape)
                for m in range(len(core_types))
            ]
        )

    return run
