"""NumPy implementations of the differentiation Ops (``rewritekit.tensor.gradient``)."""

from __future__ import annotations

import numpy as np

from rewritekit.backends.common import reductions, register
from rewritekit.backends.numpy import numpy_funcify

register(numpy_funcify, reductions.gradient(np))
