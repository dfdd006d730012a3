"""``optimize``: a JAX function rewritten by our rules and handed back to JAX.

Per input signature (the pytree structure, shapes and dtypes of the arguments), the
function is imported (``from_jax``), rewritten as ``rk.function`` rewrites (the rules, then
the loop pass; rolling unrolled chains into scans only with ``roll=True``), and lowered by
the JAX backend to a pure JAX function, which is then called; the result composes with
``jax.jit``, ``jax.grad``, ``jax.vmap`` and sharding like any JAX function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewritekit.ir.collector import gc_paused
from rewritekit.jaxpr.importer import from_jax
from rewritekit.rules.library import rewrite_for_lowering

__all__ = ["Optimized", "optimize"]


@dataclass
class _Entry:
    fn: Callable[..., Any]
    trace: Any
    out_def: Any


class Optimized:
    """``fn`` rewritten per input signature (see ``optimize``)."""

    def __init__(self, fn: Callable[..., Any], rules: Any, opaque: bool, roll: bool) -> None:
        self.fn, self.rules, self.opaque, self.roll = fn, rules, opaque, roll
        self._entries: dict[Any, _Entry] = {}
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "optimized")
        self.__doc__ = getattr(fn, "__doc__", None)

    def _entry(self, args: tuple[Any, ...]) -> tuple[_Entry, list[Any]]:
        import jax

        leaves, treedef = jax.tree_util.tree_flatten(args)
        key = (treedef, tuple((np.shape(x), jax.numpy.result_type(x)) for x in leaves))
        entry = self._entries.get(key)
        if entry is None:
            entry = self._build(args)
            self._entries[key] = entry
        return entry, leaves

    @gc_paused
    def _build(self, args: tuple[Any, ...]) -> _Entry:
        import jax

        from rewritekit.backends.jax import JaxBackend

        specs = jax.tree_util.tree_map(
            lambda x: jax.ShapeDtypeStruct(np.shape(x), jax.numpy.result_type(x)), args
        )
        inputs, outputs = from_jax(self.fn, *specs, opaque=self.opaque)
        in_leaves = jax.tree_util.tree_leaves(inputs)
        out_leaves, out_def = jax.tree_util.tree_flatten(outputs)
        # rk.function's pipeline (the rules, then the loop pass), lowered to the pure JAX
        # function alone: no argument checks, no jax.jit, no compile-cache entry (the
        # inputs are new on every import; the caller's JAX traces and compiles the result)
        graph, trace = rewrite_for_lowering(list(out_leaves), self.rules, self.roll)
        return _Entry(JaxBackend().pure_function(in_leaves, graph), trace, out_def)

    def __call__(self, *args: Any) -> Any:
        import jax

        entry, leaves = self._entry(args)
        outs = entry.fn(*leaves)
        return jax.tree_util.tree_unflatten(entry.out_def, list(outs))

    def explain(self, *args: Any) -> str:
        """What the rules did to ``fn`` for these arguments' signature."""
        import rewritekit as rk

        entry, _ = self._entry(args)
        return rk.explain(entry.trace)


def optimize(
    fn: Callable[..., Any], rules: Any = "default", *, opaque: bool = False, roll: bool = False
) -> Optimized:
    """``fn`` (a function of JAX arrays) with our rules applied: a function of the same
    signature whose body, per input signature, is ``fn``'s jaxpr imported, rewritten by
    ``rules`` and lowered back to JAX. It is a plain JAX-traceable function:
    ``jax.jit(optimize(fn))``, ``jax.grad(optimize(fn))`` and ``jax.vmap`` work.

    ``opaque`` keeps unmapped primitives as ``OpaqueJax`` nodes (see ``from_jax``).
    ``roll`` (off by default: the function keeps the structure ``fn`` gave it) rolls
    unrolled chains of equal steps into scans, as ``rk.function`` does by default: XLA then
    compiles them in time independent of their length, and a rolled chain of short steps
    may run slower per call than straight-line code (``docs/benchmarks.md``).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> softplus = rk.optimize(lambda x: jnp.log(1 + jnp.exp(x)))
        >>> float(softplus(jnp.float32(100.0)))
        100.0
    """
    return Optimized(fn, rules, opaque, roll)
