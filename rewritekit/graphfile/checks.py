"""Checks of untrusted JSON values, each naming its place in the file, and the decoders of
the parameter tags that hold no other values (``{"int": 3}``, ``{"float": "0.5"}``, ...)."""

from __future__ import annotations

import base64
import binascii
import json
import math
from typing import Any

import numpy as np

from rewritekit.errors import GraphFileError
from rewritekit.ir import SUPPORTED_DTYPES
from rewritekit.random.composite import BUILTIN
from rewritekit.tensor.custom_random import CustomSpec

__all__ = [
    "SCALAR_TAGS",
    "brief",
    "check",
    "decode_array",
    "dtype_name",
    "field",
    "index_into",
    "is_count",
]


def brief(value: Any) -> str:
    """A JSON value as an error message shows it, cut to 60 characters."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check(value: Any, kind: Any, place: str) -> Any:
    """``value`` if it is of ``kind`` (a bool is not an int), else an error at ``place``."""
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        names = " or ".join(_JSON_NAMES[k] for k in kinds)
        raise GraphFileError(f"{place}: expected {names}, got {brief(value)}")
    return value


_JSON_NAMES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "an int",
    bool: "a bool",
    type(None): "null",
}


def field(obj: Any, key: str, kind: type, place: str) -> Any:
    """The field ``key`` of the JSON object ``obj`` at ``place``, of ``kind``."""
    check(obj, dict, place or "file")
    where = f"{place}.{key}" if place else key
    if key not in obj:
        raise GraphFileError(f"{where}: missing")
    return check(obj[key], kind, where)


def is_count(value: Any) -> bool:
    """True for an int >= 0 (not a bool)."""
    return type(value) is int and value >= 0


def index_into(value: Any, size: int, place: str, table: str) -> int:
    """``value`` if it is an index into ``table`` of ``size`` entries."""
    if not is_count(value) or value >= size:
        valid = f"0 to {size - 1}" if size else "it is empty"
        raise GraphFileError(
            f"{place}: expected an index into {table} ({valid}), got {brief(value)}"
        )
    return value


def dtype_name(name: str, place: str) -> str:
    """``name`` if it is a dtype rewritekit computes with (never object, void or str)."""
    if name not in SUPPORTED_DTYPES:
        raise GraphFileError(
            f"{place}: {brief(name)} is not a dtype of rewritekit "
            f"(one of {', '.join(sorted(SUPPORTED_DTYPES))})"
        )
    return name


def decode_array(text: str, dtype: str, shape: list[int], place: str) -> np.ndarray:
    """The array in base64 ``text``: raw little-endian bytes, checked against dtype and shape
    before they are decoded."""
    layout = np.dtype(dtype).newbyteorder("<")
    expected = math.prod(shape) * layout.itemsize
    if len(text) != 4 * -(-expected // 3):
        raise GraphFileError(
            f"{place}: {len(text)} base64 characters, but {dtype} of shape {tuple(shape)} "
            f"takes {expected} bytes ({4 * -(-expected // 3)} characters)"
        )
    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise GraphFileError(f"{place}: not base64: {exc}") from None
    if len(raw) != expected:
        raise GraphFileError(
            f"{place}: {len(raw)} bytes, but {dtype} of shape {tuple(shape)} takes {expected}"
        )
    if dtype == "bool" and raw.strip(b"\x00\x01"):
        raise GraphFileError(f"{place}: bool data holds bytes other than 0 and 1")
    try:
        return np.frombuffer(raw, dtype=layout).reshape(shape)
    except (ValueError, OverflowError) as exc:  # a length past NumPy's limits
        raise GraphFileError(f"{place}: {exc}") from None


def _float(body: Any, place: str) -> float:
    text = check(body, str, place)
    try:
        if len(text) > 40:
            raise ValueError(text[:40])
        return float(text)
    except ValueError:
        raise GraphFileError(
            f"{place}: expected a float's text such as '0.5', got {brief(body)}"
        ) from None


def _complex(body: Any, place: str) -> complex:
    parts = check(body, list, place)
    if len(parts) != 2:
        raise GraphFileError(f"{place}: expected [real, imag], got {brief(body)}")
    return complex(_float(parts[0], f"{place}[0]"), _float(parts[1], f"{place}[1]"))


def _null(value: Any) -> Any:
    def decode(body: Any, place: str) -> Any:
        if body is not None:
            raise GraphFileError(f"{place}: expected null, got {brief(body)}")
        return value

    return decode


def _scalar(body: Any, place: str) -> np.generic:
    dtype = dtype_name(field(body, "dtype", str, place), f"{place}.dtype")
    return decode_array(field(body, "data", str, place), dtype, [], f"{place}.data")[()].astype(
        dtype
    )


def _composite(body: Any, place: str) -> CustomSpec:
    spec = BUILTIN.get(check(body, str, place))
    if spec is None:
        raise GraphFileError(
            f"{place}: unknown composite distribution {brief(body)} "
            f"(the built-in ones: {', '.join(sorted(BUILTIN))})"
        )
    return spec


SCALAR_TAGS = {
    "int": lambda body, place: check(body, int, place),
    "bool": lambda body, place: check(body, bool, place),
    "str": lambda body, place: check(body, str, place),
    "float": _float,
    "complex": _complex,
    "none": _null(None),
    "ellipsis": _null(Ellipsis),
    "dtype": lambda body, place: np.dtype(dtype_name(check(body, str, place), place)),
    "scalar": _scalar,
    "composite": _composite,
}
