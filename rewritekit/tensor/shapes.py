"""Shapes and the Ops that move axes and elements without computing anything, in one
namespace: shape vectors (``shape_vectors``), reshaping, broadcasting and moving axes
(``layout``), joining (``joining``), sharding constraints (``sharding``), and static
shapes stated mid-graph (``specify``). The backends
implement the family in one module each (``rewritekit/backends/<backend>/shapes.py``).

Static shapes travel with every Op here: an Op whose result shape depends on the *values*
of a shape argument (``Reshape``, ``BroadcastTo``, ``creation.Alloc``) takes the shape as
an int64 vector input (run-time values) and also holds, as a parameter, the static shape
those values imply (an int where the entry is known when the graph is built, ``None``
elsewhere), since ``infer_types`` sees only types.
"""

# ruff: noqa: F401 (the Op classes and shape helpers are this namespace's too)
from rewritekit.tensor.joining import *  # noqa: F403
from rewritekit.tensor.joining import Concatenate
from rewritekit.tensor.joining import __all__ as _joining
from rewritekit.tensor.layout import *  # noqa: F403
from rewritekit.tensor.layout import BroadcastTo, ExpandDims, Reshape, Squeeze, Transpose
from rewritekit.tensor.layout import __all__ as _layout
from rewritekit.tensor.shape_vectors import *  # noqa: F403
from rewritekit.tensor.shape_vectors import (
    MakeVector,
    Shape,
    ShapeI,
    as_shape_vector,
    check_nonnegative,
    static_shape_of,
)
from rewritekit.tensor.shape_vectors import __all__ as _shape_vectors
from rewritekit.tensor.sharding import *  # noqa: F403
from rewritekit.tensor.sharding import Shard
from rewritekit.tensor.sharding import __all__ as _sharding
from rewritekit.tensor.specify import *  # noqa: F403
from rewritekit.tensor.specify import SpecifyShape
from rewritekit.tensor.specify import __all__ as _specify

__all__ = sorted([*_joining, *_layout, *_sharding, *_shape_vectors, *_specify])
