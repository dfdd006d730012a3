"""The table from ``jax.lax`` primitives to graphs of our Ops: ``PRIMITIVES[name](params,
*inputs)`` returns the equation's outputs (a list of Vars) for its inputs (Vars) and its
parameters (``eqn.params``).

Most entries are ``rt.lax``'s functions, which spell the primitives' meanings over the
NumPy-style Ops. Calls (``jit``, ``closed_call``, ``remat``, ``custom_jvp_call``,
``custom_vjp_call``) and the control-flow primitives (``scan``, ``while``, ``cond``) import
their inner jaxprs and are handled by the importer, which registers them here too.

Add a mapping for a primitive of your own with ``register_primitive``::

    @register_primitive("my_softclip")
    def _(params, x):
        return [rt.tanh(x / params["scale"]) * params["scale"]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.ir import Var
from rewritekit.tensor.special import gammainc_grad_a
from rewritekit.vectorize import vectorize

Handler = Callable[..., list[Var]]

#: primitive name -> handler(params, *inputs) -> outputs
PRIMITIVES: dict[str, Handler] = {}


def register_primitive(name: str) -> Callable[[Handler], Handler]:
    """Map the primitive ``name`` to a handler ``(params, *inputs) -> list of Vars``
    (replacing any mapping it had)."""

    def register(handler: Handler) -> Handler:
        PRIMITIVES[name] = handler
        return handler

    return register


def _one(fn: Callable[..., Var]) -> Handler:
    """A handler for a primitive of one output whose parameters ``fn`` ignores."""
    return lambda params, *xs: [fn(*xs)]


def _dtype(params: dict[str, Any], key: str) -> str:
    return _dtype_name(params[key])


def _dtype_name(dtype: Any) -> str:
    """``np.dtype(dtype).name``, remembered (``.name`` costs about 2 µs a call)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = np.dtype(dtype).name
    return name


_DTYPE_NAMES: dict[Any, str] = {}


# --- elementwise --------------------------------------------------------------------------

_UNARY = {
    "neg": rt.negative,
    "sign": rt.sign,
    "floor": rt.floor,
    "ceil": rt.ceil,
    "is_finite": rt.isfinite,
    "exp": rt.exp,
    "exp2": rt.exp2,
    "log": rt.log,
    "log1p": rt.log1p,
    "expm1": rt.expm1,
    "tanh": rt.tanh,
    "logistic": rt.sigmoid,
    "sin": rt.sin,
    "cos": rt.cos,
    "tan": rt.tan,
    "asin": rt.arcsin,
    "acos": rt.arccos,
    "atan": rt.arctan,
    "sinh": rt.sinh,
    "cosh": rt.cosh,
    "asinh": rt.arcsinh,
    "acosh": rt.arccosh,
    "atanh": rt.arctanh,
    "sqrt": rt.sqrt,
    "rsqrt": rt.lax.rsqrt,
    "cbrt": rt.cbrt,
    "abs": rt.abs,
    "not": rt.invert,
    "erf": rt.erf,
    "erfc": rt.erfc,
    "erf_inv": rt.erfinv,
    "lgamma": rt.gammaln,
    "digamma": rt.digamma,
    "bessel_i0e": rt.i0e,
    "bessel_i1e": rt.i1e,
    "real": rt.real,
    "imag": rt.imag,
    "conj": rt.conj,
    "square": rt.square,
    "stop_gradient": rt.stop_gradient,
    "copy": lambda x: x,
    "copy_p": lambda x: x,
    "population_count": lambda x: _population_count(x),
}
_BINARY = {
    "add": rt.add,
    "add_any": rt.add,  # the sum of two cotangents (in jaxprs of jax.grad)
    "sub": rt.subtract,
    "mul": rt.multiply,
    "div": rt.lax.div,
    "pow": rt.power,
    "max": rt.maximum,
    "min": rt.minimum,
    "atan2": rt.arctan2,
    "and": rt.bitwise_and,
    "or": rt.bitwise_or,
    "xor": rt.bitwise_xor,
    "shift_left": rt.left_shift,
    "eq": rt.equal,
    "ne": rt.not_equal,
    "lt": rt.less,
    "le": rt.less_equal,
    "gt": rt.greater,
    "ge": rt.greater_equal,
    "complex": rt.complex,
    "igamma": rt.gammainc,
    "igammac": rt.gammaincc,
    "polygamma": lambda n, x: _polygamma(n, x),
}
for _name, _fn in {**_UNARY, **_BINARY}.items():
    PRIMITIVES[_name] = _one(_fn)
PRIMITIVES["select_n"] = _one(rt.lax.select_n)
PRIMITIVES["clamp"] = _one(rt.lax.clamp)
PRIMITIVES["regularized_incomplete_beta"] = _one(rt.betainc)


def _population_count(x: Var) -> Var:
    """The 1 bits of x's two's complement (NumPy's bitwise_count counts those of |x|)."""
    unsigned = f"uint{np.dtype(x.dtype).itemsize * 8}"
    return rt.cast(rt.bitwise_count(rt.cast(x, unsigned) if x.type.kind == "i" else x), x.dtype)


def _polygamma(n: Var, x: Var) -> Var:
    value = rt.get_scalar_constant_value(n)  # our polygamma takes a static order
    return rt.polygamma(int(value), x)


@register_primitive("shift_right_arithmetic")
def _shift_right_arithmetic(params: dict[str, Any], x: Var, y: Var) -> list[Var]:
    return [rt.right_shift(x, y)]  # NumPy shifts signed integers arithmetically


@register_primitive("rem")
def _rem(params: dict[str, Any], x: Var, y: Var) -> list[Var]:
    """C's remainder (the sign of x), from the floored one (the sign of y)."""
    r = rt.mod(x, y)
    wrong_sign = rt.logical_and(rt.not_equal(r, 0), rt.not_equal(rt.less(r, 0), rt.less(x, 0)))
    return [rt.where(wrong_sign, r - y, r)]


@register_primitive("round")
def _round(params: dict[str, Any], x: Var) -> list[Var]:
    method = int(params.get("rounding_method", 0))
    if method == 1:  # TO_NEAREST_EVEN
        return [rt.round(x)]
    return [rt.sign(x) * rt.floor(rt.abs(x) + 0.5)]  # AWAY_FROM_ZERO


@register_primitive("integer_pow")
def _integer_pow(params: dict[str, Any], x: Var) -> list[Var]:
    return [rt.lax.integer_pow(x, params["y"])]


@register_primitive("convert_element_type")
def _convert(params: dict[str, Any], x: Var) -> list[Var]:
    return [rt.cast(x, _dtype(params, "new_dtype"))]


# --- shapes -------------------------------------------------------------------------------


@register_primitive("broadcast_in_dim")
def _broadcast_in_dim(params: dict[str, Any], x: Var, *dynamic: Var) -> list[Var]:
    return [rt.lax.broadcast_in_dim(x, params["shape"], params["broadcast_dimensions"])]


@register_primitive("reshape")
def _reshape(params: dict[str, Any], x: Var, *dynamic: Var) -> list[Var]:
    return [rt.lax.reshape(x, params["new_sizes"], params.get("dimensions"))]


@register_primitive("squeeze")
def _squeeze(params: dict[str, Any], x: Var) -> list[Var]:
    return [rt.lax.squeeze(x, params["dimensions"])]


@register_primitive("expand_dims")
def _expand_dims(params: dict[str, Any], x: Var) -> list[Var]:
    return [rt.expand_dims(x, tuple(params["dimensions"]))]


@register_primitive("transpose")
def _transpose(params: dict[str, Any], x: Var) -> list[Var]:
    return [rt.lax.transpose(x, params["permutation"])]


@register_primitive("rev")
def _rev(params: dict[str, Any], x: Var) -> list[Var]:
    return [rt.flip(x, tuple(params["dimensions"]))]


@register_primitive("concatenate")
def _concatenate(params: dict[str, Any], *xs: Var) -> list[Var]:
    return [rt.lax.concatenate(xs, params["dimension"])]


@register_primitive("pad")
def _pad(params: dict[str, Any], x: Var, value: Var) -> list[Var]:
    return [rt.lax.pad(x, value, params["padding_config"])]


@register_primitive("iota")
def _iota(params: dict[str, Any]) -> list[Var]:
    shape, dimension = tuple(params["shape"]), params["dimension"]
    line = rt.arange(shape[dimension], dtype=_dtype(params, "dtype"))
    return [rt.lax.broadcast_in_dim(line, shape, (dimension,))]


@register_primitive("split")
def _split(params: dict[str, Any], x: Var) -> list[Var]:
    axis, start, parts = params["axis"], 0, []
    for size in params["sizes"]:
        parts.append(rt.lax.slice_in_dim(x, start, start + size, axis=axis))
        start += size
    return parts


# --- reductions, sorts, scans -------------------------------------------------------------

for _name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or"):
    PRIMITIVES[_name] = (lambda fn: lambda params, x: [fn(x, params["axes"])])(
        getattr(rt.lax, _name)
    )


@register_primitive("argmax")
def _argmax(params: dict[str, Any], x: Var) -> list[Var]:
    (axis,) = params["axes"]
    return [rt.lax.argmax(x, axis, _dtype(params, "index_dtype"))]


@register_primitive("argmin")
def _argmin(params: dict[str, Any], x: Var) -> list[Var]:
    (axis,) = params["axes"]
    return [rt.lax.argmin(x, axis, _dtype(params, "index_dtype"))]


@register_primitive("sort")
def _sort(params: dict[str, Any], *xs: Var) -> list[Var]:
    dimension, keys = params["dimension"], params["num_keys"]
    if len(xs) == 1:
        return [rt.lax.sort(xs[0], dimension)]
    return list(rt.lax.sort(list(xs), dimension, num_keys=keys))


for _name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
    PRIMITIVES[_name] = (lambda fn: lambda params, x: [fn(x, params["axis"], params["reverse"])])(
        getattr(rt.lax, _name)
    )


# --- products -----------------------------------------------------------------------------


@register_primitive("dot_general")
def _dot_general(params: dict[str, Any], a: Var, b: Var) -> list[Var]:
    preferred = params.get("preferred_element_type")
    out = rt.lax.dot_general(a, b, params["dimension_numbers"])
    if preferred is None or out.dtype == _dtype_name(preferred):
        return [out]
    return [rt.cast(out, _dtype_name(preferred))]


# --- slices, gathers, scatters ------------------------------------------------------------


@register_primitive("slice")
def _slice(params: dict[str, Any], x: Var) -> list[Var]:
    return [rt.lax.slice(x, params["start_indices"], params["limit_indices"], params["strides"])]


@register_primitive("dynamic_slice")
def _dynamic_slice(params: dict[str, Any], x: Var, *starts: Var) -> list[Var]:
    return [rt.dynamic_slice(x, list(starts), list(params["slice_sizes"]))]


@register_primitive("dynamic_update_slice")
def _dynamic_update_slice(params: dict[str, Any], x: Var, update: Var, *starts: Var) -> list[Var]:
    return [rt.dynamic_update_slice(x, update, list(starts))]


@register_primitive("gather")
def _gather(params: dict[str, Any], x: Var, indices: Var) -> list[Var]:
    dn, sizes = params["dimension_numbers"], params["slice_sizes"]
    mode, fill = params.get("mode"), params.get("fill_value")
    return [rt.lax.gather(x, indices, dn, sizes, mode=mode, fill_value=fill)]


@register_primitive("scatter-add")
def _scatter_add(params: dict[str, Any], x: Var, indices: Var, updates: Var) -> list[Var]:
    dn, mode = params["dimension_numbers"], params.get("mode")
    return [rt.lax.scatter_add(x, indices, updates, dn, mode=mode)]


@register_primitive("scatter-max")
def _scatter_max(params: dict[str, Any], x: Var, indices: Var, updates: Var) -> list[Var]:
    dn, unique = params["dimension_numbers"], params.get("unique_indices", False)
    mode = params.get("mode")
    return [rt.lax.scatter_max(x, indices, updates, dn, unique_indices=unique, mode=mode)]


@register_primitive("scatter")
def _scatter(params: dict[str, Any], x: Var, indices: Var, updates: Var) -> list[Var]:
    dn, mode = params["dimension_numbers"], params.get("mode")
    return [rt.lax.scatter(x, indices, updates, dn, mode=mode)]


# --- linear algebra -----------------------------------------------------------------------


@register_primitive("cholesky")
def _cholesky(params: dict[str, Any], a: Var) -> list[Var]:
    return [rt.linalg.cholesky(a)]


@register_primitive("triangular_solve")
def _triangular_solve(params: dict[str, Any], a: Var, b: Var) -> list[Var]:
    keys = ("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal")
    options = {k: params[k] for k in keys}
    return [_on_matrices(lambda x, y: rt.linalg.triangular_solve(x, y, **options), a, b)]


def _on_matrices(fn: Callable[..., Var], *xs: Var) -> Var:
    """``fn`` of matrices over the leading (batch) axes of ``xs``, which have the same
    batch shape (as jaxpr operands do)."""
    if xs[0].ndim == 2:
        return fn(*xs)
    cores = [
        rt.tensor(f"core{i}", shape=x.type.shape[-2:], dtype=x.dtype) for i, x in enumerate(xs)
    ]
    return vectorize(fn(*cores), dict(zip(cores, xs, strict=True)))


@register_primitive("eigh")
def _eigh(params: dict[str, Any], a: Var) -> list[Var]:
    w, v = rt.linalg.eigh(a if params.get("lower", True) else rt.linalg.matrix_transpose(a))
    return [v, w]  # the primitive returns (vectors, values)


@register_primitive("svd")
def _svd(params: dict[str, Any], a: Var) -> list[Var]:
    if not params.get("compute_uv", True):
        return [rt.linalg.svd(a, compute_uv=False)]
    u, s, vt = rt.linalg.svd(a, full_matrices=params.get("full_matrices", False))
    return [s, u, vt]


@register_primitive("qr")
def _qr(params: dict[str, Any], a: Var) -> list[Var]:
    q, r = rt.linalg.qr(a, mode="complete" if params.get("full_matrices") else "reduced")
    return [q, r]


@register_primitive("lu")
def _lu(params: dict[str, Any], a: Var) -> list[Var]:
    """LU with partial pivoting, as ``jax.lax.linalg.lu``: ``(lu, pivots, permutation)``,
    one elimination step per column (unrolled: the length is static), the pivot the first
    row of largest magnitude (LAPACK's choice)."""
    m, n = a.type.shape[-2], a.type.shape[-1]
    rows = rt.arange(m, dtype="int32")
    cols = rt.arange(n, dtype="int32")
    batch = a.type.shape[:-2]
    perm = rt.broadcast_to(rows, (*batch, m)) if batch else rows
    pivots = []
    for k in range(min(m, n)):
        column = a[..., :, k]
        candidates = rt.where(rows >= k, rt.abs(column), -1.0)
        p = rt.cast(rt.argmax(candidates, axis=-1), "int32")
        pivots.append(p)
        p_ = rt.expand_dims(p, -1)
        swap = rt.where(rt.equal(rows, k), p_, rt.where(rt.equal(rows, p_), k, rows))
        a = rt.take_along_axis(a, rt.broadcast_to(rt.expand_dims(swap, -1), a.type.shape), -2)
        perm = rt.take_along_axis(perm, swap, -1)
        below = rt.where(rows > k, a[..., :, k] / a[..., k : k + 1, k], 0.0)
        trailing = rt.where(cols > k, a[..., k, :], 0.0)
        a = a - rt.expand_dims(below, -1) * rt.expand_dims(trailing, -2)
        in_column = rt.logical_and(rt.expand_dims(rows > k, -1), rt.equal(cols, k))
        a = rt.where(in_column, rt.expand_dims(below, -1), a)
    return [a, rt.stack(pivots, axis=-1), perm]


@register_primitive("fft")
def _fft(params: dict[str, Any], x: Var) -> list[Var]:
    lengths = tuple(int(n) for n in params["fft_lengths"])
    axes = tuple(range(-len(lengths), 0))
    kind = str(getattr(params["fft_type"], "name", params["fft_type"])).upper().split(".")[-1]
    fn = {"FFT": rt.fft.fftn, "IFFT": rt.fft.ifftn, "RFFT": rt.fft.rfftn, "IRFFT": rt.fft.irfftn}
    return [fn[kind](x, s=lengths, axes=axes)]


@register_primitive("platform_index")
def _platform_index(params: dict[str, Any]) -> list[Var]:
    """The branch of a platform-dependent ``cond`` for the default platform (the entry
    ``None``): rewritekit's graphs are the same on every platform."""
    platforms = list(params["platforms"])
    if None not in platforms:
        raise GraphTypeError(
            f"from_jax: platform_index over {platforms} has no default branch to import"
        )
    return [rt.constant(np.int32(platforms.index(None)))]


def _total_order(strict: bool) -> Handler:
    """``lt_to``/``le_to``: comparisons in the total order that sorts NaN last (the sign
    of zero is not told apart)."""

    def compare(params: dict[str, Any], x: Var, y: Var) -> list[Var]:
        plain = rt.less(x, y) if strict else rt.less_equal(x, y)
        if x.type.kind not in "fc":
            return [plain]
        x_nan, y_nan = rt.isnan(x), rt.isnan(y)
        if strict:
            return [rt.where(x_nan, False, rt.where(y_nan, True, plain))]
        return [rt.where(y_nan, True, rt.where(x_nan, False, plain))]

    return compare


PRIMITIVES["lt_to"] = _total_order(strict=True)
PRIMITIVES["le_to"] = _total_order(strict=False)


@register_primitive("stack")
def _stack(params: dict[str, Any], *xs: Var) -> list[Var]:
    return [rt.stack(list(xs), axis=params["axis"])]


@register_primitive("sharding_constraint")
def _sharding_constraint(params: dict[str, Any], x: Var) -> list[Var]:
    return [x]  # placement, not value: rewritekit shards whole graphs (docs/scaling.md)


@register_primitive("shift_right_logical")
def _shift_right_logical(params: dict[str, Any], x: Var, y: Var) -> list[Var]:
    if x.type.kind == "u":
        return [rt.right_shift(x, y)]
    unsigned = f"uint{np.dtype(x.dtype).itemsize * 8}"
    return [rt.cast(rt.right_shift(rt.cast(x, unsigned), rt.cast(y, unsigned)), x.dtype)]


@register_primitive("igamma_grad_a")
def _igamma_grad_a(params: dict[str, Any], a: Var, x: Var) -> list[Var]:
    return [gammainc_grad_a(a, x)]


@register_primitive("bitcast_convert_type")
def _bitcast(params: dict[str, Any], x: Var) -> list[Var]:
    return [rt.lax.bitcast_convert_type(x, _dtype(params, "new_dtype"))]
