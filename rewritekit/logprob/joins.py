"""Densities of joins of random quantities and of affine maps of multivariate normal draws.

The rules, with ``x``, ``x_i`` random quantities the other rules handle (draws, images of
draws such as ``exp(x)``) and ``v`` the value:

- ``log_density(concatenate([x_1, ..., x_n], axis=k), v) =
  concatenate([log_density(x_i, v[..., s_i]) for each i], axis=k)``, ``s_i`` the slice
  ``x_i`` fills along ``k``. ``k`` must be a batch axis of every part (not a core axis of a
  multivariate draw; the core axes are last, so ``k`` is also the axis of the
  log-densities), and no part may read another: the parts are independent, so the joint
  density is the product of theirs;
- ``log_density(expand_dims(x, axes), v) = expand_dims(log_density(x, squeeze(v, axes)),
  axes)`` with ``axes`` in the batch part: with the first rule, ``stack([x_1, ...], axis)``
  (a concatenation of ``expand_dims``) of independent draws;
- ``log_density(x @ B, v) = log_density(y, v)``, ``x`` a multivariate normal draw
  ``MVN(mean, cov)`` (batched: ``(..., K)``) and ``B`` a ``(K, M)`` matrix holding no draw:
  ``y`` is a new draw of ``MVN(mean @ B, B^T cov B)``. ``A @ x`` (``x`` one ``K``-vector,
  ``A`` an ``(M, K)`` matrix) is ``x @ A^T``: ``MVN(A mean, A cov A^T)``. The same for
  ``rt.dot``. The map must keep the covariance positive definite: ``A`` must have full row
  rank (so ``M <= K``; a static ``M > K`` is refused). A rank-deficient one is not caught:
  the NumPy backend raises ``numpy.linalg.LinAlgError`` from the Cholesky factorization,
  JAX returns NaN.

Shifts ``x + b``, ``b + x``, ``x - b`` of a multivariate draw by a vector ``b`` are
``measurable``'s shift rules, which hold for any number of core axes.

Lengths along the concatenation axis: static, or computed at run time for a part that is
a draw (from its size, or its parameters' lengths); one other part of unknown length gets
what the others leave (``v[2:-3]``: static bounds, which the JAX backend needs). Where
more parts have lengths known only at run time, no rule fires.

Two draws of one distribution with the same size and parameters are two draws (each gets
its own stand-in key), so ``stack([x1, x2])`` of independent standard normals is found;
``concatenate([x, x])`` (one draw twice) is not.

Example:
    >>> k, x = rr.normal(rr.key(), 0.0, 1.0, size=(2,))
    >>> k, y = rr.exponential(k, 2.0, size=(3,))
    >>> lp = rl.logprob(rt.concatenate([x, rt.exp(y)]), rt.vector("v", shape=(5,)))
    >>> lp.type.shape
    (5,)
"""

from __future__ import annotations

import itertools
import operator
from typing import Any

import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.logprob.measurable import (
    _as_type_of,
    _core_ndim,
    _reads,
    draws_in,
    is_random,
    log_density,
)
from rewritekit.rules import RuleSet, lvar, rule
from rewritekit.rules.library.structural import expand_dims_node
from rewritekit.rules.rule import Bindings
from rewritekit.tensor.joining import Concatenate
from rewritekit.tensor.random import MultivariateNormalRV, batch_lengths

__all__ = ["rules"]

a, c, v, ax = lvar("a"), lvar("c"), lvar("v"), lvar("ax")

Bound = int | Var | None


# --- concatenate and stack ---------------------------------------------------------------


def _concatenated(b: Bindings) -> Var | None:
    """concatenate([log_density(x_i, v[..., s_i]) for each part x_i], axis=k)"""
    node = b.a.owner
    if node is None or not isinstance(node.op, Concatenate):
        return None
    parts, axis = list(node.inputs), node.op.axis
    cores = {_core_ndim(p) for p in parts}
    if len(cores) != 1 or axis >= b.a.ndim - cores.pop() or not _independent(parts):
        return None
    bounds = _bounds(parts, axis, b.v)
    if bounds is None:
        return None
    head = (slice(None),) * axis
    logps = [log_density(p, b.v[(*head, slice(*s))]) for p, s in zip(parts, bounds, strict=True)]
    return _as_type_of(rt.concatenate(logps, axis=axis), b.term)


def _independent(parts: list[Var]) -> bool:
    """True when no part reads a draw of another (``measurable._reads``); every part must be
    random."""
    draws = [draws_in(p) for p in parts]
    return all(draws) and not any(
        _reads(p, d)
        for i, p in enumerate(parts)
        for j, ds in enumerate(draws)
        if i != j
        for d in ds
    )


def _bounds(parts: list[Var], axis: int, value: Var) -> list[tuple[Bound, Bound]] | None:
    """``(start, stop)`` of each part along ``axis``, or None where more than one length is
    unknown even at run time or the value has another static length. A single unknown
    length is what the others leave: the parts before it count from the start, those after
    it from the end (negative bounds)."""
    lengths = [_length(p, axis) for p in parts]
    unknown = [i for i, n in enumerate(lengths) if n is None]
    if len(unknown) > 1:
        return None
    if unknown:
        u = unknown[0]
        from_end = [-n for n in _running(lengths[:u:-1])][::-1]
        edges = [0, *_running(lengths[:u]), *from_end, None]
    else:
        edges = [0, *_running(lengths)]
        if not _fits(value, axis, edges[-1]):
            return None
    return list(itertools.pairwise(edges))


def _running(lengths: list[Bound]) -> list[Any]:
    return list(itertools.accumulate(lengths, operator.add))


def _fits(value: Var, axis: int, total: Any) -> bool:
    """False where the value's static length along ``axis`` is not the concatenation's."""
    found = value.type.shape[axis]
    return not isinstance(total, int) or found is None or found == total


def _length(x: Var, axis: int) -> int | Var | None:
    """``x``'s length along the batch axis ``axis``: static, or for a draw from its size or
    parameters (``batch_lengths``: not ``shape(x)``, which would draw from ``logprob``'s
    stand-in key); None otherwise."""
    found = x.type.shape[axis]
    if found is not None or not is_random(x):
        return found
    node = x.owner
    return batch_lengths(node.op, node.inputs[1], node.inputs[2:])[axis]


def _expanded_density(b: Bindings) -> Var | None:
    """expand_dims(log_density(a, squeeze(v, axes)), axes), the axes in the batch part"""
    batch = b.term.ndim  # the log-density's rank: the expanded draw's batch axes
    if not draws_in(b.a) or any(axis >= batch for axis in b.ax):
        return None
    return rt.expand_dims(log_density(b.a, rt.squeeze(b.v, b.ax)), b.ax)


# --- affine maps of a multivariate normal draw ---------------------------------------------


def _times_matrix(b: Bindings) -> Var | None:
    """log_density(y, v), y ~ MVN(mean @ c, c^T cov c): the rows of a @ c"""
    return _mapped(b, b.a, b.c)


def _matrix_times(b: Bindings) -> Var | None:
    """log_density(y, v), y ~ MVN(c mean, c cov c^T): c @ a, a one K-vector"""
    if b.a.ndim != 1 or b.c.ndim != 2:
        return None
    return _mapped(b, b.a, rt.transpose(b.c))


def _mapped(b: Bindings, x: Var, matrix: Var) -> Var | None:
    """The density of ``x @ matrix``, ``x`` a multivariate normal draw (K-vectors) and
    ``matrix`` a ``(K, M)`` matrix holding no draw, as the density of a new draw
    ``MVN(mean @ matrix, matrix^T cov matrix)`` of ``x``'s size (and key: it is never
    drawn); None where ``M > K`` statically (a singular covariance)."""
    node = x.owner
    if not is_random(x) or not isinstance(node.op, MultivariateNormalRV):
        return None
    if matrix.ndim != 2 or matrix.type.kind not in "iuf" or draws_in(matrix):
        return None
    k = x.type.shape[-1] if matrix.type.shape[0] is None else matrix.type.shape[0]
    m = matrix.type.shape[1]
    if k is not None and m is not None and m > k:
        return None
    mean, cov = node.inputs[2:]
    size = None if node.op.size is None else node.inputs[1]
    dtype = b.term.owner.inputs[0].dtype  # the product's: x's promoted with the matrix's
    _, y = rr.multivariate_normal(
        node.inputs[0],
        mean @ matrix,
        rt.transpose(matrix) @ cov @ matrix,
        size=size,
        dtype=dtype,
    )
    return _as_type_of(log_density(y, b.v), b.term)


rules = RuleSet(
    [
        rule(log_density(a, v), _concatenated, name="concatenate_of_random"),
        rule(
            log_density(expand_dims_node(a, axes=ax), v),
            _expanded_density,
            name="expand_dims_of_random",
        ),
        rule(log_density(rt.matmul(a, c), v), _times_matrix, name="mvn_matmul_matrix"),
        rule(log_density(rt.dot(a, c), v), _times_matrix, name="mvn_dot_matrix"),
        rule(log_density(rt.matmul(c, a), v), _matrix_times, name="matrix_matmul_mvn"),
        rule(log_density(rt.dot(c, a), v), _matrix_times, name="matrix_dot_mvn"),
    ],
    name="logprob_joins",
    tags={"logprob"},
)
