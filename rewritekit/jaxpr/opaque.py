"""``OpaqueJax``: a jaxpr equation kept as it is, for primitives with no mapping to our Ops
(``from_jax(..., opaque=True)``): the random-number primitives, say.

The node holds the equation, lowers back to the same primitive on the JAX backend, has no
NumPy implementation (compiling it for NumPy is an error naming the primitive), is never
constant-folded, and is a barrier for the rules: they match the graph around it, not
through it. Gradients through it are refused (``rk.grad`` names it); ``rk.optimize``
hands the graph back to JAX, whose own differentiation then goes through the primitive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rewritekit.backends.jax import jax_funcify
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.errors import GraphTypeError
from rewritekit.ir import Apply, Grads, Op, TensorType, Var, Vars
from rewritekit.jaxpr.avals import is_key, key_impl, tensor_type

__all__ = ["OpaqueJax", "opaque_outputs"]


class _Equation:
    """A jaxpr equation as an Op parameter: equal only to itself (the parameters of a
    primitive need not be hashable)."""

    __slots__ = ("eqn",)

    def __init__(self, eqn: Any) -> None:
        self.eqn = eqn

    def __repr__(self) -> str:
        return self.eqn.primitive.name


class OpaqueJax(Op):
    """One jaxpr equation, run by JAX (``primitive.bind(*inputs, **params)``)."""

    __props__ = ("equation",)
    foldable = False  # never evaluated while rewriting

    equation: _Equation

    @property
    def primitive_name(self) -> str:
        return self.equation.eqn.primitive.name

    def __str__(self) -> str:
        return f"OpaqueJax{{{self.primitive_name}}}"

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return tuple(tensor_type(v.aval) for v in self.equation.eqn.outvars)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        raise GraphTypeError(
            f"rk.grad: OpaqueJax({self.primitive_name}) has no derivative here; map the "
            "primitive (rewritekit.jaxpr.register_primitive) or differentiate the function "
            "from rk.optimize with jax.grad"
        )


def opaque_outputs(eqn: Any, inputs: list[Var]) -> list[Var]:
    """The outputs of ``eqn`` as one ``OpaqueJax`` node over ``inputs``."""
    outs = OpaqueJax(_Equation(eqn))(*inputs)
    return list(outs) if isinstance(outs, (list, tuple)) else [outs]


@jax_funcify.register(OpaqueJax)
def _jax(op: OpaqueJax, node: Apply) -> Callable[..., Any]:
    import jax

    eqn = op.equation.eqn
    keys_in = [key_impl(v.aval) if is_key(v.aval) else None for v in eqn.invars]
    keys_out = [is_key(v.aval) for v in eqn.outvars]

    def run(*args: Any) -> Any:
        args = [
            a if impl is None else jax.random.wrap_key_data(a, impl=impl)
            for a, impl in zip(args, keys_in, strict=True)
        ]
        out = eqn.primitive.bind(*args, **eqn.params)
        outs = list(out) if eqn.primitive.multiple_results else [out]
        outs = [jax.random.key_data(o) if k else o for o, k in zip(outs, keys_out, strict=True)]
        return tuple(outs) if eqn.primitive.multiple_results else outs[0]

    return run


@numpy_funcify.register(OpaqueJax)
def _numpy(op: OpaqueJax, node: Apply) -> Callable[..., Any]:
    raise NotImplementedError(
        f"the numpy backend cannot run OpaqueJax({op.primitive_name}): an imported JAX "
        "primitive with no mapping runs on the JAX backend only"
    )
