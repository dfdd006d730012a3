"""Standard library rules: constant folding, static shapes and shape inference (phase ``fold``).

- **Constant folding** (``constant_fold``): a node whose inputs are all constants becomes
  the constant of its value, computed by the NumPy reference implementation
  (``numpy_funcify``) with NumPy's floating-point warnings silenced. A result of more than
  ``FOLD_LIMIT`` (2**16) elements is not materialised (``rt.zeros((10000, 10000))`` stays
  an ``Alloc``); its size is read from the static shape, else from shape inference, before
  anything is evaluated. An evaluation that raises (an index out of range, a singular
  matrix) leaves the node alone, so the error still comes at run time. An Op opts out of
  folding with the class attribute ``foldable = False`` (random Ops: every run must draw
  anew).
- **Static shapes**: ``shape(x)``, ``shape_i(x, i)`` and entries of shape vectors become
  constants where the static lengths of ``x`` say them; a partly static ``shape(x)`` becomes
  a ``MakeVector`` of constants and ``shape_i(x, i)``. ``rt.size(x)`` is a product of
  ``shape_i`` and folds with them.
- **Shape inference**: ``shape(f(...))`` and ``shape_i(f(...), i)`` are computed from the
  shapes of ``f``'s inputs, so asking for a shape never evaluates ``f``. These rules carry
  the tag ``shape_unsafe``: like PyTensor's shape feature they assume the graph is valid,
  so where running ``f`` would raise on mismatched shapes, the inferred shape may not.

Shape inference itself (the ``infer_shape`` table, and how to register an Op) is in
``shape_inference.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Constant, Var, constant
from rewritekit.ir.patterns import pattern_function
from rewritekit.rules.library._support import a
from rewritekit.rules.library.shape_inference import (
    entry_of,
    infer_shape,
    inferred_shape,
    int64_scalar,
    lengths,
    resolved_shape,
    shape_vector,
)
from rewritekit.rules.matcher import CONSTANT
from rewritekit.rules.patterns import lvar
from rewritekit.rules.rule import Bindings, rule
from rewritekit.rules.ruleset import RuleSet
from rewritekit.tensor.gradient import SumTo
from rewritekit.tensor.shapes import (
    MakeVector,
    Shape,
    ShapeI,
)
from rewritekit.tensor.subtensor import SCALAR, Subtensor

__all__ = ["FOLD_LIMIT", "infer_shape", "rules"]

#: The most elements a folded constant may have.
FOLD_LIMIT = 2**16

_SHAPE = Shape()
_MAKE_VECTOR = MakeVector()
_ax, _idx = lvar("ax"), lvar("idx")


# --- constant folding -------------------------------------------------------------------


def _value(var: Var) -> np.ndarray | None:
    """The value of ``var``, a function of constants, by the NumPy reference; None when it
    reads a graph input or raises (the error is left to run time)."""
    if isinstance(var, Constant):
        return var.data
    from rewritekit.backends.lowering import lower
    from rewritekit.backends.numpy import numpy_funcify  # the backend loads SciPy: lazily

    node = var.owner
    try:
        with np.errstate(all="ignore"):
            if all(isinstance(i, Constant) for i in node.inputs):  # one node: call it
                value = numpy_funcify(node.op, node)(*[i.data for i in node.inputs])
                return np.asarray(value if node.nout == 1 else value[var.index])
            run = lower([], [var], lambda node: numpy_funcify(node.op, node))
            return np.asarray(run()[0])
    except Exception:  # an index out of range, LinAlgError, no implementation, ...
        return None


def _size_of(var: Var) -> int | None:
    """The number of elements of ``var`` (whose inputs are constants) without computing
    it: from the static shape, else by evaluating the inferred shape; None if unknown."""
    if None not in var.type.shape:
        return math.prod(var.type.shape)  # type: ignore[arg-type]
    entries = inferred_shape(var)
    lengths = [None if e is None else _value(e) for e in entries or [None]]
    return None if any(n is None for n in lengths) else math.prod(int(n) for n in lengths)


def _fold(b: Bindings) -> Var | None:
    var = b.term
    node = var.owner
    for i in node.inputs:  # the fast decline: this rule is tried on every node
        if not isinstance(i, Constant):
            return None
    if not getattr(node.op, "foldable", True):
        return None
    size = _size_of(var)  # unknown: evaluate only small inputs, then check the result
    if size is None and any(i.data.size > FOLD_LIMIT for i in node.inputs):
        return None
    value = None if size is not None and size > FOLD_LIMIT else _value(var)
    if value is None or value.size > FOLD_LIMIT or value.ndim != var.ndim:
        return None
    if any(n is not None and n != d for n, d in zip(var.type.shape, value.shape, strict=True)):
        return None
    return constant(value.astype(var.dtype, copy=False))


def _constant_inputs(child_ops: tuple[Any, ...]) -> bool:
    return all(op is CONSTANT for op in child_ops)


constant_fold = rule(
    a, _fold, name="constant_fold", example=lambda: rt.exp(rt.constant(np.arange(3.0)))
)
constant_fold.child_test = _constant_inputs  # index it under nodes of constants


# --- static shapes and shape inference --------------------------------------------------


@pattern_function(ShapeI)
def shape_i_node(x: Any, axis: int) -> Var:
    """The ``ShapeI`` node itself, for patterns: ``rt.shape_i`` answers a constant where
    the length is static, so a pattern of it would not match such a node.

    Example:
        >>> shape_i_node(rt.tensor("x", shape=(2,)), 0).owner.op
        ShapeI{axis=0}
    """
    return ShapeI(axis)(x)


@pattern_function(Subtensor)
def index_node(x: Any, index: tuple[Any, ...]) -> Var:
    """``x`` indexed by the ``Subtensor`` parameter ``index`` (no run-time parts), for
    patterns that match any such index, slices included.

    Example:
        >>> v = rt.vector("v")
        >>> index_node(v, ((1, None, None),)) is v[1:]
        True
    """
    return Subtensor(index)(x)


def _static_shape(b: Bindings) -> Var | None:
    shape = b.a.type.shape
    return None if None in shape else constant(np.array(shape, dtype=np.int64).reshape(-1))


def _static_length(b: Bindings) -> Var | None:
    length = b.a.type.shape[b.ax]
    return None if length is None else constant(np.int64(length))


def _partly_static_shape(b: Bindings) -> Var | None:
    shape = b.a.type.shape
    if None not in shape or all(d is None for d in shape):
        return None  # fully static: shape_of_static; nothing static: shape(a) is shorter
    return _MAKE_VECTOR(*lengths(b.a))


def _shape_from_inputs(b: Bindings) -> Var | None:
    if b.a.owner is None:
        return None
    entries = resolved_shape(b.a)
    if entries is None or all(e is None for e in entries):
        return None
    return shape_vector([ShapeI(i)(b.a) if e is None else e for i, e in enumerate(entries)])


def _length_from_inputs(b: Bindings) -> Var | None:
    if b.a.owner is None:
        return None
    entries = resolved_shape(b.a)
    return None if entries is None else entries[b.ax]


def _select(entries: Sequence[Var], index: tuple[Any, ...]) -> Var | None:
    """``entries[index]`` for a one-entry index parameter: an entry or a vector of them."""
    if len(index) != 1:
        return None
    (entry,) = index
    if isinstance(entry, int):
        return entries[entry]
    if isinstance(entry, tuple) and SCALAR not in entry:
        return shape_vector(entries[slice(*entry)])
    return None


def _make_vector_entry(b: Bindings) -> Var | None:
    node = b.a.owner
    if node is None or not isinstance(node.op, MakeVector):
        return None
    return _select([int64_scalar(e) for e in node.inputs], b.idx)


shape_of_static = rule(
    _SHAPE(a),
    _static_shape,
    name="shape_of_static",
    example=lambda: _SHAPE(rt.tensor("x", shape=(2, 3))),
)
shape_i_of_static = rule(
    shape_i_node(a, _ax),
    _static_length,
    name="shape_i_of_static",
    example=lambda: ShapeI(1)(rt.tensor("x", shape=(None, 3))),
)
shape_of_partly_static = rule(
    _SHAPE(a),
    _partly_static_shape,
    name="shape_of_partly_static",
    example=lambda: rt.shape(rt.tensor("x", shape=(None, 3))),
)
shape_from_inputs = rule(
    _SHAPE(a),
    _shape_from_inputs,
    name="shape_from_inputs",
    tags={"shape_unsafe"},
    example=lambda: rt.shape(rt.exp(rt.tensor("x", shape=(None, 3)))),
)
shape_i_from_inputs = rule(
    shape_i_node(a, _ax),
    _length_from_inputs,
    name="shape_i_from_inputs",
    tags={"shape_unsafe"},
    example=lambda: rt.shape_i(rt.exp(rt.matrix("x")), 1),
)
make_vector_entry = rule(
    index_node(a, _idx),
    _make_vector_entry,
    name="make_vector_entry",
    example=lambda: _example_make_vector()[1],
)
make_vector_entry.child_test = lambda ops: isinstance(ops[0], MakeVector)  # index: cheap
shape_entry = rule(
    index_node(_SHAPE(a), _idx),
    lambda b: _select(lengths(b.a), b.idx),
    name="shape_entry",
    example=lambda: rt.shape(rt.matrix("x"))[1],
)


@pattern_function(SumTo, inputs=("g", "vector"))
def sum_to_node(g: Any, vector: Var, shape: Any) -> Var:
    """``SumTo(shape)(g, vector)`` (a pattern head)."""
    return SumTo(shape)(g, vector)


_st, _sv = lvar("st"), lvar("sv")


def _sums_nothing(b: Bindings) -> bool:
    """``g`` has the target shape already, entry by entry, as inferred from its inputs
    (``shape(x)`` for a ``g`` computed elementwise from ``x``): the sum is the identity."""
    g, vector = b.a, b.sv
    if g.type != b.term.type:
        return False
    entries = resolved_shape(g) if g.owner is not None else None
    for axis, static in enumerate(g.type.shape):
        entry = entries[axis] if entries is not None else None
        if entry is None:
            entry = rt.shape_i(g, axis) if static is None else constant(np.int64(static))
        if not _same_length(entry, entry_of(vector, axis)):
            return False
    return True


def _same_length(u: Var, v: Var) -> bool:
    if u is v:
        return True
    return isinstance(u, Constant) and isinstance(v, Constant) and int(u.data) == int(v.data)


def _example_sum_to() -> Var:
    v = rt.vector("v")
    return sum_to_node(rt.exp(v) * 2.0, rt.shape(v), (None,))


drop_sum_to_own_shape = rule(
    sum_to_node(a, _sv, _st),
    a,
    name="drop_sum_to_own_shape",
    when=_sums_nothing,
    tags={"shape_unsafe"},
    example=_example_sum_to,
)


def _example_make_vector() -> Var:
    x = rt.matrix("x")
    return _MAKE_VECTOR(rt.shape_i(x, 0), rt.shape_i(x, 1))


rules = RuleSet(
    [
        shape_of_static,
        shape_i_of_static,
        constant_fold,
        make_vector_entry,
        shape_entry,
        shape_from_inputs,
        shape_i_from_inputs,
        shape_of_partly_static,
        drop_sum_to_own_shape,
    ],
    name="fold",
    tags={"fold"},
)
