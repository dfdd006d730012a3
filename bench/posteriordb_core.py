"""The machinery of the posteriordb models (``bench/posteriordb_models.py``): a model's
graph (``Model``) and its description (``Posterior``), the vendored data and reference
statistics, the density graph on one flat vector, the hand-written density on the same
layout, improper flat priors, and small ``jax.numpy`` log-densities for the hand-written
versions.

Example:
    >>> data = load_data("kidiq-kidscore_momiq")
    >>> sigma = load_reference("kidiq-kidscore_momiq")["sigma"]
    >>> int(data["N"]), data["kid_score"].shape, round(sigma["mean"], 1)
    (434, (434,), 18.3)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import rewritekit.logprob as rl
import rewritekit.tensor as rt
from rewritekit.ir import Var

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "posteriordb"
LOG_2PI = float(np.log(2.0 * np.pi))


@dataclass(frozen=True)
class Model:
    """A model's graph, ready for ``joint_logprob``.

    Attributes:
        values: ``{draw: value variable or observed array}``.
        free: the value variables (unconstrained) in flat-vector order.
        params: ``{Stan name: constrained graph}`` of the parameters to report.
        transforms: transforms replacing a draw's default one (Stan's ``ordered``,
            ``cholesky_factor_corr``).
        extra: log-density terms that are no draw's density: the Jacobians of flat
            parameters and Stan's ``target +=`` statements.
    """

    values: dict[Var, Any]
    free: list[Var]
    params: dict[str, Var]
    transforms: dict[Var, Any] = field(default_factory=dict)
    extra: list[Var] = field(default_factory=list)


@dataclass(frozen=True)
class Posterior:
    """One posteriordb posterior.

    Attributes:
        name: posteriordb's ``<data>-<model>`` name (the file names in ``DATA``).
        kind: the model family, for the docs' table.
        build: ``data -> Model`` (rewritekit's PPL).
        hand: ``(pieces, data) -> logp`` in ``jax.numpy``, ``pieces`` being the flat
            vector's unconstrained values by name (``Model.free``'s names).
        numpyro: ``data -> model function`` for ``numpyro.infer.NUTS``; its sites (or
            ``numpyro.deterministic``) carry the names of ``Model.params``.
        centre: ``data -> {name: unconstrained value}``, a point near the posterior for
            the tests (missing names: zero); None: zero everywhere.
    """

    name: str
    kind: str
    build: Callable[[dict], Model]
    hand: Callable[[dict[str, Any], dict], Any]
    numpyro: Callable[[dict], Callable[[], None]]
    centre: Callable[[dict], dict[str, Any]] | None = None

    @property
    def has_reference(self) -> bool:
        """Whether posteriordb has reference draws for it (``<name>.reference.json``)."""
        return (DATA / f"{self.name}.reference.json").exists()


def load_data(name: str) -> dict[str, Any]:
    """The posterior's data (posteriordb's JSON), lists as float or int NumPy arrays."""
    raw = json.loads((DATA / f"{name}.json").read_text())
    return {k: np.asarray(v) if isinstance(v, list) else v for k, v in raw.items()}


def load_reference(name: str) -> dict[str, dict[str, float]]:
    """``{"theta[1]": {"mean": ..., "sd": ...}, ...}`` of posteriordb's reference draws."""
    return json.loads((DATA / f"{name}.reference.json").read_text())["parameters"]


def stan_names(params: dict[str, Any], batch_ndim: int = 0) -> dict[str, np.ndarray]:
    """``{"beta": array (..., 2)}`` -> ``{"beta[1]": array (...), "beta[2]": ...}``: Stan's
    names, 1-based, for the values after the ``batch_ndim`` leading (draw) axes.

    Example:
        >>> list(stan_names({"mu": 0.0, "beta": np.zeros(2)}))
        ['mu', 'beta[1]', 'beta[2]']
    """
    named = {}
    for name, value in params.items():
        value = np.asarray(value)
        shape = value.shape[batch_ndim:]
        if not shape:
            named[name] = value
            continue
        for index in np.ndindex(*shape):
            label = ",".join(str(i + 1) for i in index)
            named[f"{name}[{label}]"] = value[(..., *index)]
    return named


def density_graph(posterior: Posterior, data: dict) -> tuple[rl.Packing, Var, dict[str, Var]]:
    """``(packing, logp, params)``: the joint log-density of the model's free values (default
    transforms, then the model's own) as a graph of ``packing.flat``, and the constrained
    parameters likewise."""
    m = posterior.build(data)
    free = {id(v) for v in m.free}  # observed data keep their scale: only free values move
    transforms = {
        x: rl.default_transform(x) if id(v) in free else None for x, v in m.values.items()
    }
    transforms.update(m.transforms)
    logp = rl.joint_logprob(m.values, transforms=transforms)
    for term in m.extra:
        logp = logp + term
    packing = rl.flatten_values(m.free)
    params = {name: packing.substitute(graph) for name, graph in m.params.items()}
    return packing, packing.substitute(logp), params


def hand_density(posterior: Posterior, data: dict, packing: rl.Packing) -> Callable:
    """``flat -> logp``: the hand-written density reading ``packing``'s layout."""
    sizes = [int(np.prod(s)) for s in packing.shapes]
    starts = np.cumsum([0, *sizes]).tolist()

    def logp(flat: jax.Array) -> jax.Array:
        pieces = {
            name: jnp.reshape(flat[a:b], shape)
            for name, shape, a, b in zip(
                packing.names, packing.shapes, starts[:-1], starts[1:], strict=True
            )
        }
        return posterior.hand(pieces, data)

    return logp


def flat(name: str, shape: tuple[int, ...] = (), transform: Any = None) -> tuple[Var, Var, list]:
    """A parameter with an improper flat prior (a Stan parameter without a prior statement).

    Returns:
        ``(constrained graph, value variable, [log-Jacobian])``: the value variable is the
        unconstrained input; with a transform, the constrained value is its backward image.
    """
    v = rt.tensor(name, shape=shape)
    if transform is None:
        return v, v, []
    return transform.backward(v), v, [rt.sum(transform.log_jac_det(v))]


def value_var(x: Var, name: str) -> Var:
    """The unconstrained value variable of the draw ``x`` under its default transform."""
    transform = rl.default_transform(x)
    shape = x.type.shape if transform is None else transform.forward(x).type.shape
    return rt.tensor(name, shape=shape)


def constrained(x: Var, v: Var) -> Var:
    """``v`` mapped back by the default transform of the draw ``x`` (``v`` if none)."""
    transform = rl.default_transform(x)
    return v if transform is None else transform.backward(v)


# --- hand-written log-densities (jax.numpy), without constants that cancel -------------


def normal_lpdf(x: Any, loc: Any, scale: Any) -> jax.Array:
    """log N(x; loc, scale), summed."""
    return jnp.sum(-0.5 * ((x - loc) / scale) ** 2 - jnp.log(scale) - 0.5 * LOG_2PI)


def cauchy_lpdf(x: Any, loc: Any, scale: Any) -> jax.Array:
    """log Cauchy(x; loc, scale), summed (Stan's half-Cauchy differs by log 2)."""
    return jnp.sum(-jnp.log(np.pi * scale) - jnp.log1p(((x - loc) / scale) ** 2))


def positive(u: Any) -> tuple[jax.Array, jax.Array]:
    """``(exp(u), log-Jacobian)``: Stan's ``<lower=0>``."""
    return jnp.exp(u), jnp.sum(u)


def bounded(u: Any, lower: Any, upper: Any) -> tuple[jax.Array, jax.Array]:
    """``(lower + (upper - lower) inv_logit(u), log-Jacobian)``: ``<lower, upper>``."""
    x = lower + (upper - lower) * jax.nn.sigmoid(u)
    return x, jnp.sum(jnp.log(upper - lower) + jax.nn.log_sigmoid(u) + jax.nn.log_sigmoid(-u))
