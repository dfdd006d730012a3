"""Implementations shared by the NumPy and JAX backends, written once over the array module.

The modules here hold, by theme, the implementations that are the same code in both
libraries over the array module ``xp`` (``numpy`` or ``jax.numpy``): ``elementwise``
(``elemwise``, ``special``), ``reductions`` (``reduction``, ``gradient``), ``arrays``
(``shapes``, ``creation``, ``subtensor``, ``sorting``, ``random``'s batch shapes) and
``algebra`` (``products``, ``linalg``). A function named for a family of
``rewritekit.tensor`` returns its table ``{Op class: (op, node) -> callable}`` over ``xp``;
its other arguments are the pieces where the libraries differ. Each backend's
``<family>.py`` registers that table with its own implementations, each saying in one line
how the libraries differ there. Nothing here imports jax: the JAX backend passes
``jax.numpy`` in when it loads its implementations.

Example:
    >>> import numpy as np
    >>> from rewritekit.backends.common import arrays
    >>> sorted(op_class.__name__ for op_class in arrays.sorting(np))
    ['Argsort', 'Sort']
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.errors import ShapeError
from rewritekit.ir import Apply, Op

__all__ = ["Table", "concrete", "quiet", "register", "static_ints"]

# Op class -> (op, node) -> the node's implementation, a callable of the input values
Table = dict[type[Op], Callable[[Any, Apply], Callable[..., Any]]]


def register(funcify: Any, table: Table) -> None:
    """Register every implementation of ``table`` on a backend's dispatcher ``funcify``."""
    for op_class, impl in table.items():
        funcify.register(op_class, impl)


def quiet(xp: Any) -> contextlib.AbstractContextManager[Any]:
    """NumPy's floating-point warnings off (JAX never warns): NaN and inf follow IEEE."""
    return np.errstate(all="ignore") if xp is np else contextlib.nullcontext()


def concrete(value: Any, name: str, what: str = "shape") -> np.ndarray:
    """``value`` as a NumPy array, or a ShapeError naming ``name`` if JAX traces it.

    Shapes are static in XLA: under ``jax.jit`` a length must come from constants or static
    shapes, never from a function input.

    Example:
        >>> concrete(np.int64(3), "arange", "stop")
        array(3)
    """
    try:
        return np.asarray(value)
    except TypeError:  # JAX's tracer conversion errors are TypeErrors
        raise ShapeError(
            f"{name}: the {what} must be known when the graph is compiled, but it depends on "
            "a traced value (a function input); compute it from static shapes or constants, "
            "or use the numpy backend"
        ) from None


def static_ints(value: Any, name: str, what: str = "shape") -> tuple[int, ...]:
    """A concrete integer vector (or scalar) as a tuple of Python ints (see ``concrete``).

    Example:
        >>> static_ints(np.array([2, 3]), "reshape")
        (2, 3)
    """
    return tuple(int(d) for d in concrete(value, name, what).reshape(-1))
