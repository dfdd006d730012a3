"""Batching rules of indexing: ``x[index]``, ``set_subtensor`` and ``inc_subtensor``.

A basic index (integers, slices, new axes) of a batched ``x`` is the same index after a
full slice per batch axis. Any other case (index arrays, a batched integer or index array,
a shared ``x`` under a batched index) indexes each batch axis with an ``arange`` array
too: every integer and array of the index is then an advanced index, so NumPy puts their
broadcast axes first, ``(batch..., index..., rest...)``, and a transpose moves the index
axes back where the core had them (after ``p`` sliced axes, where its advanced indices
were adjacent). Updates align their values to that layout the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rewritekit.ir import Apply, Var, apply_op
from rewritekit.tensor import (
    arange,
    cast,
    clip,
    cumsum,
    expand_dims,
    getitem,
    logical_and,
    not_equal,
    reshape,
    set_subtensor,
    shape_i,
    transpose,
    where,
    zeros,
)
from rewritekit.tensor import sum as reduce_sum
from rewritekit.tensor.dynamic import DynamicSlice, DynamicUpdateSlice
from rewritekit.tensor.indexing import ARRAY, SCALAR, selected_shape
from rewritekit.tensor.searching import Nonzero
from rewritekit.tensor.subtensor import Subtensor, UpdateSubtensor
from rewritekit.vectorize.core import batch_graph
from rewritekit.vectorize.registry import (
    Unbatched,
    batch_lengths,
    broadcast_batch,
    only_first,
    pad_core,
    rule,
)

__all__: list[str] = []

_FULL = (None, None, None)


def _basic(index: tuple[Any, ...]) -> bool:
    """No index array and no ``...``: NumPy keeps the indexed axes in place."""
    return not any(e == ARRAY or e is Ellipsis for e in index)


@dataclass
class _Batched:
    """A core index rewritten for the batch: the new index and parts, and where the core
    had its advanced axes (``m`` of them, after ``p`` others)."""

    index: tuple[Any, ...]
    parts: list[Var]
    m: int
    p: int

    def core_order(self, nb: int, ndim: int) -> tuple[int, ...]:
        """The permutation taking ``(batch, index, rest)`` to the core's order."""
        m, p = self.m, self.p
        lead = [*range(nb), *range(nb + m, nb + m + p), *range(nb, nb + m)]
        return (*lead, *range(nb + m + p, ndim))

    def batch_order(self, nb: int, ndim: int) -> tuple[int, ...]:
        """The inverse permutation (``ndim`` includes the ``nb`` batch axes)."""
        m, p = self.m, self.p
        lead = [*range(nb), *range(nb + p, nb + p + m), *range(nb, nb + p)]
        return (*lead, *range(nb + m + p, ndim))


def _batched_index(
    index: tuple[Any, ...],
    parts: list[Var],
    core_parts: list[Var],
    flags: list[bool],
    batch: list[Any],
) -> _Batched | None:
    nb = len(batch)
    m = max(
        (c.ndim for e, c in zip(_array_entries(index), core_parts, strict=True) if e), default=0
    )
    entries: list[Any] = [ARRAY] * nb
    new_parts: list[Var] = []
    for j, n in enumerate(batch):  # arange(B_j) along batch axis j, broadcasting with the rest
        axes = tuple(a for a in range(nb + m) if a != j)
        new_parts.append(expand_dims(arange(n), axes) if axes else arange(n))
    advanced: list[int] = []
    before = 0  # output axes of the entries before the first advanced one
    k = 0
    for position, entry in enumerate(index):
        if isinstance(entry, int) or entry in (SCALAR, ARRAY):
            advanced.append(position)
        elif not advanced and entry is not Ellipsis:
            before += 1  # a slice or a new axis
        if entry in (SCALAR, ARRAY):
            part, core, batched = parts[k], core_parts[k], flags[k]
            k += 1
            if batched:
                entries.append(ARRAY)
                new_parts.append(pad_core(part, nb, core.ndim, m))
            else:
                entries.append(entry)
                new_parts.append(part)
        elif isinstance(entry, tuple):
            for bound in entry:
                if bound == SCALAR:
                    if flags[k]:
                        return None  # a slice whose length varies over the batch
                    new_parts.append(parts[k])
                    k += 1
            entries.append(entry)
        else:
            entries.append(entry)
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1)) if advanced else True
    return _Batched(tuple(entries), new_parts, m, before if adjacent else 0)


def _array_entries(index: tuple[Any, ...]) -> list[bool]:
    """For each run-time part in order: whether it is an index array or integer."""
    found: list[bool] = []
    for entry in index:
        if isinstance(entry, tuple):
            found.extend(False for b in entry if b == SCALAR)
        elif entry in (SCALAR, ARRAY):
            found.append(True)
    return found


@rule(Subtensor)
def _subtensor(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    op: Any = node.op  # the mode and fill value go with the index
    index = op.index
    if only_first(batched) and _basic(index):
        return apply_op(op.with_index((_FULL,) * nb + tuple(index)), tuple(inputs))
    x, *parts = inputs
    batch = batch_lengths(inputs, batched, nb)
    new = _batched_index(index, parts, list(node.inputs[1:]), batched[1:], batch)
    if new is None:
        return None
    x = x if batched[0] else broadcast_batch(x, batch)
    out = apply_op(op.with_index(new.index), (x, *new.parts))[0]
    order = new.core_order(nb, out.ndim)
    return [out if order == tuple(range(out.ndim)) else transpose(out, order)]


@rule(UpdateSubtensor)
def _update_subtensor(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """``set_subtensor``/``inc_subtensor``: a shared ``x`` is broadcast over the batch, and
    the value (batched or not) aligned to the batched selection."""
    op: Any = node.op
    index = op.index
    x, value, *parts = inputs
    core_x, core_value, *core_parts = node.inputs
    checked = op.mode == "raise"
    selection = len(
        selected_shape(op.name, index, core_x.type, [p.type for p in core_parts], checked)
    )
    batch = batch_lengths(inputs, batched, nb)
    x = x if batched[0] else broadcast_batch(x, batch)
    if not any(batched[2:]) and _basic(index):
        if batched[1]:
            value = pad_core(value, nb, core_value.ndim, selection)
        return apply_op(op.with_index((_FULL,) * nb + tuple(index)), (x, value, *parts))
    new = _batched_index(index, parts, core_parts, batched[2:], batch)
    if new is None:
        return None
    if batched[1]:
        value = pad_core(value, nb, core_value.ndim, selection)
        order = new.batch_order(nb, nb + selection)
    else:
        missing = selection - value.ndim
        value = expand_dims(value, tuple(range(missing))) if missing else value
        order = tuple(a - nb for a in new.batch_order(nb, nb + selection)[nb:])
    if order != tuple(range(len(order))):
        value = transpose(value, order)
    return apply_op(op.with_index(new.index), (x, value, *new.parts))


# --- dynamic windows ------------------------------------------------------------------------


def _window_index(op: Any, x: Var, starts: list[Var], sizes: list[int]) -> tuple[Var, ...]:
    """One index array per axis of ``x`` (an outer product, ``np.ix_``): the window's
    positions on the windowed axes (JAX's start: negative from the end, then clamped), the
    whole axis elsewhere."""
    found = dict(zip(op.axes, zip(starts, sizes, strict=True), strict=True))
    index = []
    for axis in range(x.ndim):
        n = shape_i(x, axis)
        if axis in found:
            start, size = found[axis]
            start = where(start < 0, start + n, start)
            positions = clip(start, 0, n - size) + arange(size)
        else:
            positions = arange(n)
        others = tuple(a for a in range(x.ndim) if a != axis)
        index.append(expand_dims(positions, others) if others else positions)
    return tuple(index)


def _dynamic_slice_gather(op: Any, x: Var, *starts: Var) -> list[Var]:
    # the positions are clamped into the axes: mode "clip" is exact and needs no check
    return [getitem(x, _window_index(op, x, list(starts), list(op.sizes)), "clip")]


def _dynamic_update_scatter(op: Any, x: Var, update: Var, *starts: Var) -> list[Var]:
    sizes = [update.type.shape[a] for a in op.axes]
    return [set_subtensor(getitem(x, _window_index(op, x, list(starts), sizes), "clip"), update)]


def _via(equivalent: Any) -> Any:
    """A rule that batches the node's equivalent graph (built over fresh core inputs)."""

    def batch(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
        core = [Var(v.type) for v in node.inputs]
        outs = equivalent(node.op, *core)
        pairs = list(zip(core, inputs, batched, strict=True))
        found = batch_graph(
            outs, {c: v for c, v, b in pairs if b}, {c: v for c, v, b in pairs if not b}, nb
        )
        return Unbatched([v for v, _ in found], [k for k, (_, b) in enumerate(found) if not b])

    return batch


def _nonzero_positions(op: Any, x: Var) -> list[Var]:
    """``nonzero(x, size, fill_value)`` of existing Ops: each nonzero element's rank among
    them (a cumulative sum) is its slot; the first ``size`` land in a buffer (the others in
    a spare slot), then flat positions become one index per axis."""
    size = op.size
    flat = not_equal(reshape(x, (-1,)), 0)
    rank = cumsum(cast(flat, "int64")) - 1
    slot = where(logical_and(flat, rank < size), rank, size)
    buffer = set_subtensor(zeros((size + 1,), dtype="int64")[slot], arange(shape_i(flat, 0)))
    taken, valid = buffer[:size], arange(size) < reduce_sum(cast(flat, "int64"))
    outs, stride = [], 1
    for axis in reversed(range(x.ndim)):
        n = shape_i(x, axis)
        outs.append(where(valid, (taken // stride) % n, op.fill_value))
        stride = stride * n
    return outs[::-1]


rule(Nonzero)(_via(_nonzero_positions))
rule(DynamicSlice)(_via(_dynamic_slice_gather))
rule(DynamicUpdateSlice)(_via(_dynamic_update_scatter))
