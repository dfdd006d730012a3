"""Control flow in the graph: ``scan``, ``fori_loop``, ``map``, ``while_loop``, ``cond``.

The API is ``jax.lax``'s. A loop body or a branch is a plain Python function of symbolic
tensors, traced once into an inner graph over canonical placeholders
(``rewritekit.ir.inner``); the loop or branch is one node (``Scan``, ``While``, ``Cond``)
whose parameters hold that graph and whose inputs are the outer Vars: initial carries,
scanned sequences, and the outer Vars the function closed over. The same body traced
twice gives the same node.

Derivatives are built from the body's: a scan's vjp is a reverse scan over the carries
the forward stored (or, with ``checkpoint=True``, over blocks of ``ceil(sqrt(T))`` steps
recomputed from one stored carry each), a cond's the cond of the branches' vjps, a
bounded ``while_loop`` (``max_steps``) is a scan with a done-mask. Forward mode (``jvp``
rules) loops over values and tangents together: a scan of (carry, tangent), a while loop
of (state, tangent), so an unbounded ``while_loop`` has forward mode only. The
differentiators of whole graphs live in ``rewritekit.autodiff``, which registers them
(``set_differentiator``), as this layer may not import it.

Example:
    >>> x = rt.vector("x")
    >>> total, partial = scan(lambda c, xi: (c + xi, c + xi), 0.0, x)  # cumsum

The package: ``api`` (the functions above, which trace Python functions), ``ops`` (the
Ops), ``derivatives`` (their vjp and jvp rules).
"""

from rewritekit.tensor.control.api import cond, fori_loop, map, scan, while_loop
from rewritekit.tensor.control.blockwise import Blockwise as Blockwise
from rewritekit.tensor.control.derivatives import set_differentiator as set_differentiator
from rewritekit.tensor.control.ops import Cond as Cond
from rewritekit.tensor.control.ops import Scan as Scan
from rewritekit.tensor.control.ops import While as While

# switch is rk.switch and rt.lax.switch: rt.switch is PyTensor's elementwise one
__all__ = ["cond", "fori_loop", "map", "scan", "while_loop"]
