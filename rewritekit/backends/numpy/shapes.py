"""NumPy implementations of the shape Ops (``rewritekit.tensor.shapes``)."""

import numpy as np

from rewritekit.backends.common import arrays, register
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.tensor import shapes as sh


def _make_vector(*scalars: np.ndarray) -> np.ndarray:
    return np.array([int(s) for s in scalars], dtype=np.int64).reshape(-1)


# NumPy's MakeVector reads its concrete scalars as Python ints
# a sharding constraint is the identity on one CPU
register(
    numpy_funcify,
    arrays.shapes(np)
    | {sh.MakeVector: lambda op, node: _make_vector, sh.Shard: lambda op, node: lambda x: x},
)
