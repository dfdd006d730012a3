"""Discrete Fourier transforms, the ``rt.fft`` namespace, with ``numpy.fft``'s names,
arguments and values: ``fft ifft rfft irfft hfft ihfft`` along one axis, ``fftn ifftn
rfftn irfftn`` and ``fft2 ifft2 rfft2 irfft2`` over several, and the helpers ``fftfreq
rfftfreq fftshift ifftshift``.

Four Ops do the work (``Fft Ifft Rfft Irfft``), each over explicit axes with NumPy's
``s`` (the transform lengths: the input is cropped or zero-padded to them) and ``norm``:
``"backward"`` (the default: ``ifft`` divides by n), ``"ortho"`` (both divide by sqrt(n))
or ``"forward"`` (``fft`` divides by n). The lengths, axes and norm are static: they set
the result's shape. ``rfft``'s last axis is the real one: its result has ``n // 2 + 1``
entries there, and ``irfft`` gives back ``n`` (default ``2 * (m - 1)`` for ``m`` inputs).

Dtypes: float32 (and float16) compute in complex64, everything else in complex128;
``rfft`` rejects complex inputs (use ``fft``), ``irfft`` of a real input treats it as
complex with zero imaginary part (as NumPy). Repeated axes are an error (as JAX).

Derivatives are JAX's (``jax/_src/lax/fft.py``): the DFT matrix is symmetric, so an
``fft``'s transpose is the same ``fft``; ``rfft``'s is the real part of the ``fft`` of the
cotangent zero-padded to ``n``; ``irfft``'s is ``conj(w * rfft(g))`` with weights 2 on the
entries an ``rfft`` holds once for two (1 on the zero frequency and, for even n, the last),
with the norm swapped. Cropping and padding transpose into each other. Batching moves the
axes past the batch axes.

Example:
    >>> x = rt.vector("x", shape=(8,))
    >>> rt.fft.rfft(x).type
    TensorType(dtype='complex128', shape=(5,))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Apply, Grads, Op, TensorType, Var, Vars, as_var, constant
from rewritekit.tensor.axes import axis_index, is_int
from rewritekit.tensor.complex_parts import PART_DTYPE, conj, real
from rewritekit.tensor.creation import arange, zeros
from rewritekit.tensor.elemwise import cast, equal, logical_or, maximum, where
from rewritekit.tensor.joining import concatenate
from rewritekit.tensor.layout import expand_dims
from rewritekit.tensor.shape_vectors import lengths, shape_i

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

NORMS = ("backward", "ortho", "forward")
#: The norm of a transform's transpose, where the transposed transform is the other way
#: round: ``irfft``'s scale by 1/n (the backward norm) goes with ``rfft``'s forward one.
SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}

Length = int | Var  # a static length or an int64 scalar read at run time


def complex_dtype(dtype: str) -> str:
    """The complex dtype a transform of ``dtype`` computes in: complex64 for float32,
    float16 and complex64, complex128 for everything else (NumPy's)."""
    return "complex64" if dtype in ("float16", "float32", "complex64") else "complex128"


class FourierTransform(Op):
    """A discrete Fourier transform over ``axes`` (distinct non-negative ints; for the real
    transforms the last one is the real axis), of ``lengths`` (NumPy's ``s``: an int crops
    or zero-pads the input along its axis, None keeps its length) with ``norm``."""

    abstract = True

    __props__ = ("axes", "lengths", "norm")

    axes: tuple[int, ...]
    lengths: tuple[int | None, ...]
    norm: str

    def __init__(
        self,
        axes: Sequence[int],
        lengths: Sequence[int | None] | None = None,
        norm: str = "backward",
    ) -> None:
        axes = tuple(int(a) for a in axes)
        if not axes or len(set(axes)) != len(axes) or min(axes) < 0:
            raise GraphTypeError(
                f"{self.name}: axes must be distinct non-negative ints, got {axes} "
                f"(rt.fft.{self.name} normalizes them)"
            )
        lengths = (None,) * len(axes) if lengths is None else tuple(lengths)
        if len(lengths) != len(axes) or not all(n is None or is_int(n) for n in lengths):
            raise GraphTypeError(
                f"{self.name}: lengths must be {len(axes)} ints or None, got {lengths}"
            )
        super().__init__(axes, tuple(None if n is None else int(n) for n in lengths), norm)
        check_norm(self.name, norm)

    def compute_dtype(self, dtype: str) -> str:
        """The dtype the input is cast to before the transform."""
        return complex_dtype(dtype)

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        return (output_type(self.name, self, x),)

    def transform_lengths(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The transform lengths (NumPy's ``s``) for an input of run-time ``shape``."""
        return tuple(
            shape[a] if n is None else n for a, n in zip(self.axes, self.lengths, strict=True)
        )

    def batch(self, node: Apply, inputs: Vars) -> Vars:
        """The batch axes are in front: the transform's axes move past them."""
        (x,) = inputs
        nb = x.ndim - node.inputs[0].ndim
        return (type(self)(tuple(a + nb for a in self.axes), self.lengths, self.norm)(x),)

    def _like(self, cls: type[FourierTransform], norm: str | None = None) -> FourierTransform:
        """A transform over the same axes, of its input's lengths (no cropping, no padding)."""
        return cls(self.axes, None, norm or self.norm)


class Fft(FourierTransform):
    """y[k] = sum_j x[j] exp(-2 pi i j k / n) over each axis (times the norm's scale)."""

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # the DFT matrix is symmetric: the transform is its own transpose
        (x,), (g,) = inputs, cotangents
        return [to_input(self._like(type(self))(g), x, self)]


class Ifft(FourierTransform):
    """x[j] = (1/n) sum_k y[k] exp(2 pi i j k / n) over each axis (with norm "backward")."""

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        (x,), (g,) = inputs, cotangents
        return [to_input(self._like(type(self))(g), x, self)]


class Rfft(FourierTransform):
    """``fft`` of a real input, keeping the ``n // 2 + 1`` non-negative frequencies of the
    last axis (the others are their conjugates). Domain: real inputs."""

    def compute_dtype(self, dtype: str) -> str:
        return PART_DTYPE[complex_dtype(dtype)]

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # JAX's: the transpose of fft(x)[..., :n // 2 + 1] for a real x
        (x,), (g,) = inputs, cotangents
        last = self.axes[-1]
        n = self.lengths[-1] if self.lengths[-1] is not None else length(x, last)
        full = self._like(Fft)(fit(g, last, n))
        return [to_input(real(full), x, self)]


class Irfft(FourierTransform):
    """The inverse of ``rfft``: a real result of length n on the last axis from its
    ``n // 2 + 1`` non-negative frequencies (the imaginary parts of the zero frequency
    and, for even n, of the last are ignored)."""

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # JAX's: conj(w * rfft(g)), w = 2 on the frequencies rfft keeps for two
        (x,), (g,) = inputs, cotangents
        half = self._like(Rfft, SWAPPED[self.norm])(g)
        odd = self.lengths[-1] is not None and self.lengths[-1] % 2 == 1
        weights = hermitian_weights(half, self.axes[-1], odd)
        return [to_input(conj(half * weights), x, self)]


# --- types and checks ---------------------------------------------------------------------


def check_norm(name: str, norm: Any) -> str:
    """``norm`` checked (None is "backward")."""
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise GraphTypeError(
            f"{name}: norm must be one of {', '.join(map(repr, NORMS))} or None, got {norm!r}"
        )
    return str(norm)


def output_type(name: str, op: FourierTransform, x: TensorType) -> TensorType:
    """The result type of ``op`` on ``x``; errors name the function ``name``."""
    if max(op.axes) >= x.ndim:
        raise ShapeError(f"{name}: axes {op.axes} are out of range for a {x.ndim}-d input")
    real_input = isinstance(op, Rfft)
    if real_input and x.kind == "c":
        raise DTypeError(
            f"{name}: the input has dtype {x.dtype}; {name} takes a real input (use fft "
            "for a complex one)"
        )
    shape = list(x.shape)
    last = op.axes[-1]
    for axis, n in zip(op.axes, op.lengths, strict=True):
        if n is not None and n < 1:
            raise ShapeError(
                f"{name}: the transform length along axis {axis} must be >= 1, got {n}"
            )
        shape[axis] = n if n is not None else x.shape[axis]
    if isinstance(op, Irfft) and op.lengths[-1] is None and shape[last] is not None:
        shape[last] = 2 * (shape[last] - 1)
    for axis in op.axes:
        if shape[axis] is not None and shape[axis] < 1:
            raise ShapeError(
                f"{name}: the input's length {x.shape[axis]} along axis {axis} gives no "
                "points to transform; pass a length >= 1 (n or s)"
            )
    if real_input and shape[last] is not None:
        shape[last] = shape[last] // 2 + 1
    dtype = complex_dtype(x.dtype)
    if isinstance(op, Irfft):
        dtype = PART_DTYPE[dtype]
    return TensorType(dtype, tuple(shape))


# --- the pieces of the derivatives --------------------------------------------------------


def length(x: Var, axis: int) -> Length:
    """``x``'s length along ``axis``: static where known, else read at run time."""
    static = x.type.shape[axis]
    return static if static is not None else shape_i(x, axis)


def fit(v: Var, axis: int, n: Length) -> Var:
    """``v`` cropped or zero-padded at the end of ``axis`` to length ``n``."""
    have = v.type.shape[axis]
    static = is_int(n) and have is not None
    if static and have == n:
        return v
    head = (slice(None),) * axis
    if not (static and have < n):  # type: ignore[operator]
        v = v[(*head, slice(None, n))]
    if static and have > n:  # type: ignore[operator]
        return v
    pad = n - have if static else maximum(n - shape_i(v, axis), 0)  # type: ignore[operator]
    sizes = lengths(v)
    sizes[axis] = pad
    return concatenate([v, zeros(tuple(sizes), dtype=v.dtype)], axis=axis)


def to_input(h: Var, x: Var, op: FourierTransform) -> Var | None:
    """The transposed transform ``h`` as ``x``'s gradient: cropped or padded back where the
    transform fitted ``x`` to its lengths, real for a real ``x``; None for an integer ``x``."""
    if x.type.kind not in "fc":
        return None
    for axis, n in zip(op.axes, op.lengths, strict=True):
        if n is not None:
            h = fit(h, axis, length(x, axis))
    if x.type.kind == "c":
        return cast(h, x.dtype)
    return cast(real(h), x.dtype)


def hermitian_weights(half: Var, axis: int, odd: bool) -> Var:
    """Weights along ``axis`` of an ``rfft`` result ``half`` of a length-n axis (``odd``:
    n is odd): 1 on the zero frequency and (n even) the last, 2 on the rest, which stand
    for themselves and their conjugates."""
    dtype = PART_DTYPE[half.dtype]
    m = half.type.shape[axis]
    if m is not None:
        w = np.full(m, 2.0, dtype=dtype)
        w[0] = 1.0
        if not odd:
            w[-1] = 1.0
        weights = constant(w)
    else:
        k = arange(shape_i(half, axis))
        edge = equal(k, 0) if odd else logical_or(equal(k, 0), equal(k, shape_i(half, axis) - 1))
        weights = cast(where(edge, 1.0, 2.0), dtype)
    others = tuple(a for a in range(half.ndim) if a != axis)
    return expand_dims(weights, others) if others else weights


# --- the NumPy functions ------------------------------------------------------------------


def _input(name: str, a: Any) -> Var:
    return as_var(a, context=f"{name}: input 'a'")


def _static_length(name: str, what: str, n: Any) -> int | None:
    """A length argument: None, a static positive int, or (in ``s``) -1 for the input's."""
    if n is None:
        return None
    if isinstance(n, Var) or not is_int(n):
        raise GraphTypeError(
            f"{name}: {what} must be a static int (it sets the result's shape), got {n!r}"
        )
    if what == "s" and n == -1:  # NumPy 2: the input's length
        return None
    if n < 1:
        raise ShapeError(f"{name}: {what} must be >= 1 (the number of points), got {n}")
    return int(n)


def _axes_and_lengths(
    name: str, x: Var, s: Any, axes: Any
) -> tuple[tuple[int, ...], tuple[int | None, ...]]:
    """NumPy's ``s`` and ``axes`` as the Op's parameters (axes default to the last
    ``len(s)``, or all), with errors that name the function."""
    if s is not None:
        if isinstance(s, Var) or not isinstance(s, (tuple, list)):
            raise GraphTypeError(f"{name}: s must be a sequence of static ints, got {s!r}")
        s = [_static_length(name, "s", n) for n in s]
        if axes is None and len(s) > x.ndim:
            raise ShapeError(f"{name}: s has {len(s)} lengths for a {x.ndim}-d input")
    if axes is None:
        axes = range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim)
    elif is_int(axes):
        axes = (axes,)
    elif isinstance(axes, Var) or not isinstance(axes, (tuple, list, range)):
        raise GraphTypeError(f"{name}: axes must be a sequence of static ints, got {axes!r}")
    found = tuple(axis_index(name, a, x.ndim, x) for a in axes)
    if not found:
        raise ShapeError(f"{name}: no axis to transform (axes={tuple(axes)}, a {x.ndim}-d input)")
    if len(set(found)) != len(found):
        raise ShapeError(
            f"{name}: axes {tuple(axes)} repeat an axis; transform it once (jax.numpy refuses "
            "repeats too)"
        )
    if s is not None and len(s) != len(found):
        raise ShapeError(
            f"{name}: s has {len(s)} lengths but axes has {len(found)} axes; give one per axis"
        )
    return found, tuple(s) if s is not None else (None,) * len(found)


def _transform(name: str, cls: type[FourierTransform], a: Any, s: Any, axes: Any, norm: Any) -> Var:
    x = _input(name, a)
    norm = check_norm(name, norm)
    op = cls(*_axes_and_lengths(name, x, s, axes), norm)
    output_type(name, op, x.type)  # the checks, naming the function called
    return op(x)


def _along(name: str, cls: type[FourierTransform], a: Any, n: Any, axis: Any, norm: Any) -> Var:
    if isinstance(axis, Var) or not is_int(axis):
        raise GraphTypeError(f"{name}: axis must be a static int, got {axis!r}")
    return _transform(name, cls, a, [_static_length(name, "n", n)], (axis,), norm)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Var:
    """The discrete Fourier transform along ``axis``, of length ``n`` (the input cropped or
    zero-padded to it; default its length), as ``np.fft.fft``.

    Example:
        >>> rt.fft.fft(rt.vector("x", shape=(4,)), n=6).type
        TensorType(dtype='complex128', shape=(6,))
    """
    return _along("fft", Fft, a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Var:
    """The inverse of ``fft`` along ``axis`` (divided by ``n`` with the default norm).

    Example:
        >>> rt.fft.ifft(rt.tensor("y", shape=(2, 4), dtype="complex64"), axis=0).type
        TensorType(dtype='complex64', shape=(2, 4))
    """
    return _along("ifft", Ifft, a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Var:
    """The Fourier transform of a real input along ``axis``: its ``n // 2 + 1``
    non-negative frequencies, as ``np.fft.rfft``.

    Example:
        >>> rt.fft.rfft(rt.vector("x", shape=(5,))).type
        TensorType(dtype='complex128', shape=(3,))
    """
    return _along("rfft", Rfft, a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Var:
    """The inverse of ``rfft``: ``n`` real values along ``axis`` (default ``2 * (m - 1)``
    for ``m`` inputs; the input is cropped or zero-padded to ``n // 2 + 1``).

    Example:
        >>> rt.fft.irfft(rt.tensor("y", shape=(3,), dtype="complex128"), n=5).type
        TensorType(dtype='float64', shape=(5,))
    """
    return _along("irfft", Irfft, a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Var:
    """The Fourier transform of a Hermitian-symmetric signal given by its first half: a real
    result of length ``n`` (``irfft(conj(a), n)`` with the norm swapped, as NumPy).

    Example:
        >>> rt.fft.hfft(rt.tensor("a", shape=(3,), dtype="complex128")).type
        TensorType(dtype='float64', shape=(4,))
    """
    swapped = SWAPPED[check_norm("hfft", norm)]
    return _along("hfft", Irfft, conj(_input("hfft", a)), n, axis, swapped)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Var:
    """The inverse of ``hfft``: ``conj(rfft(a, n))`` with the norm swapped, as NumPy.

    Example:
        >>> rt.fft.ihfft(rt.vector("x", shape=(4,))).type
        TensorType(dtype='complex128', shape=(3,))
    """
    swapped = SWAPPED[check_norm("ihfft", norm)]
    return conj(_along("ihfft", Rfft, a, n, axis, swapped))


def fftn(a: Any, s: Sequence[int] | None = None, axes: Any = None, norm: str | None = None) -> Var:
    """The Fourier transform over ``axes`` (default: the last ``len(s)``, or all), each
    of length ``s[i]``, as ``np.fft.fftn``.

    Example:
        >>> rt.fft.fftn(rt.matrix("x", shape=(2, 3)), s=(4, 4)).type
        TensorType(dtype='complex128', shape=(4, 4))
    """
    return _transform("fftn", Fft, a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Any = None, norm: str | None = None) -> Var:
    """The inverse of ``fftn``, as ``np.fft.ifftn``.

    Example:
        >>> rt.fft.ifftn(rt.matrix("x", shape=(2, 3)), axes=(0,)).type
        TensorType(dtype='complex128', shape=(2, 3))
    """
    return _transform("ifftn", Ifft, a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Any = None, norm: str | None = None) -> Var:
    """The Fourier transform of a real input over ``axes``; the last of them keeps its
    ``s[-1] // 2 + 1`` non-negative frequencies, as ``np.fft.rfftn``.

    Example:
        >>> rt.fft.rfftn(rt.matrix("x", shape=(4, 6))).type
        TensorType(dtype='complex128', shape=(4, 4))
    """
    return _transform("rfftn", Rfft, a, s, axes, norm)


def irfftn(
    a: Any, s: Sequence[int] | None = None, axes: Any = None, norm: str | None = None
) -> Var:
    """The inverse of ``rfftn``: real, of lengths ``s`` (the last axis defaults to
    ``2 * (m - 1)``), as ``np.fft.irfftn``.

    Example:
        >>> rt.fft.irfftn(rt.tensor("y", shape=(4, 4), dtype="complex128")).type
        TensorType(dtype='float64', shape=(4, 6))
    """
    return _transform("irfftn", Irfft, a, s, axes, norm)


def fft2(
    a: Any, s: Sequence[int] | None = None, axes: Any = (-2, -1), norm: str | None = None
) -> Var:
    """``fftn`` over the last two axes.

    Example:
        >>> rt.fft.fft2(rt.matrix("x", shape=(2, 3))).dtype
        'complex128'
    """
    return _transform("fft2", Fft, a, s, axes, norm)


def ifft2(
    a: Any, s: Sequence[int] | None = None, axes: Any = (-2, -1), norm: str | None = None
) -> Var:
    """``ifftn`` over the last two axes.

    Example:
        >>> rt.fft.ifft2(rt.matrix("x", shape=(2, 3))).dtype
        'complex128'
    """
    return _transform("ifft2", Ifft, a, s, axes, norm)


def rfft2(
    a: Any, s: Sequence[int] | None = None, axes: Any = (-2, -1), norm: str | None = None
) -> Var:
    """``rfftn`` over the last two axes.

    Example:
        >>> rt.fft.rfft2(rt.matrix("x", shape=(2, 6))).type.shape
        (2, 4)
    """
    return _transform("rfft2", Rfft, a, s, axes, norm)


def irfft2(
    a: Any, s: Sequence[int] | None = None, axes: Any = (-2, -1), norm: str | None = None
) -> Var:
    """``irfftn`` over the last two axes.

    Example:
        >>> rt.fft.irfft2(rt.tensor("y", shape=(2, 4), dtype="complex128")).type.shape
        (2, 6)
    """
    return _transform("irfft2", Irfft, a, s, axes, norm)


def _frequencies(name: str, unit: np.ndarray, d: Any, dtype: Any) -> Var:
    """``unit / d`` (``unit``: the frequencies for spacing 1), a constant for a number d."""
    if isinstance(d, Var):
        out = dtype or ("float32" if d.dtype == "float32" else "float64")
        return cast(constant(unit.astype(out)) / d, out)
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, float, np.number)):
        raise GraphTypeError(f"{name}: d must be a number or a scalar Var, got {d!r}")
    return constant((unit / d).astype(dtype or "float64"))


def fftfreq(n: int, d: Any = 1.0, dtype: Any = None) -> Var:
    """The frequencies of ``fft``'s result for ``n`` samples ``d`` apart: ``[0, 1, ...,
    -1] / (n * d)``, as ``np.fft.fftfreq`` (a constant unless ``d`` is a Var).

    Example:
        >>> rt.fft.fftfreq(4).data
        array([ 0.  ,  0.25, -0.5 , -0.25])
    """
    n = _static_length("fftfreq", "n", n)
    return _frequencies("fftfreq", np.fft.fftfreq(n), d, dtype)


def rfftfreq(n: int, d: Any = 1.0, dtype: Any = None) -> Var:
    """The frequencies of ``rfft``'s result: ``[0, 1, ..., n // 2] / (n * d)``.

    Example:
        >>> rt.fft.rfftfreq(4).data
        array([0.  , 0.25, 0.5 ])
    """
    n = _static_length("rfftfreq", "n", n)
    return _frequencies("rfftfreq", np.fft.rfftfreq(n), d, dtype)


def _rolled(name: str, x: Any, axes: Any, ceil: bool) -> Var:
    """``x`` rolled by half its length along each of ``axes``: ``x[k:]`` then ``x[:k]``,
    ``k = ceil(n / 2)`` (``fftshift``) or ``floor(n / 2)`` (``ifftshift``)."""
    x = as_var(x, context=f"{name}: input 'x'")
    if axes is None:
        axes = range(x.ndim)
    elif is_int(axes):
        axes = (axes,)
    elif isinstance(axes, Var) or not isinstance(axes, (tuple, list, range)):
        raise GraphTypeError(f"{name}: axes must be static ints or None, got {axes!r}")
    for axis in (axis_index(name, a, x.ndim, x) for a in axes):
        n = length(x, axis)
        k = (n + 1) // 2 if ceil else n // 2
        head = (slice(None),) * axis
        x = concatenate([x[(*head, slice(k, None))], x[(*head, slice(None, k))]], axis=axis)
    return x


def fftshift(x: Any, axes: Any = None) -> Var:
    """``x`` with the zero frequency moved to the centre of ``axes`` (default all), as
    ``np.fft.fftshift``.

    Example:
        >>> rt.fft.fftshift(rt.vector("x", shape=(4,))).type.shape
        (4,)
    """
    return _rolled("fftshift", x, axes, ceil=True)


def ifftshift(x: Any, axes: Any = None) -> Var:
    """The inverse of ``fftshift`` (they differ for odd lengths).

    Example:
        >>> rt.fft.ifftshift(rt.vector("x", shape=(5,))).type.shape
        (5,)
    """
    return _rolled("ifftshift", x, axes, ceil=False)
