"""JAX implementations of the control-flow Ops: ``lax.scan``, ``lax.while_loop`` and
``lax.cond`` over the inner graphs, each lowered with this backend, so the compiled
function stays one pure JAX function (it composes with ``jax.jit``, ``jax.grad`` and
``jax.vmap``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from rewritekit.backends.jax import _implement, jax_funcify
from rewritekit.backends.lowering import lower
from rewritekit.backends.numpy.control import scan_length
from rewritekit.ir import Apply
from rewritekit.ir.inner import InnerGraph
from rewritekit.tensor import control as cf


def _compiled(graph: InnerGraph) -> Callable[..., list[Any]]:
    return lower(graph.inputs, graph.outputs, _implement)


def _results(values: list[Any]) -> Any:
    """What the lowering expects of a node: the value itself when there is one output."""
    return values[0] if len(values) == 1 else list(values)


def _cast(values: Any, types: Any) -> tuple[Any, ...]:
    # an explicit dtype drops JAX's weak types, which lax's carries must not change
    return tuple(jnp.asarray(v, dtype=t.dtype) for v, t in zip(values, types, strict=True))


@jax_funcify.register(cf.Scan)
def _scan(op: cf.Scan, node: Apply) -> Callable[..., Any]:
    body = _compiled(op.body)
    nc, ns = op.n_carry, op.n_seq
    carry_types = op.body.input_types[:nc]
    y_types = op.body.output_types[nc:]

    def run(*args: Any) -> list[Any]:
        carry = _cast(args[:nc], carry_types)
        seqs = tuple(jnp.asarray(s) for s in args[nc : nc + ns])
        consts = args[nc + ns :]
        length = scan_length(op, node, list(seqs), jnp.shape)

        def step(c: Any, xs: Any) -> Any:
            outs = body(*c, *xs, *consts)
            return _cast(outs[:nc], carry_types), _cast(outs[nc:], y_types)

        final, ys = jax.lax.scan(step, carry, seqs, length=length, reverse=op.reverse)
        return _results([*final, *ys])

    return run


@jax_funcify.register(cf.While)
def _while(op: cf.While, node: Apply) -> Callable[..., Any]:
    cond = _compiled(op.cond_graph)
    body = _compiled(op.body_graph)
    n = op.n_state
    types = op.body_graph.input_types[:n]

    def run(*args: Any) -> list[Any]:
        consts = args[n:]
        final = jax.lax.while_loop(
            lambda s: jnp.asarray(cond(*s, *consts)[0], bool),
            lambda s: _cast(body(*s, *consts), types),
            _cast(args[:n], types),
        )
        return _results(list(final))

    return run


@jax_funcify.register(cf.Cond)
def _cond(op: cf.Cond, node: Apply) -> Callable[..., Any]:
    true_fn = _compiled(op.true_graph)
    false_fn = _compiled(op.false_graph)
    types = [o.type for o in node.outputs]

    def run(pred: Any, *operands: Any) -> list[Any]:
        return _results(
            jax.lax.cond(
                jnp.asarray(pred, bool),
                lambda *ops: _cast(true_fn(*ops), types),
                lambda *ops: _cast(false_fn(*ops), types),
                *operands,
            )
        )

    return run


@jax_funcify.register(cf.Blockwise)
def _blockwise(op: cf.Blockwise, node: Apply) -> Callable[..., Any]:
    """``jax.vmap`` of the core over the batched inputs, once per batch axis; the shared
    inputs are closed over, so a concrete one (a shape) stays concrete in the core."""
    body = _compiled(op.core)
    types = op.core.output_types
    mapped = [i for i, b in enumerate(op.batched) if b]

    def run(*args: Any) -> Any:
        def one(*values: Any) -> tuple[Any, ...]:
            full = list(args)
            for i, v in zip(mapped, values, strict=True):
                full[i] = v
            return _cast(body(*full), types)

        fn = one
        for _ in range(op.batch_ndim):
            fn = jax.vmap(fn)
        return _results(list(fn(*[args[i] for i in mapped])))

    return run
