"""Log-densities of random variables: ``import rewritekit.logprob as rl``.

- ``logprob(x, value)``: the log-density of one random quantity (a random variable's draw,
  or an image of one that the rules in ``measurable`` invert: exp, shifts, scalings,
  negation), elementwise.
- ``joint_logprob({x: value, ...}, transforms=None | "default" | {...})``: the joint
  log-density, each random quantity replaced by its value; ``logprob_terms`` gives the
  terms by name.
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

from rewritekit.logprob import densities, measurable, transforms
from rewritekit.logprob.core import default_transform, joint_logprob, logprob, logprob_terms
from rewritekit.logprob.measurable import log_density
from rewritekit.logprob.packing import Packing, flatten_values

__all__ = [
    "Packing",
    "default_transform",
    "densities",
    "flatten_values",
    "joint_logprob",
    "log_density",
    "logprob",
    "logprob_terms",
    "measurable",
    "transforms",
]
