"""Graph files: graphs saved as JSON that loading reads as data and never runs.

``rk.save(outputs, path)`` / ``rk.dumps(outputs)`` write a graph; ``rk.load(path)`` /
``rk.loads(text)`` rebuild it, over new input Vars or over the Vars given as ``inputs=``
(then a graph built in this process comes back as the very same nodes: hash-consing holds
across a file). The document (format ``"rewritekit.graph"``, version 1) is one JSON object:

- ``inputs``: ``{"name", "type"}`` per graph input, by position; ``outputs``: references;
  ``structure``: ``"var"``, ``"list"`` or ``"tuple"`` (what was saved);
- ``types``: ``{"dtype", "shape"}`` (``null`` for a length known at run time);
- ``constants``: ``{"dtype", "shape", "name", "data"}``, ``data`` the base64 of the
  little-endian C-order bytes;
- ``ops``: ``{"name", "params"}``, ``name`` a registered name (``"tensor.arithmetic.Add"``)
  and ``params`` the ``__props__`` values, each tagged with its kind: ``{"int": 3}``,
  ``{"float": "0.5"}``, ``{"bool": true}``, ``{"str": "ab"}``, ``{"none": null}``,
  ``{"ellipsis": null}``, ``{"complex": ["1.0", "2.0"]}``, ``{"tuple": [...]}``,
  ``{"dtype": "float32"}``, ``{"scalar": {"dtype", "data"}}`` (a NumPy scalar),
  ``{"composite": "halfnormal"}`` (a built-in composite distribution) and ``{"graph": {...}}``
  (an inner graph: ``inputs``, the placeholders' types by position, ``nodes`` and
  ``outputs``; its nodes use the ops listed before the op that holds it);
- ``nodes``: ``{"op", "inputs", "types"}`` in topological order; an input is a reference
  ``["in", k]``, ``["const", k]``, ``["node", k]`` (``["node", k, j]`` for output ``j``)
  or, in an inner graph, ``["arg", k]`` (its placeholder ``k``).

Loading parses JSON, looks Op names up in a table of classes that are already imported
(the concrete Ops of ``rewritekit.tensor`` and those given to ``register_op``), calls
their constructors with the decoded values and ``infer_types`` on the nodes. It imports
nothing and calls nothing that the file names, and never unpickles or evaluates. Anything
else is a ``GraphFileError`` naming the place in the file (``ops[3].name``,
``constants[0].data``, ``nodes[12].inputs[1]``).
"""

from rewritekit.graphfile.reader import load, loads
from rewritekit.graphfile.registry import (
    FORMAT,
    MAX_GRAPH_DEPTH,
    MAX_NESTING,
    VERSION,
    LoadedGraph,
    register_op,
)
from rewritekit.graphfile.writer import dumps, save

__all__ = [
    "FORMAT",
    "MAX_GRAPH_DEPTH",
    "MAX_NESTING",
    "VERSION",
    "LoadedGraph",
    "dumps",
    "load",
    "loads",
    "register_op",
    "save",
]
