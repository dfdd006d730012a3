"""Graph nodes: ``Var`` (a value), ``Constant`` (a value known now) and ``Apply`` (an Op use).

Every node is immutable. ``Apply`` nodes and constants are hash-consed through weak intern
tables, so building the same expression twice returns the same objects and identity is
equality. Graph inputs are never interned: each ``Var(type, name)`` is a new variable,
whatever its name.

Ownership runs one way, from results to their arguments: an output ``Var`` holds its
``owner`` Apply, which holds its ``inputs``. An Apply holds its outputs only weakly (an
output nobody refers to is rebuilt on demand), so there are no reference cycles and an
unused graph is freed by reference counting alone.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError
from rewritekit.ir.intern import APPLIES, CONSTANTS
from rewritekit.ir.patterns import PatternArgument, is_pattern
from rewritekit.ir.types import TensorType, normalize_dtype

if TYPE_CHECKING:
    from rewritekit.ir.op import Op

__all__ = ["Apply", "Constant", "Var", "apply_op", "as_var", "constant", "short_name"]

_set = object.__setattr__
_INLINE_CONSTANT_BYTES = 1024  # larger constants intern by a content hash
_CONSTANT_BUCKET = CONSTANTS.bucket("constant")[1]


class _VarSlots:
    """The storage of a Var.

    New nodes are filled in as a private mutable twin (``_NewVar``, ``_NewApply``) and
    then given their public class, whose ``__setattr__`` refuses every assignment: plain
    attribute stores are about 4x cheaper than ``object.__setattr__``, and node
    construction is the hot path of graph building.
    """

    __slots__ = ("__weakref__", "index", "name", "owner", "type")


class _NewVar(_VarSlots):
    __slots__ = ()


class Var(_VarSlots):
    """A tensor-valued variable: a graph input, a constant, or an output of an ``Apply``.

    ``Var(type, name)`` makes a new graph input; outputs and constants come from Ops and
    ``constant``. Attributes are read-only.

    Attributes:
        type: the ``TensorType`` (dtype and static shape).
        owner: the ``Apply`` that computes this variable, or ``None`` for inputs/constants.
        index: the position among the owner's outputs (``None`` without an owner).
        name: the input's name, or ``None``.

    Example:
        >>> x = Var(TensorType("float64", (None,)), "x")
        >>> x.dtype, x.ndim, x.owner is None
        ('float64', 1, True)
    """

    __slots__ = ()
    type: TensorType
    owner: Apply | None
    index: int | None
    name: str | None

    def __init__(self, type: TensorType, name: str | None = None) -> None:
        if not isinstance(type, TensorType):
            raise GraphTypeError(f"Var: type must be a TensorType, got {type!r}")
        if name is not None and not isinstance(name, str):
            raise GraphTypeError(f"Var: name must be a str or None, got {name!r}")
        _set(self, "type", type)
        _set(self, "owner", None)
        _set(self, "index", None)
        _set(self, "name", name)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"{type(self).__name__} is immutable; cannot set {name!r} (build a new node instead)"
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot delete {name!r}")

    @property
    def dtype(self) -> str:
        """The dtype's canonical name, e.g. ``"float64"``."""
        return self.type.dtype

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self.type.shape)

    def __bool__(self) -> bool:
        raise TypeError(
            f"the truth value of symbolic {self!r} is unknown until the graph runs; "
            "use rt.where for a data-dependent choice, or `is` to compare nodes"
        )

    def __iter__(self) -> Any:
        raise TypeError(f"cannot iterate over symbolic {self!r}; index it instead")

    def __reduce__(self) -> tuple[Any, ...]:
        if self.owner is None:
            return (Var, (self.type, self.name))
        return (_rebuild_output, _flatten_output(self))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {short_name(self)} {self.type}>"

    def _repr_html_(self) -> str:
        """Jupyter's view: a picture of the graph (its text tree without Graphviz)."""
        from rewritekit.ir.dot import graph_html  # dot builds on this module

        return graph_html(self)


class Constant(Var):
    """A variable whose value is known when the graph is built.

    Constants are interned by dtype, shape and contents (large ones by a content hash),
    so ``Constant(np.arange(3.0)) is Constant(np.arange(3.0))``. The stored array is a
    read-only copy. Prefer the ``constant`` function, which also accepts a name.

    Attributes:
        data: the read-only NumPy array.
    """

    __slots__ = ("data",)
    data: np.ndarray

    def __new__(cls, value: Any, dtype: Any = None, name: str | None = None) -> Constant:
        data = _constant_array(value, dtype)
        key = _constant_key(data, name)
        found = CONSTANTS.lookup(_CONSTANT_BUCKET, key)
        if found is not None:
            return found
        new = object.__new__(cls)
        _set(new, "type", TensorType(normalize_dtype(data.dtype), data.shape))
        _set(new, "owner", None)
        _set(new, "index", None)
        _set(new, "name", name)
        _set(new, "data", data)
        return CONSTANTS.intern(_CONSTANT_BUCKET, key, new)

    def __init__(self, value: Any, dtype: Any = None, name: str | None = None) -> None:
        pass  # everything happens in __new__, which may return an existing constant

    def __reduce__(self) -> tuple[Any, ...]:
        return (Constant, (self.data, None, self.name))


class _ApplySlots:
    """The storage of an Apply (see ``_VarSlots``)."""

    # The first output's weak reference is kept apart from the others: most Ops have one
    # output, and a tuple per node would cost memory and garbage-collector time.
    __slots__ = ("__weakref__", "_out0", "_rest", "inputs", "op")


class _NewApply(_ApplySlots):
    __slots__ = ()


class Apply(_ApplySlots):
    """One use of an Op on input variables; ``Apply(op, inputs)`` finds or builds it.

    Apply nodes are interned by ``(op, *inputs)``: building the same application twice
    returns the same node. Most code never makes an ``Apply`` directly: calling the Op
    (``op(x, y)``) returns its output variables.

    Attributes:
        op: the ``Op``.
        inputs: the input ``Var``s, a tuple.
        outputs: the output ``Var``s, a tuple (one or more).
    """

    __slots__ = ()
    op: Op
    inputs: tuple[Var, ...]

    def __new__(cls, op: Op, inputs: Sequence[Var]) -> Apply:
        outputs = apply_op(op, tuple(inputs))
        return outputs[0].owner  # type: ignore[return-value]

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Apply is immutable; cannot set {name!r}")

    @property
    def outputs(self) -> tuple[Var, ...]:
        """The output variables, rebuilt for any that were freed."""
        first = self._out0()
        if first is not None:
            if not self._rest:
                return (first,)
            outs = (first, *[ref() for ref in self._rest])
            if all(out is not None for out in outs):
                return outs  # type: ignore[return-value]
        return self._revive_outputs()

    @property
    def nout(self) -> int:
        """The number of outputs."""
        return 1 + len(self._rest)

    def _revive_outputs(self) -> tuple[Var, ...]:
        with APPLIES.lock:
            outs = [self._out0(), *[ref() for ref in self._rest]]
            if any(out is None for out in outs):
                types = _infer_types(self.op, self.inputs)
                outs = [
                    _new_output(t, self, i) if out is None else out
                    for i, (out, t) in enumerate(zip(outs, types, strict=True))
                ]
                _set_outputs(self, outs)
            return tuple(outs)  # type: ignore[arg-type]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_owner_of, (self.outputs[0],))

    def __repr__(self) -> str:
        args = ", ".join(short_name(i) for i in self.inputs)
        return f"<Apply {self.op}({args})>"


def apply_op(op: Op, inputs: tuple[Var, ...]) -> tuple[Var, ...]:
    """The outputs of ``op`` applied to ``inputs``, found in the intern table or built.

    ``inputs`` must already be ``Var``s (use ``Op.__call__`` to convert values). The Op's
    ``infer_types`` runs only when the node is new.

    Raises:
        GraphTypeError: an input is not a ``Var``, or ``infer_types`` returned no types.
    """
    canonical, bucket = _op_bucket(op)
    if type(inputs) is not tuple:
        inputs = tuple(inputs)
    ref = bucket.get(inputs)
    if ref is not None:
        node = ref()
        if node is not None:
            return node.outputs
    if not all_vars(inputs):
        position, value = next((i, v) for i, v in enumerate(inputs) if not isinstance(v, Var))
        raise GraphTypeError(
            f"{op}: input {position} must be a Var, got {type(value).__name__} "
            "(call the Op to convert values to constants)"
        )
    types = _infer_types(canonical, inputs)
    new = _NewApply()
    new.op = canonical
    new.inputs = inputs
    if len(types) == 1:
        outputs: tuple[Var, ...] = (_new_output(types[0], new, 0),)
        new._out0 = weakref.ref(outputs[0])
        new._rest = ()
    else:
        outputs = tuple([_new_output(t, new, i) for i, t in enumerate(types)])
        new._out0 = weakref.ref(outputs[0])
        new._rest = tuple([weakref.ref(out) for out in outputs[1:]])
    new.__class__ = Apply
    # The node's own input tuple is the key. Another thread may have won the race.
    node = APPLIES.intern(bucket, inputs, new)
    return outputs if node is new else node.outputs


def _op_bucket(op: Op) -> tuple[Op, dict[Any, Any]]:
    """The canonical Op equal to ``op`` and its bucket, cached on the Op instance."""
    cache = getattr(op, "__dict__", None)
    if cache is not None:
        found = cache.get("_rk_bucket")
        if found is not None:
            return found
    found = APPLIES.bucket(op)
    if cache is not None:
        cache["_rk_bucket"] = found
    return found


def all_vars(values: tuple[Any, ...]) -> bool:
    """True when every value is a ``Var`` (the fast path of input conversion)."""
    for value in values:  # noqa: SIM110 - a loop is 3x faster than all() over a generator
        if not isinstance(value, Var):
            return False
    return True


# infer_types is pure and types are interned, so its results are memoized per Op and input
# types; the cache is cleared when it grows past this many entries.
_TYPE_CACHE: dict[tuple[Any, ...], tuple[TensorType, ...]] = {}
_TYPE_CACHE_LIMIT = 1 << 16


def _infer_types(op: Op, inputs: tuple[Var, ...]) -> tuple[TensorType, ...]:
    input_types = tuple([i.type for i in inputs])
    key = (id(op), input_types)  # op is canonical and kept alive by the intern table
    types = _TYPE_CACHE.get(key)
    if types is not None:
        return types
    types = op.infer_types(*input_types)
    if isinstance(types, TensorType):
        types = (types,)
    if (
        not isinstance(types, tuple)
        or not types
        or not all(isinstance(t, TensorType) for t in types)
    ):
        raise GraphTypeError(
            f"{op}: infer_types must return a non-empty tuple of TensorType, got {types!r}"
        )
    if len(_TYPE_CACHE) >= _TYPE_CACHE_LIMIT:
        _TYPE_CACHE.clear()
    _TYPE_CACHE[key] = types
    return types


def _set_outputs(node: Apply, outputs: Sequence[Var]) -> None:
    _set(node, "_out0", weakref.ref(outputs[0]))
    _set(
        node, "_rest", tuple([weakref.ref(out) for out in outputs[1:]]) if len(outputs) > 1 else ()
    )


def _new_output(type: TensorType, owner: Apply, index: int) -> Var:
    out = object.__new__(Var)
    _set(out, "type", type)
    _set(out, "owner", owner)
    _set(out, "index", index)
    _set(out, "name", None)
    return out


def constant(value: Any, dtype: Any = None, name: str | None = None) -> Constant:
    """A constant variable holding ``value`` (copied, read-only, interned).

    Args:
        value: a NumPy array, a NumPy or Python scalar, or nested sequences of numbers.
        dtype: the dtype to cast to; by default NumPy's (``float64`` for Python floats,
            ``int64`` for Python ints).
        name: an optional name, shown by ``dprint``; constants differing in name are distinct.

    Example:
        >>> constant([1.0, 2.0]) is constant(np.array([1.0, 2.0]))
        True
    """
    return Constant(value, dtype, name)


def as_var(value: Any, *, dtype: Any = None, context: str = "as_var") -> Var:
    """``value`` itself if it is a ``Var``, otherwise a ``Constant`` of it.

    Args:
        value: a ``Var`` or anything ``constant`` accepts.
        dtype: the dtype for a new constant (ignored for a ``Var``).
        context: who is asking, named in the error (e.g. ``"exp: input 0"``).

    Raises:
        GraphTypeError: ``value`` cannot become a tensor constant.
    """
    if isinstance(value, Var):
        return value
    if is_pattern(value):
        raise PatternArgument(
            f"{context}: {value} is a rule pattern, not a graph node; patterns only go into "
            "rules (rewritekit.rules.rule)"
        )
    try:
        return Constant(value, dtype)
    except (DTypeError, TypeError, ValueError, OverflowError) as exc:
        raise GraphTypeError(
            f"{context}: cannot use {type(value).__name__} {_brief(value)} as a tensor: {exc}"
        ) from None


def _constant_array(value: Any, dtype: Any) -> np.ndarray:
    if isinstance(value, Var):
        raise GraphTypeError(f"constant: {value!r} is symbolic; constants need concrete values")
    target = None if dtype is None else normalize_dtype(dtype)
    data = np.array(value, dtype=target, copy=True, order="C")
    normalize_dtype(data.dtype)  # rejects object, str, datetime (and remembers the name)
    data.setflags(write=False)
    return data


def _constant_key(data: np.ndarray, name: str | None) -> tuple[Any, ...]:
    if data.nbytes <= _INLINE_CONSTANT_BYTES:
        content = data.tobytes()
    else:
        content = hashlib.blake2b(data.tobytes(), digest_size=32).digest()
    return (normalize_dtype(data.dtype), data.shape, content, name)


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def short_name(var: Var) -> str:
    """How error messages name a variable: ``'x'``, a small constant's value, ``Exp(...)``."""
    if isinstance(var, Constant):
        return var.name or (_brief(var.data.tolist()) if var.data.size <= 4 else "constant")
    if var.owner is None:
        return repr(var.name) if var.name else "<unnamed>"
    suffix = f".{var.index}" if var.owner.nout > 1 else ""
    return f"{var.owner.op}(...){suffix}"


# --- pickling: an output's graph is stored flat, so deep graphs need no recursion ---


def _flatten_output(
    var: Var,
) -> tuple[tuple[Var, ...], tuple[tuple[Op, tuple[int, ...]], ...], int]:
    from rewritekit.ir.traversal import toposort  # traversal builds on this module

    slots: dict[Var, int] = {}
    leaves: list[Var] = []
    program: list[tuple[Op, tuple[int, ...]]] = []
    nodes = toposort([var])
    for node in nodes:
        for inp in node.inputs:
            if inp.owner is None and inp not in slots:
                slots[inp] = len(leaves)
                leaves.append(inp)
    count = len(leaves)
    for node in nodes:
        program.append((node.op, tuple(slots[i] for i in node.inputs)))
        for out in node.outputs:
            slots[out] = count
            count += 1
    return tuple(leaves), tuple(program), slots[var]


def _rebuild_output(
    leaves: tuple[Var, ...], program: tuple[tuple[Op, tuple[int, ...]], ...], result: int
) -> Var:
    values: list[Var] = list(leaves)
    for op, refs in program:
        values.extend(apply_op(op, tuple(values[r] for r in refs)))
    return values[result]


def _owner_of(var: Var) -> Apply | None:
    return var.owner
