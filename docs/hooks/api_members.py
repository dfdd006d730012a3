"""MkDocs hook: the API pages list every name of a module's ``__all__``, found at build time.

A line ``<!-- members: rewritekit.tensor.special -->`` below a level-2 heading of a page
under docs/api/ becomes one mkdocstrings entry per name the module exports, in its
``__all__`` order, so a function added to a family shows up without editing the page. A
function is documented where it is defined; an elementwise function such as ``rt.erf`` is
an instance of its Op class, whose docstring holds the definition and the domain, so the
entry shows that class under the function's name. A function made by a factory (the typed
constructors ``rt.dvector`` ...) is listed with its summary line, and a name for an object
already shown (``rt.absolute`` is ``rt.abs``) at the end of its section, with a link.
"""

from __future__ import annotations

import importlib
import inspect
import re
import types
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from rewritekit.ir import Op

_MARKER = re.compile(r"^<!-- members: ([\w.]+) -->$", flags=re.MULTILINE)
_NAMESPACES = {"rewritekit.tensor": "rt"}  # how the pages spell a module's prefix


def _prefix(module: str) -> str:
    """``rt.`` for ``rewritekit.tensor.special``, ``rt.linalg.`` for its namespaces."""
    package, _, family = module.rpartition(".")
    short = _NAMESPACES.get(package, package)
    namespaces = ("linalg", "fft", "lax", "nn")
    return f"{short}.{family}." if family in namespaces else f"{short}."


def _entry(obj: Any) -> tuple[str, str] | None:
    """The documented object's path, and its kind: ``"function"``, ``"op"`` (an Op class
    standing for a function) or ``"made"`` (a function made by a factory at import time,
    which the static analysis cannot see; listed with its summary line)."""
    if isinstance(obj, types.FunctionType):
        made = "<locals>" in inspect.unwrap(obj).__code__.co_qualname
        return f"{obj.__module__}.{obj.__qualname__}", "made" if made else "function"
    if isinstance(obj, Op):
        cls = type(obj)
        return f"{cls.__module__}.{cls.__qualname__}", "op"
    return None


def _members(module_name: str, shown: dict[str, str]) -> str:
    """The Markdown for one marker: an mkdocstrings block per new object, then the others."""
    module = importlib.import_module(module_name)
    prefix = _prefix(module_name)
    blocks: list[str] = []
    made: list[str] = []
    aliases: list[str] = []
    for name in module.__all__:
        obj = getattr(module, name)
        entry = _entry(obj)
        if entry is None:  # a namespace module (rt.linalg): it has its own section
            continue
        path, kind = entry
        if kind == "made":
            summary = (obj.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
            made.append(f"- `{prefix}{name}`: {summary}")
            continue
        if path in shown:
            aliases.append(f"- `{prefix}{name}` is [`{shown[path]}`][{path}]")
            continue
        shown[path] = f"{prefix}{name}"
        options = [f'heading: "{prefix}{name}"', f"toc_label: {prefix}{name}", "heading_level: 3"]
        if kind == "op":  # the Op's docstring; its methods are the IR's, not the user's
            options += ["members: false", "show_bases: false", "show_symbol_type_heading: false"]
            options += ["show_signature: false", "separate_signature: false"]
        blocks.append("\n".join([f"::: {path}", "    options:", *(f"      {o}" for o in options)]))
    if made:
        blocks.append("\n".join(made))
    if aliases:
        blocks.append("Other names:\n\n" + "\n".join(aliases))
    return "\n\n".join(blocks)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if not page.file.src_uri.startswith("api/"):
        return markdown
    shown: dict[str, str] = {}
    return _MARKER.sub(lambda match: _members(match[1], shown), markdown)
