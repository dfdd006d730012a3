"""Op records: one table that drives the property tests of every Op.

A record says how to build a graph with the Op (``build``, from input Vars), how NumPy or
SciPy computes the same thing (``reference``, from arrays), and how to draw inputs inside
the Op's domain (``draw``). ``tests/properties/test_backends.py`` checks, for every record:
the NumPy backend against the reference, and the JAX backend against the NumPy backend,
with the tolerances of ``TOLERANCE`` (a record may loosen them).

Each family of Ops has its module here, mirroring ``rewritekit/tensor``; ``RECORDS`` joins
them. ``tests/properties/test_completeness.py`` fails when a concrete Op has no record.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rewritekit.ir import Op, Var
from rewritekit.tensor import OP_FAMILIES

# Relative and absolute tolerances per dtype, for comparing two implementations.
TOLERANCE: dict[str, tuple[float, float]] = {
    "float64": (1e-9, 1e-12),
    "float32": (2e-5, 1e-6),
    "complex128": (1e-9, 1e-12),
    "complex64": (2e-5, 1e-6),
}


@dataclass(frozen=True)
class OpRecord:
    """How to test one Op (or one use of it).

    Attributes:
        name: the test id.
        ops: the Op classes this record exercises (for the completeness test).
        build: ``(*input_vars) -> Var or tuple of Vars``, written with the ``rt`` API.
        reference: ``(*arrays) -> array or tuple``, written with NumPy/SciPy only.
        draw: ``(data, dtype) -> list of arrays``: inputs inside the Op's domain.
        dtypes: the dtypes to draw (passed to ``draw``).
        rtol, atol: loosen ``TOLERANCE`` (the larger of the two is used) when set.
        static_shapes: give the input Vars the drawn arrays' static shapes (default: every
            length unknown, so infer_types and the backends see ``None``).
        grad: check the gradient (``tests/properties/test_gradients.py``) with respect to
            the float inputs; it is checked only for float64 draws of records whose Ops are
            all differentiable.
        fd: compare with finite differences too (False where draws may sit on a kink or
            a jump: ties of ``max``, ``abs`` at 0, ``floor``); ``jax.grad`` is always compared.
        grad_draw: draws for the gradient checks (default ``draw``), e.g. away from kinks.
        grad_rtol: loosen the gradient comparisons' relative tolerance.
        jax_together: check on the JAX backend in one graph with every other record that
            sets it (``tests/properties/test_random_records.py``), not in a graph of its
            own: a random variable's JAX sampler compiles in 1-3 s.
    """

    name: str
    ops: tuple[type[Op], ...]
    build: Callable[..., Var | tuple[Var, ...]]
    reference: Callable[..., Any]
    draw: Callable[[st.DataObject, str], list[np.ndarray]]
    dtypes: tuple[str, ...] = ("float64", "float32")
    rtol: float | None = None
    atol: float | None = None
    static_shapes: bool = False
    grad: bool = True
    fd: bool = True
    grad_draw: Callable[[st.DataObject, str], list[np.ndarray]] | None = None
    grad_rtol: float | None = None
    jax_together: bool = False
    notes: str = field(default="", compare=False)

    def checks_gradient(self) -> bool:
        """True when the gradient tests cover this record."""
        return (
            self.grad
            and "float64" in self.dtypes
            and all(getattr(op, "differentiable", True) for op in self.ops)
        )

    def tolerance(self, dtype: str) -> tuple[float, float]:
        """Tolerances for an output of ``dtype``; integer and bool outputs must be exact."""
        rtol, atol = TOLERANCE.get(dtype, (0.0, 0.0))
        if dtype not in TOLERANCE:
            return rtol, atol
        return max(rtol, self.rtol or 0.0), max(atol, self.atol or 0.0)


# --- strategies shared by the families ------------------------------------------------


def broadcastable_shapes(n: int, *, min_dims: int = 0, max_dims: int = 3, max_side: int = 4) -> Any:
    """``n`` mutually broadcastable shapes."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=min_dims, max_dims=max_dims, max_side=max_side
    ).map(lambda s: s.input_shapes)


def values(
    data: st.DataObject,
    dtype: str,
    shape: Sequence[int],
    lo: float = -5.0,
    hi: float = 5.0,
    *,
    special: bool = False,
) -> np.ndarray:
    """An array of ``dtype`` and ``shape`` with elements in [lo, hi].

    Integer dtypes draw integers in [ceil(lo), floor(hi)]; bool draws booleans; with
    ``special`` float arrays may also hold NaN and +-inf.
    """
    kind = np.dtype(dtype).kind
    if kind == "b":
        elements = st.booleans()
    elif kind in "iu":
        elements = st.integers(int(np.ceil(lo)), int(np.floor(hi)))
    else:
        width = 32 if dtype in ("float32", "complex64") else 64
        if width == 32:  # the nearest float32 bounds inside [lo, hi]
            lo32, hi32 = np.float32(lo), np.float32(hi)
            lo = float(lo32 if lo32 >= lo else np.nextafter(lo32, np.float32(np.inf)))
            hi = float(hi32 if hi32 <= hi else np.nextafter(hi32, np.float32(-np.inf)))
        # XLA on CPU flushes subnormals to zero, NumPy does not: draw none.
        elements = st.floats(
            lo, hi, width=width, allow_nan=False, allow_infinity=False, allow_subnormal=False
        )
        if special:
            elements = elements | st.sampled_from([np.nan, np.inf, -np.inf])
    return data.draw(hnp.arrays(np.dtype(dtype), tuple(shape), elements=elements))


def draw_in(*ranges: tuple[float, float], special: bool = False) -> Callable[..., Any]:
    """A ``draw`` function: one array per range, broadcastable shapes."""

    def draw(data: st.DataObject, dtype: str) -> list[np.ndarray]:
        shape_list = data.draw(broadcastable_shapes(len(ranges)))
        return [
            values(data, dtype, shape, lo, hi, special=special)
            for shape, (lo, hi) in zip(shape_list, ranges, strict=True)
        ]

    return draw


def collect() -> list[OpRecord]:
    """Every family's records, in the order of ``rewritekit.tensor.OP_FAMILIES``."""
    records: list[OpRecord] = []
    for family in OP_FAMILIES:
        records.extend(importlib.import_module(f"tests.records.{family}").RECORDS)
    return records
