"""Backends: the registry, and the protocol a backend implements.

A backend turns a graph into a Python callable. The two built-in ones are ``"numpy"`` (the
reference semantics) and ``"jax"`` (a ``jax.jit``-compiled function); a third-party package
adds its own with ``register`` and needs no edit to rewritekit (see ``docs/backends.md``).

Example:
    >>> from rewritekit.backends import get_backend
    >>> get_backend("numpy").name
    'numpy'
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from rewritekit.ir import Var

__all__ = ["Backend", "available_backends", "get_backend", "register"]


@runtime_checkable
class Backend(Protocol):
    """What ``rk.function`` needs from a backend.

    ``compile`` gets the graph's input Vars and output Vars and returns a callable that
    takes one positional value per input (already checked and cast by ``rk.function``) and
    returns a list with one value per output. The callable may carry a ``jax_fn``
    attribute (a pure function of the same arguments), which ``rk.function`` exposes.
    """

    name: str

    def compile(
        self, inputs: Sequence[Var], outputs: Sequence[Var]
    ) -> Callable[..., list[Any]]: ...


_BUILTIN = {
    "numpy": "rewritekit.backends.numpy:NUMPY_BACKEND",
    "jax": "rewritekit.backends.jax:JAX_BACKEND",
}
_registry: dict[str, Backend] = {}
_lock = threading.Lock()


def register(name: str, backend: Backend) -> None:
    """Make ``backend`` available as ``rk.function(..., backend=name)``.

    Raises:
        TypeError: ``backend`` has no ``compile`` method or ``name``.
        ValueError: ``name`` is already taken by another backend.
    """
    if not isinstance(backend, Backend):
        raise TypeError(
            f"register: backend {backend!r} must have a `name` and a "
            "`compile(inputs, outputs)` method"
        )
    with _lock:
        current = _registry.get(name)
        if (current is not None and current is not backend) or (
            current is None and name in _BUILTIN
        ):
            raise ValueError(f"register: a backend named {name!r} is already registered")
        _registry[name] = backend


def get_backend(backend: str | Backend) -> Backend:
    """The backend registered as ``backend`` (a name), or ``backend`` itself.

    Raises:
        ValueError: no backend of that name; the message lists the known ones.
    """
    if not isinstance(backend, str):
        if isinstance(backend, Backend):
            return backend
        raise TypeError(f"backend must be a name or a Backend, got {type(backend).__name__}")
    found = _registry.get(backend)
    if found is not None:
        return found
    target = _BUILTIN.get(backend)
    if target is None:
        raise ValueError(
            f"unknown backend {backend!r}; available: {', '.join(available_backends())}"
        )
    module, attribute = target.split(":")
    found = getattr(importlib.import_module(module), attribute)
    with _lock:
        return _registry.setdefault(backend, found)


def available_backends() -> list[str]:
    """The names ``rk.function`` accepts for ``backend``."""
    return sorted(set(_BUILTIN) | set(_registry))
