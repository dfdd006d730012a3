"""Importing JAX functions: ``from_jax`` (a jaxpr as a graph of our Ops), ``optimize`` (a
JAX function rewritten by our rules and handed back to JAX), the primitive table
(``PRIMITIVES``, ``register_primitive``) and ``OpaqueJax`` for unmapped primitives.
See ``docs/jax.md``."""

from rewritekit.jaxpr.importer import UnmappedPrimitiveError, from_jax, import_jaxpr, jaxpr_inputs
from rewritekit.jaxpr.opaque import OpaqueJax
from rewritekit.jaxpr.optimize import Optimized, optimize
from rewritekit.jaxpr.primitives import PRIMITIVES, register_primitive

__all__ = [
    "PRIMITIVES",
    "OpaqueJax",
    "Optimized",
    "UnmappedPrimitiveError",
    "from_jax",
    "import_jaxpr",
    "jaxpr_inputs",
    "optimize",
    "register_primitive",
]
