"""The NumPy backend: the reference semantics of every Op.

``numpy_funcify(op, node)`` returns the implementation of one node, a callable from input
values (NumPy arrays) to the output value (or a sequence of them for several outputs).
Register an implementation for your own Op with::

    @numpy_funcify.register(MyOp)
    def _(op, node):
        return lambda x: ...

Implementations of rewritekit's Ops live in the modules beside this one, one per family
of ``rewritekit.tensor``; the code they share with the JAX backend is written once over the
array module in ``rewritekit.backends.common``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rewritekit.backends.lowering import lower
from rewritekit.errors import RewritekitError
from rewritekit.ir import Apply, Op, Var
from rewritekit.tensor import OP_FAMILIES

__all__ = ["NUMPY_BACKEND", "NumpyBackend", "NumpyTypeMismatch", "numpy_funcify"]


@functools.singledispatch
def numpy_funcify(op: Op, node: Apply) -> Callable[..., Any]:
    """The NumPy implementation of ``node`` (dispatched on the Op's class)."""
    raise NotImplementedError(
        f"the numpy backend has no implementation for Op {type(op).__name__} ({op}); "
        "register one with @numpy_funcify.register"
    )


class NumpyTypeMismatch(RewritekitError, AssertionError):
    """A NumPy implementation returned a value whose dtype or shape contradicts its type."""


class NumpyBackend:
    """Runs graphs with NumPy and SciPy, node by node.

    Args:
        check_types: after each node, check that every value's dtype and shape agree with
            the node's declared type (slower; the tests use it to check ``infer_types``).
    """

    name = "numpy"

    def __init__(self, check_types: bool = False) -> None:
        self.check_types = check_types

    def compile(self, inputs: Sequence[Var], outputs: Sequence[Var]) -> Callable[..., list[Any]]:
        """A function of NumPy arrays returning the list of output arrays."""
        implement = self._checked if self.check_types else _implement
        run = lower(inputs, outputs, implement)
        leaves = [out.owner is None for out in outputs]

        def call(*args: Any) -> list[Any]:
            # An output must not share memory with the caller's arrays, the graph's constants
            # or another output: inputs, constants and views (reshape, transpose) are copied.
            values = run(*args)
            return [
                np.array(v, copy=True) if leaf else _owned(v)
                for v, leaf in zip(values, leaves, strict=True)
            ]

        return call

    @staticmethod
    def _checked(node: Apply) -> Callable[..., Any]:
        fn = _implement(node)
        expected = [out.type for out in node.outputs]

        def run(*args: Any) -> Any:
            value = fn(*args)
            values = [value] if len(expected) == 1 else list(value)
            for position, (v, t) in enumerate(zip(values, expected, strict=True)):
                v = np.asarray(v)
                ok_shape = v.ndim == t.ndim and all(
                    s is None or s == n for s, n in zip(t.shape, v.shape, strict=True)
                )
                if v.dtype.name != t.dtype or not ok_shape:
                    raise NumpyTypeMismatch(
                        f"{node.op}: output {position} is {v.dtype.name}{list(v.shape)} but "
                        f"its type is {t} (inputs {[np.shape(a) for a in args]})"
                    )
            return value

        return run


def _owned(value: Any) -> np.ndarray:
    array = np.asarray(value)
    return array if array.flags.owndata and array.flags.writeable else array.copy()


def _implement(node: Apply) -> Callable[..., Any]:
    return numpy_funcify(node.op, node)


NUMPY_BACKEND = NumpyBackend()

# The implementations register themselves on import; they need numpy_funcify defined above.
for _family in OP_FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")
