"""JAX implementations of the elementwise Ops (``rewritekit.tensor.elemwise``)."""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.jax import jax_funcify
from rewritekit.ir import Apply
from rewritekit.tensor import elemwise as ew


def expensive_identity(v: jax.Array) -> jax.Array:
    """``v`` itself, bit for bit (NaN stays NaN), computed as ``v / (1 + 0 * min(|v|, 1))``.

    XLA's fusion copies an op it counts as cheap (add, multiply, select, max, abs) into
    every use; a ``divide`` it does not copy. Ending a multi-op lowering with this divide
    stops XLA from copying a deep chain's earlier steps into each step (docs/backends.md,
    "What XLA punishes"). XLA does not fold ``0 * x`` for floats (it is NaN for inf), so the
    divide stays; the denominator is exactly 1 for every number, inf included.
    """
    return v / (1 + 0 * jnp.minimum(jnp.abs(v), 1))


def _logaddexp(a: jax.Array, b: jax.Array) -> jax.Array:
    """``jnp.logaddexp`` (``max(a, b) + log1p(exp(-|a - b|))``, ``a + b`` where ``a - b`` is
    NaN) ended on ``expensive_identity``: its ``max`` and ``where`` are cheap paths from the
    inputs to the result, and a deep chain compiled 11.7 s at K = 100 without the cut
    (``bench/xla_depth.py``, case ``logaddexp``; docs/backends.md, "What XLA punishes")."""
    return expensive_identity(jnp.logaddexp(a, b))


def _floor_divide(x: jax.Array, y: jax.Array) -> jax.Array:
    """``jnp.floor_divide`` with NumPy's 0 for an integer divided by 0 (XLA's integer
    division by 0 gives -1, which ``jnp`` then rounds to -2 for x > 0)."""
    if not jnp.issubdtype(x.dtype, jnp.integer):
        return jnp.floor_divide(x, y)
    zero = y == 0
    return jnp.where(zero, jnp.zeros_like(x), jnp.floor_divide(x, jnp.where(zero, 1, y)))


def _power(x: jax.Array, y: jax.Array) -> jax.Array:
    """``jnp.power``, but integer powers square over every bit of the exponent: ``jnp``'s
    stop after 6 bits (exponents below 64), which is right only while nothing wraps;
    NumPy's wrap, exact modulo 2**bits, for any exponent (``9 ** 300`` in int32)."""
    if not (jnp.issubdtype(x.dtype, jnp.integer) and jnp.issubdtype(y.dtype, jnp.integer)):
        return jnp.power(x, y)
    x, y = jnp.broadcast_arrays(x, y)
    one = jnp.ones((), y.dtype)

    def step(_: Any, carry: tuple[jax.Array, ...]) -> tuple[jax.Array, ...]:
        acc, base, rest = carry
        acc = jnp.where(rest & one, acc * base, acc)
        return acc, base * base, lax.shift_right_logical(rest, one)

    bits = jnp.iinfo(y.dtype).bits
    return lax.fori_loop(0, bits, step, (jnp.ones_like(x), x, y))[0]


TABLE = elementwise.elemwise_functions(jnp) | {
    # jnp.clip is maximum(lo, x), the arguments the other way round: spelled out
    ew.Clip: lambda x, lo, hi: jnp.minimum(jnp.maximum(x, lo), hi),
    ew.FloorDivide: _floor_divide,
    ew.Power: _power,
    ew.Logaddexp: _logaddexp,
}


def elemwise_impl(fn: Callable[..., Any], node: Apply) -> Callable[..., Any]:
    """``fn`` with the inputs cast to the Op's computation dtypes and the result to its type.

    The dtypes are static, so the casts cost nothing at run time where they are no-ops.
    """
    return elementwise.elemwise_impl(jnp, fn, node)


register(jax_funcify, elementwise.elemwise(jnp, TABLE))


# --- one lax primitive where jnp would only promote and broadcast ---------------------------

#: Ops that are one ``lax`` primitive once every operand has the computation dtype, a float
#: dtype, and one shape (a 0-d operand broadcasts in ``lax`` too): ``jnp``'s function then
#: does nothing but check that and call the primitive, through a nested ``jit`` whose
#: trace costs more than the primitive's (docs/performance.md, "Tracing"). The jaxprs are
#: the same (``tests/backends/test_jax_primitives.py``).
PRIMITIVES: dict[type, Callable[..., Any]] = {
    ew.Add: lax.add,
    ew.Subtract: lax.sub,
    ew.Multiply: lax.mul,
    ew.TrueDivide: lax.div,
    ew.Maximum: lax.max,
    ew.Minimum: lax.min,
    ew.Negative: lax.neg,
    ew.Abs: lax.abs,
    ew.Square: lax.square,
    ew.Exp: lax.exp,
    ew.Expm1: lax.expm1,
    ew.Log: lax.log,
    ew.Log1p: lax.log1p,
    ew.Sqrt: lax.sqrt,
    ew.Sin: lax.sin,
    ew.Cos: lax.cos,
    ew.Tanh: lax.tanh,
    ew.Less: lax.lt,
    ew.LessEqual: lax.le,
    ew.Greater: lax.gt,
    ew.GreaterEqual: lax.ge,
    ew.Equal: lax.eq,
    ew.NotEqual: lax.ne,
}


_FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})


def _float_operands(node: Apply) -> bool:
    """Every operand is already in the Op's computation dtype, one float dtype (no cast,
    no promotion), and the result has it too (or is bool, for a comparison)."""
    dtypes = [i.dtype for i in node.inputs]
    first = dtypes[0]
    if first not in _FLOATS or any(d != first for d in dtypes):
        return False
    casts = elementwise.cast_dtypes(node)
    return all(c == first for c in casts) and node.outputs[0].dtype in (first, "bool")


def _primitive_impl(primitive: Callable[..., Any], fn: Callable[..., Any]) -> Any:
    def impl(op: Any, node: Apply) -> Callable[..., Any]:
        general = elemwise_impl(fn, node)
        if not _float_operands(node):
            return general

        def run(*args: Any) -> Any:
            shape = None
            for arg in args:  # lax broadcasts only 0-d operands
                if arg.shape:
                    if shape is None:
                        shape = arg.shape
                    elif arg.shape != shape:
                        return general(*args)
            return primitive(*args)

        return run

    return impl


def _select_impl(op: Any, node: Apply) -> Callable[..., Any]:
    """``where(c, a, b)`` as ``lax.select`` where ``c`` is bool and the three have one
    shape (``jnp.where`` adds broadcasting and a nested ``jit``)."""
    general = elemwise_impl(TABLE[ew.Where], node)
    c, a, b = (i.dtype for i in node.inputs)
    if c != "bool" or a not in _FLOATS or not a == b == node.outputs[0].dtype:
        return general

    def run(cond: Any, x: Any, y: Any) -> Any:
        if cond.shape == x.shape == y.shape:
            return lax.select(cond, x, y)
        return general(cond, x, y)

    return run


register(
    jax_funcify,
    {cls: _primitive_impl(prim, TABLE[cls]) for cls, prim in PRIMITIVES.items()}
    | {ew.Where: _select_impl},
)
