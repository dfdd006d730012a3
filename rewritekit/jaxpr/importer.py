"""``from_jax``: a JAX function's jaxpr as a graph of our Ops.

The function is traced by ``jax.make_jaxpr`` at example arguments; each equation becomes
the Ops its primitive means (``rewritekit.jaxpr.primitives``). Calls are inlined,
``custom_jvp``/``custom_vjp`` functions import their primal computation (their derivative
rules are dropped: ``rk.grad`` differentiates the imported graph, after the rules have
stabilized it), and ``scan``, ``while`` and ``cond`` become ``rk.scan``,
``rk.while_loop`` and ``rk.switch`` over imported bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.ir import Var
from rewritekit.ir.collector import gc_paused
from rewritekit.jaxpr.avals import is_key, tensor_type
from rewritekit.jaxpr.opaque import opaque_outputs
from rewritekit.jaxpr.primitives import PRIMITIVES

__all__ = ["UnmappedPrimitiveError", "from_jax", "import_jaxpr", "jaxpr_inputs"]


class UnmappedPrimitiveError(GraphTypeError):
    """A jaxpr equation whose primitive has no mapping to our Ops (and ``opaque`` is off)."""


def _source_line(eqn: Any) -> str:
    try:
        from jax._src import source_info_util

        return source_info_util.summarize(eqn.source_info)
    except Exception:
        return "unknown source"


def _shown_params(params: dict[str, Any]) -> str:
    parts = []
    for key, value in params.items():
        text = repr(value)
        parts.append(f"{key}={text if len(text) < 60 else text[:57] + '...'}")
    return ", ".join(parts)


@gc_paused
def import_jaxpr(
    jaxpr: Any, consts: Sequence[Any], inputs: Sequence[Var], opaque: bool = False
) -> list[Var]:
    """The outputs of the (open) ``jaxpr`` with ``consts`` for its constvars and ``inputs``
    for its invars, as Vars (with the cyclic collector paused, as graph building is in
    ``rk.rewrite`` and ``rk.function``)."""
    env: dict[Any, Var] = {}

    def read(v: Any) -> Var:
        if hasattr(v, "val"):  # a Literal
            return _literal(v.val, v.aval.dtype)
        return env[v]

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = value if isinstance(value, Var) else rt.constant(np.asarray(value))
    for var, value in zip(jaxpr.invars, inputs, strict=True):
        env[var] = value
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        outs = _import_equation(eqn, ins, opaque)
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[var] = _checked(eqn, var, value)
    return [read(v) for v in jaxpr.outvars]


def jaxpr_inputs(jaxpr: Any, prefix: str = "arg") -> list[Var]:
    """New graph inputs for the invars of ``jaxpr`` (their avals' types, a typed PRNG
    key as its raw data), named ``arg0``, ``arg1``, ...: the ``inputs`` of ``import_jaxpr``.

    Example:
        >>> import jax
        >>> closed = jax.make_jaxpr(lambda a, b: a * b)(np.zeros(3, "float32"), np.float32(2))
        >>> [str(v.type) for v in jaxpr_inputs(closed.jaxpr)]
        ['float32[3]', 'float32[]']
    """
    return [Var(tensor_type(v.aval), f"{prefix}{i}") for i, v in enumerate(jaxpr.invars)]


def _literal(value: Any, dtype: Any) -> Var:
    """A jaxpr literal as a constant (scalars, the common case, from a cache)."""
    array = np.asarray(value, dtype=dtype)
    if array.ndim:
        return rt.constant(array)
    key = (array.dtype.str, array.tobytes())  # by bits: -0.0 is not 0.0, NaN is NaN
    found = _LITERALS.get(key)
    if found is None:
        found = _LITERALS[key] = rt.constant(array)
    return found


#: Scalar literals by (dtype, bits): constants are interned; this skips hashing them again.
_LITERALS: dict[tuple[str, bytes], Var] = {}


def _checked(eqn: Any, var: Any, value: Var) -> Var:
    """``value`` with the jaxpr variable's dtype (a mapping may compute in another one)."""
    expected = tensor_type(var.aval)
    if value.type == expected:
        return value
    dtype, shape = expected.dtype, tuple(expected.shape)
    if value.dtype != dtype:
        value = rt.cast(value, dtype)
    if len(shape) != value.ndim or any(
        n is not None and n != m for n, m in zip(value.type.shape, shape, strict=True)
    ):
        raise GraphTypeError(
            f"from_jax: the mapping of {eqn.primitive.name} gave {value.type} where the jaxpr "
            f"has {dtype}{list(shape)} ({_source_line(eqn)})"
        )
    if any(n is None for n in value.type.shape):
        value = rt.specify_shape(value, shape)
    return value


def _import_equation(eqn: Any, ins: list[Var], opaque: bool) -> list[Var]:
    name = eqn.primitive.name
    handler = PRIMITIVES.get(name)
    if name not in ("random_wrap", "random_unwrap") and any(
        is_key(v.aval) for v in (*eqn.invars, *eqn.outvars)
    ):
        handler = None  # an operation on typed keys: JAX's (keys are raw data here)
    if handler is None:
        handler = _CALLS.get(name)
        if handler is not None and not any(is_key(v.aval) for v in eqn.outvars):
            return handler(eqn.params, ins, opaque)
        if opaque:
            return opaque_outputs(eqn, ins)
        raise UnmappedPrimitiveError(
            f"from_jax: the primitive {name!r} has no mapping to rewritekit's Ops "
            f"(parameters: {_shown_params(eqn.params)}; at {_source_line(eqn)}). Pass "
            "opaque=True to keep it as an OpaqueJax node (JAX backend only), or map it "
            "with rewritekit.jaxpr.register_primitive"
        )
    try:
        return handler(eqn.params, *ins)
    except GraphTypeError as exc:
        raise type(exc)(f"{exc} (importing {name} at {_source_line(eqn)})") from None


# --- calls and control flow ---------------------------------------------------------------

CallHandler = Callable[[dict[str, Any], list[Var], bool], list[Var]]


def _closed(jaxpr: Any) -> tuple[Any, Sequence[Any]]:
    """(open jaxpr, consts) of a ClosedJaxpr or an open Jaxpr."""
    if hasattr(jaxpr, "consts"):
        return jaxpr.jaxpr, jaxpr.consts
    return jaxpr, ()


def _inline(key: str) -> CallHandler:
    def call(params: dict[str, Any], ins: list[Var], opaque: bool) -> list[Var]:
        jaxpr, consts = _closed(params[key])
        return import_jaxpr(jaxpr, consts, ins, opaque)

    return call


#: JAX's own custom_jvp functions that are one of our functions, derivative included (the
#: primal alone would differentiate otherwise: relu's maximum(x, 0) splits the tie at 0,
#: xlogy's where(x == 0, 0, ...) hides log(y) at x = 0).
KNOWN_CUSTOM: dict[str, Callable[..., Var]] = {
    "relu": rt.nn.relu,
    "relu6": rt.nn.relu6,
    "xlogy": rt.xlogy,
    "xlog1py": rt.xlog1py,
    "logaddexp": rt.logaddexp,
}


def _known(jaxpr: Any, n_args: int) -> Callable[..., Var] | None:
    """Our function for a custom_jvp function of JAX's own source, by its name."""
    info = getattr(jaxpr, "debug_info", None)
    source = getattr(info, "func_src_info", None) or ""
    name, _, where = source.partition(" at ")
    fn = KNOWN_CUSTOM.get(name)
    if fn is None or "jax/_src/" not in where.replace("\\", "/"):
        return None
    return fn if len(jaxpr.invars) == n_args else None


def _custom_call(params: dict[str, Any], ins: list[Var], opaque: bool) -> list[Var]:
    """A custom_jvp/custom_vjp function: our own function where it is one of JAX's that we
    have (``KNOWN_CUSTOM``), else its primal computation (the derivative rule is dropped;
    ``rk.grad`` differentiates the imported graph)."""
    jaxpr, consts = _closed(params.get("call_jaxpr") or params["fun_jaxpr"])
    known = _known(jaxpr, len(ins)) if not consts else None
    if known is not None:
        return [known(*ins)]
    return import_jaxpr(jaxpr, consts, ins, opaque)


def _body(jaxpr: Any, opaque: bool) -> Callable[..., list[Var]]:
    inner, consts = _closed(jaxpr)
    return lambda *args: import_jaxpr(inner, consts, list(args), opaque)


def _scan(params: dict[str, Any], ins: list[Var], opaque: bool) -> list[Var]:
    n_consts, n_carry = params["num_consts"], params["num_carry"]
    consts, init, xs = ins[:n_consts], ins[n_consts : n_consts + n_carry], ins[n_consts + n_carry :]
    body = _body(params["jaxpr"], opaque)

    def step(carry: list[Var], x: list[Var]) -> tuple[list[Var], list[Var]]:
        outs = body(*consts, *carry, *x)
        return outs[:n_carry], outs[n_carry:]

    final, ys = rt.scan(
        step, list(init), list(xs), length=params["length"], reverse=params["reverse"]
    )
    return [*final, *ys]


def _while(params: dict[str, Any], ins: list[Var], opaque: bool) -> list[Var]:
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cond_consts, body_consts, init = ins[:nc], ins[nc : nc + nb], ins[nc + nb :]
    cond_body, step = _body(params["cond_jaxpr"], opaque), _body(params["body_jaxpr"], opaque)

    def cond_fun(carry: list[Var]) -> Var:
        return cond_body(*cond_consts, *carry)[0]

    def body_fun(carry: list[Var]) -> list[Var]:
        return step(*body_consts, *carry)

    return list(rt.while_loop(cond_fun, body_fun, list(init)))


def _cond(params: dict[str, Any], ins: list[Var], opaque: bool) -> list[Var]:
    index, operands = ins[0], ins[1:]
    branches = [_body(b, opaque) for b in params["branches"]]
    if index.dtype == "bool":
        index = rt.cast(index, "int32")
    return list(rt.lax.switch(index, [lambda *o, b=b: b(*o) for b in branches], *operands))


def _linear_solve(params: dict[str, Any], ins: list[Var], opaque: bool) -> list[Var]:
    """``custom_linear_solve``: its ``solve`` jaxpr applied to the right-hand side (the
    primal computation; the derivative comes from the imported graph)."""
    lengths = params["const_lengths"]  # consts of matvec, vecmat, solve, transpose_solve
    lo = lengths.matvec + lengths.vecmat
    hi, start = lo + lengths.solve, lo + lengths.solve + lengths.transpose_solve
    jaxpr, consts = _closed(params["jaxprs"].solve)
    return import_jaxpr(jaxpr, consts, [*ins[lo:hi], *ins[start:]], opaque)


def _same(params: dict[str, Any], ins: list[Var], opaque: bool) -> list[Var]:
    """``random_wrap``/``random_unwrap``: a key is its raw data here."""
    return list(ins)


_CALLS: dict[str, CallHandler] = {
    "custom_linear_solve": _linear_solve,
    "random_wrap": _same,
    "random_unwrap": _same,
    "jit": _inline("jaxpr"),
    "pjit": _inline("jaxpr"),
    "closed_call": _inline("call_jaxpr"),
    "core_call": _inline("call_jaxpr"),
    "remat": _inline("jaxpr"),
    "checkpoint": _inline("jaxpr"),
    "custom_jvp_call": _custom_call,
    "custom_vjp_call": _custom_call,
    "custom_vjp_call_jaxpr": _custom_call,
    "scan": _scan,
    "while": _while,
    "cond": _cond,
}


def from_jax(fn: Callable[..., Any], *args: Any, opaque: bool = False) -> tuple[Any, Any]:
    """``fn``'s computation as a graph: ``(inputs, outputs)``, the inputs new Vars in the
    structure of ``args`` (arrays, or ``jax.ShapeDtypeStruct``s; pytrees allowed) and the
    outputs Vars in the structure ``fn`` returns.

    ``fn`` is traced once with ``jax.make_jaxpr`` at the arguments' shapes and dtypes;
    values computed in Python from traced values are JAX's own errors. With ``opaque``,
    an equation whose primitive has no mapping becomes an ``OpaqueJax`` node (JAX backend
    only) instead of an error.

    Raises:
        UnmappedPrimitiveError: a primitive with no mapping (naming it, its parameters and
            the source line), unless ``opaque``.

    Example:
        >>> import jax.numpy as jnp
        >>> (x,), y = rk.from_jax(lambda v: jnp.log(1 + jnp.exp(v)), np.zeros(3))
        >>> y.type
        TensorType(dtype='float64', shape=(3,))
    """
    import jax

    closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(*args)
    leaves, treedef = jax.tree_util.tree_flatten(args)
    inputs = jaxpr_inputs(closed.jaxpr)
    if len(inputs) != len(leaves):
        raise GraphTypeError(f"from_jax: {len(leaves)} argument leaves, {len(inputs)} inputs")
    outs = import_jaxpr(closed.jaxpr, closed.consts, inputs, opaque)
    _, out_def = jax.tree_util.tree_flatten(out_shape)
    return (
        jax.tree_util.tree_unflatten(treedef, inputs),
        jax.tree_util.tree_unflatten(out_def, outs),
    )
