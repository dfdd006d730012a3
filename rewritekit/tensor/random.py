"""Random variables: draws from distributions, driven by explicit keys.

A random variable is an Op with two outputs, the next key and the draw. Its inputs are a
key (``uint32[2]``, as JAX's raw keys), the size vector (int64; empty when the draw takes
the parameters' broadcast shape) and the distribution's parameters. The same key gives the
same draw; the returned key gives fresh ones. No generator state is hidden anywhere, so a
graph is a pure function of its keys, and hash-consing two identical calls into one node
is exact (same key, same draw).

Random Ops are never constant-folded (``foldable = False``): a constant key would otherwise
freeze one NumPy draw into a graph meant for JAX's generator. They have no derivative with
respect to their parameters through sampling; gradients flow through log-densities
(``rewritekit.logprob``).

The user functions live in ``rewritekit.random`` (``import rewritekit.random as rr``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from rewritekit.errors import BroadcastError, DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Op, TensorType, Var, as_var, short_name
from rewritekit.ir.types import broadcast_shapes, result_dtype, shape_str
from rewritekit.tensor.arithmetic import maximum
from rewritekit.tensor.shape_vectors import shape_i

__all__: list[str] = []  # the user functions are rewritekit.random's

KEY_TYPE = TensorType("uint32", (2,))
_SIZE_NONE = TensorType("int64", (0,))


class RandomVariable(Op):
    """A draw from a distribution: inputs ``(key, size, *params)``, outputs ``(next_key,
    draw)``.

    Parameters (``__props__``): ``size``, the static batch shape of the draw (an int per
    known length, ``None`` per length known only at run time; ``None`` for the parameters'
    broadcast shape), and ``dtype``, the draw's dtype.

    Subclasses give ``params`` (the parameter names), ``ndims_params`` (the number of core
    axes of each parameter: 0 for scalars, 1 for a vector such as a categorical's ``p``),
    ``ndim_supp`` (the core axes of one draw) and ``kind`` (``"f"`` continuous, ``"i"``
    discrete).
    """

    abstract = True
    foldable = False
    __props__ = ("size", "dtype")

    params: ClassVar[tuple[str, ...]] = ()
    ndims_params: ClassVar[tuple[int, ...]] = ()
    ndim_supp: ClassVar[int] = 0
    kind: ClassVar[str] = "f"

    size: tuple[int | None, ...] | None
    dtype: str

    def __init__(self, size: Any, dtype: Any, *props: Any) -> None:
        # props: the values of a subclass's further __props__ (``LKJCholeskyRV``'s ``n``)
        if size is not None:
            size = tuple(None if d is None else int(d) for d in size)
        super().__init__(size, TensorType(dtype).dtype, *props)

    def infer_types(self, key: TensorType, size: TensorType, *params: TensorType) -> Any:
        _check_key(self.name, key)
        expected = _SIZE_NONE if self.size is None else TensorType("int64", (len(self.size),))
        if size.kind not in "iu" or size.shape != expected.shape:
            raise ShapeError(f"{self.name}: the size input must be {expected}, got {size}")
        if len(params) != len(self.params):
            raise GraphTypeError(
                f"{self.name}: expected {len(self.params)} parameters {self.params}, "
                f"got {len(params)}"
            )
        batch = self._batch_shape(params)
        return (KEY_TYPE, TensorType(self.dtype, batch + self.support_shape(*params)))

    def _batch_shape(self, params: tuple[TensorType, ...]) -> tuple[int | None, ...]:
        batches = []
        for name, core, t in zip(self.params, self.ndims_params, params, strict=True):
            if t.kind not in "biuf":
                raise DTypeError(f"{self.name}: parameter {name!r} has dtype {t.dtype}")
            if t.ndim < core:
                raise ShapeError(
                    f"{self.name}: parameter {name!r} needs at least {core} axes, got {t}"
                )
            batches.append(t.shape[: t.ndim - core])
        try:
            batch = broadcast_shapes(*batches) if batches else ()
        except BroadcastError as exc:
            raise BroadcastError(f"{self.name}: parameters do not broadcast: {exc}") from None
        if self.size is None:
            return tuple(batch)
        if len(batch) > len(self.size) or _broadcast_to(batch, self.size) is None:
            raise BroadcastError(
                f"{self.name}: size {shape_str(self.size)} does not fit the parameters' "
                f"batch shape {shape_str(batch)} (they must broadcast to the size)"
            )
        return _broadcast_to(batch, self.size)  # type: ignore[return-value]

    def support_shape(self, *params: TensorType) -> tuple[int | None, ...]:
        """The core shape of one draw (``()`` for scalar distributions)."""
        return ()

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        shown = ", ".join(self.params)
        raise NotImplementedError(
            f"{self.name}: a random draw has no gradient with respect to its parameters "
            f"({shown}) through sampling; differentiate a log-density instead "
            "(rewritekit.logprob.logprob or joint_logprob)"
        )


def batch_lengths(op: RandomVariable, size: Var, params: Sequence[Var]) -> list[int | Var]:
    """The batch shape of ``op``'s draw, each length an int or a scalar Var, without reading
    the draw (a graph that reads it depends on its key): static lengths, then ``size``'s
    entries, then the longest of the parameters' lengths on the axis (they are equal or 1;
    a static 1 is skipped, so a length-0 axis stays 0)."""
    batch = op._batch_shape(tuple(p.type for p in params))
    out: list[int | Var] = []
    for axis, known in enumerate(batch):
        if known is not None:
            out.append(known)
            continue
        if op.size is not None:
            out.append(size[axis])
            continue
        lengths = []
        for p, core in zip(params, op.ndims_params, strict=True):
            at = axis - (len(batch) - (p.ndim - core))  # right-aligned
            if at >= 0 and p.type.shape[at] != 1:
                lengths.append(shape_i(p, at))
        out.append(functools.reduce(maximum, lengths))  # a None length comes from one
    return out


def _check_key(name: str, key: TensorType) -> None:
    if key is not KEY_TYPE:
        raise DTypeError(f"{name}: the key must be {KEY_TYPE} (rr.key() or rr.seed(n)), got {key}")


def _broadcast_to(
    batch: tuple[int | None, ...], size: tuple[int | None, ...]
) -> tuple[int | None, ...] | None:
    """``size``, refined by ``batch``'s known lengths, or None when ``batch`` cannot
    broadcast to it."""
    out = list(size)
    offset = len(size) - len(batch)
    for i, d in enumerate(batch):
        s = size[offset + i]
        if d is None or d == 1:
            continue
        if s is None:
            out[offset + i] = d
        elif s != d:
            return None
    return tuple(out)


# --- the distributions ------------------------------------------------------------------


class ScalarRV(RandomVariable):
    """A distribution whose parameters and draws are scalars (elementwise)."""

    abstract = True


class NormalRV(ScalarRV):
    """Normal(loc, scale): density exp(-((x - loc) / scale)^2 / 2) / (scale sqrt(2 pi))."""

    name = "normal"
    params = ("loc", "scale")
    ndims_params = (0, 0)


class CauchyRV(ScalarRV):
    """Cauchy(loc, scale): density 1 / (pi scale (1 + ((x - loc) / scale)^2))."""

    name = "cauchy"
    params = ("loc", "scale")
    ndims_params = (0, 0)


class HalfCauchyRV(ScalarRV):
    """|Cauchy(0, scale)|, on x >= 0."""

    name = "halfcauchy"
    params = ("scale",)
    ndims_params = (0,)


class ExponentialRV(ScalarRV):
    """Exponential with mean ``scale`` (rate 1 / scale), on x >= 0."""

    name = "exponential"
    params = ("scale",)
    ndims_params = (0,)


class GammaRV(ScalarRV):
    """Gamma(alpha, scale): density x^(alpha-1) e^(-x/scale) / (Gamma(alpha) scale^alpha)."""

    name = "gamma"
    params = ("alpha", "scale")
    ndims_params = (0, 0)


class InverseGammaRV(ScalarRV):
    """1 / Gamma(alpha, 1 / scale): density scale^alpha x^(-alpha-1) e^(-scale/x) /
    Gamma(alpha), on x > 0."""

    name = "inverse_gamma"
    params = ("alpha", "scale")
    ndims_params = (0, 0)


class BetaRV(ScalarRV):
    """Beta(alpha, beta) on [0, 1]."""

    name = "beta"
    params = ("alpha", "beta")
    ndims_params = (0, 0)


class UniformRV(ScalarRV):
    """Uniform on [low, high)."""

    name = "uniform"
    params = ("low", "high")
    ndims_params = (0, 0)


class StudentTRV(ScalarRV):
    """Student's t with ``df`` degrees of freedom, shifted by ``loc`` and scaled by
    ``scale``."""

    name = "student_t"
    params = ("df", "loc", "scale")
    ndims_params = (0, 0, 0)


class BernoulliRV(ScalarRV):
    """1 with probability ``p``, else 0."""

    name = "bernoulli"
    params = ("p",)
    ndims_params = (0,)
    kind = "i"


class BernoulliLogitRV(ScalarRV):
    """1 with probability sigmoid(``logit``), else 0."""

    name = "bernoulli_logit"
    params = ("logit",)
    ndims_params = (0,)
    kind = "i"


class PoissonRV(ScalarRV):
    """Poisson with mean ``lam``: k = 0, 1, 2, ..."""

    name = "poisson"
    params = ("lam",)
    ndims_params = (0,)
    kind = "i"


class BinomialRV(ScalarRV):
    """The number of successes in ``n`` trials of probability ``p``."""

    name = "binomial"
    params = ("n", "p")
    ndims_params = (0, 0)
    kind = "i"


# --- continuous distributions, issue #18 (SciPy's parameters) -----------------------------


class LaplaceRV(ScalarRV):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""

    name = "laplace"
    params = ("loc", "scale")
    ndims_params = (0, 0)


class LogisticRV(ScalarRV):
    """Logistic(loc, scale): density e^-z / (scale (1 + e^-z)^2), z = (x - loc) / scale."""

    name = "logistic"
    params = ("loc", "scale")
    ndims_params = (0, 0)


class GumbelRV(ScalarRV):
    """Gumbel of maxima (SciPy's ``gumbel_r``): density e^-(z + e^-z) / scale,
    z = (x - loc) / scale."""

    name = "gumbel"
    params = ("loc", "scale")
    ndims_params = (0, 0)


class WeibullRV(ScalarRV):
    """Weibull (SciPy's ``weibull_min(c, scale=scale)``): density c z^(c-1) e^(-z^c) / scale,
    z = x / scale, on x >= 0."""

    name = "weibull"
    params = ("c", "scale")
    ndims_params = (0, 0)


class ParetoRV(ScalarRV):
    """Pareto (SciPy's ``pareto(b, scale=scale)``): density b scale^b / x^(b+1) on
    x >= scale."""

    name = "pareto"
    params = ("b", "scale")
    ndims_params = (0, 0)


class ChiSquareRV(ScalarRV):
    """Chi-square with ``df`` degrees of freedom: Gamma(df / 2, scale=2), on x >= 0."""

    name = "chisquare"
    params = ("df",)
    ndims_params = (0,)


class TruncatedNormalRV(ScalarRV):
    """Normal(loc, scale) restricted to lower <= x <= upper (bounds on the x scale, either
    may be infinite; SciPy's ``truncnorm((lower - loc) / scale, (upper - loc) / scale,
    loc, scale)``)."""

    name = "truncated_normal"
    params = ("loc", "scale", "lower", "upper")
    ndims_params = (0, 0, 0, 0)


class VonMisesRV(ScalarRV):
    """Von Mises (SciPy's ``vonmises(kappa, loc=mu)``): density e^(kappa cos(x - mu)) /
    (2 pi I0(kappa)); draws lie in [mu - pi, mu + pi]."""

    name = "von_mises"
    params = ("mu", "kappa")
    ndims_params = (0, 0)


class SkewNormalRV(ScalarRV):
    """Skew normal (SciPy's ``skewnorm(a, loc, scale)``): density 2 phi(z) Phi(a z) / scale,
    z = (x - loc) / scale."""

    name = "skew_normal"
    params = ("a", "loc", "scale")
    ndims_params = (0, 0, 0)


class WaldRV(ScalarRV):
    """Wald, the inverse Gaussian with mean ``mean`` and shape lambda = ``scale`` (NumPy's
    ``wald(mean, scale)``, SciPy's ``invgauss(mean / scale, scale=scale)``), on x > 0."""

    name = "wald"
    params = ("mean", "scale")
    ndims_params = (0, 0)


class HalfStudentTRV(ScalarRV):
    """|t_nu| * scale, for Student's t_nu with ``nu`` degrees of freedom, on x >= 0."""

    name = "half_student_t"
    params = ("nu", "scale")
    ndims_params = (0, 0)


class CategoricalRV(RandomVariable):
    """An index k in [0, K) with probability p[..., k] / sum(p[..., :]) (``p``'s last axis
    holds the K probabilities)."""

    name = "categorical"
    params = ("p",)
    ndims_params = (1,)
    kind = "i"


class MultivariateNormalRV(RandomVariable):
    """A K-vector with mean ``mean[..., K]`` and covariance ``cov[..., K, K]``."""

    name = "multivariate_normal"
    params = ("mean", "cov")
    ndims_params = (1, 2)
    ndim_supp = 1

    def support_shape(self, *params: TensorType) -> tuple[int | None, ...]:
        mean, cov = params
        lengths = {d for d in (mean.shape[-1], cov.shape[-1], cov.shape[-2]) if d is not None}
        if len(lengths) > 1:
            raise ShapeError(
                f"{self.name}: mean {mean} and cov {cov} disagree on the length K of a draw"
            )
        return (lengths.pop() if lengths else None,)


class DirichletRV(RandomVariable):
    """A point of the simplex: K weights >= 0 summing to 1, with concentrations
    ``alpha[..., K]``."""

    name = "dirichlet"
    params = ("alpha",)
    ndims_params = (1,)
    ndim_supp = 1

    def support_shape(self, *params: TensorType) -> tuple[int | None, ...]:
        return (params[0].shape[-1],)


# --- discrete and multivariate distributions, issue #18 -----------------------------------


class NegativeBinomialRV(ScalarRV):
    """The number of failures before the ``n``-th success in trials of probability ``p``
    (SciPy's ``nbinom(n, p)``; n > 0 real, 0 < p <= 1): k = 0, 1, 2, ..."""

    name = "negative_binomial"
    params = ("n", "p")
    ndims_params = (0, 0)
    kind = "i"


class GeometricRV(ScalarRV):
    """The number of trials of probability ``p`` up to the first success (SciPy's
    ``geom(p)``; 0 < p <= 1): k = 1, 2, 3, ..."""

    name = "geometric"
    params = ("p",)
    ndims_params = (0,)
    kind = "i"


class BetaBinomialRV(ScalarRV):
    """Binomial(n, q) with q ~ Beta(a, b) (SciPy's ``betabinom(n, a, b)``): k = 0, ..., n."""

    name = "beta_binomial"
    params = ("n", "a", "b")
    ndims_params = (0, 0, 0)
    kind = "i"


class DiscreteUniformRV(ScalarRV):
    """An integer uniform on ``lower, ..., upper`` (inclusive; SciPy's
    ``randint(lower, upper + 1)``)."""

    name = "discrete_uniform"
    params = ("lower", "upper")
    ndims_params = (0, 0)
    kind = "i"


class ZeroInflatedPoissonRV(ScalarRV):
    """Poisson(``rate``) with probability ``psi``, else 0 (PyMC's convention: P(0) =
    (1 - psi) + psi e^-rate)."""

    name = "zero_inflated_poisson"
    params = ("psi", "rate")
    ndims_params = (0, 0)
    kind = "i"


class ZeroInflatedNegativeBinomialRV(ScalarRV):
    """NegativeBinomial(``n``, ``p``) with probability ``psi``, else 0 (PyMC's convention:
    P(0) = (1 - psi) + psi p^n)."""

    name = "zero_inflated_negative_binomial"
    params = ("psi", "n", "p")
    ndims_params = (0, 0, 0)
    kind = "i"


class MultinomialRV(RandomVariable):
    """Counts of K categories in ``n`` trials, with probabilities p[..., k] / sum(p[..., :])
    (``p``'s last axis holds the K probabilities): a draw is a K-vector summing to n."""

    name = "multinomial"
    params = ("n", "p")
    ndims_params = (0, 1)
    ndim_supp = 1
    kind = "i"

    def support_shape(self, *params: TensorType) -> tuple[int | None, ...]:
        return (params[1].shape[-1],)


class OrderedLogisticRV(RandomVariable):
    """A category k in {0, ..., K}: P(k) = sigmoid(eta - c[k-1]) - sigmoid(eta - c[k]), with
    the K increasing ``cutpoints`` c on the last axis, c[-1] = -inf and c[K] = +inf (PyMC's
    ``OrderedLogistic``)."""

    name = "ordered_logistic"
    params = ("eta", "cutpoints")
    ndims_params = (0, 1)
    kind = "i"


class LKJCholeskyRV(RandomVariable):
    """The lower Cholesky factor L of an ``n`` x ``n`` correlation matrix L L^T with density
    proportional to det(L L^T)^(eta - 1) (Lewandowski, Kurowicka and Joe, 2009); eta > 0.

    ``n`` is a static int (an Op parameter, after ``size`` and ``dtype``); a draw has core
    shape ``(n, n)``.
    """

    name = "lkj_cholesky"
    __props__ = ("size", "dtype", "n")
    params = ("eta",)
    ndims_params = (0,)
    ndim_supp = 2

    n: int

    def __init__(self, size: Any, dtype: Any, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ShapeError(f"lkj_cholesky: n must be an int >= 1 (the matrix size), got {n!r}")
        super().__init__(size, dtype, int(n))

    def support_shape(self, *params: TensorType) -> tuple[int | None, ...]:
        return (self.n, self.n)


def draw_dtype(op_class: type[RandomVariable], params: tuple[Any, ...], dtype: Any) -> str:
    """The dtype of a draw: ``dtype`` if given; int64 for discrete distributions; else the
    float dtype of the parameters (Python numbers are weak: float32 parameters give
    float32 draws, numbers alone float64)."""
    if dtype is not None:
        chosen = TensorType(dtype).dtype
        if np.dtype(chosen).kind != op_class.kind:
            want = "a float" if op_class.kind == "f" else "an integer"
            raise DTypeError(f"{op_class.name}: dtype must be {want} dtype, got {chosen}")
        return chosen
    if op_class.kind == "i":
        return "int64"
    kinds = [_dtype_item(p) for p in params]
    return result_dtype(*kinds, 0.0)


def _dtype_item(value: Any) -> Any:
    if isinstance(value, Var):
        return value.type
    if isinstance(value, (bool, int, float)):
        return value  # weak
    return np.asarray(value).dtype


def param_input(op_class: type[RandomVariable], name: str, value: Any, dtype: str) -> Var:
    """A parameter as a Var: Python numbers become constants of the draw's float dtype
    (continuous distributions) so they stay weak."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and op_class.kind == "f":
        value = np.asarray(value, dtype=dtype)
    return as_var(value, context=f"{op_class.name}: parameter {name!r}")


def describe(var: Var) -> str:
    """Text naming a random quantity in errors: ``the normal draw``, ``the exp output``."""
    owner = var.owner
    if owner is None:
        return short_name(var)
    if isinstance(owner.op, RandomVariable):
        return f"the {owner.op.name} draw" if var.index == 1 else f"the {owner.op.name} key"
    return f"the {owner.op.name} output"


# --- keys ---------------------------------------------------------------------------------


class SplitKey(Op):
    """``n`` new keys from one, ``uint32[n, 2]``: ``jax.random.split(key, n)``, with JAX's
    numbers on every backend (threefry2x32, JAX's default partitionable split)."""

    __props__ = ("n",)
    differentiable = False

    n: int

    def __init__(self, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ShapeError(f"split: n must be an int >= 0, got {n!r}")
        super().__init__(int(n))

    def infer_types(self, key: TensorType) -> tuple[TensorType, ...]:
        _check_key("split", key)
        return (TensorType("uint32", (self.n, 2)),)


class FoldIn(Op):
    """A new key from a key and an integer (taken as ``uint32``):
    ``jax.random.fold_in(key, data)``, with JAX's numbers on every backend."""

    differentiable = False

    def infer_types(self, key: TensorType, data: TensorType) -> tuple[TensorType, ...]:
        _check_key("fold_in", key)
        if data.ndim != 0 or data.kind not in "iub":
            raise DTypeError(f"fold_in: data must be an integer scalar, got {data}")
        return (KEY_TYPE,)
