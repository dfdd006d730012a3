"""Index checks of compiled JAX functions: mode "raise" carried out of XLA.

Compiled code cannot raise on a value. ``rk.function``'s call traces the graph with checks
on (``checked_call``): each indexing node in mode "raise" states its bounds with ``check``,
an index known when tracing is checked then (a ``GraphIndexError`` raised by the trace),
and a traced one becomes a ``jax.experimental.checkify`` check, which checkify carries
through loops, branches and ``vmap`` into an error value the jitted function returns with
its outputs; the call raises ``GraphIndexError`` on the host when a check failed. The call
then waits for the outputs (one boolean read back per call: a few microseconds).

``f.jax_fn`` and ``f.jitted`` trace with checks off: there the nodes in mode "raise" read
as mode "fill" (a read out of bounds gives the fill value, an update out of bounds is
dropped), the same on every call.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from rewritekit.backends.common.bounds import bounds
from rewritekit.errors import GraphIndexError

__all__ = ["active", "check", "checked_call"]

# a trace with checks on: True where checkify functionalizes run-time checks
_CHECKING: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "rewritekit_index_checks", default=None
)
_SUFFIX = " (`check` failed)"  # what checkify appends to a failed check's message
_SMALL = 1024  # index arrays up to this size compute the offending index anyway


def active() -> bool:
    """Whether the graph is being traced with index checks on (``rk.function``'s call)."""
    return _CHECKING.get() is not None


def check(value: Any, n: int, message: str) -> None:
    """Check that ``value`` (an index or index array) lies in ``[-n, n)`` when checks are
    on; ``message`` is the error's, with ``{}`` where the offending index goes (other
    braces doubled)."""
    state = _CHECKING.get()
    if state is None:
        return
    if isinstance(value, (int, np.integer, np.ndarray)):  # known while tracing
        ok, bad = bounds(np, value, n)
        if not ok:
            raise GraphIndexError(message.format(int(bad)))
    elif state:  # else: a node no static walk saw (there are none); it reads as "fill"
        ok, bad = _traced_bounds(value, n)
        checkify.check(jnp.asarray(ok), message, jnp.asarray(bad, jnp.int64))  # ok: np.True_


def _traced_bounds(value: Any, n: int) -> tuple[Any, Any]:
    """``bounds`` under ``jax.jit``: for a large index array, one fused reduction of the
    in-bounds mask, and the offending index only where it failed (a ``lax.cond``: on CPU
    the min and max reductions would double the cost of a gather)."""
    if np.size(value) <= _SMALL:
        return bounds(jnp, value, n)
    ok = jnp.all((value >= -n) & (value < n))
    bad = jax.lax.cond(ok, lambda v: jnp.zeros((), v.dtype), lambda v: bounds(jnp, v, n)[1], value)
    return ok, bad


def _traced(jax_fn: Callable[..., Any], run_time: bool) -> Callable[..., Any]:
    def traced(*args: Any) -> Any:
        token = _CHECKING.set(run_time)
        try:
            return checkify.checkify(jax_fn)(*args) if run_time else jax_fn(*args)
        finally:
            _CHECKING.reset(token)

    return traced


def checked_call(
    jax_fn: Callable[..., list[Any]],
    run_time: bool,
    jit_options: dict[str, Any],
    with_x64: Callable[[Callable[[], Callable[..., Any]]], Callable[..., Any]],
) -> Callable[..., list[Any]]:
    """The call of a compiled graph with index checks: ``jax.jit`` of ``jax_fn`` traced
    with checks on; ``run_time``: some index is traced, so the jitted function also
    returns whether a check failed, and the call raises ``GraphIndexError`` then.
    ``with_x64`` runs the jitted function under 64-bit JAX (the backend's)."""
    traced = _traced(jax_fn, run_time)
    if not run_time:
        return with_x64(functools.cache(lambda: jax.jit(traced, **jit_options)))
    # per trace: the error's structure and its leaves' shapes and dtypes (checkify's codes
    # differ between traces)
    traces: list[tuple[Any, list[tuple[tuple[int, ...], Any]]]] = []

    def flagged(*args: Any) -> Any:
        error, outs = traced(*args)
        leaves, structure = jax.tree_util.tree_flatten(error)
        traces.append((structure, [(leaf.shape, leaf.dtype) for leaf in leaves]))
        # the error's leaves are its failure flags (its only booleans), check codes and
        # payloads (int64 indices): one int64 vector carries them with the flag and the
        # trace, so a call reads back one small array
        flags = [jnp.ravel(leaf) for leaf in leaves if leaf.dtype == jnp.bool_]
        failed = jnp.any(jnp.concatenate(flags)) if flags else jnp.zeros((), bool)
        head = jnp.stack([failed.astype(jnp.int64), jnp.asarray(len(traces) - 1, jnp.int64)])
        status = jnp.concatenate([head, *(jnp.ravel(leaf).astype(jnp.int64) for leaf in leaves)])
        return outs, status

    options = dict(jit_options)
    if "out_shardings" in options:  # the outputs' shardings; JAX's choice for the status
        options["out_shardings"] = (options["out_shardings"], None)
    run = with_x64(functools.cache(lambda: jax.jit(flagged, **options)))

    def call(*args: Any) -> list[Any]:
        outs, status = run(*args)
        status = np.asarray(status)
        if status[0]:
            raise GraphIndexError(_message(*traces[int(status[1])], status[2:]))
        return outs  # type: ignore[no-any-return]

    return call


def _message(structure: Any, layout: list[tuple[tuple[int, ...], Any]], packed: Any) -> str:
    """The message of the first failed check (under ``vmap``, of the first batch element
    that failed), from the error's leaves packed after the flag and the trace."""
    leaves, start = [], 0
    for shape, dtype in layout:
        size = int(np.prod(shape))
        leaves.append(packed[start : start + size].reshape(shape).astype(dtype))
        start += size
    failure = jax.tree_util.tree_unflatten(structure, leaves).get_exception()
    mapping = getattr(failure, "error_mapping", None)
    if mapping:
        failure = next(iter(mapping.values()))
    return str(failure).removesuffix(_SUFFIX)
