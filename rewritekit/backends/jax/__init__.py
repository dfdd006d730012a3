"""The JAX backend: graphs become pure JAX functions, compiled by ``jax.jit`` for XLA.

``jax_funcify(op, node)`` returns the JAX implementation of one node. Importing this module
does not import jax, so a package can register implementations for its own Ops without
paying for jax until a graph is compiled::

    @jax_funcify.register(MyOp)
    def _(op, node):
        import jax.numpy as jnp
        return lambda x: jnp.sin(x)

Lowering rules:

- A node whose inputs are all concrete NumPy values (constants, static shapes) runs with
  its NumPy implementation while JAX traces (except Ops marked ``foldable = False``, the
  random variables, which always draw with ``jax.random``), so shape arithmetic such as
  ``rt.reshape(x, (x.shape[0] // 2, 2))`` is static under ``jax.jit``, and constant
  subgraphs are folded.
- The compiled function runs under ``jax.enable_x64(True)``: a float64 graph computes and
  returns float64, a float32 graph float32, whatever the process-wide JAX setting.
  ``f.jax_fn`` is the pure, un-jitted function; it follows the caller's JAX settings, so
  to get float64 out of it in your own ``jax.jit``/``jax.grad`` code, run that code under
  ``with jax.enable_x64(True):`` (or enable x64 globally). Float32 graphs need nothing.
- Indices out of bounds (``rewritekit.tensor.subtensor``): the compiled function raises
  ``GraphIndexError`` for an indexing node in mode "raise" (``index_checks``: the call
  then waits for the outputs); ``f.jax_fn`` and ``f.jitted`` cannot raise on a value and
  read such a node as mode "fill" (NaN or the dtype's fill value; updates dropped).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rewritekit.backends.common.bounds import checks_needed
from rewritekit.backends.lowering import lower
from rewritekit.backends.numpy import numpy_funcify  # also registers its implementations
from rewritekit.ir import Apply, Op, Var
from rewritekit.tensor import OP_FAMILIES

__all__ = ["JAX_BACKEND", "JaxBackend", "jax_funcify"]


@functools.singledispatch
def jax_funcify(op: Op, node: Apply) -> Callable[..., Any]:
    """The JAX implementation of ``node`` (dispatched on the Op's class)."""
    raise NotImplementedError(
        f"the jax backend has no implementation for Op {type(op).__name__} ({op}); "
        "register one with @jax_funcify.register"
    )


_CONCRETE = (np.ndarray, np.generic)


def _implement(node: Apply) -> Callable[..., Any]:
    traced = jax_funcify(node.op, node)
    if not getattr(node.op, "foldable", True):
        return traced  # random Ops: JAX's generator even when every input is concrete
    concrete: list[Callable[..., Any]] = []  # the NumPy implementation, found on first need

    def run(*args: Any) -> Any:
        for arg in args:
            if not isinstance(arg, _CONCRETE):
                return traced(*args)
        if not concrete:
            concrete.append(_numpy_or(traced, node))
        return concrete[0](*args)

    return run


def _numpy_or(traced: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """The node's NumPy implementation, or the JAX one for an Op that has only that."""
    try:
        return numpy_funcify(node.op, node)
    except NotImplementedError:
        return traced


class JaxBackend:
    """Compiles graphs to ``jax.jit`` functions (XLA on CPU, GPU or TPU)."""

    name = "jax"

    def pure_function(
        self, inputs: Sequence[Var], outputs: Sequence[Var]
    ) -> Callable[..., list[Any]]:
        """The pure, un-jitted JAX function of the inputs' arrays returning the list of
        outputs (``compile``'s ``.jax_fn``; ``rk.optimize`` takes only this). An indexing
        node in mode "raise" reads as mode "fill" in it."""
        import jax.numpy as jnp

        _load_implementations()
        run = lower(inputs, outputs, _implement)

        def jax_fn(*args: Any) -> list[Any]:
            return run(*[jnp.asarray(a) for a in args])

        return jax_fn

    def compile(
        self, inputs: Sequence[Var], outputs: Sequence[Var], **jit_options: Any
    ) -> Callable[..., list[Any]]:
        """A jitted function of arrays returning the list of outputs; ``.jax_fn`` is pure.
        ``jit_options`` (``in_shardings``, ``out_shardings``, ``donate_argnums``) go to
        ``jax.jit``."""
        import jax

        jax_fn = self.pure_function(inputs, outputs)

        # one sharding per output: a list, as jax_fn returns its outputs in one
        if isinstance(jit_options.get("out_shardings"), tuple):
            jit_options["out_shardings"] = list(jit_options["out_shardings"])

        made: list[Callable[..., list[Any]]] = []

        def jitted() -> Callable[..., list[Any]]:  # made on the first call: rk.optimize
            if not made:  # needs only jax_fn (and functools.cache costs 5 µs to set up)
                made.append(jax.jit(jax_fn, **jit_options))
            return made[0]

        needed = checks_needed(outputs)
        if needed is None:
            call = _with_x64(jitted)
        else:  # indices out of bounds raise (index_checks); jax_fn and jitted read "fill"
            from rewritekit.backends.jax.index_checks import checked_call

            call = checked_call(jax_fn, needed == "run-time", jit_options, _with_x64)
        call.jax_fn = jax_fn  # type: ignore[attr-defined]
        call.jitted = jitted  # type: ignore[attr-defined]
        return call


def _with_x64(make_jitted: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:
    """The function ``make_jitted()`` returns (``jax.jit``, about 40 µs, is made on the
    first call), called with 64-bit JAX on for this thread.

    ``jax.enable_x64`` is a config State: ``.value`` reads it (about 35 ns, half of
    ``jax.config.jax_enable_x64``), and ``swap_local``/``set_local`` are what its context
    manager does, less the manager object (about 0.8 µs a call saved where x64 is off). A
    JAX whose State has a thread-local hook, or lacks these methods, gets the context.
    """
    import jax

    state = jax.enable_x64
    jitted: Callable[..., Any] | None = None

    if getattr(state, "_update_thread_local_hook", None) or not hasattr(state, "swap_local"):

        def call_in_context(*args: Any) -> list[Any]:
            nonlocal jitted
            if jitted is None:
                jitted = make_jitted()
            if state.value:
                return jitted(*args)
            with state(True):
                return jitted(*args)

        return call_in_context
    swap, restore = state.swap_local, state.set_local

    def call(*args: Any) -> list[Any]:
        nonlocal jitted
        if jitted is None:
            jitted = make_jitted()
        if state.value:  # on (globally or around us): nothing to switch
            return jitted(*args)
        previous = swap(True)
        try:
            return jitted(*args)
        finally:
            restore(previous)

    return call


@functools.cache
def _load_implementations() -> None:
    """Import the implementation modules (they import jax), once, on first compile."""
    for family in OP_FAMILIES:
        importlib.import_module(f"{__name__}.{family}")


JAX_BACKEND = JaxBackend()
