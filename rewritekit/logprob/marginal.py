"""Summing out bounded discrete draws that have no value, for ``joint_logprob``.

A bounded discrete draw ``z`` (bernoulli, categorical, discrete_uniform, binomial with a
constant ``n``; at most ``MAX_SUPPORT`` values) that has no value but that terms of a joint
density read is summed out by enumeration: the terms that read ``z`` and ``log P(z)`` are
computed at each value ``k`` of its support, and their ``logsumexp`` over ``k`` replaces
them, one element of ``z`` at a time. That is exact when each element of a term reads one
element of ``z``, at the same position (``y[i] ~ Normal(mu[z[i]], s)``), or ``z`` has one
element; a walk over each term's graph checks it, and anything else is an error naming
``z`` and the Op that mixes its elements.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.ir import Apply, Constant, Var, replace, toposort
from rewritekit.ir.types import shape_str
from rewritekit.logprob import loops
from rewritekit.logprob.measurable import draws_in, local_ancestors
from rewritekit.tensor import random as rv
from rewritekit.tensor.aggregates import Reduce
from rewritekit.tensor.indexing import ARRAY
from rewritekit.tensor.joining import Concatenate
from rewritekit.tensor.layout import BroadcastTo, ExpandDims, Squeeze, Transpose
from rewritekit.tensor.reduction import sum as _sum
from rewritekit.tensor.shape_vectors import Shape, ShapeI
from rewritekit.tensor.subtensor import Subtensor
from rewritekit.tensor.ufunc import Elemwise

__all__ = [
    "MAX_SUPPORT",
    "Term",
    "describe",
    "in_graph_order",
    "shared_latents",
    "sum_out_latents",
]

Given = Callable[[Var], Var]
Density = Callable[[Var, Var], Var]


def describe(x: Var) -> str:
    """Text naming a random quantity in errors (a scan's output, or a draw)."""
    return loops.describe(x) if loops.is_scan_output(x) else rv.describe(x)


def in_graph_order(graphs: list[Var], xs: list[Var]) -> list[Var]:
    """``xs`` with every variable after those it depends on, as ``graphs`` (one per ``x``,
    its graph with the draws a scan reads lifted out of its body) compute them."""
    position = {node: i for i, node in enumerate(toposort(graphs))}
    where = {x: position.get(g.owner, -1) for x, g in zip(xs, graphs, strict=True)}
    return sorted(xs, key=where.__getitem__)


#: The most values a draw that is summed out may take (a binomial's n is at most 127).
MAX_SUPPORT = 128

_SUMMED = (
    "bernoulli, bernoulli_logit, categorical, discrete_uniform and binomial with constant "
    f"bounds, at most {MAX_SUPPORT} values"
)


@dataclass(frozen=True, eq=False)
class Term:
    """A term before its sum: its name, its description for errors, its graph."""

    name: str
    what: str
    graph: Var


class NoFactor(Exception):
    """A term's elements do not each read one element of the draw summed out."""


def shared_latents(readers: list[Sequence[Var]], valued: Collection[Var]) -> dict[Var, Var]:
    """``{z: stand-in}`` for the bounded discrete draws, not among ``valued``, that more
    than one of ``readers`` (each a group of graphs: a random quantity's parameters or its
    image, a potential's term) reads directly."""
    count: dict[Var, int] = {}
    for group in readers:
        for z in {d for root in group for d in draws_in(root)}:
            if z not in valued and _support(z)[0] is not None:
                count[z] = count.get(z, 0) + 1
    return {z: Var(z.type, "summed") for z, n in count.items() if n > 1}


def sum_out_latents(
    terms: list[Term], shared: dict[Var, Var], given: Given, density: Density
) -> list[Term]:
    """``terms`` with every bounded discrete draw they read (and each of ``shared``, read
    through its stand-in) summed out, the one latest in the model first, so that a draw
    whose parameters read another goes before it. ``given(v)`` is ``v`` with the random
    quantities that have values replaced by them; ``density(z, value)`` is ``logprob``."""
    left = dict(shared)
    while True:
        latents: list[Var] = list(left)
        for term in terms:
            for draw in draws_in(term.graph):
                _check_summable(term, draw)
                if all(draw is not z for z in latents):
                    latents.append(draw)
        if not latents:
            return terms
        z = in_graph_order(latents, latents)[-1]
        terms = _sum_out(z, terms, given, density, left.pop(z, None))


def _support(z: Var) -> tuple[np.ndarray | None, str]:
    """The values the bounded discrete draw ``z`` can take, or None and the reason why not."""
    op, params = z.owner.op, z.owner.inputs[2:]
    if op.name in ("bernoulli", "bernoulli_logit"):
        return np.arange(2), ""
    if op.name == "categorical":
        k = params[0].type.shape[-1]
        if k is None:
            return None, "its number of categories is not static"
        return np.arange(k), ""
    bounds = {"binomial": (0, params[0]), "discrete_uniform": tuple(params)}.get(op.name)
    if bounds is None:
        return None, "it is unbounded" if op.kind == "i" else "it is continuous"
    known = [b if isinstance(b, int) else _integer_constant(b) for b in bounds]
    if any(b is None for b in known):
        which = "its n is not an integer constant" if op.name == "binomial" else ""
        return None, which or "its bounds (lower, upper) are not integer constants"
    return np.arange(np.min(known[0]), np.max(known[1]) + 1), ""


def _integer_constant(var: Var) -> np.ndarray | None:
    if not isinstance(var, Constant):
        return None
    data = np.asarray(var.data)
    return data if data.size and np.all(np.round(data) == data) else None


def _check_summable(term: Term, z: Var) -> None:
    values, why = _support(z)
    if values is not None and 0 < len(values) <= MAX_SUPPORT:
        return
    message = (
        f"joint_logprob: {term.what} depends on {describe(z)}, which has no value; give it "
        "a value variable in the dict"
    )
    if z.type.kind in "iu":
        why = why or f"it takes {len(values)} values"
        message += f" (only bounded discrete variables are summed out: {_SUMMED}; {why})"
    raise GraphTypeError(message)


def _sum_out(
    z: Var, terms: list[Term], given: Given, density: Density, stand_in: Var | None
) -> list[Term]:
    """``terms`` with the draw ``z`` summed out of those that read it, or read
    ``stand_in`` in its place (see ``logprob_terms``)."""
    group = [
        t
        for t in terms
        if any(d is z for d in draws_in(t.graph))
        or (stand_in is not None and stand_in in local_ancestors(t.graph))
    ]
    stand_in = Var(z.type, "summed") if stand_in is None else stand_in
    z_given = given(z)
    own = Term("", f"the log-probability of {describe(z)}", density(z_given, stand_in))
    for draw in draws_in(own.graph):  # z's parameters read a draw with no value
        _check_summable(own, draw)
    required = {i for i, n in enumerate(z.type.shape) if n != 1}
    parts, apart = [], []
    for t in [own, *group]:
        graph = t.graph if t is own else replace(t.graph, {z: stand_in})
        labels = _axis_labels(graph, stand_in, required, z, t) if required else ()
        parts.append(_aligned(graph, labels, z.ndim))
        if labels is None:  # reads z's shape only
            apart.append(replace(graph, {stand_in: _filled(z_given, 0)}))
    combined = functools.reduce(operator.add, [p for p in parts if p is not None])
    values, _ = _support(z)
    copies = [replace(combined, {stand_in: _filled(z_given, int(k))}) for k in values]
    merged = rt.logsumexp(rt.stack(copies), axis=0)  # z's shape: summed when all are merged
    if apart:
        merged = functools.reduce(operator.add, [_sum(g) for g in apart], _sum(merged))
    names = "+".join(t.name for t in group)
    what = f"the log-density of {names} with {describe(z)} summed out"
    first = next(i for i, t in enumerate(terms) if t is group[0])
    later = [t for t in terms[first:] if all(t is not g for g in group)]
    return [*terms[:first], Term(names, what, merged), *later]


def _filled(z: Var, value: int) -> Var:
    """An array of ``z``'s shape holding ``value``, computed without drawing ``z``."""
    if None not in z.type.shape:
        return rt.full(z.type.shape, value, dtype=z.dtype)
    node = z.owner
    if node.op.size is not None:
        return rt.full(node.inputs[1], value, dtype=z.dtype)
    zeros = [
        rt.zeros_like(p[(..., *[0] * core)] if core else p, dtype=z.dtype)
        for p, core in zip(node.inputs[2:], node.op.ndims_params, strict=True)
    ]
    return functools.reduce(operator.add, zeros) + value


def _aligned(graph: Var, labels: tuple[int | None, ...] | None, ndim: int) -> Var | None:
    """``graph`` summed over its axes that no axis of z labels, its other axes in z's order
    (z's length-1 axes inserted): an array that broadcasts against z. With no labels (z has
    one element), its sum; None when it reads no element of z."""
    if labels is None:
        return None
    if not labels:
        return _sum(graph)
    free = tuple(i for i, label in enumerate(labels) if label is None)
    if free:
        graph = _sum(graph, axis=free)
    kept = [label for label in labels if label is not None]
    graph = rt.transpose(graph, sorted(range(len(kept)), key=kept.__getitem__))
    missing = tuple(i for i in range(ndim) if i not in kept)
    return rt.expand_dims(graph, missing) if missing else graph


Labels = tuple[int | None, ...]


def _axis_labels(out: Var, z: Var, required: set[int], draw: Var, term: Term) -> Labels | None:
    """For each axis of ``out``, the axis of ``z`` whose elements it reads (None: no axis),
    or None when ``out`` reads no element of ``z``.

    Follows ``z`` through the Ops that keep each element tied to one element of ``z``
    (elementwise Ops, reductions and indexing of other axes, ``mu[z]``, axis moves), and
    raises ``GraphTypeError`` where an element reads several elements of ``z``, or none.
    """
    labels: dict[Var, Labels] = {z: tuple(i if i in required else None for i in range(z.ndim))}
    for node in _local_nodes(out):
        if not any(inp in labels for inp in node.inputs):
            continue
        if isinstance(node.op, (Shape, ShapeI)):
            continue  # z's shape, not its values
        try:
            found = _node_labels(node, labels)
            present = [label for label in found if label is not None]
            if len(node.outputs) != 1 or sorted(present) != sorted(required):
                raise NoFactor
        except NoFactor:
            raise GraphTypeError(
                f"joint_logprob: cannot sum out {describe(draw)} (shape "
                f"{shape_str(draw.type.shape)}) element by "
                f"element: {term.what} does not factor over its elements (through "
                f"{node.op.name}, an element reads several elements of it, or none); give "
                f"{describe(draw)} a value, or draw it so that each element of the terms "
                "that read it reads one element of it"
            ) from None
        labels[node.outputs[0]] = found
    return labels.get(out)


def _local_nodes(out: Var) -> list[Apply]:
    """The nodes ``out`` is computed from, in order, not entering random variables."""
    order: list[Apply] = []
    seen: set[Apply] = set()
    stack = [(out.owner, False)] if out.owner is not None else []
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in seen or isinstance(node.op, rv.RandomVariable):
            continue
        seen.add(node)
        stack.append((node, True))
        stack.extend((i.owner, False) for i in node.inputs if i.owner is not None)
    return order


def _node_labels(node: Apply, labels: dict[Var, Labels]) -> Labels:
    """The labels of ``node``'s output from its inputs' (see ``_axis_labels``)."""
    op, inputs, rank = node.op, node.inputs, node.outputs[0].ndim
    first = labels.get(inputs[0])
    if isinstance(op, (Elemwise, Concatenate)):
        merged = _merged(inputs, labels, rank)
        if isinstance(op, Concatenate) and merged[op.axis] is not None:
            raise NoFactor
        return merged
    if any(inp in labels for inp in inputs[1:]) and not isinstance(op, Subtensor):
        raise NoFactor
    if isinstance(op, Reduce):
        if any(first[a] is not None for a in op.axis):
            raise NoFactor
        if op.keepdims:
            return tuple(None if a in op.axis else label for a, label in enumerate(first))
        return tuple(label for a, label in enumerate(first) if a not in op.axis)
    if isinstance(op, Transpose):
        return tuple(first[a] for a in op.axes)
    if isinstance(op, ExpandDims):
        rest = iter(first)
        return tuple(None if a in op.axes else next(rest) for a in range(rank))
    if isinstance(op, Squeeze):
        return tuple(label for a, label in enumerate(first) if a not in op.axes)
    if isinstance(op, BroadcastTo):
        return (None,) * (rank - len(first)) + first
    if isinstance(op, Subtensor):
        return _index_labels(op.index, inputs, labels)
    raise NoFactor


def _merged(inputs: tuple[Var, ...], labels: dict[Var, Labels], rank: int) -> Labels:
    """Broadcasting's labels: each output axis gets the one label its inputs give it."""
    out: list[int | None] = [None] * rank
    for inp in inputs:
        for axis, label in enumerate(labels.get(inp, ()), start=rank - inp.ndim):
            if label is not None and out[axis] not in (None, label):
                raise NoFactor
            out[axis] = label if label is not None else out[axis]
    return tuple(out)


def _index_labels(index: tuple[Any, ...], inputs: tuple[Var, ...], labels: dict) -> Labels:
    """``x[index]``: basic indexing of unlabelled axes of ``x``, or ``a[..., :, z]`` (full
    slices, then one index array that reads z, of an ``a`` that does not)."""
    x, parts = inputs[0], inputs[1:]
    full = (None, None, None)
    if x not in labels:
        if len(parts) != 1 or index[-1] != ARRAY or any(e != full for e in index[:-1]):
            raise NoFactor
        return (None,) * (len(index) - 1) + labels[parts[0]] + (None,) * (x.ndim - len(index))
    if ARRAY in index or Ellipsis in index:
        raise NoFactor
    out, axis = [], 0
    for entry in index:
        if entry is None:
            out.append(None)
            continue
        if labels[x][axis] is not None and entry != full:
            raise NoFactor  # an element of z picked or sliced: the positions shift
        if isinstance(entry, tuple):
            out.append(labels[x][axis])
        axis += 1
    return tuple(out) + labels[x][axis:]
