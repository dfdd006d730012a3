"""``rr.custom``: a function that draws with the samplers, packaged as one distribution.

Example:
    >>> def folded(key, loc, scale):  # |Normal(loc, scale)|
    ...     key, z = rr.normal(key, loc, scale)
    ...     return key, rt.abs(z)
    >>> folded_normal = rr.custom(folded, name="folded_normal")
    >>> k, x = folded_normal(rr.key(), 1.0, 2.0, size=(3,))
    >>> x.type, x.owner.op.name
    (TensorType(dtype='float64', shape=(3,)), 'folded_normal')
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError
from rewritekit.ir import TensorType, Var, as_var, constant, short_name, toposort
from rewritekit.ir.inner import close_over
from rewritekit.ir.types import result_dtype
from rewritekit.tensor import random as _rv
from rewritekit.tensor.arithmetic import cast
from rewritekit.tensor.custom_random import CustomRV, CustomSpec
from rewritekit.tensor.shape_vectors import as_shape_vector, static_shape_of

__all__ = ["BUILTIN", "custom"]

Pair = tuple[Var, Var]

#: the built-in distributions that are composites, by name (their specs)
BUILTIN: dict[str, CustomSpec] = {}


def _builtin_names() -> set[str]:
    found, stack = set(), [_rv.RandomVariable]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if not cls.abstract and cls is not CustomRV:
            found.add(cls.name)
    return found


def custom(
    build: Callable[..., Any],
    *,
    name: str,
    logp: Callable[..., Any] | None = None,
    logcdf: Callable[..., Any] | None = None,
    params: Sequence[str] | None = None,
    ndims_params: Sequence[int] | None = None,
    _builtin: bool = False,
) -> Callable[..., Pair]:
    """A sampler ``sampler(key, *params, size=None, dtype=None) -> (next_key, draw)`` that
    draws with ``build(key, *params) -> (next_key, value)``, as one random-variable node.

    ``build`` draws with the built-in samplers (or other composites), threading the key:
    it is traced once per call, over the key and each parameter's core type. Each call
    of the sampler is one node (``CustomRV``) holding that graph; sampling runs it on every
    backend. ``size=`` adds batch axes (the parameters' batch axes broadcast to it), as for
    the built-ins: an elementwise ``build`` is run once on the broadcast parameters, any
    other once per element with its own key.

    ``rewritekit.logprob`` derives the density from the graph (``abs`` of a normal is a
    half-normal; ``exp`` of one a log-normal) unless ``logp`` is given, which takes
    precedence; ``logcdf`` gives censoring, truncation and comparisons a CDF.

    Args:
        build: ``build(key, *params) -> (next_key, value)``.
        name: the distribution's name (printed, and in errors); not a built-in's.
        logp: ``logp(value, *params) -> log-density``, elementwise over the batch axes.
        logcdf: ``logcdf(value, *params) -> log P(X <= value)``.
        params: the parameter names (default: ``build``'s, after the key).
        ndims_params: the core axes of each parameter (default: 0, scalars).

    Raises:
        GraphTypeError: ``name`` is a built-in distribution's, ``build`` returns no pair of
            a key and a value, draws nothing, returns the key it was given while drawing,
            or reads graph inputs other than its arguments (pass those as parameters).
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise GraphTypeError(f"rr.custom: name must be an identifier, got {name!r}")
    if not _builtin and name in _builtin_names():
        raise GraphTypeError(f"rr.custom: {name!r} is a built-in distribution's name")
    names = tuple(params) if params is not None else _param_names(build, name)
    ndims = tuple(ndims_params) if ndims_params is not None else (0,) * len(names)
    if len(ndims) != len(names):
        raise GraphTypeError(f"{name}: {len(ndims)} ndims_params for {len(names)} parameters")
    spec = CustomSpec(name, names, ndims, logp, logcdf)
    if _builtin:
        BUILTIN[name] = spec

    def sampler(key: Any, *values: Any, size: Any = None, dtype: Any = None) -> Pair:
        if len(values) != len(names):
            raise GraphTypeError(
                f"{name}: expected {len(names)} parameters {names}, got {len(values)}"
            )
        key = as_var(key, context=f"{name}: key")
        # Python numbers are weak, as for the built-ins: float32 parameters keep float32
        weak = dtype or result_dtype(*[_rv._dtype_item(v) for v in values], 0.0)
        inputs = [_param(name, p, v, weak) for p, v in zip(names, values, strict=True)]
        for p, n, v in zip(names, ndims, inputs, strict=True):
            if v.ndim < n:
                raise GraphTypeError(
                    f"{name}: parameter {p!r} needs at least {n} axes, got {v.type}"
                )
        graph = _trace(build, spec, key.type, inputs)
        if size is None:
            op, vector = CustomRV(None, graph.output_types[1].dtype, graph, spec), _NO_SIZE
        else:
            vector = as_shape_vector(size, name)
            op = CustomRV(static_shape_of(vector), graph.output_types[1].dtype, graph, spec)
        return op(key, vector, *inputs)  # type: ignore[return-value]

    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = f"Draws from the composite distribution {name} ({', '.join(names)})."
    sampler.spec = spec  # type: ignore[attr-defined]
    return sampler


_NO_SIZE = constant(np.zeros(0, dtype=np.int64))


def _param_names(build: Callable[..., Any], name: str) -> tuple[str, ...]:
    try:
        signature = inspect.signature(build)
    except (TypeError, ValueError):
        raise GraphTypeError(
            f"rr.custom({name}): pass params=, build's signature is unknown"
        ) from None
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if not positional or any(p.kind == p.VAR_POSITIONAL for p in signature.parameters.values()):
        raise GraphTypeError(
            f"rr.custom({name}): build must take (key, *params) by name; pass params= for *args"
        )
    return tuple(p.name for p in positional[1:])


def _param(name: str, label: str, value: Any, dtype: Any) -> Var:
    """A parameter as a Var: Python numbers in ``dtype``, float Vars cast to it."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = np.asarray(value, dtype=dtype)
    var = as_var(value, context=f"{name}: parameter {label!r}")
    if var.type.kind == "f" and var.dtype != TensorType(dtype).dtype:
        var = cast(var, dtype)
    return var


def _trace(
    build: Callable[..., Any], spec: CustomSpec, key_type: TensorType, inputs: list[Var]
) -> Any:
    """The core graph: ``build`` over a fresh key and each parameter's core type."""
    name = spec.name
    key = Var(key_type, "key")
    fresh = [
        Var(TensorType(v.dtype, v.type.shape[v.ndim - n :]), p)
        for p, n, v in zip(spec.params, spec.ndims_params, inputs, strict=True)
    ]
    result = build(key, *fresh)
    if not isinstance(result, tuple) or len(result) != 2:
        raise GraphTypeError(f"{name}: build must return (next_key, value), got {result!r}")
    next_key = as_var(result[0], context=f"{name}: the next key build returned")
    value = as_var(result[1], context=f"{name}: the value build returned")
    if next_key.type != _rv.KEY_TYPE:
        raise GraphTypeError(f"{name}: build's first result must be a key, got {next_key.type}")
    draws = [n for n in toposort([value]) if isinstance(n.op, _rv.RandomVariable)]
    if not draws:
        raise GraphTypeError(
            f"{name}: build's value {short_name(value)} draws nothing from the key"
        )
    if next_key is key:
        raise GraphTypeError(
            f"{name}: build returned the key it was given; return the key its last draw gave"
        )
    graph, free = close_over([key, *fresh], [next_key, value])
    if free:
        shown = ", ".join(short_name(v) for v in free)
        raise GraphTypeError(
            f"{name}: build reads {shown} besides its key and parameters; pass them as parameters"
        )
    return graph
