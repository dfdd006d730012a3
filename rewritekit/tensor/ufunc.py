"""What makes an Op elementwise: broadcasting, NumPy 2 promotion with weak Python scalars,
and derivatives stated as one expression per Op.

Every elementwise Op states two dtype facts, used by ``infer_types`` and by both backends:
``cast_dtypes`` (the dtype each input is computed in) and ``output_dtype``. The families:

- *arithmetic* (``add``, ``maximum``, ``abs``, ...): inputs promote by NumPy's rules and the
  result has the promoted dtype (``abs`` of complex gives the matching float).
- *float* (``exp``, ``sin``, and the special functions of ``special.py``): float inputs
  keep their dtype; integer and bool inputs compute in float64 (NumPy would give float16
  for int8; SciPy and JAX with x64 give float64).
- *predicates* (comparisons, ``isnan``, logical ops): bool results.

An elementwise Op's derivative is one line in its module's table, given to ``defvjp``::

    defvjp({
        Exp: lambda x, out, g: g * out,
        Multiply: lambda x, y, out, g: (g * y, g * x),
        Floor: lambda x, out, g: 0,  # zero almost everywhere
    })

A rule maps the inputs, the output and the output's cotangent ``g`` to each input's
cotangent at the output's shape; the differentiator sums it back over broadcasting and casts
it to the input's dtype (``Op.broadcasts``), so no rule repeats that. A rule (or an
elementwise Op's ``vjp`` method) is linear in ``g`` and reads it position by position, as
every derivative does; so when ``g`` is masked, ``where(c, 0, h)`` (what ``where`` sends the
branch it did not take), the differentiator gives the rule ``h`` and masks its results
again: the masked positions get exact zeros, not ``0 * inf = nan``. ``shape_sources`` says
which inputs have the result's run-time shape, so that their masks need no summing back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError
from rewritekit.ir import (
    Apply,
    Grads,
    Op,
    TensorType,
    Var,
    Vars,
    as_var,
    broadcast_shapes,
    result_dtype,
)
from rewritekit.ir.nodes import all_vars

__all__: list[str] = []  # the base classes; the Ops' modules export the functions

_PY_SCALARS = (bool, int, float, complex)


def _is_weak_scalar(value: object) -> bool:
    return isinstance(value, _PY_SCALARS) and not isinstance(value, np.generic)


def _kind(dtype: str) -> str:
    return np.dtype(dtype).kind


class Elemwise(Op):
    """Base of elementwise Ops.

    Class attributes:
        nin: the number of inputs.
        commutative: the inputs may be swapped (used by the rules engine).
        kinds: the NumPy dtype kinds the Op accepts (``b``ool, ``i``nt, ``u``int, ``f``loat,
            ``c``omplex); other inputs are rejected at construction.
    """

    abstract = True
    broadcasts = True

    nin: ClassVar[int] = 1
    commutative: ClassVar[bool] = False
    kinds: ClassVar[str] = "biufc"
    #: The derivative (see the module docstring); given by ``defvjp``.
    vjp_rule: ClassVar[Callable[..., Any] | None] = None

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        rule = type(self).vjp_rule
        if rule is None:
            raise NotImplementedError(f"{self.name} has no derivative rule (see defvjp)")
        grads = rule(*inputs, outputs[0], cotangents[0])
        return list(grads) if self.nin > 1 else [grads]

    def prepare_inputs(self, *args: Any) -> tuple[Var, ...]:
        if len(args) == self.nin and all_vars(args):
            return args
        if len(args) != self.nin:
            raise GraphTypeError(f"{self.name}: expected {self.nin} inputs, got {len(args)}")
        strong = {
            i: as_var(a, context=f"{self.name}: input {i}")
            for i, a in enumerate(args)
            if not _is_weak_scalar(a)
        }
        weak = [a for a in args if _is_weak_scalar(a)]
        dtype = self.weak_dtype([strong[i].type for i in sorted(strong)], weak)
        return tuple(
            strong[i] if i in strong else _weak_constant(a, dtype, f"{self.name}: input {i}")
            for i, a in enumerate(args)
        )

    def batch(self, node: Apply, inputs: Vars) -> Vars:
        """One rule for every elementwise Op: broadcasting lines up the batch axes once each
        batched input has its core axes padded to the output's rank (unbatched inputs
        broadcast from the right as they are)."""
        rank = node.outputs[0].ndim
        padded = []
        for old, new in zip(node.inputs, inputs, strict=True):
            nb, pad = new.ndim - old.ndim, rank - old.ndim
            padded.append(new[(slice(None),) * nb + (None,) * pad] if nb and pad else new)
        return (self(*padded),)

    def weak_dtype(self, strong: list[TensorType], weak: list[Any]) -> str:
        """The dtype given to Python-scalar arguments, from the other arguments' types."""
        return result_dtype(*strong, *weak)

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        dtypes = [t.dtype for t in input_types]
        self._check_kinds(dtypes)
        shape = broadcast_shapes(*(t.shape for t in input_types), op=self.name)
        return (TensorType(self.output_dtype(*dtypes), shape),)

    def _check_kinds(self, dtypes: list[str]) -> None:
        # Checked on the dtypes the inputs are computed in: subtract(bool, int) is fine.
        casts = self.cast_dtypes(*dtypes)
        for position, (dtype, cast) in enumerate(zip(dtypes, casts, strict=True)):
            if _kind(cast) not in self.kinds:
                computed = "" if cast == dtype else f" (computed in {cast})"
                raise DTypeError(
                    f"{self.name}: input {position} has dtype {dtype}{computed}, which "
                    f"{self.name} does not support (expected one of the kinds "
                    f"{_kind_names(self.kinds)})"
                )

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        """The dtype each input is computed in (arithmetic: the promoted dtype)."""
        common = result_dtype(*dtypes)
        return (common,) * len(dtypes)

    def output_dtype(self, *dtypes: str) -> str:
        """The result's dtype for these input dtypes."""
        return result_dtype(*dtypes)


def _kind_names(kinds: str) -> str:
    names = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}
    return ", ".join(names[k] for k in kinds)


def _weak_constant(value: Any, dtype: str, context: str) -> Var:
    if _kind(dtype) in "iu" and isinstance(value, int) and not isinstance(value, bool):
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise GraphTypeError(
                f"{context}: Python int {value} is out of bounds for {dtype} "
                f"[{info.min}, {info.max}]"
            )
    if _kind(dtype) in "biu" and isinstance(value, (float, complex)):
        dtype = result_dtype(dtype, value)
    kind = type(value)
    if kind not in (bool, int, float) or value != value:  # NaN: its bits are not its value
        return as_var(value, dtype=dtype, context=context)
    key = (kind, value.hex() if kind is float else value, dtype)  # hex: -0.0 is not 0.0
    found = _WEAK_CONSTANTS.get(key)
    if found is None:
        if len(_WEAK_CONSTANTS) >= _WEAK_CONSTANTS_LIMIT:
            _WEAK_CONSTANTS.clear()
        found = _WEAK_CONSTANTS[key] = as_var(value, dtype=dtype, context=context)
    return found


#: The constants of Python scalars met by the elementwise Ops (``x * 2``, ``where(c, x,
#: 0)``), by type, value and dtype: interned anyway, but each costs an array and a hash.
_WEAK_CONSTANTS: dict[tuple[Any, ...], Var] = {}
_WEAK_CONSTANTS_LIMIT = 1 << 12


def float_dtype(dtype: str) -> str:
    """The dtype a float function computes in: floats keep theirs, the rest use float64."""
    return dtype if _kind(dtype) in "fc" else "float64"


class FloatElemwise(Elemwise):
    """An elementwise function computed in floating point (see the module docstring)."""

    abstract = True

    kinds = "biuf"

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        common = float_dtype(result_dtype(*dtypes))
        return (common,) * len(dtypes)

    def output_dtype(self, *dtypes: str) -> str:
        return float_dtype(result_dtype(*dtypes))


class ComplexFloatElemwise(FloatElemwise):
    """A float function that also accepts complex inputs."""

    abstract = True

    kinds = "biufc"


class Predicate(Elemwise):
    """An elementwise test: inputs compare in their promoted dtype; the result is bool."""

    abstract = True
    differentiable = False  # bool results carry no gradient

    def output_dtype(self, *dtypes: str) -> str:
        return "bool"


class Logical(Elemwise):
    """A logical connective: inputs are taken by truth value; the result is bool."""

    abstract = True
    differentiable = False  # bool results carry no gradient

    def weak_dtype(self, strong: list[TensorType], weak: list[Any]) -> str:
        return "bool"

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        return ("bool",) * len(dtypes)

    def output_dtype(self, *dtypes: str) -> str:
        return "bool"


def _fits_in(small: tuple[int | None, ...], large: tuple[int | None, ...]) -> bool:
    """Whether broadcasting ``small`` against ``large`` provably leaves ``large`` as it is:
    each of ``small``'s lengths is 1 or the same static length."""
    if len(small) > len(large):
        return False
    pairs = zip(reversed(small), reversed(large), strict=False)
    return all(s == 1 or (s is not None and s == big) for s, big in pairs)


def shape_sources(nodes: Iterable[Apply]) -> dict[Var, Var]:
    """For the elementwise results among ``nodes`` (in topological order), the Var whose
    run-time shape each provably has: an input that every other input fits into, by its
    static shape or by having the same source. Vars not in the map are their own source.

    Two Vars with the same source have the same shape even where the static shapes say
    ``None``: ``x * log(x)`` has ``x``'s shape, so its cotangent needs no summing back to
    ``x`` or ``log(x)`` (the differentiator uses this to keep masked cotangents masked).

    Example:
        >>> x = rt.vector("x")
        >>> y = x * rt.log(x) - 7
        >>> shape_sources(toposort(y))[y] is x
        True
    """
    sources: dict[Var, Var] = {}
    for node in nodes:
        if not isinstance(node.op, Elemwise):
            continue
        out = node.outputs[0]
        found = [sources.get(v, v) for v in node.inputs]
        for candidate, source in zip(node.inputs, found, strict=True):
            if candidate.ndim == out.ndim and all(
                other is source or _fits_in(v.type.shape, candidate.type.shape)
                for v, other in zip(node.inputs, found, strict=True)
            ):
                sources[out] = source
                break
    return sources


def defvjp(rules: Mapping[type[Elemwise], Callable[..., Any]]) -> None:
    """Give each elementwise Op class its derivative rule (see the module docstring).

    Example:
        >>> defvjp({Log1p: lambda x, out, g: g / (1 + x)})
    """
    for op, rule in rules.items():
        op.vjp_rule = staticmethod(rule)  # type: ignore[assignment]
