"""Packing value variables into one flat vector, as samplers and optimizers want."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Var, replace, short_name
from rewritekit.ir.types import result_dtype

__all__ = ["Packing", "flatten_values"]


class Packing:
    """Value variables laid end to end in one float vector ``flat`` (C order each).

    Attributes:
        values: the value variables, in order.
        names: their names.
        shapes: their static shapes.
        flat: the vector Var (named ``name``) that ``substitute`` puts in their place.
        size: its length.

    Example:
        >>> mu, theta = rt.scalar("mu"), rt.tensor("theta", shape=(2,))
        >>> packing = flatten_values([mu, theta])
        >>> packing.size, packing.pack({"mu": 1.0, "theta": [2.0, 3.0]})
        (3, array([1., 2., 3.]))
        >>> packing.unpack(np.array([1.0, 2.0, 3.0]))["theta"]
        array([2., 3.])
    """

    def __init__(self, values: Sequence[Var], name: str) -> None:
        self.values = tuple(values)
        self.names = tuple(v.name for v in self.values)
        self.shapes = tuple(tuple(int(d) for d in v.type.shape) for v in self.values)
        self._sizes = [math.prod(s) for s in self.shapes]
        self._offsets = np.cumsum([0, *self._sizes]).tolist()
        self.size = int(self._offsets[-1])
        self.dtype = result_dtype(*(v.type for v in self.values))
        self.flat = rt.tensor(name, shape=(self.size,), dtype=self.dtype)

    def pieces(self) -> dict[Var, Var]:
        """``{value: its slice of flat, reshaped (and cast to its dtype)}``."""
        out = {}
        for value, shape, start, stop in zip(
            self.values, self.shapes, self._offsets, self._offsets[1:], strict=False
        ):
            piece = rt.reshape(self.flat[start:stop], shape)
            out[value] = piece if value.dtype == self.dtype else rt.cast(piece, value.dtype)
        return out

    def substitute(self, graph: Any) -> Any:
        """``graph`` (a Var or a list of Vars) with each value variable replaced by its
        piece of ``flat``."""
        return replace(graph, self.pieces())

    def pack(self, arrays: Mapping[Any, Any]) -> np.ndarray:
        """One flat array from ``{name or value Var: array}`` (every value must be given).

        Arrays may carry the same leading batch axes (e.g. chains), kept in front.
        """
        parts, batch = [], None
        by_name = {(k.name if isinstance(k, Var) else k): a for k, a in arrays.items()}
        for name, shape in zip(self.names, self.shapes, strict=True):
            found = by_name.get(name)
            if found is None:
                raise GraphTypeError(f"pack: no array for the value {name!r}")
            array = np.asarray(found, dtype=self.dtype)
            lead = array.shape[: array.ndim - len(shape)]
            if array.shape[array.ndim - len(shape) :] != shape or (batch not in (None, lead)):
                raise ShapeError(
                    f"pack: the array for {name!r} has shape {array.shape}; expected "
                    f"{shape} after the batch axes {batch or lead}"
                )
            batch = lead
            parts.append(array.reshape((*lead, -1)))
        return np.concatenate(parts, axis=-1)

    def unpack(self, array: Any) -> dict[str, np.ndarray]:
        """``{name: array}`` from a flat array; leading axes (chains, draws) are kept."""
        array = np.asarray(array)
        if array.ndim == 0 or array.shape[-1] != self.size:
            raise ShapeError(
                f"unpack: expected an array whose last axis has length {self.size}, got "
                f"shape {array.shape}"
            )
        lead = array.shape[:-1]
        return {
            name: array[..., start:stop].reshape(lead + shape)
            for name, shape, start, stop in zip(
                self.names, self.shapes, self._offsets, self._offsets[1:], strict=False
            )
        }


def flatten_values(values: Sequence[Var], name: str = "flat") -> Packing:
    """Lay value variables end to end in one float vector.

    Args:
        values: named float value Vars with static shapes, in the order wanted.
        name: the name of the flat vector Var.

    Raises:
        GraphTypeError: a value is not an input Var, not float, unnamed, or repeated.
        ShapeError: a value's shape is not static.
    """
    values = list(values)
    if not values:
        raise GraphTypeError("flatten_values: give at least one value variable")
    seen: set[str] = set()
    for value in values:
        if not isinstance(value, Var) or value.owner is not None or value.type.kind != "f":
            raise GraphTypeError(
                f"flatten_values: {value!r} must be a float input Var (a value variable)"
            )
        if not value.name or value.name in seen:
            raise GraphTypeError(
                f"flatten_values: value variables need distinct names, got {value!r}"
            )
        if None in value.type.shape:
            raise ShapeError(
                f"flatten_values: the value {short_name(value)} has shape {value.type}; "
                "give it a static shape (rt.tensor(name, shape=...))"
            )
        seen.add(value.name)
    return Packing(values, name)
