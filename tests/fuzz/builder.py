"""The state of a graph being drawn (``tests/fuzz/graphs.py``): its nodes with their
concrete shapes and exactness, its inputs, and the edge-case values inputs are drawn from.

A node is *exact* when its value was computed by correctly rounded operations only (+, -,
*, /, sqrt, comparisons, moves), so both backends give it bit for bit. Ops whose result
jumps with a last-bit change of a float input (comparisons, floor, casts to integers,
argmax, argsort, %) read only *settled* values: integers, booleans and exact floats.
Otherwise one ulp of difference in ``exp`` would show up as a different boolean and be
reported as a bug.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.ir import Var

__all__ = [
    "DTYPES",
    "MOVES",
    "SHAPES",
    "Builder",
    "Node",
    "broadcasts",
    "elements",
    "integer",
    "number",
    "settled",
    "shape_of",
    "values",
]

DTYPES = ("float64", "float32", "int64", "int32", "int8", "uint8", "uint64", "bool")
SHAPES = ((), (3,), (2, 3), (1, 3), (3, 1), (0,), (2, 0), (2, 1, 3))

_FLOAT_EDGES = (0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.5, 10.0, 100.0)
_FLOAT_EDGES += (700.0, -700.0, 1e10, -1e10, np.inf, -np.inf, np.nan)
_HUGE = {"float64": (1e300, -1e300, 1.7e308), "float32": (3e38, -3e38, 1e20)}


def _int_edges(dtype: str) -> tuple[int, ...]:
    info = np.iinfo(dtype)
    edges = (0, 1, -1, 2, -2, 3, 7, -8, 100, -128, 127, 255)
    edges += (info.min, info.max, info.min + 1, info.max - 1, info.max // 2 + 1)
    return tuple(sorted({e for e in edges if info.min <= e <= info.max}, key=abs))


def elements(dtype: str) -> st.SearchStrategy[Any]:
    """Edge cases of ``dtype`` mixed with small random values (no subnormals: XLA on CPU
    flushes them to zero, NumPy does not)."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        return st.booleans()
    if kind in "iu":
        info = np.iinfo(dtype)
        small = st.integers(max(info.min, -10), min(info.max, 10))
        return st.sampled_from(_int_edges(dtype)) | small
    width = 32 if dtype == "float32" else 64
    edges = st.sampled_from(_FLOAT_EDGES + _HUGE[dtype])
    small = st.floats(-10, 10, width=width, allow_subnormal=False).map(_snapped)
    return edges | small


def _snapped(value: float) -> float:
    """``value``, or the integer it is within 1e-6 of: near a pole (of gamma, digamma and
    polygamma at 0, -1, -2, ...) a function is so ill-conditioned that SciPy's and XLA's
    formulas disagree in the leading digit (digamma(-9.999999999999998) is -5.33e14 in
    SciPy, -5.63e14 in XLA)."""
    nearest = round(value)
    return float(nearest) if value != nearest and abs(value - nearest) < 1e-6 else value


def values(data: st.DataObject, dtype: str, shape: Sequence[int]) -> np.ndarray:
    """An array of ``dtype`` and ``shape`` drawn from ``elements(dtype)``."""
    return data.draw(hnp.arrays(np.dtype(dtype), tuple(shape), elements=elements(dtype)))


@dataclass(eq=False)
class Node:
    """A Var of the graph being built, its concrete shape, and whether its value is exact
    (the same bits on every backend; see the module docstring)."""

    var: Var
    shape: tuple[int, ...]
    exact: bool = True
    zero_sign: bool = True  # a zero's sign is the same on every backend (see ``MOVES``)

    @property
    def kind(self) -> str:
        return np.dtype(self.var.dtype).kind


#: Ops that move values (or flip a sign exactly): a zero's sign after them is its sign
#: before. After any other Op it may differ: NumPy starts a sum or a dot product from +0,
#: XLA from its first term (a dot over one term is -0 * 0 = -0 there, +0 in NumPy), and
#: XLA folds x + 0 to x. -0 == +0, but 1 / x, arctan2, copysign and gamma tell them apart.
_MOVES = """
    reshape transpose swapaxes moveaxis squeeze expand_dims broadcast_to flip roll stack
    concatenate getitem take take_along_axis sort where cast_float64 cast_float32 negative
    set_subtensor
"""
MOVES = frozenset(_MOVES.split())


class Builder:
    """The state of one drawn graph: its nodes, inputs and the values fixed at build."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data
        self.nodes: list[Node] = []
        self.inputs: list[Var] = []
        self.shapes: list[tuple[int, ...]] = []
        self.fixed: dict[int, np.ndarray] = {}  # input position -> its value in every set
        self.out_of_bounds: set[Var] = set()  # nodes that read an index out of bounds
        self.steps: list[str] = []
        self.refused: list[str] = []

    def draw(self, strategy: st.SearchStrategy[Any], label: str | None = None) -> Any:
        return self.data.draw(strategy, label=label)

    def choice(self, options: Sequence[Any]) -> Any:
        return self.draw(st.sampled_from(list(options)))

    def new_input(
        self, dtype: str, shape: tuple[int, ...], fixed: np.ndarray | None = None
    ) -> Node:
        static = self.draw(st.booleans(), label="static shape")
        name = f"x{len(self.inputs)}" if fixed is None else f"i{len(self.inputs)}"
        var = rt.tensor(name, shape=shape if static else (None,) * len(shape), dtype=dtype)
        if fixed is not None:
            self.fixed[len(self.inputs)] = fixed
        self.inputs.append(var)
        self.shapes.append(shape)
        node = Node(var, shape)
        if fixed is None:
            self.nodes.append(node)
        return node

    def pick(self, want: Callable[[Node], bool] = lambda n: True) -> Node | None:
        """A node that satisfies ``want``, the newest most likely (shrinks to the newest)."""
        found = [n for n in reversed(self.nodes) if want(n)]
        if not found:
            return None
        return found[self.draw(st.integers(0, len(found) - 1))]

    def partner(self, node: Node, want: Callable[[Node], bool] = lambda n: True) -> Node | None:
        """A node whose shape broadcasts with ``node``'s."""
        return self.pick(lambda n: want(n) and broadcasts(n.shape, node.shape))

    def add(
        self,
        step: str,
        build: Callable[[], Var],
        shape: tuple[int, ...],
        exact: bool,
        reads: Sequence[Node] = (),
        out_of_bounds: bool = False,
    ) -> Node | None:
        """Build a node; a rewritekit error (an ill-typed combination) skips it, any other
        error is recorded as a bug of construction."""
        try:
            var = build()
        except rk.RewritekitError:
            return None
        except Exception as exc:
            self.refused.append(f"{step}: {type(exc).__name__}: {exc}")
            return None
        if tuple(var.type.shape) != tuple(shape) and not _fits(var.type.shape, shape):
            self.refused.append(f"{step}: static shape {var.type.shape} but {shape} expected")
            return None
        exact = exact and all(r.exact for r in reads)
        name = step.split("(")[0].split("[")[0]
        zero_sign = name == "abs" or (name in MOVES and all(r.zero_sign for r in reads))
        node = Node(var, tuple(shape), exact, zero_sign)
        if out_of_bounds:
            self.out_of_bounds.add(var)
        self.nodes.append(node)
        self.steps.append(step)
        return node


def _fits(static: Sequence[int | None], shape: Sequence[int]) -> bool:
    return len(static) == len(shape) and all(
        s is None or s == n for s, n in zip(static, shape, strict=True)
    )


def broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def number(n: Node) -> bool:
    return n.kind in "iuf"


def integer(n: Node) -> bool:
    return n.kind in "iub"


def settled(n: Node) -> bool:
    """A value a discontinuous Op may read: integer, bool, or an exact float."""
    return n.kind != "f" or n.exact


def shape_of(fn: Callable[[np.ndarray], Any], *shapes: tuple[int, ...]) -> tuple[int, ...]:
    with np.errstate(all="ignore"):
        return tuple(np.shape(fn(*[np.zeros(s) for s in shapes])))
