"""Writing graph files: ``dumps`` and ``save`` (the format is in ``rewritekit.graphfile``)."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import GraphFileError, GraphTypeError
from rewritekit.graphfile.registry import FORMAT, MAX_GRAPH_DEPTH, MAX_NESTING, NAMES, VERSION
from rewritekit.ir import SUPPORTED_DTYPES, Constant, Op, TensorType, Var, toposort
from rewritekit.ir.inner import InnerGraph
from rewritekit.ir.traversal import graph_inputs
from rewritekit.random.composite import BUILTIN
from rewritekit.tensor.custom_random import CustomSpec

__all__ = ["dumps", "save"]

_KINDS = (
    "ints, floats, complex numbers, bools, strings, None, Ellipsis, tuples, dtypes, NumPy "
    "scalars, built-in composite distributions and inner graphs"
)


def dumps(outputs: Var | Sequence[Var], *, inputs: Sequence[Var] | None = None) -> str:
    """The graph of ``outputs`` as the text of a graph file (module docstring).

    Args:
        outputs: a Var, or a list or tuple of Vars; ``load`` gives back the same structure.
        inputs: the graph inputs in the order the file lists them (``load(..., inputs=)``
            binds by this order); by default every input the outputs read, in order of
            first use.

    Raises:
        GraphFileError: a node cannot be stored (an Op class that is not registered, a
            parameter that is a Python callable or another object a file cannot hold:
            a user's ``rr.custom`` distribution, an imported JAX equation), naming it.

    Example:
        >>> x = rt.vector("x")
        >>> (x2,), y = rk.loads(rk.dumps(rt.exp(x)))
        >>> y.owner.op, x2.name
        (Exp, 'x')
    """
    structure, outs = _flatten(outputs)
    leaves = _inputs_to_save(outs, inputs)
    writer = _Writer()
    refs: dict[Var, list[Any]] = {v: ["in", k] for k, v in enumerate(leaves)}
    nodes, _ = writer.nodes(outs, refs, "")
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "structure": structure,
        "inputs": [{"name": v.name, "type": writer.type(v.type)} for v in leaves],
        "outputs": [writer.ref(v, refs, "outputs") for v in outs],
        "types": writer.types,
        "constants": writer.constants,
        "ops": writer.ops,
        "nodes": nodes,
    }
    return json.dumps(doc, separators=(",", ":"), allow_nan=False)


def save(
    outputs: Var | Sequence[Var],
    path: str | os.PathLike[str],
    *,
    inputs: Sequence[Var] | None = None,
) -> None:
    """Write the graph of ``outputs`` to the file ``path`` (UTF-8 JSON; see ``dumps``)."""
    text = dumps(outputs, inputs=inputs)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _flatten(outputs: Any) -> tuple[str, list[Var]]:
    if isinstance(outputs, Var):
        return "var", [outputs]
    if type(outputs) in (list, tuple) and all(isinstance(v, Var) for v in outputs):
        return type(outputs).__name__, list(outputs)
    raise GraphTypeError(f"save: outputs must be a Var or a list or tuple of Vars, got {outputs!r}")


def _inputs_to_save(outputs: list[Var], given: Sequence[Var] | None) -> list[Var]:
    found = graph_inputs(outputs)
    if given is None:
        return found
    given = list(given)
    for k, v in enumerate(given):
        if not isinstance(v, Var) or v.owner is not None or isinstance(v, Constant):
            raise GraphTypeError(f"save: inputs[{k}] must be a graph input Var, got {v!r}")
    if len(set(given)) != len(given):
        raise GraphTypeError("save: inputs lists a Var twice")
    missing = [v for v in found if v not in set(given)]
    if missing:
        shown = ", ".join(repr(v) for v in missing)
        raise GraphTypeError(f"save: the outputs read {shown}, which inputs does not list")
    return given


class _Writer:
    """The tables of a file being written: types, constants and ops, each stored once."""

    def __init__(self) -> None:
        self.types: list[dict[str, Any]] = []
        self.constants: list[dict[str, Any]] = []
        self.ops: list[dict[str, Any]] = []
        self._types: dict[TensorType, int] = {}
        self._constants: dict[Constant, int] = {}
        self._ops: dict[Op, tuple[int, int]] = {}  # op -> (index, inner-graph depth)

    def type(self, t: TensorType) -> int:
        found = self._types.get(t)
        if found is None:
            found = self._types[t] = len(self.types)
            self.types.append({"dtype": t.dtype, "shape": list(t.shape)})
        return found

    def constant(self, c: Constant) -> int:
        found = self._constants.get(c)
        if found is None:
            found = self._constants[c] = len(self.constants)
            data = np.ascontiguousarray(c.data, dtype=c.data.dtype.newbyteorder("<"))
            self.constants.append(
                {
                    "dtype": c.dtype,
                    "shape": list(c.data.shape),
                    "name": c.name,
                    "data": base64.b64encode(data.tobytes()).decode("ascii"),
                }
            )
        return found

    def ref(self, v: Var, refs: dict[Var, list[Any]], where: str) -> list[Any]:
        found = refs.get(v)
        if found is not None:
            return found
        if isinstance(v, Constant):
            return ["const", self.constant(v)]
        raise GraphFileError(f"cannot save {where}: it reads {v!r}, a value from outside its graph")

    def nodes(
        self, outputs: Sequence[Var], refs: dict[Var, list[Any]], place: str
    ) -> tuple[list[dict[str, Any]], int]:
        """The node entries of the graph of ``outputs`` and the deepest inner graph in it."""
        nodes: list[dict[str, Any]] = []
        depth = 0
        for node in toposort(list(outputs)):
            where = f"{place}nodes[{len(nodes)}] ({node.op})"
            inputs = [self.ref(v, refs, where) for v in node.inputs]
            index, inner = self.op(node.op, where)
            depth = max(depth, inner)
            k = len(nodes)
            for j, out in enumerate(node.outputs):
                refs[out] = ["node", k] if j == 0 else ["node", k, j]
            types = [self.type(out.type) for out in node.outputs]
            nodes.append({"op": index, "inputs": inputs, "types": types})
        return nodes, depth

    def op(self, op: Op, where: str) -> tuple[int, int]:
        found = self._ops.get(op)
        if found is not None:
            return found
        cls = type(op)
        params, depth = {}, 0
        for p in cls.__props__:
            params[p], inner = self.param(getattr(op, p), f"{where}: parameter {p!r}", 0)
            depth = max(depth, inner)
        name = NAMES.get(cls)
        if name is None:
            raise GraphFileError(
                f"cannot save {where}: its Op class {cls.__module__}.{cls.__qualname__} is not "
                "registered for graph files; call rk.register_op on it (before loading too)"
            )
        found = self._ops[op] = (len(self.ops), depth)
        self.ops.append({"name": name, "params": params})
        return found

    def param(self, value: Any, where: str, nesting: int) -> tuple[dict[str, Any], int]:
        """The tagged value and the depth of the inner graphs inside it."""
        kind = type(value)
        if kind in _SIMPLE:
            return {_SIMPLE[kind]: value}, 0
        if kind is float:
            return {"float": repr(value)}, 0
        if kind is complex:
            return {"complex": [repr(value.real), repr(value.imag)]}, 0
        if value is None or value is Ellipsis:
            return {"none" if value is None else "ellipsis": None}, 0
        if kind is tuple:
            if nesting >= MAX_NESTING:
                raise GraphFileError(f"cannot save {where}: tuples nested over {MAX_NESTING} deep")
            items = [self.param(v, where, nesting + 1) for v in value]
            return {"tuple": [v for v, _ in items]}, max((d for _, d in items), default=0)
        if isinstance(value, np.dtype) and value.name in SUPPORTED_DTYPES:
            return {"dtype": value.name}, 0
        if isinstance(value, np.generic) and value.dtype.name in SUPPORTED_DTYPES:
            data = np.asarray(value, dtype=value.dtype.newbyteorder("<")).tobytes()
            return {"scalar": {"dtype": value.dtype.name, "data": _b64(data)}}, 0
        if kind is InnerGraph:
            return self.graph(value, where)
        if kind is CustomSpec:
            return self.composite(value, where), 0
        what = (
            "a Python callable" if callable(value) else f"a {kind.__module__}.{kind.__qualname__}"
        )
        raise GraphFileError(
            f"cannot save {where}: it is {what}, which a graph file cannot hold (it holds only "
            f"{_KINDS}); such a graph can only be pickled, for trusted use"
        )

    def graph(self, graph: InnerGraph, where: str) -> tuple[dict[str, Any], int]:
        refs: dict[Var, list[Any]] = {ph: ["arg", k] for k, ph in enumerate(graph.inputs)}
        nodes, depth = self.nodes(graph.outputs, refs, f"{where} > ")
        if depth >= MAX_GRAPH_DEPTH:
            raise GraphFileError(
                f"cannot save {where}: inner graphs nested over {MAX_GRAPH_DEPTH} deep"
            )
        body = {
            "inputs": [self.type(t) for t in graph.input_types],
            "nodes": nodes,
            "outputs": [self.ref(v, refs, where) for v in graph.outputs],
        }
        return {"graph": body}, depth + 1

    def composite(self, spec: CustomSpec, where: str) -> dict[str, Any]:
        if BUILTIN.get(spec.name) is spec:
            return {"composite": spec.name}
        code = " and its logp is a Python callable" if spec.logp or spec.logcdf else ""
        raise GraphFileError(
            f"cannot save {where}: it is the user distribution {spec.name!r} from rr.custom, "
            f"defined by code{code}; a graph file holds only the built-in composites "
            f"({', '.join(sorted(BUILTIN))}), by name. Such a graph can only be pickled"
        )


_SIMPLE = {bool: "bool", int: "int", str: "str"}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
