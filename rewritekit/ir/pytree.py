"""Pytrees as JAX has them: nested tuples, lists and dicts (and ``None``) of leaves.

``flatten(tree)`` gives the leaves in a fixed order (dict keys sorted, as JAX) and a
``TreeDef`` that ``unflatten`` fills back; ``paths(treedef)`` names each leaf as a user
reads it (``['w1']``, ``[0]``, ``.mean``), for error messages. Named tuples are nodes
too, by field, and come back as their own class. Leaves are anything that is not a
tuple, list, dict or None: Vars, arrays, numbers.

Example:
    >>> leaves, tree = flatten({"b": (1, 2), "a": None})
    >>> leaves
    [1, 2]
    >>> unflatten(tree, [3, 4])
    {'a': None, 'b': (3, 4)}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from rewritekit.errors import GraphTypeError

__all__ = ["TreeDef", "flatten", "leaf_paths", "unflatten"]


class TreeDef(NamedTuple):
    """The structure of a pytree: ``kind`` is ``"leaf"``, ``"none"``, ``"tuple"``,
    ``"list"``, ``"dict"`` or ``"namedtuple"``; ``keys`` the dict's sorted keys (for a
    named tuple, its class); ``children`` the subtrees."""

    kind: str
    keys: tuple[Any, ...] = ()
    children: tuple[TreeDef, ...] = ()

    @property
    def num_leaves(self) -> int:
        """How many leaves the structure holds."""
        if self.kind == "leaf":
            return 1
        return sum(child.num_leaves for child in self.children)


_LEAF = TreeDef("leaf")
_NONE = TreeDef("none")


def flatten(tree: Any) -> tuple[list[Any], TreeDef]:
    """The leaves of ``tree`` in order, and its structure."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> TreeDef:
    if tree is None:
        return _NONE
    if isinstance(tree, tuple):
        children = tuple(_flatten(t, leaves) for t in tree)
        if hasattr(tree, "_fields"):
            return TreeDef("namedtuple", (type(tree),), children)
        return TreeDef("tuple", (), children)
    if isinstance(tree, list):
        return TreeDef("list", (), tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, dict):
        try:
            keys = tuple(sorted(tree))
        except TypeError:
            raise GraphTypeError(
                f"pytree: dict keys must be sortable, got {list(tree)!r}"
            ) from None
        return TreeDef("dict", keys, tuple(_flatten(tree[k], leaves) for k in keys))
    leaves.append(tree)
    return _LEAF


def unflatten(treedef: TreeDef, leaves: Sequence[Any]) -> Any:
    """The pytree of structure ``treedef`` holding ``leaves`` in order."""
    items = iter(leaves)
    tree = _build(treedef, items)
    if next(items, _END) is not _END:
        raise GraphTypeError(f"pytree: more leaves than the structure holds ({treedef.num_leaves})")
    return tree


_END = object()


def _build(treedef: TreeDef, items: Iterator[Any]) -> Any:
    kind = treedef.kind
    if kind == "leaf":
        value = next(items, _END)
        if value is _END:
            raise GraphTypeError("pytree: fewer leaves than the structure holds")
        return value
    if kind == "none":
        return None
    children = [_build(child, items) for child in treedef.children]
    if kind == "tuple":
        return tuple(children)
    if kind == "namedtuple":
        return treedef.keys[0](*children)
    if kind == "list":
        return children
    return dict(zip(treedef.keys, children, strict=True))


def leaf_paths(treedef: TreeDef) -> list[str]:
    """How each leaf is reached, as indexing text: ``""`` for a bare leaf, ``[0]['w']``."""
    paths: list[str] = []
    _paths(treedef, "", paths)
    return paths


def _paths(treedef: TreeDef, prefix: str, paths: list[str]) -> None:
    if treedef.kind == "leaf":
        paths.append(prefix)
    elif treedef.kind == "dict":
        for key, child in zip(treedef.keys, treedef.children, strict=True):
            _paths(child, f"{prefix}[{key!r}]", paths)
    elif treedef.kind == "namedtuple":
        for field, child in zip(treedef.keys[0]._fields, treedef.children, strict=True):
            _paths(child, f"{prefix}.{field}", paths)
    else:
        for i, child in enumerate(treedef.children):
            _paths(child, f"{prefix}[{i}]", paths)
