"""Memory that reverse mode through a scan keeps: plain (residuals stored by the forward)
against ``checkpoint=True`` (a carry every ``ceil(sqrt(T))`` steps), and ``jax.grad`` of the
same ``lax.scan``.

The gradient of ``sum(final carry)`` of a scan of ``T`` steps over a carry of 256 float64,
``c -> sin(c * w) + 0.5 * c``, compiled with JAX on CPU; the figure is XLA's temporary
memory (``jax.jit(f.jax_fn).lower(...).compile().memory_analysis()``).

Run: ``.venv/bin/python bench/scan_memory.py [--steps 4096] [--size 256]``
"""

from __future__ import annotations

import argparse

import jax
import numpy as np

import rewritekit as rk
import rewritekit.tensor as rt


def temporary_bytes(steps: int, size: int, checkpoint: bool) -> int:
    """XLA's temporary allocation for the gradient, in bytes."""
    w, c0 = rt.scalar("w"), rt.vector("c0", shape=(size,))
    final, _ = rk.scan(
        lambda c, _: (rt.sin(c * w) + 0.5 * c, None), c0, length=steps, checkpoint=checkpoint
    )
    f = rk.function([c0, w], rk.grad(rt.sum(final), w))
    with jax.enable_x64(True):
        args = (np.linspace(0.0, 1.0, size), np.float64(0.7))
        compiled = jax.jit(f.jax_fn).lower(*args).compile()
    return int(compiled.memory_analysis().temp_size_in_bytes)


def jax_temporary_bytes(steps: int, size: int) -> int:
    """The same gradient written with ``jax.lax.scan`` and ``jax.grad``."""

    def cost(c0: jax.Array, w: jax.Array) -> jax.Array:
        final, _ = jax.lax.scan(
            lambda c, _: (jax.numpy.sin(c * w) + 0.5 * c, None), c0, length=steps
        )
        return jax.numpy.sum(final)

    with jax.enable_x64(True):
        args = (np.linspace(0.0, 1.0, size), np.float64(0.7))
        compiled = jax.jit(jax.grad(cost, argnums=1)).lower(*args).compile()
    return int(compiled.memory_analysis().temp_size_in_bytes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4096)
    parser.add_argument("--size", type=int, default=256)
    args = parser.parse_args()
    for checkpoint in (False, True):
        mb = temporary_bytes(args.steps, args.size, checkpoint) / 1e6
        print(f"T={args.steps} carry={args.size} checkpoint={checkpoint}: {mb:.2f} MB temporary")
    mb = jax_temporary_bytes(args.steps, args.size) / 1e6
    print(f"T={args.steps} carry={args.size} jax.grad of lax.scan: {mb:.2f} MB temporary")


if __name__ == "__main__":
    main()
