"""Log-densities of random variables: ``import rewritekit.logprob as rl``.

- ``logprob(x, value)``: the log-density of one random quantity (a random variable's draw,
  or an image of one that the rules in ``measurable`` invert: exp, shifts, scalings,
  negation, the invertible elementwise Ops of ``invertible``; a censored draw (``clip``,
  ``maximum``, ``minimum``); a mixture (a draw indexed by a Bernoulli or categorical
  draw)), elementwise.
- ``logcdf``, ``logccdf``, ``icdf`` (``cdfs``): log P(X <= x), log P(X > x) and the quantile
  of a draw, exact in both tails.
- ``truncate(x, lower, upper)``: a draw truncated to an interval (sampled by inverse CDF).
- ``joint_logprob({x: value, ...}, transforms=None | "default" | {...}, potentials=[...])``:
  the joint log-density, each random quantity replaced by its value, bounded discrete
  draws without a value summed out (``marginal``), ``potential`` terms added;
  ``logprob_terms`` gives the terms by name.
- ``transforms``: unconstraining transforms with their log-Jacobians; ``default_transform``.
- ``flatten_values``: value variables packed into one flat vector.

Example:
    >>> import rewritekit.random as rr, rewritekit.logprob as rl
    >>> k, mu = rr.normal(rr.key(), 0.0, 5.0)
    >>> k, tau = rr.halfcauchy(k, 5.0)
    >>> k, y = rr.normal(k, mu, tau, size=(3,))
    >>> values = {mu: rt.scalar("mu"), tau: rt.scalar("log_tau"), y: np.ones(3)}
    >>> logp = rl.joint_logprob(values, transforms="default")
"""

from rewritekit.logprob import (
    cdfs,
    densities,
    invertible,
    marginal,
    measurable,
    transforms,
    truncation,
)
from rewritekit.logprob.cdfs import icdf, logccdf, logcdf
from rewritekit.logprob.core import (
    Potential,
    default_transform,
    joint_logprob,
    logprob,
    logprob_terms,
    potential,
)
from rewritekit.logprob.measurable import log_density
from rewritekit.logprob.packing import Packing, flatten_values
from rewritekit.logprob.truncation import truncate

__all__ = [
    "Packing",
    "Potential",
    "cdfs",
    "default_transform",
    "densities",
    "flatten_values",
    "icdf",
    "invertible",
    "joint_logprob",
    "log_density",
    "logccdf",
    "logcdf",
    "logprob",
    "logprob_terms",
    "marginal",
    "measurable",
    "potential",
    "transforms",
    "truncate",
    "truncation",
]
