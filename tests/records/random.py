"""Op records for ``rewritekit.tensor.random``.

The two backends draw different numbers from the same distribution, so a record cannot
compare draws. It compares what must agree: the draw's shape (parameters broadcast, or
``size``) and that every draw lies in the distribution's support. The distributions
themselves are tested with moment and KS tests in ``tests/random/``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import strategies as st

import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.tensor import random as rv
from rewritekit.tensor.custom_random import CustomRV
from tests.records import OpRecord, values


def _key(data):
    return np.array(
        data.draw(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))), dtype=np.uint32
    )


# Fixed batch shapes that broadcast (one per parameter, in order): every draw has the same
# static shapes, so each record compiles once per dtype (a JAX compile of a sampler costs
# up to a second); float32 is drawn for the normal record only (tests/random has more).
SHAPES = [(2, 1), (3,), ()]


def _draw(*ranges, core=()):
    """A key, then one array per (lo, hi) range, of the batch shapes ``SHAPES`` (plus the
    core shapes ``core``)."""

    def draw(data, dtype):
        shapes = SHAPES[: len(ranges)]
        core_shapes = core or [()] * len(ranges)
        arrays = [
            values(data, dtype, tuple(s) + c, lo, hi)
            for s, c, (lo, hi) in zip(shapes, core_shapes, ranges, strict=True)
        ]
        return [_key(data), *arrays]

    return draw


def _shape_and_support(sampler, support, size=None, **kwargs):
    def build(key, *params):
        _, draw = sampler(key, *params, size=size, **kwargs)
        return rt.shape(draw), rt.all(support(draw))

    return build


def _expected(core_of=lambda *p: (), ndims=None, size=None):
    def reference(key, *params):
        ndims_ = ndims or (0,) * len(params)
        batch = np.broadcast_shapes(
            *(np.shape(p)[: np.ndim(p) - c] for p, c in zip(params, ndims_, strict=True))
        )
        shape = (size if size is not None else batch) + core_of(*params)
        return np.array(shape, dtype=np.int64), np.bool_(True)

    return reference


def _positive(x):
    return x > 0


def _nonnegative(x):
    return x >= 0


def _real(x):
    return rt.logical_not(rt.isnan(x))


def _unit(x):
    return rt.logical_and(x >= 0, x <= 1)


def _binary(x):
    return rt.logical_or(rt.equal(x, 0), rt.equal(x, 1))


def _record(name, op, sampler, support, ranges, dtypes=("float64",), **kwargs):
    return OpRecord(
        name=name,
        ops=(op,),
        build=_shape_and_support(sampler, support, **kwargs),
        reference=_expected(),
        draw=_draw(*ranges),
        dtypes=dtypes,
        static_shapes=True,
        grad=False,
    )


POS, REAL = (0.5, 5.0), (-3.0, 3.0)

RECORDS = [
    _record("normal", rv.NormalRV, rr.normal, _real, [REAL, POS], ("float64", "float32")),
    _record("halfnormal", CustomRV, rr.halfnormal, _nonnegative, [POS]),
    _record("cauchy", rv.CauchyRV, rr.cauchy, _real, [REAL, POS]),
    _record("halfcauchy", rv.HalfCauchyRV, rr.halfcauchy, _nonnegative, [POS]),
    _record("exponential", rv.ExponentialRV, rr.exponential, _nonnegative, [POS]),
    _record("gamma", rv.GammaRV, rr.gamma, _nonnegative, [POS, POS]),
    _record("inverse_gamma", rv.InverseGammaRV, rr.inverse_gamma, _nonnegative, [POS, POS]),
    _record("beta", rv.BetaRV, rr.beta, _unit, [POS, POS]),
    _record("student_t", rv.StudentTRV, rr.student_t, _real, [POS, REAL, POS]),
    _record("lognormal", CustomRV, rr.lognormal, _nonnegative, [REAL, (0.5, 2.0)]),
    _record("bernoulli", rv.BernoulliRV, rr.bernoulli, _binary, [(0.0, 1.0)]),
    _record("poisson", rv.PoissonRV, rr.poisson, _nonnegative, [(0.0, 20.0)]),
    OpRecord(
        name="uniform",
        ops=(rv.UniformRV,),
        build=lambda key, low, width: _shape_and_support(
            rr.uniform, lambda x: rt.logical_and(x >= low, x <= low + width)
        )(key, low, low + width),
        reference=_expected(),
        draw=_draw(REAL, POS),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="bernoulli_logit",
        ops=(rv.BernoulliLogitRV,),
        build=lambda key, logit: _shape_and_support(
            lambda k, size: rr.bernoulli(k, logit=logit, size=size), _binary
        )(key),
        reference=_expected(),
        draw=_draw(REAL),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="binomial",
        ops=(rv.BinomialRV,),
        build=lambda key, n, p: _shape_and_support(
            rr.binomial, lambda x: rt.logical_and(x >= 0, x <= rt.cast(n, "int64"))
        )(key, rt.cast(n, "int64"), p),
        reference=_expected(),
        draw=_draw((0.0, 30.0), (0.0, 1.0)),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="normal_sized",
        ops=(rv.NormalRV,),
        build=lambda key, loc, scale: _shape_and_support(
            rr.normal, _real, size=(2, *np.broadcast_shapes(loc.type.shape, scale.type.shape))
        )(key, loc, scale),
        reference=lambda key, loc, scale: _expected(
            size=(2, *np.broadcast_shapes(loc.shape, scale.shape))
        )(key, loc, scale),
        draw=_draw(REAL, POS),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="categorical",
        ops=(rv.CategoricalRV,),
        build=_shape_and_support(rr.categorical, lambda x: rt.logical_and(x >= 0, x < 4)),
        reference=_expected(ndims=(1,)),
        draw=_draw((0.05, 1.0), core=[(4,)]),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="dirichlet",
        ops=(rv.DirichletRV,),
        build=_shape_and_support(rr.dirichlet, _unit),
        reference=_expected(lambda a: a.shape[-1:], ndims=(1,)),
        draw=_draw((0.5, 5.0), core=[(3,)]),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="multivariate_normal",
        ops=(rv.MultivariateNormalRV,),
        build=lambda key, mean, root: _shape_and_support(rr.multivariate_normal, _real)(
            key, mean, rt.matmul(root, rt.swapaxes(root, -1, -2)) + 0.5 * rt.eye(3)
        ),
        reference=lambda key, mean, root: _expected(lambda m, c: m.shape[-1:], ndims=(1, 2))(
            key, mean, np.broadcast_to(np.eye(3), root.shape)
        ),
        draw=_draw(REAL, REAL, core=[(3,), (3, 3)]),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
]


def _np_split(key, n):
    """JAX's ``random.split``, computed here by JAX itself (the reference of the key Ops is
    JAX's numbers, which the NumPy backend reproduces)."""
    import jax

    return np.asarray(jax.random.split(key, n))


def _np_fold_in(key, data):
    import jax

    return np.asarray(jax.random.fold_in(key, np.uint32(int(data) & 0xFFFFFFFF)))


def _key_and_data(data, dtype):
    return [_key(data), np.array(data.draw(st.integers(-(2**40), 2**40)), dtype=np.int64)]


RECORDS += [
    OpRecord(
        name="split",
        ops=(rv.SplitKey,),
        build=lambda key, d: (rr.split(key, 3), rr.split(key, 1)),
        reference=lambda key, d: (_np_split(key, 3), _np_split(key, 1)),
        draw=_key_and_data,
        dtypes=("uint32",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="fold_in",
        ops=(rv.FoldIn,),
        build=lambda key, d: rr.fold_in(key, d),
        reference=_np_fold_in,
        draw=_key_and_data,
        dtypes=("uint32",),
        static_shapes=True,
        grad=False,
    ),
]


# --- discrete and multivariate distributions, issue #18 -----------------------------------


def _at_least_one(x):
    return x >= 1


def _count_below(n):
    return lambda x: rt.logical_and(x >= 0, x <= n)


def _unit_lower_triangular(x):
    unit_rows = rt.abs(rt.sum(rt.square(x), axis=-1) - 1) < 1e-9
    lower = rt.all(rt.equal(rt.triu(x, 1), 0), axis=(-2, -1))
    return rt.logical_and(rt.all(unit_rows, axis=-1), lower)


PROB = (0.1, 1.0)

RECORDS += [
    _record(
        "negative_binomial", rv.NegativeBinomialRV, rr.negative_binomial, _nonnegative, [POS, PROB]
    ),
    _record("geometric", rv.GeometricRV, rr.geometric, _at_least_one, [PROB]),
    _record(
        "zero_inflated_poisson",
        rv.ZeroInflatedPoissonRV,
        rr.zero_inflated_poisson,
        _nonnegative,
        [(0.0, 1.0), (0.0, 20.0)],
    ),
    _record(
        "zero_inflated_negative_binomial",
        rv.ZeroInflatedNegativeBinomialRV,
        rr.zero_inflated_negative_binomial,
        _nonnegative,
        [(0.0, 1.0), POS, PROB],
    ),
    OpRecord(
        name="beta_binomial",
        ops=(rv.BetaBinomialRV,),
        build=lambda key, n, a, b: _shape_and_support(
            rr.beta_binomial, _count_below(rt.cast(n, "int64"))
        )(key, rt.cast(n, "int64"), a, b),
        reference=_expected(),
        draw=_draw((0.0, 30.0), POS, POS),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="discrete_uniform",
        ops=(rv.DiscreteUniformRV,),
        build=lambda key, low, width: _shape_and_support(
            rr.discrete_uniform,
            lambda x: rt.logical_and(x >= rt.floor(low), x <= rt.floor(low) + rt.floor(width)),
        )(key, rt.cast(rt.floor(low), "int64"), rt.cast(rt.floor(low) + rt.floor(width), "int64")),
        reference=_expected(),
        draw=_draw((-10.0, 10.0), (0.0, 20.0)),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="multinomial",
        ops=(rv.MultinomialRV,),
        build=lambda key, n, p: _shape_and_support(
            rr.multinomial,
            lambda x: rt.logical_and(
                rt.all(x >= 0), rt.all(rt.equal(rt.sum(x, axis=-1), rt.cast(n, "int64")))
            ),
        )(key, rt.cast(n, "int64"), p),
        reference=_expected(lambda n, p: p.shape[-1:], ndims=(0, 1)),
        draw=_draw((0.0, 30.0), (0.05, 1.0), core=[(), (4,)]),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="ordered_logistic",
        ops=(rv.OrderedLogisticRV,),
        build=lambda key, eta, c: _shape_and_support(
            rr.ordered_logistic, lambda x: rt.logical_and(x >= 0, x <= 3)
        )(key, eta, rt.sort(c, axis=-1)),
        reference=_expected(ndims=(0, 1)),
        draw=_draw(REAL, REAL, core=[(), (3,)]),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="lkj_cholesky",
        ops=(rv.LKJCholeskyRV,),
        build=_shape_and_support(
            lambda key, eta, size=None: rr.lkj_cholesky(key, 3, eta, size=size),
            _unit_lower_triangular,
        ),
        reference=_expected(lambda eta: (3, 3)),
        draw=_draw((0.3, 5.0)),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
]


# --- continuous distributions, issue #18 ----------------------------------------------------


def _at_least(bound):
    return lambda x: x >= bound


def _within_pi_of(mu):
    # mu + angle, |angle| <= pi: room for the rounding of the sum
    return lambda x: rt.abs(x - mu) <= np.pi + 1e-9


RECORDS += [
    _record("laplace", rv.LaplaceRV, rr.laplace, _real, [REAL, POS]),
    _record("logistic", rv.LogisticRV, rr.logistic, _real, [REAL, POS]),
    _record("gumbel", rv.GumbelRV, rr.gumbel, _real, [REAL, POS]),
    _record("weibull", rv.WeibullRV, rr.weibull, _nonnegative, [POS, POS]),
    _record("chisquare", rv.ChiSquareRV, rr.chisquare, _nonnegative, [POS]),
    _record("skew_normal", rv.SkewNormalRV, rr.skew_normal, _real, [REAL, REAL, POS]),
    _record("wald", rv.WaldRV, rr.wald, _positive, [POS, POS]),
    _record("half_student_t", rv.HalfStudentTRV, rr.half_student_t, _nonnegative, [POS, POS]),
    OpRecord(
        name="pareto",
        ops=(rv.ParetoRV,),
        build=lambda key, b, scale: _shape_and_support(rr.pareto, _at_least(scale))(key, b, scale),
        reference=_expected(),
        draw=_draw(POS, POS),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        name="von_mises",
        ops=(rv.VonMisesRV,),
        build=lambda key, mu, kappa: _shape_and_support(rr.von_mises, _within_pi_of(mu))(
            key, mu, kappa
        ),
        reference=_expected(),
        draw=_draw(REAL, POS),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
    OpRecord(
        # the upper bound lower + scale: four broadcast parameters from three drawn shapes
        name="truncated_normal",
        ops=(rv.TruncatedNormalRV,),
        build=lambda key, loc, scale, lower: _shape_and_support(
            rr.truncated_normal, lambda x: rt.logical_and(x >= lower, x <= lower + scale)
        )(key, loc, scale, lower, lower + scale),
        reference=_expected(),
        draw=_draw(REAL, POS, REAL),
        dtypes=("float64",),
        static_shapes=True,
        grad=False,
    ),
]

# Checked on JAX all in one graph (tests/properties/test_random_records.py): each sampler's
# own JAX compile would cost 1-3 s per record and check.
RECORDS = [dataclasses.replace(record, jax_together=True) for record in RECORDS]
