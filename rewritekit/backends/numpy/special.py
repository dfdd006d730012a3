"""NumPy implementations of the special functions (``rewritekit.tensor.special``): SciPy's,
and ``gammainc_grad_a`` (SciPy has no derivative of ``gammainc`` in ``a``), below."""

import numpy as np
import scipy.special as sp

from rewritekit.backends.common import elementwise, register
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.tensor import special as sf

#: The relative size of a series term, or of a continued fraction's change, that ends them
_SERIES_EPS = 1e-17
_FRACTION_EPS = 1e-15  # the convergents jitter by a few ulps once they have converged
_MAX_STEPS = 100_000


def _grad_a_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d/da gammainc(a, x) for x < a + 1: gammainc = sum over n >= 0 of
    t_n = e**-x x**(a + n) / Gamma(a + n + 1) (DLMF 8.7.1), all terms positive, so
    d/da gammainc = sum of t_n (log x - digamma(a + n + 1)), each term from the one before."""
    log_x = np.log(x)
    term = np.exp(a * log_x - x - sp.gammaln(a + 1))
    psi = sp.digamma(a + 1)
    total = term * (log_x - psi)
    for n in range(1, _MAX_STEPS):
        k = a + n
        term = term * x / k
        psi = psi + 1 / k
        step = term * (log_x - psi)
        total = total + step
        if np.all((np.abs(step) <= _SERIES_EPS * np.abs(total)) & (k > x)):
            break
    return total


def _grad_a_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d/da gammainc(a, x) for x >= a + 1, as -d/da gammaincc: with Gamma(a, x) =
    e**-x x**a F and Legendre's continued fraction F = 1 / (x + 1 - a - 1 (1 - a) /
    (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))) (DLMF 8.9.2),
    d/da gammaincc = gammaincc (log x + d/da log F - digamma(a)), a sum of positive terms.

    F is the limit of the convergents A_k / B_k of the three-term recurrence
    A_k = b_k A_{k-1} + a_k A_{k-2} (the same for B); their derivatives in a follow the
    recurrence differentiated, and everything is divided by B_k at each step. An element
    stops where F and the factor have settled (the convergents drift by rounding after).
    """
    one = np.ones_like(x)
    p0, p1, q0 = one, 0 * one, 0 * one  # A_{k-2}, A_{k-1}, B_{k-2}, over B_{k-1}
    dp0, dp1, dq0, dq1 = 0 * one, 0 * one, 0 * one, 0 * one  # d/da of A and B, over B_{k-1}
    fraction, factor, done = 0 * one, 0 * one, np.zeros(x.shape, bool)
    log_x_psi = np.log(x) - sp.digamma(a)
    for k in range(1, _MAX_STEPS):
        b_k = x + (2 * k - 1) - a  # d/da b_k = -1
        a_k, da_k = (one, 0.0) if k == 1 else ((k - 1) * (a - (k - 1)), k - 1.0)
        p, q = b_k * p1 + a_k * p0, b_k + a_k * q0
        dp = b_k * dp1 - p1 + a_k * dp0 + da_k * p0
        dq = b_k * dq1 - 1 + a_k * dq0 + da_k * q0
        p0, p1, q0 = p1 / q, p / q, 1 / q
        dp0, dp1, dq0, dq1 = dp1 / q, dp / q, dq1 / q, dq / q
        new_factor = log_x_psi + dp1 / p1 - dq1
        settled = (np.abs(p1 - fraction) <= _FRACTION_EPS * p1) & (
            np.abs(new_factor - factor) <= _FRACTION_EPS * np.abs(new_factor)
        )
        fraction = np.where(done, fraction, p1)
        factor = np.where(done, factor, new_factor)
        done = done | (settled & (k > 1))
        if np.all(done):
            break
    return -np.exp(a * np.log(x) - x - sp.gammaln(a)) * fraction * factor


def gammainc_grad_a(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d/da gammainc(a, x) in float64, by the power series where x < a + 1 and the
    continued fraction of gammaincc above (as Numerical Recipes splits gammainc itself):
    1e-12 relative to mpmath over 0.01 <= a <= 1000, 1e-4 <= x <= 1e4. 0 at x = 0 and
    x = inf; NaN outside a > 0, x >= 0."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.full(a.shape, np.nan)
    valid = (a > 0) & (a < np.inf) & (x >= 0)
    out[valid & ((x == 0) | (x == np.inf))] = 0.0
    inside = valid & (x > 0) & (x < np.inf)
    series, fraction = inside & (x < a + 1), inside & (x >= a + 1)
    out[series] = _grad_a_series(a[series], x[series])
    out[fraction] = _grad_a_fraction(a[fraction], x[fraction])
    return out


TABLE = elementwise.special_functions(np, sp) | {
    sf.Erfcx: sp.erfcx,
    sf.Erfcinv: sp.erfcinv,
    sf.Gammaincinv: sp.gammaincinv,
    sf.Betaincinv: sp.betaincinv,
    sf.Sigmoid: sp.expit,
    sf.Softplus: lambda x: np.logaddexp(np.zeros((), x.dtype), x),
    sf.LogSigmoid: sp.log_expit,
    sf.Logit: sp.logit,
    sf.Xlogy: sp.xlogy,
    sf.Xlog1py: sp.xlog1py,
    sf.Ndtr: sp.ndtr,
    sf.LogNdtr: sp.log_ndtr,
    sf.Ndtri: sp.ndtri,
    sf.Expi: sp.expi,
    sf.Gammaincc: sp.gammaincc,
    sf.GammaincGradA: gammainc_grad_a,
    sf.Betainc: sp.betainc,
    sf.Betaln: sp.betaln,
}
register(numpy_funcify, elementwise.special(np, sp, TABLE))
