"""The arguments and results of a compiled function: each positional argument checked and
cast against its input Var (``InputSpec``, an error naming the input), and pytrees, as
``jax.jit`` takes them: inputs and outputs may be nested tuples, lists and dicts of Vars
(and ``None``); a call takes and returns the same structures (``Signature``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError
from rewritekit.ir import Var, as_var
from rewritekit.ir.pytree import TreeDef, flatten, leaf_paths, unflatten

__all__ = ["InputSpec", "Signature", "checker"]

_SAFE_KINDS = {  # which kinds a Python scalar (weakly typed) may become
    bool: "biufc",
    int: "iufc",
    float: "fc",
    complex: "c",
}


class InputSpec:
    """What one positional argument must look like, precomputed for fast checks."""

    __slots__ = ("dtype", "exact", "label", "ndim", "static", "var")

    def __init__(self, var: Var, position: int, path: str | None = None) -> None:
        self.var = var
        self.dtype = np.dtype(var.dtype)
        self.ndim = var.ndim
        self.static = tuple((a, n) for a, n in enumerate(var.type.shape) if n is not None)
        # a fully static shape is checked on the fast path with one tuple comparison
        self.exact = var.type.shape if len(self.static) == self.ndim else None
        name = f"'{var.name}'" if var.name else "<unnamed>"
        where = f"argument {path}" if path else f"position {position}"
        self.label = f"input {name} ({where})"

    def check(self, value: Any) -> Any:
        """``value`` cast to this input's dtype, or an error naming the input."""
        try:  # the fast path: an array (NumPy, JAX) of exactly this dtype and shape
            if value.dtype is self.dtype:
                if self.exact is None:
                    if value.ndim == self.ndim and not self.static:
                        return value
                elif value.shape == self.exact:
                    return value
        except AttributeError:
            pass
        return self._check(value)

    def _check(self, value: Any) -> Any:
        dtype = getattr(value, "dtype", None)
        if dtype is not None and str(dtype).startswith("key<"):  # a typed JAX key
            import jax  # the value is a JAX array: jax is loaded

            value = jax.random.key_data(value)  # its raw uint32 data (threefry: uint32[2])
            dtype = value.dtype
        if dtype is None or not hasattr(value, "shape"):
            value = self._from_python(value)
        elif dtype != self.dtype:
            if not np.can_cast(dtype, self.dtype, "safe"):
                raise DTypeError(
                    f"{self.label}: cannot safely cast {np.dtype(dtype).name} to "
                    f"{self.dtype.name}; cast the argument yourself (.astype('{self.dtype.name}'))"
                )
            # Cast on the host: a backend array type (JAX without x64) might not hold it.
            value = np.asarray(value).astype(self.dtype)
        shape = value.shape
        if len(shape) != self.ndim:
            raise ValueError(
                f"{self.label}: expected {self.ndim} dimensions ({self.var.type}), "
                f"got an array of shape {tuple(shape)}"
            )
        for axis, length in self.static:
            if shape[axis] != length:
                raise ValueError(
                    f"{self.label}: expected shape {_shape_text(self.var)}, "
                    f"got {tuple(shape)} (axis {axis} has length {shape[axis]})"
                )
        return value

    def _from_python(self, value: Any) -> np.ndarray:
        if isinstance(value, (bool, int, float, complex)):
            kinds = _SAFE_KINDS.get(type(value), "biufc")
        else:
            try:
                probe = np.asarray(value)
            except (TypeError, ValueError) as exc:
                raise GraphTypeError(
                    f"{self.label}: cannot use {type(value).__name__}: {exc}"
                ) from None
            if probe.dtype.kind not in "biufc":
                raise GraphTypeError(
                    f"{self.label}: expected numbers, got {type(value).__name__} of "
                    f"dtype {probe.dtype}"
                )
            kinds = {"b": "biufc", "i": "iufc", "u": "iufc", "f": "fc", "c": "c"}[probe.dtype.kind]
            value = probe if probe.dtype.kind != "i" else value  # Python ints stay weak
        if self.dtype.kind not in kinds:
            raise DTypeError(
                f"{self.label}: cannot safely cast {type(value).__name__} to {self.dtype.name}"
            )
        try:
            return np.asarray(value, dtype=self.dtype)
        except OverflowError as exc:
            raise DTypeError(f"{self.label}: {exc}") from None


def checker(specs: list[InputSpec]) -> Any:
    """``(*args) -> checked args`` for exactly ``len(specs)`` arguments, raising
    ``TypeError`` for another count: the per-call cost of argument checking is paid here
    (a one-input function lets the call itself count its arguments)."""
    if len(specs) == 1:
        check = specs[0].check
        return lambda value: (check(value),)
    count = len(specs)

    def check_all(*args: Any) -> list[Any]:
        if len(args) != count:
            raise TypeError("wrong number of arguments")  # check_arguments names them
        return list(map(InputSpec.check, specs, args))

    return check_all


def _shape_text(var: Var) -> str:
    return "(" + ", ".join("?" if n is None else str(n) for n in var.type.shape) + ")"


class Signature:
    """The pytrees of a function's inputs and outputs.

    ``inputs`` is a sequence of Vars or of pytrees of Vars (one per positional argument);
    ``outputs`` a Var, a list/tuple of Vars (the call returns a list), or any pytree of
    Vars and ``None`` (the call returns the same structure). ``flat_inputs`` and
    ``flat_outputs`` are what the graph is compiled from; ``args`` flattens a call's
    arguments and ``results`` rebuilds its results.
    """

    __slots__ = ("flat_inputs", "flat_outputs", "in_tree", "out_tree", "paths", "single")

    def __init__(self, inputs: Sequence[Any], outputs: Any) -> None:
        if isinstance(inputs, Var) or not isinstance(inputs, Sequence):
            raise GraphTypeError("function: inputs must be a list of Vars (or of pytrees of Vars)")
        self.in_tree: TreeDef | None = None
        self.paths: list[str | None] = [None] * len(inputs)
        if all(isinstance(v, Var) for v in inputs):
            self.flat_inputs = list(inputs)
        else:
            self.flat_inputs, self.in_tree = flatten(list(inputs))
            # "1['w1']": the argument's position, then the path inside it
            self.paths = [re.sub(r"^\[(\d+)\]", r"\1", p) for p in leaf_paths(self.in_tree)]
            for leaf, path in zip(self.flat_inputs, self.paths, strict=True):
                if not isinstance(leaf, Var):
                    raise GraphTypeError(
                        f"function: input {path} must be a Var, got {type(leaf).__name__}"
                    )
        self.single = isinstance(outputs, Var) or not isinstance(outputs, (list, tuple, dict))
        self.out_tree: TreeDef | None = None
        if self.single:
            leaves, paths = [outputs], ["0"]
        elif isinstance(outputs, (list, tuple)) and not any(_is_node(o) for o in outputs):
            leaves, paths = list(outputs), [str(i) for i in range(len(outputs))]
        else:
            leaves, self.out_tree = flatten(outputs)
            paths = leaf_paths(self.out_tree)
        self.flat_outputs = [
            as_var(o, context=f"function: output {p}") for o, p in zip(leaves, paths, strict=True)
        ]

    def specs(self) -> list[InputSpec]:
        """One argument check per graph input."""
        return [
            InputSpec(v, i, path)
            for i, (v, path) in enumerate(zip(self.flat_inputs, self.paths, strict=True))
        ]

    def args(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """A call's arguments flattened to one per graph input, following the inputs'
        structure (a leaf takes any value, a list of numbers too)."""
        tree = self.in_tree
        if tree is None:
            return args
        if len(args) != len(tree.children):
            raise TypeError(f"function takes {len(tree.children)} arguments, got {len(args)}")
        leaves: list[Any] = []
        for position, (child, value) in enumerate(zip(tree.children, args, strict=True)):
            _flatten_as(child, value, str(position), leaves)
        return tuple(leaves)

    def per_leaf(self, option: Any, where: str) -> Any:
        """A ``jax.jit`` option given per argument (``"in"``) or per output (``"out"``), as
        ``jax.jit`` takes it for pytrees (a prefix of the structure: one entry for a whole
        subtree, or the subtree's own structure), as one entry per graph input or output."""
        tree = self.in_tree if where == "in" else self.out_tree
        if tree is None or not isinstance(option, (list, tuple, dict)):
            return option
        entries: list[Any] = []
        _expand(tree, option, f"{where}_shardings", entries)
        return tuple(entries)

    def donated(self, argnums: Any) -> Any:
        """``donate_argnums`` of arguments as the positions of their graph inputs."""
        tree = self.in_tree
        if tree is None:
            return argnums
        positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        starts = [0]
        for child in tree.children:
            starts.append(starts[-1] + child.num_leaves)
        flat: list[int] = []
        for p in positions:
            if not 0 <= p < len(tree.children):
                raise GraphTypeError(f"function: donate_argnums {p} is not an argument position")
            flat.extend(range(starts[p], starts[p + 1]))
        return tuple(flat)

    def results(self, values: list[Any]) -> Any:
        """The outputs' values in the outputs' structure."""
        if self.single:
            return values[0]
        if self.out_tree is None:
            return values
        return unflatten(self.out_tree, values)


def _flatten_as(tree: TreeDef, value: Any, path: str, leaves: list[Any]) -> None:
    kind = tree.kind
    if kind == "leaf":
        leaves.append(value)
        return
    if kind == "none":
        if value is not None:
            raise TypeError(f"function: argument {path} must be None, got {type(value).__name__}")
        return
    if kind == "dict":
        if not isinstance(value, dict) or set(value) != set(tree.keys):
            got = sorted(value, key=repr) if isinstance(value, dict) else type(value).__name__
            raise TypeError(
                f"function: argument {path} must be a dict with keys {list(tree.keys)}, got {got}"
            )
        for key, child in zip(tree.keys, tree.children, strict=True):
            _flatten_as(child, value[key], f"{path}[{key!r}]", leaves)
        return
    if not isinstance(value, (list, tuple)) or len(value) != len(tree.children):
        got = f"{len(value)} items" if isinstance(value, (list, tuple)) else type(value).__name__
        raise TypeError(
            f"function: argument {path} must be a {kind} of {len(tree.children)} items, got {got}"
        )
    for i, (child, item) in enumerate(zip(tree.children, value, strict=True)):
        _flatten_as(child, item, f"{path}[{i}]", leaves)


def _expand(tree: TreeDef, option: Any, name: str, entries: list[Any]) -> None:
    if tree.kind == "leaf" or not isinstance(option, (list, tuple, dict)):
        entries.extend([option] * tree.num_leaves)
        return
    if tree.kind == "dict":
        if not isinstance(option, dict) or set(option) != set(tree.keys):
            raise GraphTypeError(
                f"function: {name} does not match a dict of keys {list(tree.keys)}"
            )
        items = [option[k] for k in tree.keys]
    else:
        items = list(option.values()) if isinstance(option, dict) else list(option)
    if len(items) != len(tree.children):
        raise GraphTypeError(
            f"function: {name} has {len(items)} entries for {len(tree.children)} in the structure"
        )
    for child, item in zip(tree.children, items, strict=True):
        _expand(child, item, name, entries)


def _is_node(value: Any) -> bool:
    return value is None or isinstance(value, (list, tuple, dict))
