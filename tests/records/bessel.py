"""Op records for the Bessel functions (``rewritekit.tensor.bessel``).

The orders are drawn as floats, so the gradient checks compare the derivative in v too:
NaN (not implemented) on both backends, which ``jax.grad`` must agree with. Finite
differences would give a number there, so they are left to
``tests/tensor/test_special_functions.py``, which checks the derivative in x alone.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sp
from hypothesis import strategies as st

import rewritekit.tensor as rt
from rewritekit.tensor import bessel as bs
from tests.records import OpRecord, values


def vectors(*ranges):
    """One array of shape (3,) per range: for the functions whose JAX form takes a second
    or more to compile, one shape per dtype, so that the property tests compile each graph
    once (jax.jit compiles per shape; broadcasting is every elementwise Op's and is checked
    by the other records)."""

    def draw(data, dtype):
        return [values(data, dtype, (3,), lo, hi) for lo, hi in ranges]

    return draw


def two_shapes(*ranges):
    """One array per range, all of shape () or all of shape (3,): cheap functions whose
    draws would otherwise compile a graph for each of a dozen shapes."""

    def draw(data, dtype):
        shape = data.draw(st.sampled_from([(), (3,)]), label="shape")
        return [values(data, dtype, shape, lo, hi) for lo, hi in ranges]

    return draw


def _away_from_zero(data, dtype):
    """Draws in [-6, 6] with |x| >= 0.25: jax.grad of jax.scipy.special.i0 is 1, not 0, at 0
    (its e**|x| scaling), and i0e, i1e have a kink there; past 6 the values of i0 and i1
    swamp the finite differences of the others."""
    (x,) = two_shapes((-6.0, 6.0))(data, dtype)
    return [np.where(np.abs(x) < 0.25, np.copysign(0.25, x), x).astype(dtype)]


def _of_order(name, op_class, fn, reference, orders, x):
    return OpRecord(
        name,
        (op_class,),
        fn,
        reference,
        vectors(orders, x),
        rtol=1e-8,
        fd=False,
        notes="x past 20 (the JAX backend's switch from the series to the integral for I) "
        "and below 0.1 (Temme's series for K)",
    )


def _of_x(name, op_class, fn, reference, lo, hi):
    return OpRecord(
        name, (op_class,), fn, reference, two_shapes((lo, hi)), grad_draw=_away_from_zero
    )


RECORDS = [
    _of_x("i0", bs.I0, rt.i0, sp.i0, -20.0, 20.0),
    _of_x("i1", bs.I1, rt.i1, sp.i1, -20.0, 20.0),
    _of_x("i0e", bs.I0e, rt.i0e, sp.i0e, -50.0, 50.0),
    _of_x("i1e", bs.I1e, rt.i1e, sp.i1e, -50.0, 50.0),
    _of_order("ive", bs.Ive, rt.ive, sp.ive, (-3.0, 6.0), (0.01, 50.0)),
    _of_order("kv", bs.Kv, rt.kv, sp.kv, (-6.0, 6.0), (0.001, 40.0)),
]
