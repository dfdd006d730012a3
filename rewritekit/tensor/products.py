"""Products, in one namespace: products of two tensors (``dot``, ``matmul``, ``outer``,
``tensordot``; module ``contractions``) and Einstein summation (``einsum``; module
``einstein``). Both follow NumPy's shape rules and result dtypes and check contracted
lengths at construction. The backends implement the family in one module each
(``rewritekit/backends/<backend>/products.py``).
"""

# ruff: noqa: F401 (the Op classes are this namespace's too: pr.Dot, pr.Einsum)
from rewritekit.tensor.contractions import *  # noqa: F403
from rewritekit.tensor.contractions import Dot, MatMul, Outer, Product, Tensordot
from rewritekit.tensor.contractions import __all__ as _contractions
from rewritekit.tensor.einstein import *  # noqa: F403
from rewritekit.tensor.einstein import Einsum, EinsumSpec, einsum_type, parse_einsum
from rewritekit.tensor.einstein import __all__ as _einstein

__all__ = [*_contractions, *_einstein]
