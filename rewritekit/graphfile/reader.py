"""Reading graph files: ``loads`` and ``load`` (the format is in ``rewritekit.graphfile``).

The reader decodes the parsed JSON table by table (types, constants, ops, inputs, nodes),
each entry only from entries before it, so every reference is checked against what is
built and no structure in the file can make it recurse without bound.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from rewritekit.errors import GraphFileError, GraphTypeError
from rewritekit.graphfile.checks import (
    SCALAR_TAGS,
    brief,
    check,
    decode_array,
    dtype_name,
    field,
    index_into,
    is_count,
)
from rewritekit.graphfile.registry import (
    CLASSES,
    FORMAT,
    MAX_GRAPH_DEPTH,
    MAX_NESTING,
    VERSION,
    LoadedGraph,
)
from rewritekit.ir import Constant, Op, TensorType, Var, apply_op
from rewritekit.ir.inner import InnerGraph, Placeholder

__all__ = ["load", "loads"]

_STRUCTURES = {"var": None, "list": list, "tuple": tuple}
_TABLES = {"in": "inputs", "arg": "placeholders", "const": "constants"}


def loads(text: str | bytes, *, inputs: Sequence[Var] | None = None) -> LoadedGraph:
    """The graph in the text of a graph file: ``(inputs, outputs)``.

    Args:
        text: what ``dumps`` wrote.
        inputs: Vars to build over, bound by position to the file's inputs (each of the
            same type); by default new Vars with the saved names and types. Given the
            Vars a graph of this process was saved over, the outputs are its very nodes.

    Raises:
        GraphFileError: the text is not a graph file this version reads (bad JSON, a
            missing or ill-typed field, an unknown Op name or tag, a node reading a later
            node, a constant whose bytes disagree with its dtype and shape, a type that
            the Op's ``infer_types`` rejects), naming the place; or ``inputs`` does not
            match the file's.

    Example:
        >>> x = rt.vector("x")
        >>> y = rt.log1p(rt.exp(x))
        >>> rk.loads(rk.dumps(y), inputs=[x]).outputs is y
        True
    """
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise GraphFileError("file: the JSON is nested too deeply to be a graph file") from None
    except (ValueError, TypeError) as exc:  # JSONDecodeError, bad UTF-8, a huge number
        raise GraphFileError(f"file: not valid JSON: {exc}") from None
    return _Reader(doc).read(inputs)


def load(path: str | os.PathLike[str], *, inputs: Sequence[Var] | None = None) -> LoadedGraph:
    """The graph saved in the file ``path`` (see ``loads``)."""
    with open(path, "rb") as handle:
        return loads(handle.read(), inputs=inputs)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class _Reader:
    """Decodes a parsed document, table by table; every check names its place."""

    def __init__(self, doc: Any) -> None:
        self.doc = check(doc, dict, "file")
        self.types: list[TensorType] = []
        self.constants: list[Constant] = []
        self.ops: list[Op] = []
        self.depths: list[int] = []  # per op, the depth of the inner graphs it holds

    def read(self, given: Sequence[Var] | None) -> LoadedGraph:
        doc = self.doc
        found = doc.get("format")
        if found != FORMAT:
            raise GraphFileError(f"format: expected {FORMAT!r}, got {found!r}")
        version = field(doc, "version", int, "")
        if version != VERSION:
            raise GraphFileError(
                f"version: the file has format version {version}; this rewritekit reads "
                f"version {VERSION} (save the graph again with a matching rewritekit)"
            )
        structure = field(doc, "structure", str, "")
        if structure not in _STRUCTURES:
            raise GraphFileError(
                f"structure: expected one of {list(_STRUCTURES)}, got {structure!r}"
            )
        for k, entry in enumerate(field(doc, "types", list, "")):
            self.types.append(self.type(entry, f"types[{k}]"))
        for k, entry in enumerate(field(doc, "constants", list, "")):
            self.constants.append(self.constant(entry, f"constants[{k}]"))
        for k, entry in enumerate(field(doc, "ops", list, "")):
            op, depth = self.op(entry, f"ops[{k}]")
            self.ops.append(op)
            self.depths.append(depth)
        inputs = self.inputs(field(doc, "inputs", list, ""), given)
        scope = _Scope(inputs=inputs)
        self.nodes(field(doc, "nodes", list, ""), scope, "")
        outs = [
            self.ref(r, scope, f"outputs[{k}]")
            for k, r in enumerate(field(doc, "outputs", list, ""))
        ]
        if structure == "var":
            if len(outs) != 1:
                raise GraphFileError(f"outputs: structure 'var' needs one output, got {len(outs)}")
            return LoadedGraph(inputs, outs[0])
        return LoadedGraph(inputs, _STRUCTURES[structure](outs))

    def type(self, entry: Any, place: str) -> TensorType:
        dtype = dtype_name(field(entry, "dtype", str, place), f"{place}.dtype")
        shape = field(entry, "shape", list, place)
        for k, n in enumerate(shape):
            if n is not None and not is_count(n):
                raise GraphFileError(
                    f"{place}.shape[{k}]: expected a length >= 0 or null, got {n!r}"
                )
        return TensorType(dtype, shape)

    def type_ref(self, value: Any, place: str) -> TensorType:
        return self.types[index_into(value, len(self.types), place, "types")]

    def constant(self, entry: Any, place: str) -> Constant:
        dtype = dtype_name(field(entry, "dtype", str, place), f"{place}.dtype")
        shape = field(entry, "shape", list, place)
        if not all(is_count(n) for n in shape):
            raise GraphFileError(f"{place}.shape: expected lengths >= 0, got {shape!r}")
        name = entry.get("name")
        if name is not None and not isinstance(name, str):
            raise GraphFileError(f"{place}.name: expected a string or null, got {name!r}")
        array = decode_array(field(entry, "data", str, place), dtype, shape, f"{place}.data")
        return Constant(array, dtype, name)

    def op(self, entry: Any, place: str) -> tuple[Op, int]:
        name = field(entry, "name", str, place)
        cls = CLASSES.get(name)
        if cls is None:
            raise GraphFileError(
                f"{place}.name: unknown Op {name!r}; a file may name only the Ops of "
                "rewritekit.tensor and those given to rk.register_op (loading imports nothing)"
            )
        params = field(entry, "params", dict, place)
        props = cls.__props__
        if set(params) != set(props):
            raise GraphFileError(
                f"{place}.params: {cls.__name__} takes the parameters {list(props)}, "
                f"the file gives {list(params)}"
            )
        values, depth = [], 0
        for p in props:
            value, inner = self.param(params[p], f"{place}.params.{p}", 0)
            values.append(value)
            depth = max(depth, inner)
        try:
            return cls(*values), depth
        except Exception as exc:  # the constructor's own checks of untrusted values
            raise GraphFileError(f"{place}.params: {cls.__name__} rejects them: {exc}") from exc

    def param(self, value: Any, place: str, nesting: int) -> tuple[Any, int]:
        """The decoded parameter and the depth of the inner graphs inside it."""
        if not isinstance(value, dict) or len(value) != 1:
            raise GraphFileError(f"{place}: expected an object with one tag, got {brief(value)}")
        ((tag, body),) = value.items()
        decode = SCALAR_TAGS.get(tag)
        if decode is not None:
            return decode(body, f"{place}.{tag}"), 0
        if tag == "tuple":
            if nesting >= MAX_NESTING:
                raise GraphFileError(f"{place}: tuples nested over {MAX_NESTING} deep")
            items = [
                self.param(v, f"{place}.tuple[{k}]", nesting + 1)
                for k, v in enumerate(check(body, list, f"{place}.tuple"))
            ]
            return tuple(v for v, _ in items), max((d for _, d in items), default=0)
        if tag == "graph":
            return self.graph(body, f"{place}.graph")
        raise GraphFileError(f"{place}: unknown tag {tag!r}")

    def graph(self, body: Any, place: str) -> tuple[InnerGraph, int]:
        types = field(body, "inputs", list, place)
        args = [
            Placeholder(k, self.type_ref(t, f"{place}.inputs[{k}]")) for k, t in enumerate(types)
        ]
        scope = _Scope(args=args)
        depth = self.nodes(field(body, "nodes", list, place), scope, f"{place}.")
        if depth >= MAX_GRAPH_DEPTH:
            raise GraphFileError(f"{place}: inner graphs nested over {MAX_GRAPH_DEPTH} deep")
        outs = [
            self.ref(r, scope, f"{place}.outputs[{k}]")
            for k, r in enumerate(field(body, "outputs", list, place))
        ]
        return InnerGraph(args, outs), depth + 1

    def inputs(self, entries: list[Any], given: Sequence[Var] | None) -> list[Var]:
        types = [
            self.type_ref(field(e, "type", int, f"inputs[{k}]"), f"inputs[{k}].type")
            for k, e in enumerate(entries)
        ]
        names = [
            check(e.get("name"), (str, type(None)), f"inputs[{k}].name")
            for k, e in enumerate(entries)
        ]
        if given is None:
            return [Var(t, n) for t, n in zip(types, names, strict=True)]
        given = list(given)
        if len(given) != len(types):
            raise GraphFileError(f"inputs: the file has {len(types)} inputs, {len(given)} given")
        for k, (v, t) in enumerate(zip(given, types, strict=True)):
            if not isinstance(v, Var):
                raise GraphTypeError(f"load: inputs[{k}] must be a Var, got {v!r}")
            if v.type is not t:
                raise GraphFileError(
                    f"inputs[{k}]: the file's input {names[k]!r} is {t}, the given Var is {v.type}"
                )
        return given

    def nodes(self, entries: list[Any], scope: _Scope, place: str) -> int:
        """Build the nodes into ``scope``; the depth of the inner graphs their ops hold."""
        depth = 0
        for k, entry in enumerate(entries):
            where = f"{place}nodes[{k}]"
            index = index_into(field(entry, "op", int, where), len(self.ops), f"{where}.op", "ops")
            op = self.ops[index]
            depth = max(depth, self.depths[index])
            refs = field(entry, "inputs", list, where)
            inputs = tuple(self.ref(r, scope, f"{where}.inputs[{i}]") for i, r in enumerate(refs))
            try:
                outs = apply_op(op, inputs)
            except Exception as exc:  # infer_types of untrusted inputs
                types = ", ".join(str(v.type) for v in inputs)
                raise GraphFileError(
                    f"{where}: {op} rejects inputs of types ({types}): {exc}"
                ) from exc
            types = field(entry, "types", list, where)
            stated = [self.type_ref(t, f"{where}.types[{j}]") for j, t in enumerate(types)]
            inferred = [v.type for v in outs]
            if stated != inferred:
                raise GraphFileError(
                    f"{where}.types: the file says {', '.join(map(str, stated))}, {op} gives "
                    f"{', '.join(map(str, inferred))}"
                )
            scope.nodes.append(outs)
        return depth

    def ref(self, ref: Any, scope: _Scope, place: str) -> Var:
        if not isinstance(ref, list) or not ref or not isinstance(ref[0], str):
            raise GraphFileError(
                f'{place}: expected a reference such as ["node", 3], got {brief(ref)}'
            )
        tag, *rest = ref
        table = {"in": scope.inputs, "arg": scope.args, "const": self.constants}.get(tag)
        if table is None and tag in ("in", "arg"):
            raise GraphFileError(
                f"{place}: {brief(ref)}: the file's inputs are read at its top level, the "
                'placeholders ["arg", k] inside an inner graph'
            )
        if table is not None and len(rest) == 1:
            return table[index_into(rest[0], len(table), place, _TABLES[tag])]
        if tag == "node" and len(rest) in (1, 2):
            k = rest[0]
            if is_count(k) and k >= len(scope.nodes):
                raise GraphFileError(
                    f"{place}: reads node {k}, which is not built before it (nodes must be in "
                    "topological order)"
                )
            outs = scope.nodes[index_into(k, len(scope.nodes), place, "nodes")]
            return outs[index_into(rest[1] if rest[1:] else 0, len(outs), place, "outputs")]
        raise GraphFileError(f"{place}: unknown reference {brief(ref)}")


class _Scope:
    """What references in one graph may read: the file's inputs (top level) or the
    placeholders (an inner graph), and the outputs of the nodes built so far."""

    def __init__(self, inputs: list[Var] | None = None, args: list[Var] | None = None) -> None:
        self.inputs, self.args = inputs, args
        self.nodes: list[tuple[Var, ...]] = []
