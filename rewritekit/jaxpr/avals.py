"""The types of jaxpr values as our TensorTypes. A typed PRNG key (``key<fry>[...]``) is
its raw data here (``uint32[..., 2]`` for threefry), as everywhere in rewritekit; the
``OpaqueJax`` nodes that take or give keys wrap and unwrap them around the primitive."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from rewritekit.ir import TensorType

__all__ = ["is_key", "key_impl", "tensor_type"]


def is_key(aval: Any) -> bool:
    """Whether ``aval`` is a typed PRNG key."""
    return getattr(aval.dtype, "_impl", None) is not None and hasattr(aval.dtype._impl, "key_shape")


def key_impl(aval: Any) -> Any:
    """The PRNG implementation of a key aval."""
    return aval.dtype._impl


def tensor_type(aval: Any) -> TensorType:
    """``aval``'s TensorType (a key's raw data for a key)."""
    if is_key(aval):
        return TensorType("uint32", (*aval.shape, *key_impl(aval).key_shape))
    return _plain_type(aval.dtype, tuple(aval.shape))


@functools.lru_cache(maxsize=4096)
def _plain_type(dtype: Any, shape: tuple[int, ...]) -> TensorType:
    return TensorType(np.dtype(dtype).name, shape)
