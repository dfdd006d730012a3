"""Composite random variables: a user's sampling graph as one random-variable node.

``rr.custom(build, name=...)`` (``rewritekit.random``) traces ``build(key, *params) ->
(next_key, value)`` once per call over canonical placeholders: the key and each parameter's
*core* type (its last ``ndims_params`` axes; scalars by default). The result is a
``CustomRV`` node whose inner graph (``rewritekit.ir.inner``) is that core sampler, whose
inputs are the built-ins' ``(key, size, *params)`` and whose outputs are ``(next_key,
draw)``: the rest of rewritekit sees a random variable like any other (``is_draw``,
``joint_logprob``, the printers, the rules engine, which rewrites the inner graph too).

A draw with batch axes (``size=``, or parameters with more axes than their core) samples
every element with the core graph:

- an *elementwise* core (only elementwise Ops and scalar built-in draws without ``size``,
  all parameters scalars: ``abs(normal(key, 0, s))``) is applied once to the broadcast
  parameters, each inner draw given the batch shape as its ``size``: the draws the
  built-ins make, one key for the batch;
- any other core runs once per element (a ``Blockwise``: ``jax.vmap`` on JAX, a loop on
  NumPy), element ``i`` with its own key (``split`` of the key, or ``fold_in`` of the
  element's index where the batch's length is known only at run time).

``expand`` builds that graph; the backends lower it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from rewritekit.errors import GraphTypeError
from rewritekit.ir import TensorType, Var, apply_op, toposort
from rewritekit.ir.inner import InnerGraph, close_over
from rewritekit.tensor.control.blockwise import Blockwise
from rewritekit.tensor.creation import arange
from rewritekit.tensor.layout import broadcast_to, reshape
from rewritekit.tensor.random import KEY_TYPE, FoldIn, RandomVariable, SplitKey, batch_lengths
from rewritekit.tensor.shape_vectors import as_shape_vector, shape_i
from rewritekit.tensor.ufunc import Elemwise

__all__ = ["CustomRV", "CustomSpec", "broadcast_params"]


class CustomSpec:
    """What a composite distribution is, apart from one call's graph (compared by identity).

    Attributes:
        name: the distribution's name (printing, errors, CDF tables).
        params: the parameter names.
        ndims_params: the core axes of each parameter.
        logp: ``logp(value, *params) -> Var`` or None (derive it from the inner graph).
        logcdf: ``logcdf(value, *params) -> Var`` or None.
    """

    __slots__ = ("logcdf", "logp", "name", "ndims_params", "params")

    def __init__(
        self,
        name: str,
        params: Sequence[str],
        ndims_params: Sequence[int],
        logp: Callable[..., Any] | None,
        logcdf: Callable[..., Any] | None,
    ) -> None:
        self.name, self.params = name, tuple(params)
        self.ndims_params = tuple(int(n) for n in ndims_params)
        self.logp, self.logcdf = logp, logcdf

    def __repr__(self) -> str:
        return f"CustomSpec({self.name!r})"


class CustomRV(RandomVariable):
    """A draw from the core sampler ``core`` (an inner graph ``(key, *core params) ->
    (next_key, core value)``) of the composite distribution ``spec``.

    Parameters: ``size`` and ``dtype`` as every random variable's, ``core`` and ``spec``.
    The draw's core axes are the core value's; its batch axes are the parameters' batch
    axes broadcast, or ``size``.
    """

    __props__ = ("size", "dtype", "core", "spec")
    _graph_props = ("core",)
    core: InnerGraph
    spec: CustomSpec

    def __init__(self, size: Any, dtype: Any, core: InnerGraph, spec: CustomSpec) -> None:
        types = core.input_types
        if len(types) != 1 + len(spec.params) or types[0] != KEY_TYPE:
            raise GraphTypeError(f"{spec.name}: the core graph must take a key and the parameters")
        if len(core.outputs) != 2 or core.output_types[0] != KEY_TYPE:
            raise GraphTypeError(f"{spec.name}: the core graph must return (next_key, value)")
        if core.output_types[1].dtype != TensorType(dtype).dtype:
            raise GraphTypeError(f"{spec.name}: the draw's dtype must be the core value's")
        super().__init__(size, dtype, core, spec)

    # what a built-in random variable says in class attributes, this one says per spec
    @property  # type: ignore[misc,override]
    def name(self) -> str:
        return self.spec.name

    @property  # type: ignore[misc,override]
    def params(self) -> tuple[str, ...]:
        return self.spec.params

    @property  # type: ignore[misc,override]
    def ndims_params(self) -> tuple[int, ...]:
        return self.spec.ndims_params

    @property  # type: ignore[misc,override]
    def ndim_supp(self) -> int:
        return self.core.output_types[1].ndim

    @property  # type: ignore[misc,override]
    def kind(self) -> str:
        return "f" if self.core.output_types[1].kind == "f" else "i"

    def support_shape(self, *params: TensorType) -> tuple[int | None, ...]:
        return self.core.output_types[1].shape

    def infer_types(self, key: TensorType, size: TensorType, *params: TensorType) -> Any:
        types = super().infer_types(key, size, *params)
        for name, n, t, want in zip(
            self.params, self.ndims_params, params, self.core.input_types[1:], strict=True
        ):
            core = t.with_shape(t.shape[t.ndim - n :])
            if not want.is_compatible(core) and not want.with_shape(core.shape) == core:
                raise GraphTypeError(
                    f"{self.name}: parameter {name!r} has core type {core}, but the sampler "
                    f"was traced with {want}"
                )
        return types

    @property
    def inner_graphs(self) -> tuple[InnerGraph, ...]:
        return (self.core,)

    def with_inner_graphs(self, graphs: Sequence[InnerGraph]) -> CustomRV:
        return CustomRV(self.size, self.dtype, graphs[0], self.spec)

    def __str__(self) -> str:  # the core graph is printed beneath the node (dprint)
        return f"{self.name}{{size={self.size}, dtype={self.dtype!r}}}"

    @property
    def elementwise(self) -> bool:
        """True when the core is elementwise (module docstring): scalar parameters and
        value, and only elementwise Ops and scalar built-in draws without a size."""
        found = self.__dict__.get("_rk_elementwise")
        if found is None:
            found = self.__dict__["_rk_elementwise"] = _elementwise(self)
        return found

    def expand(self, key: Var, size: Var, *params: Var) -> tuple[Var, Var]:
        """``(next_key, draw)`` as a graph of the core's Ops (module docstring)."""
        batch = self._batch_shape(tuple(p.type for p in params))
        if not batch and self.size is None:
            next_key, draw = self.core.apply([key, *params])
            return next_key, draw
        lengths = batch_lengths(self, size, params)
        if self.elementwise:
            return _broadcast_core(self.core, key, lengths, params)
        return _per_element(self, key, lengths, params)


def _elementwise(op: CustomRV) -> bool:
    if op.ndim_supp or any(op.ndims_params):
        return False
    for node in toposort(list(op.core.outputs)):
        inner = node.op
        if isinstance(inner, CustomRV):
            if not inner.elementwise or inner.size is not None:
                return False
        elif isinstance(inner, RandomVariable):
            if inner.size is not None or inner.ndim_supp or any(inner.ndims_params):
                return False
        elif not isinstance(inner, Elemwise):
            return False
    return True


def _broadcast_core(
    core: InnerGraph, key: Var, lengths: list[int | Var], params: Sequence[Var]
) -> tuple[Var, Var]:
    """The elementwise core applied to the parameters broadcast to the batch, each inner
    draw given the batch as its size."""
    shape = as_shape_vector(lengths, "custom random variable: batch shape")
    static = tuple(n if isinstance(n, int) else None for n in lengths)
    env: dict[Var, Var] = {core.inputs[0]: key}
    env.update((ph, broadcast_to(p, shape)) for ph, p in zip(core.inputs[1:], params, strict=True))
    for node in toposort(list(core.outputs)):
        inputs = [env.get(i, i) for i in node.inputs]
        op = node.op
        if isinstance(op, RandomVariable):
            more = [getattr(op, p) for p in type(op).__props__[2:]]
            op, inputs[1] = type(op)(static, op.dtype, *more), shape
        for old, new in zip(node.outputs, apply_op(op, inputs), strict=True):
            env[old] = new
    next_key, draw = (env.get(o, o) for o in core.outputs)
    return next_key, broadcast_to(draw, shape)


def _per_element(
    op: CustomRV, key: Var, lengths: list[int | Var], params: Sequence[Var]
) -> tuple[Var, Var]:
    """The core run once per element of the batch (a ``Blockwise``), each with its own key:
    element ``i`` of the batch in row-major order gets key ``i``."""
    static = all(isinstance(n, int) for n in lengths)
    count: int | Var = math.prod(lengths) if static else _product(lengths)  # type: ignore[arg-type]
    if isinstance(count, int):
        keys = apply_op(SplitKey(count + 1), (key,))[0]
        next_key, element_keys = keys[0], keys[1:]
    else:
        keys = apply_op(SplitKey(2), (key,))[0]
        next_key = keys[0]
        fold = _fold_in_graph()
        element_keys = apply_op(Blockwise(fold, (False, True), 1), (keys[1], arange(count)))[0]
    element_keys = reshape(element_keys, as_shape_vector([*lengths, 2], f"{op.name}: keys"))
    inputs, batched = broadcast_params(op, lengths, params)
    draws = apply_op(Blockwise(op.core, [True, *batched], len(lengths)), [element_keys, *inputs])
    return next_key, draws[1]


def broadcast_params(
    op: RandomVariable, lengths: Sequence[int | Var], params: Sequence[Var]
) -> tuple[list[Var], list[bool]]:
    """The parameters as a ``Blockwise`` over the batch ``lengths`` takes them, and which
    are batched: one with batch axes broadcast to the batch (and its core lengths), one
    without shared by every element."""
    inputs, batched = [], []
    for p, n in zip(params, op.ndims_params, strict=True):
        if p.ndim == n:
            inputs.append(p)
            batched.append(False)
            continue
        core = [
            shape_i(p, a) if p.type.shape[a] is None else p.type.shape[a]
            for a in range(p.ndim - n, p.ndim)
        ]
        inputs.append(broadcast_to(p, as_shape_vector([*lengths, *core], f"{op.name}: parameters")))
        batched.append(True)
    return inputs, batched


def _product(lengths: list[int | Var]) -> Var:
    total: Any = 1
    for n in lengths:
        total = n * total
    return total  # type: ignore[no-any-return]


def _fold_in_graph() -> InnerGraph:
    k, i = Var(KEY_TYPE), Var(TensorType("int64", ()))
    graph, _ = close_over([k, i], [apply_op(FoldIn(), (k, i))[0]])
    return graph
