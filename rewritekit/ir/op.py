"""The ``Op`` base class: an operation's parameters, type rule and derivative in one place."""

from __future__ import annotations

import re
from typing import Any, ClassVar, TypeAlias

from rewritekit.errors import RewritekitError
from rewritekit.ir.nodes import Apply, Var, all_vars, apply_op, as_var, short_name
from rewritekit.ir.patterns import PatternArgument, build_pattern
from rewritekit.ir.types import TensorType

__all__ = ["Grads", "Op", "Vars"]

#: The inputs, outputs or cotangents a ``vjp`` receives.
Vars: TypeAlias = tuple[Var, ...]
#: What a ``vjp`` returns: per input, a gradient Var, ``None`` (no gradient) or ``0``
#: (a gradient that is zero almost everywhere, such as that of ``floor``).
Grads: TypeAlias = list[Any]


class Op:
    """An operation on tensors. Subclass it to add one.

    An Op is a value: its parameters, listed in ``__props__``, define equality and hashing,
    so ``Sum(axis=(0,)) == Sum(axis=(0,))`` and both build the same nodes. The default
    constructor takes the parameters positionally or by name. Parameters must be hashable
    and must not change after construction.

    Subclasses implement ``infer_types`` (required) and ``vjp`` (for differentiable Ops).
    Calling an Op on Vars, NumPy arrays or Python numbers builds (or finds) the node and
    returns its output (a tuple when there are several).

    Example:
        >>> class Scale(Op):
        ...     __props__ = ("factor",)
        ...     def infer_types(self, x):
        ...         return (x,)
        >>> Scale(2.0) == Scale(factor=2.0)
        True
    """

    __props__: ClassVar[tuple[str, ...]] = ()
    #: The user-facing name in error messages; by default the class name in snake_case.
    #: Subclasses may set it, e.g. ``name = "true_divide"``.
    name: ClassVar[str] = "op"

    #: False on Ops without a derivative: their outputs are integers or bools (comparisons,
    #: ``argmax``, shapes), so no gradient flows through them and ``vjp`` is never called.
    #: The completeness test asks every other concrete Op for its own ``vjp``.
    differentiable: ClassVar[bool] = True

    #: True on Ops whose inputs broadcast against each other (the elementwise Ops,
    #: ``broadcast_to``, ``alloc``): their ``vjp`` may give cotangents of the output's shape,
    #: and the differentiator sums each back over broadcasting to its input's shape and dtype
    #: (``rt.sum_to``), once, for every rule.
    broadcasts: ClassVar[bool] = False

    #: True on base classes that only share code (``Elemwise``); set in the class body, it
    #: is not inherited. The completeness tests skip abstract Ops.
    abstract: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "abstract" not in cls.__dict__:
            cls.abstract = False
        if "name" not in cls.__dict__:
            cls.name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", cls.__name__).lower()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        props = type(self).__props__
        if not kwargs and len(args) == len(props):  # the common call: every one in order
            for name, value in zip(props, args, strict=True):
                setattr(self, name, value)
            return
        if len(args) > len(props):
            raise TypeError(
                f"{type(self).__name__} takes {len(props)} parameters {props}, got {len(args)}"
            )
        values = dict(zip(props, args, strict=False))
        for name, value in kwargs.items():
            if name not in props:
                raise TypeError(f"{type(self).__name__}: unknown parameter {name!r}")
            if name in values:
                raise TypeError(f"{type(self).__name__}: parameter {name!r} given twice")
            values[name] = value
        missing = [p for p in props if p not in values]
        if missing:
            raise TypeError(f"{type(self).__name__}: missing parameters {missing}")
        for name, value in values.items():
            setattr(self, name, value)

    # --- identity -------------------------------------------------------------------

    def _props_values(self) -> tuple[Any, ...]:
        # Each value's type is part of it: Scale(2) and Scale(2.0) (or Scale(True) and
        # Scale(1)) are different Ops, though 2 == 2.0 in Python. Cached as the hash is:
        # finding a new Op's canonical twin hashes it and compares the two.
        cache = getattr(self, "__dict__", None)
        found = None if cache is None else cache.get("_rk_props")
        if found is None:
            found = tuple((type(v), v) for v in [getattr(self, p) for p in type(self).__props__])
            if cache is not None:
                cache["_rk_props"] = found
        return found

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return type(self) is type(other) and self._props_values() == other._props_values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        # Hashed on every node lookup, so cache it (parameters never change).
        cache = getattr(self, "__dict__", None)
        if cache is None:
            return hash((type(self), self._props_values()))
        found = cache.get("_rk_hash")
        if found is None:
            found = cache["_rk_hash"] = hash((type(self), self._props_values()))
        return found

    def __getstate__(self) -> Any:
        state = super().__getstate__()
        if isinstance(state, dict):  # drop caches: hashes and tables differ between processes
            state = {k: v for k, v in state.items() if not k.startswith("_rk_")}
        return state

    # --- the math ---------------------------------------------------------------------

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        """The output types for these input types.

        Raises:
            TypeError or ValueError (use ``rewritekit.errors``): the inputs are ill-typed.
                The message names the Op, the argument and the offending shape or dtype.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement infer_types")

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        """Vector-Jacobian product: one gradient Var (or ``None``, or ``0``) per input.

        ``cotangents[i]`` is the gradient of the cost with respect to ``outputs[i]`` (of
        that output's type; zeros for an output the cost does not use). Each gradient must
        have its input's dtype and shape, unless the Op ``broadcasts`` (then the
        differentiator sums it back); elsewhere undo broadcasting with ``rt.sum_to(g, x)``.
        Return ``None`` for an input that gets no gradient (integer inputs, indices) and
        ``0`` for one whose gradient is zero almost everywhere (``floor``); the
        differentiator makes the zeros. Called only when some output carries a gradient.
        """
        raise NotImplementedError(f"{self} does not define vjp; it cannot be differentiated")

    def batch(self, node: Apply, inputs: Vars) -> Vars:
        """The batching rule: ``node`` (an Apply of this Op) computed for a batch.

        ``inputs`` are ``node.inputs`` with some given ``nb`` extra leading batch axes (the
        same ``nb`` for each batched input; an unbatched input is unchanged). Return the
        outputs of ``node`` with those ``nb`` leading axes. Elementwise Ops share one rule
        (``rewritekit.tensor.ufunc``: they broadcast); other Ops state theirs in a short
        method, as ``vjp``.
        """
        raise NotImplementedError(f"{self} has no batching rule")

    # --- building nodes ---------------------------------------------------------------

    def prepare_inputs(self, *args: Any) -> tuple[Var, ...]:
        """Turn call arguments into input Vars. Override to promote dtypes or add checks.

        The default converts non-Var arguments to constants with NumPy's default dtypes.
        """
        if all_vars(args):
            return args
        return tuple(
            as_var(arg, context=f"{self}: input {position}") for position, arg in enumerate(args)
        )

    def make_node(self, *args: Any) -> Apply:
        """The ``Apply`` node of this Op on ``args`` (found or built)."""
        return self._outputs(args)[0].owner  # type: ignore[return-value]

    def __call__(self, *args: Any) -> Any:
        try:
            outputs = self._outputs(args)
        except PatternArgument:  # a rule pattern: answer with the pattern of this call
            return build_pattern(self, args, {})
        return outputs[0] if len(outputs) == 1 else outputs

    def _outputs(self, args: tuple[Any, ...]) -> tuple[Var, ...]:
        inputs = self.prepare_inputs(*args)
        try:
            return apply_op(self, inputs)
        except RewritekitError as exc:
            # infer_types sees only types; name the culprit variables here.
            shown = ", ".join(short_name(i) for i in inputs)
            raise type(exc)(f"{exc} (inputs {shown})") from None

    # --- display ----------------------------------------------------------------------

    def __str__(self) -> str:
        props = type(self).__props__
        if not props:
            return type(self).__name__
        shown = ", ".join(f"{p}={getattr(self, p)!r}" for p in props)
        return f"{type(self).__name__}{{{shown}}}"

    def __repr__(self) -> str:
        return str(self)
