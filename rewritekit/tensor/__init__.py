"""The NumPy-like tensor API: ``import rewritekit.tensor as rt``.

One module per family of Ops (``elemwise``, ``special``, ``bessel``, ``gradient``,
``reduction``, ``shapes``, ``creation``, ``subtensor``, ``products``, ``sorting``,
``complex_parts``; ``rt.linalg`` and ``rt.fft`` are namespaces of their own), and
``everyday``, ``arrangement`` and ``assembly`` for NumPy's conveniences built from them
(``isclose``, ``take``, ``atleast_2d``, ...), ``spellings`` for PyTensor's names; ``rt.lax``
and ``rt.nn`` give ``jax.lax``'s and ``jax.nn``'s. Each module lists its user functions in
``__all__``, and they are all re-exported here.

Example:
    >>> import rewritekit.tensor as rt
    >>> x = rt.vector("x")
    >>> y = rt.exp(x) * 2.0 + 1.0
    >>> y.dtype
    'float64'
"""

import importlib

from rewritekit.tensor import fft as fft
from rewritekit.tensor import lax as lax
from rewritekit.tensor import linalg as linalg
from rewritekit.tensor import nn as nn
from rewritekit.tensor.aliases import *  # noqa: F403
from rewritekit.tensor.arrangement import *  # noqa: F403
from rewritekit.tensor.assembly import *  # noqa: F403
from rewritekit.tensor.basic import *  # noqa: F403
from rewritekit.tensor.bessel import *  # noqa: F403
from rewritekit.tensor.complex_parts import *  # noqa: F403
from rewritekit.tensor.control import *  # noqa: F403
from rewritekit.tensor.creation import *  # noqa: F403
from rewritekit.tensor.elemwise import *  # noqa: F403
from rewritekit.tensor.everyday import *  # noqa: F403
from rewritekit.tensor.gradient import *  # noqa: F403
from rewritekit.tensor.linalg import kron  # noqa: F401 (NumPy has it at the top level too)
from rewritekit.tensor.nn import one_hot  # noqa: F401 (jax.nn's, asked for at the top level)
from rewritekit.tensor.numerics import *  # noqa: F403
from rewritekit.tensor.ordering import *  # noqa: F403
from rewritekit.tensor.products import *  # noqa: F403
from rewritekit.tensor.reduction import *  # noqa: F403
from rewritekit.tensor.shapes import *  # noqa: F403
from rewritekit.tensor.sorting import *  # noqa: F403
from rewritekit.tensor.special import *  # noqa: F403
from rewritekit.tensor.spellings import *  # noqa: F403
from rewritekit.tensor.subtensor import *  # noqa: F403
from rewritekit.tensor.variable import install_operators

install_operators()

#: The modules that define Ops. Each backend has one module of implementations per family
#: (``rewritekit/backends/<backend>/<family>.py``), and the tests one module of op records.
OP_FAMILIES = (
    "bessel",
    "complex_parts",
    "control",
    "creation",
    "elemwise",
    "fft",
    "gradient",
    "linalg",
    "products",
    "random",
    "reduction",
    "shapes",
    "sorting",
    "special",
    "subtensor",
)


def _public_names() -> list[str]:
    families = [
        "aliases",
        "arrangement",
        "assembly",
        "basic",
        "everyday",
        "numerics",
        "ordering",
        "spellings",
        *OP_FAMILIES,
    ]
    families.remove("linalg")  # a namespace of its own: rt.linalg.cholesky
    families.remove("fft")  # rt.fft.rfft
    modules = [importlib.import_module(f"rewritekit.tensor.{name}") for name in families]
    names = (name for module in modules for name in module.__all__)
    return ["fft", "kron", "lax", "linalg", "nn", "one_hot", *names]


__all__ = _public_names()
